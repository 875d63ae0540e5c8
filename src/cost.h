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
#include "cost_sites.h"
#include "kc.h"
#include "model.h"
#include "plan.h"
#include "route.h"



/*
 * The fewest bytes of weights, gradients and optimizer state a parameter
 * takes in any plan under x's options (sharded state over one group per
 * GPU at the most): what the search's memory bounds may assume.
 */
double cost_least_state_bytes(const struct dl_costctx *x);
/* Memory bandwidth of one GPU of node nd, bytes/s (0: none known). */
double cost_node_membw(const struct dl_node *nd);
/* Fill the memory savers' per-layer figures of x (cost_savers.c). */
void cost_savers_init(struct dl_costctx *x, const struct dl_model *m,
    const struct dl_opts *o);
/*
 * The double-double prefix sums hi[i] + lo[i] of the first i of n terms
 * (both arrays new, n + 1 long), and the table of every range sum
 * [first, last] of them, at [last * n + first] (new, n * n long).
 */
void cost_prefix(const double *term, size_t n, double **hi, double **lo);
double *cost_range_table(const double *hi, const double *lo, size_t n);
/* Forward FLOPs per sample of layers [first, last]. */
double cost_range_fwd(const struct dl_costctx *x, int first, int last);

/* uhat: per node forecast load (copied; clamped to [0, 0.95]); NULL = 0. */
int cost_init(struct dl_costctx *x, const struct dl_cluster *c,
    const struct dl_model *m, const struct dl_opts *o, const double *uhat,
    struct dl_router *router, struct dl_err *e);
void cost_free(struct dl_costctx *x);

/*
 * The layers of every model chunk of group gr under the interleaved
 * schedule with v >= 2 chunks a stage (dlplan(1) ALGORITHMS, Interleaved
 * schedule): Megatron-LM's assignment, stage s holding n_s transformer
 * blocks in v chunks of n_s / v; chunk c of stage s (virtual stage c S +
 * s) holds the blocks from c sum_j n_j / v + sum_{j<s} n_j / v on, the
 * rows before the first block go with the first chunk and those after
 * the last block with the last.  cf[c S + s] and cl[c S + s] receive the
 * first and last layer (NULL: only checked).  DL_EINFEAS with e set when
 * the schedule does not apply: fewer than 2 stages, micro-batches not a
 * multiple of the stages, a stage's blocks not a multiple of v, blocks
 * not consecutive or not alike, or more than PIPE_VMAX operations.
 */
int cost_vp_layout(const struct dl_costctx *x, const struct dl_group *gr,
    int v, int *cf, int *cl, struct dl_err *e);
/* t_sigma for layers [first, last] on k GPUs of node n, micro-batch mu. */
double cost_stage_compute(const struct dl_costctx *x, int node, int k,
    int first, int last);
/*
 * Per-GPU memory (bytes) of a stage at pipeline position p (1-based) of S
 * stages with m micro-batches, for TP share phi, as the search prices it:
 * recomputation as the context's mode says, the optimizer state
 * replicated (sharded state is priced by cost_eval(), which knows the
 * data-parallel size; the search's figure is never below it).
 */
double cost_stage_memory(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m);
/*
 * cost_stage_memory() where the search knows the data-parallel size dp
 * (a framework's search: every group alike): sharded optimizer state is
 * priced over dp replicas, as cost_eval() prices it.
 */
double cost_stage_memory_dp(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, long dp);
/*
 * The same for a stage that recomputes its first nrc blocks, with the
 * optimizer state over dp replicas (sharded) or replicated (dp 1).
 */
double cost_stage_memory_rc(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, int nrc, long dp);
/* The same for a rank of the interleaved schedule with v chunks
 * (pipesched.h): more micro-batches are held at once. */
double cost_stage_memory_vp(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, int nrc, long dp, int v);
/* FLOPs per sample (fwd + bwd + recomputation) of layers [first, last]
 * when their first nrc blocks are recomputed, and the forward's share. */
double cost_stage_flops_rc(const struct dl_costctx *x, int first, int last,
    int nrc, double *fwd_share);
/* The blocks a stage recomputes: st->recompute when decided, else as the
 * context's search mode says (every block, or none). */
int cost_stage_rc(const struct dl_costctx *x, const struct dl_stage *st);
/*
 * Decide the recomputation of every stage of plan p priced in a context
 * of the full mode: each stage recomputes the fewest of its blocks with
 * which it fits (COST_RC_STAGE); the most any stage needs on every stage,
 * for a framework that takes one number for every stage (COST_RC_UNIFORM:
 * Megatron-LM's --recompute-num-layers); or, when any stage needs some,
 * every block of every stage, for a framework that recomputes all or
 * nothing (COST_RC_WHOLE: DeepSpeed's activation_checkpoint_interval,
 * torchtitan's FullAC).  rc_set is set.  In a context of another mode
 * every stage recomputes none.  p is not priced again.
 */
enum { COST_RC_STAGE, COST_RC_UNIFORM, COST_RC_WHOLE };
void cost_decide_rc(const struct dl_costctx *x, struct dl_plan *p,
    int how);
/* Usable memory of one GPU of node n, bytes. */
double cost_gpu_capacity(const struct dl_costctx *x, int node);
/* T_lb for the whole cluster. */
double cost_lower_bound(const struct dl_costctx *x);
/*
 * T_lb over the GPUs plan p uses: global batch times the model's FLOPs
 * over the sum of their speeds, a bound on every plan that uses no other
 * GPU.  0 when p has no GPU.
 */
double cost_own_bound(const struct dl_costctx *x, const struct dl_plan *p);
/* The forward pass's share of the FLOPs of layers [first, last] (1/3
 * when they have none): how a stage's time splits into forward and
 * backward in the 1F1B schedule. */
double cost_fwd_share(const struct dl_costctx *x, int first, int last);
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
