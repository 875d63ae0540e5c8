/*
 * cost.h - the cost model of dlplan(1) ALGORITHMS, Cost model, shared
 * by the planner, eval and replan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_COST_H
#define DL_COST_H

#include <math.h>

#include "cluster.h"
#include "cost_ctx.h"
#include "cost_savers.h"
#include "cost_sites.h"
#include "cost_vp.h"
#include "kc.h"
#include "model.h"
#include "plan.h"
#include "route.h"

/* Memory bandwidth of one GPU of node nd, bytes/s (0: none known). */
double cost_node_membw(const struct dl_node *nd);

/* uhat: per node forecast load (copied; clamped to [0, 0.95]); NULL = 0. */
int cost_init(struct dl_costctx *x, const struct dl_cluster *c,
    const struct dl_model *m, const struct dl_opts *o, const double *uhat,
    struct dl_router *router, struct dl_err *e);
void cost_free(struct dl_costctx *x);

/* t_sigma for layers [first, last] on k GPUs of node n, micro-batch mu. */
double cost_stage_compute(const struct dl_costctx *x, int node, int k,
    int first, int last);
/* T_lb for the whole cluster. */
double cost_lower_bound(const struct dl_costctx *x);
/*
 * T_lb over the GPUs plan p uses: global batch times the model's FLOPs
 * over the sum of their speeds, a bound on every plan that uses no other
 * GPU.  0 when p has no GPU.
 */
double cost_own_bound(const struct dl_costctx *x, const struct dl_plan *p);
/* 8 S / (intra_gbps 1e9): a transfer between two GPUs of node n. */
double cost_intra(const struct dl_costctx *x, int node, double bytes);
/*
 * The transfers of a pipeline boundary from node u to node v, bytes each
 * way, each direction priced alone (every n_e = 1): *fwd the activations
 * from u to v, *bwd their gradients back; inside one node, the intra-node
 * time.  Returns their sum, HUGE_VAL when there is no route.
 */
double cost_boundary_dirs(const struct dl_costctx *x, int u, int v,
    double bytes, double *fwd, double *bwd);
/*
 * A lower bound on T_sync of plan p that routes nothing: a ring whose
 * members sit in two or more sites leaves each of them at least once, by
 * a hop at least the site bound (cost_sites.h) to the nearest other.
 */
double cost_sync_bound(const struct dl_costctx *x, struct dl_sitebound *sb,
    const struct dl_plan *p);

/*
 * Evaluate a whole plan: fills stage times, group times, rings (ordered),
 * flows (routed per phase, largest first) and p->est.  Memory that does
 * not fit: DL_EINFEAS with e naming the GPU (node, local index) and the
 * bytes over; p->est is still filled (feasible = 0).
 */
int cost_eval(const struct dl_costctx *x, struct dl_plan *p,
    struct dl_err *e);
/*
 * cost_eval() for a search that only wants plans faster than cut: when
 * cut > 0 and a group alone takes longer than cut (so T, which adds the
 * sync, does too), or its lower bound and the sync rings priced or
 * routed so far already make T longer (a ring's slowest hop only grows
 * as the rest are priced and routed), it stops there, before the
 * memory, sets *over and returns DL_OK, p->est, the rings and the flows
 * then incomplete.  Otherwise it is cost_eval() with *over = 0.
 */
int cost_eval_below(const struct dl_costctx *x, struct dl_plan *p,
    double cut, int *over, struct dl_err *e);

/*
 * The 1F1B inputs (pipesched.h) of every stage of plan p, evaluated by
 * cost_eval(): forward and backward compute f and b (compute_s split by
 * cost_fwd_share()) and the routed pipeline transfers xf (to the next
 * stage) and xb (back from it, 0 after the last stage), each at
 * [base[g] + s], base[g] the stages of the groups before g (base has
 * ngroups + 1 entries).  A group's T_g is pipe_makespan() of its slice
 * for any m_g: the transfers do not depend on the split.
 */
void cost_pipe_inputs(const struct dl_costctx *x, const struct dl_plan *p,
    const int *base, double *f, double *b, double *xf, double *xb);

/*
 * The data-parallel baselines of "eval --baselines" (dlplan(1), dlplan eval),
 * over the same GPUs as p: every GPU of p becomes its own replica (k = 1, one
 * stage holding every layer), in rank order.  The M = global/micro
 * micro-batches are split
 *	COST_EVEN:		M/n each, the first M mod n replicas one more;
 *	COST_PROPORTIONAL:	in proportion to the GPUs' speeds s (Chao,
 *				Liao and Gao's static allocation):
 *				floor(M s_i / sum s), the rest one each by
 *				largest remainder, ties to the lower rank.
 * Replicas left with no micro-batch are dropped.  out is initialised
 * here and evaluated with cost_eval(); DL_EINFEAS when it does not fit in
 * memory (out->est is filled all the same).
 */
enum { COST_EVEN = 0, COST_PROPORTIONAL = 1 };
int cost_baseline(const struct dl_costctx *x, const struct dl_plan *p,
    int kind, struct dl_plan *out, struct dl_err *e);
/* Both baselines into p->even_s, p->proportional_s and their fits
 * flags; an error other than memory (e.g. no route) is returned. */
int cost_baselines(const struct dl_costctx *x, struct dl_plan *p,
    struct dl_err *e);

#endif
