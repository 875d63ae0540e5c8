/*
 * cmd_schedule.c - "dlplan schedule": many training jobs on one
 * cluster, slot by slot (sched.h), beside the fifo, random, tiresias
 * and srtf baselines.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every policy is simulated; the chosen one's schedule is written to
 * OUTDIR (schedule.json, jobs.csv, summary.csv, plans/pN.json, one per
 * class and set of GPUs that jobs first run on, models/PRESET.csv for the
 * preset models those plans name), and the summary of all of them goes to
 * standard output.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "af.h"
#include "cmds.h"
#include "cmdutil.h"
#include "kc.h"
#include "sb.h"
#include "sched.h"
#include "sha256.h"
#include "util_io.h"

enum {
	O_JOBS = 1, O_SLOT, O_SLOTS, O_POLICY, O_OBJ, O_RESTART, O_SEED, O_OUT,
	O_FORMAT, O_MAXWAIT
};

static const struct optspec sched_opts[] = {
	DL_OPT_CLUSTER,
	{ "format", 0, O_FORMAT, "FMT", "table|json|csv",
	    "summary format on standard output" },
	{ "jobs", 0, O_JOBS, "FILE", "csv", "the jobs (JOBS.csv)" },
	{ "max-wait", 0, O_MAXWAIT, "S", NULL,
	    "gadget serves a job first once it has waited S seconds (0: never)" },
	{ "objective", 0, O_OBJ, "OBJ", SCHED_OBJECTIVE_WORDS,
	    "what gadget maximises per slot (jct)" },
	{ "outdir", 'o', O_OUT, "DIR", "dir",
	    "write schedule.json, jobs.csv, summary.csv and plans/ to DIR" },
	{ "policy", 0, O_POLICY, "P", sched_policy_words,
	    "the policy whose schedule is written (gadget)" },
	{ "restart-seconds", 0, O_RESTART, "S", NULL,
	    "time a job loses when its GPUs change (30)" },
	{ "seed", 0, O_SEED, "N", NULL, "seed of the random policy (1)" },
	{ "slot-seconds", 0, O_SLOT, "S", NULL, "length of a slot (300)" },
	{ "slots", 0, O_SLOTS, "N", NULL,
	    "simulate at most N slots (0: until every job ends)" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_schedule(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_schedule = {
	"schedule", cmd_schedule,
	"-c DIR --jobs JOBS.csv [--policy P] [--objective OBJ] "
	"[--slot-seconds S] [--slots N] [--max-wait S] [-o OUTDIR] [options]",
	"schedule many jobs on one cluster over time",
	sched_opts, 0
};

struct req {
	struct dl_cluster_paths cp;
	const char *jobs, *outdir;
	int policy, format;
	struct sched_params sp;
};

static json_t *
summary_json(const struct sched_result *r)
{
	const struct sched_summary *u = &r->sum;

	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:I, "
	    "s:o}", "policy", sched_policy_name(r->policy),
	    "avg_jct_s", cmd_json_real(u->avg_jct_s),
	    "p95_jct_s", cmd_json_real(u->p95_jct_s),
	    "makespan_s", cmd_json_real(u->makespan_s),
	    "max_wait_s", cmd_json_real(u->max_wait_s),
	    "gpu_utilisation", cmd_json_real(u->utilisation),
	    "restarts", (json_int_t)u->restarts,
	    "unfinished", (json_int_t)u->unfinished,
	    "unschedulable", (json_int_t)u->unschedulable,
	    "slots", (json_int_t)u->slots,
	    "stalled", r->stalled ? json_string(r->stalled) : json_null());
}

/* A CSV field, quoted when it holds a comma, quote or newline. */
static void
csv_field(struct strbuf *sb, const char *v)
{
	if (strpbrk(v, ",\"\n") == NULL) {
		sb_adds(sb, v);
		return;
	}
	sb_addc(sb, '"');
	for (; *v; v++) {
		if (*v == '"')
			sb_addc(sb, '"');
		sb_addc(sb, *v);
	}
	sb_addc(sb, '"');
}

static void
summary_csv(struct strbuf *sb, const struct sched_result *res)
{
	sb_adds(sb, "policy,avg_jct_s,p95_jct_s,makespan_s,max_wait_s,"
	    "gpu_utilisation,restarts,unfinished,unschedulable,slots,"
	    "stalled\n");
	for (int i = 0; i < sched_npolicy(); i++) {
		const struct sched_summary *u = &res[i].sum;

		sb_addf(sb, "%s,", sched_policy_name(i));
		sb_adddbl(sb, u->avg_jct_s);
		sb_addc(sb, ',');
		sb_adddbl(sb, u->p95_jct_s);
		sb_addc(sb, ',');
		sb_adddbl(sb, u->makespan_s);
		sb_addc(sb, ',');
		sb_adddbl(sb, u->max_wait_s);
		sb_addc(sb, ',');
		sb_adddbl(sb, u->utilisation);
		sb_addf(sb, ",%ld,%ld,%ld,%ld,", u->restarts, u->unfinished,
		    u->unschedulable, u->slots);
		csv_field(sb, res[i].stalled ? res[i].stalled : "");
		sb_addc(sb, '\n');
	}
}

static void
print_table(const struct sched *s, const struct sched_result *res,
    const struct req *rq)
{
	printf("jobs      %zu on %ld GPUs, slots of %g s, restart %g s, "
	    "objective %s\n", s->njobs, s->ngpus, rq->sp.slot_s,
	    rq->sp.restart_s, rq->sp.objective == SCHED_JCT ? "jct" :
	    "utility");
	printf("%-8s %12s %12s %12s %12s %6s %9s %10s\n", "policy",
	    "avg JCT s", "p95 JCT s", "makespan s", "max wait s", "util",
	    "restarts", "unfinished");
	for (int i = 0; i < sched_npolicy(); i++) {
		const struct sched_summary *u = &res[i].sum;

		printf("%-8s %12.6g %12.6g %12.6g %12.6g %5.1f%% %9ld %10ld%s\n",
		    sched_policy_name(i), u->avg_jct_s, u->p95_jct_s,
		    u->makespan_s, u->max_wait_s, 100 * u->utilisation,
		    u->restarts, u->unfinished, i == rq->policy ?
		    "  (chosen)" : res[i].stalled ? "  (stalled)" : "");
	}
	for (int i = 0; i < sched_npolicy(); i++)
		if (res[i].stalled)
			printf("stalled   %s: %s\n", sched_policy_name(i),
			    res[i].stalled);
	for (size_t j = 0; j < s->njobs; j++)
		if (s->jobs[j].why)
			printf("never     job '%s' (line %ld): %s\n", s->jobs[j].id,
			    s->jobs[j].line, s->jobs[j].why);
	if (rq->outdir)
		printf("wrote     %s/schedule.json jobs.csv summary.csv plans/\n",
		    rq->outdir);
}

/* One slot entry as JSON: its GPUs grouped by node. */
static json_t *
entry_json(const struct sched *s, const struct sched_entry *en)
{
	json_t *o, *nodes = json_array(), *g = NULL;

	for (int i = 0; i < en->ngpus; i++) {
		if (i == 0 || en->node[i] != en->node[i - 1]) {
			g = json_array();
			json_array_append_new(nodes, json_pack("{s:s, s:o}",
			    "node", s->c->nodes[en->node[i]].id, "gpus", g));
		}
		json_array_append_new(g, json_integer(en->gpu[i]));
	}
	o = json_pack("{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:b, s:b}",
	    "job", s->jobs[en->job].id, "gpus", en->ngpus, "nodes", nodes,
	    "iteration_s", cmd_json_real(en->iter_s),
	    "rate", cmd_json_real(1 / en->iter_s),
	    "run_s", cmd_json_real(en->run_s),
	    "iterations", cmd_json_real(en->iters),
	    "launch", en->launch, "finished", en->finished);
	return o;
}

/* JSON text of v on one line (numbers round-trip); v is released. */
static void
json_line(FILE *fp, json_t *v)
{
	char *txt = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);

	fputs(txt ? txt : "null", fp);
	free(txt);
	json_decref(v);
}

/* The path of plan number n (from 1) in OUTDIR. */
static void
plan_name(char *buf, size_t size, long n)
{
	snprintf(buf, size, "plans/p%ld.json", n);
}

/* One job of schedule.json's "jobs", as read, with its plan (number
 * plan, 0 for none: null). */
static json_t *
job_json(const struct sched *s, long plan, size_t j)
{
	const struct sched_job *jb = &s->jobs[j];
	const struct sched_class *k = &s->classes[jb->cls];
	char name[64];

	plan_name(name, sizeof(name), plan);
	return json_pack("{s:s, s:o, s:s, s:I, s:I, s:o, s:i, s:i, s:o, s:o, "
	    "s:o}", "job", jb->id, "arrival_s", cmd_json_real(jb->arrival_s),
	    "model", s->models[k->model].name,
	    "global_batch", (json_int_t)k->opts.global_batch,
	    "micro_batch", (json_int_t)k->opts.micro_batch,
	    "iterations", cmd_json_real(jb->iterations),
	    "min_gpus", jb->min_gpus, "max_gpus", jb->max_gpus,
	    "weight", cmd_json_real(jb->weight),
	    "plan", plan > 0 ? json_string(name) : json_null(),
	    "unschedulable", jb->why ? json_string(jb->why) : json_null());
}

/* jobs.csv: one row per job, arrival order; plan[j] the number of job
 * j's plan, 0 for none. */
static void
jobs_csv(FILE *fp, const struct sched *s, const struct sched_result *r,
    const long *plan)
{
	struct strbuf sb = STRBUF_INIT;
	char name[64];

	fputs("job,arrival_s,start_s,finish_s,jct_s,gpu_hours,restarts,"
	    "iterations,plan,unschedulable\n", fp);
	for (size_t j = 0; j < s->njobs; j++) {
		const struct sched_jobstat *st = &r->jobs[j];
		double arr = s->jobs[j].arrival_s;

		sb.len = 0;
		sb_addf(&sb, "%s,", s->jobs[j].id);
		sb_adddbl(&sb, arr);
		sb_addc(&sb, ',');
		if (st->start_s >= 0)
			sb_adddbl(&sb, st->start_s);
		sb_addc(&sb, ',');
		if (st->finish_s >= 0) {
			sb_adddbl(&sb, st->finish_s);
			sb_addc(&sb, ',');
			sb_adddbl(&sb, st->finish_s - arr);
		} else {
			sb_addc(&sb, ',');
		}
		sb_addc(&sb, ',');
		sb_adddbl(&sb, st->gpu_s / 3600);
		sb_addf(&sb, ",%d,", st->restarts);
		sb_adddbl(&sb, st->done);
		sb_addc(&sb, ',');
		if (plan[j] > 0) {
			plan_name(name, sizeof(name), plan[j]);
			sb_adds(&sb, name);
		}
		sb_addc(&sb, ',');
		if (s->jobs[j].why)
			csv_field(&sb, s->jobs[j].why);
		sb_addc(&sb, '\n');
		fwrite(sb.buf, 1, sb.len, fp);
	}
	sb_free(&sb);
}

static char *
path2(const char *dir, const char *a, const char *b, const char *c)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addf(&sb, "%s/%s%s%s", dir, a, b, c);
	return sb_detach(&sb);
}

/*
 * The writer of -o OUTDIR, fed as the chosen policy runs: each change of
 * the schedule is one line of schedule.json's "events"
 * (dlplan-formats(5)), so the memory does not grow with the output.  A
 * job's plan is that of the GPUs of its first slot, which depends only
 * on its class (model and batch) and those GPUs: it is written when the
 * first job of the class starts on them, and the later jobs that do name
 * the same file.  (One file per job cost most of the run: 100,000 files
 * for 10,092 distinct plans on gen-jobs.py's 100,000 jobs.)
 */
struct writer {
	struct sched *s;
	const struct req *rq;
	struct dl_plan tmpl;	/* the inputs every plan names */
	struct dl_input *mi;	/* per model: its input */
	char *plans;		/* OUTDIR/plans */
	long *plan;		/* per job: its plan's number, 0: none yet */
	struct kcache written;	/* (class, GPUs) -> plan number */
	long nplans;
	struct afile sj;	/* schedule.json */
	int open;
	long events;
};

/*
 * The inputs every plan names: the cluster's files, then one model file
 * per model (a preset's is models/PRESET.csv in OUTDIR), digested once.
 */
static int
plan_inputs(struct writer *w, struct dl_err *e)
{
	struct sched *s = w->s;
	int rc;

	plan_init(&w->tmpl);
	w->mi = xcalloc(s->nmodels + 1, sizeof(*w->mi));
	if ((rc = plan_set_inputs(&w->tmpl, s->c, NULL, e)) != DL_OK)
		return rc;
	for (size_t i = 0; i < s->nmodels && rc == DL_OK; i++) {
		const struct sched_model *sm = &s->models[i];
		struct dl_input *mi = &w->mi[i];

		mi->kind = xstrdup("model");
		if (sm->preset) {
			mi->path = path2(w->rq->outdir, "models/", sm->preset,
			    ".csv");
			sha256_hex(sm->csv, strlen(sm->csv), mi->sha256);
			mi->size = (long long)strlen(sm->csv);
		} else {
			mi->path = xstrdup(sm->m.path);
			if (!read_digest(sm->m.path, mi->sha256, &mi->size))
				rc = sha256_file(sm->m.path, -1, mi->sha256,
				    &mi->size, e);
		}
	}
	return rc;
}

/*
 * The plan of job j on the GPUs of entry en, its first slot: the file
 * written for a job of its class on the same GPUs, or a new one.
 */
static int
job_plan(struct writer *w, const struct sched_entry *en, struct dl_err *e)
{
	struct sched *s = w->s;
	int j = en->job, cls = s->jobs[j].cls, model = s->classes[cls].model;
	struct strbuf key = STRBUF_INIT;
	char *txt = NULL, *path, name[64];
	struct dl_plan p;
	size_t have;
	int rc;

	sb_add(&key, (const char *)&cls, sizeof(cls));
	sb_add(&key, (const char *)en->node, (size_t)en->ngpus * sizeof(int));
	sb_add(&key, (const char *)en->gpu, (size_t)en->ngpus * sizeof(int));
	if (kc_findi(&w->written, key.buf, key.len, &have)) {
		w->plan[j] = (long)have;
		sb_free(&key);
		return DL_OK;
	}
	rc = sched_job_plan(s, j, (size_t)en->ngpus, en->node, en->gpu, &p, e);
	if (rc == DL_OK) {
		p.ninputs = w->tmpl.ninputs + 1;
		p.inputs = xcalloc(p.ninputs, sizeof(*p.inputs));
		for (size_t i = 0; i < p.ninputs; i++) {
			const struct dl_input *in = i < w->tmpl.ninputs ?
			    &w->tmpl.inputs[i] : &w->mi[model];

			p.inputs[i] = *in;
			p.inputs[i].kind = xstrdup(in->kind);
			p.inputs[i].path = xstrdup(in->path);
		}
		rc = plan_json_string(&p, s->c, &s->models[model].m, w->plans,
		    &txt, e);
	}
	if (rc == DL_OK) {
		plan_name(name, sizeof(name), w->nplans + 1);
		path = path2(w->rq->outdir, name, "", "");
		rc = af_write_file(path, txt, strlen(txt), e);
		free(path);
	}
	if (rc == DL_OK) {
		w->plan[j] = ++w->nplans;
		kc_puti(&w->written, key.buf, key.len, (size_t)w->nplans);
	}
	sb_free(&key);
	plan_free(&p);
	free(txt);
	return rc;
}

/* One event line: the jobs that launched or ended in slot sl, and those
 * that stopped; a job's first launch gives it its plan. */
static int
emit_event(void *arg, const struct sched_slot *sl, const int *stop,
    size_t nstop, struct dl_err *e)
{
	struct writer *w = arg;
	json_t *jobs = json_array(), *st = json_array(), *rec;
	int rc = DL_OK;

	for (size_t i = 0; i < sl->n && rc == DL_OK; i++) {
		const struct sched_entry *en = &sl->e[i];

		if (!en->launch && !en->finished)
			continue;
		json_array_append_new(jobs, entry_json(w->s, en));
		if (en->launch && w->plan[en->job] == 0)
			rc = job_plan(w, en, e);
	}
	for (size_t i = 0; i < nstop; i++)
		json_array_append_new(st, json_string(w->s->jobs[stop[i]].id));
	rec = json_pack("{s:I, s:o, s:o, s:o}", "slot", (json_int_t)sl->index,
	    "start_s", cmd_json_real((double)sl->index * w->rq->sp.slot_s),
	    "jobs", jobs, "stop", st);
	fputs(w->events++ ? ",\n  " : "\n  ", w->sj.fp);
	json_line(w->sj.fp, rec);
	return rc;
}

/* Before the run: the directories, the preset models and the head of
 * schedule.json, up to its "events". */
static int
writer_open(struct writer *w, struct sched *s, const struct req *rq,
    struct dl_err *e)
{
	json_t *nodes = json_array();
	int rc;

	memset(w, 0, sizeof(*w));
	w->s = s;
	w->rq = rq;
	w->plans = path2(rq->outdir, "plans", "", "");
	w->plan = xcalloc(s->njobs + 1, sizeof(*w->plan));
	if ((rc = mkdir_p(w->plans, e)) != DL_OK ||
	    (rc = plan_inputs(w, e)) != DL_OK)
		return rc;
	for (size_t i = 0; i < s->nmodels && rc == DL_OK; i++) {
		const struct sched_model *sm = &s->models[i];
		char *mdir = path2(rq->outdir, "models", "", ""), *mp;

		if (sm->preset == NULL || (rc = mkdir_p(mdir, e)) != DL_OK) {
			free(mdir);
			continue;
		}
		mp = path2(mdir, sm->preset, ".csv", "");
		rc = af_write_file(mp, sm->csv, strlen(sm->csv), e);
		free(mp);
		free(mdir);
	}
	if (rc == DL_OK) {
		char *path = path2(rq->outdir, "schedule.json", "", "");

		rc = af_open(&w->sj, path, e);
		free(path);
	}
	if (rc != DL_OK)
		return rc;
	w->open = 1;
	for (size_t v = 0; v < s->c->nnodes; v++)
		json_array_append_new(nodes, json_pack("{s:s, s:i}", "node",
		    s->c->nodes[v].id, "gpus", s->c->nodes[v].gpus));
	fprintf(w->sj.fp, "{\n \"schema\": \"dlplan.schedule/3\",\n "
	    "\"generator\": \"dlplan " DLPLAN_VERSION "\",\n \"policy\": "
	    "\"%s\",\n \"objective\": \"%s\",\n \"slot_s\": ",
	    sched_policy_name(rq->policy), rq->sp.objective == SCHED_JCT ?
	    "jct" : "utility");
	json_line(w->sj.fp, cmd_json_real(rq->sp.slot_s));
	fputs(",\n \"restart_s\": ", w->sj.fp);
	json_line(w->sj.fp, cmd_json_real(rq->sp.restart_s));
	fputs(",\n \"nodes\": ", w->sj.fp);
	json_line(w->sj.fp, nodes);
	fputs(",\n \"events\": [", w->sj.fp);
	return DL_OK;
}

/* After every policy ran: the tail of schedule.json, jobs.csv and
 * summary.csv. */
static int
writer_close(struct writer *w, const struct sched_result *res,
    struct dl_err *e)
{
	const struct sched_result *r = &res[w->rq->policy];
	const char *outdir = w->rq->outdir;
	json_t *sum = json_object();
	struct strbuf sb = STRBUF_INIT;
	struct afile jc;
	char *path;
	int rc;

	fputs(w->events ? "\n ],\n \"jobs\": [" : "],\n \"jobs\": [",
	    w->sj.fp);
	for (size_t j = 0; j < w->s->njobs; j++) {
		fputs(j ? ",\n  " : "\n  ", w->sj.fp);
		json_line(w->sj.fp, job_json(w->s, w->plan[j], j));
	}
	for (int i = 0; i < sched_npolicy(); i++)
		json_object_set_new(sum, sched_policy_name(i),
		    summary_json(&res[i]));
	fputs(w->s->njobs ? "\n ],\n \"summary\": " : "],\n \"summary\": ",
	    w->sj.fp);
	json_line(w->sj.fp, sum);
	fputs("\n}\n", w->sj.fp);
	w->open = 0;
	if ((rc = af_commit(&w->sj, e)) != DL_OK)
		return rc;
	path = path2(outdir, "jobs.csv", "", "");
	if ((rc = af_open(&jc, path, e)) == DL_OK) {
		jobs_csv(jc.fp, w->s, r, w->plan);
		rc = af_commit(&jc, e);
	}
	free(path);
	if (rc == DL_OK) {
		summary_csv(&sb, res);
		path = path2(outdir, "summary.csv", "", "");
		rc = af_write_file(path, sb.buf, sb.len, e);
		free(path);
	}
	sb_free(&sb);
	return rc;
}

static void
writer_free(struct writer *w)
{
	if (w->open)
		af_abort(&w->sj);
	plan_free(&w->tmpl);
	for (size_t i = 0; w->mi != NULL && i < w->s->nmodels; i++) {
		free(w->mi[i].kind);
		free(w->mi[i].path);
	}
	free(w->mi);
	free(w->plans);
	free(w->plan);
	kc_free(&w->written);
}

static int
parse(const struct dl_cmd *cmd, int argc, char **argv, struct req *rq,
    struct dl_err *e)
{
	struct optstate st;
	struct cmd_stdin in = { "" };
	int id;
	long l;

	memset(rq, 0, sizeof(*rq));
	rq->sp.slot_s = 300;
	rq->sp.restart_s = 30;
	rq->sp.seed = 1;
	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, NULL, e) != DL_OK)
			goto usage;
		if (cmd_cluster_opt(id, st.arg, &rq->cp))
			continue;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return -1;
		case O_JOBS:
			rq->jobs = st.arg;
			break;
		case O_OUT:
			rq->outdir = st.arg;
			break;
		case O_SLOT:
			if (opt_double(&st, 1e-3, 1e9, &rq->sp.slot_s, e))
				goto usage;
			break;
		case O_RESTART:
			if (opt_double(&st, 0, 1e9, &rq->sp.restart_s, e))
				goto usage;
			break;
		case O_SLOTS:
			if (opt_long(&st, 0, 100000000, &rq->sp.max_slots, e))
				goto usage;
			break;
		case O_MAXWAIT:
			if (opt_double(&st, 0, 1e12, &rq->sp.max_wait_s, e))
				goto usage;
			break;
		case O_SEED:
			if (opt_long(&st, 0, 2147483647, &l, e))
				goto usage;
			rq->sp.seed = (unsigned long)l;
			break;
		case O_POLICY:
			if ((rq->policy = opt_choice(&st, e)) < 0)
				goto usage;
			break;
		case O_OBJ:
			if ((rq->sp.objective = opt_choice(&st, e)) < 0)
				goto usage;
			break;
		case O_FORMAT:
			if ((rq->format = opt_choice(&st, e)) < 0)
				goto usage;
			break;
		}
	}
	if (st.npos > 0) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    st.pos[0]);
		goto usage;
	}
	if (rq->cp.dir == NULL && rq->cp.nodes == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no cluster given (use -c "
		    "DIR or --nodes FILE)");
		goto usage;
	}
	if (rq->jobs == NULL) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no jobs given (use --jobs "
		    "JOBS.csv)");
		goto usage;
	}
	/* A start or restart costs restart_s of its slot's time. */
	if (rq->sp.slot_s <= rq->sp.restart_s) {
		dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--slot-seconds' "
		    "(%g) must exceed '--restart-seconds' (%g): every start "
		    "takes that long out of its slot", rq->sp.slot_s,
		    rq->sp.restart_s);
		goto usage;
	}
	opt_free(&st);
	return DL_OK;
usage:
	opt_free(&st);
	return DL_EUSAGE;
}

static void
print_summary(const struct sched *s, const struct sched_result *res,
    const struct req *rq)
{
	if (rq->format == 1) {
		json_t *a = json_array();

		for (int i = 0; i < sched_npolicy(); i++)
			json_array_append_new(a, summary_json(&res[i]));
		cmd_print_json(a);
		json_decref(a);
	} else if (rq->format == 2) {
		struct strbuf sb = STRBUF_INIT;

		summary_csv(&sb, res);
		fputs(sb.buf, stdout);
		sb_free(&sb);
	} else if (dl_verbose >= 0) {
		print_table(s, res, rq);
	}
}

/*
 * A progress line (cmd_progress_due()): the policy that runs, the jobs
 * it has ended, its events and the simulated time, and the time taken;
 * a last one for each policy once lines are written.
 */
static void
progress(void *arg, const struct sched_progress *pg)
{
	double el;

	if (!cmd_progress_due(arg, pg->final, &el))
		return;
	fprintf(stderr, "dlplan: schedule: %s%s (policy %d of %d), %zu of %zu "
	    "jobs ended, %ld events, %.6g s simulated, %.1f s\n", pg->final ?
	    "done, " : "", sched_policy_name(pg->policy), pg->policy + 1,
	    sched_npolicy(), pg->ended, pg->njobs, pg->events, pg->time_s, el);
}

static int
cmd_schedule(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct req rq;
	struct dl_err e;
	struct dl_cluster c;
	struct sched s;
	struct sched_result *res;
	struct cmd_progress pg;
	struct writer w;
	int rc, n = 0;

	memset(&w, 0, sizeof(w));

	if ((rc = parse(cmd, argc, argv, &rq, &e)) != DL_OK)
		return rc < 0 ? DL_OK : opt_usage_error(cmd, &e);
	if ((rc = cluster_load(&c, &rq.cp, &e)) != DL_OK)
		return cmd_fail(&e);
	rq.sp.explain = dl_verbose > 0;
	if (cmd_progress_begin(&pg)) {
		rq.sp.progress = progress;
		rq.sp.progress_arg = &pg;
	}
	if ((rc = sched_load(&s, &c, rq.jobs, &e)) != DL_OK) {
		cluster_free(&c);
		return cmd_fail(&e);
	}
	res = xcalloc((size_t)sched_npolicy() + 1, sizeof(*res));
	/*
	 * No slot is kept: the chosen policy's schedule is written as it
	 * runs.  Each policy's result stands alone: a baseline simulated
	 * for the comparison that stops early (stalls, or runs past the
	 * slots dlplan simulates) is reported as stalled with its reason
	 * and never changes the exit status, which is the chosen policy's.
	 */
	if (rq.outdir) {
		/* One set: plans/ and models/ lose the files of earlier runs. */
		cmd_set_begin();
		if ((rc = cmd_lock_outdir(rq.outdir, &e)) == DL_OK)
			rc = writer_open(&w, &s, &rq, &e);
	}
	for (int i = 0; i < sched_npolicy() && rc == DL_OK; i++, n++) {
		struct sched_params sp = rq.sp;

		sp.forget = 1;
		if (i == rq.policy && rq.outdir) {
			sp.emit = emit_event;
			sp.emit_arg = &w;
		}
		rc = sched_run(&s, i, &sp, &res[i], &e);
		if (rc != DL_OK)
			res[i].stalled = xstrdup(e.msg);
		if (rc != DL_OK && i != rq.policy) {
			if (dl_verbose >= 0)
				dl_warn("warning: %s (a baseline: reported as "
				    "stalled, its summary counts the jobs it "
				    "leaves unfinished)", e.msg);
			rc = DL_OK;
		}
	}
	/* A job that runs too long is named by its line in JOBS.csv. */
	if (rc == DL_EDATA && e.file[0] == '\0' && e.line > 0)
		snprintf(e.file, sizeof(e.file), "%s",
		    strcmp(rq.jobs, "-") == 0 ? "<stdin>" : rq.jobs);
	if (rq.outdir) {
		if (rc == DL_OK)
			rc = writer_close(&w, res, &e);
		if (w.s != NULL)
			writer_free(&w);
		if (rc == DL_OK)
			rc = cmd_set_end(rq.outdir, "", 1, &e);
		else
			cmd_set_end(rq.outdir, "", 0, NULL);
	}
	if (rc == DL_OK) {
		if (dl_verbose > 0) {
			if (res[rq.policy].log)
				fputs(res[rq.policy].log, stderr);
			fprintf(stderr, "dlplan: %ld iteration times computed",
			    s.evals);
			if (s.searches > 0)
				fprintf(stderr, " (%ld plan searches for "
				    "model-parallel jobs)", s.searches);
			fputc(';', stderr);
			for (int i = 0; i < sched_npolicy(); i++)
				fprintf(stderr, "%s %s %.3g s (%ld events)",
				    i ? "," : "", sched_policy_name(i),
				    res[i].time_s, res[i].events);
			fputc('\n', stderr);
		}
		print_summary(&s, res, &rq);
	}
	for (int i = 0; i < n; i++)
		sched_result_free(&res[i]);
	free(res);
	sched_free(&s);
	cluster_free(&c);
	return rc == DL_OK ? DL_OK : cmd_fail(&e);
}
