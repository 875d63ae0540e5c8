/*
 * opt.c - option table parser shared by all subcommands.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "opt.h"

static char optname_buf[80];

void
opt_init(struct optstate *st, int argc, char **argv)
{
	memset(st, 0, sizeof(*st));
	st->argc = argc;
	st->argv = argv;
	st->i = 1;
	st->pos = xcalloc((size_t)argc + 1, sizeof(char *));
}

void
opt_free(struct optstate *st)
{
	free(st->pos);
	st->pos = NULL;
}

static int
found(struct optstate *st, const struct optspec *o)
{
	st->opt = o;
	if (o->id == OPT_QUIET) {
		dl_verbose = -1;
		return 0;
	}
	if (o->id == OPT_VERBOSE) {
		dl_verbose = dl_verbose < 0 ? 1 : dl_verbose + 1;
		return 0;
	}
	return o->id;
}

/* Optimal string alignment distance, for words of at most 63 characters. */
static size_t
osa_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), d[64][64];

	if (n > 63 || m > 63)
		return (size_t)-1;
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 1; j <= m; j++) {
			size_t c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < c)
				c = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < c)
				c = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
				c = d[i - 2][j - 2] + 1;
			d[i][j] = c;
		}
	return d[n][m];
}

const char *
opt_nearest(const char *w, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t bd = 3, len = strlen(w);

	for (size_t i = 0; i < n; i++) {
		size_t dd = osa_distance(w, words[i]);

		if (dd < bd && dd < len) {
			bd = dd;
			best = words[i];
		}
	}
	return best;
}

/* " (did you mean '--NAME'?)" for an unknown long option, or "". */
static const char *
suggest_long(const struct dl_cmd *cmd, const char *a, size_t n)
{
	static char buf[96];
	const char *names[128], *hit;
	char w[64];
	size_t k = 0;

	if (n > 63)
		return "";
	memcpy(w, a, n);
	w[n] = '\0';
	for (const struct optspec *o = cmd->opts; o->lname && k < 128; o++)
		names[k++] = o->lname;
	if ((hit = opt_nearest(w, names, k)) == NULL)
		return "";
	snprintf(buf, sizeof(buf), " (did you mean '--%s'?)", hit);
	return buf;
}

int
opt_next(struct optstate *st, const struct dl_cmd *cmd, struct dl_err *e)
{
	const struct optspec *o;
	const char *a;
	int id;

again:
	st->arg = NULL;
	if (st->shortrest != NULL && *st->shortrest != '\0') {
		char c = *st->shortrest++;

		for (o = cmd->opts; o->lname; o++)
			if (o->sname == c)
				break;
		snprintf(optname_buf, sizeof(optname_buf), "-%c", c);
		if (o->lname == NULL)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
			    "unknown option '-%c'", c), -1;
		if (o->arg != NULL) {
			if (*st->shortrest != '\0') {
				st->arg = st->shortrest;
			} else if (st->i < st->argc) {
				st->arg = st->argv[st->i++];
			} else {
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "option '-%c' requires an argument %s", c,
				    o->arg), -1;
			}
			st->shortrest = NULL;
		}
		if ((id = found(st, o)) == 0)
			goto again;
		return id;
	}
	st->shortrest = NULL;
	while (st->i < st->argc) {
		a = st->argv[st->i++];
		if (st->dashdash || a[0] != '-' || a[1] == '\0') {
			st->pos[st->npos++] = (char *)a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			st->dashdash = 1;
			continue;
		}
		if (a[1] != '-') {
			st->shortrest = a + 1;
			goto again;
		}
		a += 2;
		{
			const char *eq = strchr(a, '=');
			size_t n = eq ? (size_t)(eq - a) : strlen(a);

			for (o = cmd->opts; o->lname; o++)
				if (strlen(o->lname) == n &&
				    strncmp(o->lname, a, n) == 0)
					break;
			snprintf(optname_buf, sizeof(optname_buf), "--%.*s",
			    (int)(n > 60 ? 60 : n), a);
			if (o->lname == NULL)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "unknown option '%s'%s", optname_buf,
				    suggest_long(cmd, a, n)), -1;
			if (o->arg == NULL && eq != NULL)
				return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
				    "option '--%s' takes no argument",
				    o->lname), -1;
			if (o->arg != NULL) {
				if (eq != NULL)
					st->arg = eq + 1;
				else if (st->i < st->argc)
					st->arg = st->argv[st->i++];
				else
					return dl_seterr(e, DL_EUSAGE, NULL, 0,
					    0, "option '--%s' requires an "
					    "argument %s", o->lname, o->arg), -1;
			}
		}
		if ((id = found(st, o)) == 0)
			goto again;
		return id;
	}
	return 0;
}

const char *
opt_name(const struct optstate *st)
{
	(void)st;
	return optname_buf;
}

int
opt_long(const struct optstate *st, long min, long max, long *out,
    struct dl_err *e)
{
	int r = parse_long(st->arg, min, max, out);

	if (r == -1)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is not an integer", opt_name(st),
		    st->arg);
	if (r == -2)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is out of range [%ld, %ld]",
		    opt_name(st), st->arg, min, max);
	return DL_OK;
}

int
opt_double(const struct optstate *st, double min, double max, double *out,
    struct dl_err *e)
{
	int r = parse_double(st->arg, min, max, out);

	if (r == -1)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is not a number", opt_name(st),
		    st->arg);
	if (r == -2)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '%s': '%s' is out of range [%g, %g]",
		    opt_name(st), st->arg, min, max);
	return DL_OK;
}

int
opt_choice(const struct optstate *st, struct dl_err *e)
{
	const char *w = st->opt->complete, *p;
	size_t n = strlen(st->arg);
	int idx = 0;

	for (p = w; p && *p; idx++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && strncmp(p, st->arg, n) == 0)
			return idx;
		p = bar ? bar + 1 : NULL;
	}
	dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
	    "option '%s': '%s' is not one of %s", opt_name(st), st->arg,
	    w ? w : "(none)");
	return -1;
}

int
opt_is_choice(const struct optspec *o)
{
	static const char *const kinds[] = { "dir", "file", "csv", "json" };

	if (o->arg == NULL || o->complete == NULL || o->complete[0] == '\0')
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(o->complete, kinds[i]) == 0)
			return 0;
	return 1;
}

void
opt_usage_line(const struct dl_cmd *cmd, FILE *fp)
{
	fprintf(fp, "usage: dlplan %s %s\n", cmd->name, cmd->synopsis);
}

void
opt_help(const struct dl_cmd *cmd, FILE *fp)
{
	opt_usage_line(cmd, fp);
	fprintf(fp, "\n%s\n\noptions:\n", cmd->summary);
	for (const struct optspec *o = cmd->opts; o->lname; o++) {
		char left[64];
		int n = 0;

		if (o->sname)
			n = snprintf(left, sizeof(left), "-%c, ", o->sname);
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s",
		    o->lname, o->arg ? " " : "", o->arg ? o->arg : "");
		if (strlen(left) > 26)
			fprintf(fp, "  %s\n  %-26s  %s\n", left, "", o->help);
		else
			fprintf(fp, "  %-26s  %s\n", left, o->help);
		/*
		 * The words opt_choice() accepts, from the same table, so
		 * that -h cannot list fewer than the parser takes.
		 */
		if (opt_is_choice(o) && strcmp(o->arg, o->complete) != 0)
			fprintf(fp, "  %-26s  %s: %s\n", "", o->arg,
			    o->complete);
	}
}

int
opt_usage_error(const struct dl_cmd *cmd, const struct dl_err *e)
{
	dl_perr(e);
	opt_usage_line(cmd, stderr);
	fprintf(stderr, "try 'dlplan %s -h' for more information\n",
	    cmd->name);
	return DL_EUSAGE;
}
