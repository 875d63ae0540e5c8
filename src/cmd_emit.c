/*
 * cmd_emit.c - "dlplan emit": write the launch files of a plan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The plan is read against the cluster and model it names (or the ones
 * given with -c and -m), with its input digests checked, and emit.h does
 * the rest.  The files go to OUTDIR/launch/, OUTDIR being the plan's
 * directory unless -o says otherwise, so that "dlplan plan -o OUT" and
 * "dlplan emit OUT/plan.json" write the same place.  Their paths are
 * printed on standard output, one per line.
 */
#include <sys/stat.h>

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "emit.h"
#include "model.h"
#include "plan.h"
#include "sb.h"
#include "util_io.h"

enum {
	O_JOB = 1, O_LAUNCHER, O_MODEL, O_OUT, O_PARTITION, O_PORT, O_SCRIPT,
	O_SLOT, O_TIME, O_ACCOUNT, O_QOS, O_LOGOUT, O_LOGERR, O_SBATCH
};

static const struct optspec emit_opts_table[] = {
	DL_OPT_CLUSTER,
	{ "account", 0, O_ACCOUNT, "NAME", NULL,
	    "Slurm account to charge (#SBATCH --account)" },
	{ "error", 0, O_LOGERR, "PATH", "file",
	    "Slurm's stderr log path (#SBATCH --error)" },
	{ "job-name", 0, O_JOB, "NAME", NULL,
	    "Slurm job name (" EMIT_DEFAULT_JOB_NAME ")" },
	{ "launcher", 0, O_LAUNCHER, "L", emit_launchers,
	    "what to write: a launcher's scripts or a framework's "
	    "configuration" },
	{ "master-port", 0, O_PORT, "N", NULL,
	    "rendezvous port on the first host (29500)" },
	{ "model", 'm', O_MODEL, "FILE", "csv",
	    "model.csv (default: the one the plan names)" },
	{ "outdir", 'o', O_OUT, "DIR", "dir",
	    "write to DIR/launch/ (default: the plan's directory)" },
	{ "output", 0, O_LOGOUT, "PATH", "file",
	    "Slurm's stdout log path (#SBATCH --output)" },
	{ "partition", 0, O_PARTITION, "P", NULL, "Slurm partition(s)" },
	{ "qos", 0, O_QOS, "NAME", NULL,
	    "Slurm quality of service (#SBATCH --qos)" },
	{ "sbatch-arg", 0, O_SBATCH, "OPT", NULL,
	    "one more #SBATCH option, as given (repeatable)" },
	{ "script", 0, O_SCRIPT, "FILE", "file",
	    "training script every rank runs with $DLPLAN_PYTHON "
	    "(megatron, torchtitan: instead of theirs)" },
	{ "slot", 0, O_SLOT, "N", NULL,
	    "launch budget slot N (plan-slotN.json beside PLAN.json)" },
	{ "time", 0, O_TIME, "T", NULL,
	    "Slurm time limit (MM, HH:MM:SS, D-HH:MM, ...)" },
	DL_OPT_TRUST,
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_emit(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_emit = {
	"emit", cmd_emit,
	"PLAN.json --launcher L [-o OUTDIR] "
	"[--script FILE] [--partition P] [--time T] [--master-port N] "
	"[--account NAME] [--qos NAME] [--output PATH] [--error PATH] "
	"[--sbatch-arg OPT ...] [--slot N] [--ignore-digests] [--trust-paths] "
	"[-- COMMAND|ARGS...]",
	"write a plan's launch files or framework configuration",
	emit_opts_table, 0
};

/* What the command line asks for. */
struct emit_args {
	struct dl_cluster_paths paths;
	struct emit_opts eo;
	const char *model;
	long slot;		/* --slot, or 0 */
	const char *launcher;	/* --launcher, or NULL */
	int flags;		/* CMD_IGNORE_DIGESTS, CMD_TRUST_PATHS */
	int last;		/* argv index after the last option */
	int npre;		/* operands before argv[last] */
	const char *sbatch[EMIT_MAX_SBATCH_ARGS];	/* eo.sbatch_args */
};

/* Take option id (not a cluster option, not -h) into a; -1 with e set on
 * a usage error. */
static int
take_opt(struct emit_args *a, int id, struct optstate *st, struct dl_err *e)
{
	switch (id) {
	case O_JOB:
		a->eo.job_name = st->arg;
		break;
	case O_LAUNCHER:
		if (opt_choice(st, e) < 0)
			return -1;
		a->launcher = st->arg;
		break;
	case O_MODEL:
		a->model = st->arg;
		break;
	case OPT_IGNORE:
		a->flags |= CMD_IGNORE_DIGESTS;
		break;
	case OPT_TRUST:
		a->flags |= CMD_TRUST_PATHS;
		break;
	case O_OUT:
		a->eo.outdir = st->arg;
		break;
	case O_PARTITION:
		a->eo.partition = st->arg;
		break;
	case O_PORT:
		if (opt_long(st, 1, 65535, &a->eo.master_port, e) != DL_OK)
			return -1;
		break;
	case O_SCRIPT:
		a->eo.script = st->arg;
		break;
	case O_SLOT:
		if (opt_long(st, 1, 100000, &a->slot, e))
			return -1;
		break;
	case O_TIME:
		a->eo.time = st->arg;
		break;
	case O_ACCOUNT:
		a->eo.account = st->arg;
		break;
	case O_QOS:
		a->eo.qos = st->arg;
		break;
	case O_LOGOUT:
		a->eo.output = st->arg;
		break;
	case O_LOGERR:
		a->eo.error = st->arg;
		break;
	case O_SBATCH:
		if (a->eo.nsbatch_args == EMIT_MAX_SBATCH_ARGS) {
			dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
			    "'--sbatch-arg': '%s' is one too many (at most %d)",
			    st->arg, EMIT_MAX_SBATCH_ARGS);
			return -1;
		}
		a->sbatch[a->eo.nsbatch_args++] = st->arg;
		a->eo.sbatch_args = a->sbatch;
		break;
	}
	return 0;
}

/*
 * One plan before "--", and a launcher; -1 with e set otherwise.  Up to
 * the "--", argv[last..] holds operands and the flags opt_next() keeps
 * to itself (-q, -v): no other option came after argv[last - 1].
 */
static int
check_operands(const struct emit_args *a, const struct optstate *st,
    int argc, char **argv, struct dl_err *e)
{
	int before = st->npos;

	if (st->dashdash) {
		before = a->npre;
		for (int i = a->last; i < argc && strcmp(argv[i], "--") != 0;
		    i++)
			if (argv[i][0] != '-' || argv[i][1] == '\0')
				before++;
	}
	if (before == 0) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no plan given "
		    "(expected PLAN.json)");
		return -1;
	}
	if (before > 1) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "unexpected argument "
		    "'%s' (put the training command after '--')", st->pos[1]);
		return -1;
	}
	if (a->launcher == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no launcher given "
		    "(expected --launcher %s)", emit_launchers);
		return -1;
	}
	return 0;
}

/*
 * A plan given as "-" (standard input) has no directory: it needs -o and
 * cannot have slot plans beside it (run_emit() gives the workers a copy
 * of it).  DL_EUSAGE when it cannot be launched so, or when standard
 * input went to another input.
 */
static int
stdin_plan(const struct emit_args *a, struct cmd_stdin *in,
    struct dl_err *e)
{
	if (cmd_stdin_take(in, "PLAN.json", a->eo.plan_path, e) != DL_OK)
		return DL_EUSAGE;
	if (strcmp(a->eo.plan_path, DL_STDIN_PATH) != 0)
		return DL_OK;
	if (a->eo.outdir == NULL)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "a plan from "
		    "standard input has no directory to write launch/ to "
		    "(expected -o DIR)");
	if (a->slot > 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "--slot needs the "
		    "plan's file: its slot plans are beside it (give "
		    "PLAN.json, not '-')");
	return DL_OK;
}

/*
 * With --slot N, the slot's plan instead of eo->plan_path: a budgeted
 * plan writes each slot's plan as plan-slotN.json beside plan.json, and
 * its launch files go to OUTDIR/slotN/.  *slotpath and *outdir receive
 * the strings set in eo (the caller frees them).  DL_EDATA when there is
 * no such plan.
 */
static int
use_slot_plan(struct emit_opts *eo, long slot, char **slotpath,
    char **outdir, struct dl_err *e)
{
	char *tmp = xstrdup(eo->plan_path), *dir = dirname(tmp);
	struct strbuf sp = STRBUF_INIT;
	struct stat sst;

	sb_addf(&sp, "%s/plan-slot%ld.json", dir, slot);
	if (stat(sp.buf, &sst) != 0) {
		dl_seterr(e, DL_EDATA, eo->plan_path, 0, 0, "no plan for slot "
		    "%ld (expected '%s', written by 'dlplan plan --budget ... "
		    "--slots N -o DIR')", slot, sp.buf);
		free(tmp);
		sb_free(&sp);
		return DL_EDATA;
	}
	if (eo->outdir == NULL) {
		struct strbuf od = STRBUF_INIT;

		sb_addf(&od, "%s/slot%ld", dir, slot);
		eo->outdir = *outdir = sb_detach(&od);
	}
	eo->plan_path = *slotpath = sb_detach(&sp);
	free(tmp);
	return DL_OK;
}

/* Load the plan, write its launch files and print their paths; the
 * error, if any, is printed. */
static int
run_emit(const struct emit_args *a, struct dl_err *e)
{
	struct emit_result res = { 0 };
	struct emit_opts eo = a->eo;
	struct dl_cluster c;
	struct dl_model m;
	struct dl_plan p;
	char *text = NULL;
	size_t len;
	int rc;

	if ((rc = cmd_load_plan(a->eo.plan_path, &a->paths, a->model,
	    CMD_CHECK_DIGESTS | a->flags, &p, &c, &m, NULL, e)) != DL_OK)
		return cmd_fail(e);
	/* Standard input was read whole by then: this is a copy of it. */
	if (strcmp(eo.plan_path, DL_STDIN_PATH) == 0 &&
	    (rc = read_file(eo.plan_path, &text, &len, e)) == DL_OK)
		eo.plan_text = text;
	if (m.nlayers > 0)
		eo.model = &m;
	if (rc == DL_OK) {
		/* One set: launch/ loses the files of earlier runs. */
		cmd_set_begin();
		if ((rc = cmd_lock_outdir(eo.outdir, e)) == DL_OK)
			rc = emit_launch(&p, &c, &eo, &res, e);
		if (rc == DL_OK)
			rc = cmd_set_end(eo.outdir, "launch/", 1, e);
		else
			cmd_set_end(eo.outdir, "launch/", 0, NULL);
	}
	if (rc == DL_OK) {
		for (size_t i = 0; i < res.nfiles; i++)
			printf("%s\n", res.files[i]);
		if (res.why && dl_verbose >= 0)
			dl_warn("note: torchrun cannot start this plan (%s); %s "
			    "one process per rank instead", res.why,
			    res.instead);
	} else {
		cmd_fail(e);
	}
	emit_result_free(&res);
	free(text);
	plan_free(&p);
	model_free(&m);
	cluster_free(&c);
	return rc;
}

static int
cmd_emit(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct emit_args a;
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	char *outdir = NULL, *slotpath = NULL;
	int id, rc;

	memset(&a, 0, sizeof(a));
	emit_opts_init(&a.eo);
	a.last = 1;
	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, NULL, &e) != DL_OK)
			goto usage;
		/* Operands after the last option and before "--" are
		 * counted by check_operands() from argv[last]. */
		a.last = st.i;
		a.npre = st.npos;
		if (cmd_cluster_opt(id, st.arg, &a.paths))
			continue;
		if (id == OPT_HELP) {
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		}
		if (take_opt(&a, id, &st, &e) < 0)
			goto usage;
	}
	if (check_operands(&a, &st, argc, argv, &e) < 0)
		goto usage;
	a.eo.launcher = a.launcher;
	a.eo.plan_path = st.pos[0];
	if (stdin_plan(&a, &in, &e) != DL_OK)
		goto usage;
	if (a.slot > 0 && use_slot_plan(&a.eo, a.slot, &slotpath, &outdir,
	    &e) != DL_OK) {
		opt_free(&st);
		return cmd_fail(&e);
	}
	a.eo.args = st.pos + 1;
	a.eo.nargs = st.npos - 1;
	if (a.eo.outdir == NULL) {
		/* The plan's directory (dirname may modify its argument). */
		char *tmp = xstrdup(a.eo.plan_path);

		a.eo.outdir = outdir = xstrdup(dirname(tmp));
		free(tmp);
	}
	if (emit_check_opts(&a.eo, &e) != DL_OK)
		goto usage;
	rc = run_emit(&a, &e);
	opt_free(&st);
	free(outdir);
	free(slotpath);
	return rc;
usage:
	opt_free(&st);
	free(outdir);
	free(slotpath);
	return opt_usage_error(cmd, &e);
}
