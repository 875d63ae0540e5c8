/*
 * cmdutil.h - pieces shared by the cmd_*.c files (they may print).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_CMDUTIL_H
#define DL_CMDUTIL_H

#include <jansson.h>

#include "cluster.h"
#include "model.h"
#include "opt.h"
#include "plan.h"

/* Option ids 900..909 are the cluster options shared by commands. */
enum {
	OPT_CLUSTER = 900, OPT_NODES, OPT_LINKS, OPT_LOAD, OPT_TRAFFIC,
	OPT_TRUST, OPT_IGNORE
};
#define DL_OPT_CLUSTER \
	{ "cluster", 'c', OPT_CLUSTER, "DIR", "dir", \
	    "cluster directory (nodes.csv, links.csv, load.csv, traffic.csv)" }, \
	{ "links", 0, OPT_LINKS, "FILE", "csv", "links.csv to use" }, \
	{ "load", 0, OPT_LOAD, "FILE", "csv", "load.csv to use" }, \
	{ "nodes", 0, OPT_NODES, "FILE", "csv", "nodes.csv to use" }, \
	{ "traffic", 0, OPT_TRAFFIC, "FILE", "csv", "traffic.csv to use" }

/* For the commands that read a plan's inputs (cmd_load_plan()). */
#define DL_OPT_TRUST \
	{ "ignore-digests", 0, OPT_IGNORE, NULL, NULL, \
	    "read the plan's inputs even when their digests do not match " \
	    "(only inside the plan's directory, unless --trust-paths)" }, \
	{ "trust-paths", 0, OPT_TRUST, NULL, NULL, \
	    "with --ignore-digests, read the input files the plan names " \
	    "even outside its directory" }

/*
 * "-" as a file name: standard input for an input, standard output for an
 * output (util_io.h).  Standard input can feed one input per run; by
 * records which one took it ("--nodes", "PLAN.json") for the error when a
 * second one asks.
 */
struct cmd_stdin {
	char by[64];
};

/*
 * Claim standard input for what (an option's spelling or an operand's
 * name) when arg is "-"; DL_EUSAGE naming both when another input already
 * has it, else DL_OK.
 */
int cmd_stdin_take(struct cmd_stdin *s, const char *what, const char *arg,
    struct dl_err *e);
/*
 * Check the "-" given to the current option of st, if any: an option that
 * names one input file (its argument completes as "csv": -m, --nodes,
 * --history, ...) claims standard input with cmd_stdin_take(); one that
 * names a directory ("dir": -c, -o DIR, --dump-lp) cannot be "-" and is
 * DL_EUSAGE, with hint (may be NULL) after the reason when the directory
 * is written.  Other options pass.
 */
int cmd_dash_opt(const struct optstate *st, struct cmd_stdin *s,
    const char *hint, struct dl_err *e);
/*
 * Write len bytes of data to path atomically, or to standard output when
 * path is "-" (flushed and checked when main closes it, as for every
 * result printed there).  DL_OK or DL_ESYS.
 */
int cmd_write_output(const char *path, const char *data, size_t len,
    struct dl_err *e);

/* Take a cluster option into p; return 1 if id was one of them. */
int cmd_cluster_opt(int id, const char *arg, struct dl_cluster_paths *p);

/*
 * Print a JSON value to stdout with round-trip numbers and a final
 * newline; returns DL_OK or DL_ESYS.
 */
int cmd_print_json(json_t *v);
/* A JSON real that never holds NaN or Inf (they become null): util's
 * jreal() under the name the command files use. */
json_t *cmd_json_real(double v);

/*
 * Load the cluster and model the plan file path ("-": standard input) was
 * made for, then the
 * plan (plan_read_json() with check_digests).  The cluster files are the
 * plan's inputs with the command line's (user) on top: user->dir
 * replaces all four, and each of user's file paths replaces that file;
 * model, when not NULL, replaces the plan's model.  When neither the
 * plan nor the command line names a nodes.csv (or a model), the result
 * is DL_EDATA naming path ("plan names no nodes.csv (give the cluster
 * with -c DIR)") and, when missing is not NULL, *missing is set to
 * "nodes" (or "model") for a command that words it otherwise; else
 * *missing is NULL.  Every input the plan names and the command line does
 * not replace is read only when its bytes have the digest the plan
 * records (read_pin(); DL_EDATA naming inputs[N].sha256 when there is
 * none), wherever it lies; with CMD_IGNORE_DIGESTS in flags it is read
 * whatever its digest but only below the plan's directory, and with
 * CMD_TRUST_PATHS too from anywhere.  CMD_CHECK_DIGESTS (unless
 * CMD_IGNORE_DIGESTS) also refuses the files the command line gives in
 * place of the plan's when their digests differ.  An input
 * the plan records as read from standard input ("-") must be given again
 * on the command line: when it is not, the result is DL_EDATA naming the
 * option to give it with (standard input is never read in its place).
 * On failure there is nothing to free.
 */
enum {
	CMD_CHECK_DIGESTS = 1, CMD_IGNORE_DIGESTS = 2, CMD_TRUST_PATHS = 4
};
int cmd_load_plan(const char *path, const struct dl_cluster_paths *user,
    const char *model, int flags, struct dl_plan *p, struct dl_cluster *c,
    struct dl_model *m, const char **missing, struct dl_err *e);

/*
 * Make outdir when missing and lock it for this run (af_lock_dir()): a
 * second dlplan writing to the same directory fails with DL_ESYS until
 * this one ends.
 */
int cmd_lock_outdir(const char *outdir, struct dl_err *e);

/*
 * Price p as eval does: a forecast from load.csv when p has no loads
 * (and the forecast methods used, for plan.json), a router, the cost
 * context *x and cost_eval().  *router and *x are the caller's to free
 * (router_free(), cost_free()) whatever the outcome; *x must start
 * zeroed.
 */
struct dl_router;
struct dl_costctx;
int cmd_price_plan(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, struct dl_router **router,
    struct dl_costctx *x, struct dl_err *e);

/*
 * Write p as OUTDIR/plan.json and OUTDIR/plan.csv, making outdir when
 * missing: both files or, when a write fails, neither (never a new
 * plan.json beside an old plan.csv).  plain (may be NULL) gets the JSON
 * text --format json prints, from the same tree (plan_write_files()).
 */
int cmd_write_plan(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *outdir, char **plain,
    struct dl_err *e);

/*
 * Print the implausible values noted while loading c and m (either may be
 * NULL) on stderr as "dlplan: warning: ...", unless -q; return how many
 * were noted.
 */
size_t cmd_warn_inputs(const struct dl_cluster *c, const struct dl_model *m);

/*
 * Output sets: every file a command writes into its output directory
 * between cmd_set_begin() and cmd_set_end() (the plan, its launch files,
 * a schedule's plans and models) replaces the previous set as one unit.
 * cmd_set_end() with ok set renames the new files into place (all or
 * none, af_defer_end()), records them in DIR/.dlplan-files (the
 * manifest) and removes the files of the previous set whose path starts
 * with owned ("" for all, "launch/" for emit) that the new set lacks:
 * only files the manifest lists, only regular files, never through a
 * symbolic link.  Without ok, the temporary files and the directories
 * made are removed and the directory is left as it was; DL_OK.  Either
 * way the directory's lock (cmd_lock_outdir()) is released.
 */
#define CMD_MANIFEST ".dlplan-files"
/*
 * While the new set's files are renamed into place, DIR/.dlplan-set
 * lists their temporary files; a run killed then leaves it, and the next
 * cmd_lock_outdir() of DIR finishes the renames (with a warning).
 */
#define CMD_JOURNAL ".dlplan-set"
void cmd_set_begin(void);
int cmd_set_end(const char *dir, const char *owned, int ok, struct dl_err *e);

/* Print a module error and return its exit status. */
int cmd_fail(const struct dl_err *e);

/*
 * Progress lines on standard error for a long run (plan's search and its
 * --budget schedule, schedule's policies): with -v, or when standard
 * error is a terminal unless -q.  cmd_progress_begin() says whether they
 * are wanted and starts pg's clock.  cmd_progress_due() says whether a
 * line is due now: at most twice a second, the first after half a second,
 * and (final) a last one when others were written or -v asked; it counts
 * the line and sets *elapsed to the seconds since the start.
 */
struct cmd_progress {
	double t0, last;
	int lines;
};
int cmd_progress_begin(struct cmd_progress *pg);
int cmd_progress_due(struct cmd_progress *pg, int final, double *elapsed);

#endif
