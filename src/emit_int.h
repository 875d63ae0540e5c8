/*
 * emit_int.h - what emit.c, worker.sh's writer (emit_worker.c) and the
 * launchers (emit_slurm.c, emit_torchrun.c, emit_hostfile.c and the
 * frameworks' emit_framework.c, emit_megatron.c, emit_deepspeed.c,
 * emit_torchtitan.c) share; not an API for anything outside emit*.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layers, each calling only down: emit.c (emit_launch() and the launcher
 * table) -> the launcher files -> emit_common.c (layout, hostlist, option
 * value checks and the script pieces declared here).
 */
#ifndef DL_EMIT_INT_H
#define DL_EMIT_INT_H

#include "emit.h"
#include "sb.h"

/* A set of files being generated.  Paths in scripts are absolute. */
struct emit_file {
	char *name;		/* file name inside launch/ */
	struct strbuf body;
	int exec;		/* mode 0755 (minus umask) instead of 0644 */
};
struct emit_ctx;

/*
 * A row of the launcher table (emit.c): what emit_launch() needs to know
 * of a launcher besides its generator.  A new launcher is a file with its
 * generator (declared below) and one row.
 */
struct emit_launcher {
	const char *name;	/* its --launcher word (emit_launchers) */
	/*
	 * The files it writes besides worker.sh (and plan.json for a plan
	 * read from standard input): fnmatch(3) patterns separated by
	 * blanks.  emit_launch() refuses to write a file none matches (an
	 * internal error), so the row cannot fall behind its generator.
	 */
	const char *files;
	int runtime;		/* the runtime (enum dl_runtime) its plans are
				   made for (plan --launcher needs --runtime);
				   -1: any plan */
	/*
	 * The framework's own start script worker.sh execs with the
	 * training command's words (emit_ctx.fw_sh), NULL when worker.sh
	 * execs the training command itself.
	 */
	const char *fw_sh;
	/*
	 * What starts one process per rank when torchrun cannot start the
	 * plan, as the note of "dlplan emit" says it ("plan.sbatch
	 * starts"); NULL for a launcher that does not start torchrun (srun,
	 * hostfile), which gives no note.
	 */
	const char *fallback;
	int ds_worker;		/* worker.sh takes DeepSpeed's mode and
				   passes --deepspeed_config */
	int (*emit)(struct emit_ctx *x, struct dl_err *e);
};
/* The table, in the order of emit_launchers; a NULL name ends it. */
extern const struct emit_launcher emit_launcher_table[];

struct emit_ctx {
	const struct dl_plan *p;
	const struct dl_cluster *c;
	const struct emit_opts *o;
	const struct emit_launcher *lc;	/* o->launcher's row */
	struct emit_layout l;
	char *plan_abs;		/* absolute plan path */
	char *dir_abs;		/* absolute OUTDIR/launch */
	char *worker_abs;	/* absolute OUTDIR/launch/worker.sh */
	size_t nfiles, cap;
	struct emit_file **files;	/* pointers stay valid as it grows */
	int per_rank;
	int het;		/* plan.sbatch: components of Slurm's
				   heterogeneous job, 0 for a plain job */
	/*
	 * The framework's own start script worker.sh execs with the
	 * training command's words ("megatron.sh", "torchtitan.sh"), NULL
	 * when worker.sh execs the training command itself.
	 */
	const char *fw_sh;
};
/*
 * The helpers below are emit_common.c's; it calls nothing above it.
 * emit_add_file() appends an empty file to x and returns its body.
 */
struct strbuf *emit_add_file(struct emit_ctx *x, const char *name,
    int exec);
/* The host of rank r's node, of node-rank i's node. */
const char *emit_rank_host(const struct emit_ctx *x, int r);
const char *emit_node_host(const struct emit_ctx *x, int i);
/* The first comment lines of every script: "# NAME - WHAT", generator. */
void emit_script_head(struct strbuf *sb, const char *name, const char *what);
/* The comment on DLPLAN_TORCHRUN / DLPLAN_PYTHON. */
void emit_env_comment(struct strbuf *sb, int torchrun);
/*
 * torchrun's options after --node_rank: --nnodes, --nproc_per_node,
 * --master_addr, --master_port, --no_python and worker.sh, separated by
 * sep (" " or " \\\n\t").
 */
void emit_torchrun_args(struct emit_ctx *x, struct strbuf *sb,
    const char *sep);
/* Why torchrun cannot start a layout that is not uniform. */
const char *emit_why(const struct emit_layout *l);
/* The ranks of node-rank i: "0-3", or "0-1 4-5" when not consecutive. */
void emit_node_ranks(struct emit_ctx *x, struct strbuf *sb, int i);

/*
 * The generators, one file each: worker.sh (every launcher) and the files
 * of one launcher (the emit of its table row; the framework launchers
 * also call emit_torchrun() and emit_hostfile()).  They add files to x
 * and return DL_OK or an error; nothing is written to disk here.
 */
int emit_worker(struct emit_ctx *x, struct dl_err *e);	/* emit_worker.c */
int emit_slurm(struct emit_ctx *x, struct dl_err *e);	/* emit_slurm.c */
int emit_torchrun(struct emit_ctx *x, struct dl_err *e); /* emit_torchrun.c */
int emit_hostfile(struct emit_ctx *x, struct dl_err *e); /* emit_hostfile.c */
/* The framework launchers: torchrun scripts and the framework's own
 * configuration (emit_megatron.c, emit_deepspeed.c, emit_torchtitan.c). */
int emit_megatron(struct emit_ctx *x, struct dl_err *e);
int emit_deepspeed(struct emit_ctx *x, struct dl_err *e);
int emit_torchtitan(struct emit_ctx *x, struct dl_err *e);

/*
 * The one shape of a plan made for a framework (emit_framework.c): TP
 * degree k, S stages of group 0 (their layer ranges), G groups of m
 * micro-batches each, over layers 0 .. layers - 1.  DL_EINFEAS when the
 * plan was made for another runtime or its groups differ.
 */
struct emit_fw {
	int k, S, G, layers;
	int v;			/* chunks a stage, interleaved (1: plain) */
	long m;
	const struct dl_stage *stages;
	int *blocks;		/* per stage: its transformer blocks
				   (model_blocks()); NULL without a model */
	int rc;			/* set by emit_fw_savers(): blocks are
				   recomputed */
};
int emit_fw_shape(const struct emit_ctx *x, enum dl_runtime rt,
    struct emit_fw *f, struct dl_err *e);
void emit_fw_free(struct emit_fw *f);
/*
 * The model of a megatron or torchtitan plan: o->model with a "dlplan
 * model" line of a transformer, the plan's TP degree and stage count
 * allowed (runtime_fits()); DL_EINFEAS with the reason otherwise.
 */
int emit_fw_model(const struct emit_ctx *x, int runtime,
    const struct emit_fw *f, struct dl_err *e);
/*
 * The memory savers of a deepspeed or torchtitan plan: those the runtime
 * has (runtime_saver_refused()), every block of every stage
 * recomputed or none (the frameworks take no count), and the shape they
 * run with (runtime_saver_fits()); sets f->rc.  DL_EINFEAS with
 * the reason otherwise.
 */
int emit_fw_savers(const struct emit_ctx *x, int runtime, struct emit_fw *f,
    struct dl_err *e);
/*
 * A start script that execs "PROG WORDS... "$@"": head, what the
 * script does (comment lines, each starting "# "), the environment
 * lines (env, may be NULL), the program (as shell text, with its own
 * quotes) and words, newline-separated, each single-quoted as its own
 * word.
 */
void emit_start_script(struct emit_ctx *x, const char *name,
    const char *what, const char *comment, const char *env,
    const char *prog, const char *words);

#endif
