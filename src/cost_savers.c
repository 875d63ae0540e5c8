/*
 * cost_savers.c - the range sums of the cost model, and the memory
 * savers of dlplan(1) ALGORITHMS, Memory savers: what a layer keeps with
 * the plan's attention kernel, what a recomputed block keeps and runs
 * again, a stage's memory and FLOPs with its own recomputation, and the
 * choice of how many blocks it recomputes.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_savers.h"
#include "pipesched.h"

/* Knuth's TwoSum: s + err == a + b exactly. */
static void
two_sum(double a, double b, double *s, double *err)
{
	double z = a + b, bb = z - a;

	*err = (a - (z - bb)) + (b - bb);
	*s = z;
}

/* Prefix sums hi[i] + lo[i] of the first i terms, i = 0..n. */
void
cost_prefix(const double *term, size_t n, double **hi, double **lo)
{
	double h = 0, l = 0;

	*hi = xcalloc(n + 1, sizeof(double));
	*lo = xcalloc(n + 1, sizeof(double));
	for (size_t i = 0; i < n; i++) {
		double s, err;

		two_sum(h, term[i], &s, &err);
		l += err;
		two_sum(s, l, &h, &l);
		(*hi)[i + 1] = h;
		(*lo)[i + 1] = l;
	}
}

static double
range(const double *hi, const double *lo, int first, int last)
{
	double s, err;

	two_sum(hi[last + 1], -hi[first], &s, &err);
	return s + (err + (lo[last + 1] - lo[first]));
}

/* range() of every [first, last] of n layers, first <= last. */
double *
cost_range_table(const double *hi, const double *lo, size_t n)
{
	double *t = xcalloc(n * n, sizeof(double));

	for (size_t b = 0; b < n; b++)
		for (size_t a = 0; a <= b; a++)
			t[b * n + a] = range(hi, lo, (int)a, (int)b);
	return t;
}

/* range() of [first, last], from the table t when kept (inline: the
 * partition DPs call it in their inner loops). */
static inline double
range_of(const struct dl_costctx *x, const double *t, const double *hi,
    const double *lo, int first, int last)
{
	if (t != NULL && first <= last)
		return t[(size_t)last * x->m->nlayers + (size_t)first];
	return range(hi, lo, first, last);
}

double
cost_range_flops(const struct dl_costctx *x, int first, int last)
{
	return range_of(x, x->rt_flops, x->cum_flops, x->lo_flops, first,
	    last);
}

double
cost_fwd_share(const struct dl_costctx *x, int first, int last)
{
	double all = cost_range_flops(x, first, last);

	if (!(all > 0))
		return 1.0 / 3;
	return range(x->cum_fwd, x->lo_fwd, first, last) / all;
}

double
cost_range_fwd(const struct dl_costctx *x, int first, int last)
{
	return range(x->cum_fwd, x->lo_fwd, first, last);
}

double
cost_range_params(const struct dl_costctx *x, int first, int last)
{
	return range_of(x, x->rt_params, x->cum_params, x->lo_params, first,
	    last);
}

double
cost_range_mem(const struct dl_costctx *x, int first, int last)
{
	return range_of(x, x->rt_mem, x->cum_mem, x->lo_mem, first,
	    last);
}

double
cost_range_tp(const struct dl_costctx *x, int first, int last)
{
	return range_of(x, x->rt_tp, x->cum_tp, x->lo_tp, first,
	    last);
}

double
cost_gpu_capacity(const struct dl_costctx *x, int node)
{
	return x->c->nodes[node].mem_gb * 1e9 * (1 - x->o->mem_reserve);
}

/*
 * The per-layer figures of the memory savers (cost.h): what a block
 * keeps with the plan's attention kernel and runtime, what it keeps and
 * runs again when recomputed, and the bytes per parameter the runtime
 * holds.  The tensors are those of dlplan(1) MODEL FORMULAS, Activation
 * memory kept for backward.
 */
/* 1 when every GPU of c has bf16, 0 when none has, -1 when some have. */
static int
bf16_gpus(const struct dl_cluster *c)
{
	size_t fp16 = 0;

	for (size_t i = 0; i < c->nnodes; i++)
		fp16 += cluster_gpu_fp16(c->nodes[i].gpu_model) != 0;
	return fp16 == 0 ? 1 : fp16 == c->nnodes ? 0 : -1;
}

void
cost_savers_init(struct dl_costctx *x, const struct dl_model *m,
    const struct dl_opts *o)
{
	size_t n = m->nlayers;
	struct mg_arch a = m->arch;
	double scores = 0, swiglu = 0, input = 0, core = 0;
	double traffic = 0, work = 0;

	x->blk = xcalloc(n, 1);
	x->cum_blk = xcalloc(n + 1, sizeof(int));
	for (size_t l = 0; l < n; l++)
		x->cum_blk[l + 1] = x->cum_blk[l] + model_is_block(m, l);
	x->lay_flops = xcalloc(n, sizeof(double));
	x->lay_mem = xcalloc(n, sizeof(double));
	x->lay_keep = xcalloc(n, sizeof(double));
	x->lay_rcf = xcalloc(n, sizeof(double));
	x->rc_fold = o->recompute == RC_FULL;
	if (model_is_transformer(m)) {
		double s, h, p, heads, drop;

		mg_complete(&a);
		s = (double)a.seq;
		h = (double)a.hidden;
		p = (double)a.dtype_bytes;
		heads = (double)a.heads;
		drop = a.dropout ? 1 : 0;
		/* Softmax output; with dropout its mask and the dropped-out
		 * scores. */
		scores = (p * (1 + drop) + drop) * heads * s * s;
		/* Megatron's fused SwiGLU keeps its 2F input and the F
		 * product, not the SiLU output (4 p s F in the formulas). */
		if (a.family == MG_LLAMA && o->runtime == RUNTIME_MEGATRON)
			swiglu = p * s * (double)a.ffn;
		input = p * s * h;
		/* Q K^T and scores times values: what selective
		 * recomputation runs again. */
		core = 4 * s * s * h;
		if (a.tied && a.family != MG_BERT)
			x->tied_params = (double)a.vocab * h;
	}
	for (size_t l = 0; l < n; l++) {
		const struct dl_layer *ly = &m->layers[l];
		double mem = ly->mem_mb * 1e6;

		/* What the layer's kernels produce: the scores only when
		 * attention is not fused, whatever is kept of them. */
		traffic += mem - (o->attention == ATTN_FUSED &&
		    model_is_block(m, l) ? scores : 0);
		work += (ly->fwd_gflop + ly->bwd_gflop) * 1e9;

		x->blk[l] = (unsigned char)model_is_block(m, l);
		x->lay_flops[l] = (ly->fwd_gflop + ly->bwd_gflop) * 1e9;
		if (x->blk[l]) {
			if (o->attention == ATTN_FUSED ||
			    o->recompute == RC_SELECTIVE)
				mem -= scores;
			mem -= swiglu;
			if (o->recompute == RC_SELECTIVE)
				x->lay_flops[l] += core;
			x->lay_keep[l] = input;
			x->lay_rcf[l] = ly->fwd_gflop * 1e9;
			x->rc_transient = fmax(x->rc_transient, mem);
		} else {
			x->lay_keep[l] = mem;
		}
		x->lay_mem[l] = fmax(mem, 0);
	}
	x->mem_per_flop = work > 0 ? COST_MEM_PASSES * fmax(traffic, 0) /
	    work : 0;
	x->wbytes = o->param_bytes + o->grad_bytes;
	/* Megatron-LM keeps fp32 main gradients beside 16-bit weights
	 * (theoretical_memory_usage.py: 18 bytes a parameter). */
	if (o->runtime == RUNTIME_MEGATRON && o->param_bytes < 4)
		x->wbytes = o->param_bytes + fmax(o->grad_bytes, 4);
	x->obytes = o->optimizer_bytes;
	/*
	 * torchtitan b5bcd76c66d0 wraps its llama3 in FSDP whatever the data
	 * parallelism (fully_shard over data_parallel_shard_degree, 1 when
	 * replicated: torchtitan/models/llama3/parallelize.py:57-77): float32
	 * parameters and Adam state, fsdp_bytes a parameter, and float32
	 * gradients (training.mixed_precision_reduce, torchtitan/config/
	 * configs.py:102), sharded over the groups with a sharded optimizer.
	 */
	if (o->runtime == RUNTIME_TORCHTITAN)
		x->fsdp_bytes = o->optimizer_bytes + (o->param_bytes < 4 ? 0 :
		    o->param_bytes);
	x->bf16_gpus = bf16_gpus(x->c);
}

int
cost_ds_bf16opt(const struct dl_opts *o, int S)
{
	return o->runtime == RUNTIME_DEEPSPEED && S > 1 &&
	    o->optimizer != OPTIM_SHARDED && o->param_bytes < 4;
}

/*
 * Bytes per parameter of weights, gradients and optimizer state on a
 * stage of S with dp data-parallel replicas.  A torchtitan rank holds
 * with a pipeline the unsharded compute copy of its parameters from the
 * first forward to the last backward (FSDP does not reshard after
 * forward with pipeline parallelism, torchtitan/distributed/
 * fsdp.py:112-137) and the gradient accumulated over the micro-batches,
 * upcast to the float32 reduce dtype (PyTorch's FSDPParam.
 * to_accumulated_grad_if_needed(), torch/distributed/fsdp/_fully_shard/
 * _fsdp_param.py), which the reduce-scatter after the last one replaces by
 * the sharded gradient (the step before zeroed the gradients to None:
 * torchtitan/trainer.py:845, as CUDA graphs are off with a pipeline);
 * without a pipeline it keeps the copy when sharded (the reshard policy
 * dlplan emits) and its sharded gradient throughout, each block's reduced
 * as it comes.
 *
 * DeepSpeed with a pipeline, 16-bit weights and ZeRO stage 0 takes its
 * BF16_Optimizer for bf16 (deepspeed/runtime/engine.py:2014-2018 at
 * 0.19.6), which keeps a gradient buffer of the model's type beside the
 * weights' own gradients, whole, and the fp32 master weights and Adam
 * state sharded over the dp replicas (bf16_optimizer.py:162-177), and
 * its FP16_Optimizer for fp16, which keeps them whole (engine.py:2019).
 * The precision is the plan's GPUs' (plan_precision()): on a cluster
 * whose GPUs all have bf16, or none, it is known; on one of both kinds a
 * stage's price does not know it and takes the larger of the two.
 */
static double
state_bytes(const struct dl_costctx *x, long dp, int S)
{
	int sh = x->o->optimizer == OPTIM_SHARDED && dp > 1;
	double d = sh ? (double)dp : 1;

	if (x->o->runtime == RUNTIME_TORCHTITAN && S > 1)
		return x->o->param_bytes + 4 + x->fsdp_bytes / d;
	if (x->o->runtime == RUNTIME_TORCHTITAN)
		return (sh ? x->o->param_bytes : 0) + (x->fsdp_bytes + 4) / d;
	if (sh)
		return x->wbytes + x->obytes / (double)dp;
	if (cost_ds_bf16opt(x->o, S)) {
		double fp = x->wbytes + x->obytes, bf = x->wbytes +
		    x->o->grad_bytes + x->obytes / (double)(dp > 1 ? dp : 1);

		return x->bf16_gpus > 0 ? bf : x->bf16_gpus == 0 ? fp :
		    fmax(fp, bf);
	}
	return x->wbytes + x->obytes;
}

double
cost_least_state_bytes(const struct dl_costctx *x)
{
	long gpus = 0;
	double least = x->o->param_bytes + x->o->grad_bytes +
	    x->o->optimizer_bytes;

	for (size_t n = 0; n < x->c->nnodes; n++)
		gpus += x->c->nodes[n].gpus;
	/* The most groups a plan can have is one per GPU; sharded state
	 * shrinks with them, and torchtitan's differs with a pipeline. */
	least = fmin(least, state_bytes(x, gpus, 1));
	return fmin(least, state_bytes(x, gpus, 2));
}

/* Micro-batches stage p of S holds at once: min(m, S - p + 1). */
static double
held_mb(int p, int S, long m)
{
	long held = m < S - p + 1 ? m : S - p + 1;

	return held < 0 ? 0 : (double)held;
}

/*
 * The same under the interleaved schedule with v chunks a rank: its
 * warm-up forwards and the one of the first steady step, each a chunk,
 * v chunks a micro-batch (pipe_vwarmup()).  On the first rank that is
 * S (1 + (S - 1) / (S v)) micro-batches, Megatron-LM's
 * interleaved_schedule_memory_penalty (theoretical_memory_usage.py at
 * d98e8a64).
 */
static double
held_vmb(int p, int S, long m, int v)
{
	long w;

	if (v <= 1)
		return held_mb(p, S, m);
	w = pipe_vwarmup(S, v, m, p - 1);
	if (w < m * v)
		w++;
	return (double)w / v;
}

/* The tied embedding's copy on the last stage of a pipeline that does not
 * hold the embedding itself. */
static double
tied_copy(const struct dl_costctx *x, int first, int p, int S)
{
	return p == S && S > 1 && first > 0 ? x->tied_params : 0;
}

void
cost_mem_init(const struct dl_costctx *x, double phi, int p, int S, long m,
    long dp, struct cost_mem *r)
{
	double mu = (double)x->o->micro_batch;

	r->held_mu = held_mb(p, S, m) * mu;
	r->state = state_bytes(x, dp, S);
	/* tied_copy() of a stage that does not start at layer 0. */
	r->tied = tied_copy(x, 1, p, S);
	r->fold = x->rc_fold;
	r->rc = x->rc_fold ? mu * x->rc_transient : 0;
	r->phi = phi;
}

double
cost_stage_memory_dp(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, long dp)
{
	struct cost_mem r;

	cost_mem_init(x, phi, p, S, m, dp, &r);
	return cost_mem_at(x, &r, first, last);
}

double
cost_stage_memory(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m)
{
	return cost_stage_memory_dp(x, first, last, phi, p, S, m, 1);
}

/* model_blocks() of rows first .. last, from the context's prefix counts. */
static int
blocks(const struct dl_costctx *x, int first, int last)
{
	if (first < 0 || last >= (int)x->m->nlayers)
		return model_blocks(x->m, first, last);
	return last < first ? 0 : x->cum_blk[last + 1] - x->cum_blk[first];
}

int
cost_stage_rc(const struct dl_costctx *x, const struct dl_stage *st)
{
	if (st->rc_set)
		return st->recompute;
	return x->rc_fold ? blocks(x, st->first, st->last) : 0;
}

/* Whether nrc recomputed blocks of [first, last] is what the context's
 * range sums already price. */
static int
rc_default(const struct dl_costctx *x, int first, int last, int nrc)
{
	if (nrc == 0 && !x->rc_fold)
		return 1;
	return x->rc_fold && nrc >= blocks(x, first, last);
}

double
cost_stage_memory_rc(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, int nrc, long dp)
{
	return cost_stage_memory_vp(x, first, last, phi, p, S, m, nrc, dp, 1);
}

double
cost_stage_memory_vp(const struct dl_costctx *x, int first, int last,
    double phi, int p, int S, long m, int nrc, long dp, int v)
{
	double mu = (double)x->o->micro_batch, act = 0;
	int left = nrc;

	if (rc_default(x, first, last, nrc)) {
		act = cost_range_mem(x, first, last);
	} else {
		for (int l = first; l <= last; l++) {
			int rc = x->blk[l] && left > 0;

			left -= rc;
			act += rc ? x->lay_keep[l] : x->lay_mem[l];
		}
	}
	act *= held_vmb(p, S, m, v) * mu;
	if (nrc > 0)
		act += mu * x->rc_transient;
	return state_bytes(x, dp, S) * (cost_range_params(x, first, last) +
	    tied_copy(x, first, p, S)) * phi + act * phi;
}

double
cost_stage_flops_rc(const struct dl_costctx *x, int first, int last,
    int nrc, double *fwd_share)
{
	double all, fwd = cost_range_fwd(x, first, last);
	int left = nrc;

	if (rc_default(x, first, last, nrc)) {
		all = cost_range_flops(x, first, last);
	} else {
		all = 0;
		for (int l = first; l <= last; l++) {
			int rc = x->blk[l] && left > 0;

			left -= rc;
			all += x->lay_flops[l] + (rc ? x->lay_rcf[l] : 0);
		}
	}
	if (fwd_share != NULL)
		*fwd_share = all > 0 ? fwd / all : 1.0 / 3;
	return all;
}

void
cost_decide_rc(const struct dl_costctx *x, struct dl_plan *p, int how)
{
	int most = 0;

	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *gr = &p->groups[g];

		for (int s = 0; s < gr->nstages; s++) {
			struct dl_stage *st = &gr->stages[s];
			int nb = model_blocks(x->m, st->first, st->last), n = 0;
			double cap = cost_gpu_capacity(x, st->node), phi = 0;

			for (int d = 0; d < st->ngpus; d++)
				phi = fmax(phi, st->tp_share[d]);
			/* Interleaved: each of the v chunks recomputes as
			 * many (Megatron's --recompute-num-layers). */
			if (x->rc_fold)
				while (n < nb && cost_stage_memory_vp(x,
				    st->first, st->last, phi, s + 1,
				    gr->nstages, gr->micro_batches, n,
				    p->ngroups, PLAN_VSTAGES(gr)) > cap)
					n += PLAN_VSTAGES(gr);
			if (n > nb)
				n = nb;
			st->recompute = n;
			st->rc_set = 1;
			if (n > most)
				most = n;
		}
	}
	if (how == COST_RC_STAGE)
		return;
	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++) {
			struct dl_stage *st = &p->groups[g].stages[s];
			int nb = model_blocks(x->m, st->first, st->last);

			if (how == COST_RC_WHOLE)
				st->recompute = most > 0 ? nb : 0;
			else
				st->recompute = most < nb ? most : nb;
		}
}

