/*
 * cost_ctx.h - the cost model's precomputed context, a unit's compute
 * time, the layer range sums and a stage's memory: the types and inline
 * helpers every file of the cost model shares, so that none of them
 * takes them from cost.c's header (cost.h declares the rest).
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_COST_CTX_H
#define DL_COST_CTX_H

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
	 * bf16_gpus: 1 when every GPU of the cluster has bf16, 0 when none
	 * has, -1 when some have (a plan's precision then depends on its
	 * GPUs: plan_precision()).
	 */
	unsigned char *blk;
	int *cum_blk;		/* n + 1: the blocks among rows 0 .. l - 1 */
	double *lay_flops, *lay_mem, *lay_keep, *lay_rcf;
	int rc_fold;
	double rc_transient;
	double wbytes, obytes, fsdp_bytes;
	double tied_params;
	int bf16_gpus;
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

/*
 * How many times a memory-bound kernel reads or writes each byte of
 * activation a layer produces, over forward and backward (dlplan(1)
 * ALGORITHMS, Cost model: fitted on the SC'21 Megatron-LM runs).
 */
#define COST_MEM_PASSES 8.0

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

#endif
