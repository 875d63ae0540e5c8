/*
 * plan.h - a training plan: groups of pipeline stages, their units and
 * GPUs, the data split, sync rings, routed flows and the cost estimate.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * DESIGN.md section 3 (plan space) and section 6 (outputs).  A plan owns
 * all its arrays; plan_free() releases them.  Node indices refer to the
 * cluster the plan was made for (nodes.csv order); a plan read from JSON
 * is resolved against a loaded cluster by node id.
 */
#ifndef DL_PLAN_H
#define DL_PLAN_H

#include <stddef.h>

#include "cluster.h"
#include "model.h"
#include "util.h"

#define DL_MAX_TP 8

struct dl_schedule;
struct dl_lineage;

/* Job options (DESIGN.md section 1) with their defaults. */
struct dl_opts {
	long global_batch;	/* samples per iteration */
	long micro_batch;	/* samples per micro-batch */
	double mfu;		/* default model-FLOP efficiency: 0.4 */
	double param_bytes;	/* 2 */
	double grad_bytes;	/* 2 */
	double optimizer_bytes;	/* 12 */
	double mem_reserve;	/* 0.10 */
	int horizon;		/* forecast steps the job runs: 1 */
	int states;		/* Markov states / congestion regimes: 3 */
	int max_stages;		/* 0: no limit */
	int max_tp;		/* 8 */
	double time_limit;	/* solver budget, seconds: 60 */
};
void plan_opts_default(struct dl_opts *o);

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
};

/* A group (data-parallel replica): a pipeline of stages over all layers. */
struct dl_group {
	long micro_batches;		/* m_g */
	int nstages;
	struct dl_stage *stages;
	double time_s;			/* T_g, filled by cost_eval() */
};

/* A flow routed through the network (DESIGN.md 4, 5.4). */
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

/* A sync segment and its ring (DESIGN.md 4, 5.5). */
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
	double sync_s;			/* T_sync */
	/* Breakdown of the slowest group's T_g: */
	double compute_s;		/* sum of t_sigma */
	double p2p_s;			/* sum of c_sigma */
	double bubble_s;		/* (m_g - 1) * max(t, c) */
	int slowest_group;
	int feasible;			/* memory fits on every GPU */
};

/* Digest of an input file, to refuse a plan whose inputs changed. */
struct dl_input {
	char *kind;			/* "nodes", "links", "load", "traffic",
					   "model" */
	char *path;
	char sha256[65];
};

struct dl_plan {
	char *generator;		/* "dlplan 0.1.0" */
	struct dl_opts opts;
	size_t ninputs;
	struct dl_input *inputs;
	double *uhat;			/* forecast load per node, [0, 0.95] */
	size_t nnodes;			/* length of uhat */
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
	char status[16];		/* "optimal", "feasible", "given" */
	double gap;			/* relative gap to the best bound */
	double bound_s;			/* best proven bound on T */
	double solve_s;			/* wall time of the search */
	char *strategy;
	char *parent;			/* sha256 of the parent plan, or NULL */
	/* Owned; NULL when absent.  JSON "schedule" and "replan". */
	struct dl_schedule *schedule;	/* plan --budget (budget.h) */
	struct dl_lineage *lineage;	/* how replan made it (replan.h) */
};

void plan_init(struct dl_plan *p);
void plan_free(struct dl_plan *p);
/* Deep copy (for keeping the best plan during a search). */
void plan_copy(struct dl_plan *dst, const struct dl_plan *src);
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
 * JSON (schema "dlplan.plan/1", documented in dlplan-formats(5)).
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
/* CSV: one row per rank, header per DESIGN.md section 8. */
int plan_write_csv(const struct dl_plan *p, const struct dl_cluster *c,
    const char *path, struct dl_err *e);
/*
 * n plans as JSON (jp[i] to jpaths[i]) and cp as CSV to cpath, as one
 * output (af_write_files): either every file is replaced or, when a
 * write fails, none.
 */
int plan_write_files(size_t n, const struct dl_plan *const *jp,
    const char *const *jpaths, const struct dl_plan *cp, const char *cpath,
    const struct dl_cluster *c, const struct dl_model *m, struct dl_err *e);

#endif
