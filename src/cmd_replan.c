/*
 * cmd_replan.c - "dlplan replan": a new plan from the step times a
 * running job logged (dlplan(1), dlplan replan; the estimator is in replan.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "cost.h"
#include "fmethod.h"
#include "forecast.h"
#include "partition.h"
#include "replan.h"
#include "route.h"
#include "sb.h"
#include "util_io.h"

enum {
	O_FORMAT = 1, O_MINGAIN, O_MODEL, O_OBSERVED, O_OUT, O_REPART,
	O_TLIM, O_WINDOW, O_FORECAST
};

static const struct optspec replan_opts[] = {
	DL_OPT_CLUSTER,
	{ "forecast", 0, O_FORECAST, "METHOD", FM_NAMES,
	    "forecast the node loads again from load.csv with METHOD" },
	{ "format", 0, O_FORMAT, "FMT", "table|json",
	    "summary format on standard output" },
	{ "min-gain", 0, O_MINGAIN, "F", NULL,
	    "adopt a new plan only when it is faster by this fraction (0.01)" },
	{ "model", 'm', O_MODEL, "FILE", "csv",
	    "model.csv (default: the plan's)" },
	{ "observed", 0, O_OBSERVED, "FILE", "csv",
	    "step times logged by the job: rank,step,seconds[,samples]" },
	{ "outdir", 'o', O_OUT, "DIR", "dir",
	    "write the new plan.json and plan.csv to DIR" },
	{ "repartition", 0, O_REPART, NULL, NULL,
	    "solve the layer partition again too" },
	{ "time-limit", 0, O_TLIM, "S", NULL,
	    "time limit of each MILP in seconds (60)" },
	DL_OPT_TRUST,
	{ "window", 0, O_WINDOW, "W", NULL,
	    "use each rank's last W steps (8)" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_replan(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_replan = {
	"replan", cmd_replan,
	"PLAN.json --observed STEPS.csv [-o OUTDIR] [--window W] "
	"[--repartition] [--ignore-digests] [--trust-paths] [options]",
	"re-plan from the step times a running job measured",
	replan_opts, 0
};

static void
print_groups(const struct dl_plan *p, const struct dl_cluster *c)
{
	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];

		printf("  group %d: %ld micro-batches, T_g %.6g s,", g,
		    gr->micro_batches, gr->time_s);
		for (int j = 0; j < gr->nstages; j++) {
			const struct dl_stage *s = &gr->stages[j];

			printf(" %s%s[%d-%d]x%d", j ? "> " : "",
			    c->nodes[s->node].id, s->first, s->last, s->ngpus);
		}
		printf("\n");
	}
}

static void
print_summary(const char *path, const struct dl_plan *parent,
    const struct dl_plan *p, const struct dl_cluster *c, const char *outdir)
{
	const struct dl_lineage *l = p->lineage;
	int all_one = 1;

	printf("parent    %s (sha256 %.12s), %ld ranks\n", path, p->parent,
	    plan_ranks(parent));
	printf("log       %s, each rank's last %d step%s, %s times\n",
	    l->observed, l->window, l->window == 1 ? "" : "s", l->compute ?
	    "compute" : "pipeline");
	for (int i = 0; i < l->nunits; i++) {
		const struct replan_unit *u = &l->unit[i];

		all_one &= u->factor == 1;
		/* Pipeline times are per group: print a group once. */
		if (!l->compute && u->stage > 0)
			continue;
		printf("  group %d", u->group);
		if (l->compute)
			printf(" stage %d", u->stage);
		printf(": predicted %.6g s, observed %.6g s over %ld step%s "
		    "(noise %.2g%%, band %.2g%%): ", u->predicted_s,
		    u->observed_s, u->steps, u->steps == 1 ? "" : "s",
		    100 * u->noise, 100 * u->band);
		if (u->factor == 1)
			printf("as planned\n");
		else
			printf("speed x%.4g%s\n", u->factor, u->clamped ?
			    " (clamped)" : "");
	}
	printf("speeds   ");
	for (size_t i = 0; i < l->nnodes; i++)
		if (l->used[i] && l->factor[i] != 1)
			printf(" %s x%.4g", c->nodes[i].id, l->factor[i]);
	printf("%s\n", all_one ? " as planned" : "");
	printf("plan      %d group%s, %ld GPUs (%s)\n", p->ngroups,
	    p->ngroups == 1 ? "" : "s", plan_ranks(p), l->adopted ?
	    "new" : "the parent's");
	print_groups(p, c);
	printf("iteration %.6g s under the measured speeds (parent %.6g s; "
	    "planned %.6g s)\n", l->iteration_s, l->measured_s, l->planned_s);
	if (l->adopted)
		printf("gain      %.1f%% faster than the parent\n",
		    100 * l->gain);
	else if (all_one)
		printf("gain      none: the log matches the plan\n");
	else
		printf("gain      kept the parent: the best re-plan is %.2g%% "
		    "faster, below --min-gain %.2g%%\n", 100 * (l->measured_s -
		    p->est.iteration_s) / l->measured_s, 100 * l->min_gain);
	if (outdir)
		printf("wrote     %s/plan.json %s/plan.csv\n", outdir, outdir);
}

/* Refuse an outdir whose plan.json is the parent itself. */
static int
check_outdir(const char *parent, const char *outdir, struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	char *a = realpath(parent, NULL), *b;
	int rc = DL_OK;

	sb_addf(&sb, "%s/plan.json", outdir);
	b = realpath(sb.buf, NULL);
	if (a && b && strcmp(a, b) == 0)
		rc = dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "'%s' would overwrite "
		    "the parent plan (choose another -o)", sb.buf);
	free(a);
	free(b);
	sb_free(&sb);
	return rc;
}

/* Re-plan p (read from path) with the log: fills np. */
static int
run(const char *path, struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *observed,
    const struct replan_opts *ro, struct dl_plan *np, struct dl_err *e)
{
	struct dl_route_opts rto = { p->opts.states, p->opts.horizon,
	    p->opts.forecast };
	struct dl_router *router = NULL;
	struct dl_steplog L;
	struct dl_costctx x;
	char sha[65];
	long long size;
	int rc;

	memset(np, 0, sizeof(*np));
	if (p->uhat == NULL) {
		/* A plan without a forecast is priced like eval prices it. */
		p->nnodes = c->nnodes;
		p->uhat = xcalloc(c->nnodes + 1, sizeof(double));
		if ((rc = forecast_node_loads(c, p->opts.horizon,
		    p->opts.forecast, p->uhat, e)) != DL_OK)
			return rc;
	}
	if ((rc = sha256_file(path, -1, sha, &size, e)) != DL_OK)
		return rc;
	if ((rc = steplog_load(&L, observed, p, e)) != DL_OK)
		return rc;
	rc = router_new(&router, c, &rto, e);
	if (rc == DL_OK &&
	    (rc = cost_init(&x, c, m, &p->opts, p->uhat, router, e)) == DL_OK) {
		rc = replan_run(&x, p, &L, ro, np, e);
		cost_free(&x);
	}
	if (rc == DL_OK) {
		/* What the forecast of the new plan's loads used. */
		char **used = forecast_node_used(c, np->opts.horizon,
		    np->opts.forecast);

		plan_set_uhat_used(np, used, c->nnodes);
		forecast_used_free(used, c->nnodes);
		np->parent = xstrdup(sha);
		np->lineage->parent_file = xstrdup(path);
		np->lineage->observed = xstrdup(observed);
		rc = plan_set_inputs(np, c, m, e);
	}
	router_free(router);
	steplog_free(&L);
	return rc;
}

static int
cmd_replan(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct dl_cluster_paths paths = { 0 };
	struct replan_opts ro = { REPLAN_WINDOW_DEFAULT, 0,
	    REPLAN_MIN_GAIN_DEFAULT, 60 };
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	struct dl_cluster c;
	struct dl_model m;
	struct dl_plan p, np;
	const char *model = NULL, *outdir = NULL, *observed = NULL, *path;
	char *js = NULL;
	int id, fmt = 0, fmethod = -1, rc, flags = 0;
	long v;

	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, id == O_OUT ?
		    "--format json prints the new plan on standard output" :
		    NULL, &e) != DL_OK)
			goto usage;
		if (cmd_cluster_opt(id, st.arg, &paths))
			continue;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		case O_FORECAST:
			if ((fmethod = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_MINGAIN:
			if (opt_double(&st, 0, 0.99, &ro.min_gain, &e))
				goto usage;
			break;
		case O_MODEL:
			model = st.arg;
			break;
		case O_OBSERVED:
			observed = st.arg;
			break;
		case O_OUT:
			outdir = st.arg;
			break;
		case O_REPART:
			ro.repartition = 1;
			break;
		case OPT_IGNORE:
			flags |= CMD_IGNORE_DIGESTS;
			break;
		case OPT_TRUST:
			flags |= CMD_TRUST_PATHS;
			break;
		case O_TLIM:
			if (opt_double(&st, 0.001, 1e6, &ro.time_limit, &e))
				goto usage;
			break;
		case O_WINDOW:
			if (opt_long(&st, 1, 100000, &v, &e))
				goto usage;
			ro.window = (int)v;
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
	if (observed == NULL) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no step log given "
		    "(expected --observed STEPS.csv)");
		goto usage;
	}
	if (cmd_stdin_take(&in, "PLAN.json", st.pos[0], &e) != DL_OK)
		goto usage;
	path = st.pos[0];
	if (outdir && check_outdir(path, outdir, &e) != DL_OK)
		goto usage;

	/*
	 * The files given in place of the plan's are not compared with its
	 * digests: the job's load history keeps growing while it runs, and
	 * replan prices with the loads the plan recorded.  The plan's own
	 * files are read only with their digests (cmd_load_plan()).
	 */
	if ((rc = cmd_load_plan(path, &paths, model, flags, &p, &c, &m,
	    NULL, &e)) != DL_OK) {
		opt_free(&st);
		return cmd_fail(&e);
	}
	if (fmethod >= 0) {
		/* run() forecasts again, with this method, from load.csv. */
		p.opts.forecast = fmethod;
		free(p.uhat);
		p.uhat = NULL;
	}
	memset(&np, 0, sizeof(np));	/* run() fills it */
	rc = ro.repartition ? part_max_layers(&m, &e) : DL_OK;
	if (rc == DL_OK)
		rc = run(path, &p, &c, &m, observed, &ro, &np, &e);
	if (rc == DL_OK && outdir) {
		cmd_set_begin();
		if ((rc = cmd_lock_outdir(outdir, &e)) == DL_OK)
			rc = cmd_write_plan(&np, &c, &m, outdir,
			    fmt == 1 ? &js : NULL, &e);
		if (rc == DL_OK)
			rc = cmd_set_end(outdir, "", 1, &e);
		else
			cmd_set_end(outdir, "", 0, NULL);
	}
	if (rc == DL_OK && fmt == 1) {
		/* Built with plan.json when -o wrote it. */
		if (js == NULL)
			rc = plan_json_string(&np, &c, &m, NULL, &js, &e);
		if (rc == DL_OK)
			fputs(js, stdout);
	} else if (rc == DL_OK && dl_verbose >= 0) {
		print_summary(path, &p, &np, &c, outdir);
	}
	if (rc != DL_OK)
		cmd_fail(&e);
	free(js);
	plan_free(&np);
	plan_free(&p);
	model_free(&m);
	cluster_free(&c);
	opt_free(&st);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
