/*
 * emit_torchtitan.c - launcher torchtitan: the torchrun scripts,
 * torchtitan.sh and dlplan_torchtitan.py for a plan made with plan
 * --runtime torchtitan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Targets torchtitan at commit b5bcd76c66d0 (2026-08-21), which reads no
 * TOML: a run is a Python function returning a Trainer.Config, named
 * with --module and --config (torchtitan/config/README.md; the
 * --section.option flags are frozen and to be removed).  So
 * dlplan_torchtitan.py is such a module: its dlplan_plan() takes a base
 * configuration (DLPLAN_TORCHTITAN_BASE, "module:function", default
 * torchtitan.models.llama3.config_registry:llama3_8b), refuses it when
 * its model is not the planned one (a llama3 ModelSpec, models/llama3/
 * __init__.py:383, with the plan's transformer blocks, dim, vocab_size,
 * heads and the SwiGLU hidden size of its feed_forward's w1,
 * models/common/config_utils.py:298-300), and sets
 *
 *	parallelism	data_parallel_replicate_degree (the groups) and
 *			data_parallel_shard_degree 1 for a replicated
 *			optimizer state; for a sharded one
 *			data_parallel_shard_degree (the groups),
 *			data_parallel_replicate_degree 1, FSDP, and
 *			fsdp_reshard_after_forward "never", so that the
 *			parameters are gathered once per step, as priced,
 *			not again for backward (torchtitan/distributed/
 *			fsdp.py:112-137: the default reshards without a
 *			pipeline); tensor_parallel_degree,
 *			pipeline_parallel_degree, schedule 1F1B,
 *			num_pp_microbatches and module_fqns_per_model_part:
 *			torchtitan's module names (tok_embeddings, layers.N
 *			numbered by transformer block, norm and lm_head for
 *			the head) of each stage
 *	training	num_tokens_per_microbatch_per_dp_rank (micro-batch x
 *			sequence: one pipeline micro-batch),
 *			num_tokens_per_train_step (global batch x sequence),
 *			max_context_length, mixed_precision_param bfloat16
 *			for 2-byte activations (float32 master weights,
 *			gradients and Adam state, and with a pipeline the
 *			bf16 compute copy and the fp32 accumulated gradient
 *			FSDP keeps: the bytes the memory model prices,
 *			cost_savers.c)
 *	activation_checkpoint FullAC.Config() when the plan recomputes
 *			its blocks (every transformer block, torchtitan/
 *			distributed/activation_checkpoint.py:166-182),
 *			else None; the default is SelectiveAC
 *			(trainer.py:108-110), which dlplan does not price
 *
 * Its llama3 attention is FlexAttention (models/llama3/__init__.py:371,
 * models/common/config_utils.py:71-96), fused: plans use --attention
 * fused (runtime_saver_refused()).
 *
 * and with a pipeline training.disable_cuda_graphs: CUDA graphs are on
 * by default (torchtitan/config/configs.py:75), and the trainer refuses
 * them with pipeline parallelism (torchtitan/trainer.py:168-176, from
 * Trainer.Config.__post_init__ at trainer.py:130, which runs again on
 * the configuration the command line builds, and at trainer.py:352).
 *
 * torchtitan.sh, which worker.sh execs on every rank, runs "python3 -m
 * torchtitan.train --module dlplan_torchtitan --config dlplan_plan" with
 * the words given after "--".  torchtitan's device mesh is pp, then
 * dp_replicate, then tp (torchtitan/distributed/parallel_dims.py), so
 * torchtitan.sh renumbers RANK to stage x G x k + group x k + TP rank:
 * every rank then runs the stage the plan put on its GPU (plan rank 0
 * stays rank 0, on the rendezvous host).
 */
#include <string.h>

#include "emit_int.h"
#include "sb.h"

/* The module names of rows first .. last, torchtitan's numbering. */
static void
stage_fqns(const struct dl_model *m, int first, int last, struct strbuf *sb)
{
	int n = 0;

	sb_adds(sb, "[");
	for (int i = first; i <= last; i++) {
		const char *sep = n++ ? ",\n         " : "";

		if (model_is_block(m, (size_t)i))
			sb_addf(sb, "%s\"layers.%d\"", sep, model_blocks(m, 0,
			    i) - 1);
		else if (i == 0)
			sb_addf(sb, "%s\"tok_embeddings\"", sep);
		else
			sb_addf(sb, "%s\"norm\",\n         \"lm_head\"", sep);
	}
	sb_adds(sb, "]");
}

/* The Python module. */
static void
config_module(struct emit_ctx *x, const struct emit_fw *f)
{
	const struct dl_opts *o = &x->p->opts;
	const struct dl_model *m = x->o->model;
	const struct mg_arch *a = &m->arch;
	struct strbuf *sb = emit_add_file(x, "dlplan_torchtitan.py", 0);
	int N = model_blocks(m, 0, f->layers - 1);

	emit_script_head(sb, "dlplan_torchtitan.py", "a torchtitan "
	    "configuration for a dlplan plan");
	sb_adds(sb, "#\n"
	    "# torchtitan.sh runs: python3 -m torchtitan.train --module "
	    "dlplan_torchtitan\n"
	    "# --config dlplan_plan.  Written for torchtitan b5bcd76c66d0 "
	    "(2026-08-21).\n"
	    "import importlib\nimport os\n\n"
	    "BASE = \"torchtitan.models.llama3.config_registry:llama3_8b\"\n");
	sb_addf(sb, "MODEL = {\"name\": \"llama3\", \"blocks\": %d, \"dim\": "
	    "%ld, \"vocab_size\": %ld,\n         \"n_heads\": %ld, "
	    "\"n_kv_heads\": %ld, \"hidden_dim\": %ld}\n", N, a->hidden,
	    a->vocab, a->heads, a->kv_heads, a->ffn);
	sb_adds(sb, "\n\n"
	    "def _base():\n"
	    "    name = os.environ.get(\"DLPLAN_TORCHTITAN_BASE\", BASE)\n"
	    "    module, _, function = name.partition(\":\")\n"
	    "    return getattr(importlib.import_module(module), "
	    "function)()\n\n\n"
	    "def _check(spec):\n"
	    "    \"\"\"Refuse a base whose model is not the planned one.\"\"\"\n"
	    "    model = spec.model\n"
	    "    attn = getattr(model, \"first_attention\", None)\n"
	    "    ffn = getattr(model.layers[0], \"feed_forward\", None) "
	    "if model.layers \\\n"
	    "        else None\n"
	    "    have = {\"name\": getattr(spec, \"name\", None),\n"
	    "            \"blocks\": len(model.layers),\n"
	    "            \"dim\": getattr(model, \"dim\", MODEL[\"dim\"]),\n"
	    "            \"vocab_size\": getattr(model, \"vocab_size\",\n"
	    "                                  MODEL[\"vocab_size\"]),\n"
	    "            \"n_heads\": getattr(attn, \"n_heads\", "
	    "MODEL[\"n_heads\"]),\n"
	    "            \"n_kv_heads\": getattr(attn, \"n_kv_heads\", None) "
	    "or\n"
	    "            getattr(attn, \"n_heads\", MODEL[\"n_kv_heads\"]),\n"
	    "            \"hidden_dim\": getattr(getattr(ffn, \"w1\", None), "
	    "\"out_features\",\n"
	    "                                  None)}\n"
	    "    for k, v in MODEL.items():\n"
	    "        if have[k] != v:\n"
	    "            raise ValueError(\"dlplan: the base configuration "
	    "has %s %s, \"\n"
	    "                             \"the plan was made for %s \"\n"
	    "                             \"(set DLPLAN_TORCHTITAN_BASE)\" "
	    "% (k, have[k], v))\n\n\n"
	    "def dlplan_plan():\n"
	    "    config = _base()\n"
	    "    _check(config.model_spec)\n"
	    "    p = config.parallelism\n");
	if (o->optimizer == OPTIM_SHARDED)
		sb_addf(sb, "    p.data_parallel_replicate_degree = 1\n"
		    "    p.data_parallel_shard_degree = %d\n"
		    "    p.fsdp_reshard_after_forward = \"never\"\n", f->G);
	else
		sb_addf(sb, "    p.data_parallel_replicate_degree = %d\n"
		    "    p.data_parallel_shard_degree = 1\n", f->G);
	sb_addf(sb, "    p.context_parallel_degree = 1\n"
	    "    p.expert_parallel_degree = 1\n"
	    "    p.tensor_parallel_degree = %d\n"
	    "    p.pipeline_parallel_degree = %d\n"
	    "    p.pipeline_parallel_schedule = \"1F1B\"\n"
	    "    p.pipeline_parallel_layers_per_stage = None\n"
	    "    p.num_pp_microbatches = %ld\n", f->k, f->S,
	    f->S > 1 ? f->m : 1);
	if (f->S > 1) {
		sb_adds(sb, "    p.module_fqns_per_model_part = [\n");
		for (int j = 0; j < f->S; j++) {
			sb_adds(sb, "        ");
			stage_fqns(m, f->stages[j].first, f->stages[j].last,
			    sb);
			sb_adds(sb, j + 1 < f->S ? ",\n" : "]\n");
		}
	} else
		sb_adds(sb, "    p.module_fqns_per_model_part = None\n");
	sb_addf(sb, "    t = config.training\n"
	    "    t.num_tokens_per_microbatch_per_dp_rank = %ld\n"
	    "    t.num_tokens_per_train_step = %ld\n"
	    "    t.max_context_length = %ld\n"
	    "    t.dtype = \"float32\"\n"
	    "    t.mixed_precision_param = \"%s\"\n", o->micro_batch *
	    a->seq, o->global_batch * a->seq, a->seq, a->dtype_bytes == 2 ?
	    "bfloat16" : "float32");
	if (f->S > 1)
		sb_adds(sb, "    t.disable_cuda_graphs = True\n");
	if (f->rc)
		sb_adds(sb, "    from torchtitan.distributed.activation_checkpoint "
		    "import FullAC\n"
		    "    config.activation_checkpoint = FullAC.Config()\n");
	else
		sb_adds(sb, "    config.activation_checkpoint = None\n");
	sb_adds(sb, "    return config\n");
}

int
emit_torchtitan(struct emit_ctx *x, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	const struct mg_arch *a;
	struct strbuf env = STRBUF_INIT, prog = STRBUF_INIT;
	struct emit_fw f;
	int rc;

	memset(&f, 0, sizeof(f));
	if ((rc = emit_fw_shape(x, RUNTIME_TORCHTITAN, &f, e)) != DL_OK ||
	    (rc = emit_fw_model(x, RUNTIME_TORCHTITAN, &f, e)) != DL_OK ||
	    (rc = emit_fw_savers(x, RUNTIME_TORCHTITAN, &f, e)) != DL_OK)
		goto out;
	a = &x->o->model->arch;
	/* trainer.py:296-307: sequence parallelism splits the tokens of
	 * a pipeline micro-batch over the TP ranks. */
	if ((o->micro_batch * a->seq) % f.k != 0) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "torchtitan splits "
		    "the %ld tokens of a micro-batch over TP %d", o->micro_batch *
		    a->seq, f.k);
		goto out;
	}
	if (a->dtype_bytes != 2 && a->dtype_bytes != 4) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "torchtitan has no "
		    "%ld-byte activations (bfloat16 or float32)",
		    a->dtype_bytes);
		goto out;
	}
	/* configs.py:75-100: bfloat16 or float32, no fp16 loss scaling. */
	if (a->dtype_bytes == 2 && plan_precision(x->p, x->c) == PREC_FP16) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "torchtitan trains "
		    "in bfloat16 or float32, with no fp16 loss scaling, and a "
		    "GPU of the plan has no bf16 (make the plan with 'dlplan "
		    "plan --runtime torchtitan', which leaves such GPUs out)");
		goto out;
	}
	if ((rc = emit_torchrun(x, e)) != DL_OK)
		goto out;
	config_module(x, &f);
	sb_addf(&env, "RANK=$((DLPLAN_STAGE * %d + DLPLAN_GROUP * %d + "
	    "DLPLAN_TP_RANK))\n", f.G * f.k, f.k);
	sb_adds(&env, "PYTHONPATH=");
	sb_addshq(&env, x->dir_abs);
	sb_adds(&env, "${PYTHONPATH:+:$PYTHONPATH}\n"
	    "export RANK PYTHONPATH\n");
	sb_adds(&prog, "${DLPLAN_PYTHON:-python3} ");
	if (x->o->script)
		sb_addshq(&prog, x->o->script);
	else
		sb_adds(&prog, "-m torchtitan.train");
	emit_start_script(x, "torchtitan.sh", "run torchtitan on one rank of "
	    "a dlplan plan",
	    "# worker.sh execs it on every rank: \"torchtitan.sh [ARGS...]\" "
	    "runs torchtitan's\n"
	    "# trainer with the configuration dlplan_plan() of "
	    "dlplan_torchtitan.py and then\n"
	    "# ARGS, the words given after \"--\" to dlplan emit.  RANK "
	    "becomes torchtitan's\n"
	    "# rank of the plan's stage, group and TP rank (its mesh is pp, "
	    "dp_replicate,\n"
	    "# tp).  DLPLAN_TORCHTITAN_BASE (module:function) names the "
	    "configuration that\n"
	    "# builds the model; DLPLAN_PYTHON the interpreter (default "
	    "python3).  Written\n"
	    "# for torchtitan b5bcd76c66d0 (2026-08-21).\n", env.buf,
	    prog.buf, "--module\ndlplan_torchtitan\n--config\ndlplan_plan\n");
out:
	emit_fw_free(&f);
	sb_free(&env);
	sb_free(&prog);
	return rc;
}
