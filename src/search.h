/*
 * search.h - the plan search of dlplan(1) ALGORITHMS, Solver: tentative
 * searching over structures plus linear solving of the partition and the data
 * split.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two modes.  The exhaustive mode enumerates the whole plan space of
 * src/DESIGN-NOTES (every split of each node's GPUs into TP
 * units, every subset of units, every grouping into ordered pipelines and
 * every order of the groups, every micro-batch split and every layer
 * boundary), prunes with exact compute-only lower bounds, and scores the
 * survivors with the full cost model, so its answer is the optimum of the cost
 * model; it is used when the cluster has at most 6 GPUs and a pipeline at
 * most 2e5 ways to place its stage boundaries (search_run.c, EXACT_CUTS_MAX), or
 * when asked (--exact yes, up to 12 GPUs).  The structured mode tries, per
 * TP degree and stage count, pipelines of units kept inside a node or site,
 * partitions each distinct pipeline with the exact layer-partition DP (and
 * the same model as a MILP only where the DP's scan of bottlenecks stops
 * short), splits the micro-batches with the exact data-split search,
 * alternates the two until the split stops changing, and scores each result
 * with the cost model.  Both are deterministic.
 */
#ifndef DL_SEARCH_H
#define DL_SEARCH_H

#include "cost.h"
#include "plan.h"

/*
 * How far a structured search is, for a progress line: jobs (a TP degree,
 * stage count and set of units each) done of the total (a bound may cut
 * the rest: final is then set), the best
 * iteration time so far (HUGE_VAL before the first plan) and the best
 * bound known (T_lb, or search_bound() when larger).
 */
struct search_progress {
	long done, total;
	int final;		/* the search is over (the rest were cut) */
	/*
	 * The exhaustive mode, which cannot count its work ahead: done is
	 * the structures scored so far and total 0.
	 */
	int exhaustive;
	double best_t;
	double lower_bound;
};

struct search_opts {
	enum dl_strategy strategy;
	int exact;		/* -1 auto (<= 6 GPUs, <= 2e5 cuts), 0 never,
				   1 always (<= 12 GPUs) */
	const char *dump_dir;	/* write the final plan's MILPs here */
	double time_limit;	/* seconds per MILP */
	int jobs;		/* threads for the structured mode (0, 1: one) */
	enum dl_runtime runtime; /* restrict to that framework */
	/*
	 * Optional (NULL: none): called after every job of the structured
	 * mode, from whichever thread ran it but never two at once, and at
	 * most twice a second in the exhaustive mode, with a last call when
	 * it ends.  It only looks: what the search returns does not depend
	 * on it.
	 */
	void (*progress)(void *arg, const struct search_progress *pg);
	void *progress_arg;
};

/* The most threads plan --jobs takes. */
#define SEARCH_JOBS_MAX 64
/* The default number of threads: the online CPUs, 1 .. SEARCH_JOBS_MAX. */
int search_default_jobs(void);

struct search_stats {
	long structures;	/* structures tried */
	long evaluated;		/* plans scored with the cost model */
	long pruned;		/* cut by a lower bound */
	long milps;		/* MILPs solved */
	int exact;		/* the exhaustive mode ran to the end */
	double time_s;
	/*
	 * T_lb of the GPUs the plan found uses (cost_own_bound()): no plan
	 * on those GPUs alone is faster.  0 where not computed.
	 */
	double own_lb_s;
};

/*
 * Find the best plan.  best is initialised here (plan_init) and filled:
 * groups, stages, GPUs, micro-batches, the cost model's estimate, rings,
 * flows, status ("optimal" when proven, else "feasible"), gap and bound.
 * No plan fits in memory: DL_EINFEAS, e naming the GPU and bytes over at
 * the largest pipeline.
 */
int search_plan(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, struct dl_err *e);

/*
 * Why best leaves nodes out: fills best->left_out with the nodes it does
 * not use and best->left_out_t_s with T of the plan that adds them as
 * more pipelines (the units of each site's left-out nodes, TP as wide as
 * the node allows, chained until a pipeline holds the model), the layers
 * partitioned and the micro-batches split again over all groups as the
 * structured mode does; 0 when they cannot form a pipeline that fits.
 * Deterministic; nothing is left out when every node is used.
 */
void search_left_out(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best);

/*
 * Write the programs behind plan p to so->dump_dir in CPLEX LP format:
 * partition-gN.lp (the layer partition of group N, for its micro-batches;
 * groups of one stage have none) and split.lp (the data split over the
 * plan's groups with their stages fixed), so that glpsol or cbc can solve
 * them again, and objectives.txt: "FILE STATUS OBJECTIVE" per program as
 * GLPK solved it here.
 */
int search_dump(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_plan *p, struct dl_err *e);

#endif
