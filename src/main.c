/*
 * main.c - subcommand table, global options, signals and exit status.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

const struct dl_cmd *const dl_cmds[] = {
	&dl_cmd_check,
	&dl_cmd_predict,
	&dl_cmd_route,
	&dl_cmd_eval,
	&dl_cmd_emit,
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
 * The hidden completion helper that the shell completions call, so that
 * they list exactly what the parser accepts:
 *	dlplan --complete commands
 *	dlplan --complete options CMD		one "--long" or "-s" per line
 *	dlplan --complete options-long CMD	"--long<TAB>ARG<TAB>help"
 *	dlplan --complete values CMD OPTION	the option's completion kind
 *						or its fixed words
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
	if (argc < 2 || (cmd = find_cmd(argv[1])) == NULL)
		return DL_EUSAGE;
	if (strcmp(argv[0], "options") == 0 ||
	    strcmp(argv[0], "options-long") == 0) {
		int lng = strcmp(argv[0], "options-long") == 0;

		for (const struct dl_opt *o = cmd->opts; o->lname; o++) {
			if (lng) {
				printf("--%s\t%s\t%s\n", o->lname,
				    o->arg ? o->arg : "", o->help);
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

		for (const struct dl_opt *o = cmd->opts; o->lname; o++) {
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
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);

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
		if (argv[1][0] == '-')
			fprintf(stderr, "dlplan: unknown option '%s'\n",
			    argv[1]);
		else
			fprintf(stderr, "dlplan: unknown command '%s'\n",
			    argv[1]);
		usage(stderr);
		return DL_EUSAGE;
	}
	rc = cmd->run(cmd, argc - 1, argv + 1);
	if (rc == DL_OK && close_stdout() != DL_OK)
		rc = DL_ESYS;
	af_cleanup_all();
	return rc;
}
