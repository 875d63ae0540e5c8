/*
 * cost_savers.h - the memory side of the cost model: the per-layer range
 * sums of a context, each stage's memory under the memory savers
 * (recomputation, sharded optimizer state, fused attention; dlplan(1)
 * ALGORITHMS, Memory savers) and the recomputation a plan decides.  The
 * context itself is cost_ctx.h's; cost.h, the model's whole face,
 * includes this.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_COST_SAVERS_H
#define DL_COST_SAVERS_H

#include <stddef.h>

#include "cost_ctx.h"

/*
 * The fewest bytes of weights, gradients and optimizer state a parameter
 * takes in any plan under x's options (sharded state over one group per
 * GPU at the most): what the search's memory bounds may assume.
 */
double cost_least_state_bytes(const struct dl_costctx *x);

/*
 * Whether DeepSpeed runs S stages of o's job with its BF16_Optimizer when
 * the plan trains in bf16: a pipeline, 16-bit weights and the optimizer
 * state not sharded by dlplan's choice (ZeRO stage 0).  The optimizer
 * then shards its fp32 state itself and gathers the updated weights
 * after the step (dlplan(1), dlplan emit, launcher deepspeed).
 */
int cost_ds_bf16opt(const struct dl_opts *o, int S);
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

/* The forward pass's share of the FLOPs of layers [first, last] (1/3
 * when they have none): how a stage's time splits into forward and
 * backward in the 1F1B schedule. */
double cost_fwd_share(const struct dl_costctx *x, int first, int last);

#endif
