/*
 * emit_deepspeed.c - launcher deepspeed: the torchrun scripts, the
 * hostfile, deepspeed.sh, ds_config.json and (with a pipeline)
 * deepspeed-pipeline.json for a plan made with plan --runtime deepspeed.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Targets DeepSpeed 0.19.6 at commit edaa7221267 (2026-08-22).
 *
 * ds_config.json is DeepSpeed's configuration: train_batch_size (the
 * global batch), train_micro_batch_size_per_gpu and
 * gradient_accumulation_steps (the micro-batches of one replica), so that
 * train_batch_size = micro-batch x accumulation x data-parallel degree
 * (DeepSpeedConfig._batch_assertion(), runtime/config.py:937).  With
 * AutoTP (TP > 1) train_batch_size is left out: a plain module's config
 * is read before the engine makes its TP groups, with the mpu the script
 * passes or none (deepspeed/__init__.py:214), and without one its world
 * size counts the TP ranks too (runtime/config.py:724), so a global
 * batch written here would fail the assertion; left out, DeepSpeed sets
 * it to micro-batch x accumulation x that world size (config.py:966-970)
 * and both paths load.  The batch trained is the plan's either way: the
 * TP ranks of a replica take the same micro-batch.  bf16, or fp16 with
 * dynamic loss scaling where a GPU of the plan has no bf16
 * (plan_precision()), and the gradient accumulation type, the model's
 * (runtime/engine.py:2011-2021), for the bytes the memory model
 * priced; ZeRO stage 0 (a whole optimizer per replica) for a replicated
 * optimizer state, stage 1 for a sharded one, with
 * use_multi_rank_bucket_allreduce false: each slice of a gradient bucket
 * is then reduced to the rank that owns it (runtime/zero/
 * stage_1_and_2.py:1435-1468) and the updated parameters gathered
 * after the step (:2396), the reduce-scatter and
 * all-gather the cost model prices, where the default all-reduces the
 * bucket and keeps a slice, half as much again; and
 * for TP > 1
 * tensor_parallel.autotp_size, AutoTP, which slices the model's linear
 * layers and combines TP with data parallelism only: a plan with TP > 1
 * and a pipeline exits 3 (runtime_fits()).
 *
 * deepspeed-pipeline.json is dlplan's own file, which DeepSpeed does not
 * read: what the training script passes to PipelineModule (num_stages,
 * partition_method "uniform", the split plan --runtime deepspeed chose,
 * num_layers, activation_checkpoint_interval 1 when the plan recomputes
 * its blocks, else 0: PipelineModule.forward() then runs each layer under
 * the checkpoint function, pipe/module.py:370-390; the script passes
 * checkpointable_layers naming its transformer block class, :119-121
 * and 648-667, so that the embedding and the head, which the plan does
 * not recompute, are kept) and the topology ProcessTopology(axes=["data", "pipe"],
 * dims), the data axis outermost: the plan's rank numbering (groups, then
 * stages), where PipelineModule's default PipeDataParallelTopology would
 * put the pipe axis outermost.
 *
 * deepspeed.sh is the launch line: "deepspeed --hostfile hostfile
 * --master_addr HOST --master_port PORT --no_python --no_local_rank
 * worker.sh deepspeed", worker.sh then running the training command with
 * "--deepspeed_config ds_config.json" appended.  DeepSpeed numbers ranks
 * host by host in hostfile order and gives local rank i GPU i of its
 * node (launcher/launch.py), so a plan whose ranks use other GPUs exits
 * 3.
 */
#include <string.h>

#include "emit_int.h"
#include "sb.h"
#include "runtime.h"

/* Whether f's stages are DeepSpeed's uniform partition of its layers. */
static int
is_uniform(const struct emit_fw *f)
{
	int per = f->layers / f->S, extra = f->layers % f->S;

	for (int j = 0, a = 0; j < f->S; j++) {
		if (f->stages[j].first != a)
			return 0;
		a += per + (j < extra);
		if (f->stages[j].last != a - 1)
			return 0;
	}
	return 1;
}

/* Refuse a plan whose ranks DeepSpeed would put on other GPUs. */
static int
local_gpus(const struct emit_ctx *x, struct dl_err *e)
{
	for (int r = 0; r < x->l.nranks; r++) {
		const struct emit_rank *rk = &x->l.ranks[r];

		if (rk->gpu != rk->local_rank)
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "deepspeed "
			    "gives local rank %d of node '%s' GPU %d, the plan "
			    "GPU %d (use --launcher torchrun)", rk->local_rank,
			    x->c->nodes[rk->node].id, rk->local_rank, rk->gpu);
	}
	return DL_OK;
}

/*
 * Refuse a launch directory a remote shell would split or expand: DeepSpeed's
 * PDSH runner puts the path of worker.sh into the command line it gives pdsh
 * unquoted (deepspeed/launcher/multinode_runner.py:98-123), and each host's
 * shell reads it, so a space breaks a multi-host launch and "$(...)" runs.
 */
static int
remote_safe(const struct emit_ctx *x, struct dl_err *e)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+,:@%=-";
	const char *p = x->worker_abs;

	if (p[strspn(p, ok)] == '\0')
		return DL_OK;
	return dl_seterr(e, DL_EDATA, NULL, 0, 0, "output directory '%s' "
	    "cannot be given to deepspeed: its launcher passes '%s' to a "
	    "remote shell unquoted, which would split or expand it (use a "
	    "path of letters, digits and / . _ + , : @ %% = -)",
	    x->o->outdir, p);
}

static int
ds_config(struct emit_ctx *x, const struct emit_fw *f, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	int fp16 = plan_precision(x->p, x->c) == PREC_FP16;
	const char *half = fp16 ? "fp16" : "bf16";
	struct strbuf *sb;

	/*
	 * Without ZeRO the engine needs the gradients accumulated in the
	 * model's type (runtime/engine.py:2011-2021: any other mix raises
	 * NotImplementedError).  With ZeRO stage 1, bf16 weights and fp32
	 * gradients take the BF16_Optimizer, which all-reduces the
	 * gradients before its sharded step (engine.py:1994-1996 and
	 * pipe/engine.py:296-307), not what is priced: the same rule.
	 */
	if (!((o->param_bytes == 2 || o->param_bytes == 4) &&
	    o->grad_bytes == o->param_bytes))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "deepspeed has no "
		    "precision with %g-byte parameters and %g-byte gradients "
		    "%s (it accumulates gradients in the model's type)",
		    o->param_bytes, o->grad_bytes, o->optimizer ==
		    OPTIM_SHARDED ? "that ZeRO stage 1 reduces as priced" :
		    "without ZeRO");
	sb = emit_add_file(x, "ds_config.json", 0);
	sb_adds(sb, "{\n");
	if (f->k == 1)
		sb_addf(sb, "  \"train_batch_size\": %ld,\n",
		    o->global_batch);
	sb_addf(sb, "  \"train_micro_batch_size_per_gpu\": %ld,\n"
	    "  \"gradient_accumulation_steps\": %ld,\n"
	    "  \"bf16\": {\"enabled\": %s},\n", o->micro_batch, f->m,
	    o->param_bytes == 2 && !fp16 ? "true" : "false");
	/* precision_config.py:132: loss_scale 0 is dynamic loss scaling. */
	if (o->param_bytes == 2 && fp16)
		sb_adds(sb, "  \"fp16\": {\"enabled\": true, \"loss_scale\": "
		    "0},\n");
	sb_addf(sb, "  \"data_types\": {\"grad_accum_dtype\": \"%s\"},\n",
	    o->grad_bytes == 2 ? half : "fp32");
	if (o->optimizer == OPTIM_SHARDED)
		sb_adds(sb, "  \"zero_optimization\": {\"stage\": 1, "
		    "\"use_multi_rank_bucket_allreduce\": false}");
	else
		sb_adds(sb, "  \"zero_optimization\": {\"stage\": 0}");
	if (f->k > 1)
		sb_addf(sb, ",\n  \"tensor_parallel\": {\"autotp_size\": %d}",
		    f->k);
	sb_adds(sb, "\n}\n");
	return DL_OK;
}

static void
launch_line(struct emit_ctx *x)
{
	struct strbuf *sb = emit_add_file(x, "deepspeed.sh", 1);
	struct strbuf path = STRBUF_INIT;

	sb_adds(sb, "#!/bin/sh\n");
	emit_script_head(sb, "deepspeed.sh", "start a dlplan plan with "
	    "DeepSpeed's launcher");
	sb_adds(sb, "#\n"
	    "# Run it on the first host: \"deepspeed.sh [OPTIONS...]\" starts "
	    "every rank with\n"
	    "# DeepSpeed's launcher over the hostfile (OPTIONS are the "
	    "launcher's); each rank\n"
	    "# runs worker.sh, which execs the training command with "
	    "--deepspeed_config.\n"
	    "# DLPLAN_DEEPSPEED overrides the launcher (default "
	    "\"deepspeed\").  Written for\n"
	    "# DeepSpeed 0.19.6 (edaa7221267, 2026-08-22).  Its launcher "
	    "passes the current\n"
	    "# directory to each host's shell unquoted, so it must be a "
	    "plain path.\n"
	    "set -f\n"
	    "case $PWD in\n"
	    "*[!A-Za-z0-9/._+,:@%=-]*)\n"
	    "\techo \"deepspeed.sh: DeepSpeed's launcher passes the "
	    "current directory '$PWD' to a remote shell unquoted; run it "
	    "from a directory without spaces or shell characters\" >&2\n"
	    "\texit 2 ;;\n"
	    "esac\n"
	    "exec ${DLPLAN_DEEPSPEED:-deepspeed} --hostfile ");
	sb_addf(&path, "%s/hostfile", x->dir_abs);
	sb_addshq(sb, path.buf);
	sb_adds(sb, " \\\n\t--master_addr ");
	sb_addshq(sb, emit_node_host(x, 0));
	sb_addf(sb, " --master_port %ld \\\n\t--no_python --no_local_rank "
	    "\"$@\" ", x->o->master_port);
	sb_addshq(sb, x->worker_abs);
	sb_adds(sb, " deepspeed\n");
	sb_free(&path);
}

int
emit_deepspeed(struct emit_ctx *x, struct dl_err *e)
{
	struct emit_fw f;
	struct strbuf *sb;
	char why[256];
	int rc;

	memset(&f, 0, sizeof(f));
	if ((rc = emit_fw_shape(x, RUNTIME_DEEPSPEED, &f, e)) != DL_OK)
		goto out;
	if (!is_uniform(&f)) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the stages of "
		    "the plan are not DeepSpeed's uniform partition of %d "
		    "layers into %d stages", f.layers, f.S);
		goto out;
	}
	if (f.k > 1 && f.S > 1 && !runtime_fits(x->o->model,
	    RUNTIME_DEEPSPEED, f.k, f.S, why, sizeof(why))) {
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "TP %d, %d stages: "
		    "%s", f.k, f.S, why);
		goto out;
	}
	if ((rc = emit_fw_savers(x, RUNTIME_DEEPSPEED, &f, e)) != DL_OK ||
	    (rc = remote_safe(x, e)) != DL_OK ||
	    (rc = local_gpus(x, e)) != DL_OK ||
	    (rc = emit_torchrun(x, e)) != DL_OK ||
	    (rc = emit_hostfile(x, e)) != DL_OK ||
	    (rc = ds_config(x, &f, e)) != DL_OK)
		goto out;
	launch_line(x);
	if (f.S > 1) {
		sb = emit_add_file(x, "deepspeed-pipeline.json", 0);
		sb_addf(sb, "{\n  \"num_stages\": %d,\n"
		    "  \"partition_method\": \"uniform\",\n"
		    "  \"num_layers\": %d,\n"
		    "  \"activation_checkpoint_interval\": %d,\n"
		    "  \"topology\": {\n"
		    "    \"axes\": [\"data\", \"pipe\"],\n"
		    "    \"dims\": [%d, %d]\n  }\n}\n", f.S, f.layers, f.rc,
		    f.G, f.S);
	}
out:
	emit_fw_free(&f);
	return rc;
}
