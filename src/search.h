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
 * most 2e5 ways to place its stage boundaries (search.c, EXACT_CUTS_MAX), or
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

/*
 * What the frameworks of plan --runtime accept (search_runtime.c), read
 * from their sources (the versions dlplan(1) names; file:line there).
 *
 * search_runtime_model(): DL_EINFEAS when runtime cannot build model m:
 * Megatron-LM and torchtitan build the model from its sizes, so m must
 * be a transformer with a "dlplan model" line (model_is_transformer()).
 *
 * search_runtime_fits(): whether runtime runs TP degree k with S stages
 * on m (NULL: the model is not known); when not, and why is not NULL, the reason (a phrase) in why[n].
 * Megatron-LM: num_attention_heads % TP == 0 and num_query_groups a
 * multiple or a divisor of TP (TransformerConfig.__post_init__);
 * torchtitan: TP divides n_heads and n_kv_heads, and a model whose head
 * shares the embedding's weights has no pipeline (Decoder's
 * update_from_config); DeepSpeed: TP > 1 only with one stage (AutoTP
 * has no pipeline, a PipelineModule no TP; see emit_deepspeed.c).
 *
 * search_runtime_gpu_refused(): whether runtime cannot use node's GPUs:
 * torchtitan has no fp16, so no GPU without bf16 (cluster_gpu_fp16()).
 */
int search_runtime_model(const struct dl_model *m, int runtime,
    struct dl_err *e);
int search_runtime_gpu_refused(const struct dl_cluster *c, int runtime,
    int node);
int search_runtime_fits(const struct dl_model *m, int runtime, int k, int S,
    char *why, size_t n);
/*
 * The memory savers of runtime (search_runtime.c names each framework's
 * with file:line).  search_runtime_saver_refused(): why runtime has no
 * saver that o asks for (a phrase), or NULL.  search_runtime_saver_fits():
 * whether runtime runs o's savers on S stages with m micro-batches per
 * replica and G replicas, rc whether blocks are recomputed; when not,
 * and why is not NULL, the reason in why[n].
 */
const char *search_runtime_saver_refused(int runtime,
    const struct dl_opts *o);
int search_runtime_saver_fits(int runtime, const struct dl_opts *o, int S,
    long m, int G, int rc, char *why, size_t n);

/*
 * How Megatron-LM builds a split of S stages holding blocks[j]
 * transformer layers each (get_num_layers_to_build()): no flags when the
 * stages are even; else --account-for-embedding-in-pipeline-split and/or
 * --account-for-loss-in-pipeline-split when the embedding and the loss
 * counted as one layer each make it even; else
 * --decoder-first-pipeline-num-layers (first) and/or
 * --decoder-last-pipeline-num-layers (last), each at least 1, the stages
 * between them even and not empty.  Returns 0 when none of these builds
 * blocks[] exactly.
 */
struct mt_split {
	int first, last;	/* 0: the flag is not given */
	int embed, loss;	/* the account-for flags */
};
int search_megatron_split(const int *blocks, int S, struct mt_split *ms);

#endif
