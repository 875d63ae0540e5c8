/*
 * search_bound_lp.c - linear relaxations that raise search_bound() for
 * plans whose units lie in one site: for plans of G >= 2 groups, where the sync rings of slow
 * links, not the compute, keep nodes out of the best plans, and for one
 * group, where the fill and the TP degrees each layer may use do.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proof.  Take a plan of G >= 2 groups with M micro-batches in all,
 * pipeline time P = max_g T_g and sync time s = T_sync, so T = P + s.
 * Sort the nodes into classes of equal GPUs, speed, NVLink, widest
 * out-link and memory; N_c is the GPUs of class c.  For class c and
 * layer l write a_cl for the number of groups whose stage holding l lies
 * on a node of c, and b_cl for the sum of m_g over those groups.  Then:
 *
 * (1) sum_c a_cl = G and sum_c b_cl = M for every l (every group holds
 *     every layer once and sends its m_g micro-batches through it).
 * (2) A stage on unit u of k GPUs holding layers L_u takes
 *     t_u = sum over L_u of t_k(l) (compute and TP all-reduce are linear
 *     in the layers), and m_g t_u <= T_g <= P.  So the GPU time of
 *     class c, sum over its units of k_u m_g t_u, is at most N_c P and
 *     at least sum_l g_cl b_cl with g_cl = min_k k t_k(l): the compute
 *     row.  And m_g <= P / t_min(c, l), t_min the least t_k(l) on c,
 *     and m_g <= M: b_cl <= a_cl min(P / t_min(c, l), M).
 * (3) A unit syncs the P_q of every segment it holds in a ring of G
 *     members, R_q = 2 (G - 1) max hop tau(P_q grad / G).  The hop from
 *     its own member goes to the same node, 8 S / NVLink, or leaves it,
 *     at least 8 S / the widest out-link of the node (its first edge, at
 *     full bandwidth, latency left out).  A node of fewer than G GPUs
 *     cannot hold a whole ring, so some member on it makes a hop out of
 *     it, and the slowest hop is at least the second.  Hence
 *     s >= kappa_c P_u for every unit u of c, and as c has at most N_c
 *     units, N_c s >= kappa_c sum_l p_l a_cl.
 * (4) Every GPU holds its share of its unit's parameters (the shares of
 *     a unit add up to 1): bytes sum_l p_l a_cl <= N_c capacity_c.
 *
 * Layers of equal FLOPs, TP traffic and parameters (a model's blocks)
 * share one column pair: their sums of a_cl and b_cl meet the same rows
 * with G and M times their number, and the program is that much smaller.
 *
 * So every plan whose pipeline time lies in [lo, hi] is a solution of
 * this linear program with P a column in [lo, hi] and the rate rows of
 * (2) taken at hi (a_cl P <= a_cl hi), and T >= the least P + s.  The
 * intervals cover [P_0, P_1], P_0 a lower bound of the pipeline time
 * (search_bound()'s, for G groups); beyond, T >= P_1.  The least of
 * these is the bound.  GLPK solves the program in floating point: hi is
 * raised and the least P + s lowered by a part in 10^6 so that its
 * rounding cannot lift the bound above the truth.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lp.h"
#include "search_bound_int.h"

/* Node classes times layers this relaxation takes on (columns / 2). */
#define BOUND_LP_CELLS 1024
/* Halvings of the range of pipeline times, for each G. */
#define BOUND_LP_SPLITS 6
/* The rounding margin of the proof. */
#define BOUND_LP_EPS 1e-6
/* TP degrees 1, 2, 4 ... DL_MAX_TP. */
#define BOUND_LP_DEGREES 4

struct bound_lp {
	const struct dl_costctx *x;
	size_t nc;		/* node classes */
	int L;			/* layer classes */
	long *cnt;		/* L: layers in each */
	double *par;		/* L: parameters of one of them */
	long *gpus;		/* N_c */
	int *node_gpus;		/* GPUs of one node of the class */
	double *bw_in, *bw_out;	/* NVLink, widest out-link: Gbps */
	double *cap;		/* N_c times the usable bytes per GPU */
	double *g, *tmin;	/* nc x L */
	double *tk;		/* BOUND_LP_DEGREES x nc x L: t_k(l), k = 2^i */
};

/* Whether nodes r and n fall in one class (out: their widest out-links). */
static int
same_class(const struct dl_costctx *x, const double *out, size_t r, size_t n)
{
	const struct dl_node *a = &x->c->nodes[r], *b = &x->c->nodes[n];

	return a->gpus == b->gpus && x->speed[r] == x->speed[n] &&
	    a->intra_gbps == b->intra_gbps && a->mem_gb == b->mem_gb &&
	    out[r] == out[n];
}

/* Whether layers a and b cost the same in every row of the program. */
static int
same_layer(const struct dl_costctx *x, int a, int b)
{
	return cost_range_flops(x, a, a) == cost_range_flops(x, b, b) &&
	    cost_range_tp(x, a, a) == cost_range_tp(x, b, b) &&
	    cost_range_params(x, a, a) == cost_range_params(x, b, b);
}

struct bound_lp *
bound_lp_new(const struct dl_costctx *x, const unsigned char *in)
{
	const struct dl_cluster *c = x->c;
	int L = (int)x->m->nlayers;
	struct bound_lp *B;
	size_t *cls, *of;
	double *out;
	int *rep;

	if ((in == NULL && c->nsites > 1) || L < 1 || c->nnodes == 0)
		return NULL;
	B = xcalloc(1, sizeof(*B));
	B->x = x;
	rep = xcalloc((size_t)L, sizeof(int));
	B->cnt = xcalloc((size_t)L, sizeof(long));
	B->par = xcalloc((size_t)L, sizeof(double));
	/* Layer classes, each named by its first layer. */
	for (int l = 0; l < L; l++) {
		int i;

		for (i = 0; i < B->L; i++)
			if (same_layer(x, rep[i], l))
				break;
		if (i == B->L) {
			rep[B->L] = l;
			B->par[B->L++] = cost_range_params(x, l, l);
		}
		B->cnt[i]++;
	}
	L = B->L;
	cls = xcalloc(c->nnodes, sizeof(size_t));
	of = xcalloc(c->nnodes, sizeof(size_t));
	out = xcalloc(c->nnodes, sizeof(double));
	cluster_widest_out(c, out);
	/* Classes, each named by its first node; of[n]: node n's. */
	for (size_t n = 0; n < c->nnodes; n++) {
		size_t k;

		if (in != NULL && !in[n])
			continue;
		for (k = 0; k < B->nc; k++)
			if (same_class(x, out, cls[k], n))
				break;
		if (k == B->nc)
			cls[B->nc++] = n;
		of[n] = k;
	}
	if (B->nc == 0 || B->nc * (size_t)L > BOUND_LP_CELLS) {
		free(cls);
		free(of);
		free(out);
		free(rep);
		bound_lp_free(B);
		return NULL;
	}
	B->gpus = xcalloc(B->nc, sizeof(long));
	B->node_gpus = xcalloc(B->nc, sizeof(int));
	B->bw_in = xcalloc(B->nc, sizeof(double));
	B->bw_out = xcalloc(B->nc, sizeof(double));
	B->cap = xcalloc(B->nc, sizeof(double));
	B->g = xcalloc(B->nc * (size_t)L, sizeof(double));
	B->tmin = xcalloc(B->nc * (size_t)L, sizeof(double));
	B->tk = xcalloc(BOUND_LP_DEGREES * B->nc * (size_t)L, sizeof(double));
	for (size_t k = 0; k < B->nc; k++) {
		size_t r = cls[k];

		B->node_gpus[k] = c->nodes[r].gpus;
		B->bw_in[k] = c->nodes[r].intra_gbps;
		B->bw_out[k] = out[r];
		for (int l = 0; l < L; l++) {
			double g = HUGE_VAL, tm = HUGE_VAL;

			for (int i = 0; i < BOUND_LP_DEGREES; i++)
				B->tk[(i * B->nc + k) * (size_t)L + (size_t)l] =
				    HUGE_VAL;
			for (int tp = 1, i = 0; tp <= x->o->max_tp &&
			    tp <= c->nodes[r].gpus && i < BOUND_LP_DEGREES;
			    tp *= 2, i++) {
				double t = cost_stage_compute(x, (int)r, tp,
				    rep[l], rep[l]);

				B->tk[(i * B->nc + k) * (size_t)L + (size_t)l] =
				    t;
				g = fmin(g, tp * t);
				tm = fmin(tm, t);
			}
			B->g[k * (size_t)L + (size_t)l] = g;
			B->tmin[k * (size_t)L + (size_t)l] = tm;
		}
	}
	for (size_t n = 0; n < c->nnodes; n++) {
		if (in != NULL && !in[n])
			continue;
		B->gpus[of[n]] += c->nodes[n].gpus;
		B->cap[of[n]] += c->nodes[n].gpus * cost_gpu_capacity(x, (int)n);
	}
	free(cls);
	free(of);
	free(out);
	free(rep);
	return B;
}

void
bound_lp_free(struct bound_lp *B)
{
	if (B == NULL)
		return;
	free(B->cnt);
	free(B->par);
	free(B->gpus);
	free(B->node_gpus);
	free(B->bw_in);
	free(B->bw_out);
	free(B->cap);
	free(B->g);
	free(B->tmin);
	free(B->tk);
	free(B);
}

/*
 * Solve lp and free it: its least objective, lowered by the rounding
 * margin; HUGE_VAL when nothing fits, 0 when not known.  There is no time
 * limit: the bound must not depend on the clock.
 */
static double
solve(struct dl_lp *lp)
{
	struct lp_params prm = { 0, 0 };
	struct lp_result res;
	struct dl_err e;
	double out = 0;

	if (lp_solve(lp, &prm, &res, &e) == DL_OK) {
		if (res.status == LP_OPTIMAL)
			out = fmax(0, res.obj * (1 - BOUND_LP_EPS));
		else if (res.status == LP_INFEASIBLE)
			out = HUGE_VAL;
		lp_result_free(&res);
	}
	lp_free(lp);
	return out;
}

/*
 * The least P + s of the program above over P in [lo, hi], the rate
 * rows taken at hi (a P <= a hi for every P of the interval, so the
 * program holds every plan of that range); HUGE_VAL when none fits, 0
 * when not known.
 */
static double
interval(const struct bound_lp *B, long G, long M, double lo, double hi)
{
	const struct dl_costctx *x = B->x;
	const struct dl_opts *o = x->o;
	size_t nc = B->nc, L = (size_t)B->L;
	double bytes = cost_least_state_bytes(x);
	struct dl_lp *lp = lp_new("bound", 1);
	int *a = xcalloc(nc * L, sizeof(int)), *b = xcalloc(nc * L,
	    sizeof(int)), *cols = xcalloc(2 * nc * L + 2, sizeof(int)), s, p;
	double *vals = xcalloc(2 * nc * L + 2, sizeof(double)), out;

	hi *= 1 + BOUND_LP_EPS;
	for (size_t i = 0; i < nc * L; i++) {
		long n = B->cnt[i % L];

		a[i] = lp_add_col(lp, "a", LP_CONT, 0, (double)(G * n), 0);
		b[i] = lp_add_col(lp, "b", LP_CONT, 0, (double)(M * n), 0);
	}
	s = lp_add_col(lp, "s", LP_CONT, 0, HUGE_VAL, 1);
	p = lp_add_col(lp, "p", LP_CONT, lo, hi, 1);
	for (size_t l = 0; l < L; l++) {
		for (size_t k = 0; k < nc; k++) {
			cols[k] = a[k * L + l];
			vals[k] = 1;
		}
		lp_add_row(lp, "groups", LP_EQ, (double)(G * B->cnt[l]),
		    (int)nc, cols, vals);
		for (size_t k = 0; k < nc; k++)
			cols[k] = b[k * L + l];
		lp_add_row(lp, "batch", LP_EQ, (double)(M * B->cnt[l]),
		    (int)nc, cols, vals);
	}
	for (size_t k = 0; k < nc; k++) {
		/* 2 (G - 1) / G * 8 bytes / bandwidth, per parameter. */
		double bw = (long)B->node_gpus[k] >= G ? fmax(B->bw_in[k],
		    B->bw_out[k]) : B->bw_out[k];
		double kappa = bw > 0 ? 2.0 * (double)(G - 1) / (double)G *
		    8 * o->grad_bytes / (bw * 1e9) * x->sync_floor : 0;
		int n = 0;

		for (size_t l = 0; l < L; l++) {
			cols[n] = b[k * L + l];
			vals[n++] = B->g[k * L + l];
		}
		cols[n] = p;
		vals[n++] = -(double)B->gpus[k];
		lp_add_row(lp, "compute", LP_LE, 0, n, cols, vals);
		for (size_t l = 0; l < L; l++) {
			double tm = B->tmin[k * L + l];

			if (!(tm > 0))
				continue;
			cols[0] = b[k * L + l];
			vals[0] = 1;
			cols[1] = a[k * L + l];
			vals[1] = -fmin(hi / tm, (double)M);
			lp_add_row(lp, "rate", LP_LE, 0, 2, cols, vals);
		}
		n = 0;
		for (size_t l = 0; l < L; l++) {
			cols[n] = a[k * L + l];
			vals[n++] = kappa * B->par[l];
		}
		cols[n] = s;
		vals[n++] = -(double)B->gpus[k];
		lp_add_row(lp, "sync", LP_LE, 0, n, cols, vals);
		n = 0;
		for (size_t l = 0; l < L; l++) {
			cols[n] = a[k * L + l];
			vals[n++] = bytes * B->par[l];
		}
		lp_add_row(lp, "memory", LP_LE, B->cap[k], n, cols, vals);
	}
	out = solve(lp);
	free(a);
	free(b);
	free(cols);
	free(vals);
	return out;
}

/*
 * The intervals of pipeline time, best first: the one of least value is
 * halved (geometrically) until its value reaches the target, it is too
 * narrow, or BOUND_LP_SPLITS halvings are spent.  The bound is the least
 * value over the intervals, and p1 for plans slower than that.
 */
double
bound_lp_time(const struct bound_lp *B, long G, long M, double p0,
    double p1, double target)
{
	double lo[2 * BOUND_LP_SPLITS + 1], hi[2 * BOUND_LP_SPLITS + 1];
	double v[2 * BOUND_LP_SPLITS + 1], best;
	int n = 1;

	if (B == NULL || G < 2 || !(p0 > 0) || !(p1 > p0))
		return 0;
	lo[0] = p0;
	hi[0] = p1;
	v[0] = interval(B, G, M, p0, p1);
	for (int split = 0; split < BOUND_LP_SPLITS; split++) {
		int i = 0;
		double mid;

		for (int j = 1; j < n; j++)
			if (v[j] < v[i])
				i = j;
		if (v[i] >= target || hi[i] < lo[i] * 1.01)
			break;
		mid = sqrt(lo[i] * hi[i]);
		lo[n] = mid;
		hi[n] = hi[i];
		v[n++] = interval(B, G, M, mid, hi[i]);
		hi[i] = mid;
		v[i] = interval(B, G, M, lo[i], mid);
	}
	best = p1;
	for (int j = 0; j < n; j++)
		best = fmin(best, v[j]);
	return best;
}

/*
 * One group (G = 1), where nothing syncs.  Say layer l lies on a unit of
 * k GPUs of class c in x_ckl (1 or 0 for a plan, in [0, 1] here).  The
 * stage times add up to sum_l t_k(l) x_ckl, as compute and TP traffic
 * are linear in the layers, and none is above tau = max t; a stage on k
 * GPUs of class c takes k t of their time per micro-batch, and the class
 * has N_c GPUs, so sum over k and l of k t_k(l) x_ckl <= N_c tau; its
 * GPUs hold the parameters.  And T >= sum of the stage times + (M - 1)
 * beta tau (search_bound.c: beta is cost.h's bwd_min), transfers left
 * out: the program's least objective is a bound.
 * Each layer class takes one column per class and degree (its count on
 * the right-hand side); tau is at least the slowest layer on its fastest
 * unit.  0 when not known.
 */
double
bound_lp_one(const struct bound_lp *B, long M)
{
	const struct dl_costctx *x;
	size_t nc, L, nd = BOUND_LP_DEGREES;
	double bytes, floor = 0, out;
	struct dl_lp *lp;
	int *col, *cols, tau;
	double *vals;

	if (B == NULL || M < 1)
		return 0;
	x = B->x;
	nc = B->nc;
	L = (size_t)B->L;
	bytes = cost_least_state_bytes(x);
	for (size_t l = 0; l < L; l++) {
		double f = HUGE_VAL;

		for (size_t i = 0; i < nd * nc; i++)
			f = fmin(f, B->tk[i * L + l]);
		floor = fmax(floor, f);
	}
	if (!(floor < HUGE_VAL))
		return 0;
	lp = lp_new("bound1", 1);
	col = xcalloc(nd * nc * L, sizeof(int));
	cols = xcalloc(nd * nc * L + 1, sizeof(int));
	vals = xcalloc(nd * nc * L + 1, sizeof(double));
	for (size_t i = 0; i < nd * nc * L; i++) {
		double t = B->tk[i];

		col[i] = t < HUGE_VAL ? lp_add_col(lp, "x", LP_CONT, 0,
		    (double)B->cnt[i % L], t) : -1;
	}
	tau = lp_add_col(lp, "tau", LP_CONT, floor, HUGE_VAL, x->bwd_min *
	    (double)(M - 1));
	for (size_t l = 0; l < L; l++) {
		int n = 0;

		for (size_t i = 0; i < nd * nc; i++)
			if (col[i * L + l] >= 0) {
				cols[n] = col[i * L + l];
				vals[n++] = 1;
			}
		lp_add_row(lp, "layer", LP_EQ, (double)B->cnt[l], n, cols,
		    vals);
	}
	for (size_t k = 0; k < nc; k++) {
		int n = 0;

		for (size_t d = 0; d < nd; d++)
			for (size_t l = 0; l < L; l++) {
				size_t i = (d * nc + k) * L + l;

				if (col[i] < 0)
					continue;
				cols[n] = col[i];
				vals[n++] = (double)(1 << d) * B->tk[i];
			}
		cols[n] = tau;
		vals[n++] = -(double)B->gpus[k];
		lp_add_row(lp, "compute", LP_LE, 0, n, cols, vals);
		n = 0;
		for (size_t d = 0; d < nd; d++)
			for (size_t l = 0; l < L; l++) {
				size_t i = (d * nc + k) * L + l;

				if (col[i] < 0)
					continue;
				cols[n] = col[i];
				vals[n++] = bytes * B->par[l];
			}
		lp_add_row(lp, "memory", LP_LE, B->cap[k], n, cols, vals);
	}
	out = solve(lp);
	free(col);
	free(cols);
	free(vals);
	return out;
}
