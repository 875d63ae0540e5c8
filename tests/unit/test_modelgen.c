/*
 * test_modelgen.c - the analytic model generator against published
 * parameter counts, closed-form FLOP formulas and hand-computed rows.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "modelgen.h"
#include "tap.h"

static void
gen(const struct mg_arch *a, struct mg_model *m, struct mg_totals *t,
    const char *what)
{
	struct dl_err e;

	memset(&e, 0, sizeof(e));
	if (!ok(mg_generate(a, m, &e) == DL_OK, "%s generates", what)) {
		printf("#   %s\n", e.msg);
		m->rows = NULL;
		m->nrows = 0;
	}
	mg_totals(m, t);
}

/*
 * Total parameters against the published sizes (within 1%), and against
 * the exact counts of the reference implementations where they are known
 * to the parameter: Hugging Face transformers for GPT-2 XL (1,557,611,200),
 * Llama 2 (6,738,415,616; 13,015,864,320; 68,976,648,192) and
 * BertForPreTraining (BertModel's 335,141,888 plus the MLM transform,
 * decoder bias and NSP classifier, 1,084,220: 336,226,108); torchvision
 * for ResNet-50 (25,557,032).
 */
static void
test_params(void)
{
	static const struct {
		const char *preset;
		double published, exact;
	} want[] = {
		{ "gpt2-xl", 1.56e9, 1557611200 },
		{ "gpt3-175b", 175e9, 0 },
		{ "llama2-7b", 6.74e9, 6738415616 },
		{ "llama2-13b", 13.0e9, 13015864320 },
		{ "llama2-70b", 68.98e9, 68976648192 },
		{ "bert-large", 335e6, 336226108 },
		{ "resnet50", 25.6e6, 25557032 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct mg_arch *a = mg_preset_find(want[i].preset);
		struct mg_model m;
		struct mg_totals t;
		char name[80];

		if (!ok(a != NULL, "preset %s exists", want[i].preset))
			continue;
		gen(a, &m, &t, want[i].preset);
		snprintf(name, sizeof(name), "%s: parameters within 1%% of "
		    "published %g", want[i].preset, want[i].published);
		is_near(t.params_m * 1e6, want[i].published, 0.01, name);
		if (want[i].exact > 0) {
			snprintf(name, sizeof(name), "%s: parameters equal the "
			    "reference implementation's", want[i].preset);
			is_near(t.params_m * 1e6, want[i].exact, 1e-12, name);
		}
		mg_free(&m);
	}
}

/*
 * GPT forward FLOPs per sequence, Narayanan et al. 2021 eq. 3 without the
 * factor 4 for backward and recomputation:
 * 24*s*L*h^2 * (1 + s/(6h) + V/(12*L*h)).
 */
static void
test_gpt_flops(void)
{
	static const char *const presets[] = { "gpt2-xl", "gpt3-175b" };

	for (size_t i = 0; i < ARRAY_SIZE(presets); i++) {
		const struct mg_arch *a = mg_preset_find(presets[i]);
		double s = a->seq, h = a->hidden, L = a->layers, V = a->vocab;
		double want = 24 * s * L * h * h *
		    (1 + s / (6 * h) + V / (12 * L * h));
		struct mg_model m;
		struct mg_totals t;
		char name[80];

		gen(a, &m, &t, presets[i]);
		snprintf(name, sizeof(name), "%s: forward FLOPs equal "
		    "Narayanan et al.", presets[i]);
		is_near(t.fwd_gflop * 1e9, want, 1e-12, name);
		snprintf(name, sizeof(name), "%s: backward is twice forward",
		    presets[i]);
		is_near(t.bwd_gflop, 2 * t.fwd_gflop, 1e-12, name);
		mg_free(&m);
	}
}

/*
 * Forward FLOPs per token: exactly 2 * (weights used in matrix products)
 * + 4*L*s*h (attention scores and their product with V), and within 3%
 * of Kaplan et al.'s 2N + attention with N all parameters (the difference
 * is embeddings, biases and norms, which do no matrix products).
 */
static void
test_per_token(void)
{
	static const char *const presets[] = {
		"gpt2-xl", "gpt3-175b", "llama2-7b", "llama2-13b",
		"llama2-70b", "bert-large"
	};

	for (size_t i = 0; i < ARRAY_SIZE(presets); i++) {
		const struct mg_arch *a = mg_preset_find(presets[i]);
		double s = a->seq, h = a->hidden, L = a->layers, V = a->vocab;
		double F = a->ffn, k = (double)a->kv_heads * h / a->heads;
		double mats, attn, want, per_tok;
		struct mg_model m;
		struct mg_totals t;
		char name[96];

		gen(a, &m, &t, presets[i]);
		per_tok = t.fwd_gflop * 1e9 / s;
		attn = 4 * L * s * h;
		if (a->family == MG_LLAMA)
			mats = L * (2 * h * h + 2 * h * k + 3 * h * F) + V * h;
		else
			mats = L * (2 * h * h + 2 * h * k + 2 * h * F) + V * h;
		want = 2 * mats + attn;
		if (a->family == MG_BERT)	/* MLM transform; pooler, NSP
						   on one token per sequence */
			want += 2 * h * h + (2 * h * h + 4 * h) / s;
		snprintf(name, sizeof(name), "%s: forward FLOPs per token = "
		    "2 x matrix weights + 4Lsh", presets[i]);
		is_near(per_tok, want, 1e-12, name);
		snprintf(name, sizeof(name), "%s: forward FLOPs per token "
		    "within 3%% of 2N + 4Lsh", presets[i]);
		is_near(per_tok, 2 * t.params_m * 1e6 + attn, 0.03, name);
		mg_free(&m);
	}
}

/*
 * ResNet-50 at 224x224: 4.09e9 multiply-adds (torchvision's published
 * 4.09 GFLOPS, which counts multiply-adds), i.e. 8.18 GFLOP; the brief's
 * 8.2 within 3%.  Stem by hand: 112*112 outputs * 64 channels * 3*7*7
 * multiply-adds = 118,013,952, i.e. 0.236027904 GFLOP.
 */
static void
test_resnet(void)
{
	const struct mg_arch *a = mg_preset_find("resnet50");
	struct mg_model m;
	struct mg_totals t;

	gen(a, &m, &t, "resnet50");
	is_near(t.fwd_gflop, 8.2, 0.03, "resnet50: about 8.2 GFLOP forward");
	is_near(t.fwd_gflop / 2, 4.09, 0.005,
	    "resnet50: 4.09 G multiply-adds (torchvision)");
	is_int((long)m.nrows, 18, "resnet50: stem, 16 blocks, head");
	if (m.nrows == 18) {
		is_str(m.rows[0].name, "stem", "resnet50: first row");
		is_near(m.rows[0].fwd_gflop, 0.236027904, 1e-12,
		    "resnet50: stem FLOPs");
		is_str(m.rows[4].name, "conv3_1", "resnet50: fifth row");
		is_str(m.rows[17].name, "head", "resnet50: last row");
		/* fc 2048 -> 1000 with bias. */
		is_near(m.rows[17].params_m, 2.049, 1e-12,
		    "resnet50: head parameters");
		/* conv5_3 output: 2048 x 7 x 7 at 2 bytes. */
		is_near(m.rows[16].act_mb, 0.200704, 1e-12,
		    "resnet50: last block's output");
	}
	mg_free(&m);
}

/* Expected row: name, then fwd FLOP, parameters, act, mem, tp bytes. */
struct want_row {
	const char *name;
	double fwd, params, act, mem, tp;
};

/* Generate a and compare its three rows and total parameters. */
static void
tiny(const struct mg_arch *a, const char *what, const struct want_row *w,
    double params)
{
	struct mg_model m;
	struct mg_totals t;
	char name[96];

	gen(a, &m, &t, what);
	if (!is_int((long)m.nrows, 3, "three rows"))
		return;
	for (int i = 0; i < 3; i++) {
		const struct mg_row *r = &m.rows[i];
		const double got[6] = { r->fwd_gflop * 1e9, r->bwd_gflop * 1e9,
			r->params_m * 1e6, r->act_mb * 1e6, r->mem_mb * 1e6,
			r->tp_mb * 1e6 };
		const double want[6] = { w[i].fwd, 2 * w[i].fwd, w[i].params,
			w[i].act, w[i].mem, w[i].tp };
		static const char *const col[6] = { "fwd", "bwd", "params",
			"act", "mem", "tp" };

		is_str(r->name, w[i].name, "row name");
		for (int j = 0; j < 6; j++) {
			snprintf(name, sizeof(name), "%s %s %s", what,
			    w[i].name, col[j]);
			is_near(got[j], want[j], 1e-12, name);
		}
	}
	snprintf(name, sizeof(name), "%s: %g parameters", what, params);
	is_near(t.params_m * 1e6, params, 1e-12, name);
	mg_free(&m);
}

/*
 * A tiny GPT by hand: L=1, h=8, a=2, s=4, V=10; derived F=32, P=4, k=8,
 * p=2 bytes, tied, dropout.  (s*h = 32 elements, 64 bytes.)
 *
 * embed: params V*h + P*h = 80 + 32 = 112; FLOPs 0; act 64 B;
 *	mem: dropout mask 32 B + token and position ids 2*8*4 = 64 B = 96 B;
 *	tp: forward all-reduce of the output, 64 B.
 * block0: params 12h^2 + 13h = 768 + 104 = 872;
 *	FLOPs 24*s*h^2 + 4*s^2*h = 24*4*64 + 4*16*8 = 6144 + 512 = 6656;
 *	mem 34*s*h + 5*a*s^2 = 1088 + 160 = 1248 B; act 64 B;
 *	tp 4 all-reduces of 64 B = 256 B.
 * head: params final LN 2h = 16 (LM head tied); FLOPs 2*s*h*V = 640;
 *	mem LN input 64 + head input 64 + fp32 logits 4*4*10 = 160: 288 B;
 *	act 0; tp head input gradient 64 + cross-entropy 3*4*4 = 48: 112 B.
 * Total parameters 112 + 872 + 16 = 1000.
 *
 * A tiny LLaMA by hand: L=1, h=8, a=2, g=1 (so d=4, k=4), F=12, s=4,
 * V=10, p=2, untied, no dropout.
 *
 * embed: params V*h = 80; act 64 B; mem token ids 8*4 = 32 B; tp 64 B.
 * block0: matrices h*(h+2k) + h*h + 3*h*F = 128 + 64 + 288 = 480, plus
 *	two RMSNorms 2h = 16: 496 parameters;
 *	FLOPs 2*s*480 + 4*s^2*h = 3840 + 512 = 4352;
 *	mem p*s*(6h + 2k) = 8*56 = 448, softmax p*a*s^2 = 64,
 *	SwiGLU 4*p*s*F = 384: 896 B; act 64 B; tp 256 B.
 * head: RMSNorm h + untied V*h = 8 + 80 = 88; FLOPs 2*s*h*V = 640;
 *	mem 288 B; tp 112 B.  Total 80 + 496 + 88 = 664.
 */
static void
test_tiny(void)
{
	static const struct want_row gpt[3] = {
		{ "embed", 0, 112, 64, 96, 64 },
		{ "block0", 6656, 872, 64, 1248, 256 },
		{ "head", 640, 16, 0, 288, 112 },
	};
	static const struct want_row llama[3] = {
		{ "embed", 0, 80, 64, 32, 64 },
		{ "block0", 4352, 496, 64, 896, 256 },
		{ "head", 640, 88, 0, 288, 112 },
	};
	struct mg_arch a;

	mg_arch_init(&a, MG_GPT);
	a.layers = 1;
	a.hidden = 8;
	a.heads = 2;
	a.seq = 4;
	a.vocab = 10;
	tiny(&a, "tiny gpt", gpt, 1000);
	a.family = MG_LLAMA;
	a.tied = a.dropout = 0;
	a.kv_heads = 1;
	a.ffn = 12;
	tiny(&a, "tiny llama", llama, 664);
}

/* The Korthikanti et al. activation formula for a GPT-3 block. */
static void
test_korthikanti(void)
{
	const struct mg_arch *a = mg_preset_find("gpt3-175b");
	double s = a->seq, h = a->hidden, nh = a->heads;
	struct mg_model m;
	struct mg_totals t;

	gen(a, &m, &t, "gpt3-175b");
	if (m.nrows > 1)
		is_near(m.rows[1].mem_mb * 1e6, s * h * (34 + 5 * nh * s / h),
		    1e-12, "gpt3-175b block: s*h*(34 + 5*a*s/h) bytes");
	mg_free(&m);
}

static void
test_defaults(void)
{
	struct mg_arch a;

	mg_arch_init(&a, MG_LLAMA);
	a.hidden = 4096;
	a.heads = 32;
	mg_complete(&a);
	is_int(a.ffn, 11008, "llama ffn default for h=4096");
	is_int(a.kv_heads, 32, "kv-heads default to heads");
	mg_arch_init(&a, MG_LLAMA);
	a.hidden = 5120;
	mg_complete(&a);
	is_int(a.ffn, 13824, "llama ffn default for h=5120");
	mg_arch_init(&a, MG_BERT);
	a.hidden = 1024;
	a.seq = 128;
	mg_complete(&a);
	is_int(a.ffn, 4096, "bert ffn default 4h");
	is_int(a.positions, 128, "positions default to seq");
	ok(a.tied && a.dropout, "bert: tied, dropout");

	mg_arch_init(&a, MG_GPT);
	a.layers = 2;
	is_str(mg_missing(&a) ? mg_missing(&a)->name : "", "hidden",
	    "missing hidden reported first");
	mg_arch_init(&a, MG_RESNET50);
	ok(mg_missing(&a) == NULL, "resnet50 needs nothing");
}

static void
expect_fail(const struct mg_arch *a, const char *msg, const char *what)
{
	struct mg_model m;
	struct dl_err e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = mg_generate(a, &m, &e);
	is_int(rc, DL_EUSAGE, what);
	is_str(e.msg, msg, what);
	ok(m.rows == NULL && m.nrows == 0, "%s: no rows", what);
}

static void
test_errors(void)
{
	struct mg_arch a, b;

	mg_arch_init(&a, MG_GPT);
	a.layers = 2;
	a.hidden = 1000;
	a.heads = 3;
	a.vocab = 100;
	a.seq = 16;
	expect_fail(&a, "'hidden' 1000 is not a multiple of 'heads' 3",
	    "heads must divide hidden");
	b = a;
	b.heads = 0;
	expect_fail(&b, "'heads' is not set for gpt", "heads unset");
	b.heads = -4;
	expect_fail(&b, "'heads' -4 is out of range [1, 1048576]",
	    "negative heads");
	a.heads = 8;
	a.kv_heads = 3;
	expect_fail(&a, "'kv-heads' 3 does not divide 'heads' 8",
	    "kv-heads must divide heads");
	a.kv_heads = 16;
	expect_fail(&a, "'kv-heads' 16 does not divide 'heads' 8",
	    "kv-heads above heads");
	a.kv_heads = 0;
	a.positions = 8;
	expect_fail(&a, "'seq' 16 exceeds the 8 learned 'positions'",
	    "seq within positions");
	a.positions = 0;
	a.hidden = 2000000;
	expect_fail(&a, "'hidden' 2000000 is out of range [1, 1048576]",
	    "hidden out of range");
	a.hidden = 1048576;
	a.heads = 1;
	a.layers = 10000;
	a.seq = 1;
	/* 10000 * (12h^2 + 13h) = 1.3194e17 parameters. */
	expect_fail(&a, "model too large: parameters in total is 1.31942e+11 "
	    "million, more than 1e+09", "absurd total parameters");
	a.seq = 16;
	/* 10000 * (24*s*h^2 + 4*s^2*h) FLOP = 4.2221e18. */
	expect_fail(&a, "model too large: forward work in total is "
	    "4.22214e+09 GFLOP per sample, more than 1e+09",
	    "absurd total work");
	a.layers = 1;
	a.seq = 16777216;
	a.hidden = 8;
	/* Attention probabilities, mask and dropout 5*a*s^2 = 1.4074e15 B. */
	expect_fail(&a, "model too large: activation memory of 'block0' is "
	    "1.40738e+09 MB per sample, more than 1e+09",
	    "absurd sequence");

	mg_arch_init(&a, MG_RESNET50);
	a.layers = 50;
	expect_fail(&a, "'layers' does not apply to resnet50",
	    "resnet50 takes no layers");
	a.layers = 0;
	a.image = 16;
	expect_fail(&a, "'image' 16 is out of range [32, 16384]",
	    "resnet50 image too small");
	a.family = MG_NFAMILY;
	expect_fail(&a, "unknown model family 4", "bad family");
}

/* The option words list every preset, in table order. */
static void
test_preset_words(void)
{
	char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	for (const struct mg_preset *p = mg_presets; p->name; p++) {
		if (n)
			strcat(buf, "|");
		strcat(buf, p->name);
		n++;
	}
	is_str(buf, MG_PRESET_WORDS, "MG_PRESET_WORDS matches mg_presets");
	for (int f = 0; f < MG_NFAMILY; f++)
		is_int(mg_family_parse(mg_family_name((enum mg_family)f)), f,
		    "family name round trip");
	is_int(mg_family_parse("t5"), -1, "unknown family");
}

/* Every preset: rows per layer, finite, backward twice forward. */
static void
test_rows(void)
{
	for (const struct mg_preset *p = mg_presets; p->name; p++) {
		struct mg_model m;
		struct mg_totals t;
		size_t want = p->arch.family == MG_RESNET50 ? 18 :
		    (size_t)p->arch.layers + 2;
		int good = 1;

		gen(&p->arch, &m, &t, p->name);
		is_int((long)m.nrows, (long)want, "row count");
		for (size_t i = 0; i < m.nrows; i++) {
			const struct mg_row *r = &m.rows[i];

			good &= isfinite(r->fwd_gflop) && r->fwd_gflop >= 0 &&
			    r->bwd_gflop == 2 * r->fwd_gflop &&
			    r->params_m > 0 && r->mem_mb > 0 &&
			    r->act_mb >= 0 && r->tp_mb > 0;
			good &= (r->act_mb == 0) == (i + 1 == m.nrows);
		}
		ok(good, "%s: rows positive, bwd = 2 fwd, only the head sends "
		    "nothing on", p->name);
		mg_free(&m);
	}
}

int
main(void)
{
	test_params();
	test_gpt_flops();
	test_per_token();
	test_resnet();
	test_tiny();
	test_korthikanti();
	test_defaults();
	test_errors();
	test_preset_words();
	test_rows();
	return done_testing();
}
