/*
 * split.c - the data split across groups (see split.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pipesched.h"
#include "split.h"

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
	while (n < cap && pipe_closed(g->A, g->M, n + 1) <= z)
		n++;
	while (n > 0 && pipe_closed(g->A, g->M, n) > z)
		n--;
	return n;
}

static double
gtime(const struct split_group *g, long m)
{
	return pipe_closed(g->A, g->M, m);
}

/* The micro-batches groups g[0 .. G-1] hold within time z. */
static long
fits(const struct split_group *g, int G, double z, long total)
{
	long cnt = 0;

	for (int i = 0; i < G; i++)
		cnt += fit(&g[i], z, total);
	return cnt;
}

/*
 * Bisect [*lo, *hi] down to the least z whose fits add up to total (to
 * full precision: it stops when no double lies between the ends).
 */
static void
bisect(const struct split_group *g, int G, long total, double *lo,
    double *hi)
{
	for (int it = 0; it < 200 && *lo < *hi; it++) {
		double mid = *lo + (*hi - *lo) / 2;

		if (mid <= *lo || mid >= *hi)
			break;
		if (fits(g, G, mid, total) >= total)
			*hi = mid;
		else
			*lo = mid;
	}
}

/*
 * Few micro-batches, every group at least min: min each, then each next
 * one to the group whose time grows least (lowest index on ties).  This
 * is optimal: were some z below the result feasible, at the first step
 * past it every group would already hold all it can within z, and their
 * sum would fall short of total.
 */
static void
split_greedy(const struct split_group *g, int G, long total, long min,
    long *m)
{
	for (int i = 0; i < G; i++)
		m[i] = min;
	for (long left = total - min * G; left > 0; left--) {
		int w = -1;

		for (int i = 0; i < G; i++) {
			long cap = g[i].cap < total ? g[i].cap : total;

			if (m[i] < cap && (w < 0 || gtime(&g[i], m[i] + 1) <
			    gtime(&g[w], m[w] + 1)))
				w = i;
		}
		m[w]++;
	}
}

int
split_exact(const struct split_group *g, int G, long total,
    long min_per_group, long *m, double *z, int *status)
{
	long min = min_per_group, sum = 0;
	/* With every group running, z starts at the largest A. */
	double lo = min > 0 ? 0 : HUGE_VAL, hi = 0;

	*status = LP_INFEASIBLE;
	for (int i = 0; i < G; i++)
		m[i] = 0;
	if (G == 0 || total < min * G)
		return DL_OK;
	for (int i = 0; i < G; i++) {
		long cap = g[i].cap < total ? g[i].cap : total;

		if (cap < min)
			return DL_OK;
		sum += cap;
		if (cap > 0) {
			lo = min > 0 ? fmax(lo, g[i].A) : fmin(lo, g[i].A);
			hi = fmax(hi, gtime(&g[i], cap));
		}
	}
	if (sum < total)
		return DL_OK;
	if (min > 0 && total <= 64 * (long)G) {
		split_greedy(g, G, total, min, m);
	} else {
		bisect(g, G, total, &lo, &hi);
		/* The largest A may be the answer itself. */
		if (min > 0 && fits(g, G, lo, total) >= total)
			hi = lo;
		sum = 0;
		for (int i = 0; i < G; i++) {
			m[i] = fit(&g[i], hi, total);
			if (m[i] < min)
				m[i] = min;
			sum += m[i];
		}
		/*
		 * Take back the surplus from the slowest groups, keeping min
		 * each (exchange argument: this ends at the least possible
		 * maximum).
		 */
		while (sum > total) {
			int w = -1;

			for (int i = 0; i < G; i++)
				if (m[i] > min && (w < 0 || gtime(&g[i],
				    m[i]) >= gtime(&g[w], m[w])))
					w = i;
			m[w]--;
			sum--;
		}
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
	split_exact(g, G, total, 0, warm, &wz, &ws);
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
