/*
 * cmd_model.c - "dlplan model": write a model.csv from architecture
 * hyper-parameters (modelgen.c holds the formulas).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "modelgen.h"
#include "sb.h"

/* Every architecture option has id O_DIM; its name is its mg_fields[] name. */
enum { O_PRESET = 1, O_TIED, O_FORMAT, O_OUTPUT, O_DIM };

static const struct optspec model_opts[] = {
	{ "preset", 0, O_PRESET, "NAME", MG_PRESET_WORDS,
	    "start from a published architecture" },
	{ "layers", 0, O_DIM, "N", NULL, "transformer blocks" },
	{ "hidden", 0, O_DIM, "H", NULL, "hidden size" },
	{ "heads", 0, O_DIM, "A", NULL, "attention heads" },
	{ "kv-heads", 0, O_DIM, "K", NULL,
	    "key/value heads (grouped-query attention; default: heads)" },
	{ "ffn", 0, O_DIM, "F", NULL,
	    "MLP inner size (default 4H; llama: 8H/3 rounded up to 256)" },
	{ "vocab", 0, O_DIM, "V", NULL, "vocabulary size" },
	{ "seq", 0, O_DIM, "S", NULL, "tokens per sample" },
	{ "positions", 0, O_DIM, "P", NULL,
	    "learned positions, gpt and bert (default: seq)" },
	{ "dtype-bytes", 0, O_DIM, "B", NULL,
	    "bytes per activation element (default 2)" },
	{ "tied", 0, O_TIED, "yes|no", "yes|no",
	    "LM head shares the token embedding (default: yes, llama no)" },
	{ "image", 0, O_DIM, "PX", NULL, "resnet50 image side (default 224)" },
	{ "classes", 0, O_DIM, "N", NULL, "resnet50 classes (default 1000)" },
	{ "format", 0, O_FORMAT, "FMT", "csv|summary|json",
	    "model.csv rows, or totals for people" },
	{ "output", 'o', O_OUTPUT, "FILE", "file",
	    "write to FILE (atomically; - is standard output)" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_model(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_model = {
	"model", cmd_model,
	"[" MG_FAMILY_WORDS "] [--preset NAME] [--layers N] [--hidden H] "
	"[--heads A] [--kv-heads K] [--ffn F] [--vocab V] [--seq S] "
	"[--positions P] [--dtype-bytes B] [--tied yes|no] [--image PX] "
	"[--classes N] [--format csv|summary|json] [-o FILE]",
	"write a model.csv of layer costs from architecture hyper-parameters",
	model_opts, 0
};

/* What the command line asked for, before the family is known. */
struct request {
	const char *preset;
	long val[MG_NFIELDS];
	int set[MG_NFIELDS];
	int tied;		/* -1: not given */
};

/*
 * Take an architecture option.  The argument may be written as a decimal
 * or in exponent notation ("4096", "4.096e3"), so that "1e12" is reported
 * as out of range rather than as not a number.
 */
static int
dim_opt(const struct optstate *st, struct request *rq, struct dl_err *e)
{
	const struct mg_field *f = mg_field_find(st->opt->lname);
	size_t i = (size_t)(f - mg_fields);
	double v;
	int r = parse_double(st->arg, (double)f->min, (double)f->max, &v);

	if (r == -1 || (r == 0 && v != floor(v)))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is not an integer", opt_name(st),
		    st->arg);
	if (r == -2)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is out of range [%ld, %ld]",
		    opt_name(st), st->arg, f->min, f->max);
	rq->val[i] = (long)v;
	rq->set[i] = 1;
	return DL_OK;
}

/* Build the architecture from the family word, the preset and options. */
static int
resolve(const struct request *rq, const char *word, struct mg_arch *a,
    struct dl_err *e)
{
	const struct mg_arch *pa = NULL;
	int fam = -1;

	if (word != NULL && (fam = mg_family_parse(word)) < 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "unknown model family '%s' (expected %s)", word,
		    MG_FAMILY_WORDS);
	if (rq->preset != NULL) {
		pa = mg_preset_find(rq->preset);
		if (fam >= 0 && (int)pa->family != fam)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "preset '%s' is a %s model, not %s", rq->preset,
			    mg_family_name(pa->family), word);
		*a = *pa;
	} else if (fam < 0) {
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no model family given (expected %s or --preset NAME)",
		    MG_FAMILY_WORDS);
	} else {
		mg_arch_init(a, (enum mg_family)fam);
	}
	for (size_t i = 0; mg_fields[i].name; i++) {
		const struct mg_field *f = &mg_fields[i];

		if (!rq->set[i])
			continue;
		if (!(f->families & (1u << a->family)))
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "option '--%s' does not apply to %s", f->name,
			    mg_family_name(a->family));
		*mg_field_ptr(a, f) = rq->val[i];
	}
	if (rq->tied >= 0) {
		if (a->family == MG_RESNET50)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "option '--tied' does not apply to resnet50");
		a->tied = rq->tied;
	}
	if (pa == NULL) {
		const struct mg_field *f = mg_missing(a);

		if (f != NULL)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "missing '--%s' for a %s model (or use --preset)",
			    f->name, mg_family_name(a->family));
	}
	return DL_OK;
}

/*
 * The comment line: a command that regenerates the file, with the
 * preset (if any) followed by every effective field, so that it also
 * reads as the complete architecture.
 */
static void
put_origin(struct strbuf *sb, const struct mg_arch *arch, const char *preset)
{
	struct mg_arch a = *arch;

	mg_complete(&a);
	sb_addf(sb, "# dlplan model %s", mg_family_name(a.family));
	if (preset != NULL)
		sb_addf(sb, " --preset %s", preset);
	for (const struct mg_field *f = mg_fields; f->name; f++)
		if ((f->families & (1u << a.family)) &&
		    *mg_field_ptr(&a, f) != 0)
			sb_addf(sb, " --%s %ld", f->name, *mg_field_ptr(&a, f));
	if (a.family != MG_RESNET50)
		sb_addf(sb, " --tied %s", a.tied ? "yes" : "no");
	sb_addc(sb, '\n');
}

static void
put_csv(struct strbuf *sb, const struct mg_model *m)
{
	sb_adds(sb, "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb,tp_mb\n");
	for (size_t i = 0; i < m->nrows; i++) {
		const struct mg_row *r = &m->rows[i];
		const double v[6] = { r->fwd_gflop, r->bwd_gflop, r->params_m,
			r->act_mb, r->mem_mb, r->tp_mb };

		sb_adds(sb, r->name);
		for (size_t j = 0; j < ARRAY_SIZE(v); j++) {
			sb_addc(sb, ',');
			sb_adddbl(sb, v[j]);
		}
		sb_addc(sb, '\n');
	}
}

static void
put_summary(struct strbuf *sb, const struct mg_arch *a,
    const struct mg_model *m)
{
	struct mg_totals t;

	mg_totals(m, &t);
	sb_addf(sb, "rows         %zu\n", m->nrows);
	sb_addf(sb, "parameters   %.0f (%.4g billion)\n", t.params_m * 1e6,
	    t.params_m / 1e3);
	sb_addf(sb, "forward      %.6g GFLOP per sample\n", t.fwd_gflop);
	sb_addf(sb, "training     %.6g GFLOP per sample (forward + backward)\n",
	    t.fwd_gflop + t.bwd_gflop);
	if (a->family != MG_RESNET50)
		sb_addf(sb, "per token    %.6g GFLOP forward, %.6g training\n",
		    t.fwd_gflop / (double)a->seq,
		    (t.fwd_gflop + t.bwd_gflop) / (double)a->seq);
	sb_addf(sb, "activations  %.6g MB per sample kept for backward\n",
	    t.mem_mb);
	sb_addf(sb, "tp traffic   %.6g MB per sample all-reduced\n", t.tp_mb);
}

/*
 * --format json: schema "dlplan.model/1", the family, the preset, the
 * effective architecture, the totals and the model.csv rows.
 */
static void
put_json(struct strbuf *sb, const struct mg_arch *arch, const char *preset,
    const struct mg_model *m)
{
	json_t *o = json_object(), *ar = json_object(), *tt = json_object();
	json_t *rows = json_array();
	struct mg_arch a = *arch;
	struct mg_totals t;
	char *s;

	mg_complete(&a);
	mg_totals(m, &t);
	json_object_set_new(o, "schema", json_string("dlplan.model/1"));
	json_object_set_new(o, "family", json_string(mg_family_name(a.family)));
	json_object_set_new(o, "preset", preset ? json_string(preset) :
	    json_null());
	for (const struct mg_field *f = mg_fields; f->name; f++)
		if ((f->families & (1u << a.family)) &&
		    *mg_field_ptr(&a, f) != 0)
			json_object_set_new(ar, f->name,
			    json_integer(*mg_field_ptr(&a, f)));
	if (a.family != MG_RESNET50)
		json_object_set_new(ar, "tied", json_boolean(a.tied));
	json_object_set_new(o, "architecture", ar);
	json_object_set_new(tt, "rows", json_integer((json_int_t)m->nrows));
	json_object_set_new(tt, "params_m", cmd_json_real(t.params_m));
	json_object_set_new(tt, "fwd_gflop", cmd_json_real(t.fwd_gflop));
	json_object_set_new(tt, "bwd_gflop", cmd_json_real(t.bwd_gflop));
	json_object_set_new(tt, "mem_mb", cmd_json_real(t.mem_mb));
	json_object_set_new(tt, "tp_mb", cmd_json_real(t.tp_mb));
	json_object_set_new(o, "totals", tt);
	for (size_t i = 0; i < m->nrows; i++) {
		const struct mg_row *r = &m->rows[i];
		json_t *l = json_object();

		json_object_set_new(l, "layer", json_string(r->name));
		json_object_set_new(l, "fwd_gflop", cmd_json_real(r->fwd_gflop));
		json_object_set_new(l, "bwd_gflop", cmd_json_real(r->bwd_gflop));
		json_object_set_new(l, "params_m", cmd_json_real(r->params_m));
		json_object_set_new(l, "act_mb", cmd_json_real(r->act_mb));
		json_object_set_new(l, "mem_mb", cmd_json_real(r->mem_mb));
		json_object_set_new(l, "tp_mb", cmd_json_real(r->tp_mb));
		json_array_append_new(rows, l);
	}
	json_object_set_new(o, "rows", rows);
	s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));
	if (s != NULL) {
		sb_adds(sb, s);
		sb_addc(sb, '\n');
		free(s);
	}
	json_decref(o);
}

/* The presets, one line each, after the options of "model -h". */
static void
print_presets(FILE *fp)
{
	fprintf(fp, "\npresets (--preset NAME):\n");
	for (const struct mg_preset *p = mg_presets; p->name; p++) {
		const struct mg_arch *a = &p->arch;

		if (a->family == MG_RESNET50)
			fprintf(fp, "  %-14s %s, image %ld, %ld classes\n",
			    p->name, mg_family_name(a->family), a->image,
			    a->classes);
		else
			fprintf(fp, "  %-14s %s, %ld layers, hidden %ld, %ld "
			    "heads, seq %ld\n", p->name,
			    mg_family_name(a->family), a->layers, a->hidden,
			    a->heads, a->seq);
	}
}

static int
cmd_model(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct optstate st;
	struct dl_err e;
	struct request rq;
	struct mg_arch a;
	struct mg_model m;
	struct strbuf sb = STRBUF_INIT;
	const char *out = NULL, *word = NULL;
	int id, fmt = 0, rc;

	memset(&rq, 0, sizeof(rq));
	rq.tied = -1;
	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0)
			goto usage;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			print_presets(stdout);
			opt_free(&st);
			return DL_OK;
		case O_PRESET:
			if (opt_choice(&st, &e) < 0)
				goto usage;
			rq.preset = st.arg;
			break;
		case O_DIM:
			if (dim_opt(&st, &rq, &e) != DL_OK)
				goto usage;
			break;
		case O_TIED:
			if ((rq.tied = opt_choice(&st, &e)) < 0)
				goto usage;
			rq.tied = rq.tied == 0;
			break;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_OUTPUT:
			out = st.arg;
			break;
		}
	}
	if (st.npos > 1) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    st.pos[1]);
		goto usage;
	}
	if (st.npos == 1)
		word = st.pos[0];
	if (resolve(&rq, word, &a, &e) != DL_OK)
		goto usage;
	opt_free(&st);

	if ((rc = mg_generate(&a, &m, &e)) != DL_OK)
		return cmd_fail(&e);
	if (fmt == 0) {
		put_origin(&sb, &a, rq.preset);
		put_csv(&sb, &m);
	} else if (fmt == 2) {
		put_json(&sb, &a, rq.preset, &m);
	} else {
		put_summary(&sb, &a, &m);
	}
	mg_free(&m);
	if (out != NULL) {
		/* "-" is standard output, as without -o. */
		rc = cmd_write_output(out, sb.buf, sb.len, &e);
		if (rc != DL_OK)
			rc = cmd_fail(&e);
	} else {
		fwrite(sb.buf, 1, sb.len, stdout);
		rc = DL_OK;
	}
	sb_free(&sb);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
