/*
 * import_megatron.c - a Megatron-LM command line as a dlplan plan
 * (import_megatron.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Megatron-LM at commit d98e8a64ddf3 (2026-08-22); FILE:LINE references
 * are to that commit.  Flags of configuration dataclass fields are "--"
 * and the field name with "-" for "_" (megatron/training/
 * argument_utils.py:106); the others are declared in megatron/training/
 * arguments.py.  argparse takes "--flag value" and "--flag=value" and no
 * abbreviations.  The defaults used when a flag is absent:
 *
 *	--tensor-model-parallel-size, --pipeline-model-parallel-size  1
 *	--global-batch-size	micro-batch x data-parallel size
 *				(arguments.py:702)
 *	--ffn-hidden-size	4h, with --swiglu int(8h/3 / 64) x 64
 *				(arguments.py:1320)
 *	--max-position-embeddings  the sequence length
 *	--hidden-dropout, --attention-dropout  0.1
 *				(core/transformer/transformer_config.py:188)
 *	--attention-backend	auto (transformer_config.py:151): a flash or
 *				fused kernel, which keep no scores
 *	--position-embedding-type learned_absolute, --normalization LayerNorm
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import_megatron.h"
#include "opt.h"

/* What an argument does. */
enum mkind {
	MK_INT,		/* read: an integer */
	MK_NUM,		/* read: a number */
	MK_WORD,	/* read: a word */
	MK_FLAG,	/* read: a flag */
	MK_SKIP,	/* changes neither memory nor time: one value */
	MK_SKIP_FLAG,	/* the same, a flag */
	MK_SKIP_MANY,	/* the same, every value up to the next flag */
	MK_SLOW,	/* changes time, not priced: one value, a warning */
	MK_SLOW_FLAG,	/* the same, a flag */
	MK_NO,		/* dlplan cannot express it: an error */
	MK_NO_FLAG	/* the same, a flag */
};

/* The arguments read (MK_INT .. MK_FLAG), indices into struct margs. */
enum {
	A_TP, A_PP, A_SP, A_MAP, A_LAYERS, A_HIDDEN, A_HEADS, A_GQA, A_GROUPS,
	A_FFN, A_SEQ, A_POS, A_VOCAB, A_POSTYPE, A_NORM, A_SWIGLU, A_NOBIAS,
	A_UNTIE, A_HDROP, A_ADROP, A_BF16, A_FP16, A_GRADBF16, A_BACKEND,
	A_FLASH, A_RCACT, A_RCGRAN, A_RCMETH, A_RCNUM, A_DISTOPT, A_MBS,
	A_GBS, A_FIRST, A_LAST, A_ACCEMB, A_ACCLOSS, A_CP, A_EP, A_KVCH,
	A_OPTIM, A_OVGRAD, A_OVPARAM, A_TPOV, A_VPL, A_VPN, A_NOP2P, A_NARGS
};

struct mflag {
	const char *name;	/* without "--" */
	enum mkind kind;
	int id;			/* A_*, for MK_INT .. MK_FLAG */
	const char *why;	/* MK_SLOW, MK_NO: what dlplan does instead */
};

#define FUSION "dlplan's compute time has one efficiency per GPU, with " \
	"or without this kernel"

/*
 * The table, sorted by name (bsearch).  A name missing here is an error:
 * dlplan does not guess whether an argument changes memory or time.
 */
static const struct mflag mflags[] = {
	{ "account-for-embedding-in-pipeline-split", MK_FLAG, A_ACCEMB, 0 },
	{ "account-for-loss-in-pipeline-split", MK_FLAG, A_ACCLOSS, 0 },
	{ "adam-beta1", MK_SKIP, 0, 0 },
	{ "adam-beta2", MK_SKIP, 0, 0 },
	{ "adam-eps", MK_SKIP, 0, 0 },
	{ "async-save", MK_SKIP_FLAG, 0, 0 },
	{ "attention-backend", MK_WORD, A_BACKEND, 0 },
	{ "attention-dropout", MK_NUM, A_ADROP, 0 },
	{ "bf16", MK_FLAG, A_BF16, 0 },
	{ "bias-gelu-fusion", MK_SLOW_FLAG, 0, FUSION },
	{ "ckpt-format", MK_SKIP, 0, 0 },
	{ "clip-grad", MK_SKIP, 0, 0 },
	{ "context-parallel-size", MK_INT, A_CP, 0 },
	{ "cpu-offloading", MK_NO_FLAG, 0, "dlplan keeps every activation and "
	    "all optimizer state on the GPU" },
	{ "cross-entropy-loss-fusion", MK_SLOW_FLAG, 0, FUSION },
	{ "data-cache-path", MK_SKIP, 0, 0 },
	{ "data-path", MK_SKIP_MANY, 0, 0 },
	{ "dataloader-type", MK_SKIP, 0, 0 },
	{ "decoder-first-pipeline-num-layers", MK_INT, A_FIRST, 0 },
	{ "decoder-last-pipeline-num-layers", MK_INT, A_LAST, 0 },
	{ "disable-bias-linear", MK_FLAG, A_NOBIAS, 0 },
	{ "distributed-backend", MK_SKIP, 0, 0 },
	{ "distributed-timeout-minutes", MK_SKIP, 0, 0 },
	{ "eod-mask-loss", MK_SKIP_FLAG, 0, 0 },
	{ "eval-interval", MK_SKIP, 0, 0 },
	{ "eval-iters", MK_SKIP, 0, 0 },
	{ "exit-duration-in-mins", MK_SKIP, 0, 0 },
	{ "exit-interval", MK_SKIP, 0, 0 },
	{ "expert-model-parallel-size", MK_INT, A_EP, 0 },
	{ "ffn-hidden-size", MK_INT, A_FFN, 0 },
	{ "fp16", MK_FLAG, A_FP16, 0 },
	{ "fp8-format", MK_NO, 0, "dlplan prices 16-bit compute and memory" },
	{ "global-batch-size", MK_INT, A_GBS, 0 },
	{ "grad-reduce-in-bf16", MK_FLAG, A_GRADBF16, 0 },
	{ "group-query-attention", MK_FLAG, A_GQA, 0 },
	{ "hidden-dropout", MK_NUM, A_HDROP, 0 },
	{ "hidden-size", MK_INT, A_HIDDEN, 0 },
	{ "hysteresis", MK_SKIP, 0, 0 },
	{ "init-method-std", MK_SKIP, 0, 0 },
	{ "initial-loss-scale", MK_SKIP, 0, 0 },
	{ "kv-channels", MK_INT, A_KVCH, 0 },
	{ "load", MK_SKIP, 0, 0 },
	{ "log-interval", MK_SKIP, 0, 0 },
	{ "log-throughput", MK_SKIP_FLAG, 0, 0 },
	{ "log-timers-to-tensorboard", MK_SKIP_FLAG, 0, 0 },
	{ "loss-scale", MK_SKIP, 0, 0 },
	{ "loss-scale-window", MK_SKIP, 0, 0 },
	{ "lr", MK_SKIP, 0, 0 },
	{ "lr-decay-iters", MK_SKIP, 0, 0 },
	{ "lr-decay-samples", MK_SKIP, 0, 0 },
	{ "lr-decay-style", MK_SKIP, 0, 0 },
	{ "lr-warmup-fraction", MK_SKIP, 0, 0 },
	{ "lr-warmup-iters", MK_SKIP, 0, 0 },
	{ "lr-warmup-samples", MK_SKIP, 0, 0 },
	{ "make-vocab-size-divisible-by", MK_SKIP, 0, 0 },
	{ "manual-gc", MK_SKIP_FLAG, 0, 0 },
	{ "max-position-embeddings", MK_INT, A_POS, 0 },
	{ "merge-file", MK_SKIP, 0, 0 },
	{ "micro-batch-size", MK_INT, A_MBS, 0 },
	{ "min-loss-scale", MK_SKIP, 0, 0 },
	{ "min-lr", MK_SKIP, 0, 0 },
	{ "mock-data", MK_SKIP_FLAG, 0, 0 },
	{ "no-gradient-accumulation-fusion", MK_SLOW_FLAG, 0, FUSION },
	{ "no-load-optim", MK_SKIP_FLAG, 0, 0 },
	{ "no-load-rng", MK_SKIP_FLAG, 0, 0 },
	{ "no-masked-softmax-fusion", MK_SLOW_FLAG, 0, FUSION },
	{ "no-overlap-p2p-communication", MK_FLAG, A_NOP2P, 0 },
	{ "no-save-optim", MK_SKIP_FLAG, 0, 0 },
	{ "normalization", MK_WORD, A_NORM, 0 },
	{ "num-attention-heads", MK_INT, A_HEADS, 0 },
	{ "num-experts", MK_NO, 0, "dlplan plans dense models" },
	{ "num-layers", MK_INT, A_LAYERS, 0 },
	{ "num-layers-per-virtual-pipeline-stage", MK_INT, A_VPL, 0 },
	{ "num-query-groups", MK_INT, A_GROUPS, 0 },
	{ "num-virtual-stages-per-pipeline-rank", MK_INT, A_VPN, 0 },
	{ "num-workers", MK_SKIP, 0, 0 },
	{ "optimizer", MK_WORD, A_OPTIM, 0 },
	{ "overlap-grad-reduce", MK_FLAG, A_OVGRAD, 0 },
	{ "overlap-param-gather", MK_FLAG, A_OVPARAM, 0 },
	{ "pipeline-model-parallel-layout", MK_NO, 0, "dlplan's stages hold "
	    "the embedding in the first stage and the loss in the last" },
	{ "pipeline-model-parallel-size", MK_INT, A_PP, 0 },
	{ "position-embedding-type", MK_WORD, A_POSTYPE, 0 },
	{ "rampup-batch-size", MK_SLOW, 0, "dlplan prices an iteration of "
	    "--global-batch-size" },
	{ "recompute-activations", MK_FLAG, A_RCACT, 0 },
	{ "recompute-granularity", MK_WORD, A_RCGRAN, 0 },
	{ "recompute-method", MK_WORD, A_RCMETH, 0 },
	{ "recompute-modules", MK_NO, 0, "dlplan's selective recomputation "
	    "is core attention (--recompute-activations)" },
	{ "recompute-num-layers", MK_INT, A_RCNUM, 0 },
	{ "reset-attention-mask", MK_SKIP_FLAG, 0, 0 },
	{ "reset-position-ids", MK_SKIP_FLAG, 0, 0 },
	{ "rotary-base", MK_SKIP, 0, 0 },
	{ "rotary-percent", MK_SKIP, 0, 0 },
	{ "save", MK_SKIP, 0, 0 },
	{ "save-interval", MK_SKIP, 0, 0 },
	{ "seed", MK_SKIP, 0, 0 },
	{ "seq-length", MK_INT, A_SEQ, 0 },
	{ "sequence-parallel", MK_FLAG, A_SP, 0 },
	{ "split", MK_SKIP, 0, 0 },
	{ "step-batch-size-schedule", MK_SLOW, 0, "dlplan prices an "
	    "iteration of --global-batch-size" },
	{ "swiglu", MK_FLAG, A_SWIGLU, 0 },
	{ "tensor-model-parallel-size", MK_INT, A_TP, 0 },
	{ "tensorboard-dir", MK_SKIP, 0, 0 },
	{ "tokenizer-model", MK_SKIP, 0, 0 },
	{ "tokenizer-type", MK_SKIP, 0, 0 },
	{ "tp-comm-overlap", MK_FLAG, A_TPOV, 0 },
	{ "train-iters", MK_SKIP, 0, 0 },
	{ "train-samples", MK_SKIP, 0, 0 },
	{ "transformer-impl", MK_SKIP, 0, 0 },
	{ "untie-embeddings-and-output-weights", MK_FLAG, A_UNTIE, 0 },
	{ "use-distributed-optimizer", MK_FLAG, A_DISTOPT, 0 },
	{ "use-flash-attn", MK_FLAG, A_FLASH, 0 },
	{ "use-mcore-models", MK_SKIP_FLAG, 0, 0 },
	{ "use-megatron-fsdp", MK_NO_FLAG, 0, "dlplan's sharded optimizer is "
	    "--use-distributed-optimizer: parameters and gradients stay whole" },
	{ "use-precision-aware-optimizer", MK_NO_FLAG, 0, "dlplan prices "
	    "fp32 master weights and Adam moments" },
	{ "use-torch-fsdp2", MK_NO_FLAG, 0, "dlplan's sharded optimizer is "
	    "--use-distributed-optimizer: parameters and gradients stay whole" },
	{ "use-tp-pp-dp-mapping", MK_FLAG, A_MAP, 0 },
	{ "vocab-file", MK_SKIP, 0, 0 },
	{ "vocab-size", MK_INT, A_VOCAB, 0 },
	{ "wandb-exp-name", MK_SKIP, 0, 0 },
	{ "wandb-project", MK_SKIP, 0, 0 },
	{ "wandb-save-dir", MK_SKIP, 0, 0 },
	{ "weight-decay", MK_SKIP, 0, 0 },
};
#define NMFLAGS (sizeof(mflags) / sizeof(mflags[0]))

/* The arguments read: set[i] when given, as l[i], d[i] or w[i]. */
struct margs {
	int set[A_NARGS];
	long l[A_NARGS];
	double d[A_NARGS];
	const char *w[A_NARGS];
};

static int
cmp_flag(const void *k, const void *f)
{
	return strcmp(k, ((const struct mflag *)f)->name);
}

static const struct mflag *
find_flag(const char *name)
{
	return bsearch(name, mflags, NMFLAGS, sizeof(mflags[0]), cmp_flag);
}

/* "unknown megatron argument", with the nearest known name if any. */
static int
unknown(const char *word, const char *name, struct dl_err *e)
{
	const char *names[NMFLAGS];
	const char *near;

	for (size_t i = 0; i < NMFLAGS; i++)
		names[i] = mflags[i].name;
	near = opt_nearest(name, names, NMFLAGS);
	return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "unknown megatron argument "
	    "'%s': dlplan does not know whether it changes memory or time%s%s%s "
	    "(dlplan(1), IMPORT, lists the arguments it reads)", word,
	    near ? " (did you mean '--" : "", near ? near : "",
	    near ? "'?)" : "");
}

/* Read the words into a; -1 with e set on the first bad one. */
static int
parse(char *const *args, int n, struct margs *a, struct dl_err *e)
{
	for (int i = 0; i < n; i++) {
		const char *w = args[i], *eq, *val = NULL;
		char name[96];
		const struct mflag *f;
		size_t len;

		if (strncmp(w, "--", 2) != 0 || w[2] == '\0')
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '%s': expected an option (--NAME)", w);
		eq = strchr(w, '=');
		len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
		if (len >= sizeof(name))
			return unknown(w, "", e);
		memcpy(name, w + 2, len);
		name[len] = '\0';
		if ((f = find_flag(name)) == NULL)
			return unknown(w, name, e);
		switch (f->kind) {
		case MK_FLAG:
		case MK_SKIP_FLAG:
		case MK_SLOW_FLAG:
		case MK_NO_FLAG:
			if (eq)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "megatron argument '--%s' takes no value "
				    "(got '%s')", name, eq + 1);
			break;
		case MK_SKIP_MANY:
			if (eq)
				break;
			while (i + 1 < n && strncmp(args[i + 1], "--", 2))
				i++;
			break;
		default:
			if (eq)
				val = eq + 1;
			else if (i + 1 < n)
				val = args[++i];
			else
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "megatron argument '--%s' needs a value",
				    name);
		}
		switch (f->kind) {
		case MK_INT:
			if (parse_long(val, 0, 1L << 40, &a->l[f->id]) != 0)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "megatron argument '--%s %s': expected a "
				    "whole number", name, val);
			break;
		case MK_NUM:
			if (parse_double(val, 0, 1, &a->d[f->id]) != 0)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "megatron argument '--%s %s': expected a "
				    "number from 0 to 1", name, val);
			break;
		case MK_WORD:
			a->w[f->id] = val;
			break;
		case MK_FLAG:
			a->l[f->id] = 1;
			break;
		case MK_SLOW:
		case MK_SLOW_FLAG:
			if (dl_verbose >= 0)
				dl_warn("warning: megatron argument '--%s': "
				    "%s", name, f->why);
			continue;
		case MK_NO:
		case MK_NO_FLAG:
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
			    "argument '--%s': %s", name, f->why);
		default:
			continue;
		}
		a->set[f->id] = 1;
	}
	return 0;
}

/* The value of integer argument id, or def when absent. */
static long
num(const struct margs *a, int id, long def)
{
	return a->set[id] ? a->l[id] : def;
}

/* A size the model fixes: --name must be absent (then def applies) or v. */
static int
same(const struct margs *a, int id, const char *name, long def, long v,
    const struct dl_model *m, const char *what, struct dl_err *e)
{
	long got = num(a, id, def);

	if (got == v)
		return 0;
	if (!a->set[id])
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "no --%s: megatron's "
		    "default is %ld, model '%s' has %s %ld (give --%s %ld)",
		    name, def, m->path, what, v, name, v);
	return dl_seterr(e, DL_EDATA, NULL, 0, 0, "megatron argument "
	    "'--%s %ld': model '%s' has %s %ld", name, got, m->path, what, v);
}

/* A flag the model's family fixes: given exactly when want. */
static int
flag_is(const struct margs *a, int id, const char *name, int want,
    const struct dl_model *m, const char *what, struct dl_err *e)
{
	if (!!a->set[id] == !!want)
		return 0;
	if (want)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "no --%s: model '%s' "
		    "%s", name, m->path, what);
	return dl_seterr(e, DL_EDATA, NULL, 0, 0, "megatron argument '--%s': "
	    "model '%s' %s", name, m->path, what);
}

/* A word argument that must be one of the words of want ("a|b"). */
static int
word_is(const struct margs *a, int id, const char *name, const char *def,
    const char *want, const struct dl_model *m, struct dl_err *e)
{
	const char *w = a->set[id] ? a->w[id] : def;

	if (strcmp(w, want) == 0)
		return 0;
	return dl_seterr(e, DL_EDATA, NULL, 0, 0, "%s '--%s %s': model '%s' "
	    "needs --%s %s", a->set[id] ? "megatron argument" : "the default",
	    name, w, m->path, name, want);
}

/* The model and the arguments that describe it agree. */
static int
check_model(const struct margs *a, const struct dl_model *m, struct dl_err *e)
{
	const struct mg_arch *r = &m->arch;
	int llama = r->family == MG_LLAMA;
	long h = r->hidden, ffn_def = a->set[A_SWIGLU] ?
	    (long)((4.0 * h * 2 / 3) / 64) * 64 : 4 * h;
	long groups = a->set[A_GQA] ? num(a, A_GROUPS, 1) :
	    num(a, A_HEADS, 0);

	if (!model_is_transformer(m) || (r->family != MG_GPT && !llama))
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "model '%s' is not "
		    "a gpt or llama model written by 'dlplan model' (megatron's "
		    "pretrain_gpt.py builds those)", m->path);
	for (int i = 0; i < 3; i++) {
		static const int id[] = { A_LAYERS, A_HIDDEN, A_HEADS };
		static const char *const nm[] = { "num-layers",
		    "hidden-size", "num-attention-heads" };

		if (!a->set[id[i]])
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no --%s "
			    "(megatron requires it)", nm[i]);
	}
	if (!a->set[A_SEQ])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no --seq-length "
		    "(megatron requires it)");
	if (same(a, A_LAYERS, "num-layers", 0, r->layers, m,
	    "transformer layers", e) ||
	    same(a, A_HIDDEN, "hidden-size", 0, h, m, "hidden size", e) ||
	    same(a, A_HEADS, "num-attention-heads", 0, r->heads, m,
	    "attention heads", e) ||
	    same(a, A_SEQ, "seq-length", 0, r->seq, m, "sequence length",
	    e) ||
	    same(a, A_FFN, "ffn-hidden-size", ffn_def, r->ffn, m,
	    "an MLP inner size of", e))
		return -1;
	if (groups != r->kv_heads)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "megatron arguments "
		    "give %ld query groups (--group-query-attention "
		    "--num-query-groups), model '%s' has %ld key/value heads",
		    groups, m->path, r->kv_heads);
	if (a->set[A_KVCH] && a->l[A_KVCH] * r->heads != h)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "megatron argument "
		    "'--kv-channels %ld': model '%s' has heads of %ld",
		    a->l[A_KVCH], m->path, h / r->heads);
	if (a->set[A_VOCAB] && a->l[A_VOCAB] != r->vocab)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "megatron argument "
		    "'--vocab-size %ld': model '%s' has a vocabulary of %ld",
		    a->l[A_VOCAB], m->path, r->vocab);
	if (!a->set[A_VOCAB] && dl_verbose >= 0)
		dl_warn("warning: no --vocab-size: taking the tokenizer's "
		    "vocabulary to be the model's, %ld (model '%s')", r->vocab,
		    m->path);
	if (!llama && same(a, A_POS, "max-position-embeddings", r->seq,
	    r->positions, m, "learned positions", e))
		return -1;
	if (num(a, A_POS, r->seq) < r->seq)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--max-position-embeddings %ld' is below --seq-length %ld "
		    "(megatron/training/arguments.py:1354)", a->l[A_POS],
		    r->seq);
	if (word_is(a, A_POSTYPE, "position-embedding-type",
	    "learned_absolute", llama ? "rope" : "learned_absolute", m, e) ||
	    word_is(a, A_NORM, "normalization", "LayerNorm", llama ?
	    "RMSNorm" : "LayerNorm", m, e) ||
	    flag_is(a, A_SWIGLU, "swiglu", llama, m, llama ? "has a SwiGLU "
	    "MLP" : "has a GELU MLP", e) ||
	    flag_is(a, A_NOBIAS, "disable-bias-linear", llama, m, llama ?
	    "has no linear biases" : "has linear biases", e) ||
	    flag_is(a, A_UNTIE, "untie-embeddings-and-output-weights",
	    !r->tied, m, r->tied ? "ties the head to the embedding" :
	    "has a head of its own", e))
		return -1;
	for (int i = 0; i < 2; i++) {
		int id = i ? A_ADROP : A_HDROP;
		const char *nm = i ? "attention-dropout" : "hidden-dropout";
		double p = a->set[id] ? a->d[id] : 0.1;

		if ((p > 0) != !!r->dropout)
			return dl_seterr(e, DL_EDATA, NULL, 0, 0, "%s '--%s %g': "
			    "model '%s' trains %s dropout (give --%s %s)",
			    a->set[id] ? "megatron argument" : "the default",
			    nm, p, m->path, r->dropout ? "with" : "without",
			    nm, r->dropout ? "0.1" : "0");
	}
	return 0;
}

/* The parallel sizes, precision and savers Megatron accepts. */
static int
check_run(const struct margs *a, const struct dl_model *m, long tp,
    struct dl_err *e)
{
	const struct mg_arch *r = &m->arch;
	long groups = r->kv_heads;

	if (num(a, A_CP, 1) != 1)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--context-parallel-size %ld': dlplan plans no context "
		    "parallelism", a->l[A_CP]);
	if (num(a, A_EP, 1) != 1)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--expert-model-parallel-size %ld': dlplan plans dense "
		    "models", a->l[A_EP]);
	if (tp != 1 && tp != 2 && tp != 4 && tp != 8)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--tensor-model-parallel-size %ld': dlplan's tensor "
		    "parallelism is 1, 2, 4 or 8 GPUs of one node", tp);
	if (num(a, A_PP, 1) < 1)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--pipeline-model-parallel-size 0': expected at least 1");
	if (r->heads % tp || (groups % tp && tp % groups))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "TP %ld does not "
		    "divide the %ld attention heads, or is neither a multiple "
		    "nor a divisor of the %ld query groups (megatron/core/"
		    "transformer/transformer_config.py:1446, 1461)", tp,
		    r->heads, groups);
	/* arguments.py:1024-1029 (d98e8a64). */
	if (a->set[A_OVPARAM] && !a->set[A_DISTOPT])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--overlap-param-gather' needs --use-distributed-optimizer "
		    "(megatron/training/arguments.py:1025)");
	if (a->set[A_OVPARAM] && !a->set[A_OVGRAD])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--overlap-param-gather' needs --overlap-grad-reduce "
		    "(megatron/training/arguments.py:1028)");
	if (a->set[A_TPOV] && !a->set[A_SP])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--tp-comm-overlap' needs --sequence-parallel (its "
		    "all-gathers and reduce-scatters are what overlap)");
	if (a->set[A_TPOV] && !a->set[A_OVGRAD])
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--tp-comm-overlap' without --overlap-grad-reduce: dlplan "
		    "prices the tensor-parallel overlap only together with the "
		    "data-parallel one (--overlap dp+tp)");
	if (a->set[A_OVGRAD] && a->set[A_DISTOPT] && !a->set[A_OVPARAM])
		dl_warn("warning: megatron arguments '--overlap-grad-reduce "
		    "--use-distributed-optimizer' without "
		    "'--overlap-param-gather': dlplan prices the parameter "
		    "gather overlapped too, so the time is a lower bound here");
	if (a->set[A_SP] && tp == 1)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--sequence-parallel' needs TP > 1 (megatron/core/"
		    "model_parallel_config.py:502)");
	if (tp > 1 && !a->set[A_SP])
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "TP %ld without "
		    "--sequence-parallel: dlplan's memory model divides every "
		    "activation of a stage by TP (tensor and sequence "
		    "parallelism together); without it megatron keeps the "
		    "LayerNorm and dropout activations whole on every TP rank",
		    tp);
	if (tp > 1 && r->seq % tp)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "sequence "
		    "parallelism splits the %ld tokens of a sequence over TP "
		    "%ld: not a multiple", r->seq, tp);
	if (a->set[A_BF16] && a->set[A_FP16])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron arguments "
		    "'--bf16' and '--fp16' together (megatron/training/"
		    "arguments.py:1205)");
	if ((r->dtype_bytes == 2) != (a->set[A_BF16] || a->set[A_FP16]))
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "model '%s' has "
		    "%ld-byte activations: %s", m->path, r->dtype_bytes,
		    r->dtype_bytes == 2 ? "expected --bf16 or --fp16" :
		    "megatron trains it in fp32 (no --bf16, no --fp16)");
	if (a->set[A_GRADBF16] && !a->set[A_BF16])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--grad-reduce-in-bf16' needs --bf16");
	if (a->set[A_OPTIM] && strcmp(a->w[A_OPTIM], "adam") != 0)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--optimizer %s': dlplan prices Adam's state (two fp32 "
		    "moments and fp32 master weights)", a->w[A_OPTIM]);
	return 0;
}

/* Attention kernel and recomputation into o. */
static int
savers(const struct margs *a, struct dl_opts *o, long *rc_blocks,
    struct dl_err *e)
{
	const char *be = a->set[A_BACKEND] ? a->w[A_BACKEND] : "auto";
	const char *gran = a->set[A_RCGRAN] ? a->w[A_RCGRAN] :
	    a->set[A_RCACT] ? "selective" : NULL;

	if (strcmp(be, "auto") == 0 || strcmp(be, "flash") == 0 ||
	    strcmp(be, "fused") == 0)
		o->attention = ATTN_FUSED;
	else if (strcmp(be, "unfused") == 0 || strcmp(be, "local") == 0)
		o->attention = a->set[A_FLASH] ? ATTN_FUSED : ATTN_UNFUSED;
	else
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--attention-backend %s': expected auto, flash, fused, "
		    "unfused or local", be);
	*rc_blocks = 0;
	o->recompute = RC_NONE;
	if (gran == NULL) {
		if (a->set[A_RCMETH] || a->set[A_RCNUM])
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '--%s' without --recompute-granularity "
			    "full", a->set[A_RCMETH] ? "recompute-method" :
			    "recompute-num-layers");
		return 0;
	}
	if (strcmp(gran, "selective") == 0) {
		if (a->set[A_RCNUM])
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '--recompute-num-layers' with selective "
			    "recomputation (megatron/core/transformer/"
			    "transformer_config.py:1926)");
		o->recompute = RC_SELECTIVE;
		return 0;
	}
	if (strcmp(gran, "full") != 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--recompute-granularity %s': expected full or selective",
		    gran);
	if (!a->set[A_RCMETH] || !a->set[A_RCNUM])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "full recomputation "
		    "needs --recompute-method and --recompute-num-layers "
		    "(megatron/core/transformer/transformer_config.py:1913, "
		    "1919)");
	if (a->l[A_RCNUM] < 1)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--recompute-num-layers 0': expected at least 1");
	if (strcmp(a->w[A_RCMETH], "block") == 0)
		*rc_blocks = a->l[A_RCNUM];
	else if (strcmp(a->w[A_RCMETH], "uniform") == 0) {
		/*
		 * Uniform recomputes every layer, a chunk of N at a time:
		 * with N = 1 that is block recomputation of all of them.
		 * A larger chunk keeps fewer inputs but recomputes N
		 * layers at once, which dlplan does not price.
		 */
		if (a->l[A_RCNUM] != 1)
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
			    "arguments '--recompute-method uniform "
			    "--recompute-num-layers %ld': dlplan prices "
			    "recomputation one layer at a time (uniform with 1, "
			    "or block)", a->l[A_RCNUM]);
		*rc_blocks = 1L << 30;
	} else
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron argument "
		    "'--recompute-method %s': expected block or uniform",
		    a->w[A_RCMETH]);
	o->recompute = RC_FULL;
	return 0;
}

/*
 * The transformer layers pipeline rank s builds (get_num_layers_to_build(),
 * megatron/core/transformer/transformer_block.py:76-204, without a layout
 * or virtual stages), into blocks[]; -1 with e set when Megatron refuses.
 */
static int
split(const struct margs *a, long layers, long pp, long *blocks,
    struct dl_err *e)
{
	int first = a->set[A_FIRST], last = a->set[A_LAST];
	int emb = a->set[A_ACCEMB], loss = a->set[A_ACCLOSS];

	if ((first || last) && (emb || loss))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron arguments "
		    "'--decoder-first/last-pipeline-num-layers' and "
		    "'--account-for-*-in-pipeline-split' together "
		    "(megatron/core/transformer/transformer_config.py:2229)");
	if (first || last) {
		long left = layers, stages = pp, each;

		if (first)
			left -= a->l[A_FIRST], stages--;
		if (last)
			left -= a->l[A_LAST], stages--;
		if ((first && a->l[A_FIRST] < 1) || (last && a->l[A_LAST] < 1) ||
		    stages < 0 || left < 0 || !left != !stages ||
		    (stages > 0 && left % stages))
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "cannot split %ld layers over %ld stages with "
			    "these first/last stage sizes (megatron/core/"
			    "transformer/transformer_config.py:2304-2349)",
			    layers, pp);
		each = stages > 0 ? left / stages : 0;
		for (long s = 0; s < pp; s++)
			blocks[s] = each;
		if (first)
			blocks[0] = a->l[A_FIRST];
		if (last)
			blocks[pp - 1] = a->l[A_LAST];
		return 0;
	}
	if ((layers + emb + loss) % pp)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron cannot "
		    "split %ld layers%s over %ld pipeline stages evenly "
		    "(megatron/training/arguments.py:997)", layers, emb || loss ?
		    " (with the embedding or loss counted)" : "", pp);
	for (long s = 0; s < pp; s++)
		blocks[s] = (layers + emb + loss) / pp;
	blocks[0] -= emb;
	blocks[pp - 1] -= loss;
	if (blocks[0] < 0 || blocks[pp - 1] < 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron builds a "
		    "negative number of layers on a stage (megatron/core/"
		    "transformer/transformer_block.py:194)");
	return 0;
}

/*
 * Stage s's model rows: from the row after stage s-1's last to its own
 * last block (the first stage from row 0, the last to the last row, so the
 * embedding and the head go with them).  -1 when a stage gets no row.
 */
static int
rows(const struct dl_model *m, const long *blocks, long pp, int *firsts,
    int *lasts, struct dl_err *e)
{
	int *at = xcalloc(m->nlayers + 1, sizeof(int)), nb = 0, rc = 0;
	long upto = 0;

	for (size_t i = 0; i < m->nlayers; i++)
		if (model_is_block(m, i))
			at[nb++] = (int)i;
	for (long s = 0; s < pp && rc == 0; s++) {
		firsts[s] = s ? lasts[s - 1] + 1 : 0;
		upto += blocks[s];
		if (s == pp - 1)
			lasts[s] = (int)m->nlayers - 1;
		else
			lasts[s] = upto > 0 ? at[upto - 1] : at[0] - 1;
		if (lasts[s] < firsts[s])
			rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
			    "builds no layer on pipeline stage %ld; dlplan's "
			    "stages hold at least one", s);
	}
	free(at);
	return rc;
}

/*
 * The chunks a pipeline rank holds under the interleaved schedule
 * (arguments.py:929-1011, transformer_block.py:163-178): 1 for the plain
 * schedule; -1 with e set when Megatron, or dlplan, refuses.
 */
static long
vstages(const struct margs *a, long layers, long pp, const long *blocks,
    struct dl_err *e)
{
	long v = 1;

	if (a->set[A_VPL] && a->set[A_VPN])
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron arguments "
		    "'--num-layers-per-virtual-pipeline-stage' and "
		    "'--num-virtual-stages-per-pipeline-rank' together "
		    "(megatron/training/arguments.py:929)"), -1;
	if (a->set[A_VPL]) {
		long per = layers + a->set[A_ACCEMB] + a->set[A_ACCLOSS];

		if (a->set[A_FIRST] || a->set[A_LAST])
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '--num-layers-per-virtual-pipeline-"
			    "stage' with an uneven first or last stage (use "
			    "--num-virtual-stages-per-pipeline-rank; megatron/"
			    "training/arguments.py:955)"), -1;
		per /= pp;
		if (a->l[A_VPL] < 1 || per % a->l[A_VPL] != 0)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '--num-layers-per-virtual-pipeline-stage "
			    "%ld': a pipeline stage's %ld layers are not a "
			    "multiple of it (megatron/training/arguments.py:"
			    "972)", a->l[A_VPL], per), -1;
		v = per / a->l[A_VPL];
	} else if (a->set[A_VPN]) {
		if (a->l[A_VPN] < 1)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "argument '--num-virtual-stages-per-pipeline-rank "
			    "%ld': expected at least 1", a->l[A_VPN]), -1;
		v = a->l[A_VPN];
	}
	if (v == 1)
		return 1;
	if (pp < 2)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron's "
		    "interleaved schedule (%ld virtual stages) needs "
		    "--pipeline-model-parallel-size 2 or more (megatron/"
		    "training/arguments.py:1002)", v), -1;
	if (a->set[A_NOP2P])
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
		    "argument '--no-overlap-p2p-communication' with the "
		    "interleaved schedule: dlplan prices its transfers under "
		    "compute, as Megatron runs them by default"), -1;
	if (a->set[A_ACCEMB] || a->set[A_ACCLOSS])
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron "
		    "arguments '--account-for-*-in-pipeline-split' with the "
		    "interleaved schedule: Megatron's first or last chunk "
		    "then holds a block fewer, a layout dlplan does not "
		    "price"), -1;
	for (long s = 0; s < pp; s++)
		if (blocks[s] % v != 0)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "megatron "
			    "cannot split pipeline stage %ld's %ld layers "
			    "into %ld virtual stages (megatron/core/"
			    "transformer/transformer_block.py:176)", s,
			    blocks[s], v), -1;
	return v;
}

struct import_host *
import_hosts(const struct dl_cluster *c, const char *list, int *n,
    struct dl_err *e)
{
	struct import_host *h = xcalloc(c->nnodes + 1, sizeof(*h));
	const char *w = list;

	*n = 0;
	if (list == NULL) {
		for (size_t i = 0; i < c->nnodes; i++) {
			h[i].node = (int)i;
			h[i].gpus = c->nodes[i].gpus;
		}
		*n = (int)c->nnodes;
		return h;
	}
	for (;;) {
		size_t len = strcspn(w, ",");
		const char *colon = memchr(w, ':', len);
		size_t idl = colon ? (size_t)(colon - w) : len;
		char *id = xstrndup(w, idl);
		long k = -1;
		size_t i;

		for (i = 0; i < c->nnodes; i++)
			if (strcmp(c->nodes[i].id, id) == 0)
				break;
		if (i == c->nnodes)
			dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--hosts': "
			    "no node '%s' in nodes.csv", id);
		for (int j = 0; j < *n && i < c->nnodes && !e->code; j++)
			if (h[j].node == (int)i)
				dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
				    "'--hosts': node '%s' given twice", id);
		if (!e->code && colon) {
			char *num = xstrndup(colon + 1, len - idl - 1);

			if (parse_long(num, 1, c->nodes[i].gpus, &k) != 0)
				dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
				    "'--hosts': '%s:%s': expected 1 to %d GPUs",
				    id, num, c->nodes[i].gpus);
			free(num);
		}
		free(id);
		if (e->code) {
			free(h);
			return NULL;
		}
		h[*n].node = (int)i;
		h[*n].gpus = k > 0 ? (int)k : c->nodes[i].gpus;
		(*n)++;
		if (w[len] == '\0')
			break;
		w += len + 1;
	}
	return h;
}

int
import_megatron(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const struct import_host *hosts, int nhosts,
    char *const *args, int n, struct dl_err *e)
{
	struct margs a;
	long tp, pp, dp, world = 0, mbs, gbs, rcb, v = 1, *blocks = NULL;
	int *firsts = NULL, *lasts = NULL, (*where)[2] = NULL, r;

	memset(&a, 0, sizeof(a));
	plan_init(p);
	if (parse(args, n, &a, e) || check_model(&a, m, e))
		goto fail;
	tp = num(&a, A_TP, 1);
	pp = num(&a, A_PP, 1);
	if (check_run(&a, m, tp, e) || savers(&a, &p->opts, &rcb, e))
		goto fail;
	for (int i = 0; i < nhosts; i++)
		world += hosts[i].gpus;
	if (world % (tp * pp)) {
		dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the hosts have %ld GPUs, "
		    "not a multiple of TP x PP = %ld (megatron's world size; "
		    "megatron/training/arguments.py:432)", world, tp * pp);
		goto fail;
	}
	dp = world / (tp * pp);
	if (!a.set[A_MBS]) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no --micro-batch-size "
		    "(megatron requires it)");
		goto fail;
	}
	mbs = a.l[A_MBS];
	gbs = num(&a, A_GBS, mbs * dp);
	if (mbs < 1 || gbs < 1 || gbs % (mbs * dp)) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "global batch %ld is not a "
		    "positive multiple of micro-batch %ld x data-parallel size "
		    "%ld (megatron/core/num_microbatches_calculator.py:381)",
		    gbs, mbs, dp);
		goto fail;
	}
	blocks = xcalloc(pp, sizeof(*blocks));
	firsts = xcalloc(pp, sizeof(*firsts));
	lasts = xcalloc(pp, sizeof(*lasts));
	if (split(&a, m->arch.layers, pp, blocks, e) ||
	    rows(m, blocks, pp, firsts, lasts, e) ||
	    (v = vstages(&a, m->arch.layers, pp, blocks, e)) < 0)
		goto fail;

	/* Megatron rank r runs on the r-th GPU in host order. */
	where = xcalloc(world, sizeof(*where));
	r = 0;
	for (int i = 0; i < nhosts; i++)
		for (int g = 0; g < hosts[i].gpus; g++, r++) {
			where[r][0] = hosts[i].node;
			where[r][1] = g;
		}
	p->opts.global_batch = gbs;
	p->opts.micro_batch = mbs;
	p->opts.param_bytes = m->arch.dtype_bytes == 2 ? 2 : 4;
	p->opts.grad_bytes = a.set[A_GRADBF16] ? 2 : 4;
	p->opts.optimizer_bytes = m->arch.dtype_bytes == 2 ? 12 : 8;
	p->opts.optimizer = a.set[A_DISTOPT] ? OPTIM_SHARDED :
	    OPTIM_REPLICATED;
	p->opts.overlap = a.set[A_TPOV] ? OVL_DPTP : a.set[A_OVGRAD] ?
	    OVL_DP : OVL_NONE;
	p->opts.runtime = RUNTIME_MEGATRON;
	p->runtime = RUNTIME_MEGATRON;
	p->ngroups = (int)dp;
	p->groups = xcalloc(dp, sizeof(*p->groups));
	for (long d = 0; d < dp; d++) {
		struct dl_group *g = &p->groups[d];

		g->micro_batches = gbs / (mbs * dp);
		g->nstages = (int)pp;
		g->vstages = (int)v;
		g->stages = xcalloc(pp, sizeof(*g->stages));
		for (long s = 0; s < pp; s++) {
			struct dl_stage *st = &g->stages[s];
			/* initialize.py:395: tp-cp-ep-dp-pp, or with
			 * --use-tp-pp-dp-mapping tp-cp-ep-pp-dp. */
			long r0 = tp * (a.set[A_MAP] ? s + pp * d :
			    d + dp * s);

			st->node = where[r0][0];
			st->ngpus = (int)tp;
			for (long k = 0; k < tp; k++) {
				if (where[r0 + k][0] != st->node) {
					dl_seterr(e, DL_EINFEAS, NULL, 0, 0,
					    "the TP group of ranks %ld-%ld "
					    "spans nodes '%s' and '%s'; "
					    "dlplan's tensor parallelism "
					    "stays inside a node", r0,
					    r0 + tp - 1,
					    c->nodes[st->node].id,
					    c->nodes[where[r0 + k][0]].id);
					goto fail;
				}
				st->gpus[k] = where[r0 + k][1];
				st->tp_share[k] = 1.0 / (double)tp;
			}
			st->first = firsts[s];
			st->last = lasts[s];
			/* --recompute-num-layers counts in each chunk's
			 * TransformerBlock (transformer_block.py). */
			st->recompute = p->opts.recompute == RC_FULL ?
			    (int)((rcb < blocks[s] / v ? rcb : blocks[s] / v) *
			    v) : 0;
			st->rc_set = 1;
		}
	}
	if (plan_precision(p, c) == PREC_FP16 && a.set[A_BF16]) {
		dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "megatron argument "
		    "'--bf16': a GPU of the cluster has no bf16 (train with "
		    "--fp16)");
		goto fail;
	}
	if (plan_precision(p, c) == PREC_BF16 && a.set[A_FP16] &&
	    dl_verbose >= 0)
		dl_warn("warning: megatron argument '--fp16': every GPU of "
		    "the cluster has bf16, so the plan records bf16 (both are "
		    "priced at the same 16-bit peak and bytes)");
	if (plan_validate(p, c, m, NULL, e) != DL_OK)
		goto fail;
	free(blocks);
	free(firsts);
	free(lasts);
	free(where);
	return DL_OK;
fail:
	free(blocks);
	free(firsts);
	free(lasts);
	free(where);
	plan_free(p);
	return e->code ? e->code : DL_EUSAGE;
}
