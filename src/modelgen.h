/*
 * modelgen.h - analytic layer costs of standard architectures, the rows
 * of a model.csv (dlplan-formats(5), model.csv) for users without a profiler.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Use:
 *
 *	struct mg_arch a;
 *	struct mg_model m;
 *
 *	mg_arch_init(&a, MG_LLAMA);	(or a = *mg_preset_find("llama2-7b"))
 *	a.layers = 32; a.hidden = 4096; ...
 *	if (mg_missing(&a) == NULL && mg_generate(&a, &m, &e) == DL_OK) {
 *		... m.rows[0 .. m.nrows-1] ...
 *		mg_free(&m);
 *	}
 *
 * Every number is per sample: one sequence of `seq` tokens for the
 * transformers, one image for ResNet-50.  Units are those of model.csv:
 * GFLOP = 1e9 FLOP, parameters in millions, MB = 1e6 bytes.  The
 * formulas and their sources are in modelgen.c and dlplan(1), MODEL
 * FORMULAS.
 */
#ifndef DL_MODELGEN_H
#define DL_MODELGEN_H

#include <stddef.h>

#include "util.h"

enum mg_family { MG_GPT, MG_LLAMA, MG_BERT, MG_RESNET50, MG_NFAMILY };

/* The family names, in enum order, as the command line spells them. */
#define MG_FAMILY_WORDS "gpt|llama|bert|resnet50"

/*
 * Architecture hyper-parameters.  A long field that is 0 is "not set":
 * mg_generate() derives kv_heads, ffn and positions when they are 0 (see
 * mg_fields[] for which family uses which field).
 */
struct mg_arch {
	enum mg_family family;
	long layers;		/* transformer blocks */
	long hidden;		/* model width h */
	long heads;		/* attention heads a */
	long kv_heads;		/* key/value heads (GQA); 0: = heads */
	long ffn;		/* MLP inner width; 0: family default */
	long vocab;		/* vocabulary size V */
	long seq;		/* tokens per sample s */
	long positions;		/* learned position table (gpt, bert); 0: = seq */
	long dtype_bytes;	/* bytes per activation element */
	long image;		/* resnet50: input image side in pixels */
	long classes;		/* resnet50: classifier outputs */
	int tied;		/* LM head weight shared with the token embedding */
	int dropout;		/* the family trains with dropout (masks kept) */
};

/*
 * The settable long fields of struct mg_arch, NULL-terminated.  name is
 * also the command-line option ("kv-heads" is --kv-heads); off is the
 * offsetof() of the long field; families is a bit mask (1 << MG_GPT ...)
 * of the families that use it; required is set when a family that uses
 * it has no default for it.
 */
struct mg_field {
	const char *name;
	size_t off;
	long min, max;
	unsigned families;
	int required;
};
#define MG_NFIELDS 11
extern const struct mg_field mg_fields[MG_NFIELDS + 1];

/* The field's value in a. */
long *mg_field_ptr(struct mg_arch *a, const struct mg_field *f);
const struct mg_field *mg_field_find(const char *name);

/*
 * Sanity limits on every generated number, per row and in total: 1e9
 * GFLOP (1e18 FLOP) per sample, 1e9 million (1e15) parameters, 1e9 MB
 * (1 PB) per sample; the per-row limits of model.csv (model.c), so a
 * generated file always loads.  Larger results are rejected as absurd.
 */
#define MG_MAX_GFLOP	1e9
#define MG_MAX_PARAMS_M	1e9
#define MG_MAX_MB	1e9

/* One model.csv row; name is at most 31 characters. */
struct mg_row {
	char name[32];
	double fwd_gflop, bwd_gflop, params_m, act_mb, mem_mb, tp_mb;
};

struct mg_model {
	struct mg_row *rows;	/* owned; free with mg_free() */
	size_t nrows;
};

/* A published architecture. */
struct mg_preset {
	const char *name;
	struct mg_arch arch;
};
/* All presets, NULL name terminated, and their names as option words. */
extern const struct mg_preset mg_presets[];
#define MG_PRESET_WORDS \
	"gpt2-xl|gpt3-175b|llama2-7b|llama2-13b|llama2-70b|bert-large|resnet50"

const struct mg_arch *mg_preset_find(const char *name);

/* Family name <-> enum; mg_family_parse returns -1 for an unknown name. */
const char *mg_family_name(enum mg_family f);
int mg_family_parse(const char *name);

/* Clear a and set the family defaults (dtype_bytes 2, tied, dropout,
 * image 224, classes 1000). */
void mg_arch_init(struct mg_arch *a, enum mg_family f);

/* The first field that a's family requires and that is still 0, or NULL
 * when nothing is missing. */
const struct mg_field *mg_missing(const struct mg_arch *a);

/*
 * Fill the derived fields of a that are 0 (kv_heads, ffn, positions) with
 * the family defaults.  mg_generate() calls it on its own copy; callers use
 * it to print the effective architecture.
 */
void mg_complete(struct mg_arch *a);

/*
 * Read the architecture back from the comment line "dlplan model" writes
 * first in a model.csv: "dlplan model FAMILY [--preset NAME] [--FIELD
 * N]... [--tied yes|no]", as csv_table's comment holds it (without the
 * "#").  1 with a filled in (mg_complete() applied) when line is such a
 * line with every field its family requires; 0 otherwise, a untouched.
 */
int mg_arch_parse(const char *line, struct mg_arch *a);

/*
 * Generate the rows.  Checks every field's range and the relations
 * between them (heads divide hidden, kv_heads divide heads, seq within
 * positions) and rejects results that are not finite or exceed the
 * MG_MAX_* limits; returns DL_EUSAGE with e filled in those cases.
 */
int mg_generate(const struct mg_arch *a, struct mg_model *m,
    struct dl_err *e);
void mg_free(struct mg_model *m);

/* Totals over the rows of m. */
struct mg_totals {
	double fwd_gflop, bwd_gflop, params_m, mem_mb, tp_mb;
};
void mg_totals(const struct mg_model *m, struct mg_totals *t);

/*
 * The FLOPs of one iteration of batch samples as Megatron-LM counts them
 * for its "throughput per GPU (TFLOP/s/GPU)" log line
 * (num_floating_point_operations() of megatron/training/training.py at
 * d98e8a64ddf3, dense models, every sample seq tokens long):
 *
 *	6 B s (L (F e h + h (q + 2 g d) + q h) + h V) + 6 B s^2 L q
 *
 * with q = h (kv_channels x heads), g d the key/value width (query
 * groups x head size), e = 3 with a SwiGLU MLP (llama), else 2, and the
 * core attention halved for the causal mask.  The vocabulary V is
 * padded to a multiple of pad (Megatron: 128 x TP; 1 for none).  No
 * recomputation is counted.  0 for a family Megatron's formula does not
 * describe (bert, resnet50).
 */
double mg_megatron_flops(const struct mg_arch *a, long batch, long pad);

#endif
