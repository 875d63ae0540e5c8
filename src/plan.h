/*
 * plan.h - a training plan: groups of pipeline stages, their units and
 * GPUs, the data split, sync rings, routed flows and the cost estimate.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * the plan space of src/DESIGN-NOTES and plan.json of dlplan-formats(5).  A
 * plan owns all its arrays; plan_free() releases them.  Node indices refer to
 * the cluster the plan was made for (nodes.csv order); a plan read from JSON
 * is resolved against a loaded cluster by node id.
 */
#ifndef DL_PLAN_H
#define DL_PLAN_H

#include <stddef.h>

#include "cluster.h"
#include "model.h"
#include "util.h"

#define DL_MAX_TP 8

/*
 * The training framework a plan is made for (plan --runtime): dlplan runs
 * any plan of the plan space (src/DESIGN-NOTES); the others only plans whose
 * groups share one shape (search_runtime.c).  Names in this order, for
 * opt_choice.
 */
enum dl_runtime { RUNTIME_DLPLAN, RUNTIME_MEGATRON, RUNTIME_DEEPSPEED,
	RUNTIME_TORCHTITAN, DL_NRUNTIMES };
#define PLAN_RUNTIMES "dlplan|megatron|deepspeed|torchtitan"
extern const char *const plan_runtime_names[DL_NRUNTIMES];

/*
 * The plan space a search may return (plan --strategy): any plan, pure
 * data parallelism (one stage per group), one pipeline (one group), or
 * several groups of which one has two stages or more.
 * STRAT_NONE: not known (a plan read without it).  Names in this order,
 * for opt_choice.
 */
enum dl_strategy { STRAT_NONE = -1, STRAT_AUTO, STRAT_DP, STRAT_PP,
	STRAT_HYBRID, DL_NSTRATEGIES };
#define PLAN_STRATEGIES "auto|dp|pp|hybrid"
extern const char *const plan_strategy_names[DL_NSTRATEGIES];

/* What the solver says of a plan: given (read or priced, not searched),
 * the best found, or the proven optimum of the cost model. */
enum dl_status { PLAN_GIVEN, PLAN_FEASIBLE, PLAN_OPTIMAL, DL_NSTATUSES };
extern const char *const plan_status_names[DL_NSTATUSES];

/* How a plan's bound_s was proven (search_bound.c); BOUND_NONE: not
 * known, its name "". */
enum dl_bound { BOUND_NONE, BOUND_EXHAUSTIVE, BOUND_COMBINATORIAL,
	BOUND_LP, BOUND_T_LB, DL_NBOUNDS };
extern const char *const plan_bound_names[DL_NBOUNDS];

/* The index of s in names[0 .. n - 1], or -1: the one way from a name
 * of the tables above to its enum. */
int plan_name_find(const char *const *names, int n, const char *s);

/*
 * The memory savers of a plan (dlplan(1) ALGORITHMS, Memory savers).
 * The attention kernel: fused (flash: the a s^2 scores are never kept)
 * or unfused.  Recomputation: none; selective (core attention, Megatron's
 * --recompute-activations); full (a stage recomputes the first
 * dl_stage.recompute of its blocks, Megatron's block method); auto (the
 * planner tries none and full and keeps the faster; a plan records the
 * one it chose).  The optimizer state: replicated on every data-parallel
 * replica, or sharded over them.  Names in enum order, for opt_choice.
 */
enum dl_attention { ATTN_FUSED, ATTN_UNFUSED, DL_NATTENTION };
#define PLAN_ATTENTIONS "fused|unfused"
enum dl_recompute { RC_NONE, RC_SELECTIVE, RC_FULL, RC_AUTO, DL_NRECOMPUTE };
#define PLAN_RECOMPUTES "none|selective|full|auto"
enum dl_optimizer { OPTIM_REPLICATED, OPTIM_SHARDED, DL_NOPTIMIZER };
#define PLAN_OPTIMIZERS "replicated|sharded"
/*
 * What communication runs under compute (dlplan(1) ALGORITHMS, Overlap):
 * none; dp (the data-parallel gradient reduction under the last
 * micro-batch's backward, bucket by bucket, and with a sharded optimizer
 * the parameter gather under the first forward: Megatron's
 * --overlap-grad-reduce --overlap-param-gather, PyTorch DDP and FSDP);
 * dp+tp (also the tensor-parallel collectives under the GEMMs, Megatron's
 * --tp-comm-overlap); auto (dp where the runtime overlaps, else none; a
 * plan records the one it used).
 */
enum dl_overlap { OVL_NONE, OVL_DP, OVL_DPTP, OVL_AUTO, DL_NOVERLAP };
#define PLAN_OVERLAPS "none|dp|dp+tp|auto"
/* The precision a plan trains in: bf16, or fp16 with loss scaling where
 * a GPU it uses has no bf16 (plan_precision()). */
enum dl_precision { PREC_BF16, PREC_FP16, DL_NPRECISION };
extern const char *const plan_attention_names[DL_NATTENTION];
extern const char *const plan_recompute_names[DL_NRECOMPUTE];
extern const char *const plan_optimizer_names[DL_NOPTIMIZER];
extern const char *const plan_overlap_names[DL_NOVERLAP];
extern const char *const plan_precision_names[DL_NPRECISION];

/* Job options (dlplan(1), dlplan plan) with their defaults. */
struct dl_opts {
	long global_batch;	/* samples per iteration */
	long micro_batch;	/* samples per micro-batch */
	double mfu;		/* default GEMM efficiency: 0.65 */
	double param_bytes;	/* 2 */
	double grad_bytes;	/* 2 */
	double optimizer_bytes;	/* 12 */
	double mem_reserve;	/* 0.10 */
	int horizon;		/* forecast steps the job runs: 1 */
	int states;		/* Markov states / congestion regimes: 3 */
	int forecast;		/* forecast method (fmethod.h): gmc */
	int max_stages;		/* 0: no limit */
	int max_tp;		/* 8 */
	double time_limit;	/* solver budget, seconds: 60 */
	int attention;		/* enum dl_attention: fused */
	int recompute;		/* enum dl_recompute: auto */
	int optimizer;		/* enum dl_optimizer: replicated */
	int overlap;		/* enum dl_overlap: auto */
	/*
	 * Whose memory accounting (enum dl_runtime, set from the plan's
	 * runtime): Megatron-LM's mixed precision keeps fp32 main
	 * gradients, 4 bytes a parameter whatever grad_bytes says.
	 */
	int runtime;
};
void plan_opts_default(struct dl_opts *o);
int plan_resolve_overlap(struct dl_opts *o, int rt, struct dl_err *e);

/* A stage: one unit (k GPUs of one node, one TP group) and its layers. */
struct dl_stage {
	int node;			/* node index */
	int ngpus;			/* TP degree k, 1..DL_MAX_TP */
	int gpus[DL_MAX_TP];		/* local GPU indices on the node */
	double tp_share[DL_MAX_TP];	/* share of the layer work, sums to 1 */
	int first, last;		/* layer range, 0-based, inclusive */
	/* Filled by cost_eval(): */
	double compute_s;		/* t_sigma */
	double p2p_s;			/* c_sigma (0 for the last stage) */
	double mem_bytes;		/* peak per-GPU memory (largest share) */
	/*
	 * Full recomputation: the first `recompute` blocks of the stage
	 * (model_is_block()) keep only their input and run their forward
	 * again in backward.  rc_set 0: not decided yet, priced as the
	 * cost context's search mode says (none, or every block).
	 */
	int recompute;
	int rc_set;
};

/* A group (data-parallel replica): a pipeline of stages over all layers. */
struct dl_group {
	long micro_batches;		/* m_g */
	int nstages;
	struct dl_stage *stages;
	double time_s;			/* T_g, filled by cost_eval() */
	double period_s;		/* its 1F1B steady period */
	/*
	 * Model chunks a stage holds under the interleaved 1F1B schedule
	 * (pipesched.h, pipe_vmakespan()); 0 or 1: the plain schedule.
	 * cost_vp_layout() says which layers each chunk holds.
	 */
	int vstages;
};
/* The chunks a stage of group gr holds: 1 without interleaving. */
#define PLAN_VSTAGES(gr) ((gr)->vstages > 1 ? (gr)->vstages : 1)

/* A flow routed through the network (dlplan(1) ALGORITHMS, Routing). */
enum { DL_PHASE_PIPE = 0, DL_PHASE_SYNC = 1 };
struct dl_flow {
	int phase;
	/* Pipeline: group, stage (the boundary after it), dir 0 forward /
	 * 1 backward.  Sync: segment, hop index, dir 0. */
	int a, b, dir;
	int src, dst;			/* vertex indices (nodes) */
	double bytes;
	double expected_s;		/* tau as priced when routed */
	int intra;			/* same node: no routing, intra_gbps */
	size_t npath;
	int *path;			/* vertices from src to dst */
	int nregimes;
	/* Per regime: the next vertex from src under the policy (the first
	 * hop), for the record; NULL when intra. */
	int *policy_first;
	double *regime_s;		/* C(src, l) per regime; NULL when intra */
	int regime;			/* start regime l0 (0 when intra) */
	int order;			/* routing order in its phase, 0-based;
					   -1 when intra (not routed) */
};

/* A sync segment and its ring (dlplan(1) ALGORITHMS, Routing). */
struct dl_ring {
	int first, last;		/* layer range of the segment */
	double params;			/* P_q */
	int nmembers;			/* = number of groups */
	int *group, *stage;		/* ring order: holder of member i */
	double hop_bytes;		/* P_q * grad_bytes / G */
	double time_s;			/* R_q */
};

struct dl_estimate {
	double iteration_s;		/* T */
	double lower_bound_s;		/* T_lb */
	double efficiency;		/* T_lb / T */
	double throughput;		/* samples per second */
	double pipeline_s;		/* max_g T_g */
	double sync_s;			/* T_sync (what is on the clock) */
	double optimizer_s;		/* the optimizer step, T_opt */
	/* Breakdown of the slowest group's T_g: */
	double compute_s;		/* sum of t_sigma */
	double p2p_s;			/* sum of c_sigma */
	double steady_s;		/* T_g minus one micro-batch's
					   fill (sum of t and c) */
	double period_s;		/* the slowest group's 1F1B steady
					   period (pipesched.h) */
	int slowest_group;
	int feasible;			/* memory fits on every GPU */
	/* The pipeline phase replayed by eval's independent 1F1B
	 * simulation (timeline.h); 0 when not run. */
	double simulated_s;
};

/* Digest and size of an input file, to refuse a plan whose inputs
 * changed. */
struct dl_input {
	char *kind;			/* "nodes", "links", "load", "traffic",
					   "model" */
	char *path;
	char sha256[65];
	long long size;			/* bytes, or -1 when not recorded */
};

/*
 * The schedule of "plan --budget" (budget.h says how it is made), the JSON
 * member "schedule".  One candidate of a slot:
 */
struct dl_budget_cand {
	int prefix;		/* nodes of the ranking it was planned on */
	int nused;
	int *used;		/* nodes its plan uses, ascending */
	double iteration_s;	/* T on the whole cluster, slot speeds */
	double cost;		/* price per hour of the nodes used */
	double score;		/* V T + Q_t cost */
};

struct dl_budget_slot {
	int ncand;
	struct dl_budget_cand *cand;	/* by prefix (see above) */
	int chosen;			/* index in cand */
	double queue;			/* Q_t, before the choice */
	double queue_after;		/* Q_{t+1} */
	double best_s;			/* unconstrained best T of the slot */
	double best_cost;		/* and its cost */
	char *plan;			/* the slot's plan file name, or NULL */
};

struct dl_schedule {
	double budget;		/* C, price per hour */
	double tradeoff;	/* V used */
	int slot_steps;		/* K */
	int nslots;		/* N */
	struct dl_budget_slot *slots;
	double avg_cost;	/* (1/N) sum cost_t */
	double bound;		/* C + Qmax / N; < 0 when it does not apply */
	double avg_throughput;	/* (1/N) sum of the chosen throughputs */
	double best_throughput;	/* the same for the unconstrained plans */
};

/*
 * How replan made a plan (replan.h says how).  What its estimator found
 * for one unit (stage) of the parent:
 */
struct replan_unit {
	int group, stage;
	double predicted_s;	/* pipeline: T_g; compute: m_g t_sigma */
	double observed_s;	/* the same, measured */
	double noise;		/* standard error of observed_s, relative
				   (at least the whole log's) */
	double band;		/* max(0.01, 3 noise) */
	double factor;		/* f */
	int clamped;		/* f hit REPLAN_FACTOR_MIN or _MAX */
	long steps;		/* steps used per rank (the fewest) */
};

/*
 * The lineage, the JSON member "replan" (dlplan-formats(5)):
 *	{ "parent_file", "observed", "estimator" ("pipeline" or "compute"),
 *	  "window", "min_gain", "repartition", "adopted", "planned_s",
 *	  "measured_s", "iteration_s", "gain",
 *	  "speed_factors": { node: f, ... } (the parent's nodes and any
 *	    node with a factor other than 1; relative to the forecast),
 *	  "units": [ { "group", "stage", "predicted_s", "observed_s",
 *	    "noise", "band", "factor", "clamped", "steps" } ] (the
 *	    parent's stages in plan order) }
 */
struct dl_lineage {
	char *parent_file;	/* the parent plan's path as given */
	char *observed;		/* STEPS.csv */
	int compute;		/* estimator: 0 pipeline, 1 compute */
	int window, repartition, adopted;
	double min_gain;
	double planned_s;	/* parent's T, forecast speeds */
	double measured_s;	/* parent's T, measured speeds */
	double iteration_s;	/* this plan's T, measured speeds */
	double gain;		/* (measured_s - iteration_s) / measured_s */
	size_t nnodes;
	double *factor;		/* per node, relative to the forecast */
	unsigned char *used;	/* per node: the parent uses it */
	int nunits;
	struct replan_unit *unit;
};

struct dl_plan {
	char *generator;		/* "dlplan 0.1.0" */
	struct dl_opts opts;
	size_t ninputs;
	struct dl_input *inputs;
	double *uhat;			/* forecast load per node, [0, 0.95] */
	/* Per node, what its forecast used (forecast_node_used(): "gmc",
	 * "auto:last,...", NULL where not known); NULL when not known. */
	char **uhat_used;
	size_t nnodes;			/* length of uhat and uhat_used */
	int ngroups;
	struct dl_group *groups;
	int nrings;
	struct dl_ring *rings;
	size_t nflows;
	struct dl_flow *flows;
	struct dl_estimate est;
	/* Baselines under the same model (0 when not computed). */
	double even_s, proportional_s;
	int even_fits, proportional_fits;	/* fit in memory */
	/* Solver status. */
	enum dl_status status;
	double gap;			/* relative gap to the best bound */
	double bound_s;			/* best proven bound on T */
	enum dl_bound bound_method;	/* how bound_s was proven */
	double solve_s;			/* wall time of the search */
	enum dl_strategy strategy;	/* the plan space searched */
	enum dl_runtime runtime;	/* the framework it was made for */
	char *parent;			/* sha256 of the parent plan, or NULL */
	/* Owned; NULL when absent.  JSON "schedule" and "replan". */
	struct dl_schedule *schedule;	/* plan --budget */
	struct dl_lineage *lineage;	/* how replan made it */
	/*
	 * The nodes of the cluster the plan leaves out (node indices in
	 * nodes.csv order; NULL when none or not known) and T of the plan
	 * with them added as more pipelines (search_left_out(); 0 when no
	 * such plan fits in memory), and how many of those pipelines the
	 * split of that plan gives micro-batches (not in plan.json).
	 */
	int *left_out;
	size_t nleft_out;
	double left_out_t_s;
	int left_out_busy;
};

/* Whether a group of p runs the interleaved schedule. */
int plan_interleaves(const struct dl_plan *p);

void plan_init(struct dl_plan *p);
/* The precision plan p trains in on cluster c: fp16 when a GPU it uses
 * has no bf16 (cluster_gpu_fp16()), else bf16. */
int plan_precision(const struct dl_plan *p, const struct dl_cluster *c);
void plan_free(struct dl_plan *p);
/*
 * Record in p what the forecast of each of its nodes used: copies of the
 * n strings used[] (forecast_node_used()) for its first nnodes nodes,
 * replacing what p had; used NULL: not known.
 */
void plan_set_uhat_used(struct dl_plan *p, char *const *used, size_t n);
/* Deep copy (for keeping the best plan during a search). */
void plan_copy(struct dl_plan *dst, const struct dl_plan *src);
/*
 * The schedule and the lineage a plan carries: plan_free() and plan_copy()
 * release and copy them.  plan_schedule_clear() releases what s holds and
 * zeroes it (s itself may be on the stack); plan_schedule_free() and
 * plan_lineage_free() release a heap object from the _dup() functions
 * (deep copies in new memory; NULL for NULL) or from the JSON readers.
 */
void plan_schedule_clear(struct dl_schedule *s);
void plan_schedule_free(struct dl_schedule *s);
struct dl_schedule *plan_schedule_dup(const struct dl_schedule *s);
void plan_lineage_free(struct dl_lineage *l);
struct dl_lineage *plan_lineage_dup(const struct dl_lineage *l);
/* Total ranks (GPUs used). */
long plan_ranks(const struct dl_plan *p);

/*
 * Rank numbering: groups in plan order, within a group its stages in
 * pipeline order, within a stage its GPUs in the order of gpus[] (which
 * is also the order of tp_shares[]).  plan_rank_table() lists every rank
 * that way; the array (plan_ranks() entries) is the caller's to free.
 */
struct dl_rank {
	long rank;
	int group, stage;
	int node, gpu;			/* node index, local GPU index */
	int tp_rank;			/* index in the stage's gpus[] */
};
struct dl_rank *plan_rank_table(const struct dl_plan *p);

/* Free the results of cost_eval() (flows, rings) and zero the estimate. */
void plan_clear_results(struct dl_plan *p);

/*
 * Check structure against cluster and model: every layer covered once per
 * group in order, GPUs exist and are used once, k in {1,2,4,8}, shares sum
 * to 1, sum m_g * micro_batch == global_batch.  DL_EDATA with a message.
 */
int plan_validate(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *file, struct dl_err *e);

/*
 * JSON (schema "dlplan.plan/1", documented in dlplan-formats(5) and at
 * the top of plan_json.c; written by plan_json.c, read by
 * plan_json_read.c; plan_json.h has the jansson-level pieces).
 * plan_write_json writes atomically.  plan_read_json resolves node ids
 * against c and, when check_digests is set, refuses a plan whose input
 * digests differ from the files the cluster and model were read from.
 * Both readers initialise *p; on failure they leave it empty (all zero,
 * nothing to free).
 */
int plan_write_json(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *path, struct dl_err *e);
int plan_read_json(struct dl_plan *p, const char *path,
    const struct dl_cluster *c, const struct dl_model *m,
    int check_digests, struct dl_err *e);
/*
 * Read only the input paths a plan names (so eval/emit can load the
 * cluster and model it was made for) into p->inputs; look them up with
 * plan_input_path() and release them with plan_free().
 */
int plan_read_inputs(struct dl_plan *p, const char *path, struct dl_err *e);
/*
 * The path of the input of the given kind ("nodes", ..., "model") that
 * plan_read_inputs() or plan_read_json() found, resolved against the plan
 * file's directory when relative; NULL when the plan names none.
 */
const char *plan_input_path(const struct dl_plan *p, const char *kind);
/*
 * The input kinds, in the order plan_set_inputs() records them, and the
 * file the cluster or model was read from for kind k (an index in
 * plan_input_kinds; 4 is the model): NULL when there is none or c or m
 * is NULL.
 */
#define DL_NINPUT_KINDS 5
extern const char *const plan_input_kinds[DL_NINPUT_KINDS];
const char *plan_input_file(const struct dl_cluster *c,
    const struct dl_model *m, int kind);
/* Record in p the paths and digests of the files c and m were read from
 * (replacing p->inputs); m may be NULL. */
int plan_set_inputs(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, struct dl_err *e);
/*
 * The JSON text plan_write_json() would write, in a new string (with a
 * final newline).  base_dir is the directory the text will be read from,
 * for relative input paths; NULL writes absolute paths.
 */
int plan_json_string(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base_dir, char **out,
    struct dl_err *e);
/*
 * The same, and when plain is not NULL also the text for base_dir NULL
 * into *plain (what --format json prints), from one JSON tree: only the
 * input paths differ.
 */
int plan_json_strings(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *base_dir, char **out,
    char **plain, struct dl_err *e);
/* CSV: one row per rank, header per dlplan-formats(5), plan.csv. */
int plan_write_csv(const struct dl_plan *p, const struct dl_cluster *c,
    const char *path, struct dl_err *e);
/*
 * n plans as JSON (jp[i] to jpaths[i]) and cp as CSV to cpath, as one
 * output (af_write_files): either every file is replaced or, when a
 * write fails, none.  plain (may be NULL) gets, from the same JSON tree
 * as jp[0]'s file, the text plan_json_string() gives for no base
 * directory (NULL when a write fails).
 */
int plan_write_files(size_t n, const struct dl_plan *const *jp,
    const char *const *jpaths, const struct dl_plan *cp, const char *cpath,
    const struct dl_cluster *c, const struct dl_model *m, char **plain,
    struct dl_err *e);

#endif
