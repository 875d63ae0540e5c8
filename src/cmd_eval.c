/*
 * cmd_eval.c - "dlplan eval": price a plan with the cost model.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * NAME
 *	dlplan eval - evaluate a plan under the cost model
 *
 * SYNOPSIS
 *	dlplan eval PLAN.json [-c DIR] [-m MODEL.csv] [--baselines]
 *	    [--format table|json] [--svg FILE] [--ignore-digests]
 *	    [cluster options]
 *
 * DESCRIPTION
 *	Reads a plan (written by "dlplan plan" or by hand, see
 *	dlplan-formats(5)), checks its structure against the cluster and
 *	the model, and prices it with the cost model of dlplan(1)
 *	ALGORITHMS, Cost model:
 *	stage compute times, routed pipeline and sync transfers, the time of
 *	every group, the sync time, the iteration time T, the lower bound
 *	T_lb and the efficiency T_lb / T.
 *
 *	By default the cluster files and the model are the ones the plan
 *	names in its "inputs" (relative paths are relative to the plan
 *	file's directory).  -c DIR replaces all cluster files by those of
 *	DIR; --nodes, --links, --load and --traffic replace one file each;
 *	-m replaces the model.  The files the plan names are read only when
 *	their bytes have the SHA-256 digests it records, wherever they lie
 *	(cmd_load_plan()); the files given in their place must have them
 *	too, or eval refuses the plan (exit 2) so that a stale plan is not
 *	trusted; --ignore-digests evaluates it anyway ("what if the cluster
 *	changed"), with the plan's own files then confined to its directory
 *	unless --trust-paths.  A plan without
 *	a "forecast" gets one from load.csv (the forecast of dlplan(1),
 *	ALGORITHMS; the plan's horizon).
 *
 *	The table lists, per group, T_g (the 1F1B makespan, pipesched.h)
 *	split into compute (sum of t), p2p (sum of c) and the steady-state
 *	term (the rest of T_g), then the end of timeline.c's own simulation
 *	of the same schedule beside the model's pipeline phase, and per
 *	stage its node, GPUs, layers, forecast load, t, c and the peak memory per GPU
 *	against the usable memory; then the sync segments with their rings,
 *	T, T_lb, efficiency, throughput and the hottest directed links: the
 *	flows and bytes over each (both phases), largest first.
 *	--format json prints the evaluated plan (dlplan.plan/1, with fresh
 *	input digests and absolute input paths, since the output may be
 *	saved anywhere).
 *
 *	--baselines also prices two data-parallel layouts over the same
 *	GPUs.  "The same GPUs" are the GPUs the plan uses, each made its own
 *	replica: TP degree 1, one stage holding every layer, in rank order.
 *	This is the classic one-process-per-GPU DDP layout that Chao, Liao and
 *	Gao start from; it may not fit in memory (the table says so; its time
 *	is still given).  The global batch's M = global/micro micro-batches
 *	are split
 *	    even:	   M/n per GPU, the first M mod n GPUs one more;
 *	    proportional:  in proportion to the GPUs' effective speeds (seed
 *			   003 static allocation): floor(M s_i / sum s), the
 *			   remaining micro-batches one each to the largest
 *			   remainders, ties to the lower rank.
 *	A GPU given no micro-batch is left out of the baseline.
 *
 *	--svg FILE writes (atomically) a timeline of one iteration: one lane
 *	per stage, the forward and backward block of every micro-batch in
 *	1F1B order (simulated with the model's stage and transfer times),
 *	the transfers, each group's model T_g, and the sync phase after the
 *	pipeline phase, on a time axis in seconds.
 *
 * EXIT STATUS
 *	0 ok; 1 usage error; 2 bad plan or input data (including a digest
 *	mismatch); 3 the plan does not fit in memory (the message names the
 *	GPU and the bytes over) or a transfer has no route; 4 I/O error.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "cost.h"
#include "forecast.h"
#include "modelgen.h"
#include "route.h"
#include "timeline.h"

static double rel_pct(double, double);

enum { O_BASELINES = 1, O_FORMAT, O_MODEL, O_SVG };

static const struct optspec eval_opts[] = {
	{ "baselines", 0, O_BASELINES, NULL, NULL,
	    "also price even and speed-proportional data parallelism over "
	    "the plan's GPUs" },
	DL_OPT_CLUSTER,
	{ "format", 0, O_FORMAT, "FMT", "table|json",
	    "output format (default table)" },
	{ "model", 'm', O_MODEL, "FILE", "csv",
	    "model.csv to use instead of the plan's" },
	{ "svg", 0, O_SVG, "FILE", "file",
	    "write a pipeline timeline (SVG; - for standard output)" },
	DL_OPT_TRUST,
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_eval(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_eval = {
	"eval", cmd_eval,
	"PLAN.json [-c DIR] [-m MODEL.csv] [--baselines] "
	"[--format table|json] [--svg FILE] [--ignore-digests] "
	"[--trust-paths] [cluster options]",
	"price a plan with the cost model",
	eval_opts, 0
};

/* What eval works on. */
struct ev {
	const char *plan_path;
	struct dl_cluster c;
	struct dl_model m;
	struct dl_plan p;
	struct dl_router *router;
	struct dl_costctx x;
	int forecast_given;
};

/*
 * Output helpers.
 */

/*
 * The model FLOPs of an iteration as Megatron-LM's log counts them
 * (mg_megatron_flops(); the vocabulary padded to 128 TP for a megatron
 * plan, as Megatron pads it), per GPU per second over T, and over the
 * dense peak of the plan's GPUs: what a user compares with Megatron's
 * "throughput per GPU (TFLOP/s/GPU)" line.  Only for gpt and llama
 * models written by dlplan model.
 */
static void
print_flops(const struct ev *v)
{
	const struct dl_plan *p = &v->p;
	double T = p->est.iteration_s, peak = 0, F;
	long pad = 1;

	if (!v->m.has_arch || T <= 0)
		return;
	if (p->runtime == RUNTIME_MEGATRON && p->ngroups > 0)
		pad = 128L * p->groups[0].stages[0].ngpus;
	F = mg_megatron_flops(&v->m.arch, p->opts.global_batch, pad);
	if (F <= 0)
		return;
	for (int g = 0; g < p->ngroups; g++)
		for (int j = 0; j < p->groups[g].nstages; j++)
			peak += p->groups[g].stages[j].ngpus *
			    v->c.nodes[p->groups[g].stages[j].node].tflops *
			    1e12;
	printf("model      %.17g FLOP an iteration (Megatron-LM's count: "
	    "causal attention halved, no recomputation)\n", F);
	printf("           %.6g TFLOP/s per GPU over T; MFU %.2f %% of the "
	    "plan's GPUs' dense peak\n", F / T / (double)plan_ranks(p) / 1e12,
	    peak > 0 ? 100 * F / (T * peak) : 0);
}

static const char *
fmt_s(char *buf, double v)
{
	snprintf(buf, 32, "%.6g", v);
	return buf;
}

static void
print_stages(const struct ev *v, const struct dl_group *gr)
{
	char a[32], b[32];

	printf("  %5s  %-14s %-9s %-9s %5s %11s %11s %9s %7s\n", "stage",
	    "node", "gpus", "layers", "load", "compute_s", "p2p_s", "mem_GB",
	    "of_GB");
	for (int s = 0; s < gr->nstages; s++) {
		const struct dl_stage *st = &gr->stages[s];
		char gpus[40], layers[32];
		size_t n = 0;

		gpus[0] = '\0';
		for (int d = 0; d < st->ngpus && n < sizeof(gpus) - 4; d++)
			n += snprintf(gpus + n, sizeof(gpus) - n, "%s%d",
			    d ? "," : "", st->gpus[d]);
		snprintf(layers, sizeof(layers), "%d-%d", st->first, st->last);
		printf("  %5d  %-14s %-9s %-9s %4.0f%% %11s %11s %9.3f %7.3g\n",
		    s, v->c.nodes[st->node].id, gpus, layers,
		    100 * v->x.uhat[st->node], fmt_s(a, st->compute_s),
		    fmt_s(b, st->p2p_s), st->mem_bytes / 1e9,
		    cost_gpu_capacity(&v->x, st->node) / 1e9);
	}
}

static void
print_rings(const struct ev *v)
{
	const struct dl_plan *p = &v->p;
	char a[32];

	if (p->ngroups < 2) {
		printf("sync       none (one group)\n");
		return;
	}
	printf("sync       %d segment%s, T_sync %s s\n", p->nrings,
	    p->nrings == 1 ? "" : "s", fmt_s(a, p->est.sync_s));
	printf("  %7s  %-9s %10s %10s %11s  %s\n", "segment", "layers",
	    "params_M", "hop_MB", "R_s", "ring (group.stage@node)");
	for (int q = 0; q < p->nrings; q++) {
		const struct dl_ring *r = &p->rings[q];
		char layers[32];

		snprintf(layers, sizeof(layers), "%d-%d", r->first, r->last);
		printf("  %7d  %-9s %10.6g %10.6g %11s  ", q, layers,
		    r->params / 1e6, r->hop_bytes / 1e6, fmt_s(a, r->time_s));
		for (int i = 0; i < r->nmembers; i++) {
			int nd = p->groups[r->group[i]].stages[r->stage[i]].node;

			printf("%s%d.%d@%s", i ? " > " : "", r->group[i],
			    r->stage[i], v->c.nodes[nd].id);
		}
		printf("\n");
	}
}

/* Flows and bytes per directed edge, over both phases. */
struct hot {
	int edge;
	long flows[2];
	double bytes;
};

static int
by_heat(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;
	long fx = x->flows[0] + x->flows[1], fy = y->flows[0] + y->flows[1];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return (x->edge > y->edge) - (x->edge < y->edge);
}

static void
print_hot(const struct ev *v)
{
	const struct dl_plan *p = &v->p;
	struct hot *h = xcalloc(v->c.nedges + 1, sizeof(*h));
	size_t used = 0, shown;

	for (size_t e = 0; e < v->c.nedges; e++)
		h[e].edge = (int)e;
	for (size_t i = 0; i < p->nflows; i++) {
		const struct dl_flow *f = &p->flows[i];

		for (size_t k = 0; k + 1 < f->npath; k++) {
			int e = cluster_edge(&v->c, f->path[k], f->path[k + 1]);

			if (e < 0)
				continue;
			used += h[e].flows[0] + h[e].flows[1] == 0;
			h[e].flows[f->phase]++;
			h[e].bytes += f->bytes;
		}
	}
	if (used == 0) {
		printf("hot links  none (no transfer crosses the network)\n");
		free(h);
		return;
	}
	qsort(h, v->c.nedges, sizeof(*h), by_heat);
	shown = used < 5 ? used : 5;
	printf("hot links  %zu of %zu used, top %zu by bytes\n", used,
	    v->c.nedges, shown);
	printf("  %-32s %8s %8s %6s %12s\n", "link", "flows", "pipeline",
	    "sync", "MB");
	for (size_t i = 0; i < shown; i++) {
		const struct dl_edge *ed = &v->c.edges[h[i].edge];
		char name[160];

		snprintf(name, sizeof(name), "%s -> %s", v->c.verts[ed->src].id,
		    v->c.verts[ed->dst].id);
		printf("  %-32s %8ld %8ld %6ld %12.6g\n", name,
		    h[i].flows[0] + h[i].flows[1], h[i].flows[0], h[i].flows[1],
		    h[i].bytes / 1e6);
	}
	free(h);
}

static void
print_table(const struct ev *v, int baselines)
{
	const struct dl_plan *p = &v->p;
	const struct dl_estimate *E = &p->est;
	char a[32], b[32], c[32], d[32];

	printf("plan       %s (%s)\n", v->plan_path,
	    plan_status_names[p->status]);
	for (size_t i = 0; i < p->ninputs; i++)
		printf("%-10s %-8s %s\n", i ? "" : "inputs", p->inputs[i].kind,
		    p->inputs[i].path);
	printf("job        global batch %ld = %ld micro-batches of %ld; %d "
	    "group%s, %ld rank%s\n", p->opts.global_batch,
	    p->opts.global_batch / p->opts.micro_batch, p->opts.micro_batch,
	    p->ngroups, p->ngroups == 1 ? "" : "s", plan_ranks(p),
	    plan_ranks(p) == 1 ? "" : "s");
	if (p->runtime != RUNTIME_DLPLAN)
		printf("runtime    %s (made with plan --runtime %s)\n",
		    plan_runtime_names[p->runtime],
		    plan_runtime_names[p->runtime]);
	if (v->forecast_given)
		printf("forecast   node loads given in the plan\n");
	else if (v->c.has_load)
		printf("forecast   node loads from %s (horizon %d)\n",
		    v->c.path_load, p->opts.horizon);
	else
		printf("forecast   none (no load.csv: nodes taken as idle)\n");
	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		double ct = 0, cc = 0;

		for (int s = 0; s < gr->nstages; s++) {
			ct += gr->stages[s].compute_s;
			cc += gr->stages[s].p2p_s;
		}
		char vs[64] = "";

		if (PLAN_VSTAGES(gr) > 1)
			snprintf(vs, sizeof(vs), " of %d interleaved chunks",
			    PLAN_VSTAGES(gr));
		printf("\ngroup %d    %ld micro-batch%s, %d stage%s%s: T_g %s s "
		    "= compute %s + p2p %s + steady-state %s%s\n", g,
		    gr->micro_batches, gr->micro_batches == 1 ? "" : "es",
		    gr->nstages, gr->nstages == 1 ? "" : "s", vs,
		    fmt_s(a, gr->time_s), fmt_s(b, ct), fmt_s(c, cc),
		    fmt_s(d, gr->time_s - ct - cc),
		    g == E->slowest_group && p->ngroups > 1 ? " (slowest)" : "");
		print_stages(v, gr);
	}
	printf("\n");
	print_rings(v);
	printf("\niteration  T     %s s (pipeline %s + sync %s + optimizer "
	    "%s)\n", fmt_s(a, E->iteration_s), fmt_s(b, E->pipeline_s),
	    fmt_s(c, E->sync_s), fmt_s(d, E->optimizer_s));
	if (plan_interleaves(p))
		printf("simulated  1F1B  not run (the plan interleaves; the "
		    "replay is of plain 1F1B)\n");
	else if (isnan(E->simulated_s))
		printf("simulated  1F1B  not run (more than %ld stage "
		    "micro-batches over all groups)\n", TL_SIM_MAX);
	else
		printf("simulated  1F1B  %s s pipeline phase (%+.3f %% from "
		    "the model's)\n", fmt_s(a, E->simulated_s),
		    rel_pct(E->simulated_s, E->pipeline_s));
	printf("bound      T_lb  %s s (every GPU of the cluster busy)\n",
	    fmt_s(a, E->lower_bound_s));
	if (p->bound_method == BOUND_COMBINATORIAL ||
	    p->bound_method == BOUND_LP)
		printf("bound      plan  %s s (the search's, with fill, "
		    "transfers and sync)\n", fmt_s(a, p->bound_s));
	printf("efficiency       %.2f %%\n", 100 * E->efficiency);
	printf("throughput       %.6g samples/s\n", E->throughput);
	print_flops(v);
	printf("\n");
	print_hot(v);
	if (!baselines)
		return;
	printf("\nbaselines  one replica per GPU of the plan, same model\n");
	printf("  %-28s %12s s%s\n", "even data-parallel",
	    fmt_s(a, p->even_s), p->even_fits ? "" : "  (does not fit in "
	    "memory)");
	printf("  %-28s %12s s%s\n", "speed-proportional (003)",
	    fmt_s(a, p->proportional_s), p->proportional_fits ? "" :
	    "  (does not fit in memory)");
	printf("  %-28s %12s s  speed-up %.3g over even\n", "this plan",
	    fmt_s(a, E->iteration_s), p->even_s / E->iteration_s);
}

/*
 * Loading.
 */

/* The cluster and model of the plan, with the command line's on top. */
static int
load_inputs(struct ev *v, const struct dl_cluster_paths *user,
    const char *model, int flags, struct dl_err *e)
{
	const char *missing;
	int rc = cmd_load_plan(v->plan_path, user, model, flags,
	    &v->p, &v->c, &v->m, &missing, e);

	if (missing && strcmp(missing, "nodes") == 0)
		rc = dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "plan '%s' names no "
		    "nodes.csv (expected -c DIR or --nodes FILE)",
		    v->plan_path);
	else if (missing)
		rc = dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "plan '%s' names no "
		    "model (expected -m MODEL.csv)", v->plan_path);
	return rc;
}

/* Forecast, router, cost model, evaluation. */
static int
evaluate(struct ev *v, int baselines, struct dl_err *e)
{
	struct dl_plan *p = &v->p;
	int rc;

	v->forecast_given = p->uhat != NULL;
	rc = cmd_price_plan(p, &v->c, &v->m, &v->router, &v->x, e);
	/* Report only what this run computed, not the file's baselines. */
	p->even_s = p->proportional_s = 0;
	if (rc == DL_OK && baselines)
		rc = cost_baselines(&v->x, p, e);
	if (rc == DL_OK)
		rc = plan_set_inputs(p, &v->c, &v->m, e);
	return rc;
}

/* 100 (a / b - 1), with a difference below 1e-6 % shown as 0. */
static double
rel_pct(double a, double b)
{
	double r = b > 0 ? 100 * (a / b - 1) : 0;

	return fabs(r) < 1e-6 ? 0 : r;
}

/*
 * The slowest group's end in timeline.c's own 1F1B simulation; NaN when
 * a group is too long to simulate pass by pass (TL_SIM_MAX).
 */
static double
simulated_end(const struct dl_plan *p, const struct dl_model *m)
{
	double end = 0;

	/* timeline.c replays plain 1F1B only. */
	if (plan_interleaves(p))
		return 0;
	if (!timeline_fits(p, TL_SIM_MAX))
		return NAN;

	for (int g = 0; g < p->ngroups; g++) {
		struct tl_sim sm;

		timeline_simulate(p, m, g, &sm);
		end = fmax(end, sm.end);
		timeline_sim_free(&sm);
	}
	return end;
}

static int
cmd_eval(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct dl_cluster_paths user = { 0 };
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	struct ev v;
	const char *model = NULL, *svg = NULL;
	int id, fmt = 0, baselines = 0, flags = CMD_CHECK_DIGESTS, rc;
	char *out = NULL;

	memset(&v, 0, sizeof(v));
	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, NULL, &e) != DL_OK)
			goto usage;
		if (cmd_cluster_opt(id, st.arg, &user))
			continue;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		case O_BASELINES:
			baselines = 1;
			break;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case OPT_IGNORE:
			flags |= CMD_IGNORE_DIGESTS;
			break;
		case OPT_TRUST:
			flags |= CMD_TRUST_PATHS;
			break;
		case O_MODEL:
			model = st.arg;
			break;
		case O_SVG:
			svg = st.arg;
			break;
		}
	}
	if (st.npos == 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no plan given (expected "
		    "PLAN.json)");
		goto usage;
	}
	if (st.npos > 1) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    st.pos[1]);
		goto usage;
	}
	if (cmd_stdin_take(&in, "PLAN.json", st.pos[0], &e) != DL_OK)
		goto usage;
	v.plan_path = st.pos[0];
	opt_free(&st);

	if ((rc = load_inputs(&v, &user, model, flags, &e)) != DL_OK)
		return rc == DL_EUSAGE ? opt_usage_error(cmd, &e) :
		    cmd_fail(&e);
	rc = evaluate(&v, baselines, &e);
	if (rc == DL_OK)
		v.p.est.simulated_s = simulated_end(&v.p, &v.m);
	if (rc == DL_OK && svg && plan_interleaves(&v.p))
		rc = dl_seterr(&e, DL_EDATA, v.plan_path, 0, 0, "--svg draws "
		    "the plain 1F1B schedule, and the plan interleaves "
		    "(virtual_stages)");
	else if (rc == DL_OK && svg && !timeline_fits(&v.p, TL_SVG_MAX))
		rc = dl_seterr(&e, DL_EDATA, v.plan_path, 0, 0, "too many "
		    "passes to draw with --svg (more than %ld stage "
		    "micro-batches over all groups)", TL_SVG_MAX);
	if (rc == DL_OK && svg) {
		out = timeline_svg(&v.p, &v.c, &v.m, v.plan_path);
		rc = cmd_write_output(svg, out, strlen(out), &e);
		free(out);
		out = NULL;
	}
	/* With --svg -, the SVG is all of standard output. */
	if (svg && strcmp(svg, "-") == 0)
		fmt = -1;
	if (rc == DL_OK && fmt == 1) {
		rc = plan_json_string(&v.p, &v.c, &v.m, NULL, &out, &e);
		if (rc == DL_OK)
			fputs(out, stdout);
		free(out);
	} else if (rc == DL_OK && fmt == 0) {
		print_table(&v, baselines);
	}
	if (rc != DL_OK) {
		/* Memory and routing errors are about this plan. */
		if (e.file[0] == '\0')
			snprintf(e.file, sizeof(e.file), "%s", v.plan_path);
		dl_perr(&e);
	}
	cost_free(&v.x);
	router_free(v.router);
	plan_free(&v.p);
	model_free(&v.m);
	cluster_free(&v.c);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
