/*
 * search_runtime.c - the search restricted to what a training framework
 * can run (plan --runtime megatron|deepspeed|torchtitan).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Megatron-LM, DeepSpeed and torchtitan describe a job by a TP degree, a
 * PP degree, a DP degree and one layer split that every replica shares.
 * So every group here has the same shape: S stages, each one unit of k
 * GPUs of one node (TP inside a node), the same layer boundaries, and the
 * same number of micro-batches (the total divided by G).  The layer split
 * is one the framework can express:
 *
 *	megatron	in transformer blocks: an even split, one even with
 *			the embedding and the loss counted as a layer each
 *			(--account-for-embedding-in-pipeline-split,
 *			--account-for-loss-in-pipeline-split), or the first
 *			and the last stage of their own size with the stages
 *			between even (--decoder-first-pipeline-num-layers,
 *			--decoder-last-pipeline-num-layers)
 *	deepspeed	PipelineModule's partition_method "uniform": L / S
 *			layers per stage, the first L mod S stages one more
 *	torchtitan	any split (module_fqns_per_model_part): the
 *			Megatron splits and the split that balances the
 *			slowest stage
 *
 * Megatron-LM counts transformer layers (model_is_block()), not model.csv
 * rows: its split is search_megatron_split()'s, over the blocks of each
 * stage.  The TP degrees are those search_runtime_fits() allows.
 *
 * For each TP degree k, stage count S and group count G, the groups take
 * the G * S fastest units of degree k in the order search_cmp_unit()
 * gives, S consecutive units each.  Every split the framework allows is
 * priced cheaply (the pipeline times of search_group_am() with unshared
 * transfers, memory checked), and the cheapest is scored by the full cost
 * model through search_consider().  Deterministic: the loops run in a
 * fixed order and ties keep the first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

/* One structure: G groups of S units of degree k, m micro-batches each. */
struct rtshape {
	int k, S, G;
	long m;
	const struct unit **u;	/* G * S units, group g at u[g * S] */
	int *node, *kk;		/* scratch for search_group_am() */
};

/*
 * The cheap price of stage ends last[] for every group of r: the largest
 * T_g = A + (m - 1) M, or HUGE_VAL when a GPU runs out of memory.
 */
static double
price_split(struct ctx *C, const struct rtshape *r, const int *last)
{
	const struct dl_costctx *x = C->x;
	double worst = 0;

	for (int g = 0; g < r->G; g++) {
		const struct unit **u = r->u + (size_t)g * r->S;
		double A, M;

		for (int j = 0, a = 0; j < r->S; j++) {
			double mem = cost_stage_memory_dp(x, a, last[j],
			    1.0 / r->k, j + 1, r->S, r->m, r->G);

			if (mem > cost_gpu_capacity(x, u[j]->node))
				return HUGE_VAL;
			r->node[j] = u[j]->node;
			r->kk[j] = r->k;
			a = last[j] + 1;
		}
		search_group_am(x, r->S, r->node, r->kk, last, &C->tc, &A, &M);
		worst = fmax(worst, A + (double)(r->m - 1) * M);
	}
	return worst;
}

/* Keep split try[] in best[] when it is cheaper than *bestp. */
static void
offer(struct ctx *C, const struct rtshape *r, const int *try, int *best,
    double *bestp)
{
	double p = price_split(C, r, try);

	if (p < *bestp) {
		*bestp = p;
		memcpy(best, try, (size_t)r->S * sizeof(int));
	}
}

int
search_megatron_split(const int *b, int S, struct mt_split *ms)
{
	int N = 0, mid, j;

	memset(ms, 0, sizeof(*ms));
	for (j = 0; j < S; j++)
		N += b[j];
	for (j = 1; j < S && b[j] == b[0]; j++)
		;
	if (j == S)			/* even, or one stage */
		return b[0] > 0;
	/* The account-for flags: embedding (1), loss (2), both (3). */
	for (int f = 1; f <= 3; f++) {
		int em = f & 1, lo = f >> 1, per, ok;

		if ((N + em + lo) % S != 0)
			continue;
		per = (N + em + lo) / S;
		ok = b[0] == per - em && b[S - 1] == per - lo;
		for (j = 1; j + 1 < S; j++)
			ok = ok && b[j] == per;
		if (ok) {
			ms->embed = em;
			ms->loss = lo;
			return 1;
		}
	}
	if (S == 2) {
		ms->first = b[0];
		ms->last = b[1];
		return b[0] > 0 && b[1] > 0;
	}
	/* First and last: the stages between them even, not empty. */
	mid = b[1];
	for (j = 2; j + 1 < S; j++)
		if (b[j] != mid)
			return 0;
	if (b[0] != mid)
		ms->first = b[0];
	if (b[S - 1] != mid)
		ms->last = b[S - 1];
	return mid > 0 && b[0] > 0 && b[S - 1] > 0;
}

int
search_runtime_model(const struct dl_model *m, int runtime,
    struct dl_err *e)
{
	const char *rt = runtime == RUNTIME_MEGATRON ? "megatron" :
	    "torchtitan";

	if ((runtime == RUNTIME_MEGATRON || runtime == RUNTIME_TORCHTITAN) &&
	    !model_is_transformer(m))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "model '%s' has "
		    "no 'dlplan model' line of a transformer (gpt, llama, "
		    "bert): %s builds the model from its sizes (write "
		    "model.csv with 'dlplan model')", m->path ? m->path : "",
		    rt);
	/*
	 * torchtitan b5bcd76c66d0 builds only its own families
	 * (torchtitan/models/__init__.py:7-18); of dlplan's, only llama is
	 * one of them (llama3: RMSNorm, SwiGLU with the hidden size given,
	 * rotary positions, grouped KV heads, torchtitan/models/llama3/
	 * __init__.py:69-112).  A gpt or bert plan would run a Llama of its
	 * sizes, a different model from the one priced.
	 */
	if (runtime == RUNTIME_TORCHTITAN && m->arch.family != MG_LLAMA)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "model '%s' is a "
		    "%s: torchtitan has no %s family (it builds deepseek_v3, "
		    "flux, gpt_oss, kimi_k2_7, llama3, muse_glimmer, qwen3 "
		    "and qwen3_5; of dlplan's families, llama is its llama3)",
		    m->path ? m->path : "", mg_family_name(m->arch.family),
		    mg_family_name(m->arch.family));
	return DL_OK;
}

/*
 * torchtitan trains in bfloat16 or float32 only (training.
 * mixed_precision_param and dtype, torchtitan/config/configs.py:75-100):
 * it has no fp16 with loss scaling for GPUs without bf16.
 */
int
search_runtime_gpu_refused(const struct dl_cluster *c, int runtime,
    int node)
{
	return runtime == RUNTIME_TORCHTITAN &&
	    cluster_gpu_fp16(c->nodes[node].gpu_model);
}

/*
 * The memory savers each framework has (dlplan(1) ALGORITHMS, Memory
 * savers, and RUNTIMES):
 *
 *	megatron	all of them (emit_megatron.c, saver_args())
 *	deepspeed	recomputation through PipelineModule's
 *			activation_checkpoint_interval: 1 checkpoints every
 *			layer of the stage, 0 none (deepspeed/runtime/pipe/
 *			module.py:117, 370-390 at 0.16.5, 38327e07f),
 *			so every block of every stage or none, and only with
 *			a pipeline (a plain module recomputes what its own
 *			code checkpoints); no selective recomputation; the
 *			optimizer state sharded by ZeRO stage 1 (ZeRO-2
 *			shards gradients too, and the pipeline engine refuses
 *			it: pipe/engine.py:77-78); the attention kernel is the
 *			training script's, as for every layer it builds
 *	torchtitan	activation_checkpoint FullAC, which recomputes every
 *			transformer block (torchtitan/distributed/
 *			activation_checkpoint.py:166-182 at b5bcd76c66d0), or
 *			None; its SelectiveAC (:185-198) saves the matrix
 *			products and recomputes other operators, not the core
 *			attention that dlplan's selective prices; its llama3
 *			attention is FlexAttention or varlen flash attention
 *			(models/common/config_utils.py:71-96), both fused; the
 *			optimizer state sharded by FSDP (data_parallel_shard_
 *			degree), which reduce-scatters the gradients once
 *			after a pipeline's last micro-batch, but after every
 *			accumulated micro-batch without one (trainer.py:856,
 *			no gradient sync switched off)
 */
const char *
search_runtime_saver_refused(int runtime, const struct dl_opts *o)
{
	if (runtime == RUNTIME_DEEPSPEED && o->recompute == RC_SELECTIVE)
		return "deepspeed has no selective recomputation: a "
		    "PipelineModule's activation_checkpoint_interval "
		    "recomputes whole layers (use '--recompute full' or "
		    "'auto')";
	if (runtime == RUNTIME_TORCHTITAN && o->recompute == RC_SELECTIVE)
		return "torchtitan's selective activation checkpointing "
		    "saves the matrix products and recomputes the other "
		    "operators, not the core attention that '--recompute "
		    "selective' prices (use '--recompute full' or 'auto')";
	if (runtime == RUNTIME_TORCHTITAN && o->attention == ATTN_UNFUSED)
		return "torchtitan's llama3 has no unfused attention (its "
		    "backends, flex and varlen, keep no scores)";
	return NULL;
}

int
search_runtime_saver_fits(int runtime, const struct dl_opts *o, int S,
    long m, int G, int rc, char *why, size_t n)
{
	if (runtime == RUNTIME_DEEPSPEED && rc && S == 1) {
		if (why)
			snprintf(why, n, "deepspeed recomputes only through a "
			    "PipelineModule (activation_checkpoint_interval), "
			    "and the plan has no pipeline");
		return 0;
	}
	if (runtime == RUNTIME_TORCHTITAN && o->optimizer == OPTIM_SHARDED &&
	    G > 1 && S == 1 && m > 1) {
		if (why)
			snprintf(why, n, "torchtitan's FSDP reduce-scatters the "
			    "gradients of each of the %ld accumulated "
			    "micro-batches without a pipeline, which the plan "
			    "does not price", m);
		return 0;
	}
	return 1;
}

int
search_runtime_fits(const struct dl_model *m, int runtime, int k, int S,
    char *why, size_t n)
{
	const struct mg_arch *a;

	if (runtime == RUNTIME_DEEPSPEED && k > 1 && S > 1) {
		if (why)
			snprintf(why, n, "deepspeed runs TP > 1 only without a "
			    "pipeline: a PipelineModule does not slice "
			    "tensors, and AutoTP (tensor_parallel.autotp_size) "
			    "combines TP with data parallelism and ZeRO only, "
			    "its process groups a data x TP mesh with no "
			    "pipeline axis");
		return 0;
	}
	if (m == NULL)
		return 1;
	a = &m->arch;
	if (runtime == RUNTIME_MEGATRON && model_is_transformer(m) &&
	    (a->heads % k != 0 || (a->kv_heads % k != 0 &&
	    k % a->kv_heads != 0))) {
		if (why)
			snprintf(why, n, "megatron needs num_attention_heads "
			    "(%ld) divisible by TP %d and num_query_groups "
			    "(%ld) a multiple or a divisor of it", a->heads, k,
			    a->kv_heads);
		return 0;
	}
	if (runtime == RUNTIME_TORCHTITAN && model_is_transformer(m) &&
	    (a->heads % k != 0 || a->kv_heads % k != 0)) {
		if (why)
			snprintf(why, n, "torchtitan needs TP %d to divide "
			    "n_heads (%ld) and n_kv_heads (%ld)", k, a->heads,
			    a->kv_heads);
		return 0;
	}
	if (runtime == RUNTIME_TORCHTITAN && model_is_transformer(m) &&
	    a->tied && S > 1) {
		if (why)
			snprintf(why, n, "torchtitan does not tie the head's "
			    "weights to the embedding's with a pipeline, and "
			    "the model ties them (--tied yes)");
		return 0;
	}
	return 1;
}

/* Whether Megatron builds split last[] of r exactly. */
static int
megatron_builds(const struct ctx *C, const struct rtshape *r,
    const int *last)
{
	int *b = xcalloc((size_t)r->S, sizeof(int)), ok;
	struct mt_split ms;

	for (int j = 0, a = 0; j < r->S; j++) {
		b[j] = model_blocks(C->x->m, a, last[j]);
		a = last[j] + 1;
	}
	ok = search_megatron_split(b, r->S, &ms);
	free(b);
	return ok;
}

/*
 * The Megatron splits: even, and every first/last pair whose middle
 * stages split evenly; for megatron only those it builds exactly.
 */
static void
offer_megatron(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	int L = C->L, S = r->S;

	if (S == 1) {
		try[0] = L - 1;
		offer(C, r, try, best, bestp);
		return;
	}
	for (int f = 1; f <= L - S + 1; f++)
		for (int l = 1; f + l <= L - (S - 2); l++) {
			int rest = L - f - l, per;

			if (S == 2 ? rest != 0 : rest % (S - 2) != 0)
				continue;
			per = S > 2 ? rest / (S - 2) : 0;
			if (S > 2 && per < 1)
				continue;
			try[0] = f - 1;
			for (int j = 1; j < S - 1; j++)
				try[j] = try[j - 1] + per;
			try[S - 1] = L - 1;
			if (C->so->runtime != RUNTIME_MEGATRON ||
			    megatron_builds(C, r, try))
				offer(C, r, try, best, bestp);
		}
}

/* DeepSpeed's "uniform" partition: the first L mod S stages one more. */
static void
offer_deepspeed(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	int L = C->L, S = r->S, per = L / S, extra = L % S;

	for (int j = 0, a = 0; j < S; j++) {
		a += per + (j < extra);
		try[j] = a - 1;
	}
	offer(C, r, try, best, bestp);
}

/*
 * The split that minimises the slowest stage's compute time over the
 * groups (stage j of every group runs on that group's j-th unit), by
 * dynamic programming over (stages, layers); ties keep the earliest cut.
 */
static void
offer_balanced(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	const struct dl_costctx *x = C->x;
	int L = C->L, S = r->S;
	double *f = xcalloc((size_t)(S + 1) * (size_t)(L + 1), sizeof(double));
	int *cut = xcalloc((size_t)(S + 1) * (size_t)(L + 1), sizeof(int));

#define F(j, l) f[(size_t)(j) * (size_t)(L + 1) + (size_t)(l)]
#define CUT(j, l) cut[(size_t)(j) * (size_t)(L + 1) + (size_t)(l)]
	for (int l = 0; l <= L; l++)
		F(0, l) = l == 0 ? 0 : HUGE_VAL;
	for (int j = 1; j <= S; j++)
		for (int l = 0; l <= L; l++) {
			F(j, l) = HUGE_VAL;
			for (int a = j - 1; a < l; a++) {
				double t = 0, v;

				if (F(j - 1, a) == HUGE_VAL)
					continue;
				for (int g = 0; g < r->G; g++)
					t = fmax(t, cost_stage_compute(x,
					    r->u[(size_t)g * S + j - 1]->node,
					    r->k, a, l - 1));
				v = fmax(F(j - 1, a), t);
				if (v < F(j, l)) {
					F(j, l) = v;
					CUT(j, l) = a;
				}
			}
		}
	if (F(S, L) < HUGE_VAL) {
		for (int j = S, l = L; j >= 1; j--) {
			try[j - 1] = l - 1;
			l = CUT(j, l);
		}
		offer(C, r, try, best, bestp);
	}
#undef F
#undef CUT
	free(f);
	free(cut);
}

/*
 * The interleaved schedule on the split last[] that C->work holds (run_
 * shape()): every v >= 2 that divides each stage's blocks, priced by the
 * full model, where Megatron builds the chunks dlplan prices (no
 * embedding or loss counted as a layer) and cost_vp_layout() allows it.
 */
static void
offer_interleaved(struct ctx *C, const struct rtshape *r, const int *last)
{
	int S = r->S, least = 0, *b;
	struct mt_split ms;
	struct dl_err e = { 0 };

	if (S < 2)
		return;
	b = xcalloc((size_t)S, sizeof(int));
	for (int j = 0, a = 0; j < S; j++) {
		b[j] = model_blocks(C->x->m, a, last[j]);
		a = last[j] + 1;
		least = j == 0 || b[j] < least ? b[j] : least;
	}
	if (!search_megatron_split(b, S, &ms) || ms.embed || ms.loss)
		least = 0;
	free(b);
	/* cost_vp_layout() refuses a v that does not divide every stage. */
	for (int v = 2; v <= least && !C->failed; v++) {
		if (cost_vp_layout(C->x, &C->work.groups[0], v, NULL, NULL,
		    &e) != DL_OK)
			continue;
		for (int g = 0; g < C->work.ngroups; g++)
			C->work.groups[g].vstages = v;
		search_consider(C);
	}
}

/* Price the splits of r's runtime; score the cheapest with the model. */
static void
run_shape(struct ctx *C, const struct rtshape *r)
{
	int S = r->S, *try = xcalloc((size_t)S, sizeof(int));
	int *best = xcalloc((size_t)S, sizeof(int));
	int **last = xcalloc((size_t)r->G, sizeof(int *));
	int *shS = xcalloc((size_t)r->G, sizeof(int));
	int *off = xcalloc((size_t)r->G, sizeof(int));
	long *m = xcalloc((size_t)r->G, sizeof(long));
	double bestp = HUGE_VAL;
	struct shape sh;

	C->st->structures++;
	if (C->so->runtime == RUNTIME_DEEPSPEED)
		offer_deepspeed(C, r, try, best, &bestp);
	else
		offer_megatron(C, r, try, best, &bestp);
	if (C->so->runtime == RUNTIME_TORCHTITAN)
		offer_balanced(C, r, try, best, &bestp);
	if (bestp < HUGE_VAL) {
		for (int g = 0; g < r->G; g++) {
			last[g] = best;
			shS[g] = S;
			off[g] = g * S;
			m[g] = r->m;
		}
		sh.G = r->G;
		sh.S = shS;
		sh.off = off;
		sh.u = r->u;
		search_build_plan(C, &C->work, &sh, last, m);
		search_consider(C);
		if (C->so->runtime == RUNTIME_MEGATRON)
			offer_interleaved(C, r, best);
	}
	free(try);
	free(best);
	free(last);
	free(shS);
	free(off);
	free(m);
}

void
search_runtime(struct ctx *C)
{
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	const struct unit **ord = xcalloc((size_t)gpus, sizeof(*ord));
	int *node = xcalloc((size_t)gpus, sizeof(int));
	int *kk = xcalloc((size_t)gpus, sizeof(int));
	int maxs = x->o->max_stages > 0 ? x->o->max_stages : C->L;

	for (int k = 1; k <= x->o->max_tp && k <= DL_MAX_TP && !C->failed;
	    k *= 2) {
		size_t all = search_make_units(x, k, units), n = 0;

		for (size_t i = 0; i < all; i++)
			if (units[i].k == k && !search_runtime_gpu_refused(
			    x->c, C->so->runtime, units[i].node))
				ord[n++] = &units[i];
		qsort(ord, n, sizeof(*ord), search_cmp_unit);
		for (int S = 1; S <= (int)n && S <= C->L && S <= maxs &&
		    !C->failed; S++)
			for (int G = 1; G * S <= (int)n && !C->failed; G++) {
				struct rtshape r = { k, S, G, C->total / G,
				    ord, node, kk };

				if (C->total % G != 0 ||
				    !search_strategy_fits(C->so->strategy, G,
				    S) || !search_runtime_fits(x->m,
				    C->so->runtime, k, S, NULL, 0) ||
				    !search_runtime_saver_fits(C->so->runtime,
				    x->o, S, C->total / G, G, x->rc_fold, NULL,
				    0))
					continue;
				run_shape(C, &r);
			}
	}
	free(units);
	free(ord);
	free(node);
	free(kk);
}
