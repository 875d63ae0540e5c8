/*
 * runtime.c - what each training framework of plan --runtime accepts
 * (runtime.h): one row of rules per runtime, each rule read from the
 * framework's source at the version dlplan(1) names.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A rule a row leaves NULL accepts everything, so --runtime dlplan's row
 * is empty.  A new runtime is its row here, its name in
 * plan_runtime_names[] (plan.c) and its launcher (src/README, Adding a
 * launcher).
 */
#include <stdio.h>
#include <string.h>

#include "runtime.h"

struct runtime_rules {
	int (*model)(const struct dl_model *m, struct dl_err *e);
	int (*gpu_refused)(const struct dl_cluster *c, int node);
	const char *(*saver_refused)(const struct dl_opts *o);
	int (*saver_fits)(const struct dl_opts *o, int S, long m, int G,
	    int rc, char *why, size_t n);
	int (*fits)(const struct dl_model *m, int k, int S, char *why,
	    size_t n);
};

/* Megatron-LM and torchtitan build the model from its sizes. */
static int
from_sizes(const struct dl_model *m, const char *rt, struct dl_err *e)
{
	if (!model_is_transformer(m))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "model '%s' has "
		    "no 'dlplan model' line of a transformer (gpt, llama, "
		    "bert): %s builds the model from its sizes (write "
		    "model.csv with 'dlplan model')", m->path ? m->path : "",
		    rt);
	return DL_OK;
}

static int
megatron_model(const struct dl_model *m, struct dl_err *e)
{
	return from_sizes(m, "megatron", e);
}

/*
 * Megatron-LM: num_attention_heads % TP == 0 and num_query_groups a
 * multiple or a divisor of TP (TransformerConfig.__post_init__).
 */
static int
megatron_fits(const struct dl_model *m, int k, int S, char *why, size_t n)
{
	const struct mg_arch *a;

	(void)S;
	if (m == NULL || !model_is_transformer(m))
		return 1;
	a = &m->arch;
	if (a->heads % k != 0 || (a->kv_heads % k != 0 &&
	    k % a->kv_heads != 0)) {
		if (why)
			snprintf(why, n, "megatron needs num_attention_heads "
			    "(%ld) divisible by TP %d and num_query_groups "
			    "(%ld) a multiple or a divisor of it", a->heads, k,
			    a->kv_heads);
		return 0;
	}
	return 1;
}

/*
 * DeepSpeed's memory savers: recomputation through PipelineModule's
 * activation_checkpoint_interval: 1 checkpoints every layer of the
 * stage, 0 none (deepspeed/runtime/pipe/module.py:117, 373-393), so
 * every block of every stage or none, and only with a
 * pipeline (a plain module recomputes what its own code checkpoints); no
 * selective recomputation; the optimizer state sharded by ZeRO stage 1
 * (ZeRO-2 shards gradients too, and the pipeline engine refuses it:
 * pipe/engine.py:76-77); the attention kernel is the training script's,
 * as for every layer it builds.
 */
static const char *
deepspeed_saver_refused(const struct dl_opts *o)
{
	if (o->recompute == RC_SELECTIVE)
		return "deepspeed has no selective recomputation: a "
		    "PipelineModule's activation_checkpoint_interval "
		    "recomputes whole layers (use '--recompute full' or "
		    "'auto')";
	return NULL;
}

static int
deepspeed_saver_fits(const struct dl_opts *o, int S, long m, int G, int rc,
    char *why, size_t n)
{
	(void)o, (void)m, (void)G;
	if (rc && S == 1) {
		if (why)
			snprintf(why, n, "deepspeed recomputes only through a "
			    "PipelineModule (activation_checkpoint_interval), "
			    "and the plan has no pipeline");
		return 0;
	}
	return 1;
}

/* DeepSpeed: TP > 1 only with one stage (see emit_deepspeed.c). */
static int
deepspeed_fits(const struct dl_model *m, int k, int S, char *why, size_t n)
{
	(void)m;
	if (k > 1 && S > 1) {
		if (why)
			snprintf(why, n, "deepspeed runs TP > 1 only without a "
			    "pipeline: a PipelineModule does not slice "
			    "tensors, and AutoTP (tensor_parallel.autotp_size) "
			    "combines TP with data parallelism and ZeRO only, "
			    "its process groups a data x TP mesh with no "
			    "pipeline axis");
		return 0;
	}
	return 1;
}

/*
 * torchtitan b5bcd76c66d0 builds only its own families
 * (torchtitan/models/__init__.py:7-18); of dlplan's, only llama is one of
 * them (llama3: RMSNorm, SwiGLU with the hidden size given, rotary
 * positions, grouped KV heads, torchtitan/models/llama3/__init__.py:
 * 69-112).  A gpt or bert plan would run a Llama of its sizes, a
 * different model from the one priced.
 */
static int
torchtitan_model(const struct dl_model *m, struct dl_err *e)
{
	int rc;

	if ((rc = from_sizes(m, "torchtitan", e)) != DL_OK)
		return rc;
	if (m->arch.family != MG_LLAMA)
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
static int
torchtitan_gpu_refused(const struct dl_cluster *c, int node)
{
	return cluster_gpu_fp16(c->nodes[node].gpu_model);
}

/*
 * torchtitan's memory savers: activation_checkpoint FullAC, which
 * recomputes every transformer block (torchtitan/distributed/
 * activation_checkpoint.py:166-182 at b5bcd76c66d0), or None; its
 * SelectiveAC (:185-198) saves the matrix products and recomputes other
 * operators, not the core attention that dlplan's selective prices; its
 * llama3 attention is FlexAttention or varlen flash attention
 * (models/common/config_utils.py:71-96), both fused; the optimizer state
 * sharded by FSDP (data_parallel_shard_degree), which reduce-scatters the
 * gradients once after a pipeline's last micro-batch, but after every
 * accumulated micro-batch without one (trainer.py:856, no gradient sync
 * switched off).
 */
static const char *
torchtitan_saver_refused(const struct dl_opts *o)
{
	if (o->recompute == RC_SELECTIVE)
		return "torchtitan's selective activation checkpointing "
		    "saves the matrix products and recomputes the other "
		    "operators, not the core attention that '--recompute "
		    "selective' prices (use '--recompute full' or 'auto')";
	if (o->attention == ATTN_UNFUSED)
		return "torchtitan's llama3 has no unfused attention (its "
		    "backends, flex and varlen, keep no scores)";
	return NULL;
}

static int
torchtitan_saver_fits(const struct dl_opts *o, int S, long m, int G, int rc,
    char *why, size_t n)
{
	(void)rc;
	if (o->optimizer == OPTIM_SHARDED && G > 1 && S == 1 && m > 1) {
		if (why)
			snprintf(why, n, "torchtitan's FSDP reduce-scatters the "
			    "gradients of each of the %ld accumulated "
			    "micro-batches without a pipeline, which the plan "
			    "does not price", m);
		return 0;
	}
	return 1;
}

/*
 * torchtitan: TP divides n_heads and n_kv_heads, and a model whose head
 * shares the embedding's weights has no pipeline (Decoder's
 * update_from_config).
 */
static int
torchtitan_fits(const struct dl_model *m, int k, int S, char *why, size_t n)
{
	const struct mg_arch *a;

	if (m == NULL || !model_is_transformer(m))
		return 1;
	a = &m->arch;
	if (a->heads % k != 0 || a->kv_heads % k != 0) {
		if (why)
			snprintf(why, n, "torchtitan needs TP %d to divide "
			    "n_heads (%ld) and n_kv_heads (%ld)", k, a->heads,
			    a->kv_heads);
		return 0;
	}
	if (a->tied && S > 1) {
		if (why)
			snprintf(why, n, "torchtitan does not tie the head's "
			    "weights to the embedding's with a pipeline, and "
			    "the model ties them (--tied yes)");
		return 0;
	}
	return 1;
}

static const struct runtime_rules runtime_table[DL_NRUNTIMES] = {
	[RUNTIME_DLPLAN] = { NULL, NULL, NULL, NULL, NULL },
	[RUNTIME_MEGATRON] = {
		megatron_model, NULL, NULL, NULL, megatron_fits
	},
	[RUNTIME_DEEPSPEED] = {
		NULL, NULL, deepspeed_saver_refused, deepspeed_saver_fits,
		deepspeed_fits
	},
	[RUNTIME_TORCHTITAN] = {
		torchtitan_model, torchtitan_gpu_refused,
		torchtitan_saver_refused, torchtitan_saver_fits,
		torchtitan_fits
	},
};

static const struct runtime_rules *
rules(int runtime)
{
	static const struct runtime_rules none;

	return runtime >= 0 && runtime < DL_NRUNTIMES ?
	    &runtime_table[runtime] : &none;
}

int
runtime_model(const struct dl_model *m, int runtime, struct dl_err *e)
{
	const struct runtime_rules *r = rules(runtime);

	return r->model ? r->model(m, e) : DL_OK;
}

int
runtime_gpu_refused(const struct dl_cluster *c, int runtime, int node)
{
	const struct runtime_rules *r = rules(runtime);

	return r->gpu_refused ? r->gpu_refused(c, node) : 0;
}

int
runtime_fits(const struct dl_model *m, int runtime, int k, int S, char *why,
    size_t n)
{
	const struct runtime_rules *r = rules(runtime);

	return r->fits ? r->fits(m, k, S, why, n) : 1;
}

const char *
runtime_saver_refused(int runtime, const struct dl_opts *o)
{
	const struct runtime_rules *r = rules(runtime);

	return r->saver_refused ? r->saver_refused(o) : NULL;
}

int
runtime_saver_fits(int runtime, const struct dl_opts *o, int S, long m,
    int G, int rc, char *why, size_t n)
{
	const struct runtime_rules *r = rules(runtime);

	return r->saver_fits ? r->saver_fits(o, S, m, G, rc, why, n) : 1;
}

int
runtime_megatron_split(const int *b, int S, struct mt_split *ms)
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
