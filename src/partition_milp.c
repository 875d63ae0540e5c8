/*
 * partition_milp.c - the layer partition of partition.h as a MILP solved
 * by GLPK, for checking the DP and for replanning under a time limit.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition_int.h"
#include "pipesched.h"

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
		tab_stage(x, g, T, j, a, last[j], &t, &c);
		*bt = fmax(*bt, pipe_lane(t, xin(T, j, a), xback(T, j, last[j])));
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
			    1, tab_comm(&P->T, j, l));
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

/*
 * The rows of stage j: not empty, memory, the end markers unless it is the
 * last, and z >= P_j: its compute, the activations it receives (the end
 * marker of stage j - 1 priced forward) and the gradients it receives (its
 * own end marker priced backward).
 */
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
		cols[k] = X[j * L + l];
		vals[k++] = cost_stage_compute(P->x, g->node[j], g->k[j], l, l);
	}
	for (int l = 0; j > 0 && l + 1 < L; l++) {
		cols[k] = Y[(j - 1) * L + l];
		vals[k++] = P->T.cf[j - 1][l];
	}
	for (int l = 0; j + 1 < S && l + 1 < L; l++) {
		cols[k] = Y[j * L + l];
		vals[k++] = P->T.cb[j][l];
	}
	cols[k] = P->z;
	vals[k++] = -1;
	snprintf(name, sizeof(name), "bneck_%d", j);
	lp_add_row(P->lp, name, LP_LE, 0, k, cols, vals);
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

