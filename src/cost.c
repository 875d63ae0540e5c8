/*
 * cost.c - the cost model of dlplan(1) ALGORITHMS, Cost model.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every formula is written in the order dlplan(1) states it, so that an
 * independent transcription gives the same doubles.  Sums over a layer
 * range come from double-double prefix sums: each is the exact sum of the
 * per-layer terms rounded once (to within one unit in the last place),
 * which is what a careful summation over the range gives, and costs O(1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "gpus.h"
#include "pipesched.h"
#include "ring.h"

int
cost_init(struct dl_costctx *x, const struct dl_cluster *c,
    const struct dl_model *m, const struct dl_opts *o, const double *uhat,
    struct dl_router *router, struct dl_err *e)
{
	size_t n = m->nlayers;
	double *t;

	memset(x, 0, sizeof(*x));
	if (n == 0)
		return dl_seterr(e, DL_EDATA, m->path, 0, 0,
		    "model has no layers");
	if (o->micro_batch < 1 || o->global_batch < 1)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "global batch %ld "
		    "and micro-batch %ld must be at least 1", o->global_batch,
		    o->micro_batch);
	x->c = c;
	x->m = m;
	x->o = o;
	x->router = router;
	x->speed = xcalloc(c->nnodes, sizeof(double));
	x->uhat = xcalloc(c->nnodes, sizeof(double));
	x->membw = xcalloc(c->nnodes, sizeof(double));
	x->ovl = o->overlap == OVL_AUTO ? OVL_NONE : o->overlap;
	x->sync_floor = x->ovl == OVL_NONE ? 1 : 0;
	cost_savers_init(x, m, o);
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct dl_node *nd = &c->nodes[i];
		double u = uhat ? uhat[i] : 0;
		double mfu = nd->mfu >= 0 ? nd->mfu : o->mfu;
		double per_flop = 1 / (nd->tflops * 1e12 * mfu);

		/* NaN fails both tests and becomes 0 too. */
		if (!(u >= 0))
			u = 0;
		if (u > 0.95)
			u = 0.95;
		x->uhat[i] = u;
		x->membw[i] = cost_node_membw(nd);
		if (x->membw[i] > 0)
			per_flop += x->mem_per_flop / x->membw[i];
		x->speed[i] = (1 - u) / per_flop;
		x->speed_total += nd->gpus * x->speed[i];
	}
	t = xcalloc(n, sizeof(double));
	for (size_t l = 0; l < n; l++)
		t[l] = x->lay_flops[l] + (x->rc_fold ? x->lay_rcf[l] : 0);
	cost_prefix(t, n, &x->cum_flops, &x->lo_flops);
	for (size_t l = 0; l < n; l++)
		t[l] = m->layers[l].fwd_gflop * 1e9;
	cost_prefix(t, n, &x->cum_fwd, &x->lo_fwd);
	/* The least backward share of any stage (see cost.h). */
	x->bwd_min = 2.0 / 3;
	for (size_t l = 0; l < n; l++) {
		double all = x->lay_flops[l] + (x->rc_fold ? x->lay_rcf[l] :
		    0);

		if (all > 0)
			x->bwd_min = fmin(x->bwd_min, (all -
			    m->layers[l].fwd_gflop * 1e9) / all);
	}
	for (size_t l = 0; l < n; l++)
		t[l] = m->layers[l].params_m * 1e6;
	cost_prefix(t, n, &x->cum_params, &x->lo_params);
	for (size_t l = 0; l < n; l++)
		t[l] = x->rc_fold && x->blk[l] ? x->lay_keep[l] : x->lay_mem[l];
	cost_prefix(t, n, &x->cum_mem, &x->lo_mem);
	for (size_t l = 0; l < n; l++)
		t[l] = m->layers[l].tp_mb * 1e6;
	cost_prefix(t, n, &x->cum_tp, &x->lo_tp);
	free(t);
	if (n > 0 && n <= COST_RANGE_TABLE) {
		x->rt_flops = cost_range_table(x->cum_flops, x->lo_flops, n);
		x->rt_params = cost_range_table(x->cum_params, x->lo_params, n);
		x->rt_mem = cost_range_table(x->cum_mem, x->lo_mem, n);
		x->rt_tp = cost_range_table(x->cum_tp, x->lo_tp, n);
	}
	return DL_OK;
}

/*
 * The memory bandwidth of one GPU of node nd in bytes per second: its
 * nodes.csv mem_gbs, else the GPU table's figure for its gpu_model; 0
 * when neither (or mem_gbs 0): no memory-bound time.
 */
double
cost_node_membw(const struct dl_node *nd)
{
	const struct gpu_spec *g;

	if (nd->mem_gbs >= 0)
		return nd->mem_gbs * 1e9;
	g = gpu_lookup(nd->gpu_model);
	return g != NULL ? g->mem_gbs * 1e9 : 0;
}

void
cost_free(struct dl_costctx *x)
{
	free(x->speed);
	free(x->uhat);
	free(x->membw);
	free(x->cum_flops);
	free(x->cum_fwd);
	free(x->lo_fwd);
	free(x->cum_params);
	free(x->cum_mem);
	free(x->cum_tp);
	free(x->lo_flops);
	free(x->lo_params);
	free(x->lo_mem);
	free(x->lo_tp);
	free(x->rt_flops);
	free(x->rt_params);
	free(x->rt_mem);
	free(x->rt_tp);
	free(x->blk);
	free(x->cum_blk);
	free(x->lay_flops);
	free(x->lay_mem);
	free(x->lay_keep);
	free(x->lay_rcf);
	memset(x, 0, sizeof(*x));
}

double
cost_intra(const struct dl_costctx *x, int node, double bytes)
{
	return 8 * bytes / (x->c->nodes[node].intra_gbps * 1e9);
}

double
cost_boundary_dirs(const struct dl_costctx *x, int u, int v, double bytes,
    double *fwd, double *bwd)
{
	*fwd = *bwd = HUGE_VAL;
	if (u == v) {
		*fwd = *bwd = cost_intra(x, u, bytes);
		return *fwd + *bwd;
	}
	for (int dir = 0; dir < 2; dir++) {
		double td;

		if (x->router == NULL)
			return HUGE_VAL;
		router_reset(x->router);
		if (router_price(x->router, dir ? v : u, dir ? u : v, bytes,
		    &td, NULL) != DL_OK)
			return HUGE_VAL;
		*(dir ? bwd : fwd) = td;
	}
	return *fwd + *bwd;
}

double
cost_stage_compute(const struct dl_costctx *x, int node, int k, int first,
    int last)
{
	return cost_unit_time(x, node, k, cost_range_flops(x, first, last),
	    cost_range_tp(x, first, last));
}


/* The whole batch's FLOPs over a total speed: T_lb of those GPUs. */
static double
batch_over(const struct dl_costctx *x, double speed)
{
	return (double)x->o->global_batch *
	    cost_range_flops(x, 0, (int)x->m->nlayers - 1) / speed;
}

double
cost_lower_bound(const struct dl_costctx *x)
{
	return batch_over(x, x->speed_total);
}

double
cost_own_bound(const struct dl_costctx *x, const struct dl_plan *p)
{
	double sum = 0;

	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++) {
			const struct dl_stage *st = &p->groups[g].stages[s];

			sum += st->ngpus * x->speed[st->node];
		}
	return sum > 0 ? batch_over(x, sum) : 0;
}

/* Append a flow to p->flows (capacity *cap). */
static struct dl_flow *
add_flow(struct dl_plan *p, size_t *cap, int phase, int a, int b, int dir,
    int src, int dst, double bytes)
{
	struct dl_flow *f;

	p->flows = xgrow(p->flows, cap, p->nflows + 1, sizeof(*p->flows));
	f = &p->flows[p->nflows++];
	memset(f, 0, sizeof(*f));
	f->phase = phase;
	f->a = a;
	f->b = b;
	f->dir = dir;
	f->src = src;
	f->dst = dst;
	f->bytes = bytes;
	f->order = -1;
	return f;
}

/*
 * qsort() has no context argument: the keys of sort_desc(), one set per
 * thread, the double at sort_key + i sort_stride for index i.
 */
static _Thread_local const char *sort_key;
static _Thread_local size_t sort_stride;

static int
by_key_desc(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	double x, y;

	memcpy(&x, sort_key + (size_t)i * sort_stride, sizeof(x));
	memcpy(&y, sort_key + (size_t)j * sort_stride, sizeof(y));
	if (x != y)
		return x > y ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * Sort the n indices idx[] by a double key, largest first, ties by index:
 * the key of index i is the double at key0 + i stride (key0 the key of
 * index 0, so a member of an array of structs).
 */
static void
sort_desc(int *idx, size_t n, const void *key0, size_t stride)
{
	if (n == 0)
		return;
	sort_key = key0;
	sort_stride = stride;
	qsort(idx, n, sizeof(int), by_key_desc);
}

/*
 * What the sync phase knows of T before it ends, so that it can stop
 * once the plan cannot beat cut (the best T so far; 0: none).  A ring's
 * time R_q is 2 (G - 1) times its slowest hop, and a hop costs at least
 * what it cost when priced alone (an idle network) or routed (the flows
 * routed after it do not change its price); a unit's sync is the sum of
 * the R_q of its segments, and T is the pipeline plus the largest.  So
 * with ringmax[q] the slowest hop of ring q known so far, pipe plus the
 * largest sum over a unit's rings of 2 (G - 1) ringmax[q] is a lower
 * bound on T that only grows.
 */
struct sync_watch {
	double cut, pipe, scale;	/* scale: 2 (G - 1) */
	const struct dl_plan *p;
	const int *base;
	double *ringmax;	/* per ring */
	double *lb;		/* per unit, flattened in plan order */
	double top;		/* the largest lb */
};

/* Ring q has a hop of t: whether the plan can no longer beat the cut. */
static int
watch_hop(struct sync_watch *w, int q, double t)
{
	const struct dl_ring *r = &w->p->rings[q];
	double d;

	if (!(t > w->ringmax[q]))
		return 0;
	d = w->scale * (t - w->ringmax[q]);
	w->ringmax[q] = t;
	for (int i = 0; i < r->nmembers; i++) {
		double *v = &w->lb[w->base[r->group[i]] + r->stage[i]];

		*v += d;
		if (*v > w->top)
			w->top = *v;
	}
	/* Rounding must never make the bound pass the true value. */
	return w->cut > 0 && w->pipe + w->top * (1 - 1e-9) > w->cut;
}

/*
 * Route the flows p->flows[from..to-1] (one phase) on an idle network:
 * intra-node flows are priced by intra_gbps, the others routed largest
 * first, each seeing the flows routed before it.  A flow of 0 bytes (a
 * boundary after a layer with act_mb 0, a segment without parameters)
 * moves nothing: it costs 0 and is not routed (its path is empty).  With
 * a watch (the sync phase) *over is set, and the routing stops, once the
 * watch says the plan cannot win.
 */
static int
route_phase(const struct dl_costctx *x, struct dl_plan *p, size_t from,
    size_t to, struct sync_watch *w, int *over, struct dl_err *e)
{
	int *idx = xcalloc(to - from + 1, sizeof(int));
	size_t n = 0;
	int rc = DL_OK;

	for (size_t i = from; i < to; i++) {
		struct dl_flow *f = &p->flows[i];

		f->intra = f->src == f->dst;
		if (!(f->bytes > 0))
			continue;
		if (f->intra) {
			f->expected_s = cost_intra(x, f->src, f->bytes);
			f->npath = 1;
			f->path = xcalloc(1, sizeof(int));
			f->path[0] = f->src;
			if (w != NULL && watch_hop(w, f->a, f->expected_s)) {
				*over = 1;
				break;
			}
			continue;
		}
		idx[n++] = (int)i;
	}
	if (w != NULL && *over) {
		free(idx);
		return DL_OK;
	}
	if (n > 0 && x->router == NULL) {
		free(idx);
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "plan has transfers "
		    "between nodes but no router was set up");
	}
	/* Largest flow first, ties in plan order. */
	if (n > 0)
		sort_desc(idx, n, &p->flows[0].bytes, sizeof(*p->flows));
	if (n > 0)
		router_reset(x->router);
	for (size_t k = 0; k < n && rc == DL_OK; k++) {
		struct dl_flow *f = &p->flows[idx[k]];
		struct dl_route rt;

		memset(&rt, 0, sizeof(rt));
		rc = router_flow(x->router, f->src, f->dst, f->bytes, 1, &rt, e);
		if (rc != DL_OK)
			break;
		f->order = (int)k;
		f->expected_s = rt.expected_s;
		f->regime = rt.regime;
		f->npath = rt.npath;
		f->path = xcalloc(rt.npath ? rt.npath : 1, sizeof(int));
		memcpy(f->path, rt.path, rt.npath * sizeof(int));
		f->nregimes = rt.nregimes;
		f->policy_first = xcalloc(rt.nregimes + 1, sizeof(int));
		f->regime_s = xcalloc(rt.nregimes + 1, sizeof(double));
		if (rt.nregimes > 0) {
			memcpy(f->policy_first, rt.first_hop,
			    rt.nregimes * sizeof(int));
			memcpy(f->regime_s, rt.regime_s,
			    rt.nregimes * sizeof(double));
		}
		route_clear(&rt);
		if (w != NULL && watch_hop(w, f->a, f->expected_s)) {
			*over = 1;
			break;
		}
	}
	free(idx);
	return rc;
}

/*
 * The price of a ring hop (struct ring_spec) of bytes from node a to node
 * b: the intra-node time when they are the same node, else the unloaded
 * tau (the router has no flow of the sync phase yet).
 */
static int
ring_price(void *ctx, int a, int b, double bytes, double *t,
    struct dl_err *e)
{
	const struct dl_costctx *x = ctx;

	if (a == b) {
		*t = cost_intra(x, a, bytes);
		return DL_OK;
	}
	if (x->router == NULL)
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "plan has transfers "
		    "between nodes but no router was set up");
	return router_price(x->router, a, b, bytes, t, e);
}

/*
 * A lower bound on the slowest hop of a ring of the n members on node[]
 * with hops of bytes, from the site bounds alone: a ring whose members
 * sit in two or more sites leaves each of those sites at least once, so
 * for every such site it has a hop at least the site bound to the
 * nearest other one.  0 inside one site.
 */
static double
ring_site_bound(const struct dl_costctx *x, struct dl_sitebound *sb, int n,
    const int *node, double bytes, unsigned char *seen, int *sites)
{
	size_t ns = x->c->nsites;
	int nsite = 0;
	double lb = 0;

	for (int i = 0; i < n; i++) {
		int si = x->c->nodes[node[i]].site_idx;

		if (!seen[si]) {
			seen[si] = 1;
			sites[nsite++] = si;
		}
	}
	for (int i = 0; i < nsite; i++)
		seen[sites[i]] = 0;
	if (nsite < 2 || !(bytes > 0))
		return 0;
	cost_sitebound_init(sb, x->c);
	for (int i = 0; i < nsite; i++) {
		double h = HUGE_VAL;

		for (int j = 0; j < nsite; j++)
			if (j != i)
				h = fmin(h, cost_site_hop(sb, ns,
				    (size_t)sites[i], (size_t)sites[j], bytes));
		if (h < HUGE_VAL)
			lb = fmax(lb, h);
	}
	return lb;
}

/*
 * Whether plan p's sync gathers the updated weights after the step besides
 * its all-reduce: DeepSpeed's BF16_Optimizer (cost_ds_bf16opt()) on a
 * plan that trains in bf16, whose gather moves G - 1 more hops of the
 * same bytes (bf16_optimizer.py:454-464 at 0.19.6).  It updates only its
 * shard of the parameters, too.
 */
static int
ds_gathers(const struct dl_costctx *x, const struct dl_plan *p)
{
	return p->ngroups > 0 && cost_ds_bf16opt(x->o,
	    p->groups[0].nstages) && plan_precision(p, x->c) == PREC_BF16;
}

/*
 * The sync phase: segments, rings and their flows, R_q, and T_sync.
 * acc[] (one slot per stage, flattened in plan order) receives the sync
 * time of every unit.  With cut > 0 (the best T so far) it stops, with
 * *over set and acc[] incomplete, as soon as the watch (struct
 * sync_watch) proves that the plan, whose pipeline takes pipe, cannot
 * beat it: first from every ring's site bound (with x->sites), then from
 * each ring's priced order, then from each routed hop.
 */
static int
eval_sync(const struct dl_costctx *x, struct dl_plan *p, size_t *cap,
    const int *base, double *acc, double cut, double pipe, int *over,
    struct dl_err *e)
{
	int G = p->ngroups, L = (int)x->m->nlayers;
	char *cutl = xcalloc(L + 1, 1);
	int *order = xcalloc(G, sizeof(int));
	int *node = xcalloc(G, sizeof(int));
	int *pos = xcalloc(G, sizeof(int)), nseg = 0, rc = DL_OK, *qord;
	size_t from = p->nflows;
	struct sync_watch w = { cut, pipe, 2.0 * (G - 1) * x->sync_floor, p,
	    base, NULL, NULL, 0 };
	/* A ring all-reduce's hops, and the gather's after it, if any. */
	double hops = (ds_gathers(x, p) ? 3.0 : 2.0) * (G - 1);
	unsigned char *seen = NULL;
	int *sites = NULL;

	/* Cut after the last layer of every stage but a group's last. */
	for (int g = 0; g < G; g++)
		for (int s = 0; s + 1 < p->groups[g].nstages; s++)
			cutl[p->groups[g].stages[s].last] = 1;
	for (int l = 0; l < L; l++)
		nseg += cutl[l] || l == L - 1;
	p->rings = xcalloc(nseg, sizeof(*p->rings));
	p->nrings = nseg;
	qord = xcalloc(nseg, sizeof(int));
	w.ringmax = xcalloc(nseg, sizeof(double));
	w.lb = xcalloc((size_t)base[G] + 1, sizeof(double));
	if (cut > 0 && x->sites != NULL && x->c->nsites > 1) {
		seen = xcalloc(x->c->nsites, 1);
		sites = xcalloc(x->c->nsites, sizeof(int));
	}
	/* The segments and the stage of each group that holds each. */
	for (int q = 0, first = 0; q < nseg; q++) {
		struct dl_ring *r = &p->rings[q];
		int last = first;

		while (!cutl[last] && last < L - 1)
			last++;
		r->first = first;
		r->last = last;
		r->params = cost_range_params(x, first, last);
		r->nmembers = G;
		r->hop_bytes = r->params * x->o->grad_bytes / G;
		r->group = xcalloc(G, sizeof(int));
		r->stage = xcalloc(G, sizeof(int));
		for (int g = 0; g < G; g++) {
			while (p->groups[g].stages[pos[g]].last < first)
				pos[g]++;
			r->group[g] = g;
			r->stage[g] = pos[g];
			node[g] = p->groups[g].stages[pos[g]].node;
		}
		if (seen != NULL && !*over && watch_hop(&w, q,
		    ring_site_bound(x, x->sites, G, node, r->hop_bytes, seen,
		    sites)))
			*over = 1;
		first = last + 1;
	}
	/*
	 * Each ring's order, the largest hops first (their slowest hops
	 * tend to be the slowest, so that a plan over the cut stops after
	 * fewer rings), and then every ring's hops as flows, in segment
	 * order (route_phase() breaks ties in bytes by that order).
	 */
	for (int q = 0; q < nseg; q++)
		qord[q] = q;
	sort_desc(qord, (size_t)nseg, &p->rings[0].hop_bytes,
	    sizeof(*p->rings));
	for (int k = 0; k < nseg && !*over && rc == DL_OK; k++) {
		int q = qord[k];
		struct dl_ring *r = &p->rings[q];
		struct ring_spec rs = { x->c, G, node, r->hop_bytes,
		    ring_price, (void *)x, x->rings };
		double slowest = 0;

		/* Until it is ordered, r->stage[g] is group g's holder. */
		memcpy(pos, r->stage, (size_t)G * sizeof(int));
		for (int g = 0; g < G; g++)
			node[g] = p->groups[g].stages[pos[g]].node;
		if (x->router)
			router_reset(x->router);
		rc = ring_order(&rs, order, &slowest, e);
		for (int i = 0; i < G; i++) {
			r->group[i] = rc == DL_OK ? order[i] : i;
			r->stage[i] = pos[r->group[i]];
		}
		/* Routed, no hop costs less than it did priced alone. */
		if (rc == DL_OK && watch_hop(&w, q, slowest))
			*over = 1;
	}
	for (int q = 0; q < nseg && !*over && rc == DL_OK; q++) {
		struct dl_ring *r = &p->rings[q];

		for (int h = 0; h < G; h++) {
			int ga = r->group[h], gb = r->group[(h + 1) % G];

			add_flow(p, cap, DL_PHASE_SYNC, q, h, 0,
			    p->groups[ga].stages[r->stage[h]].node,
			    p->groups[gb].stages[r->stage[(h + 1) % G]].node,
			    r->hop_bytes);
		}
	}
	if (rc == DL_OK && !*over)
		rc = route_phase(x, p, from, p->nflows, &w, over, e);
	for (size_t i = from; i < p->nflows && rc == DL_OK; i++) {
		struct dl_flow *f = &p->flows[i];
		struct dl_ring *r = &p->rings[f->a];

		if (f->b == 0 || f->expected_s > r->time_s)
			r->time_s = f->expected_s;
	}
	for (int q = 0; q < nseg && rc == DL_OK && !*over; q++) {
		struct dl_ring *r = &p->rings[q];

		r->time_s = hops * r->time_s;
		for (int i = 0; i < G; i++)
			acc[base[r->group[i]] + r->stage[i]] += r->time_s;
	}
	free(cutl);
	free(w.ringmax);
	free(w.lb);
	free(seen);
	free(sites);
	free(qord);
	free(order);
	free(node);
	free(pos);
	return rc;
}

/*
 * A lower bound on T_sync of plan p (cost model): every segment's ring at
 * its site bound (ring_site_bound()), summed per unit as T_sync sums
 * R_q; rings inside one site are bounded by 0.
 */
double
cost_sync_bound(const struct dl_costctx *x, struct dl_sitebound *sb,
    const struct dl_plan *p)
{
	size_t ns = x->c->nsites;
	int G = p->ngroups, L = (int)x->m->nlayers, nst = 0;
	int *pos, *base, *sites, *node;
	unsigned char *seen;
	double *acc, worst = 0;

	if (G < 2 || ns < 2 || x->sync_floor == 0)
		return 0;
	pos = xcalloc((size_t)G, sizeof(int));
	base = xcalloc((size_t)G, sizeof(int));
	node = xcalloc((size_t)G, sizeof(int));
	for (int g = 0; g < G; g++) {
		base[g] = nst;
		nst += p->groups[g].nstages;
	}
	acc = xcalloc((size_t)nst, sizeof(double));
	sites = xcalloc(ns, sizeof(int));
	seen = xcalloc(ns, 1);
	for (int first = 0; first < L;) {
		int last = L - 1;
		double hb, bytes;

		/* The segment ends at the first stage end at or after first. */
		for (int g = 0; g < G; g++) {
			const struct dl_group *gr = &p->groups[g];

			while (gr->stages[pos[g]].last < first)
				pos[g]++;
			if (pos[g] + 1 < gr->nstages &&
			    gr->stages[pos[g]].last < last)
				last = gr->stages[pos[g]].last;
			node[g] = gr->stages[pos[g]].node;
		}
		bytes = cost_range_params(x, first, last) *
		    x->o->grad_bytes / G;
		hb = ring_site_bound(x, sb, G, node, bytes, seen, sites);
		for (int g = 0; g < G && hb > 0; g++)
			acc[base[g] + pos[g]] += 2.0 * (G - 1) * hb;
		first = last + 1;
	}
	for (int i = 0; i < nst; i++)
		worst = fmax(worst, acc[i]);
	free(pos);
	free(base);
	free(node);
	free(acc);
	free(sites);
	free(seen);
	/* Rounding must never make the bound pass the true value. */
	return worst * (1 - 1e-9);
}

/*
 * Memory rows of the cost model: fill mem_bytes of every stage and report the
 * first GPU (plan order) that does not fit.
 */
static int
eval_memory(const struct dl_costctx *x, struct dl_plan *p, struct dl_err *e)
{
	int over = 0, rc = DL_OK;

	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *gr = &p->groups[g];

		for (int s = 0; s < gr->nstages; s++) {
			struct dl_stage *st = &gr->stages[s];
			double cap = cost_gpu_capacity(x, st->node);

			st->mem_bytes = 0;
			for (int d = 0; d < st->ngpus; d++) {
				double need = cost_stage_memory_vp(x,
				    st->first, st->last, st->tp_share[d],
				    s + 1, gr->nstages, gr->micro_batches,
				    cost_stage_rc(x, st), p->ngroups,
				    PLAN_VSTAGES(gr));

				if (need > st->mem_bytes)
					st->mem_bytes = need;
				if (!(need > cap))
					continue;
				if (over++ == 0)
					rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0,
					    "memory does not fit on GPU %d of "
					    "node '%s' (groups[%d].stages[%d]): "
					    "needs %.4g GB, %.4g GB available; "
					    "over by %.4g GB (%.0f bytes)",
					    st->gpus[d],
					    x->c->nodes[st->node].id, g, s,
					    need / 1e9, cap / 1e9,
					    (need - cap) / 1e9,
					    ceil(need - cap));
			}
		}
	}
	if (over > 1) {
		size_t n = strlen(e->msg);

		snprintf(e->msg + n, sizeof(e->msg) - n, " (and %d more GPU%s)",
		    over - 1, over - 1 > 1 ? "s" : "");
	}
	return rc;
}

void
cost_pipe_inputs(const struct dl_costctx *x, const struct dl_plan *p,
    const int *base, double *f, double *b, double *xf, double *xb)
{
	memset(xf, 0, (size_t)base[p->ngroups] * sizeof(double));
	memset(xb, 0, (size_t)base[p->ngroups] * sizeof(double));
	for (size_t i = 0; i < p->nflows; i++) {
		const struct dl_flow *fl = &p->flows[i];

		if (fl->phase != DL_PHASE_PIPE)
			continue;
		(fl->dir == 0 ? xf : xb)[base[fl->a] + fl->b] = fl->expected_s;
	}
	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];

		for (int s = 0; s < gr->nstages; s++) {
			const struct dl_stage *st = &gr->stages[s];
			int o = base[g] + s;

			double share;

			cost_stage_flops_rc(x, st->first, st->last,
			    cost_stage_rc(x, st), &share);
			f[o] = st->compute_s * share;
			b[o] = st->compute_s - f[o];
		}
	}
}

/*
 * Every group's T_g and steady period from its 1F1B inputs (in: f, b, xf
 * and xb of cost_pipe_inputs(), n stages each), or from its interleaved
 * ones (vp[g].v > 1: pipe_vmakespan(), transfers under compute, and as
 * its period the busiest rank's compute per micro-batch).  base[g] is
 * the index of g's first stage.
 */
static void
pipe_times(struct dl_plan *p, const int *base, const double *in,
    struct cost_vp *vp)
{
	int n = base[p->ngroups];
	const double *f = in, *b = in + n, *xf = in + 2 * n, *xb = in + 3 * n;

	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *gr = &p->groups[g];
		struct cost_vp *w = &vp[g];
		int o = base[g];

		if (w->v > 1) {
			gr->time_s = pipe_vmakespan(gr->nstages, w->v,
			    gr->micro_batches, w->f, w->b, w->xf, w->xb, 0,
			    w->bend);
			gr->period_s = pipe_vlane(gr->nstages, w->v, w->f,
			    w->b);
			continue;
		}
		gr->time_s = pipe_makespan(gr->nstages, gr->micro_batches,
		    f + o, b + o, xf + o, xb + o, NULL, NULL);
		gr->period_s = pipe_period(gr->nstages, f + o, b + o, xf + o,
		    xb + o);
	}
}

/* The largest of the groups' lower bounds on their makespans
 * (pipe_lower(); m pipe_vlane() for an interleaved group), from the
 * inputs pipe_times() takes. */
static double
pipe_bound(const struct dl_plan *p, const int *base, const double *in,
    const struct cost_vp *vp)
{
	int n = base[p->ngroups];
	const double *f = in, *b = in + n, *xf = in + 2 * n, *xb = in + 3 * n;
	double lb = 0;

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		int o = base[g];

		if (vp[g].v > 1)
			lb = fmax(lb, (double)gr->micro_batches *
			    pipe_vlane(gr->nstages, vp[g].v, vp[g].f,
			    vp[g].b));
		else
			lb = fmax(lb, pipe_lower(gr->nstages,
			    gr->micro_batches, f + o, b + o, xf + o, xb + o));
	}
	/* Rounding must never make the bound pass the makespan. */
	return lb * (1 - 1e-9);
}

/*
 * T with the data-parallel sync under compute (dlplan(1) ALGORITHMS,
 * Overlap).  Unit i of group g (stage s) holds acc[i] of sync.  Its
 * gradients are reduced bucket by bucket while its last micro-batch's
 * backward b_s runs: all but the last bucket hide there, so the sync
 * ends max(R / n_b, R - b_s) after that backward, which itself ends
 * T_g - sum_{j<s} (b_j + xb_j) (the gradient's way back to stage 0 in
 * the cool-down; never earlier in the real schedule).  With a sharded
 * optimizer half of acc[i] is that reduce-scatter and the other half
 * the all-gather of the updated parameters, which hides the same way
 * under the first forward of the next iteration, less the fill before
 * stage s starts; what does not hide there delays T.
 */
static double
overlapped_time(const struct dl_costctx *x, const struct dl_plan *p,
    const int *base, const double *in, const double *acc,
    const struct cost_vp *vp)
{
	int n = base[p->ngroups];
	const double *f = in, *b = in + n, *xf = in + 2 * n, *xb = in + 3 * n;
	double T = 0, delay = 0, half = x->o->optimizer == OPTIM_SHARDED ?
	    0.5 : 1;
	double bucket = fmax(40e6, 1e6 * (double)p->ngroups);

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		double cool = 0, fill = 0;

		T = fmax(T, gr->time_s);
		for (int s = 0; s < gr->nstages; s++) {
			const struct dl_stage *st = &gr->stages[s];
			int i = base[g] + s;
			double nb = ceil(cost_range_params(x, st->first,
			    st->last) / st->ngpus / bucket);
			double rs = half * acc[i], ag = acc[i] - rs;

			if (nb < 1)
				nb = 1;
			if (vp[g].v > 1) {
				T = fmax(T, cost_vp_reduced(&vp[g], gr->nstages, s,
				    rs, nb));
				if (ag > 0)
					delay = fmax(delay, cost_vp_gathered(&vp[g],
					    gr->nstages, s, ag, nb));
				continue;
			}
			T = fmax(T, gr->time_s - cool + fmax(rs / nb,
			    rs - b[i]));
			if (ag > 0)
				delay = fmax(delay, fmax(ag / nb, ag - f[i]) -
				    fill);
			cool += b[i] + xb[i];
			fill += f[i] + xf[i];
		}
	}
	return T + delay;
}

/*
 * The optimizer step of the GPU whose share of the parameters is largest
 * against its memory bandwidth: Adam reads and writes its state
 * (optimizer_bytes) and touches the weights and gradients once each,
 * memory-bound (dlplan(1) ALGORITHMS, Overlap).  0 on GPUs with no memory
 * bandwidth known.
 */
static double
optimizer_time(const struct dl_costctx *x, const struct dl_plan *p)
{
	double bytes = 2 * x->obytes + x->wbytes;
	double worst = 0, shards = (x->o->optimizer == OPTIM_SHARDED ||
	    ds_gathers(x, p)) && p->ngroups > 0 ? (double)p->ngroups : 1;

	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++) {
			const struct dl_stage *st = &p->groups[g].stages[s];
			double bw = x->membw[st->node] *
			    (1 - x->uhat[st->node]);

			if (bw > 0)
				worst = fmax(worst, cost_range_params(x,
				    st->first, st->last) / st->ngpus / shards *
				    bytes / bw);
		}
	return worst;
}

int
cost_eval(const struct dl_costctx *x, struct dl_plan *p, struct dl_err *e)
{
	int over;

	return cost_eval_below(x, p, 0, &over, e);
}

int
cost_eval_below(const struct dl_costctx *x, struct dl_plan *p, double cut,
    int *over, struct dl_err *e)
{
	struct dl_estimate *est = &p->est;
	size_t cap = 0;
	int *base = xcalloc(p->ngroups + 1, sizeof(int)), rc = DL_OK, n;
	double *acc, *in, mu = (double)x->o->micro_batch;
	struct cost_vp *vp = xcalloc((size_t)p->ngroups + 1, sizeof(*vp));

	plan_clear_results(p);
	for (int g = 0; g < p->ngroups; g++)
		base[g + 1] = base[g] + p->groups[g].nstages;
	n = base[p->ngroups];
	acc = xcalloc(n + 1, sizeof(double));
	in = xcalloc(4 * (size_t)n + 1, sizeof(double));

	rc = cost_vp_init(x, p, vp, e);
	if (rc != DL_OK)
		goto out;

	/*
	 * Stage compute, and the pipeline phase: S bytes each way.  An
	 * interleaved stage's compute is its chunks', and its last stage
	 * sends to its first (the bytes of its first chunk's boundary).
	 */
	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *gr = &p->groups[g];
		struct cost_vp *w = &vp[g];

		for (int s = 0; s < gr->nstages; s++) {
			struct dl_stage *st = &gr->stages[s];
			int last = w->v > 1 ? w->cl[s] : st->last;

			st->compute_s = cost_vp_stage_time(x, gr, w, s);
			st->p2p_s = 0;
			if (s + 1 == gr->nstages && w->v == 1)
				continue;
			double S = mu * x->m->layers[last].act_mb * 1e6;
			int a = st->node, b = gr->stages[(s + 1) %
			    gr->nstages].node;

			add_flow(p, &cap, DL_PHASE_PIPE, g, s, 0, a, b, S);
			add_flow(p, &cap, DL_PHASE_PIPE, g, s, 1, b, a, S);
		}
	}
	rc = route_phase(x, p, 0, p->nflows, NULL, NULL, e);
	for (size_t i = 0; i < p->nflows && rc == DL_OK; i++) {
		struct dl_flow *f = &p->flows[i];

		p->groups[f->a].stages[f->b].p2p_s += f->expected_s;
	}
	if (rc == DL_OK) {
		cost_pipe_inputs(x, p, base, in, in + n, in + 2 * n,
		    in + 3 * n);
		for (int g = 0; g < p->ngroups; g++)
			if (vp[g].v > 1)
				cost_vp_transfers(p, g, base, in, &vp[g]);
	}

	/*
	 * With a cut, the sync goes first, against the pipelines' lower
	 * bounds (pipe_lower(), O(S) a group where its makespan is
	 * O(S m)): most plans a search scores stop there.
	 */
	*over = 0;
	est->sync_s = 0;
	if (rc == DL_OK && cut > 0) {
		double pl = pipe_bound(p, base, in, vp);

		if (pl > cut)
			*over = 1;
		else if (p->ngroups > 1 && x->ovl == OVL_NONE)
			rc = eval_sync(x, p, &cap, base, acc, cut, pl, over, e);
		if (rc != DL_OK || *over)
			goto out;
	}

	/*
	 * T_g: the makespan of group g's 1F1B schedule with the transfers
	 * on the receiving lane (pipesched.h).
	 */
	est->slowest_group = 0;
	if (rc == DL_OK)
		pipe_times(p, base, in, vp);
	for (int g = 0; g < p->ngroups && rc == DL_OK; g++) {
		struct dl_group *gr = &p->groups[g];
		double ct = 0, cc = 0;

		for (int s = 0; s < gr->nstages; s++) {
			ct += gr->stages[s].compute_s;
			cc += gr->stages[s].p2p_s;
		}
		if (g == 0 || gr->time_s > est->pipeline_s) {
			est->pipeline_s = gr->time_s;
			est->slowest_group = g;
			est->compute_s = ct;
			est->p2p_s = cc;
			est->steady_s = gr->micro_batches >= 1 ?
			    gr->time_s - ct - cc : 0;
			est->period_s = gr->period_s;
		}
	}
	if (rc == DL_OK && cut > 0 && est->pipeline_s > cut) {
		*over = 1;
		goto out;
	}

	/* Data-parallel sync, one ring per segment (unless priced above). */
	if (rc == DL_OK && (cut <= 0 || x->ovl != OVL_NONE) &&
	    p->ngroups > 1)
		rc = eval_sync(x, p, &cap, base, acc, 0, 0, over, e);
	if (rc != DL_OK)
		goto out;
	if (x->ovl == OVL_NONE) {
		for (int i = 0; i < n; i++)
			if (acc[i] > est->sync_s)
				est->sync_s = acc[i];
		est->iteration_s = est->pipeline_s + est->sync_s;
	} else {
		est->iteration_s = overlapped_time(x, p, base, in, acc, vp);
		est->sync_s = est->iteration_s - est->pipeline_s;
	}
	est->optimizer_s = optimizer_time(x, p);
	est->iteration_s += est->optimizer_s;
	est->lower_bound_s = cost_lower_bound(x);
	est->efficiency = est->lower_bound_s / est->iteration_s;
	est->throughput = (double)x->o->global_batch / est->iteration_s;
	rc = eval_memory(x, p, e);
	est->feasible = rc == DL_OK;
out:
	free(base);
	free(acc);
	free(in);
	cost_vp_free(vp, p->ngroups);
	return rc;
}

/* The GPUs of p in rank order, each as its own replica (see cost.h). */
int
cost_baseline(const struct dl_costctx *x, const struct dl_plan *p, int kind,
    struct dl_plan *out, struct dl_err *e)
{
	struct dl_rank *rk = plan_rank_table(p);
	long n = plan_ranks(p), M = x->o->global_batch / x->o->micro_batch;
	long *mb = xcalloc(n + 1, sizeof(long)), given = 0;
	double total = 0, *frac = xcalloc(n + 1, sizeof(double));
	int G = 0;

	for (long i = 0; i < n; i++)
		total += x->speed[rk[i].node];
	for (long i = 0; i < n; i++) {
		if (kind == COST_EVEN) {
			mb[i] = M / n + (i < M % n);
			continue;
		}
		double q = M * x->speed[rk[i].node] / total;

		mb[i] = (long)floor(q);
		frac[i] = q - mb[i];
		given += mb[i];
	}
	/* Largest remainder, ties to the lower rank. */
	while (kind == COST_PROPORTIONAL && given < M) {
		long best = -1;

		for (long i = 0; i < n; i++)
			if (frac[i] >= 0 && (best < 0 || frac[i] > frac[best]))
				best = i;
		if (best < 0)
			break;
		mb[best]++;
		frac[best] = -1;
		given++;
	}
	plan_init(out);
	out->opts = p->opts;
	out->status = PLAN_GIVEN;
	out->groups = xcalloc(n + 1, sizeof(*out->groups));
	for (long i = 0; i < n; i++) {
		struct dl_group *gr;
		struct dl_stage *st;

		if (mb[i] < 1)
			continue;
		gr = &out->groups[G++];
		gr->micro_batches = mb[i];
		gr->nstages = 1;
		gr->stages = st = xcalloc(1, sizeof(*st));
		st->node = rk[i].node;
		st->ngpus = 1;
		st->gpus[0] = rk[i].gpu;
		st->tp_share[0] = 1;
		st->first = 0;
		st->last = (int)x->m->nlayers - 1;
	}
	out->ngroups = G;
	free(rk);
	free(mb);
	free(frac);
	return cost_eval(x, out, e);
}

int
cost_baselines(const struct dl_costctx *x, struct dl_plan *p,
    struct dl_err *e)
{
	for (int kind = COST_EVEN; kind <= COST_PROPORTIONAL; kind++) {
		struct dl_plan b;
		int rc = cost_baseline(x, p, kind, &b, e);

		if (rc != DL_OK && b.est.iteration_s == 0) {
			plan_free(&b);
			return rc;
		}
		if (kind == COST_EVEN) {
			p->even_s = b.est.iteration_s;
			p->even_fits = rc == DL_OK;
		} else {
			p->proportional_s = b.est.iteration_s;
			p->proportional_fits = rc == DL_OK;
		}
		plan_free(&b);
	}
	return DL_OK;
}
