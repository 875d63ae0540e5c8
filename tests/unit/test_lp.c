/*
 * test_lp.c - lp.c against hand-solved programs: an LP, a MILP whose
 * relaxation is fractional, an infeasible MILP, and a MILP too hard to
 * prove within its time limit, which must come back FEASIBLE with the
 * incumbent it was started from (or a better one) and its gap.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lp.h"
#include "tap.h"

/* max 3x + 2y, x + y <= 4, x + 3y <= 6, x, y >= 0: x = 4, y = 0, 12. */
static void
test_lp(void)
{
	struct dl_lp *lp = lp_new("lp", 0);
	struct lp_params prm = { 10, 0 };
	struct lp_result res;
	struct dl_err e = { 0 };
	int c[2];
	double one[2] = { 1, 1 }, w[2] = { 1, 3 };

	c[0] = lp_add_col(lp, "x", LP_CONT, 0, HUGE_VAL, 3);
	c[1] = lp_add_col(lp, "y", LP_CONT, 0, HUGE_VAL, 2);
	lp_add_row(lp, "a", LP_LE, 4, 2, c, one);
	lp_add_row(lp, "b", LP_LE, 6, 2, c, w);
	ok(lp_solve(lp, &prm, &res, &e) == DL_OK && res.status ==
	    LP_OPTIMAL, "LP: optimal");
	is_near(res.obj, 12, 1e-12, "LP: objective 12");
	is_near(res.x[0], 4, 1e-12, "LP: x = 4");
	is_near(res.x[1], 0, 1e-12, "LP: y = 0");
	lp_result_free(&res);
	lp_free(lp);
}

/* max x + y, 2x + 2y <= 3, x, y integer >= 0: relaxation 1.5, MILP 1. */
static void
test_milp(void)
{
	struct dl_lp *lp = lp_new("milp", 0);
	struct lp_params prm = { 10, 0 };
	struct lp_result res;
	struct dl_err e = { 0 };
	int c[2];
	double two[2] = { 2, 2 };

	c[0] = lp_add_col(lp, "x", LP_INT, 0, HUGE_VAL, 1);
	c[1] = lp_add_col(lp, "y", LP_INT, 0, HUGE_VAL, 1);
	lp_add_row(lp, "a", LP_LE, 3, 2, c, two);
	ok(lp_solve(lp, &prm, &res, &e) == DL_OK && res.status ==
	    LP_OPTIMAL, "MILP: optimal");
	is_near(res.obj, 1, 1e-12, "MILP: objective 1, not the relaxation's 1.5");
	ok(res.gap == 0, "MILP: no gap when optimal (%g)", res.gap);
	lp_result_free(&res);
	lp_free(lp);
}

/* x binary, x >= 2: infeasible. */
static void
test_infeasible(void)
{
	struct dl_lp *lp = lp_new("inf", 1);
	struct lp_params prm = { 10, 0 };
	struct lp_result res;
	struct dl_err e = { 0 };
	int c = lp_add_col(lp, "x", LP_BIN, 0, 1, 1);
	double one = 1;

	int rc;

	lp_add_row(lp, "a", LP_GE, 2, 1, &c, &one);
	rc = lp_solve(lp, &prm, &res, &e);
	ok(rc == DL_OK && res.status == LP_INFEASIBLE, "infeasible MILP: %s",
	    lp_status_name(res.status));
	lp_result_free(&res);
	lp_free(lp);
}

/*
 * A market split instance (Cornuejols and Dawande): 4 rows of 40 binary
 * columns with weights in 0..99 and right-hand sides half the row sums;
 * minimise the largest deviation s.  Branch and bound needs far more than
 * a fifth of a second for it, so the solve stops at its time limit and
 * returns the incumbent: the all-zero start (s = the largest b) or better.
 */
static void
test_time_limit(void)
{
	enum { M = 4, N = 40 };
	struct dl_lp *lp = lp_new("split", 1);
	struct lp_params prm = { 0.2, 0 };
	struct lp_result res;
	struct dl_err e = { 0 };
	uint64_t rng = 12345;
	double a[M][N], b[M], start[N + 1], bmax = 0, vals[N + 1];
	int cols[N + 1], s, rc;

	for (int i = 0; i < M; i++) {
		double sum = 0;

		for (int j = 0; j < N; j++) {
			rng = rng * 6364136223846793005ULL +
			    1442695040888963407ULL;
			a[i][j] = (double)((rng >> 33) % 100);
			sum += a[i][j];
		}
		b[i] = floor(sum / 2);
		bmax = fmax(bmax, b[i]);
	}
	for (int j = 0; j < N; j++) {
		char name[16];

		snprintf(name, sizeof(name), "x%d", j);
		cols[j] = lp_add_col(lp, name, LP_BIN, 0, 1, 0);
		start[j] = 0;
	}
	s = lp_add_col(lp, "s", LP_CONT, 0, HUGE_VAL, 1);
	start[N] = bmax;
	cols[N] = s;
	for (int i = 0; i < M; i++) {
		for (int j = 0; j < N; j++)
			vals[j] = a[i][j];
		vals[N] = -1;
		lp_add_row(lp, "hi", LP_LE, b[i], N + 1, cols, vals);
		vals[N] = 1;
		lp_add_row(lp, "lo", LP_GE, b[i], N + 1, cols, vals);
	}
	lp_set_start(lp, start);
	rc = lp_solve(lp, &prm, &res, &e);
	ok(rc == DL_OK, "time-limited MILP solves %s", e.msg);
	ok(res.status == LP_FEASIBLE, "time limit hit: status %s, not "
	    "optimal", lp_status_name(res.status));
	ok(res.obj <= bmax, "the incumbent is the start or better (%g <= %g)",
	    res.obj, bmax);
	ok(res.gap > 0 && res.gap <= 1 && res.bound <= res.obj,
	    "the gap is reported (%g; bound %g, objective %g)", res.gap,
	    res.bound, res.obj);
	/* Not a timing test: only that the limit stops the search at all. */
	ok(res.time_s < 30, "the solve stopped (%.2f s)", res.time_s);
	lp_result_free(&res);
	lp_free(lp);
}

int
main(void)
{
	test_lp();
	test_milp();
	test_infeasible();
	test_time_limit();
	return done_testing();
}
