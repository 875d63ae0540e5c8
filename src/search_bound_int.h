/*
 * search_bound_int.h - the lower bounds of the plan search, private to
 * the search files (search_run.c, search_bound.c, search_bound_lp.c) and
 * their tests; the proofs are in search_bound.c and search_bound_lp.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_SEARCH_BOUND_INT_H
#define DL_SEARCH_BOUND_INT_H

#include "search.h"

/*
 * A lower bound on T over every plan the options allow (--strategy,
 * --max-stages, --max-tp, memory) that counts the pipeline fill, the
 * fewest stages memory allows with their transfers, and the traffic of
 * the sync rings over the widest links a ring of that many members can
 * use, minimised over the number of groups; at least T_lb.  The proof is
 * in search_bound.c.  0 when no plan can fit.
 */
double search_bound(const struct dl_costctx *x, const struct search_opts *so);
/*
 * The same, and in *method which argument set it: BOUND_COMBINATORIAL,
 * or BOUND_LP where a linear relaxation of the plans inside one site
 * (search_bound_lp.c) raised it.
 */
double search_bound_method(const struct dl_costctx *x,
    const struct search_opts *so, enum dl_bound *method);
/*
 * The same bound per class of plans (the classes of search_bound.c, for
 * the tests): every unit in one site; groups each inside one site, in
 * several; every group crossing sites; some crossing beside groups inside
 * one site; beside groups inside several.  On one site only the first
 * is set; the others are HUGE_VAL.  Returns search_bound(), their least.
 */
enum { BOUND_ONE_SITE, BOUND_IN_SITES, BOUND_SPAN, BOUND_MIXED_ONE,
	BOUND_MIXED_MANY, BOUND_NCLASS };
double search_bound_classes(const struct dl_costctx *x,
    const struct search_opts *so, double cls[BOUND_NCLASS]);

/*
 * The linear relaxations that raise the bound of plans that use only
 * the nodes of one site (search_bound_lp.c, where the proofs are).
 * bound_lp_new() takes the nodes with in[n] set (in: NULL for every
 * node of a one-site cluster) and returns NULL for no node, for NULL on
 * a cluster of several sites, or for too many node classes times
 * layers; bound_lp_time() is a bound on T for plans of G >= 2 groups
 * and M micro-batches whose pipeline time is at least p0, capped at p1
 * (0 when it has nothing to say), refined only while below target;
 * bound_lp_one() is a bound on T for plans of one group.
 */
struct bound_lp;
struct bound_lp *bound_lp_new(const struct dl_costctx *x,
    const unsigned char *in);
double bound_lp_time(const struct bound_lp *B, long G, long M, double p0,
    double p1, double target);
/* A bound on T for plans of one group and M micro-batches (0: none;
 * HUGE_VAL: none fits). */
double bound_lp_one(const struct bound_lp *B, long M);
void bound_lp_free(struct bound_lp *B);

#endif
