/*
 * budget.c - the long-term cost schedule (dlplan(1) ALGORITHMS, Cost
 * schedule).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The rules, the cost definition and the bound are in budget.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "cost.h"
#include "forecast.h"
#include "gmc.h"
#include "sb.h"

/*
 * Slot forecasts.
 */

int
budget_slot_loads(const struct dl_cluster *c, int nslots, int slot_steps,
    int method, double *uhat, struct dl_err *e)
{
	int H = nslots * slot_steps;
	double *fc = xcalloc((size_t)H, sizeof(double));
	int rc = DL_OK;

	for (size_t i = 0; i < c->nnodes && rc == DL_OK; i++) {
		static const struct dl_series none = { 0 };
		const struct dl_series *s = c->load ? &c->load[i] : &none;

		if ((rc = forecast_steps(s, method, H, fc, NULL, e)) != DL_OK) {
			char msg[sizeof(e->msg)];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			rc = dl_seterr(e, rc, c->path_load, 0, 0,
			    "node '%s': %s", c->nodes[i].id, msg);
			break;
		}
		for (int t = 0; t < nslots; t++) {
			double sum = 0, u;

			/* The same summation order as forecast_mean(). */
			for (int h = t * slot_steps; h < (t + 1) * slot_steps;
			    h++)
				sum += fc[h];
			u = sum / slot_steps;
			uhat[(size_t)t * c->nnodes + i] = u < 0 ? 0 :
			    u > FORECAST_LOAD_MAX ? FORECAST_LOAD_MAX : u;
		}
	}
	free(fc);
	return rc;
}

/*
 * The choice and the queue.
 */

int
budget_choose(int n, const double *T, const double *cost, double V,
    double Q)
{
	int best = -1;
	double bs = 0;

	for (int i = 0; i < n; i++) {
		double s = V * T[i] + Q * cost[i];

		if (best < 0 || s < bs || (s == bs && cost[i] < cost[best])) {
			best = i;
			bs = s;
		}
	}
	return best;
}

double
budget_queue_next(double Q, double cost, double budget)
{
	double q = Q + cost - budget;

	return q > 0 ? q : 0;
}

/*
 * Candidates.
 */

/* A searched node subset, kept so that a later slot with the same nodes
 * and the same speeds reuses it. */
struct memo {
	unsigned char *keep;
	double *u;		/* the slot's uhat of the kept nodes */
	int rc;			/* DL_OK or DL_EINFEAS */
	struct dl_err err;
	struct dl_plan plan;	/* for the whole cluster, not evaluated */
};

struct run {
	const struct dl_cluster *c;
	const struct dl_model *m;
	const struct dl_opts *o;
	struct search_opts so;
	struct budget_stats *st;
	struct memo *memo;
	size_t nmemo, capmemo;
	const struct budget_opts *bo;	/* its progress hook */
	int slots_done;
};

/* Tell budget_opts.progress how far the schedule is. */
static void
report(const struct run *R, int final)
{
	struct budget_progress pg;

	if (R->bo->progress == NULL)
		return;
	pg.slots_done = R->slots_done;
	pg.nslots = R->bo->nslots;
	pg.searches = R->st->searches;
	pg.reused = R->st->reused;
	pg.final = final;
	R->bo->progress(R->bo->progress_arg, &pg);
}

static struct memo *
memo_find(const struct run *R, const unsigned char *keep, const double *u)
{
	size_t n = R->c->nnodes;

	for (size_t i = 0; i < R->nmemo; i++) {
		struct memo *me = &R->memo[i];
		size_t j;

		if (memcmp(me->keep, keep, n) != 0)
			continue;
		for (j = 0; j < n; j++)
			if (keep[j] && me->u[j] != u[j])
				break;
		if (j == n)
			return me;
	}
	return NULL;
}

/* The plan of sub-cluster nodes mapped onto c's nodes (not evaluated). */
static void
lift(struct dl_plan *dst, const struct dl_plan *src, const int *vmap,
    const struct dl_costctx *xf)
{
	plan_init(dst);
	dst->opts = src->opts;
	dst->nnodes = xf->c->nnodes;
	dst->uhat = xcalloc(dst->nnodes + 1, sizeof(double));
	memcpy(dst->uhat, xf->uhat, dst->nnodes * sizeof(double));
	dst->ngroups = src->ngroups;
	dst->groups = xcalloc((size_t)src->ngroups + 1, sizeof(*dst->groups));
	for (int g = 0; g < src->ngroups; g++) {
		struct dl_group *d = &dst->groups[g];

		d->micro_batches = src->groups[g].micro_batches;
		d->nstages = src->groups[g].nstages;
		d->stages = xcalloc((size_t)d->nstages, sizeof(*d->stages));
		for (int j = 0; j < d->nstages; j++) {
			d->stages[j] = src->groups[g].stages[j];
			d->stages[j].node = vmap[d->stages[j].node];
		}
	}
	dst->status = src->status;
	dst->gap = src->gap;
	dst->bound_s = src->bound_s;
	dst->bound_method = src->bound_method;
	dst->solve_s = src->solve_s;
}

static void
add_stats(struct budget_stats *st, const struct search_stats *ss)
{
	st->searches++;
	st->structures += ss->structures;
	st->evaluated += ss->evaluated;
	st->milps += ss->milps;
	st->time_s += ss->time_s;
	st->exact |= ss->exact;
}

/*
 * Search the nodes in keep for the slot whose whole-cluster context is xf
 * (router: the whole cluster's), or reuse an earlier search of the same
 * nodes at the same speeds.
 */
static struct memo *
plan_subset(struct run *R, const struct dl_costctx *xf,
    const unsigned char *keep, struct dl_err *e)
{
	const struct dl_cluster *c = R->c;
	size_t n = c->nnodes, k = 0;
	struct search_stats ss;
	struct memo *me;
	int rc;

	if ((me = memo_find(R, keep, xf->uhat)) != NULL) {
		R->st->reused++;
		return me;
	}
	R->memo = xgrow(R->memo, &R->capmemo, R->nmemo + 1, sizeof(*me));
	me = &R->memo[R->nmemo];
	memset(me, 0, sizeof(*me));
	me->keep = xcalloc(n, 1);
	memcpy(me->keep, keep, n);
	me->u = xcalloc(n, sizeof(double));
	memcpy(me->u, xf->uhat, n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		k += keep[i] != 0;
	if (k == n) {
		rc = search_plan(xf, &R->so, &me->plan, &ss, &me->err);
		plan_clear_results(&me->plan);
	} else {
		struct dl_cluster sub;
		struct dl_router *rs = NULL;
		struct dl_route_opts ro = { R->o->states, R->o->horizon,
		    R->o->forecast };
		struct dl_costctx xs;
		struct dl_plan ps;
		int *vmap = xcalloc(c->nverts + 1, sizeof(int));
		double *us = xcalloc(k + 1, sizeof(double));

		cluster_sub(&sub, c, keep, vmap);
		for (size_t i = 0; i < k; i++)
			us[i] = xf->uhat[vmap[i]];
		memset(&ps, 0, sizeof(ps));
		memset(&ss, 0, sizeof(ss));
		rc = router_new(&rs, &sub, &ro, &me->err);
		if (rc == DL_OK) {
			rc = cost_init(&xs, &sub, R->m, R->o, us, rs, &me->err);
			if (rc == DL_OK) {
				rc = search_plan(&xs, &R->so, &ps, &ss,
				    &me->err);
				cost_free(&xs);
			}
		}
		if (rc == DL_OK)
			lift(&me->plan, &ps, vmap, xf);
		plan_free(&ps);
		router_free(rs);
		cluster_free(&sub);
		free(vmap);
		free(us);
	}
	if (rc != DL_OK && rc != DL_EINFEAS) {
		*e = me->err;
		free(me->keep);
		free(me->u);
		plan_free(&me->plan);
		return NULL;
	}
	add_stats(R->st, &ss);
	me->rc = rc;
	R->nmemo++;
	report(R, 0);
	return me;
}

static void
cand_free(struct dl_budget_cand *c)
{
	free(c->used);
	c->used = NULL;
}

/* Nodes the plan uses, ascending, and their price per hour. */
static void
cand_nodes(const struct dl_cluster *c, const struct dl_plan *p,
    struct dl_budget_cand *cd)
{
	unsigned char *on = xcalloc(c->nnodes + 1, 1);

	for (int g = 0; g < p->ngroups; g++)
		for (int j = 0; j < p->groups[g].nstages; j++)
			on[p->groups[g].stages[j].node] = 1;
	cd->used = xcalloc(c->nnodes + 1, sizeof(int));
	cd->nused = 0;
	cd->cost = 0;
	for (size_t i = 0; i < c->nnodes; i++)
		if (on[i]) {
			cd->used[cd->nused++] = (int)i;
			cd->cost += c->nodes[i].cost_per_hour;
		}
	free(on);
}

/* Does candidate i use the same nodes at the same T as an earlier one? */
static int
same_as_earlier(const struct dl_budget_cand *cd, int i)
{
	for (int j = 0; j < i; j++)
		if (cd[j].iteration_s == cd[i].iteration_s &&
		    cd[j].nused == cd[i].nused && memcmp(cd[j].used,
		    cd[i].used, (size_t)cd[i].nused * sizeof(int)) == 0)
			return 1;
	return 0;
}

/* Node order of a slot: peak effective FLOP/s per price, best first. */
struct rank {
	double v;
	int node;
};

static int
cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

static void
rank_nodes(const struct dl_costctx *x, int *order)
{
	const struct dl_cluster *c = x->c;
	struct rank *r = xcalloc(c->nnodes + 1, sizeof(*r));

	for (size_t i = 0; i < c->nnodes; i++) {
		const struct dl_node *nd = &c->nodes[i];

		r[i].node = (int)i;
		r[i].v = nd->cost_per_hour > 0 ? nd->gpus * x->speed[i] /
		    nd->cost_per_hour : HUGE_VAL;
	}
	qsort(r, c->nnodes, sizeof(*r), cmp_rank);
	for (size_t i = 0; i < c->nnodes; i++)
		order[i] = r[i].node;
	free(r);
}

/*
 * Every candidate of one slot: cands (n entries) and their evaluated
 * plans.  Returns the number of feasible candidates; 0 with e set to the
 * whole cluster's reason when none fits; -1 on a hard error.
 */
static int
slot_candidates(struct run *R, const struct dl_costctx *xf,
    struct dl_budget_cand *cands, struct dl_plan *plans, struct dl_err *e)
{
	size_t n = R->c->nnodes;
	int *order = xcalloc(n + 1, sizeof(int)), nc = 0, bad = 0;
	unsigned char *keep = xcalloc(n + 1, 1);

	rank_nodes(xf, order);
	for (size_t k = 1; k <= n; k++) {
		struct memo *me;
		struct dl_plan *p = &plans[nc];
		struct dl_err ee = { 0 };
		int rc;

		keep[order[k - 1]] = 1;
		if ((me = plan_subset(R, xf, keep, e)) == NULL) {
			bad = 1;
			break;
		}
		if (me->rc != DL_OK) {
			if (k == n && nc == 0)
				*e = me->err;
			continue;
		}
		plan_copy(p, &me->plan);
		memcpy(p->uhat, xf->uhat, n * sizeof(double));
		if ((rc = cost_eval(xf, p, &ee)) != DL_OK) {
			plan_free(p);
			if (rc == DL_EINFEAS)
				continue;
			*e = ee;
			bad = 1;
			break;
		}
		memset(&cands[nc], 0, sizeof(cands[nc]));
		cands[nc].prefix = (int)k;
		cands[nc].iteration_s = p->est.iteration_s;
		cand_nodes(R->c, p, &cands[nc]);
		if (same_as_earlier(cands, nc)) {
			cand_free(&cands[nc]);
			plan_free(p);
			continue;
		}
		nc++;
	}
	free(order);
	free(keep);
	if (!bad)
		return nc;
	for (int i = 0; i < nc; i++) {
		cand_free(&cands[i]);
		plan_free(&plans[i]);
	}
	return -1;
}

/*
 * The schedule.
 */

static int
check_prices(const struct dl_cluster *c, struct dl_err *e)
{
	for (size_t i = 0; i < c->nnodes; i++)
		if (c->nodes[i].cost_per_hour < 0)
			return dl_seterr(e, DL_EDATA, c->path_nodes,
			    c->nodes[i].line, 0, "node '%s' has no "
			    "cost_per_hour (--budget needs the price of every "
			    "node)", c->nodes[i].id);
	return DL_OK;
}

/* C + Qmax / N of budget.h, or -1 when a slot has nothing within C. */
static double
drift_bound(const struct dl_schedule *s)
{
	double D = 0, cmax = 0, delta = HUGE_VAL, C = s->budget;

	for (int t = 0; t < s->nslots; t++) {
		const struct dl_budget_slot *sl = &s->slots[t];
		double tmin = HUGE_VAL, tmax = 0, cmin = HUGE_VAL;

		for (int i = 0; i < sl->ncand; i++) {
			tmin = fmin(tmin, sl->cand[i].iteration_s);
			tmax = fmax(tmax, sl->cand[i].iteration_s);
			cmin = fmin(cmin, sl->cand[i].cost);
			cmax = fmax(cmax, sl->cand[i].cost);
		}
		if (cmin > C)
			return -1;
		D = fmax(D, tmax - tmin);
		for (int i = 0; i < sl->ncand; i++)
			if (sl->cand[i].cost > C)
				delta = fmin(delta, sl->cand[i].cost - cmin);
	}
	if (cmax <= C)
		return C;
	return C + (s->tradeoff * D / delta + (cmax - C)) / s->nslots;
}

/* Fail when the cheapest candidates of the slots average above C. */
static int
check_budget(const struct dl_schedule *s, const struct dl_cluster *c,
    struct dl_err *e)
{
	double sum = 0, first = 0;
	int arg = 0;

	for (int t = 0; t < s->nslots; t++) {
		const struct dl_budget_slot *sl = &s->slots[t];
		int j = 0;

		for (int i = 1; i < sl->ncand; i++)
			if (sl->cand[i].cost < sl->cand[j].cost)
				j = i;
		sum += sl->cand[j].cost;
		if (t == 0) {
			first = sl->cand[j].cost;
			arg = j;
		}
	}
	if (sum / s->nslots <= s->budget)
		return DL_OK;
	{
		const struct dl_budget_cand *cd = &s->slots[0].cand[arg];
		struct strbuf sb = STRBUF_INIT;
		char b1[DL_DBL_BUFSZ], b2[DL_DBL_BUFSZ], b3[DL_DBL_BUFSZ];

		for (int i = 0; i < cd->nused; i++)
			sb_addf(&sb, "%s'%s'", i ? ", " : "",
			    c->nodes[cd->used[i]].id);
		dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "budget %s per hour is "
		    "below the cheapest plans that fit: %s per hour on average "
		    "over %d slot%s (slot 1: %s per hour on %s)",
		    fmt_double(b1, s->budget), fmt_double(b2, sum / s->nslots),
		    s->nslots, s->nslots == 1 ? "" : "s", fmt_double(b3, first),
		    sb.buf);
		sb_free(&sb);
	}
	return DL_EINFEAS;
}

/*
 * The candidates of every slot t into s->slots[t] and their plans into
 * cp[t] (allocated here, one per candidate); a slot without any: the
 * search's error for the slot, as DL_EINFEAS.
 */
static int
slot_all_candidates(struct run *R, struct dl_router *router,
    const double *uhat, struct dl_schedule *s, struct dl_plan **cp,
    struct dl_err *e)
{
	const struct dl_cluster *c = R->c;
	size_t n = c->nnodes;
	int N = s->nslots, rc = DL_OK;

	for (int t = 0; t < N && rc == DL_OK; t++) {
		struct dl_budget_slot *sl = &s->slots[t];
		struct dl_costctx xf;
		int nc;

		if ((rc = cost_init(&xf, c, R->m, R->o, uhat + (size_t)t * n,
		    router, e)) != DL_OK)
			break;
		sl->cand = xcalloc(n, sizeof(*sl->cand));
		cp[t] = xcalloc(n, sizeof(struct dl_plan));
		nc = slot_candidates(R, &xf, sl->cand, cp[t], e);
		cost_free(&xf);
		if (nc < 0) {
			rc = e->code ? e->code : DL_ESYS;
			break;
		}
		sl->ncand = nc;
		if (nc == 0) {
			char msg[sizeof(e->msg)];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			rc = dl_seterr(e, DL_EINFEAS, e->file, e->line, e->col,
			    "slot %d: %s", t + 1, msg);
			break;
		}
		/* The unconstrained best: the fastest, then the cheapest. */
		sl->best_s = HUGE_VAL;
		for (int i = 0; i < nc; i++)
			if (sl->cand[i].iteration_s < sl->best_s ||
			    (sl->cand[i].iteration_s == sl->best_s &&
			    sl->cand[i].cost < sl->best_cost)) {
				sl->best_s = sl->cand[i].iteration_s;
				sl->best_cost = sl->cand[i].cost;
			}
		R->slots_done = t + 1;
		report(R, t + 1 == N);
	}
	return rc;
}

/*
 * The drift-plus-penalty choice, slot by slot from Q_1 = 0: the scores,
 * the queue, the averages and the bound in s, and a copy of the chosen
 * candidate's plan (of cp[t]) in plans[t].
 */
static void
choose_slots(struct dl_schedule *s, struct dl_plan *const *cp,
    const struct dl_opts *o, const struct budget_opts *bo,
    struct dl_plan *plans)
{
	int N = s->nslots;
	double Q = 0;

	s->tradeoff = bo->tradeoff > 0 ? bo->tradeoff :
	    bo->budget * bo->budget / s->slots[0].best_s;
	for (int t = 0; t < N; t++) {
		struct dl_budget_slot *sl = &s->slots[t];
		double *T = xcalloc((size_t)sl->ncand, sizeof(double));
		double *cost = xcalloc((size_t)sl->ncand, sizeof(double));
		const struct dl_plan *pc;

		for (int i = 0; i < sl->ncand; i++) {
			T[i] = sl->cand[i].iteration_s;
			cost[i] = sl->cand[i].cost;
			sl->cand[i].score = s->tradeoff * T[i] + Q * cost[i];
		}
		sl->chosen = budget_choose(sl->ncand, T, cost, s->tradeoff, Q);
		sl->queue = Q;
		Q = budget_queue_next(Q, cost[sl->chosen], s->budget);
		sl->queue_after = Q;
		pc = &cp[t][sl->chosen];
		plan_copy(&plans[t], pc);
		s->avg_cost += cost[sl->chosen] / N;
		s->avg_throughput += pc->est.throughput / N;
		s->best_throughput += (double)o->global_batch / sl->best_s / N;
		free(T);
		free(cost);
	}
	s->bound = drift_bound(s);
}

int
budget_run(const struct dl_cluster *c, const struct dl_model *m,
    const struct dl_opts *o, struct dl_router *router,
    const struct budget_opts *bo, struct dl_schedule *s,
    struct dl_plan *plans, struct budget_stats *st, struct dl_err *e)
{
	size_t n = c->nnodes;
	int N = bo->nslots, rc;
	double *uhat = NULL;
	struct dl_plan **cp = xcalloc((size_t)N, sizeof(*cp));
	struct run R;

	memset(s, 0, sizeof(*s));
	memset(st, 0, sizeof(*st));
	memset(&R, 0, sizeof(R));
	/* Empty until a slot's choice is copied in (plan_free() takes it). */
	memset(plans, 0, (size_t)N * sizeof(*plans));
	if ((rc = check_prices(c, e)) != DL_OK)
		goto out;
	R.c = c;
	R.m = m;
	R.o = o;
	R.so = bo->so;
	R.bo = bo;
	if (R.so.exact < 0)
		R.so.exact = cluster_gpus(c) <= 6;
	R.st = st;
	s->budget = bo->budget;
	s->slot_steps = bo->slot_steps;
	s->nslots = N;
	s->slots = xcalloc((size_t)N, sizeof(*s->slots));
	uhat = xcalloc((size_t)N * n, sizeof(double));
	if ((rc = budget_slot_loads(c, N, bo->slot_steps, o->forecast, uhat,
	    e)) != DL_OK)
		goto out;

	/* Every slot's candidates; they do not depend on the queue. */
	rc = slot_all_candidates(&R, router, uhat, s, cp, e);
	if (rc == DL_OK)
		rc = check_budget(s, c, e);
	if (rc != DL_OK)
		goto out;

	choose_slots(s, cp, o, bo, plans);
	/* The baselines of every slot's plan, at the slot's speeds. */
	for (int t = 0; t < N && rc == DL_OK; t++) {
		struct dl_costctx xf;

		if ((rc = cost_init(&xf, c, m, o, uhat + (size_t)t * n, router,
		    e)) != DL_OK)
			break;
		rc = cost_baselines(&xf, &plans[t], e);
		cost_free(&xf);
	}
out:
	for (int t = 0; t < N; t++) {
		for (int i = 0; cp[t] && i < s->slots[t].ncand; i++)
			plan_free(&cp[t][i]);
		free(cp[t]);
	}
	free(cp);
	for (size_t i = 0; i < R.nmemo; i++) {
		free(R.memo[i].keep);
		free(R.memo[i].u);
		plan_free(&R.memo[i].plan);
	}
	free(R.memo);
	free(uhat);
	if (rc != DL_OK) {
		plan_schedule_clear(s);
		for (int t = 0; t < N; t++) {
			plan_free(&plans[t]);
			plan_init(&plans[t]);
		}
	}
	return rc;
}
