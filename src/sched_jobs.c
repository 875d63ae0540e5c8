/*
 * sched_jobs.c - JOBS.csv, the jobs' models and cost models, and the
 * iteration time of a job on a set of GPUs (sched.h, sched_int.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csvin.h"
#include "fmethod.h"
#include "forecast.h"
#include "kc.h"
#include "modelgen.h"
#include "sb.h"
#include "sched_int.h"

static const struct csv_col jobs_cols[] = {
	{ "job", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "arrival_s", CSV_NUM, 1, 0, 1e12, 0, 0, "seconds" },
	{ "model", CSV_STR, 1, 0, 0, 0, 0, NULL },
	{ "global_batch", CSV_INT, 1, 1, 1e9, 0, 0, "samples" },
	{ "micro_batch", CSV_INT, 1, 1, 1e9, 0, 0, "samples" },
	{ "iterations", CSV_NUM, 1, 0, 1e15, 1, 0, NULL },
	{ "min_gpus", CSV_INT, 0, 1, 1e6, 0, 0, NULL },
	{ "max_gpus", CSV_INT, 0, 1, 1e6, 0, 0, NULL },
	{ "weight", CSV_NUM, 0, 0, 1e6, 1, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_jobs_schema = { "JOBS.csv", jobs_cols };
/* JOBS.csv's columns: their schema indices, looked up by name once. */
struct job_cols {
	size_t job, arr, model, gb, mb, iter, min, max, w;
};

static void
job_cols_find(const struct csv_table *t, struct job_cols *jc)
{
	jc->job = csv_colidx(t, "job");
	jc->arr = csv_colidx(t, "arrival_s");
	jc->model = csv_colidx(t, "model");
	jc->gb = csv_colidx(t, "global_batch");
	jc->mb = csv_colidx(t, "micro_batch");
	jc->iter = csv_colidx(t, "iterations");
	jc->min = csv_colidx(t, "min_gpus");
	jc->max = csv_colidx(t, "max_gpus");
	jc->w = csv_colidx(t, "weight");
}

/* A preset's rows as a model (the values model_load() would read back
 * from the text, which prints every number round-trip). */
static void
preset_model(const char *name, const struct mg_model *g, struct sched_model *sm)
{
	struct strbuf sb = STRBUF_INIT;

	sb_addf(&sb, "# dlplan model --preset %s\n", name);
	sb_adds(&sb, "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb,"
	    "tp_mb\n");
	sm->m.path = xstrdup(name);
	sm->m.nlayers = g->nrows;
	sm->m.layers = xcalloc(g->nrows, sizeof(struct dl_layer));
	for (size_t i = 0; i < g->nrows; i++) {
		const struct mg_row *r = &g->rows[i];
		struct dl_layer *l = &sm->m.layers[i];
		double v[6] = { r->fwd_gflop, r->bwd_gflop, r->params_m,
		    r->act_mb, r->mem_mb, r->tp_mb };

		l->name = xstrdup(r->name);
		l->fwd_gflop = v[0];
		l->bwd_gflop = v[1];
		l->params_m = v[2];
		l->act_mb = v[3];
		l->mem_mb = v[4];
		l->tp_mb = v[5];
		l->line = (long)i + 3;
		sb_adds(&sb, r->name);
		for (int k = 0; k < 6; k++) {
			sb_addc(&sb, ',');
			sb_adddbl(&sb, v[k]);
		}
		sb_addc(&sb, '\n');
	}
	/* The architecture, as model_load() reads it back from the
	 * comment: the memory savers and the cost model need it. */
	{
		struct strbuf c = STRBUF_INIT;

		sb_addf(&c, "dlplan model --preset %s", name);
		sm->m.has_arch = mg_arch_parse(c.buf, &sm->m.arch);
		sb_free(&c);
	}
	sm->preset = xstrdup(name);
	sm->csv = sb_detach(&sb);
}

/* The model of a JOBS.csv cell: an existing file (relative to dir) or a
 * preset; loaded once per distinct name. */
static int
find_model(struct sched *s, const struct csv_table *t, size_t row,
    size_t col, const char *dir, struct dl_err *e)
{
	const char *name = csv_str(t, row, col);
	struct strbuf path = STRBUF_INIT;
	struct sched_model *sm;
	struct stat sb;
	int rc = DL_OK;

	for (size_t i = 0; i < s->nmodels; i++)
		if (strcmp(s->models[i].name, name) == 0)
			return (int)i;
	if (name[0] == '/' || dir[0] == '\0')
		sb_adds(&path, name);
	else
		sb_addf(&path, "%s/%s", dir, name);
	s->models = xreallocarray(s->models, s->nmodels + 1, sizeof(*sm));
	sm = &s->models[s->nmodels];
	memset(sm, 0, sizeof(*sm));
	if (name[0] != '\0' && stat(path.buf, &sb) == 0) {
		rc = model_load(&sm->m, path.buf, e);
	} else if (mg_preset_find(name) != NULL) {
		struct mg_model g;

		rc = mg_generate(mg_preset_find(name), &g, e);
		if (rc == DL_OK) {
			preset_model(name, &g, sm);
			mg_free(&g);
		}
	} else {
		rc = csv_cellerr(t, row, col, e, "unknown model '%s' (not "
		    "a file relative to the jobs file, nor a preset: %s)", name,
		    MG_PRESET_WORDS);
	}
	sb_free(&path);
	if (rc != DL_OK)
		return -1;
	sm->name = xstrdup(name);
	return (int)s->nmodels++;
}

/* The class of (model, batch), made on first use. */
static int
find_class(struct sched *s, int model, long gb, long mb, struct dl_err *e)
{
	struct sched_class *k;
	const struct dl_cluster *c = s->c;
	int L;

	for (size_t i = 0; i < s->nclasses; i++)
		if (s->classes[i].model == model &&
		    s->classes[i].opts.global_batch == gb &&
		    s->classes[i].opts.micro_batch == mb)
			return (int)i;
	s->classes = xreallocarray(s->classes, s->nclasses + 1, sizeof(*k));
	k = &s->classes[s->nclasses];
	memset(k, 0, sizeof(*k));
	k->model = model;
	plan_opts_default(&k->opts);
	k->opts.global_batch = gb;
	k->opts.micro_batch = mb;
	k->micro_batches = gb / mb;
	if (cost_init(&k->x, c, &s->models[model].m, &k->opts, s->uhat,
	    s->router, e) != DL_OK)
		return -1;
	L = (int)s->models[model].m.nlayers;
	k->fits = xcalloc(c->nnodes + 1, 1);
	k->step_s = xcalloc(c->nnodes + 1, sizeof(double));
	for (size_t n = 0; n < c->nnodes; n++) {
		k->fits[n] = cost_stage_memory(&k->x, 0, L - 1, 1, 1, 1, 1) <=
		    cost_gpu_capacity(&k->x, (int)n);
		k->step_s[n] = 0;
		k->mp |= k->fits[n];
	}
	/* No replica fits anywhere: the planner's plans, on any node. */
	k->mp = !k->mp;
	for (size_t n = 0; n < c->nnodes && k->mp; n++)
		k->fits[n] = 1;
	/* cost_init keeps pointers to the options and the model, which
	 * move while the arrays grow: fix_classes() sets them again. */
	k->x.o = NULL;
	k->x.m = NULL;
	s->nclasses++;
	return (int)s->nclasses - 1;
}

/* Point every class's cost model at its options (the array has stopped
 * growing) and time one micro-batch per node. */
static void
fix_classes(struct sched *s)
{
	for (size_t i = 0; i < s->nclasses; i++) {
		struct sched_class *k = &s->classes[i];
		int L = (int)s->models[k->model].m.nlayers;

		k->x.o = &k->opts;
		k->x.m = &s->models[k->model].m;
		k->min_step_s = HUGE_VAL;
		for (size_t n = 0; n < s->c->nnodes; n++) {
			k->step_s[n] = cost_stage_compute(&k->x, (int)n, 1, 0,
			    L - 1);
			if (k->fits[n] && k->step_s[n] < k->min_step_s)
				k->min_step_s = k->step_s[n];
		}
	}
}

/* One row of JOBS.csv into job j. */
static int
read_job(struct sched *s, const struct csv_table *t,
    const struct job_cols *jc, size_t r, const char *dir,
    struct kcache *ids, struct dl_err *e)
{
	struct sched_job *j = &s->jobs[r];
	long gb = (long)csv_num(t, r, jc->gb), mb = (long)csv_num(t, r, jc->mb);
	int model, usable = 0;
	size_t first;
	struct strbuf why = STRBUF_INIT;

	j->id = xstrdup(csv_str(t, r, jc->job));
	j->line = t->line[r];
	j->arrival_s = csv_num(t, r, jc->arr);
	j->iterations = csv_num(t, r, jc->iter);
	j->weight = csv_num_or(t, r, jc->w, 1);
	if (gb % mb != 0)
		return csv_cellerr(t, r, jc->mb, e, "job '%s': micro_batch %ld "
		    "does not divide global_batch %ld", j->id, mb, gb);
	if (kc_findi(ids, j->id, strlen(j->id), &first))
		return csv_cellerr(t, r, jc->job, e, "job '%s' given twice "
		    "(first on line %ld)", j->id, s->jobs[first].line);
	kc_puti(ids, j->id, strlen(j->id), r);
	if ((model = find_model(s, t, r, jc->model, dir, e)) < 0)
		return e->code;
	if ((j->cls = find_class(s, model, gb, mb, e)) < 0)
		return e->code;
	j->min_gpus = (int)csv_num_or(t, r, jc->min, 1);
	j->max_gpus = (int)csv_num_or(t, r, jc->max, 1000000);
	if (j->min_gpus > j->max_gpus)
		return csv_cellerr(t, r, jc->max, e, "job '%s': max_gpus %d is "
		    "below min_gpus %d", j->id, j->max_gpus, j->min_gpus);
	for (size_t n = 0; n < s->c->nnodes; n++)
		if (s->classes[j->cls].fits[n])
			usable += s->c->nodes[n].gpus;
	if (s->classes[j->cls].mp) {
		/* sched_load() raises min_gpus to what a plan needs. */
		if (j->max_gpus > usable)
			j->max_gpus = usable;
		return DL_OK;
	}
	if (usable > s->classes[j->cls].micro_batches)
		usable = (int)s->classes[j->cls].micro_batches;
	if (j->min_gpus > usable) {
		sb_addf(&why, "it needs %d GPUs and can use at most %d "
		    "(GPUs it fits on, %ld micro-batches)", j->min_gpus, usable,
		    s->classes[j->cls].micro_batches);
		j->why = sb_detach(&why);
		return DL_OK;
	}
	if (j->max_gpus > usable)
		j->max_gpus = usable;
	return DL_OK;
}

/* The jobs of model-parallel classes: at least the GPUs a plan needs, or
 * why none fits. */
static void
mp_jobs(struct sched *s)
{
	for (size_t i = 0; i < s->nclasses; i++)
		if (s->classes[i].mp)
			sched_mp_setup(s, (int)i);
	for (size_t r = 0; r < s->njobs; r++) {
		struct sched_job *j = &s->jobs[r];
		const struct sched_class *k = &s->classes[j->cls];
		struct strbuf why = STRBUF_INIT;

		if (!k->mp)
			continue;
		if (k->mp_min == 0) {
			j->why = xstrdup(k->mp_why);
			continue;
		}
		if (j->min_gpus < k->mp_min)
			j->min_gpus = k->mp_min;
		if (j->max_gpus < j->min_gpus) {
			sb_addf(&why, "a plan of %s (batch %ld) needs at least "
			    "%d GPUs to fit in memory, more than it may use "
			    "(%d)", s->models[k->model].name,
			    k->opts.micro_batch, j->min_gpus, j->max_gpus);
			j->why = sb_detach(&why);
		}
	}
}

static int
cmp_arrival(const void *a, const void *b)
{
	const struct sched_job *x = a, *y = b;

	if (x->arrival_s != y->arrival_s)
		return x->arrival_s < y->arrival_s ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* DL_EINFEAS naming the first job in the file when none can run. */
static int
all_unschedulable(struct sched *s, const char *path, struct dl_err *e)
{
	const struct sched_job *first = NULL;
	int rc;

	for (size_t j = 0; j < s->njobs; j++) {
		if (s->jobs[j].why == NULL)
			return DL_OK;
		if (first == NULL || s->jobs[j].line < first->line)
			first = &s->jobs[j];
	}
	rc = dl_seterr(e, DL_EINFEAS, path, first->line, 0, "job '%s' can "
	    "never run: %s%s", first->id, first->why, s->njobs > 1 ?
	    " (and no other job can)" : "");
	sched_free(s);
	return rc;
}

int
sched_load(struct sched *s, const struct dl_cluster *c,
    const char *jobs_path, struct dl_err *e)
{
	struct dl_route_opts ro = { 3, 1, FM_GMC };
	struct csv_table t;
	struct job_cols jc;
	struct kcache ids = { 0 };
	char *dir = xstrdup(jobs_path), *slash = strrchr(dir, '/');
	int rc;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->ngpus = cluster_gpus(c);
	s->memo.vfree = free;
	s->shapes.vfree = sched_mp_shape_free;
	if (slash != NULL)
		slash[slash == dir] = '\0';
	else
		dir[0] = '\0';
	s->uhat = xcalloc(c->nnodes + 1, sizeof(double));
	rc = router_check_size(c, e);
	if (rc == DL_OK)
		rc = forecast_node_loads(c, 1, FM_GMC, s->uhat, e);
	if (rc == DL_OK)
		rc = router_new(&s->router, c, &ro, e);
	if (rc == DL_OK)
		rc = csvin_read(jobs_path, &dl_jobs_schema, &t, e);
	if (rc != DL_OK) {
		free(dir);
		sched_free(s);
		return rc;
	}
	if (t.nrows == 0)
		rc = dl_seterr(e, DL_EDATA, jobs_path, t.header_line, 0,
		    "no jobs (expected at least one row after the header)");
	s->jobs = xcalloc(t.nrows + 1, sizeof(*s->jobs));
	job_cols_find(&t, &jc);
	for (size_t r = 0; r < t.nrows && rc == DL_OK; r++) {
		rc = read_job(s, &t, &jc, r, dir, &ids, e);
		s->njobs = r + 1;
	}
	kc_free(&ids);
	csvin_free(&t);
	free(dir);
	if (rc != DL_OK) {
		sched_free(s);
		return rc;
	}
	fix_classes(s);
	mp_jobs(s);
	qsort(s->jobs, s->njobs, sizeof(*s->jobs), cmp_arrival);
	return all_unschedulable(s, jobs_path, e);
}

void
sched_free(struct sched *s)
{
	for (size_t i = 0; i < s->njobs; i++) {
		free(s->jobs[i].id);
		free(s->jobs[i].why);
	}
	free(s->jobs);
	for (size_t i = 0; i < s->nclasses; i++) {
		cost_free(&s->classes[i].x);
		if (s->classes[i].full_init)
			cost_free(&s->classes[i].xfull);
		free(s->classes[i].fits);
		free(s->classes[i].step_s);
		free(s->classes[i].mp_why);
	}
	free(s->classes);
	for (size_t i = 0; i < s->nmodels; i++) {
		model_free(&s->models[i].m);
		free(s->models[i].name);
		free(s->models[i].preset);
		free(s->models[i].csv);
	}
	free(s->models);
	kc_free(&s->memo);
	kc_free(&s->shapes);
	free(s->kind);
	router_free(s->router);
	free(s->uhat);
	memset(s, 0, sizeof(*s));
}

/*
 * The proportional split of M micro-batches over the GPUs of cnt in rank
 * order (node order, cost_baseline()'s rule) into mb[] (one entry per
 * GPU); returns the GPUs that get at least one.
 */
static long
split(const struct sched *s, const struct sched_class *k, const int *cnt,
    long *mb)
{
	long M = k->micro_batches, n = 0, given = 0, live = 0;
	double total = 0, *frac;

	for (size_t v = 0; v < s->c->nnodes; v++) {
		n += cnt[v];
		total += cnt[v] * k->x.speed[v];
	}
	frac = xcalloc((size_t)n + 1, sizeof(double));
	for (size_t v = 0, i = 0; v < s->c->nnodes; v++)
		for (int g = 0; g < cnt[v]; g++, i++) {
			double q = M * k->x.speed[v] / total;

			mb[i] = (long)floor(q);
			frac[i] = q - mb[i];
			given += mb[i];
		}
	/* Largest remainder, ties to the lower rank. */
	while (given < M) {
		long best = -1;

		for (long r = 0; r < n; r++)
			if (frac[r] >= 0 && (best < 0 || frac[r] > frac[best]))
				best = r;
		if (best < 0)
			break;
		mb[best]++;
		frac[best] = -1;
		given++;
	}
	for (long r = 0; r < n; r++)
		live += mb[r] > 0;
	free(frac);
	return live;
}

int
sched_trim(const struct sched *s, int cls, int *cnt)
{
	const struct sched_class *k = &s->classes[cls];
	size_t nn = s->c->nnodes;
	long n = 0, *mb;
	double total = 0;
	int all = 1;

	for (size_t v = 0; v < nn; v++) {
		n += cnt[v];
		total += cnt[v] * k->x.speed[v];
	}
	if (k->mp || n == 0)
		return (int)n;
	/* When split()'s whole shares (the same sums) give every GPU one
	 * micro-batch, none is dropped: the common case, without a split. */
	for (size_t v = 0; v < nn && all; v++)
		all = cnt[v] == 0 || (long)floor(k->micro_batches *
		    k->x.speed[v] / total) >= 1;
	if (all)
		return (int)n;
	mb = xcalloc((size_t)n + 1, sizeof(long));
	/* Fewer GPUs get larger shares: a few rounds reach the fixed point. */
	while (split(s, k, cnt, mb) < n) {
		long i = 0;

		for (size_t v = 0; v < nn; v++) {
			int here = cnt[v];

			for (int g = 0; g < here; g++, i++)
				cnt[v] -= mb[i] < 1;
		}
		n = 0;
		for (size_t v = 0; v < nn; v++)
			n += cnt[v];
	}
	free(mb);
	return (int)n;
}

/* The data-parallel plan of class cls on the GPUs (node[i], gpu[i]). */
static int
dp_plan(struct sched *s, int cls, size_t n, const int *node, const int *gpu,
    struct dl_plan *p, struct dl_err *e)
{
	const struct sched_class *k = &s->classes[cls];
	struct dl_plan given;
	int rc;

	/* cost_baseline() takes the GPUs of a plan in rank order. */
	plan_init(&given);
	given.opts = k->opts;
	given.groups = xcalloc(n + 1, sizeof(*given.groups));
	given.ngroups = (int)n;
	for (size_t i = 0; i < n; i++) {
		struct dl_group *g = &given.groups[i];

		g->micro_batches = 1;
		g->nstages = 1;
		g->stages = xcalloc(1, sizeof(*g->stages));
		g->stages[0].node = node[i];
		g->stages[0].ngpus = 1;
		g->stages[0].gpus[0] = gpu[i];
		g->stages[0].tp_share[0] = 1;
		g->stages[0].last = (int)k->x.m->nlayers - 1;
	}
	rc = cost_baseline(&k->x, &given, COST_PROPORTIONAL, p, e);
	plan_free(&given);
	return rc;
}

/*
 * T of a data-parallel class on cnt: cost_eval()'s T of the plan
 * sched_job_plan() writes for those GPUs (the GPUs of one node are alike,
 * so their local indices do not matter).
 */
static double
iter_time(struct sched *s, int cls, const int *cnt)
{
	size_t nn = s->c->nnodes, n = 0, i = 0;
	int *node, *gpu;
	struct dl_plan p;
	struct dl_err e;
	double t;

	for (size_t v = 0; v < nn; v++)
		n += (size_t)cnt[v];
	if (n == 0)
		return HUGE_VAL;
	node = xcalloc(n + 1, sizeof(int));
	gpu = xcalloc(n + 1, sizeof(int));
	for (size_t v = 0; v < nn; v++)
		for (int g = 0; g < cnt[v]; g++, i++) {
			node[i] = (int)v;
			gpu[i] = g;
		}
	t = dp_plan(s, cls, n, node, gpu, &p, &e) == DL_OK ?
	    p.est.iteration_s : HUGE_VAL;
	plan_free(&p);
	free(node);
	free(gpu);
	return t;
}

/*
 * The memo's key: cls, then (node, count) for every node with GPUs.  It
 * is looked up for every job at every event, so it is built on the stack
 * when the cluster has at most 64 nodes.
 */
double
sched_iter_time(struct sched *s, int cls, const int *cnt)
{
	int small[1 + 2 * 64], *key = small;
	size_t nn = s->c->nnodes, n = 0;
	double *hit, t;

	if (nn > 64)
		key = xcalloc(1 + 2 * nn, sizeof(int));
	key[n++] = cls;
	for (size_t v = 0; v < nn; v++)
		if (cnt[v] > 0) {
			key[n++] = (int)v;
			key[n++] = cnt[v];
		}
	if ((hit = kc_find(&s->memo, (const char *)key, n * sizeof(int))) !=
	    NULL) {
		t = *hit;
	} else {
		t = s->classes[cls].mp ? sched_mp_time(s, cls, cnt) :
		    iter_time(s, cls, cnt);
		s->evals++;
		hit = xmalloc(sizeof(double));
		*hit = t;
		kc_put(&s->memo, (const char *)key, n * sizeof(int), hit);
	}
	if (key != small)
		free(key);
	return t;
}

double
sched_iter_floor(const struct sched *s, int j, int n)
{
	const struct sched_class *k = &s->classes[s->jobs[j].cls];

	return n > 0 ? (double)k->micro_batches * k->min_step_s / n :
	    HUGE_VAL;
}

int
sched_job_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e)
{
	const struct sched_class *k = &s->classes[s->jobs[job].cls];
	int rc;

	if (k->mp)
		return sched_mp_plan(s, job, n, node, gpu, p, e);
	rc = dp_plan(s, s->jobs[job].cls, n, node, gpu, p, e);
	if (rc != DL_OK)
		return rc;
	p->nnodes = s->c->nnodes;
	p->uhat = xmemdup(s->uhat, s->c->nnodes, sizeof(double));
	p->uhat_used = forecast_node_used(s->c, p->opts.horizon,
	    p->opts.forecast);
	p->strategy = STRAT_DP;
	p->status = PLAN_GIVEN;
	return DL_OK;
}
