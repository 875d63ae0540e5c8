/*
 * partition.c - layer partition (DESIGN.md 5.3) and data split (5.2).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition.h"

/* Per-group tables shared by the DP and the MILP. */
struct tab {
	int S, L;
	const double **comm;	/* S rows of L: c_j if stage j ends at layer l */
	double *own;		/* the rows when computed here */
	double *cap;		/* S: usable bytes per GPU of unit j */
	double *phi;		/* S: largest TP share of unit j */
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
tab_init(struct tab *T, const struct dl_costctx *x, const struct part_group *g)
{
	const struct dl_model *m = x->m;
	double mu = (double)x->o->micro_batch;

	T->S = g->S;
	T->L = (int)m->nlayers;
	T->comm = xcalloc((size_t)T->S, sizeof(double *));
	T->own = g->commv ? NULL : xcalloc((size_t)T->S * (size_t)T->L,
	    sizeof(double));
	T->cap = xcalloc((size_t)T->S, sizeof(double));
	T->phi = xcalloc((size_t)T->S, sizeof(double));
	for (int j = 0; j < T->S; j++) {
		T->cap[j] = cost_gpu_capacity(x, g->node[j]);
		T->phi[j] = 1.0 / g->k[j];
		if (j == T->S - 1)
			continue;
		if (g->commv) {
			T->comm[j] = g->commv[j];
			continue;
		}
		for (int l = 0; l < T->L; l++)
			T->own[j * T->L + l] = g->comm(g->ctx, j,
			    mu * m->layers[l].act_mb * 1e6);
		T->comm[j] = T->own + j * T->L;
	}
}

static void
tab_free(struct tab *T)
{
	free(T->comm);
	free(T->own);
	free(T->cap);
	free(T->phi);
}

/* Stage j holding layers [a, b]: time t, transfer c, memory fit. */
static int
stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b, double *t, double *c)
{
	double mem = cost_stage_memory(x, a, b, T->phi[j], j + 1, g->S, g->m);

	if (mem > T->cap[j])
		return 0;
	*t = cost_stage_compute(x, g->node[j], g->k[j], a, b);
	*c = j < g->S - 1 ? T->comm[j][b] : 0;
	return isfinite(*c);	/* no route: not a usable boundary */
}

/*
 * Both DPs below scan the first layer a of stage j downwards from its last
 * layer b: a stage's memory and compute time only grow as it takes more
 * layers, so the scan stops at the first a that does not fit or is already
 * too slow.  Ties go to the smallest a, as an upward scan with a strict
 * comparison would give.
 */

/*
 * Least sum of (t + c) over partitions whose every stage has
 * max(t, c) <= B; the argmin's stage ends go to last[].  Returns HUGE_VAL
 * when none exists.  f and arg are (S x L) scratch.
 */
static double
sum_dp(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double B, double *f, int *arg, int *last)
{
	int S = T->S, L = T->L;
	double t, c;

	for (int j = 0; j < S; j++) {
		for (int b = 0; b < L; b++) {
			double best = HUGE_VAL;
			int ba = -1;

			f[j * L + b] = HUGE_VAL;
			arg[j * L + b] = -1;
			/* Stage j needs j layers before it and S-1-j after. */
			if (b < j || L - 1 - b < S - 1 - j)
				continue;
			for (int a = b; a >= j; a--) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];
				double v;

				if (!stage(x, g, T, j, a, b, &t, &c) || t > B)
					break;
				if (prev == HUGE_VAL || c > B)
					continue;
				v = prev + t + c;
				if (v <= best) {
					best = v;
					ba = a;
				}
			}
			f[j * L + b] = best;
			arg[j * L + b] = ba;
		}
	}
	if (f[(S - 1) * L + L - 1] == HUGE_VAL)
		return HUGE_VAL;
	for (int j = S - 1, b = L - 1; j >= 0; j--) {
		last[j] = b;
		b = arg[j * L + b] - 1;
	}
	return f[(S - 1) * L + L - 1];
}

/* Least bottleneck max_j max(t_j, c_j) over feasible partitions. */
static double
minmax_dp(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double *f)
{
	int S = T->S, L = T->L;
	double t, c;

	for (int j = 0; j < S; j++)
		for (int b = 0; b < L; b++) {
			double best = HUGE_VAL;

			if (!(b < j || L - 1 - b < S - 1 - j))
				for (int a = b; a >= j; a--) {
					double prev = j == 0 ? (a == 0 ? 0 :
					    HUGE_VAL) : f[(j - 1) * L + a - 1];

					if (!stage(x, g, T, j, a, b, &t, &c) ||
					    t >= best)
						break;
					if (prev == HUGE_VAL)
						continue;
					if (fmax(prev, fmax(t, c)) < best)
						best = fmax(prev, fmax(t, c));
				}
			f[j * L + b] = best;
		}
	return f[(S - 1) * L + L - 1];
}

/*
 * The frontier.  For a candidate bottleneck B, sum_dp() does not depend on
 * m, and neither do the memory rows once m >= S (a stage never holds more
 * than S - p + 1 micro-batches).  The frontier keeps, in scan order, the
 * points (B, least sum, true bottleneck, stage ends) that no earlier point
 * dominates (a point with sum and bottleneck both no smaller than an
 * earlier one's never wins: ties go to the earlier).  T(m) is the least
 * sum + (m - 1) * bottleneck over them; the scan is extended only as far
 * as a query needs.
 *
 * That the answer equals a scan for that m alone: the scan for m stops at
 * the first candidate B_i with sinf + (m - 1) B_i >= the best so far; a
 * later point that is not dominated has bottleneck B_i exactly (one below
 * B_i is itself an earlier candidate, whose point is at least as good),
 * so its value is at least that bound and cannot be strictly better.
 */
struct part_front {
	const struct dl_costctx *x;
	struct part_group g;	/* node and k owned; m = min(m, S) */
	struct tab T;
	long max_scan;		/* candidates a query may scan (0: all) */
	int status;		/* LP_INFEASIBLE, or LP_OPTIMAL */
	double sinf;		/* least sum, any bottleneck */
	int *sinf_last;
	double bmin;		/* least bottleneck */
	double *cand;		/* distinct candidate bottlenecks, ascending */
	size_t ncand;		/* of them kept in cand */
	size_t nall;		/* of them in all (up to max_scan + 1), or
				 * SIZE_MAX until known */
	size_t next;		/* index of the first not scanned */
	size_t n, cap;		/* points */
	double *psum, *pbt;
	size_t *pidx;
	int *plast;		/* n x S */
	double *f;
	int *arg, *tmp;
};

/* Allocate the DP scratch of F (need), or free it. */
static void
front_scratch(struct part_front *F, int need)
{
	size_t n = (size_t)F->g.S * (size_t)F->T.L;

	if (need && F->f == NULL) {
		F->f = xcalloc(n, sizeof(double));
		F->arg = xcalloc(n, sizeof(int));
		F->tmp = xcalloc((size_t)F->g.S, sizeof(int));
	} else if (!need) {
		free(F->f);
		free(F->arg);
		free(F->tmp);
		F->f = NULL;
		F->arg = NULL;
		F->tmp = NULL;
	}
}

/* Candidates a frontier keeps between queries; more are listed again. */
#define FRONT_KEEP 64

/*
 * The candidate lists.  For stage j ending at layer b, the stages [a, b]
 * for a = b, b - 1, ... j give max(t, c) in ascending order (t grows with
 * every layer taken, c depends on b only) until the first that does not
 * fit in memory.  A heap merges these S x L sorted lists.
 */
struct cheap {
	double *v;
	int *j, *b, *a;
	size_t n;
};

static void
cheap_push(struct cheap *h, double v, int j, int b, int a)
{
	size_t i = h->n++;

	/* Ties by (j, b): the order is fixed, although only values count. */
	for (; i > 0; i = (i - 1) / 2) {
		size_t p = (i - 1) / 2;

		if (h->v[p] < v || (h->v[p] == v && (h->j[p] < j ||
		    (h->j[p] == j && h->b[p] < b))))
			break;
		h->v[i] = h->v[p];
		h->j[i] = h->j[p];
		h->b[i] = h->b[p];
		h->a[i] = h->a[p];
	}
	h->v[i] = v;
	h->j[i] = j;
	h->b[i] = b;
	h->a[i] = a;
}

/* Sift the entry (v, j, b, a) down from slot i of a heap of n. */
static void
cheap_sift(struct cheap *h, size_t i, size_t n, double v, int j, int b, int a)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && (h->v[c + 1] < h->v[c] || (h->v[c + 1] ==
		    h->v[c] && (h->j[c + 1] < h->j[c] || (h->j[c + 1] ==
		    h->j[c] && h->b[c + 1] < h->b[c])))))
			c++;
		if (v < h->v[c] || (v == h->v[c] && (j < h->j[c] ||
		    (j == h->j[c] && b < h->b[c]))))
			break;
		h->v[i] = h->v[c];
		h->j[i] = h->j[c];
		h->b[i] = h->b[c];
		h->a[i] = h->a[c];
		i = c;
	}
	h->v[i] = v;
	h->j[i] = j;
	h->b[i] = b;
	h->a[i] = a;
}

static void
cheap_pop(struct cheap *h)
{
	size_t n = --h->n;

	cheap_sift(h, 0, n, h->v[n], h->j[n], h->b[n], h->a[n]);
}

/* Make the n entries appended unordered into a heap (Floyd). */
static void
cheap_heapify(struct cheap *h)
{
	for (size_t i = h->n / 2; i-- > 0;)
		cheap_sift(h, i, h->n, h->v[i], h->j[i], h->b[i], h->a[i]);
}

/*
 * List the distinct candidate bottlenecks, every feasible stage's
 * max(t, c) >= bmin, ascending: the first keep of them (0: all), and
 * never more than a query can look at (max_scan + 1).  F->nall becomes
 * their exact number when the listing reached the end, else stays
 * unknown (SIZE_MAX) unless known before.
 */
static void
front_cands(struct part_front *F, size_t keep)
{
	const struct dl_costctx *x = F->x;
	int S = F->g.S, L = F->T.L;
	size_t cap = F->max_scan > 0 ? (size_t)F->max_scan + 1 : SIZE_MAX;
	size_t want = keep > 0 && keep < cap ? keep : cap, got = 0, room;
	struct cheap h;
	double t, c;

	h.n = 0;
	h.v = xcalloc((size_t)S * (size_t)L, sizeof(double));
	h.j = xcalloc((size_t)S * (size_t)L, sizeof(int));
	h.b = xcalloc((size_t)S * (size_t)L, sizeof(int));
	h.a = xcalloc((size_t)S * (size_t)L, sizeof(int));
	for (int j = 0; j < S; j++)
		for (int b = j; b < L; b++) {
			int lo = j, hi = b, a;

			c = j < S - 1 ? F->T.comm[j][b] : 0;
			if (!isfinite(c))
				continue;
			/* The first a (from b down) with max(t, c) >= bmin. */
			if (c < F->bmin) {
				if (cost_stage_compute(x, F->g.node[j],
				    F->g.k[j], j, b) < F->bmin)
					continue;
				while (lo < hi) {
					int mid = lo + (hi - lo + 1) / 2;

					if (cost_stage_compute(x, F->g.node[j],
					    F->g.k[j], mid, b) >= F->bmin)
						lo = mid;
					else
						hi = mid - 1;
				}
			} else {
				lo = b;
			}
			a = lo;
			if (!stage(x, &F->g, &F->T, j, a, b, &t, &c))
				continue;
			h.v[h.n] = fmax(t, c);
			h.j[h.n] = j;
			h.b[h.n] = b;
			h.a[h.n++] = a;
		}
	cheap_heapify(&h);
	free(F->cand);
	room = want < 64 ? want : 64;
	F->cand = xcalloc(room + 1, sizeof(double));
	while (h.n > 0 && got < want) {
		double v = h.v[0];
		int j = h.j[0], b = h.b[0], a = h.a[0] - 1;

		if (got == 0 || v != F->cand[got - 1]) {
			if (got == room) {
				room *= 2;
				F->cand = xreallocarray(F->cand, room + 1,
				    sizeof(double));
			}
			F->cand[got++] = v;
		}
		cheap_pop(&h);
		c = j < S - 1 ? F->T.comm[j][b] : 0;
		/*
		 * While t <= c the list repeats c: skip to the first layer
		 * that makes t exceed it (the stages between repeat a value
		 * already listed, and memory only grows on the way).
		 */
		if (a >= j && cost_stage_compute(x, F->g.node[j], F->g.k[j], a,
		    b) <= c) {
			int lo = j, hi = a;

			if (cost_stage_compute(x, F->g.node[j], F->g.k[j], j,
			    b) <= c)
				continue;
			/* The largest a' < a with t(a', b) > c. */
			while (lo < hi) {
				int mid = lo + (hi - lo + 1) / 2;

				if (cost_stage_compute(x, F->g.node[j],
				    F->g.k[j], mid, b) > c)
					lo = mid;
				else
					hi = mid - 1;
			}
			a = lo;
		}
		if (a >= j && stage(x, &F->g, &F->T, j, a, b, &t, &c))
			cheap_push(&h, fmax(t, c), j, b, a);
	}
	F->ncand = got;
	if (h.n == 0 || got == cap)
		F->nall = got;
	free(h.v);
	free(h.j);
	free(h.b);
	free(h.a);
}

struct part_front *
part_front_new(const struct dl_costctx *x, const struct part_group *g,
    long max_scan)
{
	struct part_front *F = xcalloc(1, sizeof(*F));
	int S = g->S, L = (int)x->m->nlayers;
	double bmin;

	F->x = x;
	F->max_scan = max_scan;
	F->g = *g;
	F->g.m = g->m < S ? g->m : S;
	F->g.node = F->g.k = NULL;
	F->status = LP_INFEASIBLE;
	if (S < 1 || S > L)
		return F;
	F->g.node = xmemdup(g->node, (size_t)S, sizeof(int));
	F->g.k = xmemdup(g->k, (size_t)S, sizeof(int));
	tab_init(&F->T, x, &F->g);
	F->g.comm = NULL;
	F->g.ctx = NULL;
	F->g.commv = NULL;
	front_scratch(F, 1);
	F->sinf_last = xcalloc((size_t)S, sizeof(int));
	bmin = minmax_dp(x, &F->g, &F->T, F->f);
	if (bmin == HUGE_VAL) {
		front_scratch(F, 0);
		return F;
	}
	F->sinf = sum_dp(x, &F->g, &F->T, HUGE_VAL, F->f, F->arg,
	    F->sinf_last);
	F->status = LP_OPTIMAL;
	F->bmin = bmin;
	F->nall = SIZE_MAX;
	front_cands(F, FRONT_KEEP);
	/* The scratch is only needed while the scan runs. */
	front_scratch(F, 0);
	return F;
}

/* Scan the next candidate; keep its point unless an earlier dominates. */
static void
front_step(struct part_front *F)
{
	const struct dl_costctx *x = F->x;
	int S = F->g.S;
	double B = F->cand[F->next], s, bt = 0, sum = 0, t, c;

	s = sum_dp(x, &F->g, &F->T, B, F->f, F->arg, F->tmp);
	if (s != HUGE_VAL) {
		/* Score with the true bottleneck of this partition. */
		for (int j = 0, a = 0; j < S; j++) {
			stage(x, &F->g, &F->T, j, a, F->tmp[j], &t, &c);
			bt = fmax(bt, fmax(t, c));
			sum += t + c;
			a = F->tmp[j] + 1;
		}
		for (size_t i = 0; i < F->n; i++)
			if (F->psum[i] <= sum && F->pbt[i] <= bt)
				goto done;
		if (F->n == F->cap) {
			F->cap = F->cap ? 2 * F->cap : 8;
			F->psum = xreallocarray(F->psum, F->cap, sizeof(double));
			F->pbt = xreallocarray(F->pbt, F->cap, sizeof(double));
			F->pidx = xreallocarray(F->pidx, F->cap, sizeof(size_t));
			F->plast = xreallocarray(F->plast, F->cap * (size_t)S,
			    sizeof(int));
		}
		F->psum[F->n] = sum;
		F->pbt[F->n] = bt;
		F->pidx[F->n] = F->next;
		memcpy(F->plast + F->n * (size_t)S, F->tmp,
		    (size_t)S * sizeof(int));
		F->n++;
	}
done:
	F->next++;
}

int
part_front_query(struct part_front *F, long m, struct part_result *r)
{
	long max_scan = F->max_scan, bi = -1;
	int S = F->g.S;
	double t0 = now(), best = HUGE_VAL;

	memset(r, 0, sizeof(*r));
	r->S = S;
	r->last = xcalloc((size_t)(S > 0 ? S : 1), sizeof(int));
	r->status = F->status;
	r->obj = HUGE_VAL;
	if (F->status == LP_INFEASIBLE)
		goto out;
	if (m <= 1) {
		r->obj = F->sinf;
		memcpy(r->last, F->sinf_last, (size_t)S * sizeof(int));
		goto out;
	}
	/* Points come in scan order: each is looked at once, the first
	 * strictly best wins. */
	for (size_t seen = 0;;) {
		for (; seen < F->n; seen++) {
			double v = F->psum[seen] + (double)(m - 1) *
			    F->pbt[seen];

			if ((max_scan <= 0 || F->pidx[seen] <
			    (size_t)max_scan) && v < best) {
				best = v;
				bi = (long)seen;
			}
		}
		if (F->next >= F->nall)
			break;
		if (F->next >= F->ncand) {
			front_cands(F, 0);
			if (F->next >= F->nall)
				break;
		}
		if (F->sinf + (double)(m - 1) * F->cand[F->next] >= best)
			break;
		if (max_scan > 0 && F->next >= (size_t)max_scan) {
			r->status = LP_FEASIBLE;
			break;
		}
		front_scratch(F, 1);
		front_step(F);
	}
	if (bi >= 0) {
		r->obj = best;
		memcpy(r->last, F->plast + (size_t)bi * (size_t)S,
		    (size_t)S * sizeof(int));
	}
	front_scratch(F, 0);
	if (F->ncand > FRONT_KEEP) {
		F->ncand = FRONT_KEEP;
		F->cand = xreallocarray(F->cand, F->ncand + 1,
		    sizeof(double));
	}
out:
	r->time_s = now() - t0;
	return DL_OK;
}

void
part_front_free(struct part_front *F)
{
	if (F == NULL)
		return;
	if (F->g.node != NULL) {
		free((int *)F->g.node);
		free((int *)F->g.k);
		tab_free(&F->T);
	}
	free(F->f);
	free(F->arg);
	free(F->tmp);
	free(F->sinf_last);
	free(F->cand);
	free(F->psum);
	free(F->pbt);
	free(F->pidx);
	free(F->plast);
	free(F);
}

int
part_dp(const struct dl_costctx *x, const struct part_group *g,
    long max_scan, struct part_result *r)
{
	double t0 = now();
	struct part_front *F = part_front_new(x, g, max_scan);
	int rc;

	rc = part_front_query(F, g->m, r);
	part_front_free(F);
	r->time_s = now() - t0;
	return rc;
}

int
part_max_layers(const struct dl_model *m, struct dl_err *e)
{
	if (m->nlayers <= PART_MAX_LAYERS)
		return DL_OK;
	return dl_seterr(e, DL_EDATA, m->path, 0, 0, "%zu layers: dlplan "
	    "partitions at most %d (the layer partition grows with the "
	    "square of the layer count); merge consecutive layers into "
	    "blocks", m->nlayers, PART_MAX_LAYERS);
}

void
part_result_free(struct part_result *r)
{
	free(r->last);
	r->last = NULL;
}

int
part_milp(const struct dl_costctx *x, const struct part_group *g,
    const struct part_result *warm, const struct lp_params *prm,
    const char *dump, struct part_result *r, struct dl_err *e)
{
	struct tab T;
	struct dl_lp *lp;
	struct lp_result res;
	int S = g->S, L = (int)x->m->nlayers, z, rc;
	int *X, *Y, *cols;
	double *vals, mcoef = (double)(g->m - 1);
	char name[64];
	size_t n = (size_t)(S + 1) * (size_t)(L + 1) * 2 + 4;

	memset(r, 0, sizeof(*r));
	r->S = S;
	r->last = xcalloc((size_t)S, sizeof(int));
	r->status = LP_INFEASIBLE;
	if (S < 1 || S > L)
		return DL_OK;
	tab_init(&T, x, g);
	lp = lp_new("partition", 1);
	X = xcalloc((size_t)S * (size_t)L, sizeof(int));
	Y = xcalloc((size_t)S * (size_t)L, sizeof(int));
	cols = xcalloc(n, sizeof(int));
	vals = xcalloc(n, sizeof(double));
	/* x_l_j: layer l on stage j; objective: its compute time. */
	for (int l = 0; l < L; l++)
		for (int j = 0; j < S; j++) {
			snprintf(name, sizeof(name), "x_%d_%d", l, j);
			X[j * L + l] = lp_add_col(lp, name, LP_BIN, 0, 1,
			    cost_stage_compute(x, g->node[j], g->k[j], l, l));
		}
	/* y_l_j: stage j (not the last) ends at layer l. */
	for (int j = 0; j + 1 < S; j++)
		for (int l = 0; l + 1 < L; l++) {
			snprintf(name, sizeof(name), "y_%d_%d", l, j);
			Y[j * L + l] = lp_add_col(lp, name, LP_CONT, 0, 1,
			    T.comm[j][l]);
		}
	z = lp_add_col(lp, "z", LP_CONT, 0, HUGE_VAL, mcoef);
	for (int l = 0; l < L; l++) {
		for (int j = 0; j < S; j++) {
			cols[j] = X[j * L + l];
			vals[j] = 1;
		}
		snprintf(name, sizeof(name), "assign_%d", l);
		lp_add_row(lp, name, LP_EQ, 1, S, cols, vals);
	}
	/* Order: layer l+1 is in stage <= j only if layer l is. */
	for (int l = 0; l + 1 < L; l++)
		for (int j = 0; j + 1 < S; j++) {
			int k = 0;

			for (int i = 0; i <= j; i++) {
				cols[k] = X[i * L + l + 1];
				vals[k++] = 1;
				cols[k] = X[i * L + l];
				vals[k++] = -1;
			}
			snprintf(name, sizeof(name), "order_%d_%d", l, j);
			lp_add_row(lp, name, LP_LE, 0, k, cols, vals);
		}
	for (int j = 0; j < S; j++) {
		int k = 0;
		double pos = j + 1;

		for (int l = 0; l < L; l++) {
			cols[l] = X[j * L + l];
			vals[l] = 1;
		}
		snprintf(name, sizeof(name), "nonempty_%d", j);
		lp_add_row(lp, name, LP_GE, 1, L, cols, vals);
		/* z >= t_j */
		for (int l = 0; l < L; l++) {
			cols[l] = X[j * L + l];
			vals[l] = cost_stage_compute(x, g->node[j], g->k[j], l,
			    l);
		}
		cols[L] = z;
		vals[L] = -1;
		snprintf(name, sizeof(name), "bneck_t_%d", j);
		lp_add_row(lp, name, LP_LE, 0, L + 1, cols, vals);
		/* Memory of the GPU with the largest share. */
		for (int l = 0; l < L; l++) {
			cols[l] = X[j * L + l];
			vals[l] = cost_stage_memory(x, l, l, T.phi[j],
			    (int)pos, S, g->m);
		}
		snprintf(name, sizeof(name), "mem_%d", j);
		lp_add_row(lp, name, LP_LE, T.cap[j], L, cols, vals);
		if (j + 1 == S)
			continue;
		/* z >= c_j and the end markers. */
		for (int l = 0; l + 1 < L; l++) {
			cols[k] = Y[j * L + l];
			vals[k++] = T.comm[j][l];
		}
		cols[k] = z;
		vals[k++] = -1;
		snprintf(name, sizeof(name), "bneck_c_%d", j);
		lp_add_row(lp, name, LP_LE, 0, k, cols, vals);
		for (int l = 0; l + 1 < L; l++) {
			int cc[3] = { Y[j * L + l], X[j * L + l],
			    X[j * L + l + 1] };
			double vv[3] = { 1, -1, 1 };

			snprintf(name, sizeof(name), "end_%d_%d", l, j);
			lp_add_row(lp, name, LP_GE, 0, 3, cc, vv);
		}
	}
	if (warm && warm->status != LP_INFEASIBLE) {
		double *s = xcalloc((size_t)lp_ncols(lp), sizeof(double));
		double bt = 0, t, c;

		for (int j = 0, a = 0; j < S; j++) {
			for (int l = a; l <= warm->last[j]; l++)
				s[X[j * L + l]] = 1;
			if (j + 1 < S)
				s[Y[j * L + warm->last[j]]] = 1;
			stage(x, g, &T, j, a, warm->last[j], &t, &c);
			bt = fmax(bt, fmax(t, c));
			a = warm->last[j] + 1;
		}
		s[z] = bt;
		lp_set_start(lp, s);
		free(s);
	}
	rc = DL_OK;
	if (dump)
		rc = lp_write(lp, dump, e);
	if (rc == DL_OK)
		rc = lp_solve(lp, prm, &res, e);
	if (rc == DL_OK) {
		r->status = res.status == LP_NOSOLUTION ? LP_INFEASIBLE :
		    res.status;
		r->time_s = res.time_s;
		r->gap = res.gap;
		if (res.status == LP_OPTIMAL || res.status == LP_FEASIBLE) {
			for (int j = 0; j < S; j++) {
				r->last[j] = -1;
				for (int l = 0; l < L; l++)
					if (res.x[X[j * L + l]] > 0.5)
						r->last[j] = l;
			}
			/* Report the model's own value of this partition. */
			r->obj = 0;
			{
				double bt = 0, t, c;

				for (int j = 0, a = 0; j < S; j++) {
					stage(x, g, &T, j, a, r->last[j], &t,
					    &c);
					bt = fmax(bt, fmax(t, c));
					r->obj += t + c;
					a = r->last[j] + 1;
				}
				r->obj += mcoef * bt;
			}
		}
		lp_result_free(&res);
	}
	free(X);
	free(Y);
	free(cols);
	free(vals);
	lp_free(lp);
	tab_free(&T);
	return rc;
}

long
part_mcap(const struct dl_costctx *x, int S, const int *k, const int *node,
    const int *last)
{
	for (long m = 1; m <= S; m++) {
		for (int j = 0, a = 0; j < S; j++) {
			double mem = cost_stage_memory(x, a, last[j],
			    1.0 / k[j], j + 1, S, m);

			if (mem > cost_gpu_capacity(x, node[j]))
				return m - 1;
			a = last[j] + 1;
		}
	}
	return LONG_MAX;
}

/* Largest m with A + (m - 1) M <= z (0 when z < A), capped. */
static long
fit(const struct split_group *g, double z, long total)
{
	long cap = g->cap < total ? g->cap : total, n;

	if (z < g->A || cap <= 0)
		return 0;
	if (g->M <= 0)
		return cap;
	n = (long)fmin(floor((z - g->A) / g->M) + 1, (double)cap);
	/* Guard the floor against rounding either way. */
	while (n < cap && g->A + (double)n * g->M <= z)
		n++;
	while (n > 0 && g->A + (double)(n - 1) * g->M > z)
		n--;
	return n;
}

static double
gtime(const struct split_group *g, long m)
{
	return m <= 0 ? 0 : g->A + (double)(m - 1) * g->M;
}

int
split_exact(const struct split_group *g, int G, long total, long *m,
    double *z, int *status)
{
	double lo = HUGE_VAL, hi = 0;
	long sum = 0;

	for (int i = 0; i < G; i++) {
		long cap = g[i].cap < total ? g[i].cap : total;

		sum += cap;
		if (cap > 0) {
			lo = fmin(lo, g[i].A);
			hi = fmax(hi, gtime(&g[i], cap));
		}
		m[i] = 0;
	}
	if (sum < total || G == 0) {
		*status = LP_INFEASIBLE;
		return DL_OK;
	}
	/* Smallest z whose fits add up to total, to full precision. */
	for (int it = 0; it < 200 && lo < hi; it++) {
		double mid = lo + (hi - lo) / 2;
		long cnt = 0;

		if (mid <= lo || mid >= hi)
			break;
		for (int i = 0; i < G; i++)
			cnt += fit(&g[i], mid, total);
		if (cnt >= total)
			hi = mid;
		else
			lo = mid;
	}
	sum = 0;
	for (int i = 0; i < G; i++)
		sum += m[i] = fit(&g[i], hi, total);
	/* Take back the surplus from the slowest groups (exchange argument:
	 * this ends at the least possible maximum). */
	while (sum > total) {
		int w = -1;

		for (int i = 0; i < G; i++)
			if (m[i] > 0 && (w < 0 ||
			    gtime(&g[i], m[i]) >= gtime(&g[w], m[w])))
				w = i;
		m[w]--;
		sum--;
	}
	*z = 0;
	for (int i = 0; i < G; i++)
		*z = fmax(*z, gtime(&g[i], m[i]));
	*status = LP_OPTIMAL;
	return DL_OK;
}

int
split_exact_all(const struct split_group *g, int G, long total, long *m,
    double *z, int *status)
{
	double lo = 0, hi = 0;
	long sum = 0;

	*status = LP_INFEASIBLE;
	if (G == 0 || total < G)
		return DL_OK;
	for (int i = 0; i < G; i++) {
		long cap = g[i].cap < total ? g[i].cap : total;

		if (cap < 1)
			return DL_OK;
		sum += cap;
		lo = fmax(lo, g[i].A);
		hi = fmax(hi, gtime(&g[i], cap));
	}
	if (sum < total)
		return DL_OK;
	if (total <= 64 * (long)G) {
		/*
		 * Few micro-batches: one each, then each next one to the group
		 * whose time grows least (lowest index on ties).  This is
		 * optimal: were some z below the result feasible, at the first
		 * step past it every group would already hold all it can
		 * within z, and their sum would fall short of total.
		 */
		for (int i = 0; i < G; i++)
			m[i] = 1;
		for (long left = total - G; left > 0; left--) {
			int w = -1;

			for (int i = 0; i < G; i++) {
				long cap = g[i].cap < total ? g[i].cap : total;

				if (m[i] < cap && (w < 0 || gtime(&g[i],
				    m[i] + 1) < gtime(&g[w], m[w] + 1)))
					w = i;
			}
			m[w]++;
		}
		*z = 0;
		for (int i = 0; i < G; i++)
			*z = fmax(*z, gtime(&g[i], m[i]));
		*status = LP_OPTIMAL;
		return DL_OK;
	}
	/* Every group runs, so z starts at the largest A. */
	for (int it = 0; it < 200 && lo < hi; it++) {
		double mid = lo + (hi - lo) / 2;
		long cnt = 0;

		if (mid <= lo || mid >= hi)
			break;
		for (int i = 0; i < G; i++)
			cnt += fit(&g[i], mid, total);
		if (cnt >= total)
			hi = mid;
		else
			lo = mid;
	}
	{
		long cnt = 0;

		for (int i = 0; i < G; i++)
			cnt += fit(&g[i], lo, total);
		if (cnt >= total)
			hi = lo;
	}
	sum = 0;
	for (int i = 0; i < G; i++) {
		m[i] = fit(&g[i], hi, total);
		if (m[i] < 1)
			m[i] = 1;
		sum += m[i];
	}
	/* Take back the surplus from the slowest groups, keeping one each. */
	while (sum > total) {
		int w = -1;

		for (int i = 0; i < G; i++)
			if (m[i] > 1 && (w < 0 ||
			    gtime(&g[i], m[i]) >= gtime(&g[w], m[w])))
				w = i;
		m[w]--;
		sum--;
	}
	*z = 0;
	for (int i = 0; i < G; i++)
		*z = fmax(*z, gtime(&g[i], m[i]));
	*status = LP_OPTIMAL;
	return DL_OK;
}

int
split_milp(const struct split_group *g, int G, long total,
    const struct lp_params *prm, const char *dump, long *m, double *z,
    int *status, struct dl_err *e)
{
	struct dl_lp *lp;
	struct lp_result res;
	int *M = xcalloc((size_t)G, sizeof(int));
	int *U = xcalloc((size_t)G, sizeof(int));
	int *cols = xcalloc((size_t)G + 1, sizeof(int));
	double *vals = xcalloc((size_t)G + 1, sizeof(double));
	long *warm = xcalloc((size_t)G, sizeof(long));
	double wz;
	int zc, ws, rc;
	char name[64];

	/* The threshold search gives the starting incumbent, put in the
	 * order the symmetry rows below ask for. */
	split_exact(g, G, total, warm, &wz, &ws);
	for (int again = 1; again;) {
		again = 0;
		for (int i = 0; i < G; i++)
			for (int j = i + 1; j < G; j++)
				if (g[i].A == g[j].A && g[i].M == g[j].M &&
				    g[i].cap == g[j].cap && warm[i] < warm[j]) {
					long t = warm[i];

					warm[i] = warm[j];
					warm[j] = t;
					again = 1;
				}
	}
	lp = lp_new("split", 1);
	for (int i = 0; i < G; i++) {
		long cap = g[i].cap < total ? g[i].cap : total;

		snprintf(name, sizeof(name), "m_%d", i);
		M[i] = lp_add_col(lp, name, LP_INT, 0, (double)cap, 0);
		snprintf(name, sizeof(name), "u_%d", i);
		U[i] = lp_add_col(lp, name, LP_BIN, 0, 1, 0);
	}
	zc = lp_add_col(lp, "z", LP_CONT, 0, HUGE_VAL, 1);
	for (int i = 0; i < G; i++) {
		cols[i] = M[i];
		vals[i] = 1;
	}
	lp_add_row(lp, "total", LP_EQ, (double)total, G, cols, vals);
	/*
	 * Symmetry: of two groups with the same A, M and cap, the earlier
	 * takes at least as many micro-batches (any optimum can be reordered
	 * so), which spares branch and bound the mirror images.
	 */
	for (int i = 0; i < G; i++)
		for (int j = i + 1; j < G; j++) {
			int cs[2] = { M[i], M[j] };
			double vs[2] = { 1, -1 };

			if (g[i].A != g[j].A || g[i].M != g[j].M ||
			    g[i].cap != g[j].cap)
				continue;
			snprintf(name, sizeof(name), "sym_%d_%d", i, j);
			lp_add_row(lp, name, LP_GE, 0, 2, cs, vs);
			break;	/* the next equal one chains from j */
		}
	for (int i = 0; i < G; i++) {
		long cap = g[i].cap < total ? g[i].cap : total;
		int c2[3] = { M[i], U[i], zc };
		double v2[3] = { 1, -(double)cap, 0 };
		double v3[3] = { g[i].M, g[i].A - g[i].M, -1 };
		double v4[2] = { 1, -1 };
		int c4[2] = { U[i], M[i] };

		snprintf(name, sizeof(name), "on_%d", i);
		lp_add_row(lp, name, LP_LE, 0, 2, c2, v2);
		snprintf(name, sizeof(name), "used_%d", i);
		lp_add_row(lp, name, LP_LE, 0, 2, c4, v4);
		snprintf(name, sizeof(name), "time_%d", i);
		lp_add_row(lp, name, LP_LE, 0, 3, c2, v3);
	}
	if (ws == LP_OPTIMAL) {
		double *s = xcalloc((size_t)lp_ncols(lp), sizeof(double));

		for (int i = 0; i < G; i++) {
			s[M[i]] = (double)warm[i];
			s[U[i]] = warm[i] > 0;
		}
		s[zc] = wz;
		lp_set_start(lp, s);
		free(s);
	}
	rc = DL_OK;
	if (dump)
		rc = lp_write(lp, dump, e);
	if (rc == DL_OK)
		rc = lp_solve(lp, prm, &res, e);
	if (rc == DL_OK) {
		*status = res.status == LP_NOSOLUTION ? LP_INFEASIBLE :
		    res.status;
		if (res.status == LP_OPTIMAL || res.status == LP_FEASIBLE) {
			*z = 0;
			for (int i = 0; i < G; i++) {
				m[i] = lround(res.x[M[i]]);
				*z = fmax(*z, gtime(&g[i], m[i]));
			}
		}
		lp_result_free(&res);
	}
	lp_free(lp);
	free(M);
	free(U);
	free(cols);
	free(vals);
	free(warm);
	return rc;
}
