/*
 * sched.h - many training jobs on one cluster over time (GADGET): per
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
 * (cost.h COST_PROPORTIONAL; a GPU the split leaves without a
 * micro-batch is not given, sched_trim()), synchronised as the cost model
 * syncs data-parallel groups.  Its iteration time T(A) is cost_eval()'s T
 * of the plan sched_job_plan() builds for A (the plan its plans/JOB.json
 * holds, which "dlplan eval" prices the same), memoised by (job class,
 * GPUs per node).  A job of which one replica fits on no GPU runs
 * the planner's plan instead (pipeline and tensor-parallel stages,
 * sched_mp.c): its T(A) is cost_eval()'s T of the plan the search finds
 * on A, it may use any node, and its min_gpus is at least the fewest GPUs
 * on which a plan fits.  A slot whose GPUs differ from the job's previous
 * slot (a launch: the first start, a resize, a move, a resume) loses
 * restart_s seconds; in the rest the job does (slot_s - restart) / T(A)
 * iterations until it has done all of them.
 *
 * Policies.  Every policy decides only at an event: a slot in which a
 * job arrives, the slot after one finished, and (tiresias) the slot after
 * a running job crossed a queue threshold; in the slots between, every
 * running job keeps its GPUs.  So a schedule costs time per event, not
 * per slot times waiting jobs.
 *   SCHED_GADGET  stable greedy.  A running job keeps its GPUs.  Waiting
 *                 jobs (the shortest first, at most one per free GPU)
 *                 share the free GPUs greedily by marginal utility per
 *                 GPU: repeatedly the job whose next step (one more GPU,
 *                 doubling, its largest) adds the most utility per added
 *                 GPU, placed next to what it has, else on the fewest
 *                 servers.  A waiting job left without GPUs may take
 *                 min_gpus GPUs from a running job that keeps at least
 *                 its own min_gpus, when its weighted wait saved (the
 *                 time until the first running job ends) beats the
 *                 victim's weighted loss (restart_s plus its slowdown over
 *                 its remaining iterations).  Free GPUs left go to a
 *                 running job when its remaining time shrinks by more
 *                 than restart_s.  Preemptive (by shrinking) and elastic.
 *   SCHED_FIFO    first come, first fit: in arrival order, a waiting job
 *                 starts when its whole request (max_gpus) is free, packed
 *                 on the fewest nodes; it keeps its GPUs until it ends.
 *   SCHED_RANDOM  waiting jobs in a random order get a random number of
 *                 GPUs in [min_gpus, max_gpus] on random free GPUs
 *                 (seeded, so deterministic); kept until the end.
 *   SCHED_LAS     Tiresias's discretised two-dimensional least attained
 *                 service: a job's attained service is the GPU-seconds it
 *                 has held; queue 0 below SCHED_LAS_Q1, queue 1 below
 *                 SCHED_LAS_Q2, queue 2 above; jobs by queue, then arrival,
 *                 each get their whole request packed (a running job keeps
 *                 its GPUs when they are still free), skipping a job that
 *                 does not fit; a running job whose GPUs a job before it
 *                 took is suspended.  Preemptive, not elastic; no
 *                 starvation guard.
 *   SCHED_SRTF    elastic shortest remaining time: jobs by remaining
 *                 iterations times the least iteration time on max_gpus
 *                 GPUs (sched_iter_floor) over weight; each in turn keeps
 *                 its GPUs when they are still free, else gets as many as
 *                 are free, up to max_gpus and at least min_gpus, on the
 *                 GPUs no later running job holds when they suffice.
 *                 Preemptive and elastic.
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

enum { SCHED_GADGET, SCHED_FIFO, SCHED_RANDOM, SCHED_LAS, SCHED_SRTF,
    SCHED_NPOLICY };
/* Tiresias queue thresholds, in GPU-seconds of attained service. */
#define SCHED_LAS_Q1 3600.0
#define SCHED_LAS_Q2 36000.0
enum { SCHED_JCT, SCHED_UTILITY };

/* The option words, in enum order. */
#define SCHED_POLICY_WORDS "gadget|fifo|random|tiresias|srtf"
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
 * T(A) in seconds for a job of class cls given cnt[node] GPUs per node
 * (dense, c->nnodes entries; every node with cnt > 0 must fit the class);
 * HUGE_VAL when n == 0, the hops cannot be routed, or (model-parallel)
 * no plan fits.
 */
double sched_iter_time(struct sched *s, int cls, const int *cnt);

/*
 * Drop from cnt the GPUs of a data-parallel class that its proportional
 * split leaves without a micro-batch (the slowest, the last in rank order
 * among alike ones), until every GPU left gets one; returns the GPUs
 * left.  Model-parallel classes are left alone.  So a job holds exactly
 * the GPUs its plan names.
 */
int sched_trim(const struct sched *s, int cls, int *cnt);

/*
 * A lower bound of job j's iteration time on n GPUs: its micro-batches on
 * n GPUs of the fastest kind it fits on (a model-parallel job: any
 * kind), no communication.
 */
double sched_iter_floor(const struct sched *s, int j, int n);

/*
 * The plan of job j on the GPUs (node[i], gpu[i]), i < n, evaluated with
 * cost_eval(): the data-parallel plan above, or a model-parallel job's
 * plan (sched_mp_plan()); p is initialised here.  Its inputs are the
 * cluster's files and the job's model file.
 */
int sched_job_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e);

/*
 * Model-parallel classes (sched_mp.c: how plans are searched and reused).
 * sched_mp_time(): T of the planner's plan on cnt GPUs per node, HUGE_VAL
 * when no plan fits (sched_iter_time() calls it for such classes and
 * memoises it).  sched_mp_setup(): the least GPUs on which the planner
 * fits a plan (the nodes with the most memory first) into k->mp_min, 0
 * and k->mp_why when none fits on every GPU; returns mp_min.
 * sched_mp_plan(): sched_job_plan() for such a job.
 */
double sched_mp_time(struct sched *s, int cls, const int *cnt);
int sched_mp_setup(struct sched *s, int cls);
int sched_mp_plan(struct sched *s, int job, size_t n, const int *node,
    const int *gpu, struct dl_plan *p, struct dl_err *e);
/* n GPUs of avail[] on the nodes with the most GPU memory first (the
 * order sched_mp_setup() finds min_gpus in) into out[]; 1 when a plan
 * fits there. */
int sched_mp_fill(struct sched *s, int cls, int n, const int *avail,
    int *out);
/* cnt := the GPUs per node the plan of cnt's shape uses (a search may
 * leave some out); returns their number. */
int sched_mp_used(struct sched *s, int cls, int *cnt);
void sched_mp_shape_free(void *v);

struct sched_slot;
struct strbuf;

struct sched_params {
	double slot_s;		/* slot length */
	long max_slots;		/* stop after this many slots; 0: none */
	double restart_s;	/* lost at every launch */
	int objective;		/* SCHED_JCT, SCHED_UTILITY */
	unsigned long seed;	/* SCHED_RANDOM */
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

/*
 * One slot's subproblem, for the tests: njobs active jobs (indices into
 * s->jobs) with left[] iterations to do, prev[j * nnodes + node] the GPUs
 * per node each held in the previous slot, and free_gpus[node] GPUs free.
 * sched_slot_greedy() is the GADGET step; sched_slot_best() tries every
 * allocation (exponential: a few jobs and GPUs only).  Both fill
 * out[j * nnodes + node] and return the total utility.
 */
struct sched_slotprob {
	size_t njobs;		/* in arrival order */
	const int *job;
	const double *left;
	const int *prev;
	const int *free_gpus;
	const double *served;	/* GPU-seconds held so far (tiresias) */
	const int *held;	/* GPUs in each prev row, or NULL: sum them */
	const double *waited;	/* seconds waiting since it last held GPUs
				 * (or arrived), 0 running; or NULL */
	const char *guarded;	/* running jobs started overdue, or NULL */
};
double sched_slot_greedy(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
double sched_slot_best(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
/*
 * GADGET's decision for one event (sched_gadget.c): out[a * nnodes +
 * node] for every active job; with log, one line per move at time t0.
 */
void sched_gadget_slot(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out, struct strbuf *log,
    double t0);
/*
 * The baselines' decision for one event (fifo, random, tiresias, srtf);
 * rng: the random policy's state.
 */
void sched_baseline_slot(struct sched *s, int policy,
    const struct sched_slotprob *pb, unsigned long long *rng, int *out);

/* order[] := 0..n-1 by key[], ties to the lower index (arrival). */
void sched_order(size_t n, const double *key, size_t *order);

/*
 * Placement (sched_place.c), as GPUs per node into out[]:
 * sched_place_pack() puts n GPUs from avail[] on the fewest servers (prev
 * when it has exactly n available GPUs; else the smallest node holding
 * them; else the site needing the fewest nodes); sched_place_extend()
 * grows cur by d GPUs from avail[] (free, not counting cur): on prev's
 * GPUs first, then cur's nodes, its sites, anywhere.  Both return 0 when
 * the GPUs are not there.
 */
int sched_gpus(const int *cnt, size_t nn);	/* the sum of cnt[] */
/* The GPUs active job a of pb held in the previous slot. */
int sched_held(const struct sched_slotprob *pb, size_t a, size_t nn);
int sched_place_pack(const struct sched *s, const struct sched_class *k,
    int n, const int *avail, const int *prev, int *out);
/*
 * sched_place_fit(): n GPUs for class cls from avail[] where the job can
 * run: sched_place_pack(), and for a model-parallel class, when no plan
 * fits there, the nodes with the most GPU memory first (on the empty
 * cluster min_gpus GPUs always fit so); 0 when neither fits.
 */
int sched_place_fit(struct sched *s, int cls, int n, const int *avail,
    const int *prev, int *out);
int sched_place_extend(const struct sched *s, const struct sched_class *k,
    const int *cur, const int *prev, int d, const int *avail, int *out);

/* The utility of job j with cnt GPUs per node (see the header comment). */
double sched_utility(struct sched *s, const struct sched_params *sp, int j,
    double left, const int *cnt, const int *prev);

#endif
