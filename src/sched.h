/*
 * sched.h - many training jobs on one cluster over time (GADGET): per
 * time slot, how many GPUs each waiting or running job gets and on which
 * nodes.  The scheduler's public face: what "dlplan schedule"
 * (cmd_schedule.c) and the tests call.  Compute only: the command reads
 * the options, prints and writes the files.  What only the sched_*.c
 * files share is in sched_int.h; no source file bears the module's bare
 * name (src/README says which file holds what).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The model.  Time is cut into slots of slot_s seconds.  A job that has
 * arrived by the start of a slot and is not finished is active.  A job
 * given the GPUs A runs data-parallel: every GPU is one replica holding
 * every layer, the micro-batches split in proportion to the GPUs' speeds
 * (cost.h COST_PROPORTIONAL; a GPU the split leaves without a
 * micro-batch is not given, sched_trim()), synchronised as the cost model
 * syncs data-parallel groups.  Its iteration time T(A) is cost_eval()'s T
 * of the plan sched_job_plan() builds for A (the plan file schedule -o
 * writes for it, which "dlplan eval" prices the same), memoised by (job class,
 * GPUs per node).  A job of which one replica fits on no GPU runs
 * the planner's plan instead (pipeline and tensor-parallel stages,
 * sched_mp.c): its T(A) is cost_eval()'s T of the plan the search finds
 * on A, it may use any node, and its min_gpus is at least the fewest GPUs
 * on which a plan fits.  A slot whose GPUs differ from the job's previous
 * slot (a launch: the first start, a resize, a move, a resume) loses
 * restart_s seconds; in the rest the job does (slot_s - restart) / T(A)
 * iterations until it has done all of them.
 *
 * Policies.  sched_policy.c holds their table, and each policy its own
 * file, which describes it: gadget (sched_gadget.c), fifo, random,
 * tiresias and srtf (sched_fifo.c, sched_random.c, sched_tiresias.c,
 * sched_srtf.c).  The simulation (sched_sim.c) runs every one alike.
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

enum { SCHED_JCT, SCHED_UTILITY };
#define SCHED_OBJECTIVE_WORDS "jct|utility"

/*
 * The policies (sched_policy.c), numbered in the order of its table:
 * sched_npolicy() of them, policy 0 (gadget) the default.
 * sched_policy_words: their names joined by '|', the option's words.
 */
extern const char sched_policy_words[];
int sched_npolicy(void);
const char *sched_policy_name(int policy);	/* "?" out of range */

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
	double min_step_s;	/* the least step_s where one replica fits */
	int mp;			/* no replica fits: model-parallel plans */
	int mp_min;		/* mp: the least GPUs a plan fits on; 0: none */
	char *mp_why;		/* mp_min 0: why (the planner's error) */
	struct dl_opts opts_full;	/* mp: opts with recompute "full", */
	struct dl_costctx xfull;	/* its cost model (full_init) */
	int full_init;
};

struct sched_job {
	char *id;
	double arrival_s;
	int cls;
	double iterations;
	int min_gpus, max_gpus;	/* max_gpus: as usable (capped) */
	double weight;
	long line;		/* in JOBS.csv */
	char *why;		/* why it can never run, or NULL */
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
	long evals;		/* iteration times computed (not memoised) */
	int *kind;		/* model-parallel jobs: node kinds (sched_mp.c) */
	struct kcache shapes;	/* (class, allocation shape) -> its plan */
	long searches;		/* search_plan() runs for them */
};

/*
 * Read JOBS.csv (dlplan-formats(5)): job,arrival_s,model,global_batch,
 * micro_batch,iterations[,min_gpus,max_gpus,weight].  A model is a path
 * relative to JOBS.csv's directory, or a "dlplan model" preset name when
 * no such file exists.  Errors name FILE:LINE:COLUMN (DL_EDATA).  A job
 * of which one replica fits on no GPU gets model-parallel plans
 * (sched_mp_setup() raises its min_gpus).  A job that no plan fits even
 * on every GPU of c, or whose min_gpus exceeds what it can use, is
 * unschedulable: its why says so, and the policies pass it over;
 * DL_EINFEAS (the first one's why) when every job is.  c must outlive s.
 */
int sched_load(struct sched *s, const struct dl_cluster *c,
    const char *jobs_path, struct dl_err *e);
void sched_free(struct sched *s);

extern const struct csv_schema dl_jobs_schema;

/*
 * The plan of job j on the GPUs (node[i], gpu[i]), i < n, evaluated with
 * cost_eval(): the data-parallel plan above, or a model-parallel job's
 * plan (sched_mp_plan()); p is initialised here.  Its inputs are the
 * cluster's files and the job's model file.
 */
int sched_job_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e);

struct sched_slot;

/* How far sched_run() is, for a progress line. */
struct sched_progress {
	int policy;
	size_t ended, njobs;	/* jobs finished so far, of all */
	long events;		/* events so far */
	double time_s;		/* simulated: the start of the current slot */
	int final;		/* the run is over */
};

struct sched_params {
	double slot_s;		/* slot length */
	long max_slots;		/* stop after this many slots; 0: none */
	double restart_s;	/* lost at every launch */
	int objective;		/* SCHED_JCT, SCHED_UTILITY */
	unsigned long seed;	/* the random policy's */
	int explain;		/* gadget: log why jobs move (result.log) */
	int forget;		/* keep no slots (result.nslots stays 0) */
	double max_wait_s;	/* gadget: a job waiting this long is served
				 * first (0: no bound) */
	/*
	 * Called (when set) for every slot in which a job launched,
	 * finished or stopped, as the simulation goes: sl holds every job
	 * that runs in slot sl->index (valid during the call only), stop[]
	 * the jobs that held GPUs before it and hold none now.  A result
	 * other than DL_OK ends the run with it (e set by the callback).
	 */
	int (*emit)(void *arg, const struct sched_slot *sl, const int *stop,
	    size_t nstop, struct dl_err *e);
	void *emit_arg;
	/*
	 * Called (when set) after every event and once when the run is
	 * over (final), with how far it is.  It only looks.
	 */
	void (*progress)(void *arg, const struct sched_progress *pg);
	void *progress_arg;
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
	long repeat;		/* it stands for slots index .. index+repeat-1,
				 * alike (repeat > 1: no launch, no finish) */
	size_t n;
	struct sched_entry *e;
};

struct sched_jobstat {
	double start_s, finish_s;	/* -1 when never / not */
	double gpu_s;		/* GPU-seconds held (restarts included) */
	double done;		/* iterations done */
	double held_s;		/* seconds it held GPUs (restarts included) */
	double wait_s;		/* seconds active without GPUs (to its end, or
				 * the run's when it never ends) */
	int launches, restarts;	/* restarts = launches - 1 (>= 0) */
	long first_slot;	/* index into slots[] of its first run; -1 */
};

struct sched_summary {
	double avg_jct_s, p95_jct_s, makespan_s, utilisation;
	double max_wait_s;	/* the most wait_s of a job */
	long restarts, unfinished, unschedulable, slots;
};

struct sched_result {
	int policy;
	size_t nslots;		/* slots in which some job ran */
	struct sched_slot *slots;
	struct sched_jobstat *jobs;	/* per job of s */
	struct sched_summary sum;
	double time_s;		/* wall time of the run */
	long events;		/* slots in which the policy decided */
	char *log;		/* with explain: one line per move; else NULL */
	char *stalled;		/* why the run stopped early, or NULL (the
				 * caller sets it from sched_run()'s error) */
};

/*
 * Simulate one policy over the whole trace.  Time and memory grow with
 * the events (at most two per job, four under tiresias), not with the
 * slots: the slots between two events are one record with a repeat
 * count.  Slot numbers stop at SCHED_MAX_SLOTS (without max_slots): a job
 * that cannot end before even alone on its max_gpus (sched_iter_floor) is
 * refused before anything runs, and one that still runs there (it
 * waited) stops the run; both DL_EDATA naming the job with its line in
 * the jobs file (e->file left empty for the caller).
 */
#define SCHED_MAX_SLOTS 1000000000000L
int sched_run(struct sched *s, int policy, const struct sched_params *sp,
    struct sched_result *r, struct dl_err *e);
void sched_result_free(struct sched_result *r);

#endif
