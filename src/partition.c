/*
 * partition.c - the layer partition of one pipeline (see partition.h):
 * its dynamic programmes, the front of candidate cuts, and its MILP.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* Per-group tables shared by the DP and the MILP. */
struct tab {
	int S, L;
	const double **comm;	/* S rows of L: c_j if stage j ends at layer l */
	double *own;		/* the rows when computed here */
	double *cap;		/* S: usable bytes per GPU of unit j */
	double *phi;		/* S: largest TP share of unit j */
	/*
	 * S x L, filled as asked: 1 + the first layer a such that stage j
	 * holding [a, b] fits in memory (memory grows as a falls), 0 until
	 * known; NULL outside a front's scan (stage() then prices memory
	 * itself), so that the many fronts kept do not keep it.  A front is
	 * used by one thread at a time.
	 */
	int *amin;
	/*
	 * Stage compute times, filled as asked like amin and under the same
	 * rule: tc[(ty[j] * L + b) * L + a] for stage j holding [a, b],
	 * 0 until known (a time of 0 is priced again, to the same 0).
	 * Stages on nodes of the same speed and NVLink with the same TP
	 * degree share a row of types (ty), so a group of one GPU type
	 * prices each range once.  NULL above TAB_TC_LAYERS layers.
	 */
	int *ty, nty;
	double *tc;
};

/* Models up to this many layers keep tab.tc (nty * L * L doubles). */
#define TAB_TC_LAYERS 128

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
	T->amin = NULL;		/* a front's scan sets it (front_scratch()) */
	T->tc = NULL;
	T->ty = xcalloc((size_t)T->S, sizeof(int));
	T->nty = 0;
	for (int j = 0; j < T->S; j++) {
		int n = g->node[j], i;

		for (i = 0; i < j; i++) {
			int ni = g->node[i];

			if (g->k[i] == g->k[j] && x->speed[ni] == x->speed[n] &&
			    x->c->nodes[ni].intra_gbps ==
			    x->c->nodes[n].intra_gbps)
				break;
		}
		T->ty[j] = i < j ? T->ty[i] : T->nty++;
	}
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
	free(T->amin);
	free(T->ty);
	free(T->tc);
}

/* Stage j's row of T->tc for ranges ending at layer b, NULL if not kept. */
static double *
tc_row(const struct tab *T, int j, int b)
{
	if (T->tc == NULL)
		return NULL;
	return T->tc + ((size_t)T->ty[j] * (size_t)T->L + (size_t)b) *
	    (size_t)T->L;
}

/* cost_stage_compute() of stage j holding [a, b], from row (tc_row()). */
static double
row_t(const struct dl_costctx *x, const struct part_group *g, double *row,
    int j, int a, int b)
{
	if (row == NULL)
		return cost_stage_compute(x, g->node[j], g->k[j], a, b);
	if (row[a] == 0)
		row[a] = cost_stage_compute(x, g->node[j], g->k[j], a, b);
	return row[a];
}

/* row_t() outside a scan. */
static double
stage_t(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b)
{
	return row_t(x, g, tc_row(T, j, b), j, a, b);
}

/*
 * The first layer a (>= j) with which stage j ending at b fits in memory,
 * b + 1 when even [b, b] does not: found by bisection with the same
 * comparison scan_stage() makes without it, once per (j, b).
 */
static int
first_fit(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int b)
{
	int *slot = &T->amin[j * T->L + b], lo, hi;

	if (*slot > 0)
		return *slot - 1;
	lo = j;
	hi = b + 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (cost_stage_memory(x, mid, b, T->phi[j], j + 1, g->S,
		    g->m) > T->cap[j])
			lo = mid + 1;
		else
			hi = mid;
	}
	*slot = lo + 1;
	return lo;
}

/*
 * What a scan over the first layer a of stage j ending at b needs that
 * does not depend on a: the transfer *c, and *lo and *row for
 * scan_stage().  Returns 0 when c has no route (not a usable boundary).
 */
static int
scan_start(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int b, double *c, int *lo, double **row)
{
	*c = j < T->S - 1 ? T->comm[j][b] : 0;
	if (!isfinite(*c))
		return 0;
	*lo = T->amin != NULL ? first_fit(x, g, T, j, b) : j;
	*row = tc_row(T, j, b);
	return 1;
}

/*
 * Stage j holding [a, b] inside a scan set up by scan_start() for that b:
 * 0 when it does not fit in memory, else 1 with its time in *t.
 */
static int
scan_stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int lo, double *row, int a, int b,
    double *t)
{
	if (T->amin != NULL ? a < lo : cost_stage_memory(x, a, b, T->phi[j],
	    j + 1, g->S, g->m) > T->cap[j])
		return 0;
	*t = row_t(x, g, row, j, a, b);
	return 1;
}

/* Stage j holding layers [a, b]: time t, transfer c, memory fit. */
static int
stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b, double *t, double *c)
{
	double *row;
	int lo;

	return scan_start(x, g, T, j, b, c, &lo, &row) &&
	    scan_stage(x, g, T, j, lo, row, a, b, t);
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
	int S = T->S, L = T->L, lo;
	double t, c, *row;

	for (int j = 0; j < S; j++) {
		for (int b = 0; b < L; b++) {
			double best = HUGE_VAL;
			int ba = -1;

			f[j * L + b] = HUGE_VAL;
			arg[j * L + b] = -1;
			/* Stage j needs j layers before it and S-1-j after. */
			if (b < j || L - 1 - b < S - 1 - j)
				continue;
			/* stage() without what depends on a. */
			if (!scan_start(x, g, T, j, b, &c, &lo, &row))
				continue;
			for (int a = b; a >= j; a--) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];
				double v;

				if (!scan_stage(x, g, T, j, lo, row, a, b, &t))
					break;
				if (t > B)
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

/*
 * Whether some partition fits in memory: each stage in turn takes as many
 * layers as fit, leaving one for every later stage.  A stage's memory only
 * grows with its range, so by induction on j no partition that fits ends
 * stage j after this one does: if greedy fails, nothing fits.  (Transfers
 * without a route can still make a partition that fits unusable; the DPs
 * find that.)
 */
static int
fits_greedy(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T)
{
	int S = T->S, L = T->L, a = 0;

	for (int j = 0; j < S; j++) {
		int hi = j == S - 1 ? L - 1 : L - 1 - (S - 1 - j), lo = a;

		if (a > hi || cost_stage_memory(x, a, a, T->phi[j], j + 1, S,
		    g->m) > T->cap[j])
			return 0;
		if (j == S - 1)
			return !(cost_stage_memory(x, a, L - 1, T->phi[j], S, S,
			    g->m) > T->cap[j]);
		/* The last b in [a, hi] whose range [a, b] fits. */
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (cost_stage_memory(x, a, mid, T->phi[j], j + 1, S,
			    g->m) > T->cap[j])
				hi = mid - 1;
			else
				lo = mid;
		}
		a = lo + 1;
	}
	return 1;
}

/* f(j - 1, a - 1), or 0 for the first stage starting at layer 0. */
static double
f_prev(const double *f, int j, int L, int a)
{
	return j == 0 ? 0 : f[(j - 1) * L + a - 1];
}

/*
 * sum_dp() for long models.  The scan over a stage's first layer a costs
 * O(L) for every stage end b, so O(S L^2) per call, which is minutes for a
 * thousand layers.  Above part_window_layers layers the same minimum is found with
 * a sliding window: t(a, b) = kappa (F(b) - F(a - 1)) (F the prefix sums of
 * FLOPs and of TP volume, kappa per unit), so the best a for b minimises
 * q(a) = f(j - 1, a - 1) - kappa F(a - 1) over the a that fit in memory
 * and keep t <= B, a window whose left end only moves right as b grows.
 * A deque keeps the window's minimum (the smallest a on ties).  The value
 * stored is the stage's own t + c for that a, as the scan computes it; the
 * argmin can differ from the scan's only between partitions whose sums
 * differ in the last bits.
 */
int part_window_layers = PART_WINDOW_LAYERS;

static double
sum_dp_window(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double B, double *f, int *arg, int *last)
{
	int S = T->S, L = T->L;
	int *dq = xcalloc((size_t)L + 1, sizeof(int));
	double *q = xcalloc((size_t)L + 1, sizeof(double));
	double mu = (double)x->o->micro_batch, t, c;

	for (int j = 0; j < S; j++) {
		int node = g->node[j], k = g->k[j], lo = j, h = 0, n = 0;
		double k1 = mu / (k * x->speed[node]), k2 = k > 1 ? mu *
		    (2.0 * (k - 1) / k) / (x->c->nodes[node].intra_gbps * 1e9 /
		    8) : 0;

		for (int b = 0; b < L; b++) {
			f[j * L + b] = HUGE_VAL;
			arg[j * L + b] = -1;
		}
		for (int b = j; b <= L - 1 - (S - 1 - j); b++) {
			double prev = j == 0 ? (b == 0 ? 0 : HUGE_VAL) :
			    f[(j - 1) * L + b - 1];

			/* a = b joins the window. */
			q[b] = prev == HUGE_VAL ? HUGE_VAL : prev -
			    k1 * x->cum_flops[b] - k2 * x->cum_tp[b];
			if (q[b] != HUGE_VAL) {
				while (n > 0 && q[dq[h + n - 1]] > q[b])
					n--;
				dq[h + n++] = b;
			}
			c = j < S - 1 ? T->comm[j][b] : 0;
			if (!isfinite(c) || c > B)
				continue;
			/* The window: the a whose stage fits with t <= B. */
			while (lo <= b && (!stage(x, g, T, j, lo, b, &t, &c) ||
			    t > B))
				lo++;
			while (n > 0 && dq[h] < lo) {
				h++;
				n--;
			}
			if (n == 0)
				continue;
			stage(x, g, T, j, dq[h], b, &t, &c);
			f[j * L + b] = f_prev(f, j, L, dq[h]) + t + c;
			arg[j * L + b] = dq[h];
		}
	}
	free(dq);
	free(q);
	if (f[(S - 1) * L + L - 1] == HUGE_VAL)
		return HUGE_VAL;
	for (int j = S - 1, b = L - 1; j >= 0; j--) {
		last[j] = b;
		b = arg[j * L + b] - 1;
	}
	return f[(S - 1) * L + L - 1];
}

/* sum_dp(), or sum_dp_window() above part_window_layers layers. */
static double
sum_best(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double B, double *f, int *arg, int *last)
{
	if (T->L > part_window_layers)
		return sum_dp_window(x, g, T, B, f, arg, last);
	return sum_dp(x, g, T, B, f, arg, last);
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
			double best = HUGE_VAL, *row;
			int lo;

			f[j * L + b] = HUGE_VAL;
			if (b < j || L - 1 - b < S - 1 - j)
				continue;
			if (!scan_start(x, g, T, j, b, &c, &lo, &row))
				continue;
			for (int a = b; a >= j; a--) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];

				if (!scan_stage(x, g, T, j, lo, row, a, b, &t))
					break;
				if (t >= best)
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
		F->T.amin = xcalloc(n + 1, sizeof(int));
		if (F->T.L <= TAB_TC_LAYERS)
			F->T.tc = xcalloc((size_t)F->T.nty * (size_t)F->T.L *
			    (size_t)F->T.L, sizeof(double));
	} else if (!need) {
		free(F->f);
		free(F->arg);
		free(F->tmp);
		free(F->T.amin);
		free(F->T.tc);
		F->f = NULL;
		F->arg = NULL;
		F->tmp = NULL;
		F->T.amin = NULL;
		F->T.tc = NULL;
	}
}

/* Candidates a frontier keeps between queries; more are listed again. */
#define FRONT_KEEP 64
/* Candidates listed when a frontier is made: most queries need a few. */
#define FRONT_FIRST 8

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
 * The entry after stage [a, b] of list (j, b): the largest a' < a whose
 * max(t, c) is above c (the stages between repeat c, and memory only
 * grows on the way), or -1 when none fits.  *t and *c: its stage.
 */
static int
cands_next(struct part_front *F, int j, int b, int a, double *t, double *c)
{
	const struct dl_costctx *x = F->x;
	double cj = j < F->g.S - 1 ? F->T.comm[j][b] : 0;

	a--;
	if (a >= j && stage_t(x, &F->g, &F->T, j, a, b) <= cj) {
		int lo = j, hi = a;

		if (stage_t(x, &F->g, &F->T, j, j, b) <= cj)
			return -1;
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (stage_t(x, &F->g, &F->T, j, mid, b) > cj)
				lo = mid;
			else
				hi = mid - 1;
		}
		a = lo;
	}
	if (a >= j && stage(x, &F->g, &F->T, j, a, b, t, c))
		return a;
	return -1;
}

/*
 * List the distinct candidate bottlenecks, every feasible stage's
 * max(t, c) >= bmin, ascending: the first keep of them (0: all), and
 * never more than a query can look at (max_scan + 1).  F->nall becomes
 * their exact number when the listing reached the end, else stays
 * unknown (SIZE_MAX) unless known before.
 *
 * A list whose first stage has t <= c starts with the transfer c, which
 * many lists share (every block sends the same activation): such a c
 * goes to a sorted side list once and the list enters the heap at its
 * next value, so the heap does not pop the same c once per list.  Only
 * the distinct values are listed, so the order of ties never mattered.
 */
static void
front_cands(struct part_front *F, size_t keep)
{
	int S = F->g.S, L = F->T.L;
	size_t cap = F->max_scan > 0 ? (size_t)F->max_scan + 1 : SIZE_MAX;
	size_t want = keep > 0 && keep < cap ? keep : cap, got = 0, room;
	size_t nc = 0, ci = 0;
	struct cheap h;
	double t, c, *cv;

	h.n = 0;
	h.v = xcalloc((size_t)S * (size_t)L, sizeof(double));
	h.j = xcalloc((size_t)S * (size_t)L, sizeof(int));
	h.b = xcalloc((size_t)S * (size_t)L, sizeof(int));
	h.a = xcalloc((size_t)S * (size_t)L, sizeof(int));
	cv = xcalloc((size_t)S * (size_t)L, sizeof(double));
	for (int j = 0; j < S; j++) {
		int ap = j;	/* the largest a with t(a, b) >= bmin so far */
		int reach = 0;	/* t(j, b) >= bmin: so for every later b */

		for (int b = j; b < L; b++) {
			int a;

			c = j < S - 1 ? F->T.comm[j][b] : 0;
			if (!isfinite(c))
				continue;
			/* The first a (from b down) with max(t, c) >= bmin. */
			if (c < F->bmin) {
				if (!reach) {
					if (stage_t(F->x, &F->g, &F->T, j, j,
					    b) < F->bmin)
						continue;
					reach = 1;
				}
				/*
				 * t(a, b) grows with b and falls as a rises, so
				 * that a never falls as b grows: it is walked up
				 * (the same a a bisection finds, in O(L) per
				 * stage instead of O(L log L)).
				 */
				while (ap < b && stage_t(F->x, &F->g, &F->T, j,
				    ap + 1, b) >= F->bmin)
					ap++;
				a = ap;
			} else {
				a = b;
			}
			if (!stage(F->x, &F->g, &F->T, j, a, b, &t, &c))
				continue;
			if (t <= c) {
				/* c, then the list's next value. */
				if (nc == 0 || cv[nc - 1] != c)
					cv[nc++] = c;
				if ((a = cands_next(F, j, b, a, &t, &c)) < 0)
					continue;
			}
			h.v[h.n] = fmax(t, c);
			h.j[h.n] = j;
			h.b[h.n] = b;
			h.a[h.n++] = a;
		}
	}
	cheap_heapify(&h);
	qsort(cv, nc, sizeof(double), cmp_double);
	free(F->cand);
	room = want < 64 ? want : 64;
	F->cand = xcalloc(room + 1, sizeof(double));
	while ((h.n > 0 || ci < nc) && got < want) {
		double v;

		if (ci < nc && (h.n == 0 || cv[ci] <= h.v[0])) {
			v = cv[ci++];
		} else {
			int j = h.j[0], b = h.b[0], a;

			v = h.v[0];
			/* The next stage of this list takes the top's place
			 * (one sift instead of a pop and a push). */
			if ((a = cands_next(F, j, b, h.a[0], &t, &c)) >= 0)
				cheap_sift(&h, 0, h.n, fmax(t, c), j, b, a);
			else
				cheap_pop(&h);
		}
		if (got == 0 || v != F->cand[got - 1]) {
			if (got == room) {
				room *= 2;
				F->cand = xreallocarray(F->cand, room + 1,
				    sizeof(double));
			}
			F->cand[got++] = v;
		}
	}
	F->ncand = got;
	if ((h.n == 0 && ci == nc) || got == cap)
		F->nall = got;
	free(h.v);
	free(h.j);
	free(h.b);
	free(h.a);
	free(cv);
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
	bmin = fits_greedy(x, &F->g, &F->T) ? minmax_dp(x, &F->g, &F->T,
	    F->f) : HUGE_VAL;
	if (bmin == HUGE_VAL) {
		front_scratch(F, 0);
		return F;
	}
	F->sinf = sum_best(x, &F->g, &F->T, HUGE_VAL, F->f, F->arg,
	    F->sinf_last);
	F->status = LP_OPTIMAL;
	F->bmin = bmin;
	F->nall = SIZE_MAX;
	front_cands(F, FRONT_FIRST);
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

	s = sum_best(x, &F->g, &F->T, B, F->f, F->arg, F->tmp);
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
	double t0 = mono_now(), best = HUGE_VAL;

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
			/*
			 * Twice as many as listed: the same ascending list,
			 * grown only as far as the scan gets.
			 */
			front_cands(F, 2 * F->ncand);
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
	r->time_s = mono_now() - t0;
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
	double t0 = mono_now();
	struct part_front *F = part_front_new(x, g, max_scan);
	int rc;

	rc = part_front_query(F, g->m, r);
	part_front_free(F);
	r->time_s = mono_now() - t0;
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

/* The MILP of part_milp() while it is built. */
struct pmilp {
	struct dl_lp *lp;
	const struct dl_costctx *x;
	const struct part_group *g;
	struct tab T;
	int S, L;
	int *X, *Y;		/* columns x_l_j and y_l_j at [j * L + l] */
	int z;			/* the bottleneck's column */
	int *cols;		/* scratch for one row */
	double *vals;
};

/*
 * The sum of t_j + c_j and (in *bt) the bottleneck of the partition of g
 * whose stages end at last[].
 */
static double
part_value(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, const int *last, double *bt)
{
	double sum = 0, t, c;

	*bt = 0;
	for (int j = 0, a = 0; j < g->S; j++) {
		stage(x, g, T, j, a, last[j], &t, &c);
		*bt = fmax(*bt, fmax(t, c));
		sum += t + c;
		a = last[j] + 1;
	}
	return sum;
}

/* The columns: x_l_j (layer l on stage j; objective: its compute time),
 * y_l_j (stage j, not the last, ends at layer l) and z. */
static void
pmilp_cols(struct pmilp *P)
{
	int S = P->S, L = P->L;
	char name[64];

	for (int l = 0; l < L; l++)
		for (int j = 0; j < S; j++) {
			snprintf(name, sizeof(name), "x_%d_%d", l, j);
			P->X[j * L + l] = lp_add_col(P->lp, name, LP_BIN, 0, 1,
			    cost_stage_compute(P->x, P->g->node[j],
			    P->g->k[j], l, l));
		}
	for (int j = 0; j + 1 < S; j++)
		for (int l = 0; l + 1 < L; l++) {
			snprintf(name, sizeof(name), "y_%d_%d", l, j);
			P->Y[j * L + l] = lp_add_col(P->lp, name, LP_CONT, 0,
			    1, P->T.comm[j][l]);
		}
	P->z = lp_add_col(P->lp, "z", LP_CONT, 0, HUGE_VAL,
	    (double)(P->g->m - 1));
}

/* Every layer on one stage, and in stage order. */
static void
pmilp_order(struct pmilp *P)
{
	int S = P->S, L = P->L, *cols = P->cols, *X = P->X;
	double *vals = P->vals;
	char name[64];

	for (int l = 0; l < L; l++) {
		for (int j = 0; j < S; j++) {
			cols[j] = X[j * L + l];
			vals[j] = 1;
		}
		snprintf(name, sizeof(name), "assign_%d", l);
		lp_add_row(P->lp, name, LP_EQ, 1, S, cols, vals);
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
			lp_add_row(P->lp, name, LP_LE, 0, k, cols, vals);
		}
}

/* The rows of stage j: not empty, z >= t_j, memory, and z >= c_j with
 * the end markers unless it is the last. */
static void
pmilp_stage(struct pmilp *P, int j)
{
	const struct part_group *g = P->g;
	int S = P->S, L = P->L, *cols = P->cols, *X = P->X, *Y = P->Y, k = 0;
	double *vals = P->vals;
	char name[64];

	for (int l = 0; l < L; l++) {
		cols[l] = X[j * L + l];
		vals[l] = 1;
	}
	snprintf(name, sizeof(name), "nonempty_%d", j);
	lp_add_row(P->lp, name, LP_GE, 1, L, cols, vals);
	for (int l = 0; l < L; l++) {
		cols[l] = X[j * L + l];
		vals[l] = cost_stage_compute(P->x, g->node[j], g->k[j], l, l);
	}
	cols[L] = P->z;
	vals[L] = -1;
	snprintf(name, sizeof(name), "bneck_t_%d", j);
	lp_add_row(P->lp, name, LP_LE, 0, L + 1, cols, vals);
	/* Memory of the GPU with the largest share. */
	for (int l = 0; l < L; l++) {
		cols[l] = X[j * L + l];
		vals[l] = cost_stage_memory(P->x, l, l, P->T.phi[j], j + 1, S,
		    g->m);
	}
	snprintf(name, sizeof(name), "mem_%d", j);
	lp_add_row(P->lp, name, LP_LE, P->T.cap[j], L, cols, vals);
	if (j + 1 == S)
		return;
	for (int l = 0; l + 1 < L; l++) {
		cols[k] = Y[j * L + l];
		vals[k++] = P->T.comm[j][l];
	}
	cols[k] = P->z;
	vals[k++] = -1;
	snprintf(name, sizeof(name), "bneck_c_%d", j);
	lp_add_row(P->lp, name, LP_LE, 0, k, cols, vals);
	for (int l = 0; l + 1 < L; l++) {
		int cc[3] = { Y[j * L + l], X[j * L + l], X[j * L + l + 1] };
		double vv[3] = { 1, -1, 1 };

		snprintf(name, sizeof(name), "end_%d_%d", l, j);
		lp_add_row(P->lp, name, LP_GE, 0, 3, cc, vv);
	}
}

/* The partition warm as the first incumbent. */
static void
pmilp_start(struct pmilp *P, const struct part_result *warm)
{
	double *s = xcalloc((size_t)lp_ncols(P->lp), sizeof(double)), bt;
	int L = P->L;

	for (int j = 0, a = 0; j < P->S; j++) {
		for (int l = a; l <= warm->last[j]; l++)
			s[P->X[j * L + l]] = 1;
		if (j + 1 < P->S)
			s[P->Y[j * L + warm->last[j]]] = 1;
		a = warm->last[j] + 1;
	}
	part_value(P->x, P->g, &P->T, warm->last, &bt);
	s[P->z] = bt;
	lp_set_start(P->lp, s);
	free(s);
}

/* Read the partition of a solved program into r, with the model's own
 * value of it. */
static void
pmilp_read(struct pmilp *P, const struct lp_result *res,
    struct part_result *r)
{
	double bt;

	r->status = res->status == LP_NOSOLUTION ? LP_INFEASIBLE :
	    res->status;
	r->time_s = res->time_s;
	r->gap = res->gap;
	if (res->status != LP_OPTIMAL && res->status != LP_FEASIBLE)
		return;
	for (int j = 0; j < P->S; j++) {
		r->last[j] = -1;
		for (int l = 0; l < P->L; l++)
			if (res->x[P->X[j * P->L + l]] > 0.5)
				r->last[j] = l;
	}
	r->obj = part_value(P->x, P->g, &P->T, r->last, &bt);
	r->obj += (double)(P->g->m - 1) * bt;
}

int
part_milp(const struct dl_costctx *x, const struct part_group *g,
    const struct part_result *warm, const struct lp_params *prm,
    const char *dump, struct part_result *r, struct dl_err *e)
{
	struct pmilp P;
	struct lp_result res;
	int S = g->S, L = (int)x->m->nlayers, rc;
	size_t n = (size_t)(S + 1) * (size_t)(L + 1) * 2 + 4;

	memset(r, 0, sizeof(*r));
	r->S = S;
	r->last = xcalloc((size_t)S, sizeof(int));
	r->status = LP_INFEASIBLE;
	if (S < 1 || S > L)
		return DL_OK;
	P.x = x;
	P.g = g;
	P.S = S;
	P.L = L;
	tab_init(&P.T, x, g);
	P.lp = lp_new("partition", 1);
	P.X = xcalloc((size_t)S * (size_t)L, sizeof(int));
	P.Y = xcalloc((size_t)S * (size_t)L, sizeof(int));
	P.cols = xcalloc(n, sizeof(int));
	P.vals = xcalloc(n, sizeof(double));
	pmilp_cols(&P);
	pmilp_order(&P);
	for (int j = 0; j < S; j++)
		pmilp_stage(&P, j);
	if (warm && warm->status != LP_INFEASIBLE)
		pmilp_start(&P, warm);
	rc = DL_OK;
	if (dump)
		rc = lp_write(P.lp, dump, e);
	if (rc == DL_OK)
		rc = lp_solve(P.lp, prm, &res, e);
	if (rc == DL_OK) {
		pmilp_read(&P, &res, r);
		lp_result_free(&res);
	}
	free(P.X);
	free(P.Y);
	free(P.cols);
	free(P.vals);
	lp_free(P.lp);
	tab_free(&P.T);
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
