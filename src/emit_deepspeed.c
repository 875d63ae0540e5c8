/*
 * emit_deepspeed.c - launcher deepspeed: the torchrun scripts, the
 * hostfile, ds_config.json and deepspeed-pipeline.json for a plan made
 * with plan --runtime deepspeed.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * ds_config.json is DeepSpeed's configuration: train_batch_size (the
 * global batch), train_micro_batch_size_per_gpu and
 * gradient_accumulation_steps (the micro-batches of one replica), so that
 * train_batch_size = micro-batch x accumulation x data-parallel degree.
 * deepspeed-pipeline.json holds what PipelineModule takes: num_stages,
 * partition_method "uniform" (the split plan --runtime deepspeed chose),
 * and the process topology in the plan's rank order: axes data, pipe,
 * model (ProcessTopology(axes, dims)), with the degrees of each.
 */
#include "emit_int.h"

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

int
emit_deepspeed(struct emit_ctx *x, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	struct emit_fw f;
	struct strbuf *sb;
	int rc;

	if ((rc = emit_fw_shape(x, "deepspeed", &f, e)) != DL_OK)
		return rc;
	if (!is_uniform(&f))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the stages of "
		    "the plan are not DeepSpeed's uniform partition of %d "
		    "layers into %d stages", f.layers, f.S);
	if ((rc = emit_torchrun(x, e)) != DL_OK ||
	    (rc = emit_hostfile(x, e)) != DL_OK)
		return rc;
	sb = emit_add_file(x, "ds_config.json", 0);
	sb_addf(sb, "{\n  \"train_batch_size\": %ld,\n"
	    "  \"train_micro_batch_size_per_gpu\": %ld,\n"
	    "  \"gradient_accumulation_steps\": %ld\n}\n", o->global_batch,
	    o->micro_batch, f.m);
	sb = emit_add_file(x, "deepspeed-pipeline.json", 0);
	sb_addf(sb, "{\n  \"num_stages\": %d,\n"
	    "  \"partition_method\": \"uniform\",\n"
	    "  \"num_layers\": %d,\n"
	    "  \"topology\": {\n"
	    "    \"axes\": [\"data\", \"pipe\", \"model\"],\n"
	    "    \"dims\": [%d, %d, %d]\n  }\n}\n", f.S, f.layers, f.G, f.S,
	    f.k);
	return DL_OK;
}
