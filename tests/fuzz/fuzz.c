/*
 * fuzz.c - libFuzzer targets for dlplan's input readers.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One source, one binary per target: compile with -DFUZZ_TARGET='"name"'
 * (tests/fuzz/run.sh does).  Every CSV target first parses the input from
 * memory against its schema twice, with csvin_parse() and with the
 * streaming csvin_parse_each() (what predict reads load.csv and
 * traffic.csv with), and abort()s when the two disagree on the status,
 * the error, or any row's line and cells; once more with the callback
 * failing at a row, which must stop the parse with the callback's
 * status.  Then it hands the same bytes, written to a scratch file, to
 * the loader that the commands use, in a fixed context, and to what runs
 * on the loaded data next:
 *
 *	nodes	cluster_load (no links: implicit site switches)
 *	links	cluster_load with two-dc's nodes.csv; a route between the
 *		first and the last node
 *	load	cluster_load with two-dc's nodes.csv; forecast_node_loads
 *	traffic	cluster_load with two-dc's nodes and links; router_new (the
 *		regime model) and one route
 *	model	model_load; cost_init on two-dc; a layer partition on two
 *		units (part_dp)
 *	flows	flows_load against two-dc; every flow routed (at most 64)
 *	steps	steplog_load against tests/cli/data/replan/pp2.json;
 *		replan_run with --repartition
 *	plan	plan_read_inputs and plan_read_json (no digest check)
 *		against tests/cli/data/eval/one + m4.csv and against two-dc +
 *		llama2-7b; cost_eval, the baselines and plan_json_string on
 *		what reads back
 *
 * The fixed inputs are read from FUZZ_SRCDIR (the repository, set at
 * compile time).  Modules never print or exit, so any crash, sanitizer
 * report, leak or timeout is a bug.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "cost.h"
#include "csvin.h"
#include "forecast.h"
#include "model.h"
#include "partition.h"
#include "plan.h"
#include "replan.h"
#include "route.h"
#include "util.h"

#ifndef FUZZ_TARGET
#error "compile with -DFUZZ_TARGET='\"nodes\"' (or links, load, ...)"
#endif
#ifndef FUZZ_SRCDIR
#error "compile with -DFUZZ_SRCDIR='\"/path/to/repository\"'"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];		/* scratch directory */
static char input[300];		/* the input as a file */

/* Fixed contexts. */
static struct dl_cluster twodc, one, rp;
static struct dl_model llama, m4, rpm;
static struct dl_plan rpplan;
static struct dl_router *twodc_router;

static void
die(const struct dl_err *e, const char *what)
{
	if (e)
		dl_perr(e);
	fprintf(stderr, "fuzz: cannot set up %s\n", what);
	exit(2);
}

static void
cleanup(void)
{
	char p[320];
	static const char *const names[] = { "nodes.csv", "links.csv",
	    "load.csv", "traffic.csv", "input" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void
put(const char *name, const void *data, size_t len)
{
	char p[320];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if ((fp = fopen(p, "wb")) == NULL || fwrite(data, 1, len, fp) != len ||
	    fclose(fp) != 0)
		die(NULL, p);
}

/* Copy a file of the repository into the scratch directory. */
static void
copy(const char *rel, const char *name)
{
	struct dl_err e = { 0 };
	char p[512], *data;
	size_t len;

	snprintf(p, sizeof(p), "%s/%s", FUZZ_SRCDIR, rel);
	if (read_file(p, &data, &len, &e) != DL_OK)
		die(&e, p);
	put(name, data, len);
	free(data);
}

static void
load_cluster(struct dl_cluster *c, const char *rel)
{
	char p[512];
	struct dl_cluster_paths cp = { p, NULL, NULL, NULL, NULL };
	struct dl_err e = { 0 };

	snprintf(p, sizeof(p), "%s/%s", FUZZ_SRCDIR, rel);
	if (cluster_load(c, &cp, &e) != DL_OK)
		die(&e, p);
}

static void
load_model(struct dl_model *m, const char *rel)
{
	char p[512];
	struct dl_err e = { 0 };

	snprintf(p, sizeof(p), "%s/%s", FUZZ_SRCDIR, rel);
	if (model_load(m, p, &e) != DL_OK)
		die(&e, p);
}

static int
is(const char *name)
{
	return strcmp(FUZZ_TARGET, name) == 0;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/dlplan-fuzz.XXXXXX",
	    access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (mkdtemp(dir) == NULL)
		die(NULL, "a scratch directory");
	atexit(cleanup);
	snprintf(input, sizeof(input), "%s/input", dir);
	if (is("links") || is("load") || is("traffic"))
		copy("datasets/clusters/two-dc/nodes.csv", "nodes.csv");
	if (is("traffic"))
		copy("datasets/clusters/two-dc/links.csv", "links.csv");
	if (is("model") || is("flows") || is("plan")) {
		struct dl_route_opts ro = { 3, 1 };
		struct dl_err e = { 0 };

		load_cluster(&twodc, "datasets/clusters/two-dc");
		if (router_new(&twodc_router, &twodc, &ro, &e) != DL_OK)
			die(&e, "the two-dc router");
	}
	if (is("plan")) {
		load_cluster(&one, "tests/cli/data/eval/one");
		load_model(&m4, "tests/cli/data/eval/m4.csv");
		load_model(&llama, "datasets/models/llama2-7b.csv");
	}
	if (is("steps")) {
		struct dl_err e = { 0 };
		char p[512];

		load_cluster(&rp, "tests/cli/data/replan");
		load_model(&rpm, "tests/cli/data/replan/model4.csv");
		snprintf(p, sizeof(p), "%s/tests/cli/data/replan/pp2.json",
		    FUZZ_SRCDIR);
		if (plan_read_json(&rpplan, p, &rp, &rpm, 0, &e) != DL_OK)
			die(&e, p);
		if (rpplan.uhat == NULL) {
			rpplan.nnodes = rp.nnodes;
			rpplan.uhat = xcalloc(rp.nnodes + 1, sizeof(double));
			if (forecast_node_loads(&rp, rpplan.opts.horizon,
			    rpplan.uhat, &e) != DL_OK)
				die(&e, "the replan forecast");
		}
	}
	return 0;
}

/* nodes, links, load, traffic: the file under its name, the rest fixed. */
static void
cluster_target(const char *name, const uint8_t *data, size_t size)
{
	struct dl_cluster_paths cp = { dir, NULL, NULL, NULL, NULL };
	struct dl_cluster c;
	struct dl_err e = { 0 };

	put(name, data, size);
	if (cluster_load(&c, &cp, &e) != DL_OK)
		return;
	if (is("load")) {
		double *u = xcalloc(c.nnodes + 1, sizeof(double));

		forecast_node_loads(&c, 3, u, &e);
		free(u);
	}
	if (is("links") || is("traffic")) {
		struct dl_route_opts ro = { 3, 2 };
		struct dl_router *r;

		if (router_new(&r, &c, &ro, &e) == DL_OK) {
			if (c.nnodes >= 2)
				router_flow(r, 0, (int)c.nnodes - 1, 1e8, 1,
				    NULL, &e);
			router_free(r);
		}
	}
	cluster_free(&c);
}

static double
nocomm(void *ctx, int j, double bytes)
{
	(void)ctx;
	(void)j;
	return bytes * 1e-10;
}

static void
model_target(void)
{
	struct dl_model m;
	struct dl_opts o;
	struct dl_costctx x;
	struct dl_err e = { 0 };

	if (model_load(&m, input, &e) != DL_OK)
		return;
	plan_opts_default(&o);
	o.global_batch = 8;
	if (cost_init(&x, &twodc, &m, &o, NULL, twodc_router, &e) == DL_OK) {
		int node[2] = { 0, 1 }, k[2] = { 8, 4 };
		struct part_group g = { 2, node, k, 4, nocomm, NULL };
		struct part_result r;

		cost_lower_bound(&x);
		/* Keep the DP small: it is O(S L^2) per candidate. */
		if (m.nlayers <= 64 && part_dp(&x, &g, 64, &r) == DL_OK)
			part_result_free(&r);
		cost_free(&x);
	}
	model_free(&m);
}

static void
flows_target(void)
{
	struct dl_flowset fs;
	struct dl_err e = { 0 };

	if (flows_load(&fs, input, &twodc, &e) != DL_OK)
		return;
	router_reset(twodc_router);
	for (size_t i = 0; i < fs.n && i < 64; i++) {
		struct dl_route rt;

		if (router_flow(twodc_router, fs.flows[i].src, fs.flows[i].dst,
		    fs.flows[i].mb * 1e6, 1, &rt, &e) == DL_OK)
			route_clear(&rt);
	}
	flows_free(&fs);
}

static void
steps_target(void)
{
	struct dl_steplog L;
	struct dl_err e = { 0 };
	struct dl_route_opts ro = { rpplan.opts.states, rpplan.opts.horizon };
	struct dl_router *r;
	struct dl_costctx x;
	struct dl_plan out;

	/* As cmd_replan.c does it, with --repartition and 1 s per MILP. */
	if (steplog_load(&L, input, &rpplan, &e) != DL_OK)
		return;
	if (router_new(&r, &rp, &ro, &e) == DL_OK) {
		if (cost_init(&x, &rp, &rpm, &rpplan.opts, rpplan.uhat, r, &e)
		    == DL_OK) {
			struct replan_opts rop = { 4, 1, 0.01, 1.0 };

			if (replan_run(&x, &rpplan, &L, &rop, &out, &e) ==
			    DL_OK)
				plan_free(&out);
			cost_free(&x);
		}
		router_free(r);
	}
	steplog_free(&L);
}

/* Read the input as a plan for c and m; evaluate what reads back. */
static void
plan_for(const struct dl_cluster *c, const struct dl_model *m)
{
	struct dl_plan p;
	struct dl_err e = { 0 };
	struct dl_route_opts ro;
	struct dl_router *r;
	struct dl_costctx x;
	char *json;

	if (plan_read_json(&p, input, c, m, 0, &e) != DL_OK)
		return;
	if (p.uhat == NULL) {
		p.nnodes = c->nnodes;
		p.uhat = xcalloc(c->nnodes + 1, sizeof(double));
		forecast_node_loads(c, p.opts.horizon, p.uhat, &e);
	}
	ro.states = p.opts.states;
	ro.horizon = p.opts.horizon;
	if (router_new(&r, c, &ro, &e) == DL_OK) {
		if (cost_init(&x, c, m, &p.opts, p.uhat, r, &e) == DL_OK) {
			int rc = cost_eval(&x, &p, &e);

			if (rc == DL_OK || rc == DL_EINFEAS)
				cost_baselines(&x, &p, &e);
			cost_free(&x);
		}
		router_free(r);
	}
	if (plan_json_string(&p, c, m, NULL, &json, &e) == DL_OK)
		free(json);
	plan_free(&p);
}

static void
plan_target(void)
{
	struct dl_plan p;
	struct dl_err e = { 0 };

	if (plan_read_inputs(&p, input, &e) != DL_OK)
		return;
	plan_free(&p);
	plan_for(&one, &m4);
	plan_for(&twodc, &llama);
}

static const struct csv_schema *
schema(void)
{
	static const struct {
		const char *name;
		const struct csv_schema *s;
	} tab[] = {
		{ "nodes", &dl_nodes_schema }, { "links", &dl_links_schema },
		{ "load", &dl_load_schema }, { "traffic", &dl_traffic_schema },
		{ "model", &dl_model_schema }, { "flows", &dl_flows_schema },
		{ "steps", &dl_steps_schema },
	};

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (is(tab[i].name))
			return tab[i].s;
	return NULL;
}

/*
 * csvin_parse_each() against csvin_parse(): the streamed rows must be the
 * rows of the table (same lines, same cells), in order.  stop >= 0 makes
 * the callback fail at that row with DL_ESYS.
 */
struct each_cmp {
	const struct csv_table *full;	/* csvin_parse's table, or NULL */
	size_t row;			/* rows seen so far */
	long stop;
};

static void
mismatch(const char *what, size_t row)
{
	fprintf(stderr, "fuzz: csvin_parse_each differs from csvin_parse: "
	    "%s (row %zu)\n", what, row);
	abort();
}

static int
each_row(void *arg, const struct csv_table *t, const struct csv_cell *row,
    long line, struct dl_err *e)
{
	struct each_cmp *ec = arg;
	const struct csv_table *f = ec->full;
	size_t r = ec->row++;

	if (t->nrows != r + 1)
		mismatch("nrows while streaming", r);
	if (ec->stop >= 0 && (long)r == ec->stop)
		return dl_seterr(e, DL_ESYS, "cb", line, 0, "stop at %zu", r);
	if (f == NULL)
		return DL_OK;	/* the whole parse fails, maybe later */
	if (r >= f->nrows)
		mismatch("more rows", r);
	if (line != f->line[r])
		mismatch("line", r);
	for (size_t k = 0; k < t->ncols; k++) {
		const struct csv_cell *a = &row[k], *b = csv_cell(f, r, k);

		if (a->present != b->present)
			mismatch("present", r);
		if (memcmp(&a->num, &b->num, sizeof(a->num)) != 0)
			mismatch("number", r);
		if ((a->s == NULL) != (b->s == NULL) ||
		    (a->s && strcmp(a->s, b->s) != 0))
			mismatch("text", r);
	}
	return DL_OK;
}

static void
parse_both(const struct csv_schema *s, const uint8_t *data, size_t size)
{
	struct dl_err e1 = { 0 }, e2 = { 0 };
	struct csv_table t1, t2;
	struct each_cmp ec = { NULL, 0, -1 };
	int rc1, rc2;

	rc1 = csvin_parse(FUZZ_TARGET ".csv", (const char *)data, size, s,
	    &t1, &e1);
	if (rc1 == DL_OK)
		ec.full = &t1;
	rc2 = csvin_parse_each(FUZZ_TARGET ".csv", (const char *)data, size,
	    s, &t2, each_row, &ec, &e2);
	if (rc1 != rc2)
		mismatch("status", ec.row);
	if (rc1 != DL_OK) {
		if (e1.line != e2.line || e1.col != e2.col ||
		    strcmp(e1.file, e2.file) != 0 ||
		    strcmp(e1.msg, e2.msg) != 0)
			mismatch("error message", ec.row);
		if (t2.file || t2.fcol || t2.nrows)
			mismatch("failed table not empty", ec.row);
		return;
	}
	if (ec.row != t1.nrows || t2.nrows != t1.nrows ||
	    t2.header_line != t1.header_line || t2.ncols != t1.ncols ||
	    memcmp(t2.fcol, t1.fcol, t1.ncols * sizeof(int)) != 0 ||
	    t2.cells != NULL || t2.line != NULL)
		mismatch("table", ec.row);
	csvin_free(&t2);
	/* The callback's failure stops the parse and is returned as is. */
	if (t1.nrows > 0) {
		ec.row = 0;
		ec.stop = (long)(size % t1.nrows);
		rc2 = csvin_parse_each(FUZZ_TARGET ".csv", (const char *)data,
		    size, s, &t2, each_row, &ec, &e2);
		if (rc2 != DL_ESYS || (long)ec.row != ec.stop + 1 ||
		    e2.line != t1.line[ec.stop] || t2.file || t2.fcol)
			mismatch("stopped by the callback", ec.row);
	}
	csvin_free(&t1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct csv_schema *s = schema();

	/* Both CSV readers: the whole table and the stream (predict's). */
	if (s)
		parse_both(s, data, size);
	if (is("nodes") || is("links") || is("load") || is("traffic")) {
		char name[32];

		snprintf(name, sizeof(name), "%s.csv", FUZZ_TARGET);
		cluster_target(name, data, size);
		return 0;
	}
	put("input", data, size);
	if (is("model"))
		model_target();
	else if (is("flows"))
		flows_target();
	else if (is("steps"))
		steps_target();
	else if (is("plan"))
		plan_target();
	return 0;
}
