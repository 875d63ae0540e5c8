/*
 * split.h - the data split across groups (dlplan(1) ALGORITHMS, Solver).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * With every group's stages fixed, group g runs m_g micro-batches in
 * T_g = A_g + (m_g - 1) M_g (m_g >= 1; an idle group takes no time).
 * split_milp() minimises max_g T_g subject to sum m_g = total and
 * 0 <= m_g <= cap_g (memory) as a MILP with GLPK; split_exact() computes
 * the same optimum by a threshold search, with a least number of
 * micro-batches per group, and is the oracle and the fast path for many
 * groups.  Neither keeps a pointer to its arguments.
 */
#ifndef DL_SPLIT_H
#define DL_SPLIT_H

#include "lp.h"

struct split_group {
	double A, M;		/* T_g = pipe_closed(A, M, m) */
	long cap;		/* memory cap on m_g (>= 0) */
};

/*
 * Minimise max_g T_g over groups g[0 .. G-1] into m[] and *z.  DL_OK with
 * *status LP_OPTIMAL (or LP_FEASIBLE when GLPK stopped at prm's limit),
 * or LP_INFEASIBLE when the caps cannot hold total micro-batches; dump:
 * when not NULL, the program is also written there in CPLEX LP format.
 */
int split_milp(const struct split_group *g, int G, long total,
    const struct lp_params *prm, const char *dump, long *m, double *z,
    int *status, struct dl_err *e);
/*
 * The same optimum by a threshold search, with at least min_per_group
 * micro-batches in every group (0: a group may stay idle; 1: every group
 * runs).  Always DL_OK; *status LP_OPTIMAL, or LP_INFEASIBLE (m[] all 0)
 * when no split has sum m_g = total with min_per_group <= m_g <= cap_g.
 * Ties between equally good splits are broken by fixed rules, so the
 * same groups give the same split, bit for bit.
 */
int split_exact(const struct split_group *g, int G, long total,
    long min_per_group, long *m, double *z, int *status);

#endif
