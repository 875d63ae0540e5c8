/*
 * partition.c - layer partition (DESIGN.md 5.3) and data split (5.2).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partition.h"

/* Per-group tables shared by the DP and the MILP. */
struct tab {
	int S, L;
	double *comm;		/* S x L: c_j if stage j ends at layer l */
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
	T->comm = xcalloc((size_t)T->S * (size_t)T->L, sizeof(double));
	T->cap = xcalloc((size_t)T->S, sizeof(double));
	T->phi = xcalloc((size_t)T->S, sizeof(double));
	for (int j = 0; j < T->S; j++) {
		T->cap[j] = cost_gpu_capacity(x, g->node[j]);
		T->phi[j] = 1.0 / g->k[j];
		if (j == T->S - 1)
			continue;
		for (int l = 0; l < T->L; l++)
			T->comm[j * T->L + l] = g->comm(g->ctx, j,
			    mu * m->layers[l].act_mb * 1e6);
	}
}

static void
tab_free(struct tab *T)
{
	free(T->comm);
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
	*c = j < g->S - 1 ? T->comm[j * T->L + b] : 0;
	return isfinite(*c);	/* no route: not a usable boundary */
}

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
			for (int a = j; a <= b; a++) {
				double prev = j == 0 ? (a == 0 ? 0 : HUGE_VAL) :
				    f[(j - 1) * L + a - 1];
				double v;

				if (prev == HUGE_VAL)
					continue;
				if (!stage(x, g, T, j, a, b, &t, &c))
					continue;
				if (fmax(t, c) > B)
					continue;
				v = prev + t + c;
				if (v < best) {
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
				for (int a = j; a <= b; a++) {
					double prev = j == 0 ? (a == 0 ? 0 :
					    HUGE_VAL) : f[(j - 1) * L + a - 1];

					if (prev == HUGE_VAL ||
					    !stage(x, g, T, j, a, b, &t, &c))
						continue;
					if (fmax(prev, fmax(t, c)) < best)
						best = fmax(prev, fmax(t, c));
				}
			f[j * L + b] = best;
		}
	return f[(S - 1) * L + L - 1];
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
part_dp(const struct dl_costctx *x, const struct part_group *g,
    long max_scan, struct part_result *r)
{
	struct tab T;
	int S = g->S, L = (int)x->m->nlayers;
	double *f, *cand, t, c, bmin, sinf, best = HUGE_VAL;
	int *arg, *tmp;
	size_t nc = 0;
	long scanned = 0;
	double t0 = now();

	memset(r, 0, sizeof(*r));
	r->S = S;
	r->last = xcalloc((size_t)S, sizeof(int));
	r->status = LP_INFEASIBLE;
	if (S < 1 || S > L)
		return DL_OK;
	tab_init(&T, x, g);
	f = xcalloc((size_t)S * (size_t)L, sizeof(double));
	arg = xcalloc((size_t)S * (size_t)L, sizeof(int));
	tmp = xcalloc((size_t)S, sizeof(int));
	bmin = minmax_dp(x, g, &T, f);
	if (bmin == HUGE_VAL)
		goto out;
	sinf = sum_dp(x, g, &T, HUGE_VAL, f, arg, tmp);
	if (g->m <= 1) {
		best = sinf;
		memcpy(r->last, tmp, (size_t)S * sizeof(int));
		r->status = LP_OPTIMAL;
		goto out;
	}
	/* Candidate bottlenecks: every feasible stage's max(t, c) >= bmin. */
	cand = xcalloc((size_t)S * (size_t)L * (size_t)L / 2 + 1 +
	    (size_t)L, sizeof(double));
	for (int j = 0; j < S; j++)
		for (int a = j; a < L; a++)
			for (int b = a; b < L; b++)
				if (stage(x, g, &T, j, a, b, &t, &c) &&
				    fmax(t, c) >= bmin)
					cand[nc++] = fmax(t, c);
	qsort(cand, nc, sizeof(double), cmp_dbl);
	r->status = LP_OPTIMAL;
	for (size_t i = 0; i < nc; i++) {
		double B = cand[i], s;

		if (i > 0 && cand[i] == cand[i - 1])
			continue;
		/* No larger bottleneck can win any more. */
		if (sinf + (double)(g->m - 1) * B >= best)
			break;
		if (max_scan > 0 && scanned++ >= max_scan) {
			r->status = LP_FEASIBLE;
			break;
		}
		s = sum_dp(x, g, &T, B, f, arg, tmp);
		if (s == HUGE_VAL)
			continue;
		/* Score with the true bottleneck of this partition. */
		{
			double bt = 0, sum = 0;

			for (int j = 0, a = 0; j < S; j++) {
				stage(x, g, &T, j, a, tmp[j], &t, &c);
				bt = fmax(bt, fmax(t, c));
				sum += t + c;
				a = tmp[j] + 1;
			}
			if (sum + (double)(g->m - 1) * bt < best) {
				best = sum + (double)(g->m - 1) * bt;
				memcpy(r->last, tmp, (size_t)S * sizeof(int));
			}
		}
	}
	free(cand);
out:
	r->obj = best;
	r->time_s = now() - t0;
	free(f);
	free(arg);
	free(tmp);
	tab_free(&T);
	return DL_OK;
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
			    T.comm[j * L + l]);
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
			vals[k++] = T.comm[j * L + l];
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
