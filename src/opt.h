/*
 * opt.h - the option tables every subcommand declares, and their parser.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One table per command is the single source for parsing, for -h, for
 * "dlplan --complete" (which the shell completions call) and for the test
 * that keeps the man page in step.  A command file looks like:
 *
 *	enum { O_FORMAT = 1, O_CLUSTER };
 *	static const struct optspec check_opts[] = {
 *		{ "cluster", 'c', O_CLUSTER, "DIR", "dir", "cluster directory" },
 *		{ "format", 0, O_FORMAT, "FMT", "table|json", "output format" },
 *		DL_OPT_COMMON,
 *		{ NULL }
 *	};
 *	const struct dl_cmd dl_cmd_check = { "check", cmd_check,
 *	    "-c DIR [-m MODEL.csv] [--format table|json]",
 *	    "validate a cluster and a model", check_opts, 0 };
 *
 * and its run function loops over opt_next() until it returns 0.
 */
#ifndef DL_OPT_H
#define DL_OPT_H

#include <stdio.h>

#include "util.h"

struct optspec {
	const char *lname;	/* long name without "--" */
	int sname;		/* short letter, or 0 */
	int id;			/* > 0, returned by opt_next() */
	const char *arg;	/* argument name ("N", "FILE"), NULL for flags */
	/*
	 * How the argument completes: "dir", "file", "csv", "json", or a
	 * list of fixed words "a|b|c"; NULL when it does not complete.
	 */
	const char *complete;
	const char *help;
};

/* Options every command takes; their ids are reserved. */
enum { OPT_HELP = 1000, OPT_QUIET, OPT_VERBOSE };
#define DL_OPT_COMMON \
	{ "help", 'h', OPT_HELP, NULL, NULL, "show this help and exit" }, \
	{ "quiet", 'q', OPT_QUIET, NULL, NULL, "print less" }, \
	{ "verbose", 'v', OPT_VERBOSE, NULL, NULL, "print progress and solver output" }

struct dl_cmd {
	const char *name;
	int (*run)(const struct dl_cmd *cmd, int argc, char **argv);
	const char *synopsis;	/* what follows "dlplan NAME " */
	const char *summary;	/* one line for "dlplan --help" */
	const struct optspec *opts;
	int hidden;		/* not listed in --help */
};

/*
 * Parser state.  argv[0] is the subcommand name.  Operands (words that
 * are not options, and everything after "--") are collected in pos[] in
 * order; they may appear anywhere.
 */
struct optstate {
	int argc;
	char **argv;
	int i;
	const char *arg;	/* the current option's argument */
	const struct optspec *opt;	/* the current option */
	const char *shortrest;	/* rest of a "-abc" cluster */
	char **pos;
	int npos;
	int dashdash;
};

void opt_init(struct optstate *st, int argc, char **argv);
/*
 * Return the next option's id, 0 at the end, or -1 on a usage error
 * (unknown option, missing argument, argument given to a flag), with e
 * filled.  OPT_QUIET and OPT_VERBOSE are handled here (they set
 * dl_verbose) and are not returned.  OPT_HELP is returned.
 */
int opt_next(struct optstate *st, const struct dl_cmd *cmd, struct dl_err *e);
void opt_free(struct optstate *st);

/* Argument checkers: fill e with a usage error naming the option. */
int opt_long(const struct optstate *st, long min, long max, long *out,
    struct dl_err *e);
int opt_double(const struct optstate *st, double min, double max,
    double *out, struct dl_err *e);
/* Index of st->arg in the word list "a|b|c" of the option, or -1. */
int opt_choice(const struct optstate *st, struct dl_err *e);
/* Whether o's argument is one of fixed words (its complete list). */
int opt_is_choice(const struct optspec *o);

/* Print "usage: dlplan NAME SYNOPSIS" and the option list. */
void opt_help(const struct dl_cmd *cmd, FILE *fp);
/* Print e, the usage line and a hint to -h on stderr; return DL_EUSAGE. */
int opt_usage_error(const struct dl_cmd *cmd, const struct dl_err *e);
/* Print "usage: dlplan NAME SYNOPSIS" to fp. */
void opt_usage_line(const struct dl_cmd *cmd, FILE *fp);

/*
 * The word of words[0..n-1] nearest to w by optimal string alignment
 * distance (insertions, deletions, substitutions and swaps of two
 * neighbours each count 1): the first of the nearest, when that distance
 * is at most 2 and smaller than w's length; else NULL.  Words longer than
 * 63 characters never match.
 */
const char *opt_nearest(const char *w, const char *const *words, size_t n);

/* Spelling of the current option as the user wrote it ("--horizon"). */
const char *opt_name(const struct optstate *st);

#endif
