/*
 * sched.h - many data-parallel jobs on one cluster over time (GADGET): per
 * time slot, how many GPUs each waiting or running job gets and on which
 * nodes.  Compute only: "dlplan schedule" (cmd_schedule.c) reads the options,
 * prints and writes the files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The model.  Time is cut into slots of slot_s seconds.  A job that has
 * arrived by the start of a slot and is not finished is active.  A job
 * given the GPUs A runs data-parallel: every GPU is one replica holding
 * every layer, the micro-batches split in proportion to the GPUs' speeds
 * (cost.h COST_PROPORTIONAL), and one ring all-reduce per iteration whose
 * members are ordered site by site, node by node (as sync rings are: all but
 * one hop per node stay inside the node).  Its iteration time T(A) is
 * the cost model's T for that plan with every ring hop priced alone (n_e = 1),
 * memoised by (job class, GPUs per node); sched_job_plan() builds the
 * same plan for cost_eval(), which agrees exactly on clusters whose nodes
 * meet at one switch.  A slot whose GPUs differ from the job's previous
 * slot (a launch: the first start, a resize, a move, a resume) loses
 * restart_s seconds; in the rest the job does (slot_s - restart) / T(A)
 * iterations until it has done all of them.
 *
 * Policies:
 *   SCHED_GADGET  per slot, greedy by marginal utility per GPU: start from
 *                 nothing, and repeatedly give the job whose next step
 *                 (one more GPU, doubling, or its previous allocation)
 *                 adds the most utility per added GPU; steps are placed on
 *                 the job's previous GPUs first, then its nodes, then its
 *                 sites, then the nodes with the most free GPUs (a ring on
 *                 few servers and fast links), or repacked on one node or
 *                 site when that is better.  Preemptive and elastic.
 *   SCHED_FIFO    first come, first fit: in arrival order, a waiting job
 *                 starts when its whole request (max_gpus) is free, packed
 *                 on the fewest nodes; it keeps its GPUs until it ends.
 *   SCHED_RANDOM  waiting jobs in a random order each slot get a random
 *                 number of GPUs in [min_gpus, max_gpus] on random free
 *                 GPUs (seeded, so deterministic); kept until the end.
 *
 * Utility of a job j in a slot, with d = iterations done in the slot,
 * R = iterations left before it, I = all its iterations, w = weight:
 *   SCHED_UTILITY  w d / I                      (total progress)
 *   SCHED_JCT      w d / R, plus 0.1 w (slot time left after finishing) /
 *                  slot_s when it finishes     (shortest remaining first)
 */
#ifndef DL_SCHED_H
#define DL_SCHED_H

#include <stddef.h>

#include "cluster.h"
#include "cost.h"
#include "kc.h"
#include "model.h"
#include "plan.h"
#include "route.h"

enum { SCHED_GADGET, SCHED_FIFO, SCHED_RANDOM, SCHED_NPOLICY };
enum { SCHED_JCT, SCHED_UTILITY };

/* The option words, in enum order. */
#define SCHED_POLICY_WORDS "gadget|fifo|random"
#define SCHED_OBJECTIVE_WORDS "jct|utility"
const char *sched_policy_name(int policy);

/* A model a JOBS.csv row names: a model.csv path or a preset. */
struct sched_model {
	char *name;		/* as written in JOBS.csv */
	char *preset;		/* the preset name, or NULL for a file */
	char *csv;		/* a preset's model.csv text, else NULL */
	struct dl_model m;	/* m.path: the file (a preset: its name) */
};

/* A model with a batch: one cost model, shared by the jobs that use it. */
struct sched_class {
	int model;
	struct dl_opts opts;
	struct dl_costctx x;
	long micro_batches;	/* global_batch / micro_batch */
	char *fits;		/* per node: one replica fits in memory */
	double *step_s;		/* per node: one micro-batch on one GPU */
};

struct sched_job {
	char *id;
	double arrival_s;
	int cls;
	double iterations;
	int min_gpus, max_gpus;	/* max_gpus: as usable (capped) */
	double weight;
	long line;		/* in JOBS.csv */
};

struct sched {
	const struct dl_cluster *c;
	struct dl_router *router;
	double *uhat;		/* per node, forecast load (horizon 1) */
	struct sched_model *models;
	size_t nmodels;
	struct sched_class *classes;
	size_t nclasses;
	struct sched_job *jobs;	/* by arrival, then file order */
	size_t njobs;
	long ngpus;
	struct kcache memo;	/* (class, GPUs per node) -> T */
	struct kcache hops;	/* (bytes, u, v) -> tau */
	long evals;		/* iteration times computed (not memoised) */
};

/*
 * Read JOBS.csv (dlplan-formats(5)): job,arrival_s,model,global_batch,
 * micro_batch,iterations[,min_gpus,max_gpus,weight].  A model is a path
 * relative to JOBS.csv's directory, or a "dlplan model" preset name when
 * no such file exists.  Errors name FILE:LINE:COLUMN (DL_EDATA); a job
 * that fits on no GPU of c, or whose min_gpus exceeds what it can use,
 * is DL_EINFEAS naming the job.  c must outlive s.
 */
int sched_load(struct sched *s, const struct dl_cluster *c,
    const char *jobs_path, struct dl_err *e);
void sched_free(struct sched *s);

extern const struct csv_schema dl_jobs_schema;

/* An allocation as GPUs per node (dense, c->nnodes entries). */
/*
 * T(A) in seconds for a job of class cls given cnt[node] GPUs per node
 * (every node with cnt > 0 must fit the class); HUGE_VAL when n == 0 or
 * the hops cannot be routed.
 */
double sched_iter_time(struct sched *s, int cls, const int *cnt);

/*
 * The data-parallel plan of job j on the GPUs (node[i], gpu[i]), i < n,
 * evaluated with cost_eval(); p is initialised here.  Its inputs are the
 * cluster's files and the job's model file.
 */
int sched_job_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e);

struct sched_params {
	double slot_s;		/* slot length */
	long max_slots;		/* stop after this many slots; 0: none */
	double restart_s;	/* lost at every launch */
	int objective;		/* SCHED_JCT, SCHED_UTILITY */
	unsigned long seed;	/* SCHED_RANDOM */
};

/* One job's share of one slot. */
struct sched_entry {
	int job;
	int ngpus;
	int *node, *gpu;	/* ngpus GPUs, by node then local index */
	double iter_s;		/* T of this allocation */
	double run_s;		/* seconds spent training (after a restart) */
	double iters;		/* iterations done */
	int launch;		/* the GPUs differ from the previous slot */
	int finished;		/* the job ended in this slot */
};

struct sched_slot {
	long index;		/* slot number: start = index * slot_s */
	size_t n;
	struct sched_entry *e;
};

struct sched_jobstat {
	double start_s, finish_s;	/* -1 when never / not */
	double gpu_s;		/* GPU-seconds held (restarts included) */
	double done;		/* iterations done */
	int launches, restarts;	/* restarts = launches - 1 (>= 0) */
	long first_slot;	/* index into slots[] of its first run; -1 */
};

struct sched_summary {
	double avg_jct_s, p95_jct_s, makespan_s, utilisation;
	long restarts, unfinished, slots;
};

struct sched_result {
	int policy;
	size_t nslots;		/* slots in which some job ran */
	struct sched_slot *slots;
	struct sched_jobstat *jobs;	/* per job of s */
	struct sched_summary sum;
	double time_s;		/* wall time of the run */
};

/*
 * Simulate one policy over the whole trace.  Without max_slots, at most
 * SCHED_MAX_SLOTS slots in which jobs run are simulated (time and memory
 * grow with them): DL_EDATA naming the job that still runs beyond, with
 * its line in the jobs file (e->file left empty for the caller).
 */
#define SCHED_MAX_SLOTS 100000
int sched_run(struct sched *s, int policy, const struct sched_params *sp,
    struct sched_result *r, struct dl_err *e);
void sched_result_free(struct sched_result *r);

/*
 * One slot's subproblem, for the tests: njobs active jobs (indices into
 * s->jobs) with left[] iterations to do, prev[j * nnodes + node] the GPUs
 * per node each held in the previous slot, and free_gpus[node] GPUs free.
 * sched_slot_greedy() is the GADGET step; sched_slot_best() tries every
 * allocation (exponential: a few jobs and GPUs only).  Both fill
 * out[j * nnodes + node] and return the total utility.
 */
struct sched_slotprob {
	size_t njobs;
	const int *job;
	const double *left;
	const int *prev;
	const int *free_gpus;
};
double sched_slot_greedy(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
double sched_slot_best(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
/* The utility of job j with cnt GPUs per node (see the header comment). */
double sched_utility(struct sched *s, const struct sched_params *sp, int j,
    double left, const int *cnt, const int *prev);

#endif
