/*
 * plan.c - the plan as data: defaults, copies, ranks, the structure checks
 * and the record of its inputs, with the budget schedule and the replan
 * lineage it carries.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The JSON and CSV forms are in plan_json.c (writing) and
 * plan_json_read.c (reading).
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "util_io.h"

/* The names of the enums of plan.h, as plan.json and the options write
 * them; plan_name_find() goes back. */
const char *const plan_attention_names[DL_NATTENTION] = {
	"fused", "unfused"
};
const char *const plan_recompute_names[DL_NRECOMPUTE] = {
	"none", "selective", "full", "auto"
};
const char *const plan_optimizer_names[DL_NOPTIMIZER] = {
	"replicated", "sharded"
};
const char *const plan_overlap_names[DL_NOVERLAP] = {
	"none", "dp", "dp+tp", "auto"
};
const char *const plan_precision_names[DL_NPRECISION] = {
	"bf16", "fp16"
};
const char *const plan_runtime_names[DL_NRUNTIMES] = {
	"dlplan", "megatron", "deepspeed", "torchtitan"
};
const char *const plan_strategy_names[DL_NSTRATEGIES] = {
	"auto", "dp", "pp", "hybrid"
};
const char *const plan_status_names[DL_NSTATUSES] = {
	"given", "feasible", "optimal"
};
const char *const plan_bound_names[DL_NBOUNDS] = {
	"", "exhaustive", "combinatorial", "lp", "T_lb"
};

int
plan_name_find(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

const char *const plan_input_kinds[DL_NINPUT_KINDS] = {
	"nodes", "links", "load", "traffic", "model"
};

void
plan_opts_default(struct dl_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->global_batch = 0;
	o->micro_batch = 1;
	o->mfu = 0.65;
	o->param_bytes = 2;
	o->grad_bytes = 2;
	o->optimizer_bytes = 12;
	o->mem_reserve = 0.10;
	o->horizon = 1;
	o->states = 3;
	o->max_stages = 0;
	o->max_tp = DL_MAX_TP;
	o->time_limit = 60;
	o->attention = ATTN_FUSED;
	o->recompute = RC_AUTO;
	o->optimizer = OPTIM_REPLICATED;
	o->overlap = OVL_AUTO;
	o->runtime = RUNTIME_DLPLAN;
}

int
plan_precision(const struct dl_plan *p, const struct dl_cluster *c)
{
	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++) {
			int n = p->groups[g].stages[s].node;

			if (n >= 0 && (size_t)n < c->nnodes &&
			    cluster_gpu_fp16(c->nodes[n].gpu_model))
				return PREC_FP16;
		}
	return PREC_BF16;
}

void
plan_init(struct dl_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->generator = xstrdup("dlplan " DLPLAN_VERSION);
	plan_opts_default(&p->opts);
	p->status = PLAN_GIVEN;
	p->bound_method = BOUND_NONE;
	p->strategy = STRAT_NONE;
	p->runtime = RUNTIME_DLPLAN;
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
	plan_set_uhat_used(p, NULL, 0);
	free(p->left_out);
	free(p->generator);
	free(p->parent);
	plan_schedule_free(p->schedule);
	plan_lineage_free(p->lineage);
	memset(p, 0, sizeof(*p));
}

void
plan_set_uhat_used(struct dl_plan *p, char *const *used, size_t n)
{
	for (size_t i = 0; p->uhat_used != NULL && i < p->nnodes; i++)
		free(p->uhat_used[i]);
	free(p->uhat_used);
	p->uhat_used = NULL;
	if (used != NULL) {
		p->uhat_used = xcalloc(p->nnodes + 1, sizeof(char *));
		for (size_t i = 0; i < p->nnodes && i < n; i++)
			p->uhat_used[i] = xstrdup_or_null(used[i]);
	}
}

/* xmemdup(), keeping NULL for an array that is absent. */
#define DUP(a, n) ((a) ? xmemdup((a), (n), sizeof(*(a))) : NULL)

void
plan_copy(struct dl_plan *dst, const struct dl_plan *src)
{
	*dst = *src;
	dst->generator = xstrdup_or_null(src->generator);
	dst->parent = xstrdup_or_null(src->parent);
	dst->schedule = plan_schedule_dup(src->schedule);
	dst->lineage = plan_lineage_dup(src->lineage);
	dst->uhat = DUP(src->uhat, src->nnodes);
	if (src->uhat_used) {
		dst->uhat_used = xcalloc(src->nnodes + 1, sizeof(char *));
		for (size_t i = 0; i < src->nnodes; i++)
			dst->uhat_used[i] = xstrdup_or_null(src->uhat_used[i]);
	}
	dst->left_out = DUP(src->left_out, src->nleft_out);
	dst->inputs = DUP(src->inputs, src->ninputs);
	for (size_t i = 0; i < src->ninputs; i++) {
		dst->inputs[i].kind = xstrdup_or_null(src->inputs[i].kind);
		dst->inputs[i].path = xstrdup_or_null(src->inputs[i].path);
	}
	dst->groups = DUP(src->groups, (size_t)src->ngroups);
	for (int g = 0; g < src->ngroups; g++)
		dst->groups[g].stages = DUP(src->groups[g].stages,
		    (size_t)src->groups[g].nstages);
	dst->rings = DUP(src->rings, (size_t)src->nrings);
	for (int i = 0; i < src->nrings; i++) {
		const struct dl_ring *r = &src->rings[i];

		dst->rings[i].group = DUP(r->group, (size_t)r->nmembers);
		dst->rings[i].stage = DUP(r->stage, (size_t)r->nmembers);
	}
	dst->flows = DUP(src->flows, src->nflows);
	for (size_t i = 0; i < src->nflows; i++) {
		const struct dl_flow *f = &src->flows[i];

		dst->flows[i].path = DUP(f->path, f->npath);
		dst->flows[i].policy_first = DUP(f->policy_first,
		    (size_t)f->nregimes);
		dst->flows[i].regime_s = DUP(f->regime_s,
		    (size_t)f->nregimes);
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
		if (gr->vstages > 1 && p->runtime != RUNTIME_MEGATRON) {
			rc = verr(e, file, "groups[%d].virtual_stages: the "
			    "interleaved schedule is Megatron-LM's; the plan's "
			    "runtime is %s (expected runtime megatron, or no "
			    "virtual_stages)", g,
			    plan_runtime_names[p->runtime]);
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
		for (int s = 0; s < gr->nstages && rc == DL_OK; s++) {
			const struct dl_stage *st = &gr->stages[s];
			int nb = model_blocks(m, st->first, st->last);

			if (st->recompute > 0 && p->opts.recompute != RC_FULL)
				rc = verr(e, file, "groups[%d].stages[%d]."
				    "recompute_layers: %d, but options."
				    "recompute is '%s' (expected 0, or "
				    "'full')", g, s, st->recompute,
				    plan_recompute_names[p->opts.recompute]);
			else if (st->recompute > nb)
				rc = verr(e, file, "groups[%d].stages[%d]."
				    "recompute_layers: %d, but the stage holds "
				    "%d transformer blocks", g, s,
				    st->recompute, nb);
		}
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
 * Inputs.
 */

const char *
plan_input_path(const struct dl_plan *p, const char *kind)
{
	for (size_t i = 0; i < p->ninputs; i++)
		if (strcmp(p->inputs[i].kind, kind) == 0)
			return p->inputs[i].path;
	return NULL;
}

const char *
plan_input_file(const struct dl_cluster *c, const struct dl_model *m,
    int kind)
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
	struct dl_input in[DL_NINPUT_KINDS];
	size_t n = 0;
	int rc = DL_OK;

	for (size_t k = 0; k < DL_NINPUT_KINDS && rc == DL_OK; k++) {
		const char *path = plan_input_file(c, m, (int)k);

		if (path == NULL)
			continue;
		/* The digest of the bytes that were parsed, when read. */
		if (!read_digest(path, in[n].sha256, &in[n].size))
			rc = sha256_file(path, -1, in[n].sha256, &in[n].size,
			    e);
		in[n].kind = xstrdup(plan_input_kinds[k]);
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
	p->inputs = xmemdup(in, n, sizeof(*in));
	p->ninputs = n;
	return DL_OK;
}

/*
 * The budget schedule and the replan lineage.
 */

void
plan_schedule_clear(struct dl_schedule *s)
{
	for (int t = 0; s->slots && t < s->nslots; t++) {
		for (int i = 0; i < s->slots[t].ncand; i++)
			free(s->slots[t].cand[i].used);
		free(s->slots[t].cand);
		free(s->slots[t].plan);
	}
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

void
plan_schedule_free(struct dl_schedule *s)
{
	if (s == NULL)
		return;
	plan_schedule_clear(s);
	free(s);
}

struct dl_schedule *
plan_schedule_dup(const struct dl_schedule *s)
{
	struct dl_schedule *d;

	if (s == NULL)
		return NULL;
	d = xmalloc(sizeof(*d));
	*d = *s;
	d->slots = xcalloc((size_t)s->nslots + 1, sizeof(*d->slots));
	for (int t = 0; t < s->nslots; t++) {
		const struct dl_budget_slot *a = &s->slots[t];
		struct dl_budget_slot *b = &d->slots[t];

		*b = *a;
		b->plan = xstrdup_or_null(a->plan);
		b->cand = xcalloc((size_t)a->ncand + 1, sizeof(*b->cand));
		for (int i = 0; i < a->ncand; i++) {
			b->cand[i] = a->cand[i];
			b->cand[i].used = xmemdup(a->cand[i].used,
			    (size_t)a->cand[i].nused, sizeof(int));
		}
	}
	return d;
}

void
plan_lineage_free(struct dl_lineage *l)
{
	if (l == NULL)
		return;
	free(l->parent_file);
	free(l->observed);
	free(l->factor);
	free(l->used);
	free(l->unit);
	free(l);
}

struct dl_lineage *
plan_lineage_dup(const struct dl_lineage *l)
{
	struct dl_lineage *d;

	if (l == NULL)
		return NULL;
	d = xmalloc(sizeof(*d));
	*d = *l;
	d->parent_file = xstrdup_or_null(l->parent_file);
	d->observed = xstrdup_or_null(l->observed);
	d->factor = xmemdup(l->factor, l->nnodes, sizeof(double));
	d->used = xmemdup(l->used, l->nnodes, 1);
	d->unit = xmemdup(l->unit, (size_t)l->nunits, sizeof(*d->unit));
	return d;
}

int
plan_interleaves(const struct dl_plan *p)
{
	for (int g = 0; g < p->ngroups; g++)
		if (PLAN_VSTAGES(&p->groups[g]) > 1)
			return 1;
	return 0;
}

/*
 * Settle o->overlap for a plan of runtime rt: auto becomes dp where the
 * runtime overlaps its data-parallel reduction with the backward by
 * default (Megatron-LM's --overlap-grad-reduce, torchtitan's FSDP and
 * DDP), none where it reduces after the pipeline (DeepSpeed's pipeline
 * engine; dlplan's executor unless the plan asks it to overlap); asking
 * a runtime for what it cannot run is an error.  The executor overlaps
 * the gradient reduction only: with a sharded optimizer dp would also
 * price a parameter gather under the next forward, which it does not
 * run.
 */
int
plan_resolve_overlap(struct dl_opts *o, int rt, struct dl_err *e)
{
	int can = rt == RUNTIME_MEGATRON ? OVL_DPTP :
	    rt == RUNTIME_TORCHTITAN || rt == RUNTIME_DLPLAN ? OVL_DP :
	    OVL_NONE;

	if (o->overlap == OVL_AUTO)
		o->overlap = rt == RUNTIME_DLPLAN || can < OVL_DP ? OVL_NONE :
		    OVL_DP;
	if (o->overlap > can)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "'--overlap %s': "
		    "'--runtime %s' %s", plan_overlap_names[o->overlap],
		    plan_runtime_names[rt], can == OVL_NONE ? "reduces "
		    "gradients after the pipeline, overlapping nothing" :
		    "has no tensor-parallel overlap (only megatron's "
		    "--tp-comm-overlap)");
	if (rt == RUNTIME_DLPLAN && o->overlap == OVL_DP &&
	    o->optimizer == OPTIM_SHARDED)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "'--overlap dp' "
		    "with '--optimizer sharded': the reference executor does "
		    "not overlap the parameter gather with the next forward "
		    "(use '--overlap none')");
	return DL_OK;
}
