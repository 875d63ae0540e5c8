/*
 * cmdutil.c - pieces shared by the cmd_*.c files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "cmdutil.h"

int
cmd_cluster_opt(int id, const char *arg, struct dl_cluster_paths *p)
{
	switch (id) {
	case OPT_CLUSTER:
		p->dir = arg;
		return 1;
	case OPT_NODES:
		p->nodes = arg;
		return 1;
	case OPT_LINKS:
		p->links = arg;
		return 1;
	case OPT_LOAD:
		p->load = arg;
		return 1;
	case OPT_TRAFFIC:
		p->traffic = arg;
		return 1;
	}
	return 0;
}

json_t *
cmd_json_real(double v)
{
	return jreal(v);
}

int
cmd_print_json(json_t *v)
{
	int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));

	if (rc != 0 || putchar('\n') == EOF)
		return DL_ESYS;
	return DL_OK;
}

int
cmd_fail(const struct dl_err *e)
{
	dl_perr(e);
	return e->code ? e->code : DL_ESYS;
}
