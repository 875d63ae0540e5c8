/*
 * sched_mp.c - jobs whose one replica fits on no GPU: the planner's
 * pipeline and tensor-parallel plan on the GPUs a job is given, its
 * iteration time, and the least GPUs on which any plan fits (sched_int.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * An allocation (GPUs per node) is searched as a cluster of its own: the
 * sub-cluster of its nodes (cluster_sub(), so every route stays that
 * of the whole cluster) with each node cut down to the GPUs the job holds
 * there, at the whole cluster's forecast loads.  The search's plan is then
 * priced again by cost_eval() on the whole cluster; that T is the job's
 * iteration time and the one "dlplan eval" reports for the job's plan file.
 *
 * The cost of the search is paid once per allocation shape, not per node
 * set.  Two nodes are alike when the cost model sees the same node: the
 * same site, GPU speed (TFLOPS, MFU, forecast load), memory, and intra-node
 * and NIC bandwidths.  The shape of an allocation is its nodes' kinds with
 * the GPUs held on each, sorted; the plan searched for the first
 * allocation of a shape is reused for every later one, its stages moved to
 * the node of the same rank in the sorted order.  This is the
 * approximation: on a cluster whose links.csv joins alike nodes by
 * different links, the reused plan keeps the stage order and layer split
 * found for the first node set, which may not be the one a search of the
 * second would choose.  Its T is never approximated: every exact
 * allocation is priced by cost_eval() (and memoised by sched_iter_time()).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "sb.h"
#include "sched_int.h"
#include "search.h"

/* The searched plan of one shape; its stage nodes are ranks. */
struct shape {
	int rc;			/* DL_OK, or why no plan fits */
	struct dl_err err;
	struct dl_plan p;
};

void
sched_mp_shape_free(void *v)
{
	struct shape *h = v;

	plan_free(&h->p);
	free(h);
}

/* Node kinds (see above): kind[v] is the first node alike to v. */
static void
make_kinds(struct sched *s)
{
	const struct dl_cluster *c = s->c;

	s->kind = xcalloc(c->nnodes + 1, sizeof(int));
	for (size_t v = 0; v < c->nnodes; v++) {
		const struct dl_node *a = &c->nodes[v];

		s->kind[v] = (int)v;
		for (size_t u = 0; u < v; u++) {
			const struct dl_node *b = &c->nodes[u];

			if (a->site_idx == b->site_idx &&
			    a->tflops == b->tflops && a->mfu == b->mfu &&
			    a->mem_gb == b->mem_gb &&
			    cost_node_membw(a) == cost_node_membw(b) &&
			    a->intra_gbps == b->intra_gbps &&
			    a->nic_gbps == b->nic_gbps &&
			    s->uhat[u] == s->uhat[v]) {
				s->kind[v] = (int)u;
				break;
			}
		}
	}
}

/* The nodes of cnt (cnt > 0) into rank[] by kind, GPUs held, index. */
static int
ranks(struct sched *s, const int *cnt, int *rank)
{
	int n = 0;

	if (s->kind == NULL)
		make_kinds(s);
	for (size_t v = 0; v < s->c->nnodes; v++) {
		int i;

		if (cnt[v] <= 0)
			continue;
		for (i = n; i > 0; i--) {
			int u = rank[i - 1];

			if (s->kind[u] < s->kind[v] || (s->kind[u] ==
			    s->kind[v] && cnt[u] <= cnt[v]))
				break;
			rank[i] = u;
		}
		rank[i] = (int)v;
		n++;
	}
	return n;
}

/* Search the allocation cnt (nodes rank[0..n)) on its sub-cluster. */
static void
search_shape(struct sched *s, const struct sched_class *k, const int *cnt,
    const int *rank, int n, struct shape *h)
{
	const struct dl_cluster *c = s->c;
	struct dl_route_opts ro = { k->opts.states, k->opts.horizon,
	    k->opts.forecast };
	struct search_opts so;
	struct search_stats ss;
	struct dl_cluster sub;
	struct dl_router *rs = NULL;
	struct dl_costctx xs;
	struct dl_plan ps;
	unsigned char *keep = xcalloc(c->nnodes + 1, 1);
	int *vmap = xcalloc(c->nverts + 1, sizeof(int));
	int *pos = xcalloc(c->nnodes + 1, sizeof(int));
	double *us = xcalloc((size_t)n + 1, sizeof(double));

	for (int i = 0; i < n; i++) {
		keep[rank[i]] = 1;
		pos[rank[i]] = i;
	}
	cluster_sub(&sub, c, keep, vmap);
	for (int i = 0; i < n; i++) {
		sub.nodes[i].gpus = cnt[vmap[i]];
		us[i] = s->uhat[vmap[i]];
	}
	memset(&so, 0, sizeof(so));
	so.strategy = STRAT_AUTO;
	so.exact = -1;
	so.time_limit = k->opts.time_limit;
	so.jobs = 1;
	so.runtime = RUNTIME_DLPLAN;
	plan_init(&ps);
	h->rc = router_new(&rs, &sub, &ro, &h->err);
	if (h->rc == DL_OK) {
		h->rc = cost_init(&xs, &sub, k->x.m, &k->opts, us, rs, &h->err);
		if (h->rc == DL_OK) {
			plan_free(&ps);
			h->rc = search_plan(&xs, &so, &ps, &ss, &h->err);
			cost_free(&xs);
			s->searches++;
		}
	}
	plan_init(&h->p);
	if (h->rc == DL_OK) {
		/* The recomputation mode the search settled on (RC_FULL or
		 * not): the plan is priced and written with it. */
		h->p.opts.recompute = ps.opts.recompute;
		h->p.ngroups = ps.ngroups;
		h->p.groups = xcalloc((size_t)ps.ngroups + 1,
		    sizeof(*h->p.groups));
		for (int g = 0; g < ps.ngroups; g++) {
			struct dl_group *d = &h->p.groups[g];

			d->micro_batches = ps.groups[g].micro_batches;
			d->nstages = ps.groups[g].nstages;
			d->stages = xcalloc((size_t)d->nstages,
			    sizeof(*d->stages));
			for (int j = 0; j < d->nstages; j++) {
				d->stages[j] = ps.groups[g].stages[j];
				d->stages[j].node =
				    pos[vmap[d->stages[j].node]];
			}
		}
	}
	plan_free(&ps);
	router_free(rs);
	cluster_free(&sub);
	free(keep);
	free(vmap);
	free(pos);
	free(us);
}

/* The plan of cnt's shape, searched on first use. */
static const struct shape *
find_shape(struct sched *s, int cls, const int *cnt, const int *rank, int n)
{
	struct strbuf key = STRBUF_INIT;
	struct shape *h;

	sb_add(&key, (const char *)&cls, sizeof(int));
	for (int i = 0; i < n; i++) {
		int pair[2] = { s->kind[rank[i]], cnt[rank[i]] };

		sb_add(&key, (const char *)pair, sizeof(pair));
	}
	if ((h = kc_find(&s->shapes, key.buf, key.len)) == NULL) {
		h = xcalloc(1, sizeof(*h));
		search_shape(s, &s->classes[cls], cnt, rank, n, h);
		kc_put(&s->shapes, key.buf, key.len, h);
	}
	sb_free(&key);
	return h;
}

/*
 * The shape's plan on the nodes rank[], GPU i of a stage on node v being
 * gpu[v][i] (NULL: local index i), priced by cost_eval() on the whole
 * cluster; p is initialised here.
 */
static int
place_plan(struct sched *s, int cls, const struct shape *h, const int *rank,
    int *const *gpu, struct dl_plan *p, struct dl_err *e)
{
	struct sched_class *k = &s->classes[cls];
	const struct dl_costctx *x = &k->x;

	plan_init(p);
	p->opts = k->opts;
	if (h->p.opts.recompute == RC_FULL) {
		/* Priced as "dlplan eval" prices the plan it writes, with
		 * options.recompute "full". */
		if (!k->full_init) {
			struct dl_err ef;

			k->opts_full = k->opts;
			k->opts_full.recompute = RC_FULL;
			if (cost_init(&k->xfull, s->c, k->x.m, &k->opts_full,
			    s->uhat, s->router, &ef) != DL_OK)
				return dl_seterr(e, ef.code, NULL, 0, 0, "%s",
				    ef.msg);
			k->full_init = 1;
		}
		x = &k->xfull;
		p->opts.recompute = RC_FULL;
	}
	p->nnodes = s->c->nnodes;
	p->uhat = xmemdup(s->uhat, s->c->nnodes, sizeof(double));
	p->ngroups = h->p.ngroups;
	p->groups = xcalloc((size_t)p->ngroups + 1, sizeof(*p->groups));
	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *d = &p->groups[g];

		d->micro_batches = h->p.groups[g].micro_batches;
		d->nstages = h->p.groups[g].nstages;
		d->stages = xcalloc((size_t)d->nstages, sizeof(*d->stages));
		for (int j = 0; j < d->nstages; j++) {
			struct dl_stage *st = &d->stages[j];

			*st = h->p.groups[g].stages[j];
			st->node = rank[st->node];
			for (int i = 0; i < st->ngpus && gpu != NULL; i++)
				st->gpus[i] = gpu[st->node][st->gpus[i]];
		}
	}
	return cost_eval(x, p, e);
}

double
sched_mp_time(struct sched *s, int cls, const int *cnt)
{
	const struct shape *h;
	struct dl_plan p;
	struct dl_err e;
	int *rank = xcalloc(s->c->nnodes + 1, sizeof(int));
	int n = ranks(s, cnt, rank);
	double t = HUGE_VAL;

	h = n > 0 ? find_shape(s, cls, cnt, rank, n) : NULL;
	if (h != NULL && h->rc == DL_OK) {
		if (place_plan(s, cls, h, rank, NULL, &p, &e) == DL_OK)
			t = p.est.iteration_s;
		plan_free(&p);
	}
	free(rank);
	return t;
}

/* GPUs per node, the nodes with the most usable memory first (then the
 * most GPUs, then nodes.csv order), filled up to n GPUs. */
static void
fill_biggest(const struct sched *s, const int *order, long n, int *cnt)
{
	memset(cnt, 0, s->c->nnodes * sizeof(int));
	for (size_t i = 0; i < s->c->nnodes && n > 0; i++) {
		int v = order[i], g = s->c->nodes[v].gpus;

		cnt[v] = n < g ? (int)n : g;
		n -= cnt[v];
	}
}

static const struct sched_class *order_k;
static const struct dl_cluster *order_c;
static int
cmp_memory(const void *a, const void *b)
{
	int u = *(const int *)a, v = *(const int *)b;
	double mu = cost_gpu_capacity(&order_k->x, u);
	double mv = cost_gpu_capacity(&order_k->x, v);

	if (mu != mv)
		return mu > mv ? -1 : 1;
	if (order_c->nodes[u].gpus != order_c->nodes[v].gpus)
		return order_c->nodes[u].gpus > order_c->nodes[v].gpus ? -1 : 1;
	return (u > v) - (u < v);
}

int
sched_mp_setup(struct sched *s, int cls)
{
	struct sched_class *k = &s->classes[cls];
	const struct dl_cluster *c = s->c;
	int *order = xcalloc(c->nnodes + 1, sizeof(int));
	int *cnt = xcalloc(c->nnodes + 1, sizeof(int));
	int *rank = xcalloc(c->nnodes + 1, sizeof(int));
	struct strbuf why = STRBUF_INIT;

	for (size_t v = 0; v < c->nnodes; v++)
		order[v] = (int)v;
	order_k = k;
	order_c = c;
	qsort(order, c->nnodes, sizeof(int), cmp_memory);
	/*
	 * The least n on which the planner fits a plan (all GPUs first: when
	 * none fits there, none fits anywhere).  Each n is tried on one
	 * allocation, the nodes with the most memory filled first: on alike
	 * nodes the GPUs of one server can hold every structure that as many
	 * scattered GPUs can (a server's GPUs may be stages of one GPU each),
	 * while TP units need GPUs of one server.
	 */
	fill_biggest(s, order, s->ngpus, cnt);
	k->mp_min = 0;
	if (isfinite(sched_mp_time(s, cls, cnt))) {
		for (long n = 1; n <= s->ngpus && k->mp_min == 0; n++) {
			fill_biggest(s, order, n, cnt);
			if (isfinite(sched_mp_time(s, cls, cnt)))
				k->mp_min = (int)n;
		}
	} else {
		const struct shape *h = find_shape(s, cls, cnt, rank,
		    ranks(s, cnt, rank));

		sb_addf(&why, "one replica of %s (batch %ld) fits on no GPU, "
		    "and no pipeline or tensor-parallel plan fits on all %ld "
		    "GPUs: %s", s->models[k->model].name, k->opts.micro_batch,
		    s->ngpus, h->rc != DL_OK ? h->err.msg : "no route");
		k->mp_why = sb_detach(&why);
	}
	free(order);
	free(cnt);
	free(rank);
	return k->mp_min;
}

/*
 * The plan of shape h on the nodes rank[] moved to the GPUs it uses
 * (local indices renumbered densely, its nodes ranked as ranks() ranks
 * them into rank2[]): the plan of used's shape, so that a
 * job cut down to the GPUs its plan uses keeps that plan.
 */
static struct shape *
shape_used(struct sched *s, const struct shape *h, const int *rank,
    const int *rank2, int n2)
{
	size_t nn = s->c->nnodes;
	int *pos2 = xcalloc(nn + 1, sizeof(int)), maxg = 0;
	struct shape *u = xcalloc(1, sizeof(*u));
	char *mark;

	for (size_t v = 0; v < nn; v++)
		if (s->c->nodes[v].gpus > maxg)
			maxg = s->c->nodes[v].gpus;
	mark = xcalloc(nn * (size_t)maxg + 1, 1);
	for (int i = 0; i < n2; i++)
		pos2[rank2[i]] = i;
	for (int g = 0; g < h->p.ngroups; g++)
		for (int j = 0; j < h->p.groups[g].nstages; j++) {
			const struct dl_stage *st = &h->p.groups[g].stages[j];

			for (int i = 0; i < st->ngpus; i++)
				mark[(size_t)rank[st->node] * maxg +
				    st->gpus[i]] = 1;
		}
	plan_init(&u->p);
	u->rc = DL_OK;
	u->p.opts.recompute = h->p.opts.recompute;
	u->p.ngroups = h->p.ngroups;
	u->p.groups = xcalloc((size_t)h->p.ngroups + 1, sizeof(*u->p.groups));
	for (int g = 0; g < h->p.ngroups; g++) {
		struct dl_group *d = &u->p.groups[g];

		d->micro_batches = h->p.groups[g].micro_batches;
		d->nstages = h->p.groups[g].nstages;
		d->stages = xcalloc((size_t)d->nstages, sizeof(*d->stages));
		for (int j = 0; j < d->nstages; j++) {
			struct dl_stage *st = &d->stages[j];
			int v;

			*st = h->p.groups[g].stages[j];
			v = rank[st->node];
			st->node = pos2[v];
			for (int i = 0; i < st->ngpus; i++) {
				int dense = 0;

				for (int x = 0; x < st->gpus[i]; x++)
					dense += mark[(size_t)v * maxg + x];
				st->gpus[i] = dense;
			}
		}
	}
	free(pos2);
	free(mark);
	return u;
}

int
sched_mp_used(struct sched *s, int cls, int *cnt)
{
	size_t nn = s->c->nnodes;
	int *rank = xcalloc(nn + 1, sizeof(int)), n = ranks(s, cnt, rank);
	const struct shape *h = n > 0 ? find_shape(s, cls, cnt, rank, n) : NULL;

	if (h != NULL && h->rc == DL_OK) {
		int *used = xcalloc(nn + 1, sizeof(int));
		int *rank2 = xcalloc(nn + 1, sizeof(int)), n2, same = 1;

		for (int g = 0; g < h->p.ngroups; g++)
			for (int j = 0; j < h->p.groups[g].nstages; j++) {
				const struct dl_stage *st =
				    &h->p.groups[g].stages[j];

				used[rank[st->node]] += st->ngpus;
			}
		for (size_t v = 0; v < nn; v++)
			same &= used[v] == cnt[v];
		n2 = ranks(s, used, rank2);
		if (!same && n2 > 0) {
			struct strbuf key = STRBUF_INIT;

			sb_add(&key, (const char *)&cls, sizeof(int));
			for (int i = 0; i < n2; i++) {
				int pair[2] = { s->kind[rank2[i]],
				    used[rank2[i]] };

				sb_add(&key, (const char *)pair, sizeof(pair));
			}
			if (kc_find(&s->shapes, key.buf, key.len) == NULL)
				kc_put(&s->shapes, key.buf, key.len,
				    shape_used(s, h, rank, rank2, n2));
			sb_free(&key);
		}
		memcpy(cnt, used, nn * sizeof(int));
		free(used);
		free(rank2);
	}
	free(rank);
	n = 0;
	for (size_t v = 0; v < nn; v++)
		n += cnt[v];
	return n;
}

int
sched_mp_fill(struct sched *s, int cls, int n, const int *avail, int *out)
{
	const struct dl_cluster *c = s->c;
	int *order = xcalloc(c->nnodes + 1, sizeof(int)), ok;

	for (size_t v = 0; v < c->nnodes; v++)
		order[v] = (int)v;
	order_k = &s->classes[cls];
	order_c = c;
	qsort(order, c->nnodes, sizeof(int), cmp_memory);
	memset(out, 0, c->nnodes * sizeof(int));
	for (size_t i = 0; i < c->nnodes && n > 0; i++) {
		int v = order[i];

		out[v] = n < avail[v] ? n : avail[v] > 0 ? avail[v] : 0;
		n -= out[v];
	}
	ok = n == 0 && isfinite(sched_mp_time(s, cls, out));
	free(order);
	return ok;
}

int
sched_mp_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e)
{
	const struct dl_cluster *c = s->c;
	int cls = s->jobs[job].cls, nr, rc;
	int *cnt = xcalloc(c->nnodes + 1, sizeof(int));
	int *rank = xcalloc(c->nnodes + 1, sizeof(int));
	int **local = xcalloc(c->nnodes + 1, sizeof(int *));
	const struct shape *h;

	for (size_t i = 0; i < n; i++) {
		int v = node[i];

		if (local[v] == NULL)
			local[v] = xcalloc((size_t)c->nodes[v].gpus + 1,
			    sizeof(int));
		local[v][cnt[v]++] = gpu[i];
	}
	nr = ranks(s, cnt, rank);
	h = find_shape(s, cls, cnt, rank, nr);
	if (h->rc != DL_OK) {
		plan_init(p);
		rc = dl_seterr(e, h->rc, NULL, s->jobs[job].line, 0, "job "
		    "'%s': %s", s->jobs[job].id, h->err.msg);
	} else if ((rc = place_plan(s, cls, h, rank, local, p, e)) ==
	    DL_OK) {
		p->uhat_used = forecast_node_used(c, p->opts.horizon,
		    p->opts.forecast);
		p->strategy = STRAT_AUTO;
		p->status = PLAN_GIVEN;
	}
	for (size_t v = 0; v < c->nnodes; v++)
		free(local[v]);
	free(local);
	free(cnt);
	free(rank);
	return rc;
}
