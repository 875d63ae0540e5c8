/*
 * model.h - the layers of a model, in execution order.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_MODEL_H
#define DL_MODEL_H

#include <stddef.h>

#include "modelgen.h"
#include "util.h"

struct dl_layer {
	char *name;
	double fwd_gflop;	/* forward FLOPs per sample, GFLOP */
	double bwd_gflop;	/* backward; 2 x fwd when not given */
	double params_m;	/* parameters, millions */
	double act_mb;		/* output activation per sample, MB */
	double mem_mb;		/* activation memory kept per sample, MB */
	double tp_mb;		/* tensor-parallel all-reduce volume per
				   sample, MB; 0 when not given */
	long line;
};

struct dl_model {
	char *path;
	struct dl_layer *layers;
	size_t nlayers;
	/* Values accepted but implausible (see struct csv_limit). */
	struct dl_notes warnings;
	/*
	 * The architecture the "# dlplan model ..." line before the header
	 * names (mg_arch_parse()); has_arch 0 when the file has no such
	 * line (a profiled model): the framework launchers need it.
	 */
	struct mg_arch arch;
	int has_arch;
};

int model_load(struct dl_model *m, const char *path, struct dl_err *e);
void model_free(struct dl_model *m);

/* Totals: parameters (count) and FLOPs per sample (fwd + bwd). */
double model_params(const struct dl_model *m);
double model_flops(const struct dl_model *m);

/*
 * Whether row i is a transformer block: the model has a "dlplan model"
 * line of a transformer family (gpt, llama, bert) and the row is named
 * "blockN", as dlplan model names them; the embedding and the head are
 * not.  The transformer layers Megatron-LM and torchtitan count.
 */
int model_is_block(const struct dl_model *m, size_t i);
/* The transformer blocks among rows first .. last. */
int model_blocks(const struct dl_model *m, int first, int last);
/* Whether m is a transformer with a "dlplan model" line. */
int model_is_transformer(const struct dl_model *m);

extern const struct csv_schema dl_model_schema;

#endif
