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
#include "cost_sites.h"
#include "kc.h"
#include "model.h"
#include "plan.h"
#include "route.h"

/*
 * Everything the formulas need, precomputed: effective GPU speed per node
 * s = (1 - uhat_n) / (1 / (tflops * 1e12 * mfu_n) + mem_per_flop / bw_n)
 * (dlplan(1) ALGORITHMS, Cost model), and prefix sums over layers
 * of fwd+bwd FLOPs, params, mem_mb and tp_mb so that any layer range
 * costs O(1).  The router may be NULL only for plans without network
 * transfers (single node).
 */
#define COST_RANGE_TABLE 256

struct dl_costctx {
	const struct dl_cluster *c;
	const struct dl_model *m;
	const struct dl_opts *o;
	struct dl_router *router;
	double *speed;		/* per node: FLOP/s of one GPU */
	double *uhat;		/* per node: forecast load used */
	double *membw;		/* per node: GPU memory bytes/s, 0: none */
	/*
	 * The bytes the model's memory-bound kernels move per FLOP:
	 * COST_MEM_PASSES times the activations its layers produce per
	 * sample (with the plan's attention kernel), over their fwd + bwd
	 * FLOPs.  Spread over every FLOP at this one ratio, so that a
	 * stage's time stays its FLOPs over one speed per node.
	 */
	double mem_per_flop;
	/*
	 * The plan's overlap (enum dl_overlap; auto counts as none), and
	 * what a lower bound on T may count of the sync: 1 when it runs
	 * after the pipeline, 0 when it may hide under the backward.
	 */
	int ovl;
	double sync_floor;
	double *cum_flops;	/* nlayers + 1: (fwd+bwd) * 1e9 */
	double *cum_params;	/* params_m * 1e6 */
	double *cum_mem;	/* mem_mb * 1e6 */
	double *cum_tp;		/* tp_mb * 1e6 */
	/*
	 * The low parts of the prefix sums above (double-double), so that a
	 * range sum is the sum of its layers rounded once, however far from
	 * layer 0 the range starts.
	 */
	double *lo_flops, *lo_params, *lo_mem, *lo_tp;
	double *cum_fwd, *lo_fwd;	/* forward FLOPs alone */
	/*
	 * The least share of a stage's time that is backward work (a
	 * stage's share is a mean of its layers', 2/3 for a stage without
	 * FLOPs).  In 1F1B the way through the last stage and back up to
	 * stage q, then q's remaining m - 1 backwards, is a path of the
	 * schedule, so T_g >= sum_j t_j + (m_g - 1) bwd_min max_j t_j: the
	 * bounds of the search rest on this.
	 */
	double bwd_min;
	/*
	 * The same range sums tabled, [last * nlayers + first] for
	 * first <= last, for models of at most COST_RANGE_TABLE layers
	 * (NULL above): the partition DPs price the same ranges over and
	 * over, and a load is cheaper than the double-double difference.
	 * A row holds the ranges that end at one layer, in the order the
	 * DPs scan a stage's first layer.
	 */
	double *rt_flops, *rt_params, *rt_mem, *rt_tp;
	double speed_total;	/* sum of s over every GPU of the cluster */
	/*
	 * The memory savers (dlplan(1) ALGORITHMS, Memory savers), per
	 * layer l: blk[l] 1 for a transformer block (model_is_block());
	 * lay_flops[l] its fwd + bwd FLOPs per sample with the plan's
	 * attention recomputation (selective adds the core attention's
	 * forward to the backward); lay_mem[l] the bytes it keeps per sample
	 * with the plan's attention kernel; lay_keep[l] what a fully
	 * recomputed block keeps (its input), lay_rcf[l] the forward FLOPs
	 * its recomputation runs again.  rc_fold: the search mode of full
	 * recomputation, every block of every stage recomputed (cum_flops,
	 * cum_mem and their tables then hold the recomputed figures), and
	 * rc_transient the activations of the largest block, held for one
	 * micro-batch while it is recomputed.  wbytes: bytes per parameter
	 * of weights and gradients as the runtime holds them, obytes the
	 * optimizer state's; fsdp_bytes what torchtitan's FSDP shards of
	 * them (cost_savers_init(), and what it keeps unsharded besides:
	 * state_bytes() there); tied_params the tied embedding's copy that
	 * the last stage of a pipeline keeps (0 when the head is not tied).
	 */
	unsigned char *blk;
	double *lay_flops, *lay_mem, *lay_keep, *lay_rcf;
	int rc_fold;
	double rc_transient;
	double wbytes, obytes, fsdp_bytes;
	double tied_params;
	/*
	 * Optional (NULL: none): ring orders already found, keyed by the hop
	 * size and the members' nodes; the planner scores many plans whose
	 * rings repeat (struct ring_spec, ring.h).  Its values are plain
	 * blocks; set vfree to free.
	 */
	struct kcache *rings;
	/*
	 * Optional (NULL: none): the site bounds of cluster c (struct
	 * dl_sitebound, filled on first use), with which a search that
	 * cuts plans (cost_eval_below()) bounds each ring before it prices
	 * any.
	 */
	struct dl_sitebound *sites;
};

/*
 * How many times a memory-bound kernel reads or writes each byte of
 * activation a layer produces, over forward and backward (dlplan(1)
 * ALGORITHMS, Cost model: fitted on the SC'21 Megatron-LM runs).
 */
#define COST_MEM_PASSES 8.0

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
 * What t_sigma of a unit of k GPUs of one node needs besides its layers,
 * so that a caller pricing many ranges of one unit works it out once.
 */
struct cost_unit {
	double mu;		/* the micro-batch */
	double flops;		/* k s: the unit's FLOP/s */
	double share;		/* 2 (k - 1) / k of the TP volume is sent */
	double bytes;		/* intra_gbps 1e9 / 8: bytes per second */
	int k;
	int tpov;		/* TP collectives under the GEMMs */
};

static inline void
cost_unit_init(const struct dl_costctx *x, int node, int k,
    struct cost_unit *u)
{
	u->mu = (double)x->o->micro_batch;
	u->flops = k * x->speed[node];
	/* The TP all-reduce: 2(k-1)/k is exact for k = 2, 4, 8. */
	u->share = 2.0 * (k - 1) / k;
	u->bytes = x->c->nodes[node].intra_gbps * 1e9 / 8;
	u->k = k;
	u->tpov = x->ovl == OVL_DPTP;
}

/*
 * t_sigma on unit u of layers with flops FLOPs and TP volume tp in all:
 * it never falls as either grows, in floating point too.  (Inline: the
 * partition DPs call it in their inner loops.)
 */
static inline double
cost_unit_t(const struct cost_unit *u, double flops, double tp)
{
	double t = u->mu * flops / u->flops, c;

	if (u->k > 1) {
		c = u->mu * tp * u->share / u->bytes;
		t = u->tpov ? fmax(t, c) : t + c;
	}
	return t;
}

/* cost_unit_t() on k GPUs of node n. */
static inline double
cost_unit_time(const struct dl_costctx *x, int node, int k, double flops,
    double tp)
{
	struct cost_unit u;

	cost_unit_init(x, node, k, &u);
	return cost_unit_t(&u, flops, tp);
}
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
/* Sums over layers [first, last]: (fwd+bwd) FLOPs, parameters, kept
 * activation bytes and TP all-reduce bytes, per sample. */
double cost_range_flops(const struct dl_costctx *x, int first, int last);
double cost_range_params(const struct dl_costctx *x, int first, int last);
double cost_range_mem(const struct dl_costctx *x, int first, int last);
double cost_range_tp(const struct dl_costctx *x, int first, int last);
/*
 * What cost_stage_memory_dp() of one stage (its TP share, position,
 * micro-batches and data-parallel size) needs besides its layers, so
 * that a caller pricing many ranges of one stage (the partition DPs)
 * works it out once: cost_mem_at() is cost_stage_memory_dp() bit for
 * bit, and that function is defined by it.
 */
struct cost_mem {
	double held_mu;		/* micro-batches held times the micro-batch */
	double state;		/* bytes a parameter of state */
	double tied;		/* the tied embedding's copy, when first > 0 */
	double rc;		/* the recomputed block's transient, or 0 */
	double phi;
	int fold;		/* rc is added */
};
void cost_mem_init(const struct dl_costctx *x, double phi, int p, int S,
    long m, long dp, struct cost_mem *r);

/* A range sum of cum_params or cum_mem, from the table when kept. */
static inline double
cost_range_at(const struct dl_costctx *x, const double *t,
    double (*slow)(const struct dl_costctx *, int, int), int first, int last)
{
	if (t != NULL && first <= last)
		return t[(size_t)last * x->m->nlayers + (size_t)first];
	return slow(x, first, last);
}

/* Memory of layers [first, last] on the stage of r, bytes a GPU. */
static inline double
cost_mem_at(const struct dl_costctx *x, const struct cost_mem *r, int first,
    int last)
{
	double act = r->held_mu * cost_range_at(x, x->rt_mem, cost_range_mem,
	    first, last), w;

	w = r->state * (cost_range_at(x, x->rt_params, cost_range_params,
	    first, last) + (first > 0 ? r->tied : 0)) * r->phi;
	if (r->fold)
		act += r->rc;
	return w + act * r->phi;
}

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
