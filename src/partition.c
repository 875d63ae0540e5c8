/*
 * partition.c - the layer partition of partition.h: the exact dynamic
 * program, its frontier over m, and the sliding window of long models.
 * The same model as a MILP is in partition_milp.c, the data split in
 * split.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "partition_int.h"
#include "pipesched.h"

void
tab_init(struct tab *T, const struct dl_costctx *x, const struct part_group *g)
{
	const struct dl_model *m = x->m;
	double mu = (double)x->o->micro_batch;

	T->S = g->S;
	T->L = (int)m->nlayers;
	T->cf = xcalloc((size_t)T->S, sizeof(double *));
	T->cb = xcalloc((size_t)T->S, sizeof(double *));
	T->own = g->commv ? NULL : xcalloc(2 * (size_t)T->S * (size_t)T->L,
	    sizeof(double));
	T->cap = xcalloc((size_t)T->S, sizeof(double));
	T->unit = xcalloc((size_t)T->S, sizeof(*T->unit));
	T->phi = xcalloc((size_t)T->S, sizeof(double));
	T->mem = xcalloc((size_t)T->S, sizeof(*T->mem));
	T->amin = NULL;		/* a front's scan sets it (front_scratch()) */
	T->tc = NULL;
	T->tc_ok = NULL;
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
		cost_unit_init(x, g->node[j], g->k[j], &T->unit[j]);
		T->phi[j] = 1.0 / g->k[j];
		cost_mem_init(x, T->phi[j], j + 1, T->S, g->m, 1, &T->mem[j]);
		if (j == T->S - 1)
			continue;
		if (g->commv) {
			T->cf[j] = g->commv[j];
			T->cb[j] = g->commv[j] + T->L;
		} else {
			double *v = T->own + 2 * (size_t)j * (size_t)T->L;

			for (int l = 0; l < T->L; l++)
				g->comm(g->ctx, j, mu * m->layers[l].act_mb *
				    1e6, &v[l], &v[T->L + l]);
			T->cf[j] = v;
			T->cb[j] = v + T->L;
		}
	}
}

void
tab_free(struct tab *T)
{
	free(T->cf);
	free(T->cb);
	free(T->own);
	free(T->cap);
	free(T->unit);
	free(T->phi);
	free(T->mem);
	free(T->amin);
	free(T->ty);
	free(T->tc);
	free(T->tc_ok);
}

/*
 * Stage j's row of T->tc for ranges ending at layer b, NULL if not kept;
 * cleared the first time it is asked for.
 */
static double *
tc_row(const struct tab *T, int j, int b)
{
	size_t r;

	if (T->tc == NULL)
		return NULL;
	r = (size_t)T->ty[j] * (size_t)T->L + (size_t)b;
	if (!T->tc_ok[r]) {
		memset(T->tc + r * (size_t)T->L, 0, ((size_t)b + 1) *
		    sizeof(double));
		T->tc_ok[r] = 1;
	}
	return T->tc + r * (size_t)T->L;
}

/*
 * cost_stage_compute() of stage j holding [a, b], a <= b, read from the
 * cost context's range tables when it keeps them (cost.h).
 */
static inline double
unit_t(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b)
{
	size_t i = (size_t)b * x->m->nlayers + (size_t)a;

	if (x->rt_flops == NULL)
		return cost_stage_compute(x, g->node[j], g->k[j], a, b);
	return cost_unit_t(&T->unit[j], x->rt_flops[i], x->rt_tp[i]);
}

/* unit_t() of stage j holding [a, b], from row (tc_row()). */
static inline double
row_t(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double *row, int j, int a, int b)
{
	if (row == NULL)
		return unit_t(x, g, T, j, a, b);
	if (row[a] == 0)
		row[a] = unit_t(x, g, T, j, a, b);
	return row[a];
}

/* row_t() outside a scan. */
static double
stage_t(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b)
{
	return row_t(x, g, T, tc_row(T, j, b), j, a, b);
}

/*
 * The first layer a (>= j) with which stage j ending at b fits in memory,
 * b + 1 when even [b, b] does not, with the same comparison scan_stage()
 * makes without it.  The first time stage j is asked, its whole row is
 * filled: a stage's memory grows with its range, so that layer never
 * falls as b grows, and one pass over b moves it forward.
 */
static int
first_fit(const struct dl_costctx *x, const struct tab *T, int j, int b)
{
	int *row = &T->amin[j * T->L], lo = j;

	if (row[b] > 0)
		return row[b] - 1;
	for (int e = j; e < T->L; e++) {
		while (lo <= e && cost_mem_at(x, &T->mem[j], lo, e) > T->cap[j])
			lo++;
		row[e] = lo + 1;
	}
	return row[b] - 1;
}

/*
 * What a scan over the first layer a of stage j ending at b needs that
 * does not depend on a: the transfer *c, and *lo and *row for
 * scan_stage().  Returns 0 when c has no route (not a usable boundary).
 */
static int
scan_start(const struct dl_costctx *x, const struct tab *T, int j, int b,
    double *c, int *lo, double **row)
{
	*c = j < T->S - 1 ? tab_comm(T, j, b) : 0;
	if (!isfinite(*c))
		return 0;
	*lo = T->amin != NULL ? first_fit(x, T, j, b) : j;
	*row = tc_row(T, j, b);
	return 1;
}

/*
 * Stage j holding [a, b] inside a scan set up by scan_start() for that b:
 * 0 when it does not fit in memory, else 1 with its time in *t.
 */
static inline int
scan_stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int lo, double *row, int a, int b,
    double *t)
{
	if (T->amin != NULL ? a < lo : cost_mem_at(x, &T->mem[j], a, b) >
	    T->cap[j])
		return 0;
	*t = row_t(x, g, T, row, j, a, b);
	return 1;
}

/* Stage j holding layers [a, b]: time t, transfer c, memory fit. */
int
tab_stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b, double *t, double *c)
{
	double *row;
	int lo;

	return scan_start(x, T, j, b, c, &lo, &row) &&
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
 * Whether the DPs below need cell (j, b), stage j ending at layer b.
 * Stage j needs j layers before it and S - 1 - j after, and the last
 * stage ends at the last layer: the rest of its row is never read.
 */
static int
dp_cell(const struct tab *T, int j, int b)
{
	if (b < j || T->L - 1 - b < T->S - 1 - j)
		return 0;
	return j < T->S - 1 || b == T->L - 1;
}

/*
 * Where the scan of cell (j, b) starts.  Stage 0 starts at layer 0, so
 * its scan looks at a = 0 alone: every test that would stop a scan from
 * b before it reached 0 (the stage does not fit, or is too slow) fails at
 * 0 as well, since memory and t only grow as a falls, and the a above 0
 * have no previous stage to add to.  The answer is the same.
 */
static int
scan_top(int j, int b)
{
	return j == 0 ? 0 : b;
}

/*
 * What sum_dp() keeps from one call to the next of a frontier's scan,
 * whose bottlenecks B only grow: for each cell (j, b), thr the least
 * value above the B of its last scan that a test of the scan compared
 * with B (t + xback where it stopped, P of a first layer it skipped; a
 * larger B passes a test only at or above it), and rd the first layer a
 * where the scan stopped (or j - 1), so that it read f(j - 1, a - 1) for
 * a in (rd, b].  A cell whose thr is above the next B and none of whose
 * f(j - 1, .) read changed would scan the same layers, take the same
 * branches and store the same f and arg: it is not scanned again.  chg
 * is 1 where this call changed f, two rows of prefix counts over the
 * previous row and this one; ok is 0 until a call has filled the rest
 * (f and arg then hold sum_dp() at B).
 */
struct dp_memo {
	int ok;
	double B;
	double *thr;	/* S x L */
	int *rd;	/* S x L */
	int *pc;	/* 2 x (L + 1): changes of f up to index i, row j - 1
			 * and row j */
};

/*
 * Least sum of (t + c) over partitions whose every stage has P <= B; the
 * argmin's stage ends go to last[].  Returns HUGE_VAL when none exists.
 * f and arg are (S x L) scratch.  P only grows as a stage takes more
 * layers once its first layer's incoming transfer is set aside (t grows,
 * the gradient it receives depends on b only), so the scan stops at the
 * first a with t + xback > B and skips those whose own xin is too large.
 * With M (not NULL) the cells that cannot change since the last call with
 * M, at a B no larger, are left as they are (struct dp_memo); bounded 0
 * (B = HUGE_VAL, no M) leaves out the tests against B, which none passes.
 */
static inline double
sum_dp(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double B, double *f, int *arg, int *last,
    struct dp_memo *M, int bounded)
{
	int S = T->S, L = T->L, lo, inc;
	double t, c, *row;
	int *pp = NULL, *pn = NULL;

	inc = M != NULL && M->ok && !(B < M->B);
	for (int j = 0; j < S; j++) {
		if (M != NULL) {
			pp = M->pc + (size_t)(j & 1) * (size_t)(L + 1);
			pn = M->pc + (size_t)(~j & 1) * (size_t)(L + 1);
			pn[0] = 0;
		}
		for (int b = 0; b < L; b++) {
			double best = HUGE_VAL, yb, thr = HUGE_VAL, p;
			int ba = -1, a, i = j * L + b;

			if (inc) {
				int lo_i = M->rd[i];

				/* f(j - 1, i') for i' in [rd, b - 1]. */
				if (!(M->thr[i] <= B) && (j == 0 || lo_i >= b ||
				    pp[b] - pp[lo_i < 0 ? 0 : lo_i] == 0)) {
					pn[b + 1] = pn[b];
					continue;
				}
			}
			f[i] = HUGE_VAL;
			arg[i] = -1;
			a = b;
			if (!dp_cell(T, j, b))
				goto done;
			/* tab_stage() without what depends on a. */
			if (!scan_start(x, T, j, b, &c, &lo, &row))
				goto done;
			yb = xback(T, j, b);
			for (a = scan_top(j, b); a >= j; a--) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];
				double v;

				if (!scan_stage(x, g, T, j, lo, row, a, b, &t))
					break;
				if (bounded && t + yb > B) {
					thr = fmin(thr, t + yb);
					break;
				}
				if (prev == HUGE_VAL)
					continue;
				if (bounded && (p = pipe_lane(t, xin(T, j, a), yb)) >
				    B) {
					thr = fmin(thr, p);
					continue;
				}
				v = prev + t + c;
				if (v <= best) {
					best = v;
					ba = a;
				}
			}
done:
			if (M != NULL) {
				int ch = !inc || best != f[i];

				pn[b + 1] = pn[b] + ch;
				M->thr[i] = thr;
				M->rd[i] = a;
			}
			f[i] = best;
			arg[i] = ba;
		}
	}
	if (M != NULL) {
		M->ok = 1;
		M->B = B;
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
fits_greedy(const struct dl_costctx *x, const struct tab *T)
{
	int S = T->S, L = T->L, a = 0;

	for (int j = 0; j < S; j++) {
		int hi = j == S - 1 ? L - 1 : L - 1 - (S - 1 - j), lo = a;

		if (a > hi || cost_mem_at(x, &T->mem[j], a, a) > T->cap[j])
			return 0;
		if (j == S - 1)
			return !(cost_mem_at(x, &T->mem[j], a, L - 1) >
			    T->cap[j]);
		/* The last b in [a, hi] whose range [a, b] fits. */
		while (lo < hi) {
			int mid = lo + (hi - lo + 1) / 2;

			if (cost_mem_at(x, &T->mem[j], a, mid) > T->cap[j])
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
 * Sort the finite values of v[lo .. hi] into val without repeats; cls[i]
 * becomes the index of v[i] in val (-1 when it is not finite).  Returns
 * how many distinct values there are.
 */
static int
price_classes(const double *v, int lo, int hi, int *cls, double *val)
{
	int n = 0, k = 0;

	for (int i = lo; i <= hi; i++)
		if (isfinite(v[i]))
			val[n++] = v[i];
	qsort(val, (size_t)n, sizeof(double), cmp_double);
	for (int i = 0; i < n; i++)
		if (k == 0 || val[i] != val[k - 1])
			val[k++] = val[i];
	for (int i = lo; i <= hi; i++) {
		int a = 0, b = k - 1;

		cls[i] = -1;
		if (!isfinite(v[i]))
			continue;
		while (a < b) {
			int mid = a + (b - a) / 2;

			if (val[mid] < v[i])
				a = mid + 1;
			else
				b = mid;
		}
		cls[i] = a;
	}
	return k;
}

/*
 * sum_dp() for long models.  The scan over a stage's first layer a costs
 * O(L) for every stage end b, so O(S L^2) per call, which is minutes for a
 * thousand layers.  Above part_window_layers layers the same minimum is
 * found with sliding windows: t(a, b) = kappa (F(b) - F(a - 1)) (F the
 * prefix sums of FLOPs and of TP volume, kappa per unit), so the best a
 * for b minimises q(a) = f(j - 1, a - 1) - kappa F(a - 1) over the a that
 * fit in memory and keep P <= B, that is t(a, b) <= B - xin(a) - xback(b).
 * That threshold is the same for every a of one incoming price and every
 * b of one outgoing price (a price class: most models send one or two
 * activation sizes), and within one pair of classes the window of a
 * whose stage fits and keeps t under it only moves right as b grows.  So
 * one pass runs per pair of classes, its a joining as b passes them; a
 * deque keeps each window's minimum (the smallest a on ties, and across
 * passes too).  The value stored is the stage's own t + c for that a, as
 * the scan computes it; the argmin can differ from the scan's only
 * between partitions whose sums differ in the last bits.
 */
int part_window_layers = PART_WINDOW_LAYERS;

/* One window pass of stage j for the a of class ka and the b of kb. */
struct wpass {
	int j, ka, kb, *acls, *bcls, *dq;
	double B, xa, xb, k1, k2, *q;	/* P <= B for t + xa + xb */
};

static void
window_pass(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, const struct wpass *w, double *f, int *arg)
{
	int S = T->S, L = T->L, j = w->j, lo = j, h = 0, n = 0;
	double t, c;

	for (int b = j; b <= L - 1 - (S - 1 - j); b++) {
		double prev = j == 0 ? (b == 0 ? 0 : HUGE_VAL) :
		    f[(j - 1) * L + b - 1], v;

		/* a = b joins the window. */
		if (w->acls[b] == w->ka && prev != HUGE_VAL) {
			w->q[b] = prev - w->k1 * x->cum_flops[b] -
			    w->k2 * x->cum_tp[b];
			while (n > 0 && w->q[w->dq[h + n - 1]] > w->q[b])
				n--;
			w->dq[h + n++] = b;
		}
		if (w->bcls[b] != w->kb)
			continue;
		c = j < S - 1 ? tab_comm(T, j, b) : 0;
		if (!isfinite(c))
			continue;
		/* The window: the a whose stage fits with P <= B (summed as
		 * sum_dp() sums it). */
		while (lo <= b && (!tab_stage(x, g, T, j, lo, b, &t, &c) ||
		    t + w->xa + w->xb > w->B))
			lo++;
		while (n > 0 && w->dq[h] < lo) {
			h++;
			n--;
		}
		if (n == 0)
			continue;
		tab_stage(x, g, T, j, w->dq[h], b, &t, &c);
		v = f_prev(f, j, L, w->dq[h]) + t + c;
		if (v < f[j * L + b] || (v == f[j * L + b] && w->dq[h] <
		    arg[j * L + b])) {
			f[j * L + b] = v;
			arg[j * L + b] = w->dq[h];
		}
	}
}

static double
sum_dp_window(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double B, double *f, int *arg, int *last)
{
	int S = T->S, L = T->L;
	double *xa = xcalloc((size_t)L, sizeof(double));
	double *xb = xcalloc((size_t)L, sizeof(double));
	double *va = xcalloc((size_t)L + 1, sizeof(double));
	double *vb = xcalloc((size_t)L + 1, sizeof(double));
	double mu = (double)x->o->micro_batch;
	struct wpass w;

	w.dq = xcalloc((size_t)L + 1, sizeof(int));
	w.q = xcalloc((size_t)L + 1, sizeof(double));
	w.acls = xcalloc((size_t)L, sizeof(int));
	w.bcls = xcalloc((size_t)L, sizeof(int));
	for (int j = 0; j < S; j++) {
		int node = g->node[j], k = g->k[j], na, nb;

		w.j = j;
		w.k1 = mu / (k * x->speed[node]);
		w.k2 = k > 1 ? mu * (2.0 * (k - 1) / k) /
		    (x->c->nodes[node].intra_gbps * 1e9 / 8) : 0;
		for (int l = 0; l < L; l++) {
			f[j * L + l] = HUGE_VAL;
			arg[j * L + l] = -1;
			xa[l] = l >= j && (j == 0 || l > 0) ? xin(T, j, l) :
			    HUGE_VAL;
			xb[l] = xback(T, j, l);
		}
		na = price_classes(xa, 0, L - 1, w.acls, va);
		nb = price_classes(xb, 0, L - 1, w.bcls, vb);
		for (w.ka = 0; w.ka < na; w.ka++)
			for (w.kb = 0; w.kb < nb; w.kb++) {
				w.B = B;
				w.xa = va[w.ka];
				w.xb = vb[w.kb];
				window_pass(x, g, T, &w, f, arg);
			}
	}
	free(w.dq);
	free(w.q);
	free(w.acls);
	free(w.bcls);
	free(xa);
	free(xb);
	free(va);
	free(vb);
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
    const struct tab *T, double B, double *f, int *arg, int *last,
    struct dp_memo *M)
{
	if (T->L > part_window_layers)
		return sum_dp_window(x, g, T, B, f, arg, last);
	if (M == NULL && B == HUGE_VAL)
		return sum_dp(x, g, T, B, f, arg, last, NULL, 0);
	return sum_dp(x, g, T, B, f, arg, last, M, 1);
}

/* Least bottleneck max_j P_j over feasible partitions. */
static double
minmax_dp(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, double *f)
{
	int S = T->S, L = T->L;
	double t, c;

	for (int j = 0; j < S; j++)
		for (int b = 0; b < L; b++) {
			double best = HUGE_VAL, *row, yb;
			int lo;

			f[j * L + b] = HUGE_VAL;
			if (!dp_cell(T, j, b))
				continue;
			if (!scan_start(x, T, j, b, &c, &lo, &row))
				continue;
			yb = xback(T, j, b);
			for (int a = scan_top(j, b); a >= j; a--) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];
				double p;

				if (!scan_stage(x, g, T, j, lo, row, a, b, &t))
					break;
				if (t + yb >= best)
					break;
				if (prev == HUGE_VAL)
					continue;
				p = pipe_lane(t, xin(T, j, a), yb);
				if (fmax(prev, p) < best)
					best = fmax(prev, p);
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
	double bmin;		/* least bottleneck, once bknown */
	int bknown;
	double *cand;		/* distinct candidate bottlenecks, ascending */
	size_t ncand;		/* of them kept in cand (the first is bmin) */
	size_t nall;		/* of them in all (up to max_scan + 1), or
				 * SIZE_MAX until known */
	size_t next;		/* index of the first not scanned */
	size_t n, cap;		/* points */
	double *psum, *pbt;
	size_t *pidx;
	int *plast;		/* n x S */
	double *f;
	int *arg, *tmp;
	struct dp_memo memo;	/* of the scan's sum_dp() calls, with f */
	struct clist *cl;	/* front_cands()'s open listing, or NULL */
};

static void cands_close(struct part_front *);

/* Allocate the DP scratch of F (need), or free it with the listing of
 * candidates that front_cands() keeps open. */
static void
front_scratch(struct part_front *F, int need)
{
	size_t n = (size_t)F->g.S * (size_t)F->T.L;

	if (need && F->f == NULL) {
		/* The DPs write every cell of f and arg before reading it. */
		F->f = xreallocarray(NULL, n, sizeof(double));
		F->arg = xreallocarray(NULL, n, sizeof(int));
		F->tmp = xcalloc((size_t)F->g.S, sizeof(int));
		F->T.amin = xcalloc(n + 1, sizeof(int));
		F->memo.ok = 0;
		F->memo.thr = xreallocarray(NULL, n, sizeof(double));
		F->memo.rd = xreallocarray(NULL, n, sizeof(int));
		F->memo.pc = xreallocarray(NULL, 2 * ((size_t)F->T.L + 1),
		    sizeof(int));
		if (F->T.L <= TAB_TC_LAYERS && 2 * F->T.nty <= F->g.S) {
			F->T.tc = xreallocarray(NULL, (size_t)F->T.nty *
			    (size_t)F->T.L, (size_t)F->T.L * sizeof(double));
			F->T.tc_ok = xcalloc((size_t)F->T.nty *
			    (size_t)F->T.L, 1);
		}
	} else if (!need) {
		cands_close(F);
		free(F->f);
		free(F->arg);
		free(F->tmp);
		free(F->T.amin);
		free(F->T.tc);
		free(F->T.tc_ok);
		free(F->memo.thr);
		free(F->memo.rd);
		free(F->memo.pc);
		memset(&F->memo, 0, sizeof(F->memo));
		F->f = NULL;
		F->arg = NULL;
		F->tmp = NULL;
		F->T.amin = NULL;
		F->T.tc = NULL;
		F->T.tc_ok = NULL;
	}
}

/* Candidates a frontier keeps between queries; more are listed again. */
#define FRONT_KEEP 64
/* Candidates listed first, past bmin: most queries need a few. */
#define FRONT_FIRST 8

/*
 * The candidate lists.  For stage j ending at layer b, the stages [a, b]
 * for a = b, b - 1, ... j (until the first that does not fit in memory)
 * have P = t + xin(a) + xback(b), where t grows as a falls but xin
 * depends on the layer before a.  So each list is ordered by the lower
 * bound t + xback + (the least xin of stage j), which only grows; a heap
 * merges these S x L lists by that key, and a second heap holds the
 * values P of the stages already taken from the first, so that a value
 * is listed once every key left is at least as large.  The two heaps
 * (struct cheap, struct vheap) are partition_heap.c's.
 */

/*
 * The least and the largest finite xin of stage j over its possible first
 * layers.
 */
static void
xin_range(const struct tab *T, int j, double *lo, double *hi)
{
	*lo = *hi = 0;
	if (j == 0)
		return;
	*lo = HUGE_VAL;
	for (int a = j; a <= T->L - (T->S - j); a++) {
		double v = xin(T, j, a);

		if (isfinite(v)) {
			*lo = fmin(*lo, v);
			*hi = fmax(*hi, v);
		}
	}
	if (*lo == HUGE_VAL)
		*lo = *hi = 0;
}

/*
 * The first stage of list (j, b) whose P can reach bmin: the largest a
 * with t(a, b) + (the largest xin) + xback >= bmin, found by bisection (t
 * falls as a rises; summed in the order P is, so that the stage whose P
 * is bmin itself passes); -1 when the list is empty.  Stage 0 starts at 0.
 */
static int
cands_first(struct part_front *F, int j, int b, double xhi)
{
	const struct dl_costctx *x = F->x;
	double yb = xback(&F->T, j, b), t, c;
	int lo = j, hi = b;

	if (j == 0)
		lo = hi = 0;
	if (stage_t(x, &F->g, &F->T, j, lo, b) + xhi + yb < F->bmin)
		return -1;
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;

		if (stage_t(x, &F->g, &F->T, j, mid, b) + xhi + yb >= F->bmin)
			lo = mid;
		else
			hi = mid - 1;
	}
	return tab_stage(x, &F->g, &F->T, j, lo, b, &t, &c) ? lo : -1;
}

/*
 * The merge of front_cands(), kept with the scratch so that a scan that
 * needs more candidates goes on from where the last listing stopped.
 */
struct clist {
	struct cheap h;
	struct vheap ready;
	double *xlo;		/* S: the least xin of each stage */
	size_t room;		/* of F->cand, less one */
};

/* Open F's listing: a heap of every list's first stage. */
static struct clist *
cands_open(struct part_front *F)
{
	int S = F->g.S, L = F->T.L;
	struct clist *cl = xcalloc(1, sizeof(*cl));
	struct cheap *h = &cl->h;
	double c;

	cl->xlo = xcalloc((size_t)S, sizeof(double));
	h->n = 0;
	/* Entries are written as they join the heap. */
	h->v = xreallocarray(NULL, (size_t)S * (size_t)L, sizeof(double));
	h->j = xreallocarray(NULL, (size_t)S * (size_t)L, sizeof(int));
	h->b = xreallocarray(NULL, (size_t)S * (size_t)L, sizeof(int));
	h->a = xreallocarray(NULL, (size_t)S * (size_t)L, sizeof(int));
	for (int j = 0; j < S; j++) {
		double xhi;

		xin_range(&F->T, j, &cl->xlo[j], &xhi);
		for (int b = j; b <= L - (S - j); b++) {
			int a;

			if (j == S - 1 && b != L - 1)
				continue;
			c = j < S - 1 ? tab_comm(&F->T, j, b) : 0;
			if (!isfinite(c) || (a = cands_first(F, j, b, xhi)) < 0)
				continue;
			h->v[h->n] = stage_t(F->x, &F->g, &F->T, j, a, b) +
			    xback(&F->T, j, b) + cl->xlo[j];
			h->j[h->n] = j;
			h->b[h->n] = b;
			h->a[h->n++] = a;
		}
	}
	cheap_heapify(h);
	return cl;
}

static void
cands_close(struct part_front *F)
{
	struct clist *cl = F->cl;

	if (cl == NULL)
		return;
	free(cl->h.v);
	free(cl->h.j);
	free(cl->h.b);
	free(cl->h.a);
	free(cl->ready.v);
	free(cl->xlo);
	free(cl);
	F->cl = NULL;
}

/*
 * List the distinct candidate bottlenecks, every feasible stage's
 * P >= bmin, ascending: the first keep of them (0: all), and never more
 * than a query can look at (max_scan + 1).  F->nall becomes their exact
 * number when the listing reached the end, else stays unknown (SIZE_MAX)
 * unless known before.  A listing still open (F->cl) goes on; else it
 * starts again from the first.
 */
static void
front_cands(struct part_front *F, size_t keep)
{
	struct clist *cl = F->cl;
	struct cheap *h;
	struct vheap *ready;
	size_t cap = F->max_scan > 0 ? (size_t)F->max_scan + 1 : SIZE_MAX;
	size_t want = keep > 0 && keep < cap ? keep : cap, got;
	double t, c;

	if (cl == NULL) {
		cl = F->cl = cands_open(F);
		free(F->cand);
		cl->room = want < 64 ? want : 64;
		F->cand = xcalloc(cl->room + 1, sizeof(double));
		F->ncand = 0;
	}
	h = &cl->h;
	ready = &cl->ready;
	got = F->ncand;
	while ((h->n > 0 || ready->n > 0) && got < want) {
		double v;

		if (h->n > 0 && (ready->n == 0 || h->v[0] < ready->v[0])) {
			int j = h->j[0], b = h->b[0], a = h->a[0];
			double p = xin(&F->T, j, a);

			if (isfinite(p) && (v = stage_t(F->x, &F->g, &F->T, j,
			    a, b) + p + xback(&F->T, j, b)) >= F->bmin)
				vheap_push(ready, v);
			/* The next stage of this list takes the top's place
			 * (one sift instead of a pop and a push). */
			if (j > 0 && --a >= j && tab_stage(F->x, &F->g, &F->T, j,
			    a, b, &t, &c))
				cheap_sift(h, 0, h->n, t + xback(&F->T, j, b) +
				    cl->xlo[j], j, b, a);
			else
				cheap_pop(h);
			continue;
		}
		v = vheap_pop(ready);
		if (got == 0 || v != F->cand[got - 1]) {
			if (got == cl->room) {
				cl->room *= 2;
				F->cand = xreallocarray(F->cand, cl->room + 1,
				    sizeof(double));
			}
			F->cand[got++] = v;
		}
	}
	F->ncand = got;
	if ((h->n == 0 && ready->n == 0) || got == cap)
		F->nall = got;
}

struct part_front *
part_front_new(const struct dl_costctx *x, const struct part_group *g,
    long max_scan)
{
	struct part_front *F = xcalloc(1, sizeof(*F));
	int S = g->S, L = (int)x->m->nlayers;
	double sinf;

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
	F->sinf_last = xcalloc((size_t)S, sizeof(int));
	/*
	 * Some partition fits and has its transfers routed exactly when the
	 * least sum is finite.  The least bottleneck and the candidates wait
	 * for the first query with m >= 2 (front_bmin()): a front made for
	 * one micro-batch answers with sinf alone.
	 */
	sinf = HUGE_VAL;
	if (fits_greedy(x, &F->T)) {
		front_scratch(F, 1);
		sinf = sum_best(x, &F->g, &F->T, HUGE_VAL, F->f, F->arg,
		    F->sinf_last, NULL);
	}
	if (sinf == HUGE_VAL) {
		/*
		 * No partition: the front answers every query from its
		 * status, and the many kept (most groups of the largest
		 * clusters do not hold the model) keep nothing else.
		 */
		front_scratch(F, 0);
		free((int *)F->g.node);
		free((int *)F->g.k);
		F->g.node = F->g.k = NULL;
		tab_free(&F->T);
		return F;
	}
	F->sinf = sinf;
	F->status = LP_OPTIMAL;
	F->nall = SIZE_MAX;
	/*
	 * The scratch is only needed while a scan runs: the first query,
	 * which almost always comes next, uses the rows of amin and tc
	 * filled so far and frees it.
	 */
	return F;
}

/* The least bottleneck, some stage's P and below every other listed P:
 * the first candidate, which the first scan takes without a listing. */
static void
front_bmin(struct part_front *F)
{
	if (F->bknown)
		return;
	front_scratch(F, 1);
	F->bmin = minmax_dp(F->x, &F->g, &F->T, F->f);
	/* minmax_dp() wrote f, which the scan's memo reads. */
	F->memo.ok = 0;
	F->bknown = 1;
	F->cand = xreallocarray(F->cand, 2, sizeof(double));
	F->cand[0] = F->bmin;
	F->ncand = 1;
}

/* Scan the next candidate; keep its point unless an earlier dominates. */
static void
front_step(struct part_front *F)
{
	const struct dl_costctx *x = F->x;
	int S = F->g.S;
	double B = F->cand[F->next], s, bt = 0, sum = 0, t, c;

	s = sum_best(x, &F->g, &F->T, B, F->f, F->arg, F->tmp, &F->memo);
	if (s != HUGE_VAL) {
		/* Score with the true bottleneck of this partition. */
		for (int j = 0, a = 0; j < S; j++) {
			tab_stage(x, &F->g, &F->T, j, a, F->tmp[j], &t, &c);
			bt = fmax(bt, pipe_lane(t, xin(&F->T, j, a),
			    xback(&F->T, j, F->tmp[j])));
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
		front_scratch(F, 0);
		goto out;
	}
	front_bmin(F);
	/* Points come in scan order: each is looked at once, the first
	 * strictly best wins. */
	for (size_t seen = 0;;) {
		for (; seen < F->n; seen++) {
			double v = pipe_closed(F->psum[seen], F->pbt[seen],
			    m);

			if ((max_scan <= 0 || F->pidx[seen] <
			    (size_t)max_scan) && v < best) {
				best = v;
				bi = (long)seen;
			}
		}
		if (F->next >= F->nall)
			break;
		if (F->next >= F->ncand) {
			size_t want = 2 * F->ncand;

			/* The last candidate kept is below the next: where it
			 * stops the scan already, the next is not listed. */
			if (pipe_closed(F->sinf, F->cand[F->ncand - 1], m) >=
			    best)
				break;
			/* Twice as many as listed (and past the next): the
			 * same ascending list, grown as far as the scan gets. */
			if (want < FRONT_FIRST)
				want = FRONT_FIRST;
			if (want <= F->next)
				want = F->next + 1;
			front_cands(F, want);
			if (F->next >= F->nall)
				break;
		}
		if (pipe_closed(F->sinf, F->cand[F->next], m) >= best)
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
	free(F->memo.thr);
	free(F->memo.rd);
	free(F->memo.pc);
	cands_close(F);
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

/*
 * A stage's memory never falls as m grows (it holds min(m, S - j)
 * micro-batches), so the first m at which some stage does not fit is the
 * least over the stages of the first m at which each does not, found by
 * bisection: S log S prices instead of S^2.
 */
long
part_mcap(const struct dl_costctx *x, int S, const int *k, const int *node,
    const int *last)
{
	long most = LONG_MAX;

	for (int j = 0, a = 0; j < S && most > 0; a = last[j] + 1, j++) {
		double cap = cost_gpu_capacity(x, node[j]);
		long lo = 1, hi = S < most ? S : most;

		if (!(cost_stage_memory(x, a, last[j], 1.0 / k[j], j + 1, S,
		    hi) > cap))
			continue;
		/* The least m in [lo, hi] at which stage j does not fit. */
		while (lo < hi) {
			long mid = lo + (hi - lo) / 2;

			if (cost_stage_memory(x, a, last[j], 1.0 / k[j], j + 1,
			    S, mid) > cap)
				hi = mid;
			else
				lo = mid + 1;
		}
		most = lo - 1;
	}
	return most;
}
