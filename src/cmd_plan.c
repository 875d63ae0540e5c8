/*
 * cmd_plan.c - "dlplan plan": search the best plan for a cluster and a
 * model and write plan.json and plan.csv.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "af.h"
#include "budget.h"
#include "cmds.h"
#include "cmdutil.h"
#include "cost.h"
#include "emit.h"
#include "fmethod.h"
#include "forecast.h"
#include "partition.h"
#include "route.h"
#include "runtime.h"
#include "sb.h"
#include "search.h"

enum {
	O_DUMP = 1, O_EXACT, O_FORMAT, O_GBATCH, O_GRAD, O_HORIZON, O_MAXS,
	O_MAXTP, O_MEMRES, O_MFU, O_MODEL, O_MBATCH, O_OPT, O_OUT, O_PARAM,
	O_STATES, O_STRAT, O_TLIM,
	O_BUDGET, O_SLOTS, O_SLOTSTEPS, O_TRADEOFF,
	O_JOB, O_LAUNCHER, O_PORT, O_PARTITION, O_SCRIPT, O_TIME, O_JOBS,
	O_FORECAST, O_RUNTIME, O_ATTN, O_RECOMP, O_OPTIM, O_OVERLAP
};
/* emit's #SBATCH options for --launcher, numbered apart from the above. */
enum { O_ACCOUNT = 500, O_QOS, O_LOGOUT, O_LOGERR, O_SBATCH };

static const struct optspec plan_opts[] = {
	DL_OPT_CLUSTER,
	{ "account", 0, O_ACCOUNT, "NAME", NULL,
	    "Slurm account for --launcher (#SBATCH --account)" },
	{ "attention", 0, O_ATTN, "K", PLAN_ATTENTIONS,
	    "attention kernel: fused (flash, keeps no scores) or unfused" },
	{ "budget", 0, O_BUDGET, "COST", NULL,
	    "average price per hour the schedule may spend (needs --slots)" },
	{ "dump-lp", 0, O_DUMP, "DIR", "dir",
	    "write the final plan's MILPs to DIR in CPLEX LP format" },
	{ "error", 0, O_LOGERR, "PATH", "file",
	    "Slurm's stderr log path for --launcher (#SBATCH --error)" },
	{ "exact", 0, O_EXACT, "WHEN", "auto|yes|no",
	    "exhaustive search: auto (at most 6 GPUs and 2e5 layer splits), "
	    "yes (at most 12 GPUs), no" },
	{ "forecast", 0, O_FORECAST, "METHOD", FM_NAMES,
	    "load forecast method (gmc; see predict --method)" },
	{ "format", 0, O_FORMAT, "FMT", "table|json",
	    "summary format on standard output" },
	{ "global-batch", 0, O_GBATCH, "N", NULL, "samples per iteration" },
	{ "grad-bytes", 0, O_GRAD, "B", NULL, "bytes per gradient (2)" },
	{ "horizon", 0, O_HORIZON, "N", NULL,
	    "forecast steps the job will run (1)" },
	{ "job-name", 0, O_JOB, "NAME", NULL,
	    "Slurm job name for --launcher (" EMIT_DEFAULT_JOB_NAME ")" },
	{ "jobs", 'j', O_JOBS, "N", NULL,
	    "threads for the search (the online CPUs)" },
	{ "launcher", 0, O_LAUNCHER, "L", emit_launchers,
	    "also write OUTDIR/launch/ for that launcher or framework" },
	{ "master-port", 0, O_PORT, "N", NULL,
	    "rendezvous port on the first host for --launcher (29500)" },
	{ "max-stages", 0, O_MAXS, "N", NULL, "at most N pipeline stages" },
	{ "max-tp", 0, O_MAXTP, "N", "1|2|4|8",
	    "largest tensor-parallel degree (8)" },
	{ "mem-reserve", 0, O_MEMRES, "F", NULL,
	    "fraction of GPU memory kept free (0.10)" },
	{ "mfu", 0, O_MFU, "F", NULL,
	    "GEMM efficiency of nodes without an mfu column (0.65)" },
	{ "micro-batch", 0, O_MBATCH, "N", NULL,
	    "samples per micro-batch (1)" },
	{ "model", 'm', O_MODEL, "FILE", "csv", "model.csv" },
	{ "optimizer", 0, O_OPTIM, "P", PLAN_OPTIMIZERS,
	    "optimizer state replicated or sharded over the groups" },
	{ "optimizer-bytes", 0, O_OPT, "B", NULL,
	    "optimizer state bytes per parameter (12)" },
	{ "outdir", 'o', O_OUT, "DIR", "dir",
	    "write plan.json and plan.csv to DIR" },
	{ "overlap", 0, O_OVERLAP, "O", "none|dp|auto",
	    "communication under compute (auto: dp where the runtime "
	    "overlaps by default)" },
	{ "output", 0, O_LOGOUT, "PATH", "file",
	    "Slurm's stdout log path for --launcher (#SBATCH --output)" },
	{ "param-bytes", 0, O_PARAM, "B", NULL, "bytes per parameter (2)" },
	{ "partition", 0, O_PARTITION, "P", NULL,
	    "Slurm partition(s) for --launcher" },
	{ "qos", 0, O_QOS, "NAME", NULL,
	    "Slurm quality of service for --launcher (#SBATCH --qos)" },
	{ "recompute", 0, O_RECOMP, "R", PLAN_RECOMPUTES,
	    "activation recomputation (auto: none or the fewest blocks)" },
	{ "runtime", 0, O_RUNTIME, "R", PLAN_RUNTIMES,
	    "plan only what that framework can run (dlplan: any plan)" },
	{ "sbatch-arg", 0, O_SBATCH, "OPT", NULL,
	    "one more #SBATCH option for --launcher (repeatable)" },
	{ "script", 0, O_SCRIPT, "FILE", "file",
	    "training script every rank runs, for --launcher" },
	{ "slot-steps", 0, O_SLOTSTEPS, "K", NULL,
	    "load-history steps per slot of the schedule (1)" },
	{ "slots", 0, O_SLOTS, "N", NULL,
	    "plan a schedule of N slots under --budget" },
	{ "states", 0, O_STATES, "K", NULL,
	    "congestion regimes for routing (3)" },
	{ "strategy", 0, O_STRAT, "S", PLAN_STRATEGIES,
	    "restrict the plan space (auto)" },
	{ "time-limit", 0, O_TLIM, "S", NULL,
	    "time limit of each MILP in seconds (60)" },
	{ "time", 0, O_TIME, "T", NULL,
	    "Slurm time limit for --launcher (MM, HH:MM:SS, D-HH:MM, ...)" },
	{ "tradeoff", 0, O_TRADEOFF, "V", NULL,
	    "weight of iteration time against the cost queue "
	    "(budget^2 / T of slot 1)" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_plan(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_plan = {
	"plan", cmd_plan,
	"-c DIR -m MODEL.csv --global-batch N [--micro-batch N] [-o OUTDIR] "
	"[--launcher L] [options] [-- COMMAND ...]",
	"find the fastest plan for a cluster and a model",
	plan_opts, 0
};

/*
 * When no plan of a framework fits: add to e's reason what the framework
 * refused of this model (runtime_fits()): TP degrees, TP degrees
 * with a pipeline, a pipeline; and of the cluster, the GPUs it cannot
 * use (runtime_gpu_refused()).
 */
static void
runtime_refused(const struct dl_cluster *c, const struct dl_model *m,
    int runtime, int max_tp, struct dl_err *e)
{
	struct strbuf gpus = STRBUF_INIT;

	char why[256], why1[256] = "", why2[256] = "";
	struct strbuf tp1 = STRBUF_INIT, tp2 = STRBUF_INIT;
	size_t len = strlen(e->msg);

	for (int k = 2; k <= max_tp && k <= DL_MAX_TP; k *= 2) {
		if (!runtime_fits(m, runtime, k, 1, why, sizeof(why))) {
			sb_addf(&tp1, "%s%d", tp1.len ? ", " : "", k);
			if (why1[0] == '\0')
				memcpy(why1, why, sizeof(why1));
		} else if (!runtime_fits(m, runtime, k, 2, why,
		    sizeof(why))) {
			sb_addf(&tp2, "%s%d", tp2.len ? ", " : "", k);
			if (why2[0] == '\0')
				memcpy(why2, why, sizeof(why2));
		}
	}
	if (tp1.len)
		len += (size_t)snprintf(e->msg + len, sizeof(e->msg) - len,
		    "; TP %s left out: %s", tp1.buf, why1);
	if (tp2.len && len < sizeof(e->msg))
		len += (size_t)snprintf(e->msg + len, sizeof(e->msg) - len,
		    "; TP %s only with one stage: %s", tp2.buf, why2);
	if (len < sizeof(e->msg) && !runtime_fits(m, runtime, 1, 2,
	    why, sizeof(why)))
		len += (size_t)snprintf(e->msg + len, sizeof(e->msg) - len,
		    "; no pipeline: %s", why);
	for (size_t n = 0; n < c->nnodes; n++) {
		const char *g = c->nodes[n].gpu_model;
		char *at;

		if (!runtime_gpu_refused(c, runtime, (int)n))
			continue;
		at = gpus.len ? strstr(gpus.buf, g) : NULL;
		if (at == NULL || (at[strlen(g)] != ',' && at[strlen(g)] !=
		    '\0'))
			sb_addf(&gpus, "%s%s", gpus.len ? ", " : "", g);
	}
	if (gpus.len && len < sizeof(e->msg))
		snprintf(e->msg + len, sizeof(e->msg) - len, "; GPUs without "
		    "bf16 left out (%s): %s trains in bfloat16 or float32, with "
		    "no fp16 loss scaling", gpus.buf, plan_runtime_names[runtime]);
	sb_free(&gpus);
	sb_free(&tp1);
	sb_free(&tp2);
}

/*
 * For --runtime other than dlplan: T of the unrestricted plan, so that
 * the summary shows what the framework's restriction costs.
 */
static int
free_plan_time(const struct dl_costctx *x, const struct search_opts *so,
    double *t, struct dl_err *e)
{
	struct search_opts fo = *so;
	struct search_stats st;
	struct dl_plan p;
	int rc;

	fo.runtime = RUNTIME_DLPLAN;
	fo.dump_dir = NULL;
	rc = search_plan(x, &fo, &p, &st, e);
	*t = rc == DL_OK ? p.est.iteration_s : 0;
	plan_free(&p);
	return rc;
}

/*
 * "left out  NODES (load L %), N GPUs: ...": the nodes the plan does not
 * use, runs of consecutive nodes as FIRST..LAST (at most 4 runs shown),
 * and T of the plan with them as more pipelines.
 */
static void
print_left_out(const struct dl_plan *p, const struct dl_cluster *c)
{
	long gpus = 0;
	size_t runs = 0, more = 0;

	if (p->nleft_out == 0)
		return;
	printf("left out  ");
	for (size_t i = 0; i < p->nleft_out; i++) {
		size_t j = i;
		double lmax = 0;

		while (j + 1 < p->nleft_out && p->left_out[j + 1] ==
		    p->left_out[j] + 1)
			j++;
		for (size_t k = i; k <= j; k++) {
			int n = p->left_out[k];

			gpus += c->nodes[n].gpus;
			if (p->uhat && (size_t)n < p->nnodes && p->uhat[n] > lmax)
				lmax = p->uhat[n];
		}
		if (runs < 4) {
			printf("%s%s", runs ? ", " : "", c->nodes[p->left_out[i]].id);
			if (j > i)
				printf("..%s", c->nodes[p->left_out[j]].id);
			if (lmax >= 0.005)
				printf(" (load %s%.0f %%)", j > i ? "up to " : "",
				    100 * lmax);
		} else {
			more += j - i + 1;
		}
		runs++;
		i = j;
	}
	if (more > 0)
		printf(" and %zu more node%s", more, more == 1 ? "" : "s");
	printf(", %ld GPU%s: ", gpus, gpus == 1 ? "" : "s");
	if (p->left_out_t_s > 0)
		printf("the plan with them as more pipelines takes %.6g s "
		    "(%+.1f %%)%s\n", p->left_out_t_s, 100 * (p->left_out_t_s /
		    p->est.iteration_s - 1), p->left_out_busy > 0 ? "" :
		    ", and its split gives those pipelines no micro-batches");
	else
		printf("they cannot form a pipeline that holds the model\n");
}

static void
print_summary(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const struct search_stats *st,
    const char *outdir)
{
	const struct dl_estimate *E = &p->est;
	size_t nw = c->warnings.n + m->warnings.n;

	printf("plan      %d group%s, %ld GPUs", p->ngroups,
	    p->ngroups == 1 ? "" : "s", plan_ranks(p));
	printf(" (%s)\n", plan_status_names[p->status]);
	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];

		printf("  group %d: %ld micro-batches, %d stage%s, T_g %.6g s\n",
		    g, gr->micro_batches, gr->nstages, gr->nstages == 1 ? "" :
		    "s", gr->time_s);
		for (int j = 0; j < gr->nstages; j++) {
			const struct dl_stage *s = &gr->stages[j];

			printf("    stage %d: %s GPU%s", j, c->nodes[s->node].id,
			    s->ngpus == 1 ? "" : "s");
			for (int i = 0; i < s->ngpus; i++)
				printf("%s%d", i ? "," : " ", s->gpus[i]);
			printf(", layers %d-%d\n", s->first, s->last);
		}
	}
	printf("iteration %.6g s (pipeline %.6g s + sync %.6g s + optimizer "
	    "%.6g s)\n", E->iteration_s, E->pipeline_s, E->sync_s,
	    E->optimizer_s);
	printf("throughput %.6g samples/s\n", E->throughput);
	printf("bound     %.6g s (T_lb), efficiency %.1f%%\n",
	    E->lower_bound_s, 100 * E->efficiency);
	if (p->even_s > 0 && p->proportional_s > 0) {
		printf("baseline  even DP %.6g s (x%.2f)%s\n", p->even_s,
		    p->even_s / E->iteration_s, p->even_fits ? "" :
		    ", does not fit in memory");
		printf("baseline  proportional DP %.6g s (x%.2f)%s\n",
		    p->proportional_s, p->proportional_s / E->iteration_s,
		    p->proportional_fits ? "" : ", does not fit in memory");
	}
	printf("search    %s, %ld structures, %ld plans scored, %ld MILPs, "
	    "%.3g s\n", st->exact ? "exhaustive (optimal)" : "structured",
	    st->structures, st->evaluated, st->milps, st->time_s);
	if (!st->exact && p->bound_method == BOUND_T_LB)
		printf("gap       at most %.1f%% to the lower bound T_lb\n",
		    100 * p->gap);
	else if (!st->exact)
		printf("gap       at most %.1f%% to the bound %.6g s (%s: "
		    "fill, transfers, sync); %.1f%% to T_lb\n", 100 * p->gap,
		    p->bound_s, plan_bound_names[p->bound_method],
		    100 * (1 - E->efficiency));
	/*
	 * Where the plan leaves GPUs out, the bound over all of them says
	 * little about how well it uses its own: T_lb of those alone does.
	 */
	if (!st->exact && st->own_lb_s > 0 && plan_ranks(p) <
	    cluster_gpus(c) && E->iteration_s > 0)
		printf("          %.1f%% to %.6g s, T_lb of its own %ld GPUs; "
		    "the other %ld are left out\n", 100 * (1 - st->own_lb_s /
		    E->iteration_s), st->own_lb_s, plan_ranks(p),
		    cluster_gpus(c) - plan_ranks(p));
	print_left_out(p, c);
	if (nw > 0)
		printf("warnings  %zu implausible value%s in the inputs (see "
		    "stderr, or plan.json's warnings)\n", nw, nw == 1 ? "" :
		    "s");
	if (outdir)
		printf("wrote     %s/plan.json %s/plan.csv\n", outdir, outdir);
}

/*
 * The budgeted schedule ("--budget C --slots N", budget.h).  plan.json
 * and plan.csv hold slot 1's plan with the "schedule" member; with -o,
 * plan-slot<t>.json holds slot t's plan alone (a standalone plan that
 * eval and emit take like any other), and the schedule names it.
 */

/* --budget and --slots go together; the other schedule options need them. */
static int
budget_usage(struct budget_opts *bo, const char *dump_dir, struct dl_err *e)
{
	if (bo->budget == 0 && (bo->nslots || bo->slot_steps || bo->tradeoff))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '%s' needs "
		    "--budget COST", bo->nslots ? "--slots" : bo->slot_steps ?
		    "--slot-steps" : "--tradeoff");
	if (bo->budget == 0)
		return DL_OK;
	if (bo->nslots == 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--budget' "
		    "needs --slots N (the number of slots to schedule)");
	if (dump_dir)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--dump-lp' "
		    "does not apply to a --budget schedule");
	if (bo->slot_steps == 0)
		bo->slot_steps = 1;
	if ((long)bo->nslots * bo->slot_steps > 1000000)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "--slots x "
		    "--slot-steps is %ld forecast steps (at most 1000000)",
		    (long)bo->nslots * bo->slot_steps);
	return DL_OK;
}

static void
print_schedule(const struct dl_schedule *s, const struct dl_cluster *c,
    const struct budget_stats *bs, const char *outdir)
{
	printf("schedule  %d slot%s of %d load step%s, budget %.6g per hour, "
	    "tradeoff V %.6g\n", s->nslots, s->nslots == 1 ? "" : "s",
	    s->slot_steps, s->slot_steps == 1 ? "" : "s", s->budget,
	    s->tradeoff);
	printf("  %-5s %-11s %-11s %-11s %s\n", "slot", "queue", "cost/h",
	    "T (s)", "nodes");
	for (int t = 0; t < s->nslots; t++) {
		const struct dl_budget_slot *sl = &s->slots[t];
		const struct dl_budget_cand *ch = &sl->cand[sl->chosen];

		printf("  %-5d %-11.6g %-11.6g %-11.6g ", t + 1, sl->queue,
		    ch->cost, ch->iteration_s);
		for (int i = 0; i < ch->nused; i++)
			printf("%s%s", i ? "," : "", c->nodes[ch->used[i]].id);
		printf("\n");
	}
	printf("cost      %.6g per hour on average (budget %.6g", s->avg_cost,
	    s->budget);
	if (s->bound >= 0)
		printf(", bound %.6g", s->bound);
	printf(")\n");
	printf("throughput %.6g samples/s on average, %.1f%% of the "
	    "unconstrained plans' %.6g\n", s->avg_throughput,
	    100 * s->avg_throughput / s->best_throughput, s->best_throughput);
	printf("searches  %ld node subsets searched, %ld reused from an earlier "
	    "slot\n", bs->searches, bs->reused);
	if (outdir)
		printf("wrote     %s/plan-slot1.json .. plan-slot%d.json\n",
		    outdir, s->nslots);
}

/* Name plan-slot<t>.json in the schedule for every slot. */
static void
name_slot_plans(struct dl_schedule *s)
{
	for (int t = 0; t < s->nslots; t++) {
		struct strbuf name = STRBUF_INIT;

		sb_addf(&name, "plan-slot%d.json", t + 1);
		free(s->slots[t].plan);
		s->slots[t].plan = sb_detach(&name);
	}
}

/*
 * plan-slot<t>.json for every slot, plan.json and plan.csv (p, slot 1's
 * plan with the schedule) as one output: all of them or none.
 */
static int
write_budget_outputs(const struct dl_plan *plans,
    const struct dl_schedule *s, const struct dl_plan *p,
    const struct dl_cluster *c, const struct dl_model *m,
    const char *outdir, struct dl_err *e)
{
	size_t n = (size_t)s->nslots + 1;
	const struct dl_plan **jp = xcalloc(n, sizeof(*jp));
	char **jpaths = xcalloc(n, sizeof(*jpaths));
	struct strbuf v = STRBUF_INIT;
	int rc = mkdir_p(outdir, e);

	for (int t = 0; t < s->nslots; t++) {
		struct strbuf path = STRBUF_INIT;

		sb_addf(&path, "%s/%s", outdir, s->slots[t].plan);
		jp[t] = &plans[t];
		jpaths[t] = sb_detach(&path);
	}
	{
		struct strbuf path = STRBUF_INIT;

		sb_addf(&path, "%s/plan.json", outdir);
		jp[n - 1] = p;
		jpaths[n - 1] = sb_detach(&path);
	}
	sb_addf(&v, "%s/plan.csv", outdir);
	if (rc == DL_OK)
		rc = plan_write_files(n, jp, (const char *const *)jpaths, p,
		    v.buf, c, m, NULL, e);
	for (size_t i = 0; i < n; i++)
		free(jpaths[i]);
	free(jpaths);
	free(jp);
	sb_free(&v);
	return rc;
}

static int
plan_budget(const struct dl_cluster *c, const struct dl_model *m,
    const struct dl_opts *o, struct dl_router *router,
    const struct budget_opts *bo, enum dl_strategy strategy,
    char *const *used, const char *outdir, int fmt, struct dl_err *e)
{
	struct dl_plan *plans = xcalloc((size_t)bo->nslots, sizeof(*plans));
	struct dl_schedule s;
	struct budget_stats bs;
	struct dl_plan p;
	int rc;

	plan_init(&p);
	rc = budget_run(c, m, o, router, bo, &s, plans, &bs, e);
	for (int t = 0; t < bo->nslots && rc == DL_OK; t++) {
		plans[t].strategy = strategy;
		plan_set_uhat_used(&plans[t], used, c->nnodes);
		rc = plan_set_inputs(&plans[t], c, m, e);
	}
	if (rc == DL_OK && outdir)
		name_slot_plans(&s);
	if (rc == DL_OK) {
		plan_free(&p);
		plan_copy(&p, &plans[0]);
		p.schedule = plan_schedule_dup(&s);
		/*
		 * One output set, like a plan's: the slot plans of an
		 * earlier schedule and its launch files go, under the
		 * directory's lock (cmd_set_end()).
		 */
		if (outdir) {
			cmd_set_begin();
			if ((rc = cmd_lock_outdir(outdir, e)) == DL_OK)
				rc = write_budget_outputs(plans, &s, &p, c, m,
				    outdir, e);
			if (rc == DL_OK)
				rc = cmd_set_end(outdir, "", 1, e);
			else
				cmd_set_end(outdir, "", 0, NULL);
		}
	}
	if (rc == DL_OK && fmt == 1) {
		char *js;

		if ((rc = plan_json_string(&p, c, m, NULL, &js, e)) == DL_OK) {
			fputs(js, stdout);
			free(js);
		}
	} else if (rc == DL_OK && dl_verbose >= 0) {
		struct search_stats st = { 0 };

		st.structures = bs.structures;
		st.evaluated = bs.evaluated;
		st.milps = bs.milps;
		st.exact = bs.exact;
		st.time_s = bs.time_s;
		print_summary(&p, c, m, &st, outdir);
		print_schedule(&s, c, &bs, outdir);
	}
	for (int t = 0; t < bo->nslots; t++)
		plan_free(&plans[t]);
	free(plans);
	plan_free(&p);
	plan_schedule_clear(&s);
	return rc;
}

/* What the command line asks for. */
struct plan_args {
	struct dl_cluster_paths paths;
	struct search_opts so;
	struct budget_opts bo;
	struct dl_opts o;
	struct emit_opts eo;
	const char *model, *outdir;
	int fmt;		/* 0 table, 1 json */
	int have_gb;		/* --global-batch was given */
	const char *launch;	/* --launcher, or NULL */
	const char *sbatch[EMIT_MAX_SBATCH_ARGS];	/* eo.sbatch_args */
};

/*
 * A progress line (cmd_progress_due()): jobs done (a job is a TP degree,
 * stage count and set of units), the best T so far against T_lb, and the
 * time taken.
 */
static void
progress(void *arg, const struct search_progress *pg)
{
	double el;
	char best[64];

	if (!cmd_progress_due(arg, pg->final, &el))
		return;
	if (pg->best_t == HUGE_VAL)
		snprintf(best, sizeof(best), "no plan yet");
	else
		snprintf(best, sizeof(best), "best T %.6g s (gap at most "
		    "%.1f%%)", pg->best_t, 100 * (1 - pg->lower_bound /
		    pg->best_t));
	if (pg->exhaustive) {
		/* Its work is not known ahead: structures so far. */
		fprintf(stderr, "dlplan: exhaustive search: %s%ld structures, "
		    "%s, T_lb %.6g s, %.1f s\n", pg->final ? "done, " : "",
		    pg->done, best, pg->lower_bound, el);
		return;
	}
	fprintf(stderr, "dlplan: search: %s%ld of %ld jobs%s, %s, bound %.6g "
	    "s, %.1f s\n", pg->final ? "done, " : "", pg->done, pg->total,
	    pg->final && pg->done < pg->total ? " (the rest cut by the bound)" :
	    "", best, pg->lower_bound, el);
}

/*
 * The same for a --budget schedule, whose candidate searches are many and
 * short: slots done, searches made and reused.
 */
static void
budget_progress(void *arg, const struct budget_progress *pg)
{
	double el;

	if (!cmd_progress_due(arg, pg->final, &el))
		return;
	fprintf(stderr, "dlplan: budget: %s%d of %d slots, %ld searches (%ld "
	    "reused), %.1f s\n", pg->final ? "done, " : "", pg->slots_done,
	    pg->nslots, pg->searches, pg->reused, el);
}

static void
args_init(struct plan_args *a)
{
	struct search_opts so = { STRAT_AUTO, -1, NULL, 60,
	    search_default_jobs(), RUNTIME_DLPLAN, NULL, NULL };

	memset(a, 0, sizeof(*a));
	a->so = so;
	plan_opts_default(&a->o);
	emit_opts_init(&a->eo);
}

/*
 * The options plan shares with emit for --launcher: 1 when id is one of
 * them (taken), 0 when it is not, -1 on a bad value.
 */
static int
take_launch_opt(struct plan_args *a, int id, struct optstate *sto,
    struct dl_err *e)
{
	switch (id) {
	case O_JOB:
		a->eo.job_name = sto->arg;
		break;
	case O_LAUNCHER:
		if (opt_choice(sto, e) < 0)
			return -1;
		a->launch = a->eo.launcher = sto->arg;
		break;
	case O_PORT:
		if (opt_long(sto, 1, 65535, &a->eo.master_port, e))
			return -1;
		break;
	case O_PARTITION:
		a->eo.partition = sto->arg;
		break;
	case O_SCRIPT:
		a->eo.script = sto->arg;
		break;
	case O_TIME:
		a->eo.time = sto->arg;
		break;
	case O_ACCOUNT:
		a->eo.account = sto->arg;
		break;
	case O_QOS:
		a->eo.qos = sto->arg;
		break;
	case O_LOGOUT:
		a->eo.output = sto->arg;
		break;
	case O_LOGERR:
		a->eo.error = sto->arg;
		break;
	case O_SBATCH:
		if (a->eo.nsbatch_args == EMIT_MAX_SBATCH_ARGS)
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
			    "'--sbatch-arg': '%s' is one too many (at most %d)",
			    sto->arg, EMIT_MAX_SBATCH_ARGS), -1;
		a->sbatch[a->eo.nsbatch_args++] = sto->arg;
		a->eo.sbatch_args = a->sbatch;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Take option id (not a cluster option, not -h) into a; -1 with e set on
 * a usage error. */
static int
take_opt(struct plan_args *a, int id, struct optstate *sto, struct dl_err *e)
{
	long v;
	int rc;

	if ((rc = take_launch_opt(a, id, sto, e)) != 0)
		return rc < 0 ? -1 : 0;
	switch (id) {
	case O_DUMP:
		a->so.dump_dir = sto->arg;
		break;
	case O_EXACT:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->so.exact = rc == 0 ? -1 : rc == 1;
		break;
	case O_FORMAT:
		if ((a->fmt = opt_choice(sto, e)) < 0)
			return -1;
		break;
	case O_GBATCH:
		if (opt_long(sto, 1, 1L << 40, &a->o.global_batch, e))
			return -1;
		a->have_gb = 1;
		break;
	case O_GRAD:
		if (opt_double(sto, 0, 64, &a->o.grad_bytes, e))
			return -1;
		break;
	case O_FORECAST:
		if ((a->o.forecast = opt_choice(sto, e)) < 0)
			return -1;
		break;
	case O_HORIZON:
		if (opt_long(sto, 1, 100000, &v, e))
			return -1;
		a->o.horizon = (int)v;
		break;
	case O_MAXS:
		if (opt_long(sto, 1, 100000, &v, e))
			return -1;
		a->o.max_stages = (int)v;
		break;
	case O_MAXTP:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->o.max_tp = 1 << rc;
		break;
	case O_MEMRES:
		if (opt_double(sto, 0, 0.99, &a->o.mem_reserve, e))
			return -1;
		break;
	case O_MFU:
		if (opt_double(sto, 1e-6, 1, &a->o.mfu, e))
			return -1;
		break;
	case O_MBATCH:
		if (opt_long(sto, 1, 1L << 40, &a->o.micro_batch, e))
			return -1;
		break;
	case O_MODEL:
		a->model = sto->arg;
		break;
	case O_OPT:
		if (opt_double(sto, 0, 64, &a->o.optimizer_bytes, e))
			return -1;
		break;
	case O_OUT:
		a->outdir = sto->arg;
		break;
	case O_PARAM:
		if (opt_double(sto, 0, 64, &a->o.param_bytes, e))
			return -1;
		break;
	case O_STATES:
		if (opt_long(sto, 1, 100, &v, e))
			return -1;
		a->o.states = (int)v;
		break;
	case O_STRAT:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->so.strategy = rc;
		break;
	case O_ATTN:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->o.attention = rc;
		break;
	case O_OPTIM:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->o.optimizer = rc;
		break;
	case O_RECOMP:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->o.recompute = rc;
		break;
	case O_OVERLAP:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		/* dp+tp is priced by eval and import, not searched: the
		 * partition's window pass is linear in the TP traffic. */
		a->o.overlap = rc == 2 ? OVL_AUTO : rc;
		break;
	case O_RUNTIME:
		if ((rc = opt_choice(sto, e)) < 0)
			return -1;
		a->so.runtime = rc;
		a->o.runtime = rc;
		break;
	case O_TLIM:
		if (opt_double(sto, 0.001, 1e6, &a->o.time_limit, e))
			return -1;
		a->so.time_limit = a->o.time_limit;
		break;
	case O_JOBS:
		if (opt_long(sto, 1, SEARCH_JOBS_MAX, &v, e))
			return -1;
		a->so.jobs = (int)v;
		break;
	case O_BUDGET:
		if (opt_double(sto, 1e-9, 1e15, &a->bo.budget, e))
			return -1;
		break;
	case O_SLOTS:
		if (opt_long(sto, 1, 10000, &v, e))
			return -1;
		a->bo.nslots = (int)v;
		break;
	case O_SLOTSTEPS:
		if (opt_long(sto, 1, 100000, &v, e))
			return -1;
		a->bo.slot_steps = (int)v;
		break;
	case O_TRADEOFF:
		if (opt_double(sto, 1e-300, 1e300, &a->bo.tradeoff, e))
			return -1;
		break;
	}
	return 0;
}

/*
 * --dump-lp DIR as an output set of its own under DIR's lock: the LP
 * files of an earlier plan that this one lacks go, and a failure leaves
 * DIR as it was.
 */
static int
dump_set(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_plan *p, struct dl_err *e)
{
	int rc;

	cmd_set_begin();
	if ((rc = cmd_lock_outdir(so->dump_dir, e)) == DL_OK)
		rc = search_dump(x, so, p, e);
	if (rc == DL_OK)
		return cmd_set_end(so->dump_dir, "", 1, e);
	cmd_set_end(so->dump_dir, "", 0, NULL);
	return rc;
}

/* Do paths a and b name one directory (or the same missing path)? */
static int
same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return strcmp(a, b) == 0;
}

/* The checks once every option is known; -1 with e set on a usage
 * error. */
static int
check_args(struct plan_args *a, struct optstate *sto, struct dl_err *e)
{
	const char *why;

	if (budget_usage(&a->bo, a->so.dump_dir, e) != DL_OK)
		return -1;
	/* Each is an output set that would remove the other's files. */
	if (a->so.dump_dir && a->outdir && same_dir(a->so.dump_dir,
	    a->outdir)) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--dump-lp' names "
		    "the -o directory '%s' (give the LP files a directory of "
		    "their own)", a->outdir);
		return -1;
	}
	/* A framework refuses a saver it does not have, with the reason. */
	if ((why = runtime_saver_refused(a->so.runtime, &a->o)) !=
	    NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "'--runtime %s': %s",
		    plan_runtime_names[a->so.runtime], why);
		return -1;
	}
	if (plan_resolve_overlap(&a->o, a->so.runtime, e) != DL_OK)
		return -1;
	if (a->so.runtime != RUNTIME_DLPLAN && a->bo.budget > 0) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--runtime' does "
		    "not go with '--budget'");
		return -1;
	}
	/* Operands are the training command of the launch files. */
	if (sto->npos > 0 && a->launch == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    sto->pos[0]);
		return -1;
	}
	if (a->launch != NULL) {
		int rt = emit_launcher_runtime(a->launch);

		if (a->outdir == NULL) {
			dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
			    "'--launcher' needs an output directory (-o DIR)");
			return -1;
		}
		if (a->bo.budget > 0) {
			dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
			    "'--launcher' does not go with '--budget'; use "
			    "'dlplan emit' on a slot's plan");
			return -1;
		}
		if (rt >= 0 && rt != (int)a->so.runtime) {
			dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--launcher "
			    "%s' needs '--runtime %s'", a->launch,
			    plan_runtime_names[rt]);
			return -1;
		}
		a->eo.args = sto->pos;
		a->eo.nargs = sto->npos;
		a->eo.outdir = a->outdir;
		a->eo.plan_path = "plan.json";	/* checked here, set below */
		if (emit_check_opts(&a->eo, e) != DL_OK)
			return -1;
	}
	if (a->paths.dir == NULL && a->paths.nodes == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no cluster given "
		    "(expected -c DIR or --nodes FILE)");
		return -1;
	}
	if (a->model == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no model given "
		    "(expected -m MODEL.csv)");
		return -1;
	}
	if (!a->have_gb) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no batch size given "
		    "(expected --global-batch N)");
		return -1;
	}
	if (a->o.global_batch % a->o.micro_batch != 0) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "global batch %ld is not "
		    "a multiple of the micro-batch %ld", a->o.global_batch,
		    a->o.micro_batch);
		return -1;
	}
	return 0;
}

/* The cluster and the model; on failure there is nothing to free. */
static int
load_inputs(const struct plan_args *a, struct dl_cluster *c,
    struct dl_model *m, struct dl_err *e)
{
	int rc;

	if ((rc = cluster_load(c, &a->paths, e)) != DL_OK)
		return rc;
	if ((rc = model_load(m, a->model, e)) != DL_OK) {
		cluster_free(c);
		return rc;
	}
	if ((rc = part_max_layers(m, e)) != DL_OK) {
		model_free(m);
		cluster_free(c);
		return rc;
	}
	cmd_warn_inputs(c, m);
	return rc;
}

/* One plan (no --budget): search, baselines, then the outputs. */
static int
plan_one(struct plan_args *a, const struct dl_cluster *c,
    const struct dl_model *m, const double *uhat, char *const *used,
    struct dl_router *router, struct dl_err *e)
{
	struct search_stats st;
	struct dl_costctx x;
	struct dl_plan p;
	struct cmd_progress pg;
	double free_t = 0;
	char *js = NULL;
	int rc;

	plan_init(&p);
	if (cmd_progress_begin(&pg)) {
		a->so.progress = progress;
		a->so.progress_arg = &pg;
	}
	if ((rc = runtime_model(m, a->so.runtime, e)) == DL_OK &&
	    (rc = cost_init(&x, c, m, &a->o, uhat, router, e)) == DL_OK) {
		plan_free(&p);		/* search_plan() initialises it */
		rc = search_plan(&x, &a->so, &p, &st, e);
		a->so.progress = NULL;
		if (rc == DL_EINFEAS && a->so.runtime != RUNTIME_DLPLAN)
			runtime_refused(c, m, a->so.runtime, a->o.max_tp, e);
		if (rc == DL_OK && a->so.runtime != RUNTIME_DLPLAN)
			rc = free_plan_time(&x, &a->so, &free_t, e);
		if (rc == DL_OK && a->so.dump_dir)
			rc = dump_set(&x, &a->so, &p, e);
		if (rc == DL_OK && a->so.runtime == RUNTIME_DLPLAN)
			search_left_out(&x, &a->so, &p);
		if (rc == DL_OK)
			rc = cost_baselines(&x, &p, e);
		cost_free(&x);
	}
	if (rc == DL_OK) {
		free(p.generator);
		p.generator = xstrdup("dlplan " DLPLAN_VERSION);
		p.strategy = a->so.strategy;
		p.runtime = a->so.runtime;
		plan_set_uhat_used(&p, used, c->nnodes);
		rc = plan_set_inputs(&p, c, m, e);
	}
	/*
	 * One output set: the plan files and the launch files replace the
	 * directory's previous set, stale launch files included, or, on any
	 * failure or signal, nothing (cmd_set_end()).
	 */
	if (rc == DL_OK && a->outdir) {
		cmd_set_begin();
		if ((rc = cmd_lock_outdir(a->outdir, e)) == DL_OK)
			rc = cmd_write_plan(&p, c, m, a->outdir,
			    a->fmt == 1 ? &js : NULL, e);
		if (rc == DL_OK && a->launch != NULL) {
			struct strbuf pj = STRBUF_INIT;

			sb_addf(&pj, "%s/plan.json", a->outdir);
			a->eo.plan_path = pj.buf;
			a->eo.model = m;
			rc = emit_launch(&p, c, &a->eo, NULL, e);
			sb_free(&pj);
		}
		if (rc == DL_OK)
			rc = cmd_set_end(a->outdir, "", 1, e);
		else
			cmd_set_end(a->outdir, "", 0, NULL);
	}
	if (rc == DL_OK) {
		if (a->fmt == 1) {
			/* Built with plan.json when -o wrote it. */
			if (js == NULL)
				rc = plan_json_string(&p, c, m, NULL, &js, e);
			if (rc == DL_OK)
				fputs(js, stdout);
		} else if (dl_verbose >= 0) {
			print_summary(&p, c, m, &st, a->outdir);
			if (free_t > 0)
				printf("runtime   %s %.6g s, unrestricted "
				    "(dlplan) %.6g s (x%.3f)\n",
				    plan_runtime_names[p.runtime],
				    p.est.iteration_s, free_t,
				    p.est.iteration_s / free_t);
		}
	}
	free(js);
	plan_free(&p);
	return rc;
}

static int
cmd_plan(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct plan_args a;
	struct optstate sto;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	struct dl_cluster c;
	struct dl_model m;
	struct dl_router *router = NULL;
	double *uhat;
	char **used;
	int id, rc;

	args_init(&a);
	opt_init(&sto, argc, argv);
	while ((id = opt_next(&sto, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&sto, &in, id == O_OUT ? "--format "
		    "json prints the plan on standard output" : NULL, &e) !=
		    DL_OK)
			goto usage;
		if (cmd_cluster_opt(id, sto.arg, &a.paths))
			continue;
		if (id == OPT_HELP) {
			opt_help(cmd, stdout);
			opt_free(&sto);
			return DL_OK;
		}
		if (take_opt(&a, id, &sto, &e) < 0)
			goto usage;
	}
	if (check_args(&a, &sto, &e) < 0)
		goto usage;

	if ((rc = load_inputs(&a, &c, &m, &e)) != DL_OK) {
		opt_free(&sto);
		return cmd_fail(&e);
	}
	uhat = xcalloc(c.nnodes, sizeof(double));
	rc = router_check_size(&c, &e);
	if (rc == DL_OK)
		rc = forecast_node_loads(&c, a.o.horizon, a.o.forecast, uhat,
		    &e);
	used = rc == DL_OK ? forecast_node_used(&c, a.o.horizon, a.o.forecast) :
	    NULL;
	if (rc == DL_OK) {
		struct dl_route_opts ro = { a.o.states, a.o.horizon,
		    a.o.forecast };

		rc = router_new(&router, &c, &ro, &e);
	}
	if (rc == DL_OK && a.bo.budget > 0) {
		struct cmd_progress pg;

		a.bo.so = a.so;
		if (cmd_progress_begin(&pg)) {
			a.bo.progress = budget_progress;
			a.bo.progress_arg = &pg;
		}
		rc = plan_budget(&c, &m, &a.o, router, &a.bo, a.so.strategy,
		    used, a.outdir, a.fmt, &e);
	} else if (rc == DL_OK) {
		rc = plan_one(&a, &c, &m, uhat, used, router, &e);
	}
	forecast_used_free(used, c.nnodes);
	/* The operands (the launch command) were in use until here. */
	opt_free(&sto);
	if (rc != DL_OK)
		dl_perr(&e);
	router_free(router);
	free(uhat);
	model_free(&m);
	cluster_free(&c);
	return rc;
usage:
	opt_free(&sto);
	return opt_usage_error(cmd, &e);
}
