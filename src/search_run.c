/*
 * search_run.c - "tentative searching + linear solving" (dlplan(1)
 * ALGORITHMS, Solver): search_plan(), the public entry of search.h, which
 * runs the modes and explains a search that found nothing.  search_int.h
 * says which file does what.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lp.h"
#include "search_int.h"

int
search_default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > SEARCH_JOBS_MAX ? SEARCH_JOBS_MAX : (int)n;
}

/* The fallback for the error message: every unit in one pipeline. */
static void
explain_infeasible(struct ctx *C)
{
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	size_t n = search_make_units(x, x->o->max_tp < DL_MAX_TP ? x->o->max_tp :
	    DL_MAX_TP, units);
	const struct unit **ord = xcalloc(n, sizeof(*ord));
	int S = (int)n < C->L ? (int)n : C->L, off = 0;
	int *last = xcalloc((size_t)S, sizeof(int));
	double per = model_params(x->m) / S, acc = 0;
	struct shape sh;
	long m = C->total;
	int *lp = last;

	for (size_t i = 0; i < n; i++)
		ord[i] = &units[i];
	qsort(ord, n, sizeof(*ord), search_cmp_unit);
	/* Cut where the running parameter count passes each share. */
	for (int l = 0, j = 0; l < C->L && j < S - 1; l++) {
		acc += x->m->layers[l].params_m * 1e6;
		if (acc >= per * (j + 1) || C->L - 1 - l == S - 1 - j)
			last[j++] = l;
	}
	last[S - 1] = C->L - 1;
	for (int j = 1; j < S - 1; j++)
		if (last[j] <= last[j - 1])
			last[j] = last[j - 1] + 1;
	sh.G = 1;
	sh.S = &S;
	sh.off = &off;
	sh.u = ord;
	search_build_plan(C, &C->work, &sh, &lp, &m);
	search_consider(C);
	free(units);
	free(ord);
	free(last);
}

/* Why the restricted search of a framework found no plan. */
static int
runtime_none(const struct ctx *C, struct dl_err *e)
{
	const char *rt = plan_runtime_names[C->so->runtime];

	if (C->have_infeas)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan that %s "
		    "can run fits (every group the same shape, even "
		    "micro-batches, the layer split %s expresses); the best "
		    "one fails: %.1200s", rt, rt, C->infeas.msg);
	return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan that %s can "
	    "run fits the limits given (every group the same shape, even "
	    "micro-batches per replica, the layer split %s expresses, "
	    "memory)", rt, rt);
}

/*
 * Automatic exhaustive search: at most 6 GPUs, and at most this many
 * boundary choices for one pipeline (C(L-1, S-1) for S up to the GPUs),
 * which keeps it to seconds; --exact yes lifts the second limit.
 */
#define EXACT_CUTS_MAX 2e5

static double
cut_space(const struct dl_costctx *x, long gpus)
{
	double L = (double)x->m->nlayers, c = 1, most = 1;

	/* c = C(L-1, S-1) for S = 1 .. min(gpus, L). */
	for (long S = 2; S <= gpus && S <= (long)L; S++) {
		c = c * (L - (double)S + 1) / (double)(S - 1);
		most = fmax(most, c);
	}
	return most;
}

/*
 * The last steps of the search from plan p: the two data-parallel
 * baselines over its GPUs (plans of the same space, which the structured
 * mode may miss), the local moves of search_improve(), and the stage
 * boundaries moved by the exact makespan (search_refine_cuts()).
 */
static void
polish(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *p, struct search_stats *st)
{
	for (int kind = COST_EVEN; kind <= COST_PROPORTIONAL; kind++) {
		struct dl_plan b;
		struct dl_err be = { 0 };

		if (cost_baseline(x, p, kind, &b, &be) == DL_OK &&
		    b.est.iteration_s < p->est.iteration_s &&
		    (so->strategy == STRAT_AUTO || so->strategy == STRAT_DP)) {
			plan_free(p);
			plan_copy(p, &b);
			st->evaluated++;
		}
		plan_free(&b);
	}
	search_improve(x, so, p, st);
	st->evaluated += search_refine_cuts(x, p);
}

/*
 * Polish best, then each of prev[0] .. prev[n - 1], the best of earlier
 * passes of the structured mode (a later pass won): the local moves may
 * lead an earlier pass's best further, so each goes on, and a later line
 * is kept only when it ends strictly faster.
 */
static void
polish_lines(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct dl_plan *prev, int n, struct search_stats *st)
{
	polish(x, so, best, st);
	for (int i = n - 1; i >= 0; i--) {
		polish(x, so, &prev[i], st);
		if (prev[i].est.iteration_s <= best->est.iteration_s) {
			plan_free(best);
			plan_copy(best, &prev[i]);
		}
	}
}

static int
search_mode(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, struct dl_err *e)
{
	struct dl_costctx xl;
	struct dl_plan prev[SEARCH_PASSES - 1];
	struct ctx C;
	enum dl_bound bmethod = BOUND_COMBINATORIAL;
	double t0 = mono_now();
	long gpus = cluster_gpus(x->c);
	int exact = so->exact < 0 ? gpus <= 6 && cut_space(x, gpus) <=
	    EXACT_CUTS_MAX : so->exact, none, nprev = 0, mixed = 0;

	memset(st, 0, sizeof(*st));
	plan_init(best);
	/* The same context, with a cache of ring orders of its own. */
	search_ctx_open(&C, &xl, x, so, st, best);
	C.bound = exact ? 0 : search_bound_method(x, so, &bmethod);
	if (exact && gpus > 12) {
		search_ctx_free(&C);
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "exhaustive search "
		    "is limited to 12 GPUs (this cluster has %ld)", gpus);
	}
	if (so->runtime != RUNTIME_DLPLAN) {
		/* A framework's space: its own search, never the others. */
		exact = 0;
		search_runtime(&C);
		if (!C.have_best && !C.failed) {
			search_ctx_free(&C);
			return runtime_none(&C, e);
		}
	} else
		nprev = search_structured(&C, prev, &mixed);
	if (exact && !C.failed)
		search_exhaustive(&C);
	st->exact = exact && !C.failed;
	none = !C.have_best && !C.failed;
	if (none)
		explain_infeasible(&C);
	search_ctx_free(&C);
	if (none) {
		/* No plan, so no pass beat one: prev[] is empty. */
		if (C.have_best) {
			/* Only the strategy or the limits kept it out. */
			plan_free(best);
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan "
			    "with the chosen strategy and limits fits in "
			    "memory (a single pipeline over all GPUs would; "
			    "try --strategy auto)");
		}
		if (C.have_infeas) {
			char why[sizeof(e->msg)];

			snprintf(why, sizeof(why), "%s", C.infeas.msg);
			*e = C.infeas;
			snprintf(e->msg, sizeof(e->msg), "no plan fits in GPU "
			    "memory; even one pipeline over every GPU fails: "
			    "%.1300s; a smaller --micro-batch, a larger "
			    "--max-tp, less --mem-reserve or more GPUs may fit",
			    why);
			return e->code;
		}
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no plan fits the "
		    "strategy and limits given");
	}
	if (C.failed) {
		for (int i = 0; i < nprev; i++)
			plan_free(&prev[i]);
		*e = C.err;
		return e->code ? e->code : DL_ESYS;
	}
	if (!st->exact && so->runtime == RUNTIME_DLPLAN && mixed) {
		struct dl_plan mix;

		/*
		 * The mixed pass won: first the plan the passes before it
		 * lead to, then the mixed line, kept only when it ends
		 * strictly faster.  On large clusters, where the improvement
		 * phase costs most of the time, the mixed line goes on only
		 * when it already beats that plan.
		 */
		plan_copy(&mix, best);
		plan_free(best);
		plan_copy(best, &prev[nprev - 1]);
		polish_lines(x, so, best, prev, nprev - 1, st);
		if (gpus <= MIXED_FULL_GPUS ||
		    mix.est.iteration_s < best->est.iteration_s)
			polish(x, so, &mix, st);
		if (mix.est.iteration_s < best->est.iteration_s) {
			plan_free(best);
			plan_copy(best, &mix);
		}
		plan_free(&mix);
	} else if (!st->exact && so->runtime == RUNTIME_DLPLAN)
		polish_lines(x, so, best, prev, nprev, st);
	for (int i = 0; i < nprev; i++)
		plan_free(&prev[i]);
	st->time_s = mono_now() - t0;
	best->status = st->exact ? PLAN_OPTIMAL : PLAN_FEASIBLE;
	/* The bound holds for every plan, so for the best: never above T. */
	best->bound_s = st->exact ? best->est.iteration_s :
	    fmin(best->est.iteration_s, fmax(best->est.lower_bound_s,
	    C.bound));
	best->bound_method = st->exact ? BOUND_EXHAUSTIVE :
	    C.bound > best->est.lower_bound_s ? bmethod : BOUND_T_LB;
	best->gap = best->est.iteration_s > 0 ? (best->est.iteration_s -
	    best->bound_s) / best->est.iteration_s : 0;
	best->solve_s = st->time_s;
	st->own_lb_s = cost_own_bound(x, best);
	return DL_OK;
}

/* Whether any stage of p recomputes a block. */
static int
any_rc(const struct dl_plan *p)
{
	for (int g = 0; g < p->ngroups; g++)
		for (int s = 0; s < p->groups[g].nstages; s++)
			if (p->groups[g].stages[s].recompute > 0)
				return 1;
	return 0;
}

/*
 * Decide the recomputation of every stage of plan p found in context x
 * (cost_decide_rc(): in the full mode the fewest blocks that fit, one
 * number for every stage where the framework takes one, every block
 * where it recomputes all or nothing) and price it
 * again; the plan records the mode.
 */
static void
settle_rc(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *p)
{
	struct dl_err e = { 0 };

	cost_decide_rc(x, p, so->runtime == RUNTIME_DLPLAN ? COST_RC_STAGE :
	    so->runtime == RUNTIME_MEGATRON ? COST_RC_UNIFORM :
	    COST_RC_WHOLE);
	p->opts.recompute = x->rc_fold ? RC_FULL : x->o->recompute ==
	    RC_AUTO ? RC_NONE : x->o->recompute;
	/* Full recomputation that settled on no block at all is none. */
	if (x->rc_fold && x->o->recompute == RC_AUTO && !any_rc(p))
		p->opts.recompute = RC_NONE;
	if (x->rc_fold) {
		double t = p->est.iteration_s;

		cost_eval(x, p, &e);
		/* Fewer blocks recomputed only take less time. */
		if (p->est.iteration_s > t)
			p->est.iteration_s = t;
	}
}

/* Add the counts of a second search, from, to st. */
static void
stats_add(struct search_stats *st, const struct search_stats *from)
{
	st->structures += from->structures;
	st->evaluated += from->evaluated;
	st->pruned += from->pruned;
	st->milps += from->milps;
}

/*
 * The answer becomes a copy of plan from, found by a second search: best
 * (a failed search's initialised plan too) is freed first, the copy is
 * feasible, not proven, and bounded by the larger of bound (found by
 * method bm, 0 for none) and its own T_lb.  bound is read before best is
 * freed, so it may be best's own.
 */
static void
adopt(const struct dl_costctx *x, struct dl_plan *best,
    const struct dl_plan *from, double bound, enum dl_bound bm,
    struct search_stats *st)
{
	double T;

	plan_free(best);
	plan_copy(best, from);
	T = best->est.iteration_s;
	best->status = PLAN_FEASIBLE;
	best->bound_s = fmin(T, fmax(bound, best->est.lower_bound_s));
	best->bound_method = bound > best->est.lower_bound_s ? bm :
	    BOUND_T_LB;
	best->gap = T > 0 ? (T - best->bound_s) / T : 0;
	st->exact = 0;
	st->own_lb_s = cost_own_bound(x, best);
}

/* One search mode and its settling, for a thread of its own. */
struct mode_job {
	const struct dl_costctx *x;
	struct search_opts so;
	struct dl_plan *p;
	struct search_stats *st;
	struct dl_err *e;
	int rc;
};

static void *
mode_run(void *arg)
{
	struct mode_job *j = arg;

	j->rc = search_mode(j->x, &j->so, j->p, j->st, j->e);
	if (j->rc == DL_OK)
		settle_rc(j->x, &j->so, j->p);
	return NULL;
}

/* mode_run() on a thread of its own: GLPK's environment is per thread. */
static void *
mode_thread(void *arg)
{
	mode_run(arg);
	lp_thread_exit();
	return NULL;
}

/*
 * The search of dlplan(1) ALGORITHMS, Memory savers: --recompute auto
 * searches twice, without recomputation and with every block recomputed
 * (rc_fold), settles the second plan's stages to the fewest blocks that
 * fit, and keeps the faster, the plan without recomputation on a tie.
 * Either search may find nothing; the answer fails only when both do.
 * The two searches share nothing but their inputs (the second has a
 * clone of the router and no progress callback), so the second runs on
 * a thread of its own beside the first: the same plans, in about the
 * wall time of the slower one where a core is free.
 */
static int
search_modes(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, struct dl_err *e)
{
	struct dl_costctx xf;
	struct dl_opts of;
	struct dl_plan pf;
	struct search_stats sf;
	struct dl_err ef = { 0 };
	struct mode_job jf;
	pthread_t tid;
	int rc, rcf, threaded;
	double t0 = mono_now();

	if (x->o->recompute != RC_AUTO || model_blocks(x->m, 0,
	    (int)x->m->nlayers - 1) == 0) {
		rc = search_mode(x, so, best, st, e);
		if (rc == DL_OK)
			settle_rc(x, so, best);
		return rc;
	}
	of = *x->o;
	of.recompute = RC_FULL;
	if ((rc = cost_init(&xf, x->c, x->m, &of, x->uhat, x->router, e)) !=
	    DL_OK)
		return rc;
	xf.sites = x->sites;
	if (x->router != NULL && router_clone(&xf.router, x->router) !=
	    DL_OK)
		xf.router = NULL;
	memset(&pf, 0, sizeof(pf));
	jf.x = &xf;
	jf.so = *so;
	jf.so.progress = NULL;
	jf.so.progress_arg = NULL;
	jf.p = &pf;
	jf.st = &sf;
	jf.e = &ef;
	threaded = (x->router == NULL || xf.router != NULL) &&
	    pthread_create(&tid, NULL, mode_thread, &jf) == 0;
	rc = search_mode(x, so, best, st, e);
	if (rc == DL_OK)
		settle_rc(x, so, best);
	if (threaded)
		pthread_join(tid, NULL);
	else {
		if (xf.router == NULL)
			xf.router = x->router;
		mode_run(&jf);
	}
	rcf = jf.rc;
	if (rc != DL_OK && rc != DL_EINFEAS)
		goto out;
	if (rcf == DL_OK && (rc != DL_OK || pf.est.iteration_s <
	    best->est.iteration_s)) {
		/*
		 * The search's bound priced every block recomputed; the
		 * settled plan recomputes fewer, so only T_lb without
		 * recomputation bounds it.
		 */
		pf.est.lower_bound_s = cost_lower_bound(x);
		pf.est.efficiency = pf.est.lower_bound_s /
		    pf.est.iteration_s;
		adopt(x, best, &pf, 0, BOUND_T_LB, st);
		stats_add(st, &sf);
		rc = DL_OK;
	} else if (rcf == DL_OK) {
		/* A plan without recomputation may still lose to one that
		 * recomputes some blocks: the proof is for that mode only. */
		if (best->status == PLAN_OPTIMAL)
			best->status = PLAN_FEASIBLE;
		st->exact = 0;
	}
	st->time_s = mono_now() - t0;
	if (rc == DL_OK)
		best->solve_s = st->time_s;
out:
	plan_free(&pf);
	if (xf.router != x->router)
		router_free(xf.router);
	cost_free(&xf);
	return rc;
}

/*
 * With the sync overlapped (dlplan(1) ALGORITHMS, Overlap), the search of
 * --runtime dlplan runs again without overlap and prices that plan with
 * it: T under overlap is never above T without, so the plan the search
 * finds without overlap is a candidate, and the local moves of the
 * improvement phase, which follow the plan they start from, may lead the
 * two searches apart (a line that starts faster with overlap can end
 * slower).  The faster plan is kept, the overlap search's on a tie; the
 * overlap search's bound holds for both.  A framework's search scores
 * each of its structures with the full model and moves nothing after,
 * so it needs no second run.
 */
int
search_plan(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, struct dl_err *e)
{
	struct dl_costctx xn;
	struct dl_opts on;
	struct search_opts sno;
	struct dl_plan pn;
	struct search_stats sn = { 0 };
	struct dl_err en = { 0 };
	double t0 = mono_now();
	int rc, rcn;

	memset(&pn, 0, sizeof(pn));
	rc = search_modes(x, so, best, st, e);
	if (x->ovl == OVL_NONE || so->runtime != RUNTIME_DLPLAN ||
	    (rc != DL_OK && rc != DL_EINFEAS))
		return rc;
	on = *x->o;
	on.overlap = OVL_NONE;
	if (cost_init(&xn, x->c, x->m, &on, x->uhat, x->router, &en) !=
	    DL_OK)
		return rc;
	xn.sites = x->sites;
	sno = *so;
	sno.progress = NULL;
	sno.progress_arg = NULL;
	rcn = search_modes(&xn, &sno, &pn, &sn, &en);
	if (rcn == DL_OK) {
		/* The same plan, priced and recorded with overlap. */
		pn.opts.overlap = x->o->overlap;
		rcn = cost_eval(x, &pn, &en);
	}
	if (rcn == DL_OK && (rc != DL_OK || pn.est.iteration_s <
	    best->est.iteration_s)) {
		adopt(x, best, &pn, rc == DL_OK ? best->bound_s : 0,
		    rc == DL_OK ? best->bound_method : BOUND_T_LB, st);
		rc = DL_OK;
	}
	/* A failed search leaves an initialised plan: free it too. */
	plan_free(&pn);
	stats_add(st, &sn);
	st->time_s = mono_now() - t0;
	if (rc == DL_OK)
		best->solve_s = st->time_s;
	cost_free(&xn);
	return rc;
}
