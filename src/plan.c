/*
 * plan.c - the plan: its structure checks and its JSON and CSV forms.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The JSON form, schema "dlplan.plan/1" (dlplan-formats(5)):
 *
 *	schema		"dlplan.plan/1" (required)
 *	generator	"dlplan VERSION" that wrote the file
 *	inputs		[{kind, path, sha256}]: kind is nodes, links, load,
 *			traffic or model; a relative path is relative to the
 *			directory holding the plan file; sha256 may be left
 *			out (the file is then not checked)
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
 *	schedule	plan --budget: the slots and their choices (budget.h)
 *	replan		how replan made the plan, from which log (replan.h)
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
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "budget.h"
#include "plan.h"
#include "replan.h"

#define PLAN_SCHEMA "dlplan.plan/1"

static const char *const input_kinds[] = {
	"nodes", "links", "load", "traffic", "model"
};

void
plan_opts_default(struct dl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->global_batch = 0;
	o->micro_batch = 1;
	o->mfu = 0.4;
	o->param_bytes = 2;
	o->grad_bytes = 2;
	o->optimizer_bytes = 12;
	o->mem_reserve = 0.10;
	o->horizon = 1;
	o->states = 3;
	o->max_stages = 0;
	o->max_tp = DL_MAX_TP;
	o->time_limit = 60;
}

void
plan_init(struct dl_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->generator = xstrdup("dlplan " DLPLAN_VERSION);
	plan_opts_default(&p->opts);
	snprintf(p->status, sizeof(p->status), "given");
}

void
plan_clear_results(struct dl_plan *p)
{
	for (size_t i = 0; i < p->nflows; i++) {
		free(p->flows[i].path);
		free(p->flows[i].policy_first);
		free(p->flows[i].regime_s);
	}
	free(p->flows);
	p->flows = NULL;
	p->nflows = 0;
	for (int i = 0; i < p->nrings; i++) {
		free(p->rings[i].group);
		free(p->rings[i].stage);
	}
	free(p->rings);
	p->rings = NULL;
	p->nrings = 0;
	memset(&p->est, 0, sizeof(p->est));
}

static void
free_inputs(struct dl_plan *p)
{
	for (size_t i = 0; i < p->ninputs; i++) {
		free(p->inputs[i].kind);
		free(p->inputs[i].path);
	}
	free(p->inputs);
	p->inputs = NULL;
	p->ninputs = 0;
}

void
plan_free(struct dl_plan *p)
{
	plan_clear_results(p);
	free_inputs(p);
	for (int g = 0; g < p->ngroups; g++)
		free(p->groups[g].stages);
	free(p->groups);
	free(p->uhat);
	free(p->generator);
	free(p->strategy);
	free(p->parent);
	budget_schedule_free(p->schedule);
	replan_lineage_free(p->lineage);
	memset(p, 0, sizeof(*p));
}

static void *
dup_array(const void *src, size_t n, size_t sz)
{
	void *d;

	if (src == NULL)
		return NULL;
	d = xcalloc(n ? n : 1, sz);
	memcpy(d, src, n * sz);
	return d;
}

static char *
dup_str(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void
plan_copy(struct dl_plan *dst, const struct dl_plan *src)
{
	*dst = *src;
	dst->generator = dup_str(src->generator);
	dst->strategy = dup_str(src->strategy);
	dst->parent = dup_str(src->parent);
	dst->schedule = budget_schedule_dup(src->schedule);
	dst->lineage = replan_lineage_dup(src->lineage);
	dst->uhat = dup_array(src->uhat, src->nnodes, sizeof(double));
	dst->inputs = dup_array(src->inputs, src->ninputs,
	    sizeof(*src->inputs));
	for (size_t i = 0; i < src->ninputs; i++) {
		dst->inputs[i].kind = dup_str(src->inputs[i].kind);
		dst->inputs[i].path = dup_str(src->inputs[i].path);
	}
	dst->groups = dup_array(src->groups, src->ngroups,
	    sizeof(*src->groups));
	for (int g = 0; g < src->ngroups; g++)
		dst->groups[g].stages = dup_array(src->groups[g].stages,
		    src->groups[g].nstages, sizeof(struct dl_stage));
	dst->rings = dup_array(src->rings, src->nrings, sizeof(*src->rings));
	for (int i = 0; i < src->nrings; i++) {
		const struct dl_ring *r = &src->rings[i];

		dst->rings[i].group = dup_array(r->group, r->nmembers,
		    sizeof(int));
		dst->rings[i].stage = dup_array(r->stage, r->nmembers,
		    sizeof(int));
	}
	dst->flows = dup_array(src->flows, src->nflows, sizeof(*src->flows));
	for (size_t i = 0; i < src->nflows; i++) {
		const struct dl_flow *f = &src->flows[i];

		dst->flows[i].path = dup_array(f->path, f->npath, sizeof(int));
		dst->flows[i].policy_first = dup_array(f->policy_first,
		    f->nregimes, sizeof(int));
		dst->flows[i].regime_s = dup_array(f->regime_s, f->nregimes,
		    sizeof(double));
	}
}

long
plan_ranks(const struct dl_plan *p)
{
	long n = 0;

	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++)
			n += p->groups[g].stages[s].ngpus;
	return n;
}

struct dl_rank *
plan_rank_table(const struct dl_plan *p)
{
	struct dl_rank *r = xcalloc(plan_ranks(p) + 1, sizeof(*r));
	long n = 0;

	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++) {
			const struct dl_stage *st = &p->groups[g].stages[s];

			for (int d = 0; d < st->ngpus; d++, n++) {
				r[n].rank = n;
				r[n].group = g;
				r[n].stage = s;
				r[n].node = st->node;
				r[n].gpu = st->gpus[d];
				r[n].tp_rank = d;
			}
		}
	return r;
}

/*
 * Structure checks.
 */

static int
verr(struct dl_err *e, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
verr(struct dl_err *e, const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vseterr(e, DL_EDATA, file, 0, 0, fmt, ap);
	va_end(ap);
	return DL_EDATA;
}

/* "layer 4" or "layers 4 to 6". */
static const char *
layer_span(char *buf, size_t n, int a, int b)
{
	if (a == b)
		snprintf(buf, n, "layer %d is", a);
	else
		snprintf(buf, n, "layers %d to %d are", a, b);
	return buf;
}

static int
check_layers(const struct dl_group *gr, int g, int L, const char *file,
    struct dl_err *e)
{
	char span[64];

	for (int s = 0; s < gr->nstages; s++) {
		const struct dl_stage *st = &gr->stages[s];
		int want = s == 0 ? 0 : gr->stages[s - 1].last + 1;

		if (st->first > st->last || st->first < 0)
			return verr(e, file, "groups[%d].stages[%d].layers: "
			    "[%d, %d] is not a layer range (expected 0 <= "
			    "first <= last)", g, s, st->first, st->last);
		if (st->last >= L)
			return verr(e, file, "groups[%d].stages[%d].layers: "
			    "layer %d does not exist (the model has %d layers: "
			    "0 to %d)", g, s, st->last, L, L - 1);
		if (s == 0 && st->first > 0)
			return verr(e, file, "groups[%d].stages[0].layers: "
			    "starts at layer %d (expected 0: %s in no stage)",
			    g, st->first, layer_span(span, sizeof(span), 0,
			    st->first - 1));
		if (st->first > want)
			return verr(e, file, "groups[%d].stages[%d].layers: "
			    "starts at layer %d but groups[%d].stages[%d] ends "
			    "at layer %d (%s in no stage)", g, s, st->first, g,
			    s - 1, want - 1, layer_span(span, sizeof(span),
			    want, st->first - 1));
		if (st->first < want)
			return verr(e, file, "groups[%d].stages[%d].layers: "
			    "starts at layer %d but groups[%d].stages[%d] ends "
			    "at layer %d (%s in two stages)", g, s, st->first, g,
			    s - 1, want - 1, layer_span(span, sizeof(span),
			    st->first, want - 1));
	}
	if (gr->stages[gr->nstages - 1].last < L - 1) {
		int last = gr->stages[gr->nstages - 1].last;

		return verr(e, file, "groups[%d].stages[%d].layers: ends at "
		    "layer %d (expected %d: %s in no stage)", g,
		    gr->nstages - 1, last, L - 1, layer_span(span,
		    sizeof(span), last + 1, L - 1));
	}
	return DL_OK;
}

static int
check_unit(const struct dl_stage *st, int g, int s,
    const struct dl_cluster *c, long *owner, const size_t *gpu_off,
    const char *file, struct dl_err *e)
{
	const struct dl_node *nd;
	double sum = 0;
	int k = st->ngpus;

	if (st->node < 0 || (size_t)st->node >= c->nnodes)
		return verr(e, file, "groups[%d].stages[%d].node: node index "
		    "%d is not in the cluster", g, s, st->node);
	nd = &c->nodes[st->node];
	if (k != 1 && k != 2 && k != 4 && k != 8)
		return verr(e, file, "groups[%d].stages[%d].gpus: %d GPUs "
		    "(expected a TP degree of 1, 2, 4 or 8)", g, s, k);
	if (k > nd->gpus)
		return verr(e, file, "groups[%d].stages[%d].gpus: TP degree "
		    "%d exceeds the %d GPU%s of node '%s'", g, s, k, nd->gpus,
		    nd->gpus == 1 ? "" : "s", nd->id);
	for (int d = 0; d < k; d++) {
		int gpu = st->gpus[d];
		long *o, code = ((long)g << 24) | ((long)s << 4) | d;

		if (gpu < 0 || gpu >= nd->gpus)
			return verr(e, file, "groups[%d].stages[%d].gpus[%d]: "
			    "GPU %d does not exist on node '%s' (it has %d: "
			    "0 to %d)", g, s, d, gpu, nd->id, nd->gpus,
			    nd->gpus - 1);
		o = &owner[gpu_off[st->node] + gpu];
		if (*o > 0)
			return verr(e, file, "groups[%d].stages[%d].gpus[%d]: "
			    "GPU %d of node '%s' is already used by "
			    "groups[%ld].stages[%ld].gpus[%ld]", g, s, d, gpu,
			    nd->id, (*o - 1) >> 24, ((*o - 1) >> 4) & 0xfffff,
			    (*o - 1) & 0xf);
		*o = code + 1;
		if (!(st->tp_share[d] > 0 && st->tp_share[d] <= 1))
			return verr(e, file, "groups[%d].stages[%d]."
			    "tp_shares[%d]: %.17g is out of range (expected a "
			    "share in (0, 1])", g, s, d, st->tp_share[d]);
		sum += st->tp_share[d];
	}
	if (fabs(sum - 1) > 1e-9)
		return verr(e, file, "groups[%d].stages[%d].tp_shares: shares "
		    "sum to %.17g (expected 1 within 1e-9)", g, s, sum);
	return DL_OK;
}

int
plan_validate(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *file, struct dl_err *e)
{
	size_t *gpu_off = xcalloc(c->nnodes + 1, sizeof(size_t));
	long *owner, mb = 0;
	int L = (int)m->nlayers, rc = DL_OK;

	for (size_t i = 0; i < c->nnodes; i++)
		gpu_off[i + 1] = gpu_off[i] + c->nodes[i].gpus;
	owner = xcalloc(gpu_off[c->nnodes] + 1, sizeof(long));
	if (p->opts.global_batch < 1 || p->opts.micro_batch < 1)
		rc = verr(e, file, "options: global batch %ld and micro-batch "
		    "%ld must be at least 1", p->opts.global_batch,
		    p->opts.micro_batch);
	if (rc == DL_OK && p->ngroups < 1)
		rc = verr(e, file, "groups: no groups (expected at least one)");
	for (int g = 0; g < p->ngroups && rc == DL_OK; g++) {
		const struct dl_group *gr = &p->groups[g];

		if (gr->micro_batches < 1) {
			rc = verr(e, file, "groups[%d].micro_batches: %ld is "
			    "out of range (expected at least 1; leave out a "
			    "group without work)", g, gr->micro_batches);
			break;
		}
		if (gr->micro_batches > LONG_MAX / p->opts.micro_batch - mb) {
			rc = verr(e, file, "groups[%d].micro_batches: %ld is "
			    "too large", g, gr->micro_batches);
			break;
		}
		mb += gr->micro_batches;
		if (gr->nstages < 1) {
			rc = verr(e, file, "groups[%d].stages: no stages "
			    "(expected at least one)", g);
			break;
		}
		for (int s = 0; s < gr->nstages && rc == DL_OK; s++)
			rc = check_unit(&gr->stages[s], g, s, c, owner, gpu_off,
			    file, e);
		if (rc == DL_OK)
			rc = check_layers(gr, g, L, file, e);
	}
	if (rc == DL_OK && mb * p->opts.micro_batch != p->opts.global_batch)
		rc = verr(e, file, "groups: micro-batches sum to %ld, times "
		    "micro-batch %ld is %ld samples, but options.global_batch "
		    "is %ld", mb, p->opts.micro_batch, mb * p->opts.micro_batch,
		    p->opts.global_batch);
	if (rc == DL_OK && p->uhat && p->nnodes != c->nnodes)
		rc = verr(e, file, "forecast: %zu nodes, but the cluster has "
		    "%zu", p->nnodes, c->nnodes);
	free(gpu_off);
	free(owner);
	return rc;
}

/*
 * Paths.  Input paths are written relative to the directory the plan is
 * written to (or absolute when that is not known) and read relative to
 * the directory of the plan file.
 */

static char *
abs_path(const char *path)
{
	char *r = realpath(path, NULL), cwd[PATH_MAX];
	size_t n;

	if (r)
		return r;
	if (path[0] == '/' || getcwd(cwd, sizeof(cwd)) == NULL)
		return xstrdup(path);
	n = strlen(cwd) + strlen(path) + 2;
	r = xmalloc(n);
	snprintf(r, n, "%s/%s", cwd, path);
	return r;
}

/* The directory part of path ("." when there is none). */
static char *
dir_of(const char *path)
{
	const char *sl = strrchr(path, '/');

	if (sl == NULL)
		return xstrdup(".");
	if (sl == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(sl - path));
}

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

static char *
resolve(const char *planfile, const char *path)
{
	char *dir, *r;
	size_t n;

	if (path[0] == '/' || strchr(planfile, '/') == NULL)
		return xstrdup(path);
	dir = dir_of(planfile);
	n = strlen(dir) + strlen(path) + 2;
	r = xmalloc(n);
	snprintf(r, n, "%s/%s", dir, path);
	free(dir);
	return r;
}

const char *
plan_input_path(const struct dl_plan *p, const char *kind)
{
	for (size_t i = 0; i < p->ninputs; i++)
		if (strcmp(p->inputs[i].kind, kind) == 0)
			return p->inputs[i].path;
	return NULL;
}

static const char *
cluster_file(const struct dl_cluster *c, const struct dl_model *m, int kind)
{
	switch (kind) {
	case 0:
		return c ? c->path_nodes : NULL;
	case 1:
		return c ? c->path_links : NULL;
	case 2:
		return c ? c->path_load : NULL;
	case 3:
		return c ? c->path_traffic : NULL;
	default:
		return m ? m->path : NULL;
	}
}

int
plan_set_inputs(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, struct dl_err *e)
{
	struct dl_input in[ARRAY_SIZE(input_kinds)];
	size_t n = 0;
	int rc = DL_OK;

	for (size_t k = 0; k < ARRAY_SIZE(input_kinds) && rc == DL_OK; k++) {
		const char *path = cluster_file(c, m, (int)k);

		if (path == NULL)
			continue;
		rc = sha256_file(path, in[n].sha256, e);
		in[n].kind = xstrdup(input_kinds[k]);
		in[n].path = xstrdup(path);
		n++;
	}
	if (rc != DL_OK) {
		for (size_t i = 0; i < n; i++) {
			free(in[i].kind);
			free(in[i].path);
		}
		return rc;
	}
	free_inputs(p);
	p->inputs = dup_array(in, n, sizeof(*in));
	p->ninputs = n;
	return DL_OK;
}

/*
 * Writing.
 */

/* A JSON number; the cost model never makes NaN or Inf, but be safe. */
static json_t *
jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

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
	set(j, "mfu", jnum(o->mfu));
	set(j, "param_bytes", jnum(o->param_bytes));
	set(j, "grad_bytes", jnum(o->grad_bytes));
	set(j, "optimizer_bytes", jnum(o->optimizer_bytes));
	set(j, "mem_reserve", jnum(o->mem_reserve));
	set(j, "horizon", jint(o->horizon));
	set(j, "states", jint(o->states));
	set(j, "max_stages", jint(o->max_stages));
	set(j, "max_tp", jint(o->max_tp));
	set(j, "time_limit", jnum(o->time_limit));
	return j;
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
		char *abs = abs_path(in->path);
		char *path = base ? rel_path(base, abs) : xstrdup(abs);

		set(o, "kind", json_string(in->kind));
		set(o, "path", json_string(path));
		if (in->sha256[0])
			set(o, "sha256", json_string(in->sha256));
		json_array_append_new(a, o);
		free(abs);
		free(path);
	}
	if (src == &tmp)
		free_inputs(&tmp);
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
		json_array_append_new(sh, jnum(st->tp_share[d]));
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
	if (p->est.iteration_s > 0) {
		set(o, "compute_s", jnum(st->compute_s));
		set(o, "p2p_s", jnum(st->p2p_s));
		set(o, "mem_bytes", jnum(st->mem_bytes));
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
		if (p->est.iteration_s > 0)
			set(o, "time_s", jnum(gr->time_s));
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
		set(o, "tp_share", jnum(st->tp_share[r[i].tp_rank]));
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
		set(o, "params", jnum(r->params));
		set(o, "hop_bytes", jnum(r->hop_bytes));
		set(o, "time_s", jnum(r->time_s));
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
		set(o, "bytes", jnum(f->bytes));
		set(o, "expected_s", jnum(f->expected_s));
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
				set(x, "expected_s", jnum(f->regime_s[l]));
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

	set(o, "iteration_s", jnum(s->iteration_s));
	set(o, "lower_bound_s", jnum(s->lower_bound_s));
	set(o, "efficiency", jnum(s->efficiency));
	set(o, "throughput", jnum(s->throughput));
	set(o, "pipeline_s", jnum(s->pipeline_s));
	set(o, "sync_s", jnum(s->sync_s));
	set(o, "compute_s", jnum(s->compute_s));
	set(o, "p2p_s", jnum(s->p2p_s));
	set(o, "bubble_s", jnum(s->bubble_s));
	set(o, "slowest_group", jint(s->slowest_group));
	set(o, "fits_memory", json_boolean(s->feasible));
	if (p->even_s > 0 || p->proportional_s > 0) {
		json_t *b = json_object();

		set(b, "even_dp_s", jnum(p->even_s));
		set(b, "even_dp_fits_memory", json_boolean(p->even_fits));
		set(b, "proportional_dp_s", jnum(p->proportional_s));
		set(b, "proportional_dp_fits_memory",
		    json_boolean(p->proportional_fits));
		set(b, "plan_s", jnum(s->iteration_s));
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
	set(o, "schema", json_string(PLAN_SCHEMA));
	set(o, "generator", json_string("dlplan " DLPLAN_VERSION));
	if (p->parent)
		set(o, "parent", json_string(p->parent));
	set(o, "inputs", in);
	set(o, "options", w_options(&p->opts));
	if (p->uhat) {
		json_t *f = json_object();

		for (size_t i = 0; i < p->nnodes && i < c->nnodes; i++)
			set(f, c->nodes[i].id, jnum(p->uhat[i]));
		set(o, "forecast", f);
	}
	set(o, "groups", w_groups(p, c, m));
	set(o, "ranks", w_ranks(p, c));
	if (p->est.iteration_s > 0) {
		set(o, "rings", w_rings(p, c));
		set(o, "routes", w_routes(p, c));
		set(o, "estimate", w_estimate(p));
	}
	sv = json_object();
	set(sv, "status", json_string(p->status));
	if (strcmp(p->status, "given") != 0) {
		set(sv, "gap", jnum(p->gap));
		set(sv, "bound_s", jnum(p->bound_s));
		set(sv, "time_s", jnum(p->solve_s));
	}
	if (p->strategy)
		set(sv, "strategy", json_string(p->strategy));
	set(o, "solver", sv);
	/* Budgeted schedule (budget.c) and re-plan record (replan.c). */
	if (p->schedule)
		set(o, "schedule", budget_schedule_json(p->schedule, c,
		    p->opts.global_batch));
	if (p->lineage)
		set(o, "replan", replan_lineage_json(p->lineage, c));
	return o;
}

int
plan_json_string(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base_dir, char **out,
    struct dl_err *e)
{
	char *abs = base_dir ? abs_path(base_dir) : NULL;
	json_t *o = plan_to_json(p, c, m, abs, e);
	char *s;
	size_t n;

	free(abs);
	if (o == NULL)
		return e->code ? e->code : DL_ESYS;
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));
	json_decref(o);
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
plan_write_json(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *path, struct dl_err *e)
{
	char *dir = dir_of(path), *s;
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
    const struct dl_cluster *c, const struct dl_model *m, struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	char **data = xcalloc(n + 1, sizeof(*data));
	const char **paths = xcalloc(n + 1, sizeof(*paths));
	size_t *lens = xcalloc(n + 1, sizeof(*lens));
	int rc = DL_OK;

	for (size_t i = 0; i < n && rc == DL_OK; i++) {
		char *dir = dir_of(jpaths[i]);

		rc = plan_json_string(jp[i], c, m, dir, &data[i], e);
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
	return rc;
}

/*
 * Reading.  Errors name the JSON path of the value ("groups[1].stages[0].
 * gpus[2]"); jansson gives no positions for values, only for syntax.
 */

struct rd {
	const char *file;
	struct dl_err *e;
};

static int
rerr(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
rerr(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vseterr(r->e, DL_EDATA, r->file, 0, 0, fmt, ap);
	va_end(ap);
	return DL_EDATA;
}

static const char *
jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "null";
	}
}

/* "where.key", or "key" at the top. */
static const char *
jpath(char *buf, size_t n, const char *where, const char *key)
{
	snprintf(buf, n, "%s%s%s", where, *where ? "." : "", key);
	return buf;
}

/* What member() expects a value to be. */
enum { J_INT, J_NUM, J_STR, J_OBJ, J_ARR };

/*
 * Look up key in object o.  *v is NULL when it is absent (an error when
 * required); otherwise it must be of kind type.  want describes the value
 * expected, for messages; p receives the value's JSON path.
 */
static int
member(struct rd *r, json_t *o, const char *where, const char *key,
    int required, int type, const char *want, json_t **v, char *p,
    size_t np)
{
	static const json_type types[] = {
		JSON_INTEGER, JSON_REAL, JSON_STRING, JSON_OBJECT, JSON_ARRAY
	};
	int good;

	jpath(p, np, where, key);
	if ((*v = json_object_get(o, key)) == NULL)
		return required ? rerr(r, "%s: missing (expected %s)", p, want) :
		    DL_OK;
	good = type == J_NUM ? json_is_number(*v) :
	    json_typeof(*v) == types[type];
	if (!good) {
		rerr(r, "%s: expected %s, found %s", p, want, jtype(*v));
		*v = NULL;
		return DL_EDATA;
	}
	return DL_OK;
}

static int
get_long(struct rd *r, json_t *o, const char *where, const char *key,
    int required, long min, long max, long *out)
{
	char p[256], want[96];
	json_t *v;
	int rc;

	snprintf(want, sizeof(want), "an integer in [%ld, %ld]", min, max);
	rc = member(r, o, where, key, required, J_INT, want, &v, p, sizeof(p));
	if (v == NULL)
		return rc;
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return rerr(r, "%s: %lld is out of range (expected %s)", p,
		    (long long)json_integer_value(v), want);
	*out = (long)json_integer_value(v);
	return DL_OK;
}

static int
get_int(struct rd *r, json_t *o, const char *where, const char *key,
    int required, long min, long max, int *out)
{
	long v = *out;
	int rc = get_long(r, o, where, key, required, min, max, &v);

	*out = (int)v;
	return rc;
}

static int
get_num(struct rd *r, json_t *o, const char *where, const char *key,
    int required, double min, double max, double *out)
{
	char p[256], want[96], a[DL_DBL_BUFSZ], b[DL_DBL_BUFSZ];
	json_t *v;
	int rc;

	snprintf(want, sizeof(want), "a number in [%s, %s]",
	    fmt_double(a, min), isinf(max) ? "inf" : fmt_double(b, max));
	rc = member(r, o, where, key, required, J_NUM, want, &v, p, sizeof(p));
	if (v == NULL)
		return rc;
	if (!(json_number_value(v) >= min && json_number_value(v) <= max))
		return rerr(r, "%s: %s is out of range (expected %s)", p,
		    fmt_double(a, json_number_value(v)), want);
	*out = json_number_value(v);
	return DL_OK;
}

static int
get_str(struct rd *r, json_t *o, const char *where, const char *key,
    int required, const char **out)
{
	char p[256];
	json_t *v;
	int rc;

	rc = member(r, o, where, key, required, J_STR, "a string", &v, p,
	    sizeof(p));
	if (v)
		*out = json_string_value(v);
	return rc;
}

/* An object or array member (J_OBJ, J_ARR); *out is NULL when absent. */
static int
get_typed(struct rd *r, json_t *o, const char *where, const char *key,
    int required, int type, json_t **out)
{
	char p[256];

	return member(r, o, where, key, required, type, type == J_OBJ ?
	    "an object" : "an array", out, p, sizeof(p));
}

/* Unknown keys are errors unless they start with "x_". */
static int
check_keys(struct rd *r, json_t *o, const char *where,
    const char *const *known)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		int ok = strncmp(key, "x_", 2) == 0;
		struct strbuf sb = STRBUF_INIT;

		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, key) == 0;
		if (ok)
			continue;
		for (const char *const *k = known; *k; k++)
			sb_addf(&sb, "%s%s", k == known ? "" : ", ", *k);
		rerr(r, "%s: unknown key '%s' (expected %s; prefix other keys "
		    "with x_)", *where ? where : "plan", key, sb.buf);
		sb_free(&sb);
		return DL_EDATA;
	}
	return DL_OK;
}

static int
load_json(struct rd *r, const char *path, json_t **root)
{
	json_error_t je;
	json_t *v;
	const char *schema = NULL;
	char *data;
	size_t len;
	int rc;

	if ((rc = read_file(path, &data, &len, r->e)) != DL_OK)
		return rc;
	v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (v == NULL)
		return dl_seterr(r->e, DL_EDATA, path, je.line > 0 ? je.line : 0,
		    je.column > 0 ? je.column : 0, "invalid JSON: %s", je.text);
	if (!json_is_object(v)) {
		rc = rerr(r, "not a plan (expected a JSON object with "
		    "\"schema\": \"" PLAN_SCHEMA "\", found %s)", jtype(v));
	} else if ((rc = get_str(r, v, "", "schema", 0, &schema)) == DL_OK) {
		if (schema == NULL)
			rc = rerr(r, "schema: missing (expected \"" PLAN_SCHEMA
			    "\")");
		else if (strcmp(schema, PLAN_SCHEMA) != 0)
			rc = rerr(r, "schema: '%s' is not a supported schema "
			    "(expected \"" PLAN_SCHEMA "\")", schema);
	}
	if (rc != DL_OK) {
		json_decref(v);
		return rc;
	}
	*root = v;
	return DL_OK;
}

static int
read_inputs(struct rd *r, json_t *root, struct dl_plan *p)
{
	static const char *const keys[] = { "kind", "path", "sha256", NULL };
	json_t *a, *v;
	size_t i;
	int rc;

	if ((rc = get_typed(r, root, "", "inputs", 0, J_ARR, &a)) != DL_OK
	    || a == NULL)
		return rc;
	p->inputs = xcalloc(json_array_size(a) + 1, sizeof(*p->inputs));
	json_array_foreach(a, i, v) {
		struct dl_input *in = &p->inputs[p->ninputs];
		const char *kind = NULL, *path = NULL, *sha = NULL;
		char w[64];
		size_t k;

		snprintf(w, sizeof(w), "inputs[%zu]", i);
		if (!json_is_object(v))
			return rerr(r, "%s: expected an object, found %s", w,
			    jtype(v));
		if ((rc = check_keys(r, v, w, keys)) != DL_OK ||
		    (rc = get_str(r, v, w, "kind", 1, &kind)) != DL_OK ||
		    (rc = get_str(r, v, w, "path", 1, &path)) != DL_OK ||
		    (rc = get_str(r, v, w, "sha256", 0, &sha)) != DL_OK)
			return rc;
		for (k = 0; k < ARRAY_SIZE(input_kinds); k++)
			if (strcmp(kind, input_kinds[k]) == 0)
				break;
		if (k == ARRAY_SIZE(input_kinds))
			return rerr(r, "%s.kind: '%s' is not an input kind "
			    "(expected nodes, links, load, traffic or model)",
			    w, kind);
		if (plan_input_path(p, kind))
			return rerr(r, "%s.kind: input '%s' is given twice", w,
			    kind);
		if (*path == '\0')
			return rerr(r, "%s.path: empty path", w);
		if (sha && (strlen(sha) != 64 ||
		    strspn(sha, "0123456789abcdef") != 64))
			return rerr(r, "%s.sha256: '%s' is not a SHA-256 digest "
			    "(expected 64 lower-case hex digits)", w, sha);
		in->kind = xstrdup(kind);
		in->path = resolve(r->file, path);
		if (sha)
			memcpy(in->sha256, sha, 65);
		p->ninputs++;
	}
	return DL_OK;
}

int
plan_read_inputs(struct dl_plan *p, const char *path, struct dl_err *e)
{
	struct rd r = { path, e };
	json_t *root;
	int rc;

	plan_init(p);
	if ((rc = load_json(&r, path, &root)) != DL_OK) {
		plan_free(p);
		return rc;
	}
	rc = read_inputs(&r, root, p);
	json_decref(root);
	if (rc != DL_OK)
		plan_free(p);
	return rc;
}

/* Refuse a plan whose recorded inputs differ from the files loaded. */
static int
check_digests(struct rd *r, const struct dl_plan *p,
    const struct dl_cluster *c, const struct dl_model *m)
{
	static const char *const names[] = {
		"nodes.csv", "links.csv", "load.csv", "traffic.csv", "model.csv"
	};
	int any = 0;

	for (size_t i = 0; i < p->ninputs; i++)
		any |= p->inputs[i].sha256[0] != '\0';
	if (!any)
		return DL_OK;
	for (size_t k = 0; k < ARRAY_SIZE(input_kinds); k++) {
		const char *cur = cluster_file(c, m, (int)k);
		const struct dl_input *in = NULL;
		char sha[65];
		int rc;

		for (size_t i = 0; i < p->ninputs; i++)
			if (strcmp(p->inputs[i].kind, input_kinds[k]) == 0)
				in = &p->inputs[i];
		if (in == NULL && cur == NULL)
			continue;
		if (k == 4 && (in == NULL || m == NULL))
			continue;
		if (in == NULL)
			return dl_seterr(r->e, DL_EDATA, cur, 0, 0, "plan was "
			    "made without a %s; re-run dlplan plan", names[k]);
		if (cur == NULL)
			return dl_seterr(r->e, DL_EDATA, r->file, 0, 0, "plan "
			    "was made with a %s ('%s') but the cluster has "
			    "none; re-run dlplan plan", names[k], in->path);
		if (in->sha256[0] == '\0')
			continue;
		if ((rc = sha256_file(cur, sha, r->e)) != DL_OK)
			return rc;
		if (strcmp(sha, in->sha256) != 0)
			return dl_seterr(r->e, DL_EDATA, cur, 0, 0, "plan was "
			    "made for a different %s (digest mismatch); re-run "
			    "dlplan plan", names[k]);
	}
	return DL_OK;
}

static int
read_options(struct rd *r, json_t *root, struct dl_opts *o)
{
	static const char *const keys[] = {
		"global_batch", "micro_batch", "mfu", "param_bytes",
		"grad_bytes", "optimizer_bytes", "mem_reserve", "horizon",
		"states", "max_stages", "max_tp", "time_limit", NULL
	};
	const char *w = "options";
	json_t *j;
	int rc;

	if ((rc = get_typed(r, root, "", "options", 1, J_OBJ, &j)) !=
	    DL_OK)
		return rc;
	if ((rc = check_keys(r, j, w, keys)) != DL_OK ||
	    (rc = get_long(r, j, w, "global_batch", 1, 1, 1000000000000L,
	    &o->global_batch)) != DL_OK ||
	    (rc = get_long(r, j, w, "micro_batch", 1, 1, 1000000000L,
	    &o->micro_batch)) != DL_OK ||
	    (rc = get_num(r, j, w, "mfu", 0, 1e-9, 1, &o->mfu)) != DL_OK ||
	    (rc = get_num(r, j, w, "param_bytes", 0, 0, 64, &o->param_bytes))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "grad_bytes", 0, 0, 64, &o->grad_bytes))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "optimizer_bytes", 0, 0, 256,
	    &o->optimizer_bytes)) != DL_OK ||
	    (rc = get_num(r, j, w, "mem_reserve", 0, 0, 0.99,
	    &o->mem_reserve)) != DL_OK ||
	    (rc = get_int(r, j, w, "horizon", 0, 1, 1000000, &o->horizon))
	    != DL_OK ||
	    (rc = get_int(r, j, w, "states", 0, 1, 32, &o->states)) != DL_OK ||
	    (rc = get_int(r, j, w, "max_stages", 0, 0, 1000000,
	    &o->max_stages)) != DL_OK ||
	    (rc = get_int(r, j, w, "max_tp", 0, 1, DL_MAX_TP, &o->max_tp))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "time_limit", 0, 0, 1e9, &o->time_limit))
	    != DL_OK)
		return rc;
	return DL_OK;
}

static int
read_forecast(struct rd *r, json_t *root, struct dl_plan *p,
    const struct dl_cluster *c)
{
	const char *id;
	json_t *f, *v;
	int rc;

	if ((rc = get_typed(r, root, "", "forecast", 0, J_OBJ, &f)) !=
	    DL_OK || f == NULL)
		return rc;
	p->nnodes = c->nnodes;
	p->uhat = xcalloc(c->nnodes + 1, sizeof(double));
	json_object_foreach(f, id, v) {
		int n = cluster_node(c, id);
		char w[128];

		snprintf(w, sizeof(w), "forecast.%s", id);
		if (n < 0)
			return rerr(r, "%s: unknown node '%s' (not in "
			    "nodes.csv)", w, id);
		if (!json_is_number(v))
			return rerr(r, "%s: expected a number in [0, 1], found "
			    "%s", w, jtype(v));
		if (!(json_number_value(v) >= 0 && json_number_value(v) <= 1))
			return rerr(r, "%s: %.17g is out of range (expected a "
			    "number in [0, 1])", w, json_number_value(v));
		p->uhat[n] = json_number_value(v);
	}
	return DL_OK;
}

/* "gpus" and "tp_shares" of a stage. */
static int
read_gpus(struct rd *r, json_t *j, const char *w, struct dl_stage *st,
    const struct dl_node *nd)
{
	json_t *a, *sh, *v;
	size_t i, k;
	int rc;

	if ((rc = get_typed(r, j, w, "gpus", 1, J_ARR, &a)) != DL_OK ||
	    (rc = get_typed(r, j, w, "tp_shares", 0, J_ARR, &sh)) !=
	    DL_OK)
		return rc;
	k = json_array_size(a);
	if (k < 1 || k > DL_MAX_TP || k == 3 || (k > 4 && k < 8))
		return rerr(r, "%s.gpus: %zu GPUs (expected a TP degree of 1, "
		    "2, 4 or 8)", w, k);
	st->ngpus = (int)k;
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v))
			return rerr(r, "%s.gpus[%zu]: expected a local GPU "
			    "index, found %s", w, i, jtype(v));
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) >= nd->gpus)
			return rerr(r, "%s.gpus[%zu]: GPU %lld does not exist "
			    "on node '%s' (it has %d: 0 to %d)", w, i,
			    (long long)json_integer_value(v), nd->id, nd->gpus,
			    nd->gpus - 1);
		st->gpus[i] = (int)json_integer_value(v);
		st->tp_share[i] = 1.0 / (double)k;
	}
	if (sh == NULL)
		return DL_OK;
	if (json_array_size(sh) != k)
		return rerr(r, "%s.tp_shares: %zu shares for %zu GPUs", w,
		    json_array_size(sh), k);
	json_array_foreach(sh, i, v) {
		if (!json_is_number(v))
			return rerr(r, "%s.tp_shares[%zu]: expected a number in "
			    "(0, 1], found %s", w, i, jtype(v));
		st->tp_share[i] = json_number_value(v);
	}
	return DL_OK;
}

static int
read_stage(struct rd *r, json_t *j, const char *w, struct dl_stage *st,
    const struct dl_cluster *c)
{
	static const char *const keys[] = {
		"node", "gpus", "tp_shares", "layers", "layer_names", "ranks",
		"micro_batches", "compute_s", "p2p_s", "mem_bytes", NULL
	};
	const char *id = NULL;
	json_t *ly;
	int rc, n;

	if (!json_is_object(j))
		return rerr(r, "%s: expected an object, found %s", w, jtype(j));
	if ((rc = check_keys(r, j, w, keys)) != DL_OK ||
	    (rc = get_str(r, j, w, "node", 1, &id)) != DL_OK)
		return rc;
	if ((n = cluster_node(c, id)) < 0)
		return rerr(r, "%s.node: unknown node '%s' (not in nodes.csv)",
		    w, id);
	st->node = n;
	if ((rc = read_gpus(r, j, w, st, &c->nodes[n])) != DL_OK ||
	    (rc = get_typed(r, j, w, "layers", 1, J_ARR, &ly)) != DL_OK)
		return rc;
	if (json_array_size(ly) != 2 ||
	    !json_is_integer(json_array_get(ly, 0)) ||
	    !json_is_integer(json_array_get(ly, 1)))
		return rerr(r, "%s.layers: expected [first, last] (two layer "
		    "indices, 0-based)", w);
	if (json_integer_value(json_array_get(ly, 0)) < 0 ||
	    json_integer_value(json_array_get(ly, 1)) > INT_MAX ||
	    json_integer_value(json_array_get(ly, 0)) >
	    json_integer_value(json_array_get(ly, 1)))
		return rerr(r, "%s.layers: [%lld, %lld] is not a layer range "
		    "(expected 0 <= first <= last)", w,
		    (long long)json_integer_value(json_array_get(ly, 0)),
		    (long long)json_integer_value(json_array_get(ly, 1)));
	st->first = (int)json_integer_value(json_array_get(ly, 0));
	st->last = (int)json_integer_value(json_array_get(ly, 1));
	if ((rc = get_num(r, j, w, "compute_s", 0, 0, HUGE_VAL,
	    &st->compute_s)) != DL_OK ||
	    (rc = get_num(r, j, w, "p2p_s", 0, 0, HUGE_VAL, &st->p2p_s)) !=
	    DL_OK ||
	    (rc = get_num(r, j, w, "mem_bytes", 0, 0, HUGE_VAL,
	    &st->mem_bytes)) != DL_OK)
		return rc;
	return DL_OK;
}

static int
read_groups(struct rd *r, json_t *root, struct dl_plan *p,
    const struct dl_cluster *c)
{
	static const char *const keys[] = {
		"micro_batches", "samples", "time_s", "stages", NULL
	};
	json_t *a, *g, *sa, *s;
	size_t i, k;
	int rc;

	if ((rc = get_typed(r, root, "", "groups", 1, J_ARR, &a)) != DL_OK)
		return rc;
	if (json_array_size(a) == 0)
		return rerr(r, "groups: no groups (expected at least one)");
	if (json_array_size(a) > INT_MAX / 2)
		return rerr(r, "groups: too many groups");
	p->groups = xcalloc(json_array_size(a), sizeof(*p->groups));
	json_array_foreach(a, i, g) {
		struct dl_group *gr = &p->groups[i];
		char w[64], ws[96];

		snprintf(w, sizeof(w), "groups[%zu]", i);
		p->ngroups++;
		if (!json_is_object(g))
			return rerr(r, "%s: expected an object, found %s", w,
			    jtype(g));
		if ((rc = check_keys(r, g, w, keys)) != DL_OK ||
		    (rc = get_long(r, g, w, "micro_batches", 1, 1,
		    1000000000000L, &gr->micro_batches)) != DL_OK ||
		    (rc = get_num(r, g, w, "time_s", 0, 0, HUGE_VAL,
		    &gr->time_s)) != DL_OK ||
		    (rc = get_typed(r, g, w, "stages", 1, J_ARR, &sa)) !=
		    DL_OK)
			return rc;
		if (json_array_size(sa) == 0)
			return rerr(r, "%s.stages: no stages (expected at least "
			    "one)", w);
		if (json_array_size(sa) > INT_MAX / 2)
			return rerr(r, "%s.stages: too many stages", w);
		gr->stages = xcalloc(json_array_size(sa), sizeof(*gr->stages));
		json_array_foreach(sa, k, s) {
			snprintf(ws, sizeof(ws), "%s.stages[%zu]", w, k);
			gr->nstages++;
			if ((rc = read_stage(r, s, ws, &gr->stages[k], c)) !=
			    DL_OK)
				return rc;
		}
	}
	return DL_OK;
}

/* The estimate and the solver status, leniently: eval recomputes them. */
static void
read_results(json_t *root, struct dl_plan *p)
{
	json_t *est = json_object_get(root, "estimate");
	json_t *sv = json_object_get(root, "solver"), *v, *b;
	struct {
		const char *key;
		double *dst;
	} nums[] = {
		{ "iteration_s", &p->est.iteration_s },
		{ "lower_bound_s", &p->est.lower_bound_s },
		{ "efficiency", &p->est.efficiency },
		{ "throughput", &p->est.throughput },
		{ "pipeline_s", &p->est.pipeline_s },
		{ "sync_s", &p->est.sync_s },
		{ "compute_s", &p->est.compute_s },
		{ "p2p_s", &p->est.p2p_s },
		{ "bubble_s", &p->est.bubble_s },
	};

	if (json_is_object(est)) {
		for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
			if (json_is_number(v = json_object_get(est,
			    nums[i].key)))
				*nums[i].dst = json_number_value(v);
		if (json_is_integer(v = json_object_get(est, "slowest_group")))
			p->est.slowest_group = (int)json_integer_value(v);
		p->est.feasible = json_is_true(json_object_get(est,
		    "fits_memory"));
		b = json_object_get(est, "baselines");
		if (json_is_number(v = json_object_get(b, "even_dp_s")))
			p->even_s = json_number_value(v);
		if (json_is_number(v = json_object_get(b, "proportional_dp_s")))
			p->proportional_s = json_number_value(v);
		p->even_fits = json_is_true(json_object_get(b,
		    "even_dp_fits_memory"));
		p->proportional_fits = json_is_true(json_object_get(b,
		    "proportional_dp_fits_memory"));
	}
	if (!json_is_object(sv))
		return;
	if (json_is_string(v = json_object_get(sv, "status")) &&
	    (strcmp(json_string_value(v), "optimal") == 0 ||
	    strcmp(json_string_value(v), "feasible") == 0))
		snprintf(p->status, sizeof(p->status), "%s",
		    json_string_value(v));
	if (json_is_number(v = json_object_get(sv, "gap")))
		p->gap = json_number_value(v);
	if (json_is_number(v = json_object_get(sv, "bound_s")))
		p->bound_s = json_number_value(v);
	if (json_is_number(v = json_object_get(sv, "time_s")))
		p->solve_s = json_number_value(v);
	if (json_is_string(v = json_object_get(sv, "strategy")))
		p->strategy = xstrdup(json_string_value(v));
	if (json_is_string(v = json_object_get(root, "parent")))
		p->parent = xstrdup(json_string_value(v));
}

int
plan_read_json(struct dl_plan *p, const char *path,
    const struct dl_cluster *c, const struct dl_model *m,
    int check_digest, struct dl_err *e)
{
	struct rd r = { path, e };
	json_t *root;
	int rc;

	plan_init(p);
	if ((rc = load_json(&r, path, &root)) != DL_OK) {
		plan_free(p);
		return rc;
	}
	rc = read_inputs(&r, root, p);
	if (rc == DL_OK && check_digest)
		rc = check_digests(&r, p, c, m);
	if (rc == DL_OK)
		rc = read_options(&r, root, &p->opts);
	if (rc == DL_OK)
		rc = read_forecast(&r, root, p, c);
	if (rc == DL_OK)
		rc = read_groups(&r, root, p, c);
	if (rc == DL_OK) {
		read_results(root, p);
		rc = plan_validate(p, c, m, path, e);
	}
	if (rc == DL_OK)
		rc = budget_schedule_read(root, c, path, &p->schedule, e);
	if (rc == DL_OK)
		rc = replan_lineage_read(root, c, path, &p->lineage, e);
	json_decref(root);
	if (rc != DL_OK)
		plan_free(p);
	return rc;
}
