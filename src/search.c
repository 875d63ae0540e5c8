/*
 * search.c - "tentative searching + linear solving" (DESIGN.md 5.6).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "partition.h"
#include "search.h"

/* A unit: k GPUs of one node, local indices gpu0 .. gpu0 + k - 1. */
struct unit {
	int node, k, gpu0;
	double speed;		/* k * s of its node */
};

/*
 * A structure: G groups; group g is the ordered list of S[g] units
 * u[off[g]] .. u[off[g] + S[g] - 1].  Arrays are owned by the caller.
 */
struct shape {
	int G;
	int *S, *off;
	const struct unit **u;
};

/*
 * Unshared transfer costs already priced, keyed by (a, b, bytes): the
 * same node pairs and activation sizes come back in every shape.
 */
struct tcache {
	int *a, *b;
	double *bytes, *cost;
	size_t cap, n;
};

static size_t
tc_hash(int a, int b, double bytes, size_t cap)
{
	unsigned long long h = (unsigned long long)a * 1000003ULL ^
	    (unsigned long long)b * 998244353ULL;
	unsigned long long bits;

	memcpy(&bits, &bytes, sizeof(bits));
	h ^= bits + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return (size_t)(h * 0xff51afd7ed558ccdULL >> 17) & (cap - 1);
}

static double *
tc_find(struct tcache *t, int a, int b, double bytes)
{
	if (t->cap == 0)
		return NULL;
	for (size_t i = tc_hash(a, b, bytes, t->cap); t->a[i] >= 0;
	    i = (i + 1) & (t->cap - 1))
		if (t->a[i] == a && t->b[i] == b && t->bytes[i] == bytes)
			return &t->cost[i];
	return NULL;
}

static void
tc_put(struct tcache *t, int a, int b, double bytes, double cost)
{
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		struct tcache o = *t;

		t->cap = o.cap ? 2 * o.cap : 1024;
		t->n = 0;
		t->a = xcalloc(t->cap, sizeof(int));
		t->b = xcalloc(t->cap, sizeof(int));
		t->bytes = xcalloc(t->cap, sizeof(double));
		t->cost = xcalloc(t->cap, sizeof(double));
		for (i = 0; i < t->cap; i++)
			t->a[i] = -1;
		for (i = 0; i < o.cap; i++)
			if (o.a[i] >= 0)
				tc_put(t, o.a[i], o.b[i], o.bytes[i],
				    o.cost[i]);
		free(o.a);
		free(o.b);
		free(o.bytes);
		free(o.cost);
	}
	for (i = tc_hash(a, b, bytes, t->cap); t->a[i] >= 0;
	    i = (i + 1) & (t->cap - 1))
		;
	t->a[i] = a;
	t->b[i] = b;
	t->bytes[i] = bytes;
	t->cost[i] = cost;
	t->n++;
}

static void
tc_free(struct tcache *t)
{
	free(t->a);
	free(t->b);
	free(t->bytes);
	free(t->cost);
	memset(t, 0, sizeof(*t));
}

/*
 * Partition caches (struct kcache, util.h), keyed by everything the
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

/*
 * Transfer price vectors.  A pipeline boundary from node a to node b costs
 * c(l), the unshared price of layer l's activations each way; the vector
 * over all layers gets an id, the same for every pair with the same
 * prices, so that cache keys hold one int per boundary.
 */
struct cids {
	struct kcache pair;	/* (a, b) -> id */
	struct kcache vec;	/* price vector -> id */
	double **v;		/* id -> price vector (owned) */
	int n;
	size_t cap;
	double *zero;		/* the prices when transfers are left out */
};

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

struct ctx {
	const struct dl_costctx *x;
	const struct search_opts *so;
	struct search_stats *st;
	struct dl_plan *best;
	struct dl_plan work;
	double best_t;
	int have_best;
	long total;		/* micro-batches per iteration */
	int L;
	struct dl_err infeas;	/* why the best-looking candidate failed */
	int have_infeas;
	double infeas_t;
	struct dl_err err;	/* a hard error (DL_ESYS) stops the search */
	int failed;
	struct tcache tc;
	struct kcache pc;	/* key with m -> struct part_result */
	struct kcache fc;	/* key with min(m, S) -> struct part_front */
	struct cids cid;
	struct dl_sitebound sb;
	struct kcache rings;	/* x->rings: see cost.h */

	/*
	 * The structured mode's jobs (see run_jobs()).  With a pool, the
	 * best plan, the infeasibility note and a failure go to the pool's
	 * root, under its lock; each plan's key is (T, job, round), so that
	 * the winner does not depend on which thread got there first.
	 */
	struct pool *pool;
	long job;
	int round;
	long best_job, infeas_job, gerr_job;
	int best_round, infeas_round;
	struct dl_err gerr;	/* the first failure of any thread */
	int gfailed;
	/* The units of the last job run (run_job()). */
	struct unit *units;
	const struct unit **ord, **fast;
	int *shS, *shoff;
	int cur_use, cur_k;
	size_t cur_n;
};

struct pool {
	pthread_mutex_t mu;
	struct ctx *root;
	const struct joblist *jl;
	size_t next;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Transfer cost c of a pipeline boundary: activations forward and
 * gradients back, each priced alone (every n_e = 1).
 */
struct commctx {
	const struct dl_costctx *x;
	const int *node;
	int zero;		/* compute-only bound: transfers cost 0 */
	struct tcache *cache;	/* may be NULL */
};


static double
comm_cb(void *p, int j, double bytes)
{
	const struct commctx *cc = p;
	int a = cc->node[j], b = cc->node[j + 1];
	double t, *hit;

	if (cc->zero)
		return 0;
	if (a != b && cc->cache && (hit = tc_find(cc->cache, a, b,
	    bytes)) != NULL)
		return *hit;
	t = cost_boundary(cc->x, a, b, bytes);
	if (a != b && cc->cache)
		tc_put(cc->cache, a, b, bytes, t);
	return t;
}

/* Fill p with the plan of shape sh, stage ends last[g], split m[g]. */
static void
build_plan(const struct ctx *C, struct dl_plan *p, const struct shape *sh,
    int *const *last, const long *m)
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

/* Whether key (t, j, r) comes before (t2, j2, r2). */
static int
key_before(double t, long j, int r, double t2, long j2, int r2)
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

/*
 * Whether a plan of C's job and round whose time is at least lb cannot
 * win: it would not come before the best so far.
 */
static int
cut(struct ctx *C, double lb)
{
	struct ctx *R = C->pool ? C->pool->root : C;
	int r;

	pool_lock(C);
	r = R->have_best && !key_before(lb, C->job, C->round, R->best_t,
	    R->best_job, R->best_round);
	pool_unlock(C);
	return r;
}

/* Score the plan in C->work; keep it when it is the best so far. */
static void
consider(struct ctx *C)
{
	struct ctx *R = C->pool ? C->pool->root : C;
	struct dl_plan *p = &C->work;
	struct dl_err e = { 0 };
	double t;
	int rc;

	C->st->evaluated++;
	rc = cost_eval(C->x, p, &e);
	t = p->est.iteration_s;
	if (rc != DL_OK && rc != DL_EINFEAS) {
		if (!C->failed)
			C->err = e;
		C->failed = 1;
		return;
	}
	pool_lock(C);
	if (rc == DL_EINFEAS) {
		if (!R->have_infeas || key_before(t, C->job, C->round,
		    R->infeas_t, R->infeas_job, R->infeas_round)) {
			R->infeas = e;
			R->infeas_t = t;
			R->infeas_job = C->job;
			R->infeas_round = C->round;
			R->have_infeas = 1;
		}
	} else if (!R->have_best || key_before(t, C->job, C->round,
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

/* Whether G groups of at most maxs stages are a plan of strategy strat. */
static int
strategy_fits(int strat, int G, int maxs)
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

static int
strategy_allows(int strat, const struct shape *sh)
{
	int maxs = 0;

	for (int g = 0; g < sh->G; g++)
		if (sh->S[g] > maxs)
			maxs = sh->S[g];
	return strategy_fits(strat, sh->G, maxs);
}

/* Candidate bottlenecks the DP scans before the MILP takes over. */
#define PART_SCAN 4096

static int partition_solve(struct ctx *, const struct part_group *,
    struct part_front *, int, const char *, struct part_result *,
    struct dl_err *);

/*
 * The id of the price vector of boundary j of cc's pipeline (node j to
 * node j + 1); -1 when transfers are left out.
 */
static int
comm_id(struct ctx *C, const struct commctx *cc, int j)
{
	const struct dl_costctx *x = C->x;
	int ab[2] = { cc->node[j], cc->node[j + 1] }, *id, *pid;
	double mu = (double)x->o->micro_batch, *v;
	size_t n = (size_t)C->L * sizeof(double);

	if (cc->zero)
		return -1;
	if ((id = kc_find(&C->cid.pair, (const char *)ab, sizeof(ab))) != NULL)
		return *id;
	v = xcalloc((size_t)C->L, sizeof(double));
	for (int l = 0; l < C->L; l++)
		v[l] = comm_cb((void *)cc, j, mu * x->m->layers[l].act_mb * 1e6);
	if ((id = kc_find(&C->cid.vec, (const char *)v, n)) == NULL) {
		id = xmalloc(sizeof(int));
		*id = C->cid.n;
		kc_put(&C->cid.vec, (const char *)v, n, id);
		C->cid.v = xgrow(C->cid.v, &C->cid.cap, (size_t)C->cid.n + 1,
		    sizeof(double *));
		C->cid.v[C->cid.n++] = v;
	} else {
		free(v);
	}
	pid = xmalloc(sizeof(int));
	*pid = *id;
	kc_put(&C->cid.pair, (const char *)ab, sizeof(ab), pid);
	return *pid;
}

/* Append n bytes at p to key buffer k at *len. */
static void
key_add(char *k, size_t *len, const void *p, size_t n)
{
	memcpy(k + *len, p, n);
	*len += n;
}

/*
 * Partition group g of sh for m micro-batches: the exact DP and then, for
 * two or more stages when use_milp is set, the MILP started from it.  With
 * zero the transfers are left out (the compute-only lower bound).  Answers
 * are cached; so is each group's DP frontier, which serves every m.
 */
static int
partition(struct ctx *C, const struct shape *sh, int g, long m, int zero,
    int use_milp, const char *dump, struct part_result *r, struct dl_err *e)
{
	const struct dl_costctx *x = C->x;
	int S = sh->S[g];
	int *node = xcalloc((size_t)S, sizeof(int));
	int *k = xcalloc((size_t)S, sizeof(int));
	struct commctx cc;
	struct part_group pg = { 0 };
	struct part_result *hit;
	struct part_front *F;
	const double **commv;
	char *key;
	size_t len = 0, plen;
	long mm = m < S ? m : S;
	int rc;

	for (int j = 0; j < S; j++) {
		node[j] = sh->u[sh->off[g] + j]->node;
		k[j] = sh->u[sh->off[g] + j]->k;
	}
	cc.x = x;
	cc.node = node;
	cc.zero = zero;
	cc.cache = &C->tc;
	pg.S = S;
	pg.node = node;
	pg.k = k;
	pg.m = m;
	pg.comm = comm_cb;
	pg.ctx = &cc;
	if (dump != NULL) {
		rc = partition_solve(C, &pg, NULL, use_milp, dump, r, e);
		free(node);
		free(k);
		return rc;
	}
	key = xmalloc(2 * sizeof(int) + (size_t)S * (3 * sizeof(double) +
	    2 * sizeof(int)) + 2 * sizeof(long));
	commv = xcalloc((size_t)S, sizeof(*commv));
	if (C->cid.zero == NULL)
		C->cid.zero = xcalloc((size_t)C->L, sizeof(double));
	key_add(key, &len, &S, sizeof(S));
	key_add(key, &len, &zero, sizeof(zero));
	for (int j = 0; j < S; j++) {
		double f[3] = { x->speed[node[j]], cost_gpu_capacity(x,
		    node[j]), x->c->nodes[node[j]].intra_gbps };
		int id = j + 1 < S ? comm_id(C, &cc, j) : -2;

		if (j + 1 < S)
			commv[j] = id >= 0 ? C->cid.v[id] : C->cid.zero;
		key_add(key, &len, f, sizeof(f));
		key_add(key, &len, &k[j], sizeof(int));
		key_add(key, &len, &id, sizeof(int));
	}
	plen = len;
	key_add(key, &len, &m, sizeof(m));
	if ((hit = kc_find(&C->pc, key, len)) != NULL) {
		*r = *hit;
		r->last = xmemdup(hit->last, (size_t)S, sizeof(int));
		rc = DL_OK;
		goto out;
	}
	len = plen;
	key_add(key, &len, &mm, sizeof(mm));
	if ((F = kc_find(&C->fc, key, len)) == NULL) {
		pg.commv = (const double *const *)commv;
		F = part_front_new(x, &pg, PART_SCAN);
		pg.commv = NULL;
		kc_put(&C->fc, key, len, F);
	}
	rc = partition_solve(C, &pg, F, use_milp, NULL, r, e);
	if (rc == DL_OK) {
		hit = xmemdup(r, 1, sizeof(*r));
		hit->last = xmemdup(r->last, (size_t)S, sizeof(int));
		len = plen;
		key_add(key, &len, &m, sizeof(m));
		kc_put(&C->pc, key, len, hit);
	}
out:
	free(key);
	free(commv);
	free(node);
	free(k);
	return rc;
}

/*
 * The DP (from frontier F when given), and the MILP when the DP's scan
 * was cut short.
 */
static int
partition_solve(struct ctx *C, const struct part_group *pg,
    struct part_front *F, int use_milp, const char *dump,
    struct part_result *r, struct dl_err *e)
{
	int S = pg->S, rc;

	rc = F ? part_front_query(F, pg->m, r) :
	    part_dp(C->x, pg, PART_SCAN, r);
	/*
	 * The DP is exact when its bottleneck scan finishes; GLPK proves the
	 * rest when the scan was cut short.
	 */
	if (rc == DL_OK && use_milp && S >= 2 && r->status == LP_FEASIBLE) {
		struct part_result mr;
		struct lp_params prm = { C->so->time_limit, 0 };
		struct dl_err me = { 0 };

		/*
		 * Without a dump, a GLPK failure (extreme coefficients) leaves
		 * the DP's partition standing, feasible but unproven.
		 */
		rc = part_milp(C->x, pg, r, &prm, dump, &mr, dump ? e : &me);
		C->st->milps++;
		if (rc != DL_OK && dump == NULL)
			return DL_OK;
		if (rc == DL_OK) {
			if (mr.status == LP_OPTIMAL || (mr.status ==
			    LP_FEASIBLE && mr.obj < r->obj)) {
				part_result_free(r);
				*r = mr;
			} else {
				part_result_free(&mr);
			}
		}
	}
	return rc;
}

/* Up to this many groups the data split is solved as a MILP; above, by
 * the exact threshold search (the same optimum: test_partition). */
#define SPLIT_MILP_MAX 8
/* Seconds GLPK may spend on one split before the exact search decides. */
#define SPLIT_MILP_TIME 1.0

/* Group speed for the first split: FLOP/s of its slowest stage times S. */
static double
group_speed(const struct shape *sh, int g)
{
	double s = 0;

	for (int j = 0; j < sh->S[g]; j++)
		s += sh->u[sh->off[g] + j]->speed;
	return s;
}

/* Split total in proportion to w (largest remainder, ties by index). */
static void
proportional(const double *w, int G, long total, long *m)
{
	double sum = 0, *rem = xcalloc((size_t)G, sizeof(double));
	long given = 0;

	for (int g = 0; g < G; g++)
		sum += w[g];
	for (int g = 0; g < G; g++) {
		double q = sum > 0 ? (double)total * w[g] / sum :
		    (double)total / G;

		m[g] = (long)floor(q);
		rem[g] = q - (double)m[g];
		given += m[g];
	}
	while (given < total) {
		int b = 0;

		for (int g = 1; g < G; g++)
			if (rem[g] > rem[b])
				b = g;
		m[b]++;
		rem[b] = -1;
		given++;
	}
	free(rem);
}

/*
 * The structured mode's inner loop for one shape: partition every group
 * for its share of micro-batches, split the micro-batches for those
 * partitions, and repeat until the split stops changing (at most four
 * rounds).  Every round's plan is scored.
 */
static void
solve_shape(struct ctx *C, const struct shape *sh)
{
	int G = sh->G;
	long *m = xcalloc((size_t)G, sizeof(long));
	long *m2 = xcalloc((size_t)G, sizeof(long));
	double *w = xcalloc((size_t)G, sizeof(double));
	int **last = xcalloc((size_t)G, sizeof(int *));
	struct split_group *sg = xcalloc((size_t)G, sizeof(*sg));

	C->st->structures++;
	for (int g = 0; g < G; g++)
		w[g] = group_speed(sh, g);
	proportional(w, G, C->total, m);
	for (int round = 0; round < 4 && !C->failed; round++) {
		int ok = 1, st;
		double z;

		C->round = round;
		for (int g = 0; g < G && ok; g++) {
			struct part_result r;
			long mg = m[g] > 0 ? m[g] : 1;
			double t, c, A = 0, M = 0;

			if (partition(C, sh, g, mg, 0, 1, NULL, &r,
			    &C->err) != DL_OK) {
				C->failed = 1;
				ok = 0;
				break;
			}
			if (r.status == LP_INFEASIBLE) {
				/* This group cannot hold the model. */
				sg[g].A = sg[g].M = 0;
				sg[g].cap = 0;
				free(last[g]);
				last[g] = r.last;
				continue;
			}
			free(last[g]);
			last[g] = r.last;
			/* A_g and M_g of this partition. */
			{
				struct commctx cc;
				int S = sh->S[g], *node = xcalloc((size_t)S,
				    sizeof(int)), *k = xcalloc((size_t)S,
				    sizeof(int));

				for (int j = 0; j < S; j++) {
					node[j] = sh->u[sh->off[g] + j]->node;
					k[j] = sh->u[sh->off[g] + j]->k;
				}
				cc.x = C->x;
				cc.node = node;
				cc.zero = 0;
				cc.cache = &C->tc;
				for (int j = 0, a = 0; j < S; j++) {
					t = cost_stage_compute(C->x, node[j],
					    k[j], a, last[g][j]);
					c = j + 1 < S ? comm_cb(&cc, j,
					    (double)C->x->o->micro_batch *
					    C->x->m->layers[last[g][j]].act_mb
					    * 1e6) : 0;
					A += t + c;
					M = fmax(M, fmax(t, c));
					a = last[g][j] + 1;
				}
				sg[g].A = A;
				sg[g].M = M;
				sg[g].cap = part_mcap(C->x, S, k, node, last[g]);
				free(node);
				free(k);
			}
		}
		if (!ok)
			break;
		if (G <= SPLIT_MILP_MAX) {
			struct lp_params prm = { fmin(C->so->time_limit,
			    SPLIT_MILP_TIME), 0 };
			struct dl_err me = { 0 };

			/*
			 * GLPK may fail on extreme coefficients (1e-300 next to
			 * 1e6); the threshold search below needs no solver.
			 */
			if (split_milp(sg, G, C->total, &prm, NULL, m2, &z, &st,
			    &me) == DL_OK)
				C->st->milps++;
			/*
			 * The threshold search gives the same optimum (tested)
			 * with fixed tie rules; taking its split keeps the plan
			 * independent of how far GLPK got within its time cap.
			 */
			split_exact(sg, G, C->total, m2, &z, &st);
		} else {
			split_exact(sg, G, C->total, m2, &z, &st);
		}
		if (st != LP_OPTIMAL && st != LP_FEASIBLE)
			break;
		/*
		 * z prices every transfer unshared and leaves out the sync,
		 * so a plan with z above the best T so far cannot win.
		 */
		if (cut(C, z)) {
			C->st->pruned++;
		} else {
			build_plan(C, &C->work, sh, last, m2);
			/* Nor can one whose sync alone would make up the rest. */
			if (C->work.ngroups > 0 && cut(C, z +
			    cost_sync_bound(C->x, &C->sb, &C->work)))
				C->st->pruned++;
			else if (C->work.ngroups > 0)
				consider(C);
		}
		if (memcmp(m, m2, (size_t)G * sizeof(long)) == 0)
			break;
		memcpy(m, m2, (size_t)G * sizeof(long));
	}
	for (int g = 0; g < G; g++)
		free(last[g]);
	free(last);
	free(m);
	free(m2);
	free(w);
	free(sg);
}

/* Units with TP degree k (the largest power of two <= the GPUs left). */
static size_t
make_units(const struct dl_costctx *x, int k, struct unit *u)
{
	size_t n = 0;

	for (size_t i = 0; i < x->c->nnodes; i++) {
		int left = x->c->nodes[i].gpus, gpu = 0;

		while (left > 0) {
			int kk = k;

			while (kk > left)
				kk /= 2;
			u[n].node = (int)i;
			u[n].k = kk;
			u[n].gpu0 = gpu;
			u[n].speed = kk * x->speed[i];
			gpu += kk;
			left -= kk;
			n++;
		}
	}
	return n;
}

static int
cmp_unit(const void *a, const void *b)
{
	const struct unit *const *x = a, *const *y = b;

	/* Stable order: faster first, then node order (set by caller). */
	if ((*x)->speed != (*y)->speed)
		return (*x)->speed > (*y)->speed ? -1 : 1;
	if ((*x)->node != (*y)->node)
		return (*x)->node < (*y)->node ? -1 : 1;
	return (*x)->gpu0 < (*y)->gpu0 ? -1 : (*x)->gpu0 > (*y)->gpu0;
}

/* 2^i or 3 * 2^i: the stage counts above 8 the structured mode tries. */
static int
stage_count_tried(int S)
{
	while (S % 2 == 0)
		S /= 2;
	return S == 1 || S == 3;
}

/*
 * The units of TP degree k on the nodes in use[], listed site by site
 * (fastest first inside a site, so that a pipeline's hops stay in one
 * node or site) in ord, and all of them fastest first in fast.  Returns
 * their number; 0 when k > 1 changes no unit (the degree is skipped).
 */
static size_t
list_units(const struct ctx *C, const int *use, int k, struct unit *units,
    const struct unit **ord, const struct unit **fast)
{
	const struct dl_costctx *x = C->x;
	size_t n = make_units(x, k, units), m = 0, any = 0;

	for (size_t i = 0; i < n; i++)
		any += units[i].k == k;
	if (k > 1 && any == 0)
		return 0;
	for (size_t s = 0; s < x->c->nsites; s++) {
		size_t first = m;

		for (size_t i = 0; i < n; i++)
			if (x->c->nodes[units[i].node].site_idx == (int)s &&
			    use[units[i].node])
				ord[m++] = &units[i];
		qsort(ord + first, m - first, sizeof(*ord), cmp_unit);
	}
	memcpy(fast, ord, m * sizeof(*fast));
	qsort(fast, m, sizeof(*fast), cmp_unit);
	return m;
}

/*
 * The structured mode's structures, in a fixed order: for each set of
 * nodes, TP degree and stage count, the units cut into pipelines of S
 * (all of them, and only the fastest half, when slow units would hold
 * the others back).
 */
struct job {
	int use;		/* index of the node set */
	int k, S, half;
	double lb;		/* shape_bound() */
	size_t seq;		/* the order listed */
};

struct joblist {
	int **use;		/* node sets: per node, 1 when used */
	size_t nuse;
	struct job *job;
	size_t n, cap;
};

/* Units the job uses (0: none) and its number of groups. */
static size_t
job_units(const struct ctx *C, size_t n, int S, int half, int *G)
{
	size_t use_n = half ? n / 2 : n;

	use_n -= use_n % (size_t)S;
	if (use_n == 0 || (half && n < 4))
		return 0;
	*G = (int)(use_n / (size_t)S);
	if (*G > C->total)
		*G = (int)C->total;
	return use_n;
}

/* Add the jobs over the nodes in use[] (copied) to jl. */
static void
add_jobs(const struct ctx *C, struct joblist *jl, const int *use)
{
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	size_t nn = x->c->nnodes;
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	const struct unit **ord = xcalloc((size_t)gpus, sizeof(*ord));
	const struct unit **fast = xcalloc((size_t)gpus, sizeof(*fast));
	int u = (int)jl->nuse;

	jl->use = xreallocarray(jl->use, jl->nuse + 1, sizeof(int *));
	jl->use[jl->nuse++] = xmemdup(use, nn, sizeof(int));
	for (int k = 1; k <= x->o->max_tp && k <= DL_MAX_TP; k *= 2) {
		size_t n = list_units(C, use, k, units, ord, fast);
		int maxs = (int)n < C->L ? (int)n : C->L;

		if (n == 0)
			continue;
		if (x->o->max_stages > 0 && maxs > x->o->max_stages)
			maxs = x->o->max_stages;
		for (int S = 1; S <= maxs; S++) {
			/*
			 * Beyond 8 stages try only 12, 16, 24, 32, 48 ...
			 * (each about 1.4 times the last) and the most.
			 */
			if (S > 8 && !stage_count_tried(S) && S != maxs)
				continue;
			for (int half = 0; half < 2; half++) {
				int G;

				if (job_units(C, n, S, half, &G) == 0)
					continue;
				if (!strategy_fits(C->so->strategy, G, S))
					continue;
				jl->job = xgrow(jl->job, &jl->cap, jl->n + 1,
				    sizeof(struct job));
				jl->job[jl->n].use = u;
				jl->job[jl->n].k = k;
				jl->job[jl->n].S = S;
				jl->job[jl->n].half = half;
				jl->n++;
			}
		}
	}
	free(units);
	free(ord);
	free(fast);
}

static void
joblist_free(struct joblist *jl)
{
	for (size_t i = 0; i < jl->nuse; i++)
		free(jl->use[i]);
	free(jl->use);
	free(jl->job);
	memset(jl, 0, sizeof(*jl));
}

static int
cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x > y ? -1 : x < y;
}

/*
 * A lower bound on T for every plan of shape sh, before any partition.
 * Say the split uses Gu of the groups.  Pipeline: group g with S_g
 * stages and fastest unit s_g runs m_g micro-batches in at least
 * m_g mu W / (S_g s_g) (its stages add up to at least mu W / s_g, and the
 * slowest is at least their mean), so max_g T_g >= mu W M / sum S_g s_g
 * over the Gu groups, at best the fastest.  Sync: when Gu exceeds the
 * most groups that touch any one site, every ring spans two sites and
 * has a hop between them: R_q >= 2 (Gu - 1) (lat + 8 P_q gb / (Gu bw))
 * with the least latency and widest bandwidth between sites the shape
 * uses; a unit of a group holds segments whose R_q add up to at least
 * 1 / S_g of all of them, and there are at least S_g segments.  The bound
 * is the least over Gu of the two together.
 */
static double
shape_bound(struct ctx *C, const struct shape *sh)
{
	const struct dl_costctx *x = C->x;
	const struct dl_cluster *c = x->c;
	size_t ns = c->nsites;
	int G = sh->G, smax = 1, tmax = 0, np = 0;
	double *w = xcalloc((size_t)G, sizeof(double));
	int *touch = xcalloc(ns, sizeof(int)), *last = xcalloc(ns, sizeof(int));
	double mu = (double)x->o->micro_batch, lat = HUGE_VAL, bw = 0;
	double W = cost_range_flops(x, 0, C->L - 1);
	double P = cost_range_params(x, 0, C->L - 1) * x->o->grad_bytes;
	double sum = 0, best = HUGE_VAL;
	unsigned char *present = xcalloc(ns, 1);

	for (size_t i = 0; i < ns; i++)
		last[i] = -1;
	for (int g = 0; g < G; g++) {
		double f = 0;

		for (int j = 0; j < sh->S[g]; j++) {
			const struct unit *u = sh->u[sh->off[g] + j];
			int si = c->nodes[u->node].site_idx;

			f = fmax(f, u->speed);
			present[si] = 1;
			if (last[si] != g) {
				last[si] = g;
				touch[si]++;
			}
		}
		w[g] = sh->S[g] * f;
		if (sh->S[g] > smax)
			smax = sh->S[g];
	}
	for (size_t a = 0; a < ns; a++) {
		tmax = touch[a] > tmax ? touch[a] : tmax;
		np += present[a];
	}
	if (np >= 2) {
		cost_sitebound_init(&C->sb, c);
		for (size_t a = 0; a < ns; a++)
			for (size_t b = 0; b < ns; b++)
				if (a != b && present[a] && present[b] &&
				    C->sb.bw[a * ns + b] > 0) {
					lat = fmin(lat, C->sb.lat[a * ns + b]);
					bw = fmax(bw, C->sb.bw[a * ns + b]);
				}
	}
	qsort(w, (size_t)G, sizeof(double), cmp_desc);
	for (int gu = 1; gu <= G; gu++) {
		double t;

		sum += w[gu - 1];
		if (!(sum > 0))
			continue;
		t = mu * W * (double)C->total / sum;
		if (gu > tmax && np >= 2 && bw > 0)
			t += 2.0 * (gu - 1) * (lat + 8 * P / ((double)smax * gu *
			    bw * 1e9));
		best = fmin(best, t);
	}
	free(w);
	free(touch);
	free(last);
	free(present);
	/* Rounding must never make the bound pass the true value. */
	return best == HUGE_VAL ? 0 : best * (1 - 1e-9);
}

/* The shape of job j of jl in C's scratch (its units listed unless the
 * last job had them). */
static void
job_shape(struct ctx *C, const struct joblist *jl, size_t j,
    struct shape *sh)
{
	const struct job *jb = &jl->job[j];
	long gpus = cluster_gpus(C->x->c);

	if (C->units == NULL) {
		C->units = xcalloc((size_t)gpus, sizeof(struct unit));
		C->ord = xcalloc((size_t)gpus, sizeof(*C->ord));
		C->fast = xcalloc((size_t)gpus, sizeof(*C->fast));
		C->shS = xcalloc((size_t)gpus, sizeof(int));
		C->shoff = xcalloc((size_t)gpus, sizeof(int));
		C->cur_use = -1;
	}
	if (C->cur_use != jb->use || C->cur_k != jb->k) {
		C->cur_n = list_units(C, jl->use[jb->use], jb->k, C->units,
		    C->ord, C->fast);
		C->cur_use = jb->use;
		C->cur_k = jb->k;
	}
	memset(sh, 0, sizeof(*sh));
	job_units(C, C->cur_n, jb->S, jb->half, &sh->G);
	sh->S = C->shS;
	sh->off = C->shoff;
	sh->u = jb->half ? C->fast : C->ord;
	for (int g = 0; g < sh->G; g++) {
		sh->S[g] = jb->S;
		sh->off[g] = g * jb->S;
	}
}

/*
 * Run job j of jl on C.  Returns 0 when the job's lower bound cannot
 * beat the best plan so far: the jobs come in ascending order of their
 * bounds, so no later one can either.
 */
static int
run_job(struct ctx *C, const struct joblist *jl, size_t j)
{
	struct shape sh;

	job_shape(C, jl, j, &sh);
	C->job = (long)j;
	C->round = 0;
	if (cut(C, jl->job[j].lb)) {
		C->st->pruned++;
		return 0;
	}
	solve_shape(C, &sh);
	return 1;
}

static int
cmp_job(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Order the jobs best first: by their lower bounds (shape_bound()), ties
 * in the order they were listed.
 */
static void
order_jobs(struct ctx *C, struct joblist *jl)
{
	for (size_t j = 0; j < jl->n; j++) {
		struct shape sh;

		job_shape(C, jl, j, &sh);
		jl->job[j].lb = shape_bound(C, &sh);
		jl->job[j].seq = j;
	}
	qsort(jl->job, jl->n, sizeof(struct job), cmp_job);
}

/* Largest number of nodes for which node subsets are tried too. */
#define NODE_SUBSETS_MAX 64

static const double *rank_key;

static int
cmp_rank(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;

	if (rank_key[i] != rank_key[j])
		return rank_key[i] > rank_key[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * The node sets: every node together; then, on a multi-site cluster,
 * each site alone and the fastest 2, 4, 8 ... sites, since a ring over a
 * slow WAN link can cost more than the GPUs behind it bring; then (up to
 * 64 nodes) the fastest 1, 2, 4 ... nodes, since a data-parallel ring
 * inside one node can beat one that leaves it.
 */
static void
make_jobs(const struct ctx *C, struct joblist *jl)
{
	const struct dl_cluster *c = C->x->c;
	size_t ns = c->nsites, nn = c->nnodes;
	int *use = xcalloc(nn, sizeof(int));
	double *speed = xcalloc(ns, sizeof(double));
	double *nspeed = xcalloc(nn, sizeof(double));
	int *rank = xcalloc(ns > nn ? ns : nn, sizeof(int));

	for (size_t i = 0; i < nn; i++)
		use[i] = 1;
	add_jobs(C, jl, use);
	if (ns > 1) {
		for (size_t i = 0; i < nn; i++)
			speed[c->nodes[i].site_idx] += c->nodes[i].gpus *
			    C->x->speed[i];
		for (size_t s = 0; s < ns; s++)
			rank[s] = (int)s;
		rank_key = speed;
		qsort(rank, ns, sizeof(int), cmp_rank);
		for (size_t s = 0; s < ns && s < 16; s++) {
			for (size_t i = 0; i < nn; i++)
				use[i] = c->nodes[i].site_idx == (int)s;
			add_jobs(C, jl, use);
		}
		for (size_t top = 2; top < ns; top *= 2) {
			for (size_t i = 0; i < nn; i++) {
				use[i] = 0;
				for (size_t k = 0; k < top; k++)
					use[i] |= c->nodes[i].site_idx ==
					    rank[k];
			}
			add_jobs(C, jl, use);
		}
	}
	if (nn > 1 && nn <= NODE_SUBSETS_MAX) {
		for (size_t i = 0; i < nn; i++) {
			nspeed[i] = c->nodes[i].gpus * C->x->speed[i];
			rank[i] = (int)i;
		}
		rank_key = nspeed;
		qsort(rank, nn, sizeof(int), cmp_rank);
		for (size_t top = 1; top < nn; top *= 2) {
			memset(use, 0, nn * sizeof(int));
			for (size_t k = 0; k < top; k++)
				use[rank[k]] = 1;
			add_jobs(C, jl, use);
		}
	}
	free(use);
	free(speed);
	free(nspeed);
	free(rank);
}

/*
 * Start context C of a search over x (the caller keeps x, so and st):
 * empty caches, each freeing its own kind of value.
 */
static void
ctx_init(struct ctx *C, const struct dl_costctx *x,
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

/* Free what a context owns apart from the plans it points to. */
static void
ctx_free(struct ctx *C)
{
	tc_free(&C->tc);
	kc_free(&C->pc);
	kc_free(&C->fc);
	cids_free(&C->cid);
	cost_sitebound_free(&C->sb);
	kc_free(&C->rings);
	free(C->units);
	free(C->ord);
	free(C->fast);
	free(C->shS);
	free(C->shoff);
	C->units = NULL;
	C->ord = C->fast = NULL;
	C->shS = C->shoff = NULL;
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
		if (R->gfailed || pl->next >= pl->jl->n) {
			pthread_mutex_unlock(&pl->mu);
			break;
		}
		j = pl->next++;
		pthread_mutex_unlock(&pl->mu);
		if (!run_job(C, pl->jl, j)) {
			/* Every later job is cut too. */
			pthread_mutex_lock(&pl->mu);
			pl->next = pl->jl->n;
			pthread_mutex_unlock(&pl->mu);
			break;
		}
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

int
search_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > SEARCH_JOBS_MAX ? SEARCH_JOBS_MAX : (int)n;
}

/* Below this many GPUs the structured mode runs on one thread. */
#define THREADS_MIN_GPUS 256

/*
 * The structured mode: every job of make_jobs(), on so->jobs threads
 * (C itself is one of them; the others get their own router and caches,
 * which hold the same values, so the plan does not depend on the number
 * of threads, only how many plans are scored before the bounds cut the
 * rest does).
 */
static void
structured(struct ctx *C)
{
	struct joblist jl = { 0 };
	int nt = C->so->jobs > 1 ? C->so->jobs : 1;

	make_jobs(C, &jl);
	order_jobs(C, &jl);
	if (cluster_gpus(C->x->c) < THREADS_MIN_GPUS)
		nt = 1;
	if ((size_t)nt > jl.n)
		nt = (int)jl.n;
	if (nt <= 1) {
		for (size_t j = 0; j < jl.n && !C->failed; j++)
			if (!run_job(C, &jl, j))
				break;
	} else {
		struct pool pl;
		struct ctx *W = xcalloc((size_t)nt, sizeof(*W));
		struct search_stats *ws = xcalloc((size_t)nt, sizeof(*ws));
		pthread_t *tid = xcalloc((size_t)nt, sizeof(*tid));

		pthread_mutex_init(&pl.mu, NULL);
		pl.root = C;
		pl.jl = &jl;
		pl.next = 0;
		C->pool = &pl;
		for (int i = 1; i < nt; i++) {
			struct dl_costctx *xc = xmalloc(sizeof(*xc));

			*xc = *C->x;
			if (C->x->router != NULL)
				router_clone(&xc->router, C->x->router);
			ctx_init(&W[i], xc, C->so, &ws[i]);
			xc->rings = &W[i].rings;
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
			C->st->structures += ws[i].structures;
			C->st->evaluated += ws[i].evaluated;
			C->st->pruned += ws[i].pruned;
			C->st->milps += ws[i].milps;
			plan_free(&W[i].work);
			ctx_free(&W[i]);
			router_free(xc->router);
			free(xc);
		}
		C->pool = NULL;
		pthread_mutex_destroy(&pl.mu);
		if (C->gfailed && !C->failed) {
			C->failed = 1;
			C->err = C->gerr;
		}
		free(W);
		free(ws);
		free(tid);
	}
	/* Anything scored later comes after every job. */
	C->job = (long)jl.n;
	C->round = 0;
	joblist_free(&jl);
}

/*
 * The exhaustive mode.  Units: every way to split each node's GPUs into
 * TP groups of 1, 2, 4, 8 (non-increasing sizes, some GPUs may stay
 * idle).  Shapes: every assignment of units to ordered pipelines (each
 * unit unused, or inserted at any position of an existing pipeline, or
 * starting a new one), then every order of the pipelines.  Shapes that
 * differ only by swapping identical units of one node are scored once.
 */
struct exh {
	struct ctx *C;
	struct unit units[64];
	int nunits;
	/* The shape being built. */
	int G;
	int len[64];
	int mem[64][64];	/* unit indices per group */
	char **seen;
	size_t nseen, capseen;
	int perm[64];
};

static int
seen_add(struct exh *X, const char *sig)
{
	for (size_t i = 0; i < X->nseen; i++)
		if (strcmp(X->seen[i], sig) == 0)
			return 0;
	X->seen = xgrow(X->seen, &X->capseen, X->nseen + 1, sizeof(char *));
	X->seen[X->nseen++] = xstrdup(sig);
	return 1;
}

/* Boundaries of S stages over L layers: next composition, in place. */
static int
next_cut(int *last, int S, int L)
{
	/* last[S-1] = L-1 always; last[0..S-2] strictly increasing. */
	for (int j = S - 2; j >= 0; j--) {
		if (last[j] < L - 1 - (S - 1 - j)) {
			last[j]++;
			for (int i = j + 1; i < S - 1; i++)
				last[i] = last[i - 1] + 1;
			return 1;
		}
	}
	return 0;
}

static void
first_cut(int *last, int S, int L)
{
	for (int j = 0; j < S; j++)
		last[j] = j;
	last[S - 1] = L - 1;
}

/*
 * Compute-only sum and bottleneck of one group with these boundaries at
 * m = 1, or 0 when a GPU's memory is exceeded even then.
 */
static int
group_comp(const struct ctx *C, const struct shape *sh, int g, const int *last,
    double *sum, double *bt)
{
	int S = sh->S[g];

	*sum = *bt = 0;
	for (int j = 0, a = 0; j < S; j++) {
		const struct unit *u = sh->u[sh->off[g] + j];
		double t;

		if (cost_stage_memory(C->x, a, last[j], 1.0 / u->k, j + 1, S,
		    1) > cost_gpu_capacity(C->x, u->node))
			return 0;
		t = cost_stage_compute(C->x, u->node, u->k, a, last[j]);
		*sum += t;
		*bt = fmax(*bt, t);
		a = last[j] + 1;
	}
	return 1;
}

/* The memory cap on m of group g with boundaries last. */
static long
group_cap(const struct ctx *C, const struct shape *sh, int g, const int *last)
{
	int S = sh->S[g], node[64], k[64];

	for (int j = 0; j < S; j++) {
		node[j] = sh->u[sh->off[g] + j]->node;
		k[j] = sh->u[sh->off[g] + j]->k;
	}
	return part_mcap(C->x, S, k, node, last);
}

/* Boundaries kept for one group, with their compute-only A and M. */
struct cutlist {
	int n, S;
	int *last;		/* n x S */
	double *A, *M;
	long *cap;		/* memory cap on m */
};

/*
 * One combination of boundaries.  The micro-batch split does not change
 * any transfer (sizes depend on the micro-batch, the order of flows on
 * their sizes and the plan order) nor the sync, so one evaluation gives
 * every group's A_g and M_g as priced, and the best split for them is the
 * exact threshold search; a second evaluation scores that plan.  A
 * compute-only split first bounds the combination from below.
 */
static void
exh_combo(struct exh *X, const struct shape *sh, int **cur, const double *Ac,
    const double *Mc, const long *caps)
{
	struct ctx *C = X->C;
	struct split_group sg[64];
	long m[64];
	double z;
	int st;
	struct dl_err e = { 0 };

	for (int g = 0; g < sh->G; g++) {
		sg[g].A = Ac[g];
		sg[g].M = Mc[g];
		sg[g].cap = caps[g];
	}
	split_exact_all(sg, sh->G, C->total, m, &z, &st);
	if (st != LP_OPTIMAL || (C->have_best && z >= C->best_t)) {
		C->st->pruned++;
		return;
	}
	build_plan(C, &C->work, sh, cur, m);
	C->st->evaluated++;
	if (cost_eval(C->x, &C->work, &e) != DL_OK)
		return;
	for (int g = 0; g < sh->G; g++) {
		const struct dl_group *gr = &C->work.groups[g];
		double A = 0, M = 0;

		for (int j = 0; j < gr->nstages; j++) {
			const struct dl_stage *s = &gr->stages[j];

			A += s->compute_s + s->p2p_s;
			M = fmax(M, fmax(s->compute_s, s->p2p_s));
		}
		sg[g].A = A;
		sg[g].M = M;
	}
	{
		double sync = C->work.est.sync_s;

		split_exact_all(sg, sh->G, C->total, m, &z, &st);
		if (st != LP_OPTIMAL || (C->have_best && z + sync >=
		    C->best_t * (1 + 1e-12)))
			return;
	}
	build_plan(C, &C->work, sh, cur, m);
	consider(C);
}

static void
exh_product(struct exh *X, const struct shape *sh, int g,
    const struct cutlist *cl, int **cur, double *Ac, double *Mc, long *caps)
{
	struct ctx *C = X->C;

	if (C->failed)
		return;
	if (g == sh->G) {
		exh_combo(X, sh, cur, Ac, Mc, caps);
		return;
	}
	for (int i = 0; i < cl[g].n; i++) {
		cur[g] = cl[g].last + (size_t)i * (size_t)cl[g].S;
		Ac[g] = cl[g].A[i];
		Mc[g] = cl[g].M[i];
		caps[g] = cl[g].cap[i];
		exh_product(X, sh, g + 1, cl, cur, Ac, Mc, caps);
	}
}

/*
 * Least compute-only sum and least bottleneck over every boundary choice
 * of group g that fits in memory at one micro-batch (two small DPs).
 * Returns 0 when none fits.
 */
static int
group_bounds(const struct ctx *C, const struct shape *sh, int g, double *amin,
    double *mmin)
{
	int S = sh->S[g], L = C->L;
	double *fs = xcalloc((size_t)S * (size_t)L, sizeof(double));
	double *fm = xcalloc((size_t)S * (size_t)L, sizeof(double));

	for (int j = 0; j < S; j++) {
		const struct unit *u = sh->u[sh->off[g] + j];

		for (int b = 0; b < L; b++) {
			double bs = HUGE_VAL, bm = HUGE_VAL;

			if (!(b < j || L - 1 - b < S - 1 - j))
				for (int a = j; a <= b; a++) {
					double ps = j == 0 ? (a == 0 ? 0 :
					    HUGE_VAL) : fs[(j - 1) * L + a - 1];
					double pm = j == 0 ? (a == 0 ? 0 :
					    HUGE_VAL) : fm[(j - 1) * L + a - 1];
					double t;

					if (ps == HUGE_VAL || cost_stage_memory(
					    C->x, a, b, 1.0 / u->k, j + 1, S, 1) >
					    cost_gpu_capacity(C->x, u->node))
						continue;
					t = cost_stage_compute(C->x, u->node,
					    u->k, a, b);
					bs = fmin(bs, ps + t);
					bm = fmin(bm, fmax(pm, t));
				}
			fs[j * L + b] = bs;
			fm[j * L + b] = bm;
		}
	}
	*amin = fs[(S - 1) * L + L - 1];
	*mmin = fm[(S - 1) * L + L - 1];
	free(fs);
	free(fm);
	return *amin < HUGE_VAL;
}

/* All boundary combinations of a shape (each group's list pruned by its
 * compute-only time at one micro-batch, a bound on any T). */
static void
exh_cuts(struct exh *X, const struct shape *sh)
{
	struct ctx *C = X->C;
	struct cutlist *cl = xcalloc((size_t)sh->G, sizeof(*cl));
	int **cur = xcalloc((size_t)sh->G, sizeof(int *));
	double *Ac = xcalloc((size_t)sh->G, sizeof(double));
	double *Mc = xcalloc((size_t)sh->G, sizeof(double));
	long *caps = xcalloc((size_t)sh->G, sizeof(long));
	int *last = xcalloc((size_t)C->L, sizeof(int));
	int prune = 0;

	/*
	 * The shape as a whole: every group at its least sum and least
	 * bottleneck, split at best, is a bound on every combination.
	 */
	struct split_group sg[64];

	{
		long m[64];
		double z;
		int st;

		for (int q = 0; q < sh->G && !prune; q++) {
			sg[q].cap = LONG_MAX;
			if (!group_bounds(C, sh, q, &sg[q].A, &sg[q].M))
				prune = 1;
		}
		if (!prune) {
			split_exact_all(sg, sh->G, C->total, m, &z, &st);
			if (st != LP_OPTIMAL || (C->have_best &&
			    z >= C->best_t))
				prune = 1;
		}
	}
	for (int q = 0; q < sh->G && !prune; q++) {
		size_t cap = 0, cap2 = 0, cap3 = 0, cap4 = 0;
		int S = sh->S[q];

		cl[q].S = S;
		first_cut(last, S, C->L);
		do {
			double sum, bt;

			if (!group_comp(C, sh, q, last, &sum, &bt) ||
			    (C->have_best && sum >= C->best_t))
				continue;
			/* This cut with every other group at its best. */
			if (C->have_best && sh->G > 1) {
				struct split_group one = sg[q];
				long m[64];
				double z;
				int st;

				sg[q].A = sum;
				sg[q].M = bt;
				split_exact_all(sg, sh->G, C->total, m, &z,
				    &st);
				sg[q] = one;
				if (st != LP_OPTIMAL || z >= C->best_t)
					continue;
			}
			cl[q].last = xgrow(cl[q].last, &cap, (size_t)(cl[q].n +
			    1) * (size_t)S, sizeof(int));
			cl[q].A = xgrow(cl[q].A, &cap2, (size_t)cl[q].n + 1,
			    sizeof(double));
			cl[q].M = xgrow(cl[q].M, &cap3, (size_t)cl[q].n + 1,
			    sizeof(double));
			cl[q].cap = xgrow(cl[q].cap, &cap4, (size_t)cl[q].n + 1,
			    sizeof(long));
			cl[q].cap[cl[q].n] = group_cap(C, sh, q, last);
			memcpy(cl[q].last + (size_t)cl[q].n * (size_t)S, last,
			    (size_t)S * sizeof(int));
			cl[q].A[cl[q].n] = sum;
			cl[q].M[cl[q].n] = bt;
			cl[q].n++;
		} while (next_cut(last, S, C->L));
		if (cl[q].n == 0)
			prune = 1;
	}
	if (prune)
		C->st->pruned++;
	else
		exh_product(X, sh, 0, cl, cur, Ac, Mc, caps);
	for (int q = 0; q < sh->G; q++) {
		free(cl[q].cap);
		free(cl[q].last);
		free(cl[q].A);
		free(cl[q].M);
	}
	free(cl);
	free(cur);
	free(Ac);
	free(Mc);
	free(caps);
	free(last);
}

/* Score one shape (groups in the order of X->perm). */
static void
exh_shape(struct exh *X)
{
	struct ctx *C = X->C;
	struct shape sh;
	const struct unit *u[64];
	int S[64], off[64], n = 0;
	struct strbuf sig = STRBUF_INIT;

	sh.G = X->G;
	sh.S = S;
	sh.off = off;
	sh.u = u;
	for (int q = 0; q < X->G; q++) {
		int g = X->perm[q];

		S[q] = X->len[g];
		off[q] = n;
		for (int j = 0; j < X->len[g]; j++) {
			const struct unit *un = &X->units[X->mem[g][j]];

			u[n++] = un;
			sb_addf(&sig, "%d.%d,", un->node, un->k);
		}
		sb_addc(&sig, '|');
	}
	if (sh.G == 0 || sh.G > C->total || !strategy_allows(C->so->strategy,
	    &sh) || !seen_add(X, sig.buf)) {
		sb_free(&sig);
		return;
	}
	sb_free(&sig);
	for (int q = 0; q < sh.G; q++)
		if (S[q] > C->L)
			return;
	C->st->structures++;
	exh_cuts(X, &sh);
}

/* Every order of the current groups. */
static void
exh_perms(struct exh *X, int q)
{
	if (q == X->G) {
		exh_shape(X);
		return;
	}
	for (int i = q; i < X->G; i++) {
		int t = X->perm[q];

		X->perm[q] = X->perm[i];
		X->perm[i] = t;
		exh_perms(X, q + 1);
		t = X->perm[q];
		X->perm[q] = X->perm[i];
		X->perm[i] = t;
	}
}

/* Place unit i: unused, into any position of a group, or a new group. */
static void
exh_place(struct exh *X, int i)
{
	if (X->C->failed)
		return;
	if (i == X->nunits) {
		for (int q = 0; q < X->G; q++)
			X->perm[q] = q;
		exh_perms(X, 0);
		return;
	}
	exh_place(X, i + 1);
	for (int g = 0; g < X->G; g++) {
		for (int p = 0; p <= X->len[g]; p++) {
			memmove(&X->mem[g][p + 1], &X->mem[g][p],
			    (size_t)(X->len[g] - p) * sizeof(int));
			X->mem[g][p] = i;
			X->len[g]++;
			exh_place(X, i + 1);
			X->len[g]--;
			memmove(&X->mem[g][p], &X->mem[g][p + 1],
			    (size_t)(X->len[g] - p) * sizeof(int));
		}
	}
	X->mem[X->G][0] = i;
	X->len[X->G] = 1;
	X->G++;
	exh_place(X, i + 1);
	X->G--;
}

/* Every split of node i's GPUs into units (sizes non-increasing). */
static void
exh_units(struct exh *X, size_t node, int left, int maxk, int gpu)
{
	const struct dl_costctx *x = X->C->x;

	if (X->C->failed)
		return;
	if (node == x->c->nnodes) {
		exh_place(X, 0);
		return;
	}
	/* Leave the rest of this node idle and go on. */
	exh_units(X, node + 1, node + 1 < x->c->nnodes ?
	    x->c->nodes[node + 1].gpus : 0, DL_MAX_TP, 0);
	for (int k = maxk; k >= 1; k /= 2) {
		struct unit *u;

		if (k > left || k > x->o->max_tp)
			continue;
		u = &X->units[X->nunits++];
		u->node = (int)node;
		u->k = k;
		u->gpu0 = gpu;
		u->speed = k * x->speed[node];
		exh_units(X, node, left - k, k, gpu + k);
		X->nunits--;
	}
}

static void
exhaustive(struct ctx *C)
{
	struct exh *X = xcalloc(1, sizeof(*X));

	X->C = C;
	exh_units(X, 0, C->x->c->nodes[0].gpus, DL_MAX_TP, 0);
	for (size_t i = 0; i < X->nseen; i++)
		free(X->seen[i]);
	free(X->seen);
	free(X);
}

/* The fallback for the error message: every unit in one pipeline. */
static void
explain_infeasible(struct ctx *C)
{
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	size_t n = make_units(x, x->o->max_tp < DL_MAX_TP ? x->o->max_tp :
	    DL_MAX_TP, units);
	const struct unit **ord = xcalloc(n, sizeof(*ord));
	int S = (int)n < C->L ? (int)n : C->L, off = 0;
	int *last = xcalloc((size_t)S, sizeof(int));
	double per = model_params(x->m) / S, acc = 0;
	struct shape sh;
	long m = C->total;
	int *lp = last;

	for (size_t i = 0; i < n; i++)
		ord[i] = &units[i];
	qsort(ord, n, sizeof(*ord), cmp_unit);
	/* Cut where the running parameter count passes each share. */
	for (int l = 0, j = 0; l < C->L && j < S - 1; l++) {
		acc += x->m->layers[l].params_m * 1e6;
		if (acc >= per * (j + 1) || C->L - 1 - l == S - 1 - j)
			last[j++] = l;
	}
	last[S - 1] = C->L - 1;
	for (int j = 1; j < S - 1; j++)
		if (last[j] <= last[j - 1])
			last[j] = last[j - 1] + 1;
	sh.G = 1;
	sh.S = &S;
	sh.off = &off;
	sh.u = ord;
	build_plan(C, &C->work, &sh, &lp, &m);
	consider(C);
	free(units);
	free(ord);
	free(last);
}

/*
 * Automatic exhaustive search: at most 6 GPUs, and at most this many
 * boundary choices for one pipeline (C(L-1, S-1) for S up to the GPUs),
 * which keeps it to seconds; --exact yes lifts the second limit.
 */
#define EXACT_CUTS_MAX 2e5

static double
cut_space(const struct dl_costctx *x, long gpus)
{
	double L = (double)x->m->nlayers, c = 1, most = 1;

	/* c = C(L-1, S-1) for S = 1 .. min(gpus, L). */
	for (long S = 2; S <= gpus && S <= (long)L; S++) {
		c = c * (L - (double)S + 1) / (double)(S - 1);
		most = fmax(most, c);
	}
	return most;
}

int
search_plan(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, struct dl_err *e)
{
	struct dl_costctx xl;
	struct ctx C;
	double t0 = now();
	long gpus = cluster_gpus(x->c);
	int exact = so->exact < 0 ? gpus <= 6 && cut_space(x, gpus) <=
	    EXACT_CUTS_MAX : so->exact, none;

	memset(st, 0, sizeof(*st));
	plan_init(best);
	/* The same context, with a cache of ring orders of its own. */
	xl = *x;
	ctx_init(&C, &xl, so, st);
	xl.rings = &C.rings;
	C.best = best;
	if (exact && gpus > 12) {
		plan_free(&C.work);
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "exhaustive search "
		    "is limited to 12 GPUs (this cluster has %ld)", gpus);
	}
	structured(&C);
	if (exact && !C.failed)
		exhaustive(&C);
	st->exact = exact && !C.failed;
	none = !C.have_best && !C.failed;
	if (none)
		explain_infeasible(&C);
	ctx_free(&C);
	if (none) {
		plan_free(&C.work);
		if (C.have_best) {
			/* Only the strategy or the limits kept it out. */
			plan_free(best);
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan "
			    "with the chosen strategy and limits fits in "
			    "memory (a single pipeline over all GPUs would; "
			    "try --strategy auto)");
		}
		if (C.have_infeas) {
			char why[sizeof(e->msg)];

			snprintf(why, sizeof(why), "%s", C.infeas.msg);
			*e = C.infeas;
			snprintf(e->msg, sizeof(e->msg), "no plan fits in GPU "
			    "memory; even one pipeline over every GPU fails: "
			    "%.1400s", why);
			return e->code;
		}
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan fits the "
		    "strategy and limits given");
	}
	plan_free(&C.work);
	if (C.failed) {
		*e = C.err;
		return e->code ? e->code : DL_ESYS;
	}
	/*
	 * The two data-parallel baselines over the chosen GPUs are plans of
	 * the same space; the structured mode may miss one that fits.
	 */
	for (int kind = COST_EVEN; kind <= COST_PROPORTIONAL && !st->exact;
	    kind++) {
		struct dl_plan b;
		struct dl_err be = { 0 };

		if (cost_baseline(x, best, kind, &b, &be) == DL_OK &&
		    b.est.iteration_s < best->est.iteration_s &&
		    (C.so->strategy == STRAT_AUTO || C.so->strategy ==
		    STRAT_DP)) {
			plan_free(best);
			plan_copy(best, &b);
			st->evaluated++;
		}
		plan_free(&b);
	}
	st->time_s = now() - t0;
	snprintf(best->status, sizeof(best->status), "%s", st->exact ?
	    "optimal" : "feasible");
	best->bound_s = st->exact ? best->est.iteration_s :
	    best->est.lower_bound_s;
	best->gap = best->est.iteration_s > 0 ? (best->est.iteration_s -
	    best->bound_s) / best->est.iteration_s : 0;
	best->solve_s = st->time_s;
	return DL_OK;
}

int
search_dump(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_plan *p, struct dl_err *e)
{
	struct ctx C;
	struct search_stats st;
	struct shape sh;
	struct unit *units;
	const struct unit **up;
	struct split_group *sg;
	long *m;
	double z;
	int n = 0, rc, status;
	struct strbuf path = STRBUF_INIT, objs = STRBUF_INIT;

	if ((rc = mkdir_p(so->dump_dir, e)) != DL_OK)
		return rc;
	memset(&C, 0, sizeof(C));
	memset(&st, 0, sizeof(st));
	C.x = x;
	C.so = so;
	C.st = &st;
	C.L = (int)x->m->nlayers;
	C.total = x->o->global_batch / x->o->micro_batch;
	sh.G = p->ngroups;
	sh.S = xcalloc((size_t)p->ngroups, sizeof(int));
	sh.off = xcalloc((size_t)p->ngroups, sizeof(int));
	for (int g = 0; g < p->ngroups; g++)
		n += p->groups[g].nstages;
	units = xcalloc((size_t)n, sizeof(*units));
	up = xcalloc((size_t)n, sizeof(*up));
	sg = xcalloc((size_t)p->ngroups, sizeof(*sg));
	m = xcalloc((size_t)p->ngroups, sizeof(long));
	n = 0;
	for (int g = 0; g < p->ngroups; g++) {
		sh.S[g] = p->groups[g].nstages;
		sh.off[g] = n;
		for (int j = 0; j < sh.S[g]; j++) {
			const struct dl_stage *s = &p->groups[g].stages[j];

			units[n].node = s->node;
			units[n].k = s->ngpus;
			units[n].gpu0 = s->gpus[0];
			up[n] = &units[n];
			n++;
		}
	}
	sh.u = up;
	rc = DL_OK;
	for (int g = 0; g < p->ngroups && rc == DL_OK; g++) {
		struct part_result r;
		const struct dl_group *gr = &p->groups[g];
		double A = 0, M = 0;

		sb_reset(&path);
		sb_addf(&path, "%s/partition-g%d.lp", so->dump_dir, g);
		if (sh.S[g] < 2) {
			/* One stage: nothing to partition, no program. */
			for (int j = 0; j < 1; j++) {
				A = cost_stage_compute(x, gr->stages[0].node,
				    gr->stages[0].ngpus, 0, C.L - 1);
				M = A;
			}
		} else {
			struct commctx cc;
			int *node = xcalloc((size_t)sh.S[g], sizeof(int));
			int *k = xcalloc((size_t)sh.S[g], sizeof(int));
			struct part_group pg = { 0 };
			struct lp_params prm = { so->time_limit, 0 };

			for (int j = 0; j < sh.S[g]; j++) {
				node[j] = gr->stages[j].node;
				k[j] = gr->stages[j].ngpus;
			}
			cc.x = x;
			cc.node = node;
			cc.zero = 0;
			cc.cache = NULL;
			pg.S = sh.S[g];
			pg.node = node;
			pg.k = k;
			pg.m = gr->micro_batches;
			pg.comm = comm_cb;
			pg.ctx = &cc;
			rc = part_milp(x, &pg, NULL, &prm, path.buf, &r, e);
			if (rc == DL_OK) {
				sb_addf(&objs, "partition-g%d.lp %s ", g,
				    lp_status_name(r.status));
				sb_adddbl(&objs, r.obj);
				sb_addc(&objs, '\n');
				part_result_free(&r);
			}
			for (int j = 0, a = 0; j < sh.S[g]; j++) {
				double t = cost_stage_compute(x, node[j], k[j],
				    a, gr->stages[j].last);
				double c = j + 1 < sh.S[g] ? comm_cb(&cc, j,
				    (double)x->o->micro_batch *
				    x->m->layers[gr->stages[j].last].act_mb *
				    1e6) : 0;

				A += t + c;
				M = fmax(M, fmax(t, c));
				a = gr->stages[j].last + 1;
			}
			free(node);
			free(k);
		}
		sg[g].A = A;
		sg[g].M = M;
		sg[g].cap = LONG_MAX;
	}
	if (rc == DL_OK && p->ngroups > 1) {
		struct lp_params prm = { so->time_limit, 0 };

		sb_reset(&path);
		sb_addf(&path, "%s/split.lp", so->dump_dir);
		for (int g = 0; g < p->ngroups; g++) {
			const struct dl_group *gr = &p->groups[g];
			int *node = xcalloc((size_t)gr->nstages, sizeof(int));
			int *k = xcalloc((size_t)gr->nstages, sizeof(int));
			int *last = xcalloc((size_t)gr->nstages, sizeof(int));

			for (int j = 0; j < gr->nstages; j++) {
				node[j] = gr->stages[j].node;
				k[j] = gr->stages[j].ngpus;
				last[j] = gr->stages[j].last;
			}
			sg[g].cap = part_mcap(x, gr->nstages, k, node, last);
			free(node);
			free(k);
			free(last);
		}
		rc = split_milp(sg, p->ngroups, C.total, &prm, path.buf, m, &z,
		    &status, e);
		if (rc == DL_OK) {
			sb_addf(&objs, "split.lp %s ", lp_status_name(status));
			sb_adddbl(&objs, z);
			sb_addc(&objs, '\n');
		}
	}
	/* What GLPK found, for comparison with glpsol or cbc. */
	if (rc == DL_OK) {
		sb_reset(&path);
		sb_addf(&path, "%s/objectives.txt", so->dump_dir);
		rc = af_write_file(path.buf, objs.buf ? objs.buf : "",
		    objs.len, e);
	}
	sb_free(&objs);
	sb_free(&path);
	free(sh.S);
	free(sh.off);
	free(units);
	free(up);
	free(sg);
	free(m);
	return rc;
}
