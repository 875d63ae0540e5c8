/*
 * plan_json.c - the plan's JSON and CSV forms: writing (plan_json_read.c
 * reads them back).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The JSON form, schema "dlplan.plan/1" (dlplan-formats(5)):
 *
 *	schema		"dlplan.plan/1" (required)
 *	generator	"dlplan VERSION" that wrote the file
 *	inputs		[{kind, path, sha256, size}]: kind is nodes, links,
 *			load, traffic or model; a relative path is relative
 *			to the directory holding the plan file; sha256 may
 *			be left out (the file is then not checked), and so
 *			may size (bytes; plans of older versions)
 *	options		the job options (global_batch and micro_batch are
 *			required, the others default as in dlplan-plan(1))
 *	forecast	{node id: forecast load used}; left out, eval
 *			forecasts from load.csv; a node not listed has 0
 *	groups		[{micro_batches, stages: [{node, gpus, tp_shares,
 *			layers: [first, last], ...}]}] in plan order
 *	ranks		[{rank, node, host, local_gpu, group, stage, ...}]
 *	rings		one per sync segment, members in ring order
 *	routes		one per flow: pipeline flows (group, stage,
 *			direction) then sync flows (segment, hop), each with
 *			src, dst, bytes, expected_s, path, policy per regime
 *	estimate	iteration_s, lower_bound_s, efficiency, ...
 *	solver		status (optimal, feasible or given), gap, time_s
 *	schedule	plan --budget: the slots and their choices
 *			(plan_json.h)
 *	replan		how replan made the plan, from which log
 *			(struct dl_lineage in plan.h)
 *
 * Only schema, options, groups (and in them micro_batches, node, gpus and
 * layers) are needed: a hand-written plan may leave out everything else
 * and is then "given".  Keys computed by cost_eval() (compute_s, ranks,
 * rings, routes, estimate, ...) are read back where the struct has a
 * place for them and otherwise ignored; rings and routes are never read
 * (cost_eval() recomputes them).  In options, groups[] and stages[] an
 * unknown key is an error unless it starts with "x_", so that a typo in a
 * hand-edited plan is not silently ignored.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "af.h"
#include "fmethod.h"
#include "path.h"
#include "plan.h"
#include "plan_json.h"
#include "sb.h"
#include "util_io.h"

/*
 * Paths.  Input paths are written relative to the directory the plan is
 * written to (or absolute when that is not known) and read relative to
 * the directory of the plan file.
 */

/* file (absolute) relative to dir (absolute). */
static char *
rel_path(const char *dir, const char *file)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i = 0, common = 0;

	/* The longest common prefix that ends at a component boundary. */
	while (dir[i] && dir[i] == file[i]) {
		i++;
		if (file[i] == '/' && (dir[i] == '/' || dir[i] == '\0'))
			common = i;
	}
	if (dir[i] == '\0' && file[i] == '/')
		common = i;
	/* Sharing only the root, the absolute path is the clearer one. */
	if (common == 0 || strcmp(dir, "/") == 0)
		return xstrdup(file);
	for (const char *d = dir + common; *d; d++)
		if (*d == '/')
			sb_adds(&sb, "../");
	sb_adds(&sb, file + common + 1);
	return sb_detach(&sb);
}

/*
 * Writing.
 */

static json_t *
jint(long v)
{
	return json_integer((json_int_t)v);
}

static void
set(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

/* A layer range [first, last]. */
static json_t *
jrange(int first, int last)
{
	json_t *a = json_array();

	json_array_append_new(a, jint(first));
	json_array_append_new(a, jint(last));
	return a;
}

static json_t *
w_options(const struct dl_opts *o)
{
	json_t *j = json_object();

	set(j, "global_batch", jint(o->global_batch));
	set(j, "micro_batch", jint(o->micro_batch));
	set(j, "mfu", jreal(o->mfu));
	set(j, "param_bytes", jreal(o->param_bytes));
	set(j, "grad_bytes", jreal(o->grad_bytes));
	set(j, "optimizer_bytes", jreal(o->optimizer_bytes));
	set(j, "mem_reserve", jreal(o->mem_reserve));
	set(j, "horizon", jint(o->horizon));
	set(j, "states", jint(o->states));
	set(j, "forecast", json_string(fm_name(o->forecast)));
	set(j, "max_stages", jint(o->max_stages));
	set(j, "max_tp", jint(o->max_tp));
	set(j, "time_limit", jreal(o->time_limit));
	set(j, "attention", json_string(plan_attention_names[o->attention]));
	/* A plan not searched (made by hand, a baseline) recomputes
	 * nothing. */
	set(j, "recompute", json_string(plan_recompute_names[o->recompute ==
	    RC_AUTO ? RC_NONE : o->recompute]));
	set(j, "optimizer", json_string(plan_optimizer_names[o->optimizer]));
	set(j, "overlap", json_string(plan_overlap_names[o->overlap ==
	    OVL_AUTO ? OVL_NONE : o->overlap]));
	return j;
}

/*
 * What each node's load forecast used, as the plan recorded it when the
 * forecast was made (uhat_used); NULL when not recorded.
 */
static json_t *
w_forecast_methods(const struct dl_plan *p, const struct dl_cluster *c)
{
	json_t *f;

	if (p->uhat_used == NULL)
		return NULL;
	f = json_object();
	for (size_t i = 0; i < p->nnodes && i < c->nnodes; i++)
		if (p->uhat_used[i] != NULL)
			set(f, c->nodes[i].id, json_string(p->uhat_used[i]));
	return f;
}

static json_t *
w_inputs(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base, struct dl_err *e)
{
	struct dl_plan tmp;
	const struct dl_plan *src = p;
	json_t *a = json_array();

	if (p->ninputs == 0 && c) {
		memset(&tmp, 0, sizeof(tmp));
		if (plan_set_inputs(&tmp, c, m, e) != DL_OK) {
			json_decref(a);
			return NULL;
		}
		src = &tmp;
	}
	for (size_t i = 0; i < src->ninputs; i++) {
		const struct dl_input *in = &src->inputs[i];
		json_t *o = json_object();
		int in_stdin = strcmp(in->path, DL_STDIN_PATH) == 0;
		char *abs = in_stdin ? xstrdup(in->path) :
		    path_abs(in->path, 1, e);
		char *path;

		if (abs == NULL) {
			json_decref(o);
			json_decref(a);
			a = NULL;
			break;
		}
		/* Standard input is recorded as "-", with its digest. */
		path = base && !in_stdin ? rel_path(base, abs) : xstrdup(abs);
		set(o, "kind", json_string(in->kind));
		set(o, "path", json_string(path));
		if (in->sha256[0])
			set(o, "sha256", json_string(in->sha256));
		if (in->size >= 0)
			set(o, "size", json_integer(in->size));
		json_array_append_new(a, o);
		free(abs);
		free(path);
	}
	if (src == &tmp)
		plan_free(&tmp);
	return a;
}

static json_t *
w_stage(const struct dl_plan *p, const struct dl_stage *st, long m_g,
    long *rank, const struct dl_cluster *c, const struct dl_model *m)
{
	json_t *o = json_object(), *gpus = json_array(), *sh = json_array();
	json_t *names = json_array(), *rk = json_array();

	for (int d = 0; d < st->ngpus; d++) {
		json_array_append_new(gpus, jint(st->gpus[d]));
		json_array_append_new(sh, jreal(st->tp_share[d]));
		json_array_append_new(rk, jint((*rank)++));
	}
	set(o, "node", json_string(c->nodes[st->node].id));
	set(o, "gpus", gpus);
	set(o, "tp_shares", sh);
	set(o, "layers", jrange(st->first, st->last));
	if (m) {
		json_array_append_new(names,
		    json_string(m->layers[st->first].name));
		json_array_append_new(names,
		    json_string(m->layers[st->last].name));
		set(o, "layer_names", names);
	} else {
		json_decref(names);
	}
	set(o, "ranks", rk);
	set(o, "micro_batches", jint(m_g));
	set(o, "recompute_layers", jint(st->rc_set ? st->recompute : 0));
	if (p->est.iteration_s > 0) {
		set(o, "compute_s", jreal(st->compute_s));
		set(o, "p2p_s", jreal(st->p2p_s));
		set(o, "mem_bytes", jreal(st->mem_bytes));
	}
	return o;
}

static json_t *
w_groups(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m)
{
	json_t *a = json_array();
	long rank = 0;

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		json_t *o = json_object(), *st = json_array();

		set(o, "micro_batches", jint(gr->micro_batches));
		set(o, "samples", jint(gr->micro_batches * p->opts.micro_batch));
		if (gr->vstages > 1)
			set(o, "virtual_stages", jint(gr->vstages));
		if (p->est.iteration_s > 0)
			set(o, "time_s", jreal(gr->time_s));
		for (int s = 0; s < gr->nstages; s++)
			json_array_append_new(st, w_stage(p, &gr->stages[s],
			    gr->micro_batches, &rank, c, m));
		set(o, "stages", st);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
w_ranks(const struct dl_plan *p, const struct dl_cluster *c)
{
	struct dl_rank *r = plan_rank_table(p);
	long n = plan_ranks(p);
	json_t *a = json_array();

	for (long i = 0; i < n; i++) {
		const struct dl_stage *st =
		    &p->groups[r[i].group].stages[r[i].stage];
		const struct dl_node *nd = &c->nodes[r[i].node];
		json_t *o = json_object();

		set(o, "rank", jint(r[i].rank));
		set(o, "node", json_string(nd->id));
		set(o, "host", json_string(nd->host ? nd->host : nd->id));
		set(o, "local_gpu", jint(r[i].gpu));
		set(o, "group", jint(r[i].group));
		set(o, "stage", jint(r[i].stage));
		set(o, "tp_rank", jint(r[i].tp_rank));
		set(o, "tp_share", jreal(st->tp_share[r[i].tp_rank]));
		json_array_append_new(a, o);
	}
	free(r);
	return a;
}

static json_t *
w_rings(const struct dl_plan *p, const struct dl_cluster *c)
{
	json_t *a = json_array();

	for (int q = 0; q < p->nrings; q++) {
		const struct dl_ring *r = &p->rings[q];
		json_t *o = json_object(), *mem = json_array();

		for (int i = 0; i < r->nmembers; i++) {
			json_t *x = json_object();
			int nd = p->groups[r->group[i]].stages[r->stage[i]].node;

			set(x, "group", jint(r->group[i]));
			set(x, "stage", jint(r->stage[i]));
			set(x, "node", json_string(c->nodes[nd].id));
			json_array_append_new(mem, x);
		}
		set(o, "segment", jint(q));
		set(o, "layers", jrange(r->first, r->last));
		set(o, "params", jreal(r->params));
		set(o, "hop_bytes", jreal(r->hop_bytes));
		set(o, "time_s", jreal(r->time_s));
		set(o, "members", mem);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
w_routes(const struct dl_plan *p, const struct dl_cluster *c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->nflows; i++) {
		const struct dl_flow *f = &p->flows[i];
		json_t *o = json_object(), *path = json_array();
		json_t *pol = json_array();

		if (f->phase == DL_PHASE_PIPE) {
			set(o, "phase", json_string("pipeline"));
			set(o, "group", jint(f->a));
			set(o, "stage", jint(f->b));
			set(o, "direction", json_string(f->dir ? "backward" :
			    "forward"));
		} else {
			set(o, "phase", json_string("sync"));
			set(o, "segment", jint(f->a));
			set(o, "hop", jint(f->b));
		}
		set(o, "src", json_string(c->verts[f->src].id));
		set(o, "dst", json_string(c->verts[f->dst].id));
		set(o, "bytes", jreal(f->bytes));
		set(o, "expected_s", jreal(f->expected_s));
		set(o, "intra", json_boolean(f->intra));
		set(o, "order", jint(f->order));
		for (size_t k = 0; k < f->npath; k++)
			json_array_append_new(path,
			    json_string(c->verts[f->path[k]].id));
		set(o, "path", path);
		if (!f->intra)
			set(o, "regime", jint(f->regime));
		for (int l = 0; l < f->nregimes && f->policy_first; l++) {
			json_t *x = json_object();
			int v = f->policy_first[l];

			set(x, "regime", jint(l));
			set(x, "next", v >= 0 ? json_string(c->verts[v].id) :
			    json_null());
			if (f->regime_s)
				set(x, "expected_s", jreal(f->regime_s[l]));
			json_array_append_new(pol, x);
		}
		set(o, "policy", pol);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *
w_estimate(const struct dl_plan *p)
{
	const struct dl_estimate *s = &p->est;
	json_t *o = json_object();

	set(o, "iteration_s", jreal(s->iteration_s));
	set(o, "lower_bound_s", jreal(s->lower_bound_s));
	/* The search's bound (solver.bound_method says which). */
	if (p->bound_method != BOUND_NONE)
		set(o, "bound_s", jreal(p->bound_s));
	set(o, "efficiency", jreal(s->efficiency));
	set(o, "throughput", jreal(s->throughput));
	set(o, "pipeline_s", jreal(s->pipeline_s));
	set(o, "sync_s", jreal(s->sync_s));
	set(o, "optimizer_s", jreal(s->optimizer_s));
	set(o, "compute_s", jreal(s->compute_s));
	set(o, "p2p_s", jreal(s->p2p_s));
	set(o, "steady_s", jreal(s->steady_s));
	/* The old name of steady_s, kept for one version. */
	set(o, "bubble_s", jreal(s->steady_s));
	set(o, "period_s", jreal(s->period_s));
	/* What the pipeline times assume of a point-to-point transfer. */
	set(o, "transfers", json_string("receiver-waits"));
	if (s->simulated_s > 0)
		set(o, "pipeline_simulated_s", jreal(s->simulated_s));
	set(o, "slowest_group", jint(s->slowest_group));
	set(o, "fits_memory", json_boolean(s->feasible));
	if (p->even_s > 0 || p->proportional_s > 0) {
		json_t *b = json_object();

		set(b, "even_dp_s", jreal(p->even_s));
		set(b, "even_dp_fits_memory", json_boolean(p->even_fits));
		set(b, "proportional_dp_s", jreal(p->proportional_s));
		set(b, "proportional_dp_fits_memory",
		    json_boolean(p->proportional_fits));
		set(b, "plan_s", jreal(s->iteration_s));
		set(o, "baselines", b);
	}
	return o;
}

static json_t *
plan_to_json(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base, struct dl_err *e)
{
	json_t *o = json_object(), *in, *sv;

	if ((in = w_inputs(p, c, m, base, e)) == NULL) {
		json_decref(o);
		return NULL;
	}
	set(o, "schema", json_string(DL_PLAN_SCHEMA));
	set(o, "generator", json_string("dlplan " DLPLAN_VERSION));
	if (p->parent)
		set(o, "parent", json_string(p->parent));
	set(o, "inputs", in);
	if (c->warnings.n > 0 || (m != NULL && m->warnings.n > 0)) {
		json_t *w = json_array();

		for (size_t i = 0; i < c->warnings.n; i++)
			json_array_append_new(w, json_string(
			    c->warnings.msg[i]));
		for (size_t i = 0; m != NULL && i < m->warnings.n; i++)
			json_array_append_new(w, json_string(
			    m->warnings.msg[i]));
		set(o, "warnings", w);
	}
	set(o, "options", w_options(&p->opts));
	if (p->uhat) {
		json_t *f = json_object();

		for (size_t i = 0; i < p->nnodes && i < c->nnodes; i++)
			set(f, c->nodes[i].id, jreal(p->uhat[i]));
		set(o, "forecast", f);
		if ((f = w_forecast_methods(p, c)) != NULL)
			set(o, "forecast_methods", f);
	}
	if (p->nleft_out > 0) {
		json_t *lo = json_object(), *a = json_array();
		long gpus = 0;

		for (size_t i = 0; i < p->nleft_out; i++) {
			const struct dl_node *nd = &c->nodes[p->left_out[i]];
			json_t *ne = json_object();

			set(ne, "node", json_string(nd->id));
			set(ne, "gpus", jint(nd->gpus));
			if (p->uhat && (size_t)p->left_out[i] < p->nnodes)
				set(ne, "load", jreal(p->uhat[p->left_out[i]]));
			json_array_append_new(a, ne);
			gpus += nd->gpus;
		}
		set(lo, "nodes", a);
		set(lo, "gpus", jint(gpus));
		set(lo, "t_with_s", p->left_out_t_s > 0 ?
		    jreal(p->left_out_t_s) : json_null());
		set(o, "left_out", lo);
	}
	set(o, "groups", w_groups(p, c, m));
	set(o, "ranks", w_ranks(p, c));
	if (p->est.iteration_s > 0) {
		set(o, "rings", w_rings(p, c));
		set(o, "routes", w_routes(p, c));
		set(o, "estimate", w_estimate(p));
	}
	sv = json_object();
	set(sv, "status", json_string(plan_status_names[p->status]));
	if (p->status != PLAN_GIVEN) {
		set(sv, "gap", jreal(p->gap));
		set(sv, "bound_s", jreal(p->bound_s));
		if (p->bound_method != BOUND_NONE)
			set(sv, "bound_method",
			    json_string(plan_bound_names[p->bound_method]));
		set(sv, "time_s", jreal(p->solve_s));
	}
	if (p->strategy != STRAT_NONE)
		set(sv, "strategy",
		    json_string(plan_strategy_names[p->strategy]));
	set(o, "solver", sv);
	set(o, "precision",
	    json_string(plan_precision_names[plan_precision(p, c)]));
	/* Only plans restricted to one framework name it (plan --runtime). */
	if (p->runtime != RUNTIME_DLPLAN)
		set(o, "runtime", json_string(plan_runtime_names[p->runtime]));
	/* Budgeted schedule and re-plan record. */
	if (p->schedule)
		set(o, "schedule", plan_schedule_json(p->schedule, c,
		    p->opts.global_batch));
	if (p->lineage)
		set(o, "replan", plan_lineage_json(p->lineage, c));
	return o;
}

/* The text of o with a final newline, into *out. */
static int
json_text(const json_t *o, char **out, struct dl_err *e)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));
	size_t n;

	if (s == NULL)
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "cannot encode the "
		    "plan as JSON");
	n = strlen(s);
	*out = xmalloc(n + 2);
	memcpy(*out, s, n);
	(*out)[n] = '\n';
	(*out)[n + 1] = '\0';
	free(s);
	return DL_OK;
}

int
plan_json_strings(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base_dir, char **out,
    char **plain, struct dl_err *e)
{
	char *abs = base_dir ? path_abs(base_dir, 1, e) : NULL;
	json_t *o = base_dir && abs == NULL ? NULL :
	    plan_to_json(p, c, m, abs, e), *in;
	int rc;

	free(abs);
	if (o == NULL)
		return e->code ? e->code : DL_ESYS;
	rc = json_text(o, out, e);
	if (rc == DL_OK && plain != NULL) {
		/* Only the input paths depend on the base directory. */
		if (base_dir == NULL)
			*plain = xstrdup(*out);
		else if ((in = w_inputs(p, c, m, NULL, e)) == NULL)
			rc = e->code ? e->code : DL_ESYS;
		else {
			set(o, "inputs", in);
			rc = json_text(o, plain, e);
		}
		if (rc != DL_OK) {
			free(*out);
			*out = NULL;
		}
	}
	json_decref(o);
	return rc;
}

int
plan_json_string(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base_dir, char **out,
    struct dl_err *e)
{
	return plan_json_strings(p, c, m, base_dir, out, NULL, e);
}

int
plan_write_json(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *path, struct dl_err *e)
{
	char *dir = path_dir(path), *s;
	int rc = plan_json_string(p, c, m, dir, &s, e);

	free(dir);
	if (rc != DL_OK)
		return rc;
	rc = af_write_file(path, s, strlen(s), e);
	free(s);
	return rc;
}

/* plan.csv's text, one row per rank, in sb. */
static void
plan_csv_text(const struct dl_plan *p, const struct dl_cluster *c,
    struct strbuf *sb)
{
	struct dl_rank *r = plan_rank_table(p);
	long n = plan_ranks(p);

	sb_adds(sb, "rank,node,local_gpu,group,stage,first_layer,last_layer,"
	    "micro_batches,tp_share,tp_degree,tp_rank,host,site\n");
	for (long i = 0; i < n; i++) {
		const struct dl_group *gr = &p->groups[r[i].group];
		const struct dl_stage *st = &gr->stages[r[i].stage];
		const struct dl_node *nd = &c->nodes[r[i].node];

		sb_addf(sb, "%ld,%s,%d,%d,%d,%d,%d,%ld,", r[i].rank, nd->id,
		    r[i].gpu, r[i].group, r[i].stage, st->first, st->last,
		    gr->micro_batches);
		sb_adddbl(sb, st->tp_share[r[i].tp_rank]);
		sb_addf(sb, ",%d,%d,%s,%s\n", st->ngpus, r[i].tp_rank,
		    nd->host ? nd->host : nd->id, nd->site);
	}
	free(r);
}

int
plan_write_csv(const struct dl_plan *p, const struct dl_cluster *c,
    const char *path, struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	plan_csv_text(p, c, &sb);
	rc = af_write_file(path, sb.buf, sb.len, e);
	sb_free(&sb);
	return rc;
}

int
plan_write_files(size_t n, const struct dl_plan *const *jp,
    const char *const *jpaths, const struct dl_plan *cp, const char *cpath,
    const struct dl_cluster *c, const struct dl_model *m, char **plain,
    struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	char **data = xcalloc(n + 1, sizeof(*data));
	const char **paths = xcalloc(n + 1, sizeof(*paths));
	size_t *lens = xcalloc(n + 1, sizeof(*lens));
	int rc = DL_OK;

	if (plain != NULL)
		*plain = NULL;
	for (size_t i = 0; i < n && rc == DL_OK; i++) {
		char *dir = path_dir(jpaths[i]);

		rc = plan_json_strings(jp[i], c, m, dir, &data[i],
		    i == 0 ? plain : NULL, e);
		free(dir);
		if (rc == DL_OK) {
			paths[i] = jpaths[i];
			lens[i] = strlen(data[i]);
		}
	}
	if (rc == DL_OK) {
		plan_csv_text(cp, c, &sb);
		paths[n] = cpath;
		data[n] = sb_detach(&sb);
		lens[n] = strlen(data[n]);
		rc = af_write_files(n + 1, paths, (const char *const *)data,
		    lens, e);
	}
	for (size_t i = 0; i <= n; i++)
		free(data[i]);
	free(data);
	free(paths);
	free(lens);
	if (rc != DL_OK && plain != NULL) {
		free(*plain);
		*plain = NULL;
	}
	return rc;
}

/*
 * The budget schedule and the replan lineage.
 */

static json_t *
jnodes(const struct dl_cluster *c, const int *nodes, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_string(c->nodes[nodes[i]].id));
	return a;
}

json_t *
plan_schedule_json(const struct dl_schedule *s, const struct dl_cluster *c,
    long global_batch)
{
	json_t *o = json_object(), *slots = json_array();

	json_object_set_new(o, "budget_per_hour", jreal(s->budget));
	json_object_set_new(o, "tradeoff", jreal(s->tradeoff));
	json_object_set_new(o, "slot_steps", json_integer(s->slot_steps));
	json_object_set_new(o, "average_cost_per_hour", jreal(s->avg_cost));
	json_object_set_new(o, "cost_bound_per_hour", s->bound >= 0 ?
	    jreal(s->bound) : json_null());
	json_object_set_new(o, "average_throughput",
	    jreal(s->avg_throughput));
	json_object_set_new(o, "unconstrained_throughput",
	    jreal(s->best_throughput));
	for (int t = 0; t < s->nslots; t++) {
		const struct dl_budget_slot *sl = &s->slots[t];
		const struct dl_budget_cand *ch = &sl->cand[sl->chosen];
		json_t *so = json_object(), *ca = json_array(), *fs;

		json_object_set_new(so, "slot", json_integer(t + 1));
		fs = json_array();
		json_array_append_new(fs, json_integer((json_int_t)t *
		    s->slot_steps + 1));
		json_array_append_new(fs, json_integer((json_int_t)(t + 1) *
		    s->slot_steps));
		json_object_set_new(so, "forecast_steps", fs);
		json_object_set_new(so, "queue", jreal(sl->queue));
		json_object_set_new(so, "queue_after", jreal(sl->queue_after));
		json_object_set_new(so, "chosen", json_integer(sl->chosen));
		json_object_set_new(so, "nodes", jnodes(c, ch->used,
		    ch->nused));
		json_object_set_new(so, "iteration_s", jreal(ch->iteration_s));
		json_object_set_new(so, "throughput", jreal((double)
		    global_batch / ch->iteration_s));
		json_object_set_new(so, "cost_per_hour", jreal(ch->cost));
		json_object_set_new(so, "score", jreal(ch->score));
		json_object_set_new(so, "unconstrained_s", jreal(sl->best_s));
		json_object_set_new(so, "unconstrained_cost_per_hour",
		    jreal(sl->best_cost));
		if (sl->plan)
			json_object_set_new(so, "plan", json_string(sl->plan));
		for (int i = 0; i < sl->ncand; i++) {
			const struct dl_budget_cand *cd = &sl->cand[i];
			json_t *x = json_object();

			json_object_set_new(x, "prefix",
			    json_integer(cd->prefix));
			json_object_set_new(x, "nodes", jnodes(c, cd->used,
			    cd->nused));
			json_object_set_new(x, "iteration_s",
			    jreal(cd->iteration_s));
			json_object_set_new(x, "cost_per_hour", jreal(cd->cost));
			json_object_set_new(x, "score", jreal(cd->score));
			json_array_append_new(ca, x);
		}
		json_object_set_new(so, "candidates", ca);
		json_array_append_new(slots, so);
	}
	json_object_set_new(o, "slots", slots);
	return o;
}

json_t *
plan_lineage_json(const struct dl_lineage *l, const struct dl_cluster *c)
{
	json_t *o = json_object(), *f = json_object(), *ua = json_array();

	if (l->parent_file)
		json_object_set_new(o, "parent_file",
		    json_string(l->parent_file));
	if (l->observed)
		json_object_set_new(o, "observed", json_string(l->observed));
	json_object_set_new(o, "estimator", json_string(l->compute ?
	    "compute" : "pipeline"));
	json_object_set_new(o, "window", json_integer(l->window));
	json_object_set_new(o, "min_gain", jreal(l->min_gain));
	json_object_set_new(o, "repartition", json_boolean(l->repartition));
	json_object_set_new(o, "adopted", json_boolean(l->adopted));
	json_object_set_new(o, "planned_s", jreal(l->planned_s));
	json_object_set_new(o, "measured_s", jreal(l->measured_s));
	json_object_set_new(o, "iteration_s", jreal(l->iteration_s));
	json_object_set_new(o, "gain", jreal(l->gain));
	for (size_t i = 0; i < l->nnodes && i < c->nnodes; i++)
		if (l->used[i])
			json_object_set_new(f, c->nodes[i].id,
			    jreal(l->factor[i]));
	json_object_set_new(o, "speed_factors", f);
	for (int i = 0; i < l->nunits; i++) {
		const struct replan_unit *u = &l->unit[i];
		json_t *x = json_object();

		json_object_set_new(x, "group", json_integer(u->group));
		json_object_set_new(x, "stage", json_integer(u->stage));
		json_object_set_new(x, "predicted_s", jreal(u->predicted_s));
		json_object_set_new(x, "observed_s", jreal(u->observed_s));
		json_object_set_new(x, "noise", jreal(u->noise));
		json_object_set_new(x, "band", jreal(u->band));
		json_object_set_new(x, "factor", jreal(u->factor));
		json_object_set_new(x, "clamped", json_boolean(u->clamped));
		json_object_set_new(x, "steps", json_integer(u->steps));
		json_array_append_new(ua, x);
	}
	json_object_set_new(o, "units", ua);
	return o;
}
