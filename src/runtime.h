/*
 * runtime.h - what each training framework of plan --runtime accepts:
 * the rules both the search (search_runtime.c) and the launchers
 * (emit_megatron.c, emit_deepspeed.c, emit_torchtitan.c through
 * emit_framework.c) obey, read from the frameworks' sources at the
 * versions dlplan(1) names (file:line in runtime.c).  One row per runtime
 * in runtime.c's table; --runtime dlplan accepts everything.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_RUNTIME_H
#define DL_RUNTIME_H

#include <stddef.h>

#include "cluster.h"
#include "model.h"
#include "plan.h"
#include "util.h"

/*
 * runtime_model(): DL_EINFEAS when runtime cannot build model m:
 * Megatron-LM and torchtitan build the model from its sizes, so m must
 * be a transformer with a "dlplan model" line (model_is_transformer()).
 *
 * runtime_fits(): whether runtime runs TP degree k with S stages on m
 * (NULL: the model is not known); when not, and why is not NULL, the
 * reason (a phrase) in why[n].  Megatron-LM: num_attention_heads % TP ==
 * 0 and num_query_groups a multiple or a divisor of TP
 * (TransformerConfig.__post_init__); torchtitan: TP divides n_heads and
 * n_kv_heads, and a model whose head shares the embedding's weights has
 * no pipeline (Decoder's update_from_config); DeepSpeed: TP > 1 only with
 * one stage (AutoTP has no pipeline, a PipelineModule no TP; see
 * emit_deepspeed.c).
 *
 * runtime_gpu_refused(): whether runtime cannot use node's GPUs:
 * torchtitan has no fp16, so no GPU without bf16 (cluster_gpu_fp16()).
 */
int runtime_model(const struct dl_model *m, int runtime, struct dl_err *e);
int runtime_gpu_refused(const struct dl_cluster *c, int runtime, int node);
int runtime_fits(const struct dl_model *m, int runtime, int k, int S,
    char *why, size_t n);
/*
 * The memory savers of runtime (runtime.c names each framework's with
 * file:line).  runtime_saver_refused(): why runtime has no saver that o
 * asks for (a phrase), or NULL.  runtime_saver_fits(): whether runtime
 * runs o's savers on S stages with m micro-batches per replica and G
 * replicas, rc whether blocks are recomputed; when not, and why is not
 * NULL, the reason in why[n].
 */
const char *runtime_saver_refused(int runtime, const struct dl_opts *o);
int runtime_saver_fits(int runtime, const struct dl_opts *o, int S, long m,
    int G, int rc, char *why, size_t n);

/*
 * How Megatron-LM builds a split of S stages holding blocks[j]
 * transformer layers each (get_num_layers_to_build()): no flags when the
 * stages are even; else --account-for-embedding-in-pipeline-split and/or
 * --account-for-loss-in-pipeline-split when the embedding and the loss
 * counted as one layer each make it even; else
 * --decoder-first-pipeline-num-layers (first) and/or
 * --decoder-last-pipeline-num-layers (last), each at least 1, the stages
 * between them even and not empty.  Returns 0 when none of these builds
 * blocks[] exactly.
 */
struct mt_split {
	int first, last;	/* 0: the flag is not given */
	int embed, loss;	/* the account-for flags */
};
int runtime_megatron_split(const int *blocks, int S, struct mt_split *ms);

#endif
