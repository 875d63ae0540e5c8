/*
 * model.c - read and check model.csv.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "model.h"

static const struct csv_col model_cols[] = {
	{ "layer", CSV_STR, 1, 0, 0, 0, 0, NULL },
	{ "fwd_gflop", CSV_NUM, 1, 0, 1e9, 0, 0, "GFLOP per sample" },
	{ "bwd_gflop", CSV_NUM, 0, 0, 1e9, 0, 0, "GFLOP per sample" },
	{ "params_m", CSV_NUM, 1, 0, 1e9, 0, 0, "millions" },
	{ "act_mb", CSV_NUM, 1, 0, 1e9, 0, 0, "MB per sample" },
	{ "mem_mb", CSV_NUM, 1, 0, 1e9, 0, 0, "MB per sample" },
	{ "tp_mb", CSV_NUM, 0, 0, 1e9, 0, 0, "MB per sample" },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_model_schema = { "model.csv", model_cols };

/* Plausibility limits per layer and sample (dlplan-formats(5)). */
static const struct csv_limit model_limits[] = {
	{ "fwd_gflop", 1e6, "more than 10^15 FLOP per sample in one layer" },
	{ "bwd_gflop", 2e6, "more than 2 x 10^15 FLOP per sample in one "
	    "layer" },
	{ "params_m", 1e5, "more than 100 billion parameters in one layer; "
	    "given in units, not millions?" },
	{ "act_mb", 1e5, "more than 100 GB per sample; given in bytes or "
	    "KB?" },
	{ "mem_mb", 1e5, "more than 100 GB per sample; given in bytes or "
	    "KB?" },
	{ "tp_mb", 1e5, "more than 100 GB per sample; given in bytes or "
	    "KB?" },
	{ NULL, 0, NULL }
};

int
model_load(struct dl_model *m, const char *path, struct dl_err *e)
{
	struct csv_table t;
	double flops = 0;
	size_t cname, cfwd, cbwd, cparams, cact, cmem, ctp;
	int rc;

	memset(m, 0, sizeof(*m));
	if ((rc = csvin_read(path, &dl_model_schema, &t, e)) != DL_OK)
		return rc;
	cname = csv_colidx(&t, "layer");
	cfwd = csv_colidx(&t, "fwd_gflop");
	cbwd = csv_colidx(&t, "bwd_gflop");
	cparams = csv_colidx(&t, "params_m");
	cact = csv_colidx(&t, "act_mb");
	cmem = csv_colidx(&t, "mem_mb");
	ctp = csv_colidx(&t, "tp_mb");
	if (t.nrows == 0) {
		dl_seterr(e, DL_EDATA, path, t.header_line, 0,
		    "no layers (expected at least one row after the header)");
		csvin_free(&t);
		return DL_EDATA;
	}
	m->path = xstrdup(path);
	m->layers = xcalloc(t.nrows, sizeof(struct dl_layer));
	m->nlayers = t.nrows;
	for (size_t r = 0; r < t.nrows; r++) {
		struct dl_layer *l = &m->layers[r];

		const char *name = csv_str(&t, r, cname);

		if (name[0] == '\0' || strlen(name) > 255) {
			rc = csv_cellerr(&t, r, cname, e, "layer name must "
			    "have 1 to 255 characters");
			break;
		}
		l->name = xstrdup(name);
		l->fwd_gflop = csv_num(&t, r, cfwd);
		l->bwd_gflop = csv_num_or(&t, r, cbwd, 2 * l->fwd_gflop);
		l->params_m = csv_num(&t, r, cparams);
		l->act_mb = csv_num(&t, r, cact);
		l->mem_mb = csv_num(&t, r, cmem);
		l->tp_mb = csv_num_or(&t, r, ctp, 0);
		l->line = t.line[r];
		flops += l->fwd_gflop + l->bwd_gflop;
	}
	if (rc == DL_OK && !(flops > 0))
		rc = dl_seterr(e, DL_EDATA, path, t.header_line, 0,
		    "model has no work (expected fwd_gflop > 0 in some layer)");
	if (rc == DL_OK)
		csv_plausible(&t, model_limits, &m->warnings);
	if (rc == DL_OK)
		m->has_arch = mg_arch_parse(t.comment, &m->arch);
	csvin_free(&t);
	if (rc != DL_OK)
		model_free(m);
	return rc;
}

void
model_free(struct dl_model *m)
{
	for (size_t i = 0; i < m->nlayers; i++)
		free(m->layers[i].name);
	free(m->layers);
	free(m->path);
	notes_free(&m->warnings);
	memset(m, 0, sizeof(*m));
}

int
model_is_transformer(const struct dl_model *m)
{
	return m->has_arch && (m->arch.family == MG_GPT ||
	    m->arch.family == MG_LLAMA || m->arch.family == MG_BERT);
}

int
model_is_block(const struct dl_model *m, size_t i)
{
	const char *s;

	if (!model_is_transformer(m) || i >= m->nlayers)
		return 0;
	s = m->layers[i].name;
	if (strncmp(s, "block", 5) != 0 || s[5] == '\0')
		return 0;
	for (s += 5; *s != '\0'; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

int
model_blocks(const struct dl_model *m, int first, int last)
{
	int n = 0;

	for (int i = first; i <= last; i++)
		n += model_is_block(m, (size_t)i);
	return n;
}

double
model_params(const struct dl_model *m)
{
	double s = 0;

	for (size_t i = 0; i < m->nlayers; i++)
		s += m->layers[i].params_m * 1e6;
	return s;
}

double
model_flops(const struct dl_model *m)
{
	double s = 0;

	for (size_t i = 0; i < m->nlayers; i++)
		s += (m->layers[i].fwd_gflop + m->layers[i].bwd_gflop) * 1e9;
	return s;
}
