/*
 * main.c - subcommand table, global options, signals and exit status.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "af.h"
#include "cluster.h"
#include "cmds.h"
#include "csvin.h"
#include "model.h"
#include "replan.h"
#include "route.h"
#include "sched.h"

const struct dl_cmd *const dl_cmds[] = {
	&dl_cmd_plan,
	&dl_cmd_check,
	&dl_cmd_predict,
	&dl_cmd_route,
	&dl_cmd_eval,
	&dl_cmd_import,
	&dl_cmd_emit,
	&dl_cmd_replan,
	&dl_cmd_schedule,
	&dl_cmd_model,
	NULL
};

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: dlplan [--version] [-h] COMMAND [ARGS]\n\n"
	    "Plan distributed deep-learning training on heterogeneous, "
	    "multi-site GPU clusters.\n\ncommands:\n");
	for (int i = 0; dl_cmds[i]; i++)
		if (!dl_cmds[i]->hidden)
			fprintf(fp, "  %-9s %s\n", dl_cmds[i]->name,
			    dl_cmds[i]->summary);
	fprintf(fp, "\nRun 'dlplan COMMAND -h' for a command's options; "
	    "see dlplan(1).\n");
}

static const struct dl_cmd *
find_cmd(const char *name)
{
	for (int i = 0; dl_cmds[i]; i++)
		if (strcmp(dl_cmds[i]->name, name) == 0)
			return dl_cmds[i];
	return NULL;
}

/*
 * The operands of a command, read from its synopsis so that they cannot
 * drift from the usage line: the words that are neither options, nor an
 * option's argument, nor lower-case prose ("[options]"), up to "--".  One
 * line per operand position: its fixed words ("a|b") when it holds a
 * '|', else json or csv by its suffix, dir for DIR, file otherwise.
 */
static void
print_operands(const struct dl_cmd *cmd)
{
	const char *p = cmd->synopsis;
	int takes_arg = 0;

	while (*p) {
		const char *w;
		size_t n;
		int prose = 1;

		while (*p == ' ' || *p == '[' || *p == ']' || *p == '(' ||
		    *p == ')')
			p++;
		w = p;
		while (*p && !strchr(" []()", *p))
			p++;
		n = (size_t)(p - w);
		while (n > 3 && strncmp(w + n - 3, "...", 3) == 0)
			n -= 3;
		if (n == 0)
			continue;
		if (n == 2 && strncmp(w, "--", 2) == 0)
			break;
		if (w[0] == '-') {
			takes_arg = 0;
			for (const struct optspec *o = cmd->opts; o->lname; o++)
				if ((n == 2 && w[1] == o->sname) ||
				    (n == strlen(o->lname) + 2 && w[1] == '-' &&
				    strncmp(w + 2, o->lname, n - 2) == 0))
					takes_arg = o->arg != NULL;
			continue;
		}
		if (takes_arg || (n == 1 && w[0] == '|')) {
			takes_arg = 0;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (!(w[i] >= 'a' && w[i] <= 'z'))
				prose = 0;
		if (prose)
			continue;
		if (memchr(w, '|', n))
			printf("%.*s\n", (int)n, w);
		else if (n >= 5 && strncmp(w + n - 5, ".json", 5) == 0)
			printf("json\n");
		else if (n >= 4 && strncmp(w + n - 4, ".csv", 4) == 0)
			printf("csv\n");
		else if (n >= 3 && strncmp(w + n - 3, "DIR", 3) == 0)
			printf("dir\n");
		else
			printf("file\n");
	}
}

/* A bound as dlplan-formats(5) writes it: 1e6 rather than 1000000. */
static const char *
bound_text(char *buf, double v)
{
	int k = 0;
	double x = v;

	while (x >= 10 && fmod(x, 10) == 0) {
		x /= 10;
		k++;
	}
	if (x == 1 && k >= 4)
		snprintf(buf, DL_DBL_BUFSZ, "1e%d", k);
	else
		fmt_double(buf, v);
	return buf;
}

/*
 * Every input CSV column, for the test that keeps dlplan-formats(5) in
 * step: "FILE<TAB>COLUMN<TAB>required|optional; TYPE[ in RANGE][ UNIT]".
 */
static void
print_schemas(void)
{
	static const struct csv_schema *const schemas[] = {
		&dl_nodes_schema, &dl_links_schema, &dl_load_schema,
		&dl_traffic_schema, &dl_model_schema, &dl_flows_schema,
		&dl_steps_schema, &dl_jobs_schema, NULL
	};
	static const char *const type[] = { "text", "id", "integer",
		"number" };

	for (int i = 0; schemas[i]; i++) {
		for (const struct csv_col *c = schemas[i]->cols; c->name;
		    c++) {
			char lo[DL_DBL_BUFSZ], hi[DL_DBL_BUFSZ];

			printf("%s\t%s\t%s; %s", schemas[i]->kind, c->name,
			    c->required ? "required" : "optional",
			    type[c->type]);
			if (c->type == CSV_INT || c->type == CSV_NUM)
				printf(" in %c%s, %s%c", c->min_open ? '(' :
				    '[', bound_text(lo, c->min),
				    bound_text(hi, c->max),
				    c->max_open ? ')' : ']');
			if (c->unit)
				printf(" %s", c->unit);
			putchar('\n');
		}
	}
}

/*
 * The hidden completion helper that the shell completions call, so that
 * they list exactly what the parser accepts:
 *	dlplan --complete commands
 *	dlplan --complete commands-long		"CMD<TAB>summary" per command
 *	dlplan --complete options CMD		one "--long" or "-s" per line
 *	dlplan --complete options-long CMD	"--long<TAB>ARG<TAB>help<TAB>
 *						values", values as in "a|b"
 *	dlplan --complete values CMD OPTION	the option's completion kind
 *						or its fixed words
 *	dlplan --complete operands CMD		per operand position, its
 *						kind or "a|b" words
 *	dlplan --complete summary CMD		the line "dlplan --help" shows
 *	dlplan --complete schemas		input CSV columns and ranges
 * The last two are for tests/cli/sync.sh.  commands-long and the values
 * column of options-long let a completion build its whole table with one
 * call: zsh's _arguments wants every option's values up front, and a call
 * per option made each TAB start fifty processes.
 */
static int
complete(int argc, char **argv)
{
	const struct dl_cmd *cmd;

	if (argc >= 1 && strcmp(argv[0], "commands") == 0) {
		for (int i = 0; dl_cmds[i]; i++)
			if (!dl_cmds[i]->hidden)
				printf("%s\n", dl_cmds[i]->name);
		return close_stdout();
	}
	if (argc >= 1 && strcmp(argv[0], "commands-long") == 0) {
		for (int i = 0; dl_cmds[i]; i++)
			if (!dl_cmds[i]->hidden)
				printf("%s\t%s\n", dl_cmds[i]->name,
				    dl_cmds[i]->summary);
		return close_stdout();
	}
	if (argc >= 1 && strcmp(argv[0], "schemas") == 0) {
		print_schemas();
		return close_stdout();
	}
	if (argc < 2 || (cmd = find_cmd(argv[1])) == NULL)
		return DL_EUSAGE;
	if (strcmp(argv[0], "operands") == 0) {
		print_operands(cmd);
		return close_stdout();
	}
	if (strcmp(argv[0], "summary") == 0) {
		printf("%s\n", cmd->summary);
		return close_stdout();
	}
	if (strcmp(argv[0], "options") == 0 ||
	    strcmp(argv[0], "options-long") == 0) {
		int lng = strcmp(argv[0], "options-long") == 0;

		for (const struct optspec *o = cmd->opts; o->lname; o++) {
			if (lng) {
				printf("--%s\t%s\t%s\t%s\n", o->lname,
				    o->arg ? o->arg : "", o->help,
				    o->complete ? o->complete : "");
				continue;
			}
			printf("--%s\n", o->lname);
			if (o->sname)
				printf("-%c\n", o->sname);
		}
		return close_stdout();
	}
	if (strcmp(argv[0], "values") == 0 && argc >= 3) {
		const char *w = argv[2];

		for (const struct optspec *o = cmd->opts; o->lname; o++) {
			int hit = (w[0] == '-' && w[1] == '-' &&
			    strcmp(w + 2, o->lname) == 0) ||
			    (w[0] == '-' && w[1] == o->sname && w[1] &&
			    w[2] == '\0');

			if (!hit || o->complete == NULL)
				continue;
			for (const char *p = o->complete; *p; p++)
				putchar(*p == '|' ? '\n' : *p);
			putchar('\n');
		}
		return close_stdout();
	}
	return DL_EUSAGE;
}

static void
on_signal(int sig)
{
	/* Remove temporary output files, then die of the same signal. */
	af_cleanup_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

int
main(int argc, char **argv)
{
	const struct dl_cmd *cmd;
	int rc;

	setlocale(LC_ALL, "C");
	dl_cleanup = af_cleanup_all;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	/*
	 * A reader that goes away ("dlplan ... | head") ends the run like
	 * git and coreutils: temporary files removed, death by SIGPIPE
	 * (status 141 in the shell), no message.
	 */
	signal(SIGPIPE, on_signal);
	/*
	 * Past a file size limit (ulimit -f), a write fails with EFBIG and
	 * the run ends with its error and its temporary files removed,
	 * rather than being killed with them left behind.
	 */
	signal(SIGXFSZ, SIG_IGN);

	if (argc < 2) {
		usage(stderr);
		return DL_EUSAGE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("dlplan %s\n", DLPLAN_VERSION);
		return close_stdout();
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && (cmd = find_cmd(argv[2])) != NULL)
			opt_help(cmd, stdout);
		else
			usage(stdout);
		return close_stdout();
	}
	if (strcmp(argv[1], "--complete") == 0)
		return complete(argc - 2, argv + 2);
	if ((cmd = find_cmd(argv[1])) == NULL) {
		const char *names[64], *hit;
		size_t n = 0;

		for (int i = 0; dl_cmds[i] && n < 64; i++)
			names[n++] = dl_cmds[i]->name;
		/* dl_warn(): the name as typed, control characters escaped. */
		if (argv[1][0] == '-')
			dl_warn("unknown option '%s'", argv[1]);
		else if ((hit = opt_nearest(argv[1], names, n)) != NULL)
			dl_warn("unknown command '%s' (did you mean '%s'?)",
			    argv[1], hit);
		else
			dl_warn("unknown command '%s'", argv[1]);
		usage(stderr);
		return DL_EUSAGE;
	}
	rc = cmd->run(cmd, argc - 1, argv + 1);
	if (rc == DL_OK && close_stdout() != DL_OK)
		rc = DL_ESYS;
	af_cleanup_all();
	return rc;
}
