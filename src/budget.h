/*
 * budget.h - the long-term cost schedule of dlplan(1) ALGORITHMS, Cost
 * schedule (Ling et al.'s
 * time-averaged cost constraint, solved slot by slot with Lyapunov
 * drift-plus-penalty).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The schedule.  The job runs for N slots of K load-history steps each
 * ("plan --budget C --slots N --slot-steps K --tradeoff V").  Slot t
 * (1-based) sees the mean of the GMC load forecast over steps
 * (t-1)K+1 .. tK of every node (budget_slot_loads()); that gives the
 * node speeds of the cost model for the slot.  (Link congestion is not
 * forecast per slot: the router's start regime is the plan's --horizon
 * forecast in every slot, since route.h takes a mean from step 1 only.)
 * Its candidates are node subsets:
 * rank the nodes by peak effective FLOP/s per unit of price,
 * gpus * s_n / cost_per_hour (s_n the slot's speed of one GPU; a free node
 * ranks first; ties in nodes.csv order), and take every prefix of that
 * ranking, 1..n nodes; the last prefix is the whole cluster, whose plan
 * is the one "dlplan plan" would make for the slot.  Every candidate is
 * planned by search_plan() on the sub-cluster of its nodes and then
 * priced again by cost_eval() on the whole cluster, so that its numbers
 * are the ones "eval" gives for the slot's plan file.  A prefix whose plan
 * uses the same nodes at the same T as a shorter one is not listed again,
 * and one that fits in no plan is left out.  The slot's unconstrained best
 * is its fastest candidate (then the cheapest): usually the whole
 * cluster's plan, but the structured search is a heuristic and a subset
 * is sometimes faster.  The search mode (--exact auto) is chosen by the
 * whole cluster's GPUs for every candidate, and a subset searched at the
 * same speeds in an earlier slot is reused.
 *
 * Cost.  cost_t is the price per hour (the unit of cost_per_hour) of the
 * nodes slot t's plan uses: the sum of their cost_per_hour.  The nodes a
 * candidate's search leaves idle are not rented and not counted.  Every
 * slot lasts the same wall time (K history steps), so the time average of
 * cost_t over the slots is the average spending rate, and money spent over
 * the job is that average times its duration; the budget C is such a
 * rate.  This is Ling et al.'s time-averaged constraint
 * lim (1/N) sum_t cost_t <= C with fixed-length slots.
 *
 * Choice (drift-plus-penalty).  With the virtual queue Q_1 = 0, slot t
 * takes the candidate i minimising
 *	V * T_i + Q_t * cost_i
 * (T_i its iteration time in seconds; ties to the lower cost, then to the
 * shorter prefix) and then Q_{t+1} = max(Q_t + cost_t - C, 0).  V is in
 * (price per hour)^2 per second; by default V = C^2 / T_ref with T_ref the
 * unconstrained best iteration time of slot 1, so that at Q = C a 1 %
 * longer iteration weighs as much as 1 % of the budget.
 *
 * Bound.  Let D = max over slots of (max_i T_i - min_i T_i) over that
 * slot's candidates, cmax the highest candidate cost, and suppose every
 * slot has a candidate that costs at most C (cmin_t <= C).  Let
 * delta = min over slots and over candidates with cost_i > C of
 * cost_i - cmin_t.  If Q_t > V D / delta, any candidate i over budget has
 * Q_t (cost_i - cmin_t) > V D >= V (T_j - T_i) against the cheapest
 * candidate j, so the choice costs at most C and Q_{t+1} <= Q_t;
 * otherwise Q_{t+1} <= Q_t + cmax - C.  By induction from Q_1 = 0,
 *	Q_t <= Qmax = V D / delta + max(cmax - C, 0)	for every t,
 * and since Q_{N+1} >= sum_t (cost_t - C),
 *	(1/N) sum_t cost_t <= C + Qmax / N.
 * This is the deterministic form of the usual bound (with the drift
 * constant B replaced by the largest one-slot overshoot); when no
 * candidate costs more than C, Qmax = 0.  When some slot has no candidate
 * within C the bound does not apply and is reported as absent; when the
 * cheapest candidates of the slots cost more than C on average no
 * schedule meets the budget and budget_run() fails with DL_EINFEAS.
 */
#ifndef DL_BUDGET_H
#define DL_BUDGET_H

#include "cluster.h"
#include "model.h"
#include "plan.h"
#include "route.h"
#include "search.h"

/*
 * uhat[t * c->nnodes + i], t = 0..nslots-1: the mean of node i's GMC
 * forecast over steps t K + 1 .. (t + 1) K (the forecast's defaults),
 * clamped to [0, FORECAST_LOAD_MAX], with forecast.h's rule for short
 * histories (none: 0; 1 to 3 points: the last value).  For one slot with
 * K = h it equals forecast_node_loads() with horizon h.
 */
int budget_slot_loads(const struct dl_cluster *c, int nslots, int slot_steps,
    int method, double *uhat, struct dl_err *e);

/* The drift-plus-penalty choice among n candidates (see above), and the
 * queue update max(Q + cost - budget, 0). */
int budget_choose(int n, const double *T, const double *cost, double V,
    double Q);
double budget_queue_next(double Q, double cost, double budget);

/* How far budget_run() is, for a progress line. */
struct budget_progress {
	int slots_done, nslots;
	long searches, reused;	/* as in struct budget_stats */
	int final;		/* every slot's candidates are known */
};

struct budget_opts {
	double budget;		/* C > 0 */
	int nslots;		/* N >= 1 */
	int slot_steps;		/* K >= 1 */
	double tradeoff;	/* V; <= 0 for the default */
	struct search_opts so;	/* exact -1: by the whole cluster's GPUs */
	/*
	 * Optional (NULL: none): called after every candidate search and
	 * every slot, and once when all slots are done.  It only looks.
	 */
	void (*progress)(void *arg, const struct budget_progress *pg);
	void *progress_arg;
};

/* Work done, over every candidate search. */
struct budget_stats {
	long searches;		/* search_plan() calls */
	long reused;		/* candidates with the same nodes and speeds
				   as an earlier slot's: not searched again */
	long structures, evaluated, milps;
	int exact;		/* the exhaustive search was used */
	double time_s;
};

/*
 * Plan the schedule.  Every node of c must have a cost_per_hour (else
 * DL_EDATA naming nodes.csv and the node's line).  router is the whole
 * cluster's (the candidates' sub-clusters get their own).  plans[t]
 * (nslots entries, emptied here; release each with plan_free(), also
 * after a failure) receives slot t's chosen plan for c:
 * groups, the slot's uhat, the estimate of cost_eval() and the search
 * status; s receives the schedule (struct dl_schedule of plan.h; release
 * it with plan_schedule_clear()).
 * Slots without any plan that fits, or a budget below the cheapest
 * candidates: DL_EINFEAS.
 */
int budget_run(const struct dl_cluster *c, const struct dl_model *m,
    const struct dl_opts *o, struct dl_router *router,
    const struct budget_opts *bo, struct dl_schedule *s,
    struct dl_plan *plans, struct budget_stats *st, struct dl_err *e);

#endif
