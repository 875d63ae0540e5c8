/*
 * search_ctx.c - the search context: scoring candidates, transfer prices,
 * units, and the thread pool of the structured mode (see search_int.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "partition.h"
#include "pipesched.h"
#include "search_int.h"

/* The key of the transfer cost from node a to node b of bytes. */
struct tkey {
	int a, b;
	double bytes;
};

static void
tc_key(struct tkey *k, int a, int b, double bytes)
{
	memset(k, 0, sizeof(*k));
	k->a = a;
	k->b = b;
	k->bytes = bytes;
}

static const double *
tc_find(const struct tcache *t, int a, int b, double bytes)
{
	struct tkey k;
	size_t i;

	tc_key(&k, a, b, bytes);
	return kc_findi(&t->map, (const char *)&k, sizeof(k), &i) ?
	    &t->cost[i] : NULL;
}

static void
tc_put(struct tcache *t, int a, int b, double bytes, double cost)
{
	struct tkey k;

	tc_key(&k, a, b, bytes);
	t->cost = xgrow(t->cost, &t->cap, t->n + 1, sizeof(double));
	t->cost[t->n] = cost;
	kc_puti(&t->map, (const char *)&k, sizeof(k), t->n++);
}

static void
tc_free(struct tcache *t)
{
	kc_free(&t->map);
	free(t->cost);
	memset(t, 0, sizeof(*t));
}

/*
 * Partition caches (struct kcache, kc.h), keyed by everything the
 * programs see: the stage count, the micro-batches, each stage's speed,
 * TP degree, memory and intra-node bandwidth, and each boundary's
 * transfer prices (as the id of its price vector, see struct cids).
 * Groups of the same kinds of units then cost one solve, however many
 * there are.
 */
static void
free_result(void *p)
{
	part_result_free(p);
	free(p);
}

static void
free_front(void *p)
{
	part_front_free(p);
}

static void
cids_free(struct cids *c)
{
	kc_free(&c->pair);
	kc_free(&c->vec);
	for (int i = 0; i < c->n; i++)
		free(c->v[i]);
	free(c->v);
	free(c->zero);
	memset(c, 0, sizeof(*c));
}

/* The jobs of search_pool_run() and the threads' shared state. */
struct pool {
	pthread_mutex_t mu;
	struct ctx *root;
	size_t njobs, next;
	size_t done;		/* jobs finished */
	int (*run)(struct ctx *, size_t, void *);
	void *arg;
};

/*
 * The transfer times of a boundary from node a to node b, each way: the
 * cache keeps one-way times, keyed (from, to, bytes), so a boundary
 * priced once in either direction is a hit in both.
 */
void
search_comm_dirs(const struct commctx *cc, int a, int b, double bytes,
    double *fwd, double *bwd)
{
	const double *hf, *hb;

	if (cc->zero) {
		*fwd = *bwd = 0;
		return;
	}
	if (a != b && cc->cache && (hf = tc_find(cc->cache, a, b, bytes)) !=
	    NULL && (hb = tc_find(cc->cache, b, a, bytes)) != NULL) {
		*fwd = *hf;
		*bwd = *hb;
		return;
	}
	cost_boundary_dirs(cc->x, a, b, bytes, fwd, bwd);
	if (a != b && cc->cache) {
		tc_put(cc->cache, a, b, bytes, *fwd);
		tc_put(cc->cache, b, a, bytes, *bwd);
	}
}

void
search_comm(void *p, int j, double bytes, double *fwd, double *bwd)
{
	const struct commctx *cc = p;

	search_comm_dirs(cc, cc->node[j], cc->node[j + 1], bytes, fwd, bwd);
}

/*
 * The compute t of each stage of a pipeline of S stages on node[j] with
 * TP degree k[j] ending at layer last[j], its forward and backward parts
 * f and b, and each boundary's transfers priced alone, fw and bw: v holds
 * f, b, fw, bw and t, S values each.
 */
static void
group_times(const struct dl_costctx *x, int S, const int *node, const int *k,
    const int *last, struct tcache *cache, double *v)
{
	double *f = v, *b = v + S, *fw = v + 2 * S, *bw = v + 3 * S;
	double *tt = v + 4 * S;
	struct commctx cc;

	cc.x = x;
	cc.node = node;
	cc.zero = 0;
	cc.cache = cache;
	for (int j = 0, a = 0; j < S; j++) {
		double t = cost_stage_compute(x, node[j], k[j], a, last[j]);

		tt[j] = t;
		f[j] = t * cost_fwd_share(x, a, last[j]);
		b[j] = t - f[j];
		fw[j] = bw[j] = 0;
		if (j + 1 < S)
			search_comm_dirs(&cc, node[j], node[j + 1],
			    (double)x->o->micro_batch *
			    x->m->layers[last[j]].act_mb * 1e6, &fw[j], &bw[j]);
		a = last[j] + 1;
	}
}

void
search_group_am(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, double *A,
    double *M)
{
	double *v = xcalloc(5 * (size_t)S + 1, sizeof(double));
	double *fw = v + 2 * S, *bw = v + 3 * S, *t = v + 4 * S;

	group_times(x, S, node, k, last, cache, v);
	*A = *M = 0;
	for (int j = 0; j < S; j++) {
		*A += pipe_fill_share(t[j], fw[j], bw[j]);
		*M = fmax(*M, pipe_lane(t[j], j > 0 ? fw[j - 1] : 0, bw[j]));
	}
	free(v);
}

double
search_group_lb(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, long m)
{
	double *v = xcalloc(5 * (size_t)S + 1, sizeof(double)), lb;

	group_times(x, S, node, k, last, cache, v);
	lb = pipe_lower(S, m, v, v + S, v + 2 * S, v + 3 * S);
	free(v);
	/* Rounding must never make the bound pass the true value. */
	return lb * (1 - 1e-9);
}

double
search_group_span(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, long m)
{
	double *v = xcalloc(5 * (size_t)S + 1, sizeof(double)), T;

	group_times(x, S, node, k, last, cache, v);
	T = pipe_makespan(S, m, v, v + S, v + 2 * S, v + 3 * S, NULL, NULL);
	free(v);
	return T;
}

void
search_build_plan(const struct ctx *C, struct dl_plan *p,
    const struct shape *sh, int *const *last, const long *m)
{
	const struct dl_costctx *x = C->x;

	plan_free(p);
	plan_init(p);
	p->opts = *x->o;
	p->nnodes = x->c->nnodes;
	p->uhat = xcalloc(p->nnodes, sizeof(double));
	memcpy(p->uhat, x->uhat, p->nnodes * sizeof(double));
	p->groups = xcalloc((size_t)sh->G, sizeof(struct dl_group));
	for (int g = 0; g < sh->G; g++) {
		struct dl_group *gr;

		if (m[g] <= 0)
			continue;
		gr = &p->groups[p->ngroups++];
		gr->micro_batches = m[g];
		gr->nstages = sh->S[g];
		gr->stages = xcalloc((size_t)sh->S[g], sizeof(struct dl_stage));
		for (int j = 0, a = 0; j < sh->S[g]; j++) {
			struct dl_stage *s = &gr->stages[j];
			const struct unit *u = sh->u[sh->off[g] + j];

			s->node = u->node;
			s->ngpus = u->k;
			for (int i = 0; i < u->k; i++) {
				s->gpus[i] = u->gpu0 + i;
				s->tp_share[i] = 1.0 / u->k;
			}
			s->first = a;
			s->last = last[g][j];
			a = s->last + 1;
		}
	}
}

int
search_key_before(double t, long j, int r, double t2, long j2, int r2)
{
	if (t != t2)
		return t < t2;
	if (j != j2)
		return j < j2;
	return r < r2;
}

static void
pool_lock(const struct ctx *C)
{
	if (C->pool)
		pthread_mutex_lock(&C->pool->mu);
}

static void
pool_unlock(const struct ctx *C)
{
	if (C->pool)
		pthread_mutex_unlock(&C->pool->mu);
}

int
search_cut(struct ctx *C, double lb)
{
	struct ctx *R = C->pool ? C->pool->root : C;
	int r;

	pool_lock(C);
	r = R->have_best && !search_key_before(lb, C->job, C->round,
	    R->best_t, R->best_job, R->best_round);
	pool_unlock(C);
	return r;
}

void
search_consider(struct ctx *C)
{
	struct ctx *R = C->pool ? C->pool->root : C;
	struct dl_plan *p = &C->work;
	struct dl_err e = { 0 };
	double t, cut = 0;
	int rc, over;

	C->st->evaluated++;
	/* A plan whose pipeline alone is slower than the best cannot win. */
	pool_lock(C);
	if (R->have_best)
		cut = R->best_t;
	pool_unlock(C);
	rc = cost_eval_below(C->x, p, cut, &over, &e);
	if (rc == DL_OK && over)
		return;
	t = p->est.iteration_s;
	if (rc != DL_OK && rc != DL_EINFEAS) {
		if (!C->failed)
			C->err = e;
		C->failed = 1;
		return;
	}
	pool_lock(C);
	if (rc == DL_EINFEAS) {
		if (!R->have_infeas || search_key_before(t, C->job, C->round,
		    R->infeas_t, R->infeas_job, R->infeas_round)) {
			R->infeas = e;
			R->infeas_t = t;
			R->infeas_job = C->job;
			R->infeas_round = C->round;
			R->have_infeas = 1;
		}
	} else if (!R->have_best || search_key_before(t, C->job, C->round,
	    R->best_t, R->best_job, R->best_round)) {
		plan_free(R->best);
		plan_copy(R->best, p);
		R->best_t = t;
		R->best_job = C->job;
		R->best_round = C->round;
		R->have_best = 1;
	}
	pool_unlock(C);
}

int
search_strategy_fits(int strat, int G, int maxs)
{
	switch (strat) {
	case STRAT_DP:
		return maxs == 1;
	case STRAT_PP:
		return G == 1;
	case STRAT_HYBRID:
		return G >= 2 && maxs >= 2;
	}
	return 1;
}

int
search_strategy_allows(int strat, const struct shape *sh)
{
	int maxs = 0;

	for (int g = 0; g < sh->G; g++)
		if (sh->S[g] > maxs)
			maxs = sh->S[g];
	return search_strategy_fits(strat, sh->G, maxs);
}

size_t
search_node_units(const struct dl_costctx *x, int node, int k, struct unit *u)
{
	int left = x->c->nodes[node].gpus, gpu = 0;
	size_t n = 0;

	while (left > 0) {
		int kk = k;

		while (kk > left)
			kk /= 2;
		u[n].node = node;
		u[n].k = kk;
		u[n].gpu0 = gpu;
		u[n].speed = kk * x->speed[node];
		gpu += kk;
		left -= kk;
		n++;
	}
	return n;
}

size_t
search_make_units(const struct dl_costctx *x, int k, struct unit *u)
{
	size_t n = 0;

	for (size_t i = 0; i < x->c->nnodes; i++)
		n += search_node_units(x, (int)i, k, u + n);
	return n;
}

int
search_cmp_unit(const void *a, const void *b)
{
	const struct unit *const *x = a, *const *y = b;

	/* Stable order: faster first, then node order (set by caller). */
	if ((*x)->speed != (*y)->speed)
		return (*x)->speed > (*y)->speed ? -1 : 1;
	if ((*x)->node != (*y)->node)
		return (*x)->node < (*y)->node ? -1 : 1;
	return (*x)->gpu0 < (*y)->gpu0 ? -1 : (*x)->gpu0 > (*y)->gpu0;
}

void
search_ctx_init(struct ctx *C, const struct dl_costctx *x,
    const struct search_opts *so, struct search_stats *st)
{
	memset(C, 0, sizeof(*C));
	C->x = x;
	C->so = so;
	C->st = st;
	C->L = (int)x->m->nlayers;
	C->total = x->o->global_batch / x->o->micro_batch;
	C->pc.vfree = free_result;
	C->fc.vfree = free_front;
	C->cid.pair.vfree = C->cid.vec.vfree = free;
	C->rings.vfree = free;
	plan_init(&C->work);
}

void
search_ctx_open(struct ctx *C, struct dl_costctx *xl,
    const struct dl_costctx *x, const struct search_opts *so,
    struct search_stats *st, struct dl_plan *best)
{
	*xl = *x;
	search_ctx_init(C, xl, so, st);
	xl->rings = &C->rings;
	xl->sites = &C->sb;
	C->best = best;
}

void
search_ctx_thread(struct ctx *W, struct dl_costctx *xw, const struct ctx *C,
    struct search_stats *ws, int own_router)
{
	search_ctx_open(W, xw, C->x, C->so, ws, NULL);
	if (own_router && C->x->router != NULL)
		router_clone(&xw->router, C->x->router);
}

void
search_ctx_thread_free(struct ctx *W, struct search_stats *to, int own_router)
{
	struct dl_router *r = W->x->router;

	to->structures += W->st->structures;
	to->evaluated += W->st->evaluated;
	to->pruned += W->st->pruned;
	to->milps += W->st->milps;
	search_ctx_free(W);
	if (own_router)
		router_free(r);
}

void
search_ctx_free(struct ctx *C)
{
	tc_free(&C->tc);
	kc_free(&C->pc);
	kc_free(&C->fc);
	cids_free(&C->cid);
	cost_sitebound_free(&C->sb);
	free(C->wmin);
	free(C->wmin_ok);
	kc_free(&C->rings);
	if (C->scratch_free != NULL)
		C->scratch_free(C->scratch);
	C->scratch = NULL;
	C->scratch_free = NULL;
	plan_free(&C->work);
}

/*
 * Tell the caller of search_plan() that done of njobs jobs are done (with
 * the pool's lock held when there is a pool).
 */
static void
report(const struct ctx *C, size_t done, size_t njobs, int final)
{
	const struct ctx *R = C->pool ? C->pool->root : C;
	struct search_progress pg;

	if (C->so->progress == NULL || (final && R->rep_more))
		return;
	pg.done = R->rep_done + (long)done;
	pg.total = R->rep_total > 0 ? R->rep_total : (long)njobs;
	pg.final = final;
	pg.exhaustive = 0;
	pg.best_t = R->have_best ? R->best_t : HUGE_VAL;
	pg.lower_bound = fmax(cost_lower_bound(C->x), R->bound);
	C->so->progress(C->so->progress_arg, &pg);
}

/* A thread's loop: take the next job until none is left or one failed. */
static void *
worker(void *arg)
{
	struct ctx *C = arg;
	struct pool *pl = C->pool;
	struct ctx *R = pl->root;

	for (;;) {
		size_t j;

		pthread_mutex_lock(&pl->mu);
		if (R->gfailed || pl->next >= pl->njobs) {
			pthread_mutex_unlock(&pl->mu);
			break;
		}
		j = pl->next++;
		pthread_mutex_unlock(&pl->mu);
		if (!pl->run(C, j, pl->arg)) {
			/* Every later job is cut too. */
			pthread_mutex_lock(&pl->mu);
			pl->next = pl->njobs;
			pthread_mutex_unlock(&pl->mu);
			break;
		}
		pthread_mutex_lock(&pl->mu);
		report(C, ++pl->done, pl->njobs, 0);
		pthread_mutex_unlock(&pl->mu);
		if (C->failed) {
			pthread_mutex_lock(&pl->mu);
			if (!R->gfailed || (long)j < R->gerr_job) {
				R->gerr = C->err;
				R->gerr_job = (long)j;
			}
			R->gfailed = 1;
			pthread_mutex_unlock(&pl->mu);
			break;
		}
	}
	if (C != R)
		lp_thread_exit();
	return NULL;
}

size_t
search_pool_run(struct ctx *C, size_t njobs, int nt,
    int (*run)(struct ctx *C, size_t j, void *arg), void *arg)
{
	struct pool pl;
	struct ctx *W;
	struct search_stats *ws;
	pthread_t *tid;

	if (nt <= 1) {
		size_t done = 0;

		for (size_t j = 0; j < njobs && !C->failed; j++) {
			if (!run(C, j, arg))
				break;
			report(C, ++done, njobs, 0);
		}
		report(C, done, njobs, 1);
		return done;
	}
	W = xcalloc((size_t)nt, sizeof(*W));
	ws = xcalloc((size_t)nt, sizeof(*ws));
	tid = xcalloc((size_t)nt, sizeof(*tid));
	pthread_mutex_init(&pl.mu, NULL);
	pl.root = C;
	pl.njobs = njobs;
	pl.run = run;
	pl.arg = arg;
	pl.next = 0;
	pl.done = 0;
	C->pool = &pl;
	for (int i = 1; i < nt; i++) {
		search_ctx_thread(&W[i], xmalloc(sizeof(struct dl_costctx)),
		    C, &ws[i], 1);
		W[i].pool = &pl;
		if (pthread_create(&tid[i], NULL, worker, &W[i]) != 0) {
			/* Fewer threads: the jobs still all run. */
			W[i].pool = NULL;
		}
	}
	worker(C);
	for (int i = 1; i < nt; i++) {
		struct dl_costctx *xc = (struct dl_costctx *)W[i].x;

		if (W[i].pool != NULL)
			pthread_join(tid[i], NULL);
		search_ctx_thread_free(&W[i], C->st, 1);
		free(xc);
	}
	C->pool = NULL;
	report(C, pl.done, njobs, 1);
	pthread_mutex_destroy(&pl.mu);
	if (C->gfailed && !C->failed) {
		C->failed = 1;
		C->err = C->gerr;
	}
	free(W);
	free(ws);
	free(tid);
	return pl.done;
}
