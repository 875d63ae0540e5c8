/*
 * emit_megatron.c - launcher megatron: the torchrun scripts, megatron.sh
 * and megatron.args, the Megatron-LM arguments of a plan made with plan
 * --runtime megatron.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Targets Megatron-LM at commit d98e8a64ddf3 (2026-08-22); file:line
 * references below are to that commit.  megatron.args holds the
 * arguments one a line; megatron.sh, which worker.sh execs on every rank,
 * runs pretrain_gpt.py (examples/bert/pretrain_bert.py for a bert model,
 * or --script) with the same words, each single-quoted as its own word,
 * followed by the words given after "--" (data, tokenizer, optimizer).
 *
 *	--tensor-model-parallel-size, --pipeline-model-parallel-size
 *	--sequence-parallel	with TP > 1: the memory model divides every
 *			activation of a stage by its TP degree, which is
 *			Megatron's tensor and sequence parallelism together
 *			(Korthikanti et al. 2022); without it LayerNorm and
 *			dropout activations stay whole on every TP rank
 *	--use-tp-pp-dp-mapping	with several groups of several stages:
 *			Megatron numbers ranks TP, then data parallel, then
 *			pipeline; this makes it TP, pipeline, data parallel,
 *			the plan's rank numbering (groups, then stages, then
 *			a stage's GPUs), so every rank runs the stage the
 *			plan put on its GPU
 *	--num-layers	the transformer layers (model_is_block()), not the
 *			model.csv rows: Megatron builds the embedding and
 *			the head besides them
 *	the split	runtime_megatron_split() over the blocks of each
 *			stage: none (even), --account-for-embedding-in-
 *			pipeline-split / --account-for-loss-in-pipeline-
 *			split, or --decoder-first-pipeline-num-layers /
 *			--decoder-last-pipeline-num-layers; a split Megatron
 *			cannot build exactly exits 3
 *	--num-virtual-stages-per-pipeline-rank  the plan's
 *			virtual_stages (the interleaved schedule), with
 *			--recompute-num-layers per chunk; not with the
 *			account-for flags (Megatron's chunks would differ)
 *	--micro-batch-size, --global-batch-size
 *	the sizes of the "dlplan model" line: --hidden-size,
 *			--num-attention-heads, --group-query-attention and
 *			--num-query-groups (fewer KV heads), --ffn-hidden-
 *			size, --seq-length, --max-position-embeddings,
 *			--vocab-size; llama: --position-embedding-type rope,
 *			--normalization RMSNorm, --swiglu,
 *			--disable-bias-linear; an untied head:
 *			--untie-embeddings-and-output-weights; a family
 *			without dropout: --hidden-dropout 0,
 *			--attention-dropout 0
 *	precision	the bytes the memory model priced: parameters,
 *			gradients and optimizer state 2/2/12 --bf16
 *			--grad-reduce-in-bf16 (bf16 weights and gradients,
 *			fp32 master weights and Adam moments); 2/4/12 --bf16
 *			(Megatron's default fp32 gradients); 4/4/8 fp32;
 *			anything else exits 3; --fp16 instead of --bf16
 *			where a GPU of the plan has no bf16 (V100, T4)
 *	the savers	saver_args(): --attention-backend unfused,
 *			--recompute-activations, --recompute-granularity
 *			full --recompute-method block --recompute-num-layers,
 *			--use-distributed-optimizer
 *	the overlap	dp: --overlap-grad-reduce, and with a sharded
 *			optimizer --overlap-param-gather (arguments.py:1024);
 *			dp+tp also --tp-comm-overlap
 *
 * With TP > 1 megatron.sh exports CUDA_DEVICE_MAX_CONNECTIONS=1:
 * validate_args() asserts it before Blackwell
 * (megatron/training/arguments.py:1477).
 */
#include <stdio.h>
#include <string.h>

#include "emit_int.h"
#include "sb.h"
#include "runtime.h"

/* One argument with a number. */
static void
arg_num(struct strbuf *sb, const char *flag, long v)
{
	sb_addf(sb, "%s\n%ld\n", flag, v);
}

/* The split arguments of f; -1 with e set when Megatron cannot build it. */
static int
split_args(const struct emit_fw *f, struct strbuf *sb, struct dl_err *e)
{
	struct mt_split ms;
	struct strbuf why = STRBUF_INIT;
	int rc;

	if (runtime_megatron_split(f->blocks, f->S, &ms)) {
		/*
		 * Interleaved (arguments.py:953-979, transformer_block.py
		 * get_num_layers_to_build(), transformer_layer.py
		 * get_transformer_layer_offset()): each stage's layers in v
		 * chunks, the chunks in turn round the stages, which is
		 * cost_vp_layout()'s layout; with the embedding or the loss
		 * counted as a layer Megatron's first or last chunk holds one
		 * block fewer, a layout dlplan does not price.
		 */
		if (f->v > 1 && (ms.embed || ms.loss))
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
			    "builds this split with the embedding or the loss "
			    "counted as a layer, and then its interleaved "
			    "chunks are not those the plan priced (each "
			    "stage's blocks in %d equal chunks)", f->v);
		if (ms.first)
			arg_num(sb, "--decoder-first-pipeline-num-layers",
			    ms.first);
		if (ms.last)
			arg_num(sb, "--decoder-last-pipeline-num-layers",
			    ms.last);
		if (ms.embed)
			sb_adds(sb, "--account-for-embedding-in-pipeline-"
			    "split\n");
		if (ms.loss)
			sb_adds(sb, "--account-for-loss-in-pipeline-split\n");
		if (f->v > 1)
			arg_num(sb, "--num-virtual-stages-per-pipeline-rank",
			    f->v);
		return DL_OK;
	}
	for (int j = 0; j < f->S; j++)
		sb_addf(&why, "%s%d", j ? " | " : "", f->blocks[j]);
	rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron cannot build "
	    "stages of %s transformer layers: it splits the layers evenly "
	    "(the embedding and the loss counted as one layer each, or "
	    "not), or gives the first and the last stage at least one layer "
	    "each and splits the stages between them evenly", why.buf);
	sb_free(&why);
	return rc;
}

/* The model's sizes (its "dlplan model" line). */
static void
size_args(const struct mg_arch *a, struct strbuf *sb)
{
	arg_num(sb, "--hidden-size", a->hidden);
	arg_num(sb, "--num-attention-heads", a->heads);
	if (a->kv_heads != a->heads) {
		sb_adds(sb, "--group-query-attention\n");
		arg_num(sb, "--num-query-groups", a->kv_heads);
	}
	arg_num(sb, "--ffn-hidden-size", a->ffn);
	arg_num(sb, "--seq-length", a->seq);
	arg_num(sb, "--max-position-embeddings", a->family == MG_LLAMA ?
	    a->seq : a->positions);
	arg_num(sb, "--vocab-size", a->vocab);
	if (a->family == MG_LLAMA)
		sb_adds(sb, "--position-embedding-type\nrope\n"
		    "--normalization\nRMSNorm\n--swiglu\n"
		    "--disable-bias-linear\n");
	if (!a->tied)
		sb_adds(sb, "--untie-embeddings-and-output-weights\n");
	if (!a->dropout)
		sb_adds(sb, "--hidden-dropout\n0\n--attention-dropout\n0\n");
}

/*
 * The precision the memory model priced: bf16, or fp16 with Megatron's
 * dynamic loss scaling (--fp16 alone: --loss-scale unset is dynamic,
 * arguments.py:3055) where a GPU of the plan has no bf16.
 */
static int
precision_args(const struct dl_opts *o, const struct mg_arch *a,
    int fp16, struct strbuf *sb, struct dl_err *e)
{
	if (o->param_bytes == 2 && a->dtype_bytes == 2 &&
	    o->optimizer_bytes == 12 && (o->grad_bytes == 2 ||
	    o->grad_bytes == 4)) {
		if (fp16) {
			sb_adds(sb, "--fp16\n");
			return DL_OK;
		}
		sb_adds(sb, "--bf16\n");
		if (o->grad_bytes == 2)
			sb_adds(sb, "--grad-reduce-in-bf16\n");
		return DL_OK;
	}
	if (o->param_bytes == 4 && a->dtype_bytes == 4 &&
	    o->grad_bytes == 4 && o->optimizer_bytes == 8)
		return DL_OK;
	return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron has no "
	    "precision with %g-byte parameters, %g-byte gradients, "
	    "%g bytes of optimizer state and %ld-byte activations (it "
	    "trains bf16 2/2/12 or 2/4/12 with 2-byte activations, or fp32 "
	    "4/4/8)", o->param_bytes, o->grad_bytes, o->optimizer_bytes,
	    a->dtype_bytes);
}

/*
 * The memory savers the plan was priced with (TransformerConfig at
 * transformer_config.py:532-551 and its checks at 1901-1932): unfused
 * attention --attention-backend unfused (the default, auto, lets
 * Transformer Engine pick a flash or fused kernel, which keep no
 * scores); selective recomputation --recompute-activations
 * (arguments.py:607); full recomputation of the first N blocks of every
 * stage --recompute-granularity full --recompute-method block
 * --recompute-num-layers N, N the most any stage recomputes (the plan
 * gives every stage that many, or all its blocks when it has fewer); a
 * sharded optimizer --use-distributed-optimizer.
 */
static void
saver_args(const struct dl_plan *p, struct strbuf *sb)
{
	int most = 0;

	if (p->opts.attention == ATTN_UNFUSED)
		sb_adds(sb, "--attention-backend\nunfused\n");
	if (p->opts.recompute == RC_SELECTIVE)
		sb_adds(sb, "--recompute-activations\n");
	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++)
			if (p->groups[g].stages[s].recompute > most)
				most = p->groups[g].stages[s].recompute;
	if (p->opts.recompute == RC_FULL && most > 0) {
		sb_adds(sb, "--recompute-granularity\nfull\n"
		    "--recompute-method\nblock\n");
		arg_num(sb, "--recompute-num-layers", most /
		    PLAN_VSTAGES(&p->groups[0]));
	}
	if (p->opts.optimizer == OPTIM_SHARDED)
		sb_adds(sb, "--use-distributed-optimizer\n");
	if (p->opts.overlap >= OVL_DP && p->opts.overlap != OVL_AUTO)
		sb_adds(sb, "--overlap-grad-reduce\n");
	if (p->opts.overlap >= OVL_DP && p->opts.overlap != OVL_AUTO &&
	    p->opts.optimizer == OPTIM_SHARDED)
		sb_adds(sb, "--overlap-param-gather\n");
	if (p->opts.overlap == OVL_DPTP)
		sb_adds(sb, "--tp-comm-overlap\n");
}

int
emit_megatron(struct emit_ctx *x, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	const struct mg_arch *a;
	struct strbuf args = STRBUF_INIT, prog = STRBUF_INIT;
	struct emit_fw f;
	int rc;

	memset(&f, 0, sizeof(f));
	if ((rc = emit_fw_shape(x, RUNTIME_MEGATRON, &f, e)) != DL_OK ||
	    (rc = emit_fw_model(x, RUNTIME_MEGATRON, &f, e)) != DL_OK)
		goto out;
	a = &x->o->model->arch;
	if (f.k > 1 && a->seq % f.k != 0) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron's "
		    "sequence parallelism splits the %ld tokens of a sequence "
		    "over TP %d", a->seq, f.k);
		goto out;
	}
	arg_num(&args, "--tensor-model-parallel-size", f.k);
	if (f.k > 1)
		sb_adds(&args, "--sequence-parallel\n");
	arg_num(&args, "--pipeline-model-parallel-size", f.S);
	if (f.S > 1 && f.G > 1)
		sb_adds(&args, "--use-tp-pp-dp-mapping\n");
	arg_num(&args, "--num-layers", model_blocks(x->o->model, 0,
	    f.layers - 1));
	if ((rc = split_args(&f, &args, e)) != DL_OK ||
	    (rc = precision_args(o, a, plan_precision(x->p, x->c) ==
	    PREC_FP16, &args, e)) != DL_OK)
		goto out;
	saver_args(x->p, &args);
	arg_num(&args, "--micro-batch-size", o->micro_batch);
	arg_num(&args, "--global-batch-size", o->global_batch);
	size_args(a, &args);
	if ((rc = emit_torchrun(x, e)) != DL_OK)
		goto out;
	sb_adds(emit_add_file(x, "megatron.args", 0), args.buf);
	sb_adds(&prog, "${DLPLAN_PYTHON:-python3} ");
	if (x->o->script)
		sb_addshq(&prog, x->o->script);
	else
		sb_addf(&prog, "\"${MEGATRON_LM:-.}/%s\"", a->family ==
		    MG_BERT ? "examples/bert/pretrain_bert.py" :
		    "pretrain_gpt.py");
	emit_start_script(x, "megatron.sh", "run Megatron-LM on one rank of "
	    "a dlplan plan",
	    "# worker.sh execs it on every rank: \"megatron.sh [ARGS...]\" "
	    "runs Megatron-LM's\n"
	    "# training script with the plan's arguments (megatron.args, "
	    "each its own word)\n"
	    "# and then ARGS, the words given after \"--\" to dlplan emit "
	    "(data, tokenizer,\n"
	    "# optimizer, checkpoints).  MEGATRON_LM names the Megatron-LM "
	    "checkout\n"
	    "# (default: the working directory), DLPLAN_PYTHON the "
	    "interpreter (default\n"
	    "# python3).  Written for Megatron-LM d98e8a64ddf3 "
	    "(2026-08-22).\n",
	    f.k > 1 ? "CUDA_DEVICE_MAX_CONNECTIONS=1\n"
	    "export CUDA_DEVICE_MAX_CONNECTIONS\n" : NULL, prog.buf,
	    args.buf);
out:
	emit_fw_free(&f);
	sb_free(&args);
	sb_free(&prog);
	return rc;
}
