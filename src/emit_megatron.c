/*
 * emit_megatron.c - launcher megatron: the torchrun scripts and
 * megatron.args, the Megatron-LM arguments of a plan made with
 * plan --runtime megatron.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * megatron.args holds one argument per line (every value a number dlplan
 * formatted, so that "$(cat megatron.args)" splits it right):
 * --tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --num-layers, --micro-batch-size, --global-batch-size, and when the
 * stages are not even --decoder-first-pipeline-num-layers and
 * --decoder-last-pipeline-num-layers.  Megatron numbers ranks TP first,
 * then data parallel, then pipeline; --use-tp-pp-dp-mapping makes it TP,
 * pipeline, data parallel, which is the plan's rank numbering (groups,
 * then stages, then a stage's GPUs), so every rank runs the stage the
 * plan put on its GPU.
 */
#include "emit_int.h"

/*
 * The layer-split arguments of f: none for an even split, the first and
 * the last stage's layers when the stages between them are even; -1 with
 * e set for a split Megatron cannot express.
 */
static int
split_args(const struct emit_fw *f, struct strbuf *sb, struct dl_err *e)
{
	int first = f->stages[0].last - f->stages[0].first + 1;
	int last = f->stages[f->S - 1].last - f->stages[f->S - 1].first + 1;
	int mid = f->S > 2 ? f->stages[1].last - f->stages[1].first + 1 : 0;
	int even = f->S == 1 || (first == last && (f->S == 2 || mid == first));

	for (int j = 1; j + 1 < f->S; j++)
		if (f->stages[j].last - f->stages[j].first + 1 != mid)
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "stage %d "
			    "holds %d layers and stage 1 %d: Megatron splits "
			    "the stages between the first and the last "
			    "evenly", j, f->stages[j].last -
			    f->stages[j].first + 1, mid);
	if (!even)
		sb_addf(sb, "--decoder-first-pipeline-num-layers\n%d\n"
		    "--decoder-last-pipeline-num-layers\n%d\n", first, last);
	return DL_OK;
}

int
emit_megatron(struct emit_ctx *x, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	struct emit_fw f;
	struct strbuf *sb;
	int rc;

	if ((rc = emit_fw_shape(x, "megatron", &f, e)) != DL_OK ||
	    (rc = emit_torchrun(x, e)) != DL_OK)
		return rc;
	sb = emit_add_file(x, "megatron.args", 0);
	sb_addf(sb, "--tensor-model-parallel-size\n%d\n"
	    "--pipeline-model-parallel-size\n%d\n"
	    "--num-layers\n%d\n"
	    "--micro-batch-size\n%ld\n"
	    "--global-batch-size\n%ld\n", f.k, f.S, f.layers, o->micro_batch,
	    o->global_batch);
	if (f.S > 1 && f.G > 1)
		sb_adds(sb, "--use-tp-pp-dp-mapping\n");
	return split_args(&f, sb, e);
}
