/*
 * cmd_import.c - "dlplan import": a framework's command line as a plan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * NAME
 *	dlplan import - describe a configuration you already run
 *
 * SYNOPSIS
 *	dlplan import megatron -c DIR -m MODEL.csv [-o OUTDIR] [--hosts LIST]
 *	    [--format table|json] [--mfu F] [--mem-reserve F]
 *	    [cluster options] -- ARGS...
 *
 * DESCRIPTION
 *	Reads the arguments of Megatron-LM's pretrain_gpt.py (the words
 *	after "--"), builds the plan they run on the cluster
 *	(import_megatron.h: the GPUs of --hosts, or of every node, Megatron
 *	rank r on the r-th GPU in that order), prices it as "dlplan eval" would, prints the
 *	configuration, each pipeline stage's memory against the usable
 *	memory and the iteration time, and with -o writes OUTDIR/plan.json
 *	and plan.csv as "dlplan plan -o" does, so that eval, emit and plan
 *	can be run on it and compared with it.
 *
 * EXIT STATUS
 *	0 ok; 1 usage error or an argument Megatron or dlplan does not
 *	know; 2 bad input data (the arguments and the model disagree);
 *	3 the configuration does not fit in memory or uses what dlplan
 *	cannot plan; 4 I/O error.
 */
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "cost.h"
#include "forecast.h"
#include "import_megatron.h"
#include "route.h"

enum { O_FORMAT = 1, O_HOSTS, O_MEMRES, O_MFU, O_MODEL, O_OUT };

static const struct optspec import_opts[] = {
	DL_OPT_CLUSTER,
	{ "format", 0, O_FORMAT, "FMT", "table|json",
	    "output format (default table)" },
	{ "hosts", 0, O_HOSTS, "LIST", NULL,
	    "the nodes the run uses, in node-rank order: NODE[:GPUS],... "
	    "(default: all, in nodes.csv order)" },
	{ "mem-reserve", 0, O_MEMRES, "F", NULL,
	    "fraction of GPU memory kept free (0.10)" },
	{ "mfu", 0, O_MFU, "F", NULL,
	    "GEMM efficiency of nodes without an mfu column (0.65)" },
	{ "model", 'm', O_MODEL, "FILE", "csv", "model.csv" },
	{ "output", 'o', O_OUT, "DIR", "dir",
	    "write DIR/plan.json and DIR/plan.csv" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_import(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_import = {
	"import", cmd_import,
	"megatron -c DIR -m MODEL.csv [-o OUTDIR] [--hosts LIST] "
	"[--format table|json] [--mfu F] [--mem-reserve F] [cluster options] "
	"-- ARGS ...",
	"describe a framework command line you run as a plan",
	import_opts, 0
};

/* The configuration, each stage's memory (the most over the replicas). */
static void
print_table(const struct dl_plan *p, const struct dl_costctx *x,
    const struct dl_cluster *c, const char *outdir)
{
	const struct dl_group *g0 = &p->groups[0];
	const struct dl_estimate *E = &p->est;

	char vs[48] = "";

	if (PLAN_VSTAGES(g0) > 1)
		snprintf(vs, sizeof(vs), " (%d interleaved chunks each)",
		    PLAN_VSTAGES(g0));
	printf("megatron  TP %d, PP %d%s, DP %d: %ld GPUs; micro-batch %ld, "
	    "%ld per replica, global batch %ld\n", g0->stages[0].ngpus,
	    g0->nstages, vs, p->ngroups, plan_ranks(p), p->opts.micro_batch,
	    g0->micro_batches, p->opts.global_batch);
	printf("savers    attention %s, recompute %s, optimizer %s, %s\n",
	    plan_attention_names[p->opts.attention],
	    plan_recompute_names[p->opts.recompute],
	    plan_optimizer_names[p->opts.optimizer],
	    plan_precision_names[plan_precision(p, c)]);
	printf("  %5s  %-9s %9s %9s %8s %9s  %s\n", "stage", "layers",
	    "recompute", "mem_GB", "of_GB", "headroom", "on (most memory)");
	for (int s = 0; s < g0->nstages; s++) {
		const struct dl_stage *w = &g0->stages[s];
		double cap;
		char layers[32];

		for (int g = 1; g < p->ngroups; g++)
			if (p->groups[g].stages[s].mem_bytes -
			    cost_gpu_capacity(x, p->groups[g].stages[s].node) >
			    w->mem_bytes - cost_gpu_capacity(x, w->node))
				w = &p->groups[g].stages[s];
		cap = cost_gpu_capacity(x, w->node);
		snprintf(layers, sizeof(layers), "%d-%d", w->first, w->last);
		printf("  %5d  %-9s %9d %9.3f %8.3g %8.1f%%  %s\n", s, layers,
		    w->recompute, w->mem_bytes / 1e9, cap / 1e9,
		    100 * (1 - w->mem_bytes / cap), c->nodes[w->node].id);
	}
	printf("iteration %.6g s (pipeline %.6g s + sync %.6g s + optimizer "
	    "%.6g s)\n", E->iteration_s, E->pipeline_s, E->sync_s,
	    E->optimizer_s);
	printf("throughput %.6g samples/s\n", E->throughput);
	printf("bound     %.6g s (T_lb), efficiency %.1f%%\n",
	    E->lower_bound_s, 100 * E->efficiency);
	if (outdir)
		printf("wrote     %s/plan.json %s/plan.csv\n", outdir, outdir);
}

/* Write -o's plan.json and plan.csv as one output set. */
static int
write_out(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *outdir, char **js,
    struct dl_err *e)
{
	int rc;

	cmd_set_begin();
	if ((rc = cmd_lock_outdir(outdir, e)) == DL_OK)
		rc = cmd_write_plan(p, c, m, outdir, js, e);
	if (rc == DL_OK)
		return cmd_set_end(outdir, "", 1, e);
	cmd_set_end(outdir, "", 0, NULL);
	return rc;
}

static int
cmd_import(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct dl_cluster_paths paths = { 0 };
	struct optstate st;
	struct dl_err e = { 0 };
	struct dl_cluster c;
	struct dl_model m;
	struct dl_plan p;
	struct dl_router *router = NULL;
	struct dl_costctx x;
	const char *model = NULL, *outdir = NULL, *hostlist = NULL;
	struct import_host *hosts = NULL;
	double mfu = -1, reserve = -1;
	int id, fmt = 0, dd = argc, nargs, nhosts = 0, rc;
	char *js = NULL;

	memset(&x, 0, sizeof(x));
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	opt_init(&st, dd, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0)
			goto usage;
		if (cmd_cluster_opt(id, st.arg, &paths))
			continue;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_HOSTS:
			hostlist = st.arg;
			break;
		case O_MEMRES:
			if (opt_double(&st, 0, 0.9, &reserve, &e))
				goto usage;
			break;
		case O_MFU:
			if (opt_double(&st, 1e-6, 1, &mfu, &e))
				goto usage;
			break;
		case O_MODEL:
			model = st.arg;
			break;
		case O_OUT:
			outdir = st.arg;
			break;
		}
	}
	if (st.npos == 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no framework given "
		    "(expected 'megatron')");
		goto usage;
	}
	if (strcmp(st.pos[0], "megatron") != 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "cannot import '%s' "
		    "(expected 'megatron')", st.pos[0]);
		goto usage;
	}
	if (st.npos > 1) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s' "
		    "(put megatron's arguments after '--')", st.pos[1]);
		goto usage;
	}
	if (paths.dir == NULL && paths.nodes == NULL) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no cluster given "
		    "(expected -c DIR)");
		goto usage;
	}
	if (model == NULL) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no model given "
		    "(expected -m MODEL.csv)");
		goto usage;
	}
	if (dd >= argc - 1) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no megatron arguments "
		    "(expected '-- ARGS...', pretrain_gpt.py's arguments)");
		goto usage;
	}
	if (outdir && strcmp(outdir, "-") == 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "option '-o': '-' is not "
		    "a directory (--format json prints the plan on standard "
		    "output)");
		goto usage;
	}
	opt_free(&st);
	nargs = argc - dd - 1;

	if ((rc = cluster_load(&c, &paths, &e)) != DL_OK)
		return cmd_fail(&e);
	if ((rc = model_load(&m, model, &e)) != DL_OK) {
		cluster_free(&c);
		return cmd_fail(&e);
	}
	cmd_warn_inputs(&c, &m);
	if ((hosts = import_hosts(&c, hostlist, &nhosts, &e)) == NULL) {
		model_free(&m);
		cluster_free(&c);
		return opt_usage_error(cmd, &e);
	}
	rc = import_megatron(&p, &c, &m, hosts, nhosts, argv + dd + 1, nargs,
	    &e);
	free(hosts);
	if (rc == DL_OK) {
		if (mfu > 0)
			p.opts.mfu = mfu;
		if (reserve >= 0)
			p.opts.mem_reserve = reserve;
		if ((rc = router_check_size(&c, &e)) == DL_OK &&
		    (rc = cmd_price_plan(&p, &c, &m, &router, &x, &e)) ==
		    DL_OK)
			rc = plan_set_inputs(&p, &c, &m, &e);
		if (rc == DL_OK && outdir)
			rc = write_out(&p, &c, &m, outdir, fmt == 1 ? &js :
			    NULL, &e);
		if (rc == DL_OK && fmt == 1) {
			if (js == NULL)
				rc = plan_json_string(&p, &c, &m, NULL, &js,
				    &e);
			if (rc == DL_OK)
				fputs(js, stdout);
		} else if (rc == DL_OK && dl_verbose >= 0)
			print_table(&p, &x, &c, outdir);
		plan_free(&p);
	}
	if (rc != DL_OK)
		dl_perr(&e);
	free(js);
	cost_free(&x);
	router_free(router);
	model_free(&m);
	cluster_free(&c);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
