/*
 * cmdutil.h - pieces shared by the cmd_*.c files (they may print).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_CMDUTIL_H
#define DL_CMDUTIL_H

#include <jansson.h>

#include "cluster.h"
#include "opt.h"

/* Option ids 900..909 are the cluster options shared by commands. */
enum {
	OPT_CLUSTER = 900, OPT_NODES, OPT_LINKS, OPT_LOAD, OPT_TRAFFIC
};
#define DL_OPT_CLUSTER \
	{ "cluster", 'c', OPT_CLUSTER, "DIR", "dir", \
	    "cluster directory (nodes.csv, links.csv, load.csv, traffic.csv)" }, \
	{ "links", 0, OPT_LINKS, "FILE", "csv", "links.csv to use" }, \
	{ "load", 0, OPT_LOAD, "FILE", "csv", "load.csv to use" }, \
	{ "nodes", 0, OPT_NODES, "FILE", "csv", "nodes.csv to use" }, \
	{ "traffic", 0, OPT_TRAFFIC, "FILE", "csv", "traffic.csv to use" }

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

/* Print a module error and return its exit status. */
int cmd_fail(const struct dl_err *e);

#endif
