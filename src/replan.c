/*
 * replan.c - re-plan from measured step times (dlplan(1), dlplan replan).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The log format, the estimator and the rules are in replan.h.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "partition.h"
#include "replan.h"
#include "split.h"

/*
 * The log.
 */

static const struct csv_col steps_cols[] = {
	{ "rank", CSV_INT, 1, 0, 1e9, 0, 0, NULL },
	{ "step", CSV_INT, 1, 0, 1e15, 0, 0, NULL },
	{ "seconds", CSV_NUM, 1, 0, 1e9, 1, 0, "seconds" },
	{ "samples", CSV_INT, 0, 0, 1e15, 0, 0, NULL },
	{ "compute_seconds", CSV_NUM, 0, 0, 1e9, 1, 0, "seconds" },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_steps_schema = { "steps.csv", steps_cols };

struct row {
	long rank, step;
	size_t row;		/* in the table */
};

static int
cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return (x->row > y->row) - (x->row < y->row);
}

void
steplog_free(struct dl_steplog *L)
{
	for (long r = 0; L->rank && r < L->nranks; r++) {
		free(L->rank[r].step);
		free(L->rank[r].seconds);
		free(L->rank[r].compute);
	}
	free(L->rank);
	free(L->path);
	memset(L, 0, sizeof(*L));
}

/* The first rank of the plan without a step: an error for the log. */
static int
missing_rank(const struct dl_steplog *L, const char *path, struct dl_err *e)
{
	long top = -1, miss = -1;

	for (long r = 0; r < L->nranks; r++) {
		if (L->rank[r].n > 0)
			top = r;
		else if (miss < 0)
			miss = r;
	}
	if (miss < 0)
		return DL_OK;
	if (top + 1 == miss && top + 1 < L->nranks)
		return dl_seterr(e, DL_EDATA, path, 0, 0, "the log has ranks 0 "
		    "to %ld, the plan has %ld ranks (a log of another plan?)",
		    top, L->nranks);
	return dl_seterr(e, DL_EDATA, path, 0, 0, "rank %ld of the plan has no "
	    "steps in the log", miss);
}

int
steplog_load(struct dl_steplog *L, const char *path,
    const struct dl_plan *p, struct dl_err *e)
{
	struct dl_rank *rk = plan_rank_table(p);
	long nranks = plan_ranks(p);
	struct csv_table t;
	struct row *rows = NULL;
	size_t crank, cstep, csec, csamples, ccompute;
	int rc, has_samples;

	memset(L, 0, sizeof(*L));
	if ((rc = csvin_read(path, &dl_steps_schema, &t, e)) != DL_OK) {
		free(rk);
		return rc;
	}
	crank = csv_colidx(&t, "rank");
	cstep = csv_colidx(&t, "step");
	csec = csv_colidx(&t, "seconds");
	csamples = csv_colidx(&t, "samples");
	ccompute = csv_colidx(&t, "compute_seconds");
	has_samples = csv_hascol(&t, "samples");
	L->has_compute = csv_hascol(&t, "compute_seconds");
	if (t.nrows == 0) {
		rc = dl_seterr(e, DL_EDATA, path, t.header_line, 0, "no steps "
		    "(expected at least one row after the header)");
		goto out;
	}
	rows = xcalloc(t.nrows, sizeof(*rows));
	for (size_t r = 0; r < t.nrows; r++) {
		long rank = (long)csv_num(&t, r, crank);

		if (rank >= nranks) {
			rc = csv_cellerr(&t, r, crank, e, "rank %ld is not in "
			    "the plan (it has %ld rank%s, 0 to %ld)", rank,
			    nranks, nranks == 1 ? "" : "s", nranks - 1);
			goto out;
		}
		if (has_samples && csv_has(&t, r, csamples)) {
			const struct dl_group *gr = &p->groups[rk[rank].group];
			long want = gr->micro_batches * p->opts.micro_batch;

			if ((long)csv_num(&t, r, csamples) != want) {
				rc = csv_cellerr(&t, r, csamples, e, "rank %ld "
				    "processed %ld samples, the plan gives its "
				    "group %ld (a log of another plan?)", rank,
				    (long)csv_num(&t, r, csamples), want);
				goto out;
			}
		}
		if (L->has_compute && !csv_has(&t, r, ccompute)) {
			rc = csv_cellerr(&t, r, ccompute, e, "empty (the "
			    "column is given, so every step needs a time)");
			goto out;
		}
		rows[r].rank = rank;
		rows[r].step = (long)csv_num(&t, r, cstep);
		rows[r].row = r;
	}
	qsort(rows, t.nrows, sizeof(*rows), cmp_row);
	for (size_t i = 1; i < t.nrows; i++)
		if (rows[i].rank == rows[i - 1].rank &&
		    rows[i].step == rows[i - 1].step) {
			size_t a = rows[i - 1].row, b = rows[i].row;

			rc = csv_cellerr(&t, a > b ? a : b, cstep, e, "rank "
			    "%ld step %ld appears twice (also on line %ld)",
			    rows[i].rank, rows[i].step, t.line[a < b ? a : b]);
			goto out;
		}
	L->path = xstrdup(path);
	L->nranks = nranks;
	L->rank = xcalloc((size_t)nranks + 1, sizeof(*L->rank));
	for (size_t i = 0; i < t.nrows;) {
		struct dl_rankrun *rr = &L->rank[rows[i].rank];
		size_t j = i;

		while (j < t.nrows && rows[j].rank == rows[i].rank)
			j++;
		rr->n = j - i;
		rr->step = xcalloc(rr->n, sizeof(long));
		rr->seconds = xcalloc(rr->n, sizeof(double));
		if (L->has_compute)
			rr->compute = xcalloc(rr->n, sizeof(double));
		for (size_t k = i; k < j; k++) {
			rr->step[k - i] = rows[k].step;
			rr->seconds[k - i] = csv_num(&t, rows[k].row, csec);
			if (L->has_compute)
				rr->compute[k - i] = csv_num(&t, rows[k].row,
				    ccompute);
		}
		i = j;
	}
	rc = missing_rank(L, path, e);
out:
	if (rc != DL_OK)
		steplog_free(L);
	free(rows);
	free(rk);
	csvin_free(&t);
	return rc;
}

/*
 * The estimator.
 */

/* Median of v[0..n-1] (n >= 1); sorts v. */
static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* FLOP part of a stage's compute time (t = t_flop + t_tp). */
static double
stage_flop_s(const struct dl_costctx *x, const struct dl_stage *s)
{
	return (double)x->o->micro_batch * cost_range_flops(x, s->first,
	    s->last) / (s->ngpus * x->speed[s->node]);
}

/* T_g of an evaluated group when its FLOP parts run f times faster. */
static double
group_time(const struct dl_costctx *x, const struct dl_group *gr, double f)
{
	double sum = 0, mx = 0;

	for (int j = 0; j < gr->nstages; j++) {
		const struct dl_stage *s = &gr->stages[j];
		double tf = stage_flop_s(x, s), tt = s->compute_s - tf, t;

		t = tf / f + (tt > 0 ? tt : 0);
		sum += t + s->p2p_s;
		mx = fmax(mx, fmax(t, s->p2p_s));
	}
	return sum + (gr->micro_batches - 1) * mx;
}

/* The f with group_time(f) = T, by bisection on log f. */
static double
solve_factor(const struct dl_costctx *x, const struct dl_group *gr, double T,
    int *clamped)
{
	double lo = log(REPLAN_FACTOR_MIN), hi = log(REPLAN_FACTOR_MAX);

	*clamped = 0;
	if (T >= group_time(x, gr, REPLAN_FACTOR_MIN)) {
		*clamped = 1;
		return REPLAN_FACTOR_MIN;
	}
	if (T <= group_time(x, gr, REPLAN_FACTOR_MAX)) {
		*clamped = 1;
		return REPLAN_FACTOR_MAX;
	}
	for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
		double mid = (lo + hi) / 2;

		/* group_time falls as f grows. */
		if (group_time(x, gr, exp(mid)) > T)
			lo = mid;
		else
			hi = mid;
	}
	return exp((lo + hi) / 2);
}

/*
 * The observed time of the ranks of group g (every rank when g < 0) and
 * stage (every stage when stage < 0), from the step times or, with busy,
 * the busy times: the largest of
 * their medians over the last W steps, its relative noise and the fewest
 * steps a rank had.
 */
struct obs {
	double t, noise;
	long steps;
};

static void
observe(const struct dl_steplog *L, const struct dl_rank *rk, int g,
    int stage, int busy, int window, struct obs *o)
{
	double *dev = xcalloc((size_t)L->nranks * window + 1, sizeof(double));
	double *buf = xcalloc((size_t)window + 1, sizeof(double));
	size_t ndev = 0;

	o->t = 0;
	o->steps = LONG_MAX;
	for (long r = 0; r < L->nranks; r++) {
		const struct dl_rankrun *rr = &L->rank[r];
		const double *v = busy ? rr->compute : rr->seconds;
		size_t w = rr->n < (size_t)window ? rr->n : (size_t)window;
		double med;

		if ((g >= 0 && rk[r].group != g) ||
		    (stage >= 0 && rk[r].stage != stage))
			continue;
		for (size_t k = 0; k < w; k++)
			buf[k] = v[rr->n - w + k];
		med = median(buf, w);
		o->t = fmax(o->t, med);
		for (size_t k = 0; k < w; k++)
			dev[ndev++] = fabs(buf[k] / med - 1);
		if ((long)w < o->steps)
			o->steps = (long)w;
	}
	o->noise = 1.4826 * median(dev, ndev) * 1.2533 /
	    sqrt((double)o->steps);
	free(dev);
	free(buf);
}

/*
 * Fill u from an observation against a prediction; 1 inside the band.
 * The band takes the larger of the unit's noise and the whole log's:
 * eight samples say little about a spread, all ranks together more.
 */
static int
within_band(struct replan_unit *u, const struct obs *o, double predicted,
    double pooled)
{
	u->predicted_s = predicted;
	u->observed_s = o->t;
	u->noise = fmax(o->noise, pooled);
	u->steps = o->steps;
	u->band = fmax(0.01, 3 * u->noise);
	u->factor = 1;
	u->clamped = 0;
	return fabs(o->t / predicted - 1) <= u->band;
}

/* The f with m (t_flop / f + t_tp) = busy for one stage. */
static double
unit_factor(const struct dl_costctx *x, const struct dl_stage *s, long m,
    double busy, int *clamped)
{
	double tf = stage_flop_s(x, s), tt = s->compute_s - tf, f;

	f = busy / m - (tt > 0 ? tt : 0) > 0 ? tf / (busy / m - (tt > 0 ?
	    tt : 0)) : REPLAN_FACTOR_MAX;
	*clamped = f <= REPLAN_FACTOR_MIN || f >= REPLAN_FACTOR_MAX;
	return fmin(fmax(f, REPLAN_FACTOR_MIN), REPLAN_FACTOR_MAX);
}

void
replan_estimate(const struct dl_costctx *x, const struct dl_plan *parent,
    const struct dl_steplog *L, int window, struct replan_unit *u,
    double *node_factor)
{
	struct dl_rank *rk = plan_rank_table(parent);
	size_t nn = x->c->nnodes;
	double *gpus = xcalloc(nn + 1, sizeof(double));
	struct obs all;
	int k = 0;

	for (size_t i = 0; i < nn; i++)
		node_factor[i] = 0;
	observe(L, rk, -1, -1, L->has_compute, window, &all);
	for (int g = 0; g < parent->ngroups; g++) {
		const struct dl_group *gr = &parent->groups[g];
		struct replan_unit gu;
		struct obs o;

		if (!L->has_compute) {
			observe(L, rk, g, -1, 0, window, &o);
			if (!within_band(&gu, &o, gr->time_s, all.noise))
				gu.factor = solve_factor(x, gr, o.t,
				    &gu.clamped);
		}
		for (int j = 0; j < gr->nstages; j++, k++) {
			const struct dl_stage *s = &gr->stages[j];

			if (L->has_compute) {
				observe(L, rk, g, j, 1, window, &o);
				if (!within_band(&u[k], &o, gr->micro_batches *
				    s->compute_s, all.noise))
					u[k].factor = unit_factor(x, s,
					    gr->micro_batches, o.t,
					    &u[k].clamped);
			} else {
				u[k] = gu;
			}
			u[k].group = g;
			u[k].stage = j;
			node_factor[s->node] += s->ngpus * u[k].factor;
			gpus[s->node] += s->ngpus;
		}
	}
	for (size_t i = 0; i < nn; i++)
		node_factor[i] = gpus[i] > 0 ? node_factor[i] / gpus[i] : 1;
	free(rk);
	free(gpus);
}

/*
 * Re-solving.
 */

/* The groups of p with micro-batches m[g] (groups with 0 dropped). */
static void
with_split(struct dl_plan *dst, const struct dl_plan *src, const long *m)
{
	plan_copy(dst, src);
	plan_clear_results(dst);
	dst->ngroups = 0;
	for (int g = 0; g < src->ngroups; g++) {
		if (m[g] <= 0) {
			free(dst->groups[g].stages);
			continue;
		}
		dst->groups[dst->ngroups] = dst->groups[g];
		dst->groups[dst->ngroups].micro_batches = m[g];
		dst->ngroups++;
	}
}

/* Solve the data split for the evaluated plan p into m. */
static int
resplit(const struct dl_costctx *x, const struct dl_plan *p, double tlim,
    long *m, struct dl_err *e)
{
	int G = p->ngroups, st = LP_INFEASIBLE, rc = DL_OK;
	struct split_group *sg = xcalloc((size_t)G, sizeof(*sg));
	long total = x->o->global_batch / x->o->micro_batch;
	double z;

	for (int g = 0; g < G; g++) {
		const struct dl_group *gr = &p->groups[g];
		int S = gr->nstages, *node = xcalloc((size_t)S, sizeof(int));
		int *k = xcalloc((size_t)S, sizeof(int));
		int *last = xcalloc((size_t)S, sizeof(int));

		for (int j = 0; j < S; j++) {
			const struct dl_stage *s = &gr->stages[j];

			sg[g].A += s->compute_s + s->p2p_s;
			sg[g].M = fmax(sg[g].M, fmax(s->compute_s, s->p2p_s));
			node[j] = s->node;
			k[j] = s->ngpus;
			last[j] = s->last;
		}
		sg[g].cap = part_mcap(x, S, k, node, last);
		free(node);
		free(k);
		free(last);
	}
	if (G <= 32) {
		struct lp_params prm = { tlim, 0 };

		rc = split_milp(sg, G, total, &prm, NULL, m, &z, &st, e);
	} else {
		split_exact(sg, G, total, 0, m, &z, &st);
	}
	free(sg);
	if (rc == DL_OK && st != LP_OPTIMAL && st != LP_FEASIBLE)
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the data split has "
		    "no solution under the measured speeds");
	return rc;
}

/* An unshared transfer of a pipeline boundary, as the search prices it. */
struct bnd {
	const struct dl_costctx *x;
	const int *node;
};

static void
boundary_cost(void *ctx, int j, double bytes, double *fwd, double *bwd)
{
	const struct bnd *b = ctx;

	cost_boundary_dirs(b->x, b->node[j], b->node[j + 1], bytes, fwd, bwd);
}

/* New layer boundaries for every group of p, for its micro-batches. */
static int
repartition(const struct dl_costctx *x, struct dl_plan *p, double tlim,
    struct dl_err *e)
{
	for (int g = 0; g < p->ngroups; g++) {
		struct dl_group *gr = &p->groups[g];
		int S = gr->nstages, *node = xcalloc((size_t)S, sizeof(int));
		int *k = xcalloc((size_t)S, sizeof(int)), rc;
		struct bnd b = { x, node };
		struct part_group pg = { S, node, k, gr->micro_batches,
		    boundary_cost, &b, NULL };
		struct part_result r;

		for (int j = 0; j < S; j++) {
			node[j] = gr->stages[j].node;
			k[j] = gr->stages[j].ngpus;
		}
		rc = S > 1 ? part_dp(x, &pg, 4096, &r) : DL_OK;
		if (S > 1 && rc == DL_OK && r.status == LP_FEASIBLE) {
			struct part_result mr;
			struct lp_params prm = { tlim, 0 };

			rc = part_milp(x, &pg, &r, &prm, NULL, &mr, e);
			if (rc == DL_OK && (mr.status == LP_OPTIMAL ||
			    (mr.status == LP_FEASIBLE && mr.obj < r.obj))) {
				part_result_free(&r);
				r = mr;
			} else if (rc == DL_OK) {
				part_result_free(&mr);
			}
		}
		if (S > 1 && rc == DL_OK && r.status != LP_INFEASIBLE)
			for (int j = 0; j < S; j++) {
				gr->stages[j].first = j ? r.last[j - 1] + 1 : 0;
				gr->stages[j].last = r.last[j];
			}
		if (S > 1)
			part_result_free(&r);
		free(node);
		free(k);
		if (rc != DL_OK)
			return rc;
	}
	plan_clear_results(p);
	return DL_OK;
}

/* Evaluate p under x; memory that does not fit makes it unusable. */
static int
price(const struct dl_costctx *x, struct dl_plan *p, int *fits,
    struct dl_err *e)
{
	struct dl_err ee = { 0 };
	int rc = cost_eval(x, p, &ee);

	*fits = rc == DL_OK;
	if (rc == DL_OK || rc == DL_EINFEAS)
		return DL_OK;
	*e = ee;
	return rc;
}

/*
 * The best plan over the re-split and, with repartition, the rounds of
 * partition and split, into best (evaluated).  base is the parent under
 * the measured speeds.
 */
static int
resolve(const struct dl_costctx *xm, const struct dl_plan *base,
    const struct replan_opts *ro, struct dl_plan *best, struct dl_err *e)
{
	struct dl_plan cur, nxt;
	long *m = xcalloc((size_t)base->ngroups + 1, sizeof(long));
	int rc, fits, have = 0;

	memset(best, 0, sizeof(*best));
	plan_copy(&cur, base);
	for (int round = 0; round < (ro->repartition ? 4 : 1); round++) {
		long *prev = xcalloc((size_t)cur.ngroups + 1, sizeof(long));
		int same;

		for (int g = 0; g < cur.ngroups; g++)
			prev[g] = cur.groups[g].micro_batches;
		if ((rc = resplit(xm, &cur, ro->time_limit, m, e)) != DL_OK) {
			free(prev);
			break;
		}
		same = memcmp(prev, m, (size_t)cur.ngroups * sizeof(long)) ==
		    0 && round > 0;
		free(prev);
		with_split(&nxt, &cur, m);
		if ((rc = price(xm, &nxt, &fits, e)) != DL_OK) {
			plan_free(&nxt);
			break;
		}
		if (fits && (!have || nxt.est.iteration_s <
		    best->est.iteration_s)) {
			plan_free(best);
			plan_copy(best, &nxt);
			have = 1;
		}
		if (same || !ro->repartition) {
			plan_free(&nxt);
			break;
		}
		/* Partition for the new split, priced for the next split. */
		if ((rc = repartition(xm, &nxt, ro->time_limit, e)) != DL_OK ||
		    (rc = price(xm, &nxt, &fits, e)) != DL_OK) {
			plan_free(&nxt);
			break;
		}
		if (fits && nxt.est.iteration_s < best->est.iteration_s) {
			plan_free(best);
			plan_copy(best, &nxt);
		}
		plan_free(&cur);
		cur = nxt;
		if (!fits)
			break;
	}
	plan_free(&cur);
	free(m);
	if (rc == DL_OK && !have)
		rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no re-split plan fits "
		    "in memory");
	return rc;
}

/* x's context with every node's speed times factor[node] (NULL: 1). */
static int
scaled(struct dl_costctx *dst, const struct dl_costctx *x,
    const double *factor, struct dl_err *e)
{
	const struct dl_cluster *c = x->c;
	int rc;

	if ((rc = cost_init(dst, c, x->m, x->o, x->uhat, x->router, e)) !=
	    DL_OK)
		return rc;
	dst->speed_total = 0;
	for (size_t i = 0; i < c->nnodes; i++) {
		if (factor)
			dst->speed[i] *= factor[i];
		dst->speed_total += c->nodes[i].gpus * dst->speed[i];
	}
	return DL_OK;
}

int
replan_run(const struct dl_costctx *x, const struct dl_plan *parent,
    const struct dl_steplog *L, const struct replan_opts *ro,
    struct dl_plan *out, struct dl_err *e)
{
	const struct dl_cluster *c = x->c;
	const double *prev = parent->lineage &&
	    parent->lineage->nnodes == c->nnodes ? parent->lineage->factor :
	    NULL;
	struct dl_lineage *lg = xcalloc(1, sizeof(*lg));
	struct dl_plan pf, base, best;
	struct dl_costctx xp, xm;
	int rc, fits, all_one = 1;

	plan_init(out);
	memset(&best, 0, sizeof(best));
	memset(&base, 0, sizeof(base));
	plan_copy(&pf, parent);
	plan_clear_results(&pf);
	lg->window = ro->window;
	lg->repartition = ro->repartition;
	lg->min_gain = ro->min_gain;
	lg->nnodes = c->nnodes;
	lg->factor = xcalloc(c->nnodes + 1, sizeof(double));
	lg->used = xcalloc(c->nnodes + 1, 1);
	lg->compute = L->has_compute;
	for (int g = 0; g < parent->ngroups; g++)
		lg->nunits += parent->groups[g].nstages;
	lg->unit = xcalloc((size_t)lg->nunits + 1, sizeof(*lg->unit));

	/*
	 * What the parent predicted: its forecast speeds, times the factors
	 * of the re-plan that made it, if one did.
	 */
	if ((rc = scaled(&xp, x, prev, e)) != DL_OK)
		goto fail;
	if ((rc = cost_eval(&xp, &pf, e)) != DL_OK) {
		cost_free(&xp);
		goto fail;
	}
	lg->planned_s = pf.est.iteration_s;
	replan_estimate(&xp, &pf, L, ro->window, lg->unit, lg->factor);
	cost_free(&xp);
	for (int i = 0; i < lg->nunits; i++) {
		const struct replan_unit *u = &lg->unit[i];

		all_one &= u->factor == 1;
		lg->used[pf.groups[u->group].stages[u->stage].node] = 1;
	}
	/* Speed factors relative to the forecast, over every re-plan. */
	for (size_t i = 0; prev && i < c->nnodes; i++) {
		lg->factor[i] *= prev[i];
		lg->used[i] |= lg->factor[i] != 1;
	}

	/* The measured context. */
	if ((rc = scaled(&xm, x, lg->factor, e)) != DL_OK)
		goto fail;
	plan_copy(&base, &pf);
	rc = price(&xm, &base, &fits, e);
	if (rc == DL_OK && !fits)
		rc = cost_eval(&xm, &base, e);
	if (rc == DL_OK) {
		lg->measured_s = base.est.iteration_s;
		if (!all_one)
			rc = resolve(&xm, &base, ro, &best, e);
	}
	if (rc == DL_OK) {
		lg->adopted = !all_one && best.est.iteration_s <
		    base.est.iteration_s * (1 - ro->min_gain);
		plan_free(out);
		plan_copy(out, lg->adopted ? &best : &base);
		if (lg->adopted || !all_one) {
			out->status = PLAN_FEASIBLE;
			out->bound_s = out->est.lower_bound_s;
			out->bound_method = BOUND_T_LB;
			out->gap = (out->est.iteration_s - out->bound_s) /
			    out->est.iteration_s;
		}
		out->solve_s = 0;
		free(out->parent);
		out->parent = NULL;
		plan_schedule_free(out->schedule);
		out->schedule = NULL;
		rc = cost_baselines(&xm, out, e);
	}
	cost_free(&xm);
	if (rc == DL_OK) {
		lg->iteration_s = out->est.iteration_s;
		lg->gain = (lg->measured_s - lg->iteration_s) / lg->measured_s;
		plan_lineage_free(out->lineage);
		out->lineage = lg;
	}
fail:
	if (rc != DL_OK) {
		plan_free(out);
		plan_init(out);
		plan_lineage_free(lg);
	}
	plan_free(&pf);
	plan_free(&base);
	plan_free(&best);
	return rc;
}
