/*
 * lp.h - linear and mixed-integer programs, solved with GLPK.  The only
 * user of <glpk.h>.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Build a program column by column and row by row, optionally give a known
 * feasible solution (it becomes the first incumbent), then solve.  GLPK's
 * terminal output never reaches stdout: it is dropped, or copied to stderr
 * when dl_verbose > 1.  A GLPK internal error (which would otherwise abort
 * the process) is caught and reported as DL_ESYS.
 *
 * Status of a solve:
 *	LP_OPTIMAL	proven optimal (within mip_gap)
 *	LP_FEASIBLE	time limit hit with an incumbent; gap says how far
 *	LP_INFEASIBLE	no feasible solution exists
 *	LP_NOSOLUTION	time limit hit before any feasible solution
 *	LP_UNBOUNDED
 */
#ifndef DL_LP_H
#define DL_LP_H

#include "util.h"

enum { LP_CONT, LP_INT, LP_BIN };
enum { LP_LE, LP_GE, LP_EQ };
enum { LP_OPTIMAL, LP_FEASIBLE, LP_INFEASIBLE, LP_NOSOLUTION, LP_UNBOUNDED };

struct dl_lp;

struct lp_params {
	double time_limit;	/* seconds; <= 0 for none */
	double mip_gap;		/* relative gap tolerance (0 = exact) */
};

struct lp_result {
	int status;
	double obj;		/* objective of the solution (if any) */
	double bound;		/* best bound proven (= obj when optimal) */
	double gap;		/* |obj - bound| / max(|obj|, 1e-12) */
	double time_s;
	double *x;		/* column values, x[0 .. ncols-1]; owned */
};

/* A new empty program; minimise when minimize is set, else maximise. */
struct dl_lp *lp_new(const char *name, int minimize);
void lp_free(struct dl_lp *lp);
/* Add a column; returns its 0-based index.  ub = HUGE_VAL: no bound. */
int lp_add_col(struct dl_lp *lp, const char *name, int kind, double lb,
    double ub, double obj);
/* Add a row sum(vals[i] * x[cols[i]]) TYPE rhs; returns its index. */
int lp_add_row(struct dl_lp *lp, const char *name, int type, double rhs,
    int n, const int *cols, const double *vals);
int lp_ncols(const struct dl_lp *lp);
/* A feasible solution x[0 .. ncols-1] to start from (copied). */
void lp_set_start(struct dl_lp *lp, const double *x);
/*
 * Solve (glp_simplex for a pure LP, glp_intopt for a MILP).  Returns
 * DL_OK with res filled whatever the status, or DL_ESYS when the model is
 * malformed or GLPK fails.  res->x must be released with lp_result_free.
 */
int lp_solve(struct dl_lp *lp, const struct lp_params *prm,
    struct lp_result *res, struct dl_err *e);
void lp_result_free(struct lp_result *res);
/* Write the program in CPLEX LP format (readable by glpsol and cbc). */
int lp_write(struct dl_lp *lp, const char *path, struct dl_err *e);
const char *lp_status_name(int status);
/*
 * Free this thread's GLPK environment (GLPK keeps one per thread when it
 * is built with thread-local storage): a thread that solved programs
 * calls it before it ends.
 */
void lp_thread_exit(void);

#endif
