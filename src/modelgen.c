/*
 * modelgen.c - analytic layer costs of GPT, LLaMA, BERT and ResNet-50.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * All quantities are per sample (one sequence of s tokens, or one image)
 * and are computed in double precision from integer hyper-parameters
 * whose ranges are checked first, so no intermediate overflows; results
 * that are not finite or exceed the MG_MAX_* limits are rejected.
 *
 * Notation: s sequence length, h hidden size, a heads, d = h/a head
 * width, g key/value heads, k = g*d key/value width, F MLP inner width,
 * V vocabulary, P learned positions, L layers, p bytes per activation
 * element (dtype_bytes).
 *
 * FLOPs.  Only matrix multiplications are counted, at 2 FLOPs per
 * multiply-add; element-wise work (norms, activations, softmax, residual
 * adds, biases) is left out, as in the sources below, and is well under
 * 1% of the total.  A (m x n) by (n x q) product costs 2mnq.
 *
 *   Transformer block (Narayanan et al. 2021, "Efficient Large-Scale
 *   Language Model Training on GPU Clusters Using Megatron-LM", sec. 5.1;
 *   Kaplan et al. 2020 table 1), forward:
 *	Q, K, V projections	2*s*h*(h + 2k)	(GQA: Ainslie et al. 2023,
 *				K and V project to g heads, k = g*h/a)
 *	scores Q K^T		2*s*s*h
 *	scores times V		2*s*s*h
 *	output projection	2*s*h*h
 *	MLP, GELU (gpt, bert)	2 * 2*s*h*F	(two h x F matrices)
 *	MLP, SwiGLU (llama)	3 * 2*s*h*F	(gate, up, down: Touvron et
 *				al. 2023, Shazeer 2020)
 *   With g = a and F = 4h this is the Megatron-LM 24*s*h^2 + 4*s^2*h.
 *   Causal masking is not discounted (the Megatron-LM convention).
 *   LM head: 2*s*h*V.  Embedding lookups: 0.  The whole GPT model thus
 *   does 24*s*L*h^2*(1 + s/(6h) + V/(12*L*h)) per sequence forward, the
 *   Narayanan et al. formula, and per token about 2N (Kaplan et al.: C =
 *   2N per token forward, N the non-embedding weights) plus the attention
 *   term 4*L*s*h.
 *   BERT head: MLM transform 2*s*h*h, decoder 2*s*h*V (all s positions
 *   are scored, as Megatron-LM and Hugging Face do), pooler 2*h*h on the
 *   [CLS] token only, next-sentence classifier 2*h*2.
 *
 *   ResNet-50 (He et al. 2016, "Deep Residual Learning for Image
 *   Recognition", table 1): a convolution with a k x k kernel, C_in input
 *   and C_out output channels and an H_out x W_out output does
 *   H_out*W_out*C_out*C_in*k*k multiply-adds; the fc layer C*classes.
 *   Output size (H + 2*pad - k)/stride + 1 (integer division).  Stem:
 *   7x7/2 conv 3->64, BN, ReLU, 3x3/2 max pool.  Bottleneck blocks 3, 4,
 *   6, 3 of widths w = 64, 128, 256, 512: 1x1 C->w, 3x3 w->w, 1x1 w->4w,
 *   each followed by BN, plus a 1x1 projection C->4w (with BN) on the
 *   first block of a stage.  The stride 2 of a stage's first block sits
 *   on the 3x3 convolution ("ResNet-50 v1.5", torchvision and NVIDIA's
 *   reference), which gives 4.09e9 multiply-adds per 224x224 image; He
 *   et al. put it on the first 1x1 convolution and report 3.8e9.
 *
 *   Backward: 2x forward (gradients with respect to inputs and to
 *   weights each cost one forward; Narayanan et al. 2021, Kaplan et al.
 *   2020), the model.csv default.
 *
 * Parameters.  Weight matrices as above; biases on every linear layer of
 * gpt and bert, none in llama; LayerNorm 2h (scale, shift), RMSNorm h;
 * token embedding V*h, learned positions P*h (gpt, bert), token types
 * 2*h (bert).  A tied LM head (gpt, bert) adds no weights: they are
 * counted once, in the embedding row (with pipeline parallelism the last
 * stage keeps a copy, which this count leaves out).  BERT's MLM decoder
 * still has its own bias of V.  ResNet convolutions have no bias; every
 * BN has 2*C parameters (running statistics are buffers, not counted).
 *
 * Activation memory kept for backward (mem_mb).  Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models", sec.
 * 4.1: a GPT block with 16-bit activations, 1-byte dropout masks, no
 * recomputation and no tensor or sequence parallelism keeps
 * s*b*h*(34 + 5*a*s/h) bytes.  The same accounting, tensor by tensor, for
 * general p, k, F and for dropout-free SwiGLU blocks:
 *	norm inputs 2*p*s*h; QKV input p*s*h; Q p*s*h; K and V 2*p*s*k;
 *	softmax output p*a*s^2; with dropout also its mask a*s^2 and the
 *	dropped-out probabilities p*a*s^2; output projection input p*s*h;
 *	with dropout two masks s*h (after attention, after the MLP);
 *	GELU MLP: input p*s*h, GELU input p*s*F, GELU output p*s*F;
 *	SwiGLU MLP: input p*s*h, gate output, SiLU output, up output and
 *	their product (the down projection's input), 4*p*s*F.
 * With p = 2, k = h, F = 4h and dropout this is exactly Korthikanti's
 * 34*s*h + 5*a*s^2.  Embedding: the token (and position, token type)
 * indices, 8 bytes each per token, the dropout mask s*h, BERT's LayerNorm
 * input p*s*h.  Head: final norm input p*s*h, LM head input p*s*h and the
 * 32-bit logits for the loss 4*s*V (Korthikanti sec. 4.3); BERT: MLM
 * transform input, GELU input, LayerNorm input, decoder input (4*p*s*h),
 * logits 4*s*V, pooler input and tanh output 2*p*h, NSP logits 4*2.
 * ResNet: every convolution's output is kept twice (BN input; BN or ReLU
 * output, which is also the next convolution's input), the projection's
 * output once (BN input); the stem keeps the image, its conv output twice,
 * the max-pool indices (8 bytes each) and the max-pool output; the head
 * keeps the pooled vector p*2048 and the 32-bit logits 4*classes.
 *
 * Output activation (act_mb): the tensor passed to the next pipeline
 * stage, p*s*h for the embedding and every block, p*C*H*W of a ResNet
 * block's output.  The last row (the head) sends nothing onward: 0.
 *
 * Tensor-parallel traffic (tp_mb): the payload in bytes of the
 * all-reduces one sample causes when the layer is split over a TP group,
 * forward and backward together; the cost model multiplies it by the
 * ring factor 2(t-1)/t.  Megatron-LM (Shoeybi et al. 2019, sec. 3):
 * a block does one all-reduce of p*s*h after attention and one after the
 * MLP in forward, and two of the same size on the input gradients in
 * backward: 4*p*s*h.  The vocabulary-parallel embedding all-reduces its
 * output in forward (p*s*h); the vocabulary-parallel LM head all-reduces
 * its input gradient in backward (p*s*h) and its cross-entropy does three
 * all-reduces of s 32-bit values (max, sum of exponentials, target
 * logit): 12*s.  BERT's MLM transform and pooler are replicated (no
 * traffic).  ResNet has no standard tensor parallelism; dlplan assumes
 * every convolution and the fc layer are split by output channels: the
 * forward all-gathers each output (an all-gather of X bytes moves half
 * what an all-reduce of X does, so it counts X/2) and the backward
 * all-reduces each input gradient (the image needs none).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modelgen.h"

#define F_GPT	(1u << MG_GPT)
#define F_LLAMA	(1u << MG_LLAMA)
#define F_BERT	(1u << MG_BERT)
#define F_RES	(1u << MG_RESNET50)
#define F_TF	(F_GPT | F_LLAMA | F_BERT)

const struct mg_field mg_fields[MG_NFIELDS + 1] = {
	{ "layers", offsetof(struct mg_arch, layers), 1, 10000, F_TF, 1 },
	{ "hidden", offsetof(struct mg_arch, hidden), 1, 1048576, F_TF, 1 },
	{ "heads", offsetof(struct mg_arch, heads), 1, 1048576, F_TF, 1 },
	{ "kv-heads", offsetof(struct mg_arch, kv_heads), 1, 1048576, F_TF, 0 },
	{ "ffn", offsetof(struct mg_arch, ffn), 1, 4194304, F_TF, 0 },
	{ "vocab", offsetof(struct mg_arch, vocab), 1, 16777216, F_TF, 1 },
	{ "seq", offsetof(struct mg_arch, seq), 1, 16777216, F_TF, 1 },
	{ "positions", offsetof(struct mg_arch, positions), 1, 16777216,
	    F_GPT | F_BERT, 0 },
	{ "dtype-bytes", offsetof(struct mg_arch, dtype_bytes), 1, 8,
	    F_TF | F_RES, 0 },
	{ "image", offsetof(struct mg_arch, image), 32, 16384, F_RES, 0 },
	{ "classes", offsetof(struct mg_arch, classes), 1, 16777216, F_RES,
	    0 },
	{ NULL, 0, 0, 0, 0, 0 }
};

/*
 * Published hyper-parameters.  GPT-2 XL: Radford et al. 2019 table 2 and
 * the released config (n_ctx 1024, vocab 50257).  GPT-3 175B: Brown et al.
 * 2020 table 2.1 (n_ctx 2048, the GPT-2 vocabulary).  Llama 2: Touvron et
 * al. 2023 and the released params.json files (70B: 8 KV heads, ffn
 * 28672).  BERT-large: Devlin et al. 2019 (L=24, H=1024, A=16, 512
 * positions, WordPiece vocabulary 30522).  ResNet-50: He et al. 2016.
 * Dropout: GPT-2/3 and BERT train with it, Llama does not.
 */
#define TF(fam, l, h, a, g, f, v, s, pos, tie, drop) { .family = fam, \
	.layers = l, .hidden = h, .heads = a, .kv_heads = g, .ffn = f, \
	.vocab = v, .seq = s, .positions = pos, .dtype_bytes = 2, \
	.tied = tie, .dropout = drop }

const struct mg_preset mg_presets[] = {
	{ "gpt2-xl", TF(MG_GPT, 48, 1600, 25, 25, 6400, 50257, 1024, 1024,
	    1, 1) },
	{ "gpt3-175b", TF(MG_GPT, 96, 12288, 96, 96, 49152, 50257, 2048,
	    2048, 1, 1) },
	{ "llama2-7b", TF(MG_LLAMA, 32, 4096, 32, 32, 11008, 32000, 4096, 0,
	    0, 0) },
	{ "llama2-13b", TF(MG_LLAMA, 40, 5120, 40, 40, 13824, 32000, 4096,
	    0, 0, 0) },
	{ "llama2-70b", TF(MG_LLAMA, 80, 8192, 64, 8, 28672, 32000, 4096, 0,
	    0, 0) },
	{ "bert-large", TF(MG_BERT, 24, 1024, 16, 16, 4096, 30522, 512, 512,
	    1, 1) },
	{ "resnet50", { .family = MG_RESNET50, .dtype_bytes = 2,
	    .image = 224, .classes = 1000 } },
	{ NULL, { 0 } }
};

static const char *const family_names[MG_NFAMILY] = {
	"gpt", "llama", "bert", "resnet50"
};

const struct mg_arch *
mg_preset_find(const char *name)
{
	for (const struct mg_preset *p = mg_presets; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return &p->arch;
	return NULL;
}

const char *
mg_family_name(enum mg_family f)
{
	return (unsigned)f < MG_NFAMILY ? family_names[f] : "?";
}

int
mg_family_parse(const char *name)
{
	for (int i = 0; i < MG_NFAMILY; i++)
		if (strcmp(family_names[i], name) == 0)
			return i;
	return -1;
}

long *
mg_field_ptr(struct mg_arch *a, const struct mg_field *f)
{
	return (long *)(void *)((char *)a + f->off);
}

static long
field_get(const struct mg_arch *a, const struct mg_field *f)
{
	return *(const long *)(const void *)((const char *)a + f->off);
}

const struct mg_field *
mg_field_find(const char *name)
{
	for (const struct mg_field *f = mg_fields; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

void
mg_arch_init(struct mg_arch *a, enum mg_family f)
{
	memset(a, 0, sizeof(*a));
	a->family = f;
	a->dtype_bytes = 2;
	a->tied = f == MG_GPT || f == MG_BERT;
	a->dropout = f == MG_GPT || f == MG_BERT;
	if (f == MG_RESNET50) {
		a->image = 224;
		a->classes = 1000;
	}
}

const struct mg_field *
mg_missing(const struct mg_arch *a)
{
	for (const struct mg_field *f = mg_fields; f->name; f++)
		if (f->required && (f->families & (1u << a->family)) &&
		    field_get(a, f) == 0)
			return f;
	return NULL;
}

/* The next blank-separated word of *s into w (size n); 0 at the end. */
static int
next_word(const char **s, char *w, size_t n)
{
	const char *p = *s;
	size_t len;

	while (*p == ' ' || *p == '\t')
		p++;
	for (len = 0; p[len] != '\0' && p[len] != ' ' && p[len] != '\t';
	    len++)
		;
	if (len == 0 || len >= n)
		return 0;
	memcpy(w, p, len);
	w[len] = '\0';
	*s = p + len;
	return 1;
}

int
mg_arch_parse(const char *line, struct mg_arch *a)
{
	const struct mg_arch *pre;
	const struct mg_field *f;
	struct mg_arch b;
	char w[64], v[64], *end;
	int fam, have = 0;
	long n;

	if (line == NULL || !next_word(&line, w, sizeof(w)) ||
	    strcmp(w, "dlplan") != 0 || !next_word(&line, w, sizeof(w)) ||
	    strcmp(w, "model") != 0)
		return 0;
	memset(&b, 0, sizeof(b));
	while (next_word(&line, w, sizeof(w))) {
		if (strncmp(w, "--", 2) != 0) {
			if (have || (fam = mg_family_parse(w)) < 0)
				return 0;
			mg_arch_init(&b, (enum mg_family)fam);
			have = 1;
			continue;
		}
		if (!next_word(&line, v, sizeof(v)))
			return 0;
		if (strcmp(w, "--preset") == 0) {
			if ((pre = mg_preset_find(v)) == NULL || (have &&
			    pre->family != b.family))
				return 0;
			b = *pre;
			have = 1;
		} else if (strcmp(w, "--tied") == 0 && have) {
			if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0)
				return 0;
			b.tied = v[0] == 'y';
		} else if ((f = mg_field_find(w + 2)) != NULL && have) {
			n = strtol(v, &end, 10);
			if (*end != '\0' || n < f->min || n > f->max)
				return 0;
			*mg_field_ptr(&b, f) = n;
		} else
			return 0;
	}
	if (!have || mg_missing(&b) != NULL)
		return 0;
	mg_complete(&b);
	*a = b;
	return 1;
}

/*
 * Defaults of the derived fields.  ffn: 4h for GPT and BERT (Vaswani et
 * al. 2017); for LLaMA the reference code's int(8h/3) rounded up to a
 * multiple of 256 (llama2-7b: 11008).  The caller has range-checked the
 * fields these are computed from, so nothing overflows.
 */
void
mg_complete(struct mg_arch *a)
{
	if (a->family == MG_RESNET50)
		return;
	if (a->kv_heads == 0)
		a->kv_heads = a->heads;
	if (a->ffn == 0) {
		if (a->family == MG_LLAMA)
			a->ffn = (8 * a->hidden / 3 + 255) / 256 * 256;
		else
			a->ffn = 4 * a->hidden;
	}
	if (a->positions == 0 && a->family != MG_LLAMA)
		a->positions = a->seq;
}

/* Range and applicability of every field; unset (0) is allowed when
 * allow_unset. */
static int
check_fields(const struct mg_arch *a, int allow_unset, struct dl_err *e)
{
	const char *fam = mg_family_name(a->family);

	for (const struct mg_field *f = mg_fields; f->name; f++) {
		long v = field_get(a, f);

		if (!(f->families & (1u << a->family))) {
			if (v != 0)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "'%s' does not apply to %s", f->name, fam);
			continue;
		}
		if (v == 0 && (allow_unset || !f->required))
			continue;
		if (v == 0)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "'%s' is not set for %s", f->name, fam);
		if (v < f->min || v > f->max)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "'%s' %ld is out of range [%ld, %ld]", f->name, v,
			    f->min, f->max);
	}
	return DL_OK;
}

static int
check_arch(const struct mg_arch *a, struct dl_err *e)
{
	if (check_fields(a, 0, e) != DL_OK)
		return DL_EUSAGE;
	if (a->family == MG_RESNET50)
		return DL_OK;
	if (a->hidden % a->heads != 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "'hidden' %ld is not a multiple of 'heads' %ld", a->hidden,
		    a->heads);
	if (a->kv_heads > a->heads || a->heads % a->kv_heads != 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "'kv-heads' %ld does not divide 'heads' %ld", a->kv_heads,
		    a->heads);
	if (a->family != MG_LLAMA && a->seq > a->positions)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "'seq' %ld exceeds the %ld learned 'positions'", a->seq,
		    a->positions);
	return DL_OK;
}

/* Append a row; flop, params and bytes are plain counts. */
static void
add_row(struct mg_model *m, size_t *cap, const char *name, double flop,
    double params, double act, double mem, double tp)
{
	struct mg_row *r;

	m->rows = xgrow(m->rows, cap, m->nrows + 1, sizeof(*m->rows));
	r = &m->rows[m->nrows++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->fwd_gflop = flop / 1e9;
	r->bwd_gflop = 2 * r->fwd_gflop;
	r->params_m = params / 1e6;
	r->act_mb = act / 1e6;
	r->mem_mb = mem / 1e6;
	r->tp_mb = tp / 1e6;
}

/* GPT, LLaMA and BERT; the formulas are in the comment at the top. */
static void
gen_transformer(const struct mg_arch *a, struct mg_model *m, size_t *cap)
{
	double s = a->seq, h = a->hidden, nh = a->heads, F = a->ffn;
	double V = a->vocab, P = a->positions, p = a->dtype_bytes;
	double k = (double)a->kv_heads * (double)(a->hidden / a->heads);
	double drop = a->dropout ? 1 : 0;
	int llama = a->family == MG_LLAMA, bert = a->family == MG_BERT;
	double mats, params, flop, mem, ids;
	char name[32];

	/* Embedding: tokens, learned positions, BERT token types + LN. */
	params = V * h;
	ids = 1;
	mem = drop * s * h;
	if (!llama) {
		params += P * h;
		ids++;
	}
	if (bert) {
		params += 2 * h + 2 * h;
		ids++;
		mem += p * s * h;
	}
	mem += 8 * s * ids;
	add_row(m, cap, "embed", 0, params, p * s * h, mem, p * s * h);

	/* Transformer blocks, all alike. */
	mats = h * (h + 2 * k) + h * h + (llama ? 3 : 2) * h * F;
	params = mats;
	if (llama)
		params += 2 * h;			/* two RMSNorms */
	else
		params += (h + 2 * k) + h + F + h + 4 * h; /* biases, LNs */
	flop = 2 * s * mats + 4 * s * s * h;
	mem = p * s * (6 * h + 2 * k) + 2 * drop * s * h +
	    (p * (1 + drop) + drop) * nh * s * s +
	    (llama ? 4 : 2) * p * s * F;
	for (long i = 0; i < a->layers; i++) {
		snprintf(name, sizeof(name), "block%ld", i);
		add_row(m, cap, name, flop, params, p * s * h, mem,
		    4 * p * s * h);
	}

	/* Head: final norm and LM head, or BERT's MLM, pooler and NSP. */
	if (bert) {
		params = (h * h + h) + 2 * h + V + (h * h + h) + (2 * h + 2);
		flop = 2 * s * h * h + 2 * s * h * V + 2 * h * h + 2 * h * 2;
		mem = 4 * p * s * h + 4 * s * V + 2 * p * h + 4 * 2;
	} else {
		params = llama ? h : 2 * h;
		flop = 2 * s * h * V;
		mem = 2 * p * s * h + 4 * s * V;
	}
	if (!a->tied)
		params += V * h;
	add_row(m, cap, "head", flop, params, 0, mem, p * s * h + 12 * s);
}

static long
conv_out(long in, long kernel, long stride, long pad)
{
	return (in + 2 * pad - kernel) / stride + 1;
}

/* ResNet-50 v1.5; see the comment at the top. */
static void
gen_resnet50(const struct mg_arch *a, struct mg_model *m, size_t *cap)
{
	static const int nblocks[4] = { 3, 4, 6, 3 };
	static const int widths[4] = { 64, 128, 256, 512 };
	double p = a->dtype_bytes, ncls = a->classes;
	double macs, params, mem, img, y1, y2, y3, x;
	long s1, hw, hw2;
	double c;
	char name[32];

	/* Stem: 7x7/2 conv 3->64 + BN + ReLU, 3x3/2 max pool. */
	s1 = conv_out(a->image, 7, 2, 3);
	hw = conv_out(s1, 3, 2, 1);
	img = (double)a->image * a->image;
	y1 = 64.0 * s1 * s1;
	x = 64.0 * hw * hw;
	macs = y1 * 3 * 7 * 7;
	params = 3 * 64 * 7 * 7 + 2 * 64;
	mem = p * 3 * img + 2 * p * y1 + 8 * x + p * x;
	add_row(m, cap, "stem", 2 * macs, params, p * x, mem, p * x / 2);

	c = 64;
	for (int st = 0; st < 4; st++) {
		double w = widths[st];

		for (int b = 0; b < nblocks[st]; b++) {
			int ds = b == 0;
			long stride = (ds && st > 0) ? 2 : 1;

			hw2 = conv_out(hw, 3, stride, 1);
			x = c * hw * hw;		/* block input */
			y1 = w * hw * hw;
			y2 = w * hw2 * hw2;
			y3 = 4 * w * hw2 * hw2;
			macs = y1 * c + y2 * 9 * w + y3 * w +
			    (ds ? y3 * c : 0);
			params = c * w + 9 * w * w + 4 * w * w +
			    2 * w + 2 * w + 8 * w + (ds ? 4 * w * c + 8 * w : 0);
			mem = p * (2 * y1 + 2 * y2 + 2 * y3 + (ds ? y3 : 0));
			snprintf(name, sizeof(name), "conv%d_%d", st + 2,
			    b + 1);
			add_row(m, cap, name, 2 * macs, params, p * y3, mem,
			    p * ((y1 + y2 + y3) / 2 + x + y1 + y2));
			c = 4 * w;
			hw = hw2;
		}
	}

	/* Head: global average pool, fc c->classes, loss. */
	add_row(m, cap, "head", 2 * c * ncls, c * ncls + ncls, 0,
	    p * c + 4 * ncls, 4 * ncls / 2 + p * c);
}

/* Is v finite and within [0, max]? */
static int
sane(double v, double max)
{
	return isfinite(v) && v >= 0 && v <= max;
}

/* Check every number of r; where says which row ("of 'block0'"). */
static int
check_row(const struct mg_row *r, const char *where, struct dl_err *e)
{
	static const struct {
		const char *label, *unit;
		size_t off;
		double max;
	} q[] = {
		{ "forward work", "GFLOP per sample",
		    offsetof(struct mg_row, fwd_gflop), MG_MAX_GFLOP },
		{ "backward work", "GFLOP per sample",
		    offsetof(struct mg_row, bwd_gflop), MG_MAX_GFLOP },
		{ "parameters", "million",
		    offsetof(struct mg_row, params_m), MG_MAX_PARAMS_M },
		{ "output activation", "MB per sample",
		    offsetof(struct mg_row, act_mb), MG_MAX_MB },
		{ "activation memory", "MB per sample",
		    offsetof(struct mg_row, mem_mb), MG_MAX_MB },
		{ "tensor-parallel traffic", "MB per sample",
		    offsetof(struct mg_row, tp_mb), MG_MAX_MB },
	};

	for (size_t i = 0; i < ARRAY_SIZE(q); i++) {
		double v = *(const double *)(const void *)
		    ((const char *)r + q[i].off);

		if (!sane(v, q[i].max))
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "model too large: %s %s is %g %s, more than %g",
			    q[i].label, where, v, q[i].unit, q[i].max);
	}
	return DL_OK;
}

int
mg_generate(const struct mg_arch *arch, struct mg_model *m,
    struct dl_err *e)
{
	struct mg_arch a = *arch;
	struct mg_totals t;
	struct mg_row tot;
	size_t cap = 0;

	m->rows = NULL;
	m->nrows = 0;
	/* Check before deriving, so that the derivations cannot overflow. */
	if ((unsigned)a.family >= MG_NFAMILY)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "unknown model family %d", (int)a.family);
	if (check_fields(&a, 1, e) != DL_OK)
		return DL_EUSAGE;
	mg_complete(&a);
	if (check_arch(&a, e) != DL_OK)
		return DL_EUSAGE;
	if (a.family == MG_RESNET50)
		gen_resnet50(&a, m, &cap);
	else
		gen_transformer(&a, m, &cap);

	for (size_t i = 0; i < m->nrows; i++) {
		char where[40];

		snprintf(where, sizeof(where), "of '%s'", m->rows[i].name);
		if (check_row(&m->rows[i], where, e) != DL_OK)
			goto bad;
	}
	mg_totals(m, &t);
	memset(&tot, 0, sizeof(tot));
	tot.fwd_gflop = t.fwd_gflop;
	tot.bwd_gflop = t.bwd_gflop;
	tot.params_m = t.params_m;
	tot.mem_mb = t.mem_mb;
	tot.tp_mb = t.tp_mb;
	if (check_row(&tot, "in total", e) != DL_OK)
		goto bad;
	return DL_OK;
bad:
	mg_free(m);
	return DL_EUSAGE;
}

void
mg_free(struct mg_model *m)
{
	free(m->rows);
	m->rows = NULL;
	m->nrows = 0;
}

void
mg_totals(const struct mg_model *m, struct mg_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < m->nrows; i++) {
		t->fwd_gflop += m->rows[i].fwd_gflop;
		t->bwd_gflop += m->rows[i].bwd_gflop;
		t->params_m += m->rows[i].params_m;
		t->mem_mb += m->rows[i].mem_mb;
		t->tp_mb += m->rows[i].tp_mb;
	}
}

double
mg_megatron_flops(const struct mg_arch *a, long batch, long pad)
{
	double B = (double)batch, S = (double)a->seq, h = (double)a->hidden;
	double L = (double)a->layers, F = (double)a->ffn, q = h;
	double kv = (double)a->kv_heads * (h / (double)a->heads);
	double e = a->family == MG_LLAMA ? 3 : 2, V;

	if (a->family != MG_GPT && a->family != MG_LLAMA)
		return 0;
	if (pad < 1)
		pad = 1;
	V = (double)((a->vocab + pad - 1) / pad * pad);
	return 6 * B * S * (L * (F * e * h + h * (q + 2 * kv) + q * h) +
	    h * V) + 6 * B * S * S * L * q;
}
