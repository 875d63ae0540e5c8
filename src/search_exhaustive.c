/*
 * search_exhaustive.c - the exhaustive mode of the plan search: the whole
 * plan space of src/DESIGN-NOTES, pruned by exact lower bounds, so its
 * answer is the optimum of the cost model (see search.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "partition.h"
#include "pipesched.h"
#include "sb.h"
#include "search_int.h"
#include "split.h"

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
	struct kcache seen;	/* signatures of the shapes scored */
	int perm[64];
	/* The combination being scored: per group f, b, xf, xb of its cut
	 * (4 S values, struct cutlist). */
	const double *lbd[64];
	/* Its cuts' rooms under the best T so far (struct cutlist). */
	double *rbest[64];
	long *room[64];
	/* Progress (search_opts.progress): calls since the clock was read,
	 * when the caller was last told, T_lb. */
	unsigned ticks;
	double told, lb;
};

/*
 * Tell the caller how far the search is, at most twice a second: the
 * clock is read every 256 calls (a structure or a combination scored).
 */
static void
exh_tick(struct exh *X, int final)
{
	const struct ctx *C = X->C;
	struct search_progress pg;
	double now;

	if (C->so->progress == NULL || (!final && ++X->ticks % 256 != 0))
		return;
	now = mono_now();
	if (!final && now - X->told < 0.5)
		return;
	X->told = now;
	pg.done = C->st->structures;
	pg.total = 0;
	pg.final = final;
	pg.exhaustive = 1;
	pg.best_t = C->have_best ? C->best_t : HUGE_VAL;
	pg.lower_bound = X->lb;
	C->so->progress(C->so->progress_arg, &pg);
}

/* Add signature sig to the shapes seen: 0 when it was there. */
static int
seen_add(struct exh *X, const char *sig)
{
	size_t n = strlen(sig), i;

	if (kc_findi(&X->seen, sig, n, &i))
		return 0;
	kc_puti(&X->seen, sig, n, X->seen.n);
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
 * m = 1, or 0 when a GPU's memory is exceeded even then.  The bottleneck
 * is the largest backward pass, so that sum + (m - 1) bt is a lower bound
 * on T_g (pipesched.h, pipe_lower()).
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
		*bt = fmax(*bt, t * (1 - cost_fwd_share(C->x, a, last[j])));
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
	double *lbd;		/* n x 4 S: f, b, xf, xb (transfers alone) */
	/* The last can_beat() answer per cut: room[i] micro-batches fit
	 * below rbest[i] (-1: none yet). */
	double *rbest;
	long *room;
};

static int exact_split(const struct ctx *, const struct dl_plan *,
    const long *, long *, double *);
static int can_beat(const struct exh *, const struct shape *, const long *,
    double);
static void cut_times(struct ctx *, const struct shape *, int, const int *,
    double *);

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
	int st, rc;
	struct dl_err e = { 0 };

	exh_tick(X, 0);
	for (int g = 0; g < sh->G; g++) {
		sg[g].A = Ac[g];
		sg[g].M = Mc[g];
		sg[g].cap = caps[g];
	}
	/*
	 * Once a plan is known, can_beat() prunes with the stronger bound;
	 * the split only seeds the first evaluation (exact_split() then
	 * chooses the split that counts).
	 */
	if (C->have_best && !can_beat(X, sh, caps, C->best_t)) {
		C->st->pruned++;
		return;
	}
	for (int g = 0; g < sh->G; g++)
		m[g] = 1;
	m[0] = C->total - (sh->G - 1);
	if (!C->have_best) {
		split_exact(sg, sh->G, C->total, 1, m, &z, &st);
		if (st != LP_OPTIMAL) {
			C->st->pruned++;
			return;
		}
	}
	search_build_plan(C, &C->work, sh, cur, m);
	C->st->evaluated++;
	/* Stage times and transfers do not depend on the split, even when
	 * this seed split does not fit in memory (DL_EINFEAS). */
	rc = cost_eval(C->x, &C->work, &e);
	if (rc != DL_OK && rc != DL_EINFEAS)
		return;
	if (!exact_split(C, &C->work, caps, m, &z))
		return;
	if (C->have_best && C->x->sync_floor > 0 &&
	    C->work.est.sync_s + z >= C->best_t * (1 + 1e-12))
		return;
	search_build_plan(C, &C->work, sh, cur, m);
	search_consider(C);
}

/* The 1F1B inputs of an evaluated plan (cost_pipe_inputs()). */
struct pin {
	const struct dl_plan *p;
	const int *base;
	double *f, *b, *xf, *xb;
};

/* T_g of group g of in with m micro-batches. */
static double
pin_at(const struct pin *in, int g, long m)
{
	int o = in->base[g];

	return pipe_makespan(in->p->groups[g].nstages, m, in->f + o,
	    in->b + o, in->xf + o, in->xb + o, NULL, NULL);
}

/*
 * The split of C->total micro-batches over the groups of evaluated plan p
 * (every group at least one, group g at most caps[g]) that minimises the
 * largest T_g, into m[] and that T into *z: one each, then each further
 * micro-batch to the group whose T_g grows least with it (the lowest
 * index on ties).  T_g is non-decreasing in m_g, so this greedy is
 * optimal, and T_g(m) is the makespan of p's stage and transfer times
 * (cost_pipe_inputs()).  0 when the caps do not allow it.
 */
static int
exact_split(const struct ctx *C, const struct dl_plan *p, const long *caps,
    long *m, double *z)
{
	int G = p->ngroups, *base = xcalloc((size_t)G + 1, sizeof(int)), ok = 1;
	double *now = xcalloc((size_t)G, sizeof(double));
	double *next = xcalloc((size_t)G, sizeof(double)), *v;
	long left = C->total - G;
	struct pin in;

	for (int g = 0; g < G; g++)
		base[g + 1] = base[g] + p->groups[g].nstages;
	v = xcalloc(4 * (size_t)base[G] + 1, sizeof(double));
	in.p = p;
	in.base = base;
	in.f = v;
	in.b = v + base[G];
	in.xf = v + 2 * base[G];
	in.xb = v + 3 * base[G];
	cost_pipe_inputs(C->x, p, base, in.f, in.b, in.xf, in.xb);
	for (int g = 0; g < G; g++) {
		m[g] = 1;
		if (caps[g] < 1)
			ok = 0;
		now[g] = pin_at(&in, g, 1);
		next[g] = caps[g] > 1 ? pin_at(&in, g, 2) : HUGE_VAL;
	}
	for (; ok && left > 0; left--) {
		int best = -1;

		for (int g = 0; g < G; g++)
			if (next[g] < HUGE_VAL && (best < 0 ||
			    next[g] < next[best]))
				best = g;
		if (best < 0) {
			ok = 0;
			break;
		}
		m[best]++;
		now[best] = next[best];
		next[best] = m[best] < caps[best] ? pin_at(&in, best,
		    m[best] + 1) : HUGE_VAL;
	}
	*z = 0;
	for (int g = 0; g < G; g++)
		*z = fmax(*z, now[g]);
	free(base);
	free(now);
	free(next);
	free(v);
	return ok && left <= 0;
}

/*
 * The f, b, xf and xb (4 S values) of group g of sh with stage ends last,
 * each transfer priced alone, for pipe_lower().
 */
static void
cut_times(struct ctx *C, const struct shape *sh, int g, const int *last,
    double *out)
{
	int S = sh->S[g];
	struct commctx cc = { C->x, NULL, 0, &C->tc };

	for (int j = 0, a = 0; j < S; j++) {
		const struct unit *u = sh->u[sh->off[g] + j];
		double t = cost_stage_compute(C->x, u->node, u->k, a, last[j]);

		out[j] = t * cost_fwd_share(C->x, a, last[j]);
		out[S + j] = t - out[j];
		out[2 * S + j] = out[3 * S + j] = 0;
		if (j + 1 < S)
			search_comm_dirs(&cc, u->node, sh->u[sh->off[g] + j +
			    1]->node, (double)C->x->o->micro_batch *
			    C->x->m->layers[last[j]].act_mb * 1e6,
			    &out[2 * S + j], &out[3 * S + j]);
		a = last[j] + 1;
	}
}

/*
 * The most micro-batches group g of the combination X->lbd can take below
 * best: the largest m <= cap with pipe_lower(m) below best (it is
 * non-decreasing in m), remembered per cut for the same best.
 */
static long
group_room(const struct exh *X, const struct shape *sh, int g, long cap,
    double best)
{
	int S = sh->S[g];
	const double *d = X->lbd[g];
	long lo = 0, hi = cap < X->C->total ? cap : X->C->total;

	if (*X->rbest[g] == best)
		return *X->room[g];
	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2;

		if (pipe_lower(S, mid, d, d + S, d + 2 * S, d + 3 * S) *
		    (1 - 1e-9) < best)
			lo = mid;
		else
			hi = mid - 1;
	}
	*X->rbest[g] = best;
	*X->room[g] = lo;
	return lo;
}

/*
 * Whether some split of the combination X->lbd (every group at least one
 * micro-batch, at most caps[g]) could take less than best: the groups'
 * rooms must add up to C->total.
 */
static int
can_beat(const struct exh *X, const struct shape *sh, const long *caps,
    double best)
{
	long room = 0;

	for (int g = 0; g < sh->G; g++) {
		long r = group_room(X, sh, g, caps[g], best);

		if (r < 1)
			return 0;
		room += r;
	}
	return room >= X->C->total;
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
		X->lbd[g] = cl[g].lbd + (size_t)i * 4 * (size_t)cl[g].S;
		X->rbest[g] = &cl[g].rbest[i];
		X->room[g] = &cl[g].room[i];
		/* A cut that cannot take one micro-batch below the best
		 * prunes every combination with it. */
		if (C->have_best && group_room(X, sh, g, cl[g].cap[i],
		    C->best_t) < 1) {
			C->st->pruned++;
			continue;
		}
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
					bm = fmin(bm, fmax(pm, t * (1 -
					    cost_fwd_share(C->x, a, b))));
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
			split_exact(sg, sh->G, C->total, 1, m, &z, &st);
			if (st != LP_OPTIMAL || (C->have_best &&
			    z >= C->best_t))
				prune = 1;
		}
	}
	for (int q = 0; q < sh->G && !prune; q++) {
		size_t cap = 0, cap2 = 0, cap3 = 0, cap4 = 0, cap5 = 0;
		size_t cap6 = 0, cap7 = 0;
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
				split_exact(sg, sh->G, C->total, 1, m, &z,
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
			cl[q].lbd = xgrow(cl[q].lbd, &cap5, ((size_t)cl[q].n +
			    1) * 4 * (size_t)S, sizeof(double));
			cut_times(C, sh, q, last, cl[q].lbd + (size_t)cl[q].n *
			    4 * (size_t)S);
			cl[q].rbest = xgrow(cl[q].rbest, &cap6, (size_t)cl[q].n +
			    1, sizeof(double));
			cl[q].room = xgrow(cl[q].room, &cap7, (size_t)cl[q].n + 1,
			    sizeof(long));
			cl[q].rbest[cl[q].n] = -1;
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
		free(cl[q].lbd);
		free(cl[q].rbest);
		free(cl[q].room);
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
	if (sh.G == 0 || sh.G > C->total || !search_strategy_allows(C->so->strategy,
	    &sh) || !seen_add(X, sig.buf)) {
		sb_free(&sig);
		return;
	}
	sb_free(&sig);
	for (int q = 0; q < sh.G; q++)
		if (S[q] > C->L)
			return;
	C->st->structures++;
	exh_tick(X, 0);
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

void
search_exhaustive(struct ctx *C)
{
	struct exh *X = xcalloc(1, sizeof(*X));

	X->C = C;
	X->told = mono_now();
	if (C->so->progress != NULL)
		X->lb = cost_lower_bound(C->x);
	exh_units(X, 0, C->x->c->nodes[0].gpus, DL_MAX_TP, 0);
	if (!C->failed)
		exh_tick(X, 1);
	kc_free(&X->seen);
	free(X);
}
