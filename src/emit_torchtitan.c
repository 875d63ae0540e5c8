/*
 * emit_torchtitan.c - launcher torchtitan: the torchrun scripts and
 * torchtitan.toml for a plan made with plan --runtime torchtitan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * torchtitan.toml holds the [training] batch sizes (global_batch_size;
 * local_batch_size, one replica's share) and the [parallelism] section:
 * data_parallel_replicate_degree (the groups; plain replication, as the
 * cost model's ring all-reduce), data_parallel_shard_degree 1,
 * tensor_parallel_degree, pipeline_parallel_degree, the 1F1B schedule,
 * pipeline_parallel_microbatch_size and pipeline_parallel_split_points,
 * "layers.N" for the first layer N of every stage after the first.
 * Merge it into the model's own train configuration.
 */
#include "emit_int.h"

int
emit_torchtitan(struct emit_ctx *x, struct dl_err *e)
{
	const struct dl_opts *o = &x->p->opts;
	struct emit_fw f;
	struct strbuf *sb;
	int rc;

	if ((rc = emit_fw_shape(x, "torchtitan", &f, e)) != DL_OK ||
	    (rc = emit_torchrun(x, e)) != DL_OK)
		return rc;
	sb = emit_add_file(x, "torchtitan.toml", 0);
	emit_script_head(sb, "torchtitan.toml", "the parallelism of a dlplan "
	    "plan for torchtitan");
	sb_addf(sb, "\n[training]\nglobal_batch_size = %ld\n"
	    "local_batch_size = %ld\n", o->global_batch,
	    o->global_batch / f.G);
	sb_addf(sb, "\n[parallelism]\n"
	    "data_parallel_replicate_degree = %d\n"
	    "data_parallel_shard_degree = 1\n"
	    "tensor_parallel_degree = %d\n"
	    "pipeline_parallel_degree = %d\n"
	    "pipeline_parallel_schedule = \"1F1B\"\n"
	    "pipeline_parallel_microbatch_size = %ld\n"
	    "pipeline_parallel_split_points = [", f.G, f.k, f.S,
	    o->micro_batch);
	for (int j = 1; j < f.S; j++)
		sb_addf(sb, "%s\"layers.%d\"", j > 1 ? ", " : "",
		    f.stages[j].first);
	sb_adds(sb, "]\n");
	return DL_OK;
}
