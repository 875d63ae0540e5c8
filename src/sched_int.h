/*
 * sched_int.h - what the files of the scheduler share and nothing else
 * includes (but its unit test): a job's iteration time and plans
 * (sched_jobs.c, sched_mp.c), placement (sched_place.c), one event's
 * subproblem, and the table of policies (sched_policy.c) that the
 * simulation (sched_sim.c) calls.  The public face is sched.h.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_SCHED_INT_H
#define DL_SCHED_INT_H

#include "sched.h"

struct strbuf;

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

/*
 * One slot's subproblem, what a policy decides on at an event: njobs
 * active jobs (indices into s->jobs) with left[] iterations to do,
 * prev[j * nnodes + node] the GPUs per node each held in the previous
 * slot, and free_gpus[node] GPUs free.  For the tests,
 * sched_slot_greedy() is the GADGET step and sched_slot_best() tries
 * every allocation (exponential: a few jobs and GPUs only); both fill
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
	const double *age;	/* seconds without GPUs since it arrived, all
				 * waits together; or NULL */
	/* The event, for a policy's decision (sched_policy.decide): */
	double t0;		/* the slot's start, seconds */
	unsigned long long *rng;	/* the run's random state (seeded) */
	struct strbuf *log;	/* explain: one line per move, or NULL */
};
double sched_slot_greedy(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
double sched_slot_best(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *sp_, int *out);
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

/*
 * The utility of job j with cnt GPUs per node (sched_gadget.c).  With
 * d = iterations done in the slot, R = iterations left before it, I = all
 * its iterations, w = weight:
 *   SCHED_UTILITY  w d / I                      (total progress)
 *   SCHED_JCT      w d / R, plus 0.1 w (slot time left after finishing) /
 *                  slot_s when it finishes     (shortest remaining first)
 */
double sched_utility(struct sched *s, const struct sched_params *sp, int j,
    double left, const int *cnt, const int *prev);

/*
 * A policy: one row of the table in sched_policy.c, defined in the
 * policy's own file (sched_gadget.c, sched_fifo.c, ...).  A policy
 * decides only at an event: a slot in which a job arrives, the slot after
 * one finished, and the slots its hooks ask for; in the slots between,
 * every running job keeps its GPUs, so a schedule costs time per event,
 * not per slot times waiting jobs.
 *   name          the --policy word and the summary's key
 *   decide        the allocation of every active job of pb at one event:
 *                 out[a * nnodes + node], GPUs per node (the simulation
 *                 then fits it to the jobs' plans)
 *   next_service  NULL, or the attained service (GPU-seconds held) at
 *                 which a running job that holds served GPU-seconds needs
 *                 a decision again, HUGE_VAL for none (tiresias: its next
 *                 queue threshold)
 *   flags         SCHED_POL_WINDOW: the policy looks at the first waiting
 *                 jobs only (a window of the cluster's GPUs, at least 64:
 *                 at most one job per GPU can start), so an event's time
 *                 does not grow with the queue; SCHED_POL_MAX_WAIT: it
 *                 serves a job waiting --max-wait first, and decides
 *                 again when a waiting job becomes overdue;
 *                 SCHED_POL_WAITS: a data-parallel job it gives no GPUs
 *                 waits (without it, the simulation packs such a job on
 *                 the GPUs left free, as it does a job whose GPUs fall
 *                 below its min_gpus)
 */
#define SCHED_POL_WINDOW	0x1
#define SCHED_POL_MAX_WAIT	0x2
#define SCHED_POL_WAITS		0x4
struct sched_policy {
	const char *name;
	void (*decide)(struct sched *s, const struct sched_params *sp,
	    const struct sched_slotprob *pb, int *out);
	double (*next_service)(double served);
	int flags;
};
/* Policy number policy of the table, or NULL. */
const struct sched_policy *sched_policy(int policy);

/* order[] := 0..n-1 by key[], ties to the lower index (arrival). */
void sched_order(size_t n, const double *key, size_t *order);
/*
 * The steps the baselines share (sched_pol.c).  sched_keep_running():
 * every job of pb that held GPUs keeps them in out[], *freevp := the GPUs
 * per node left free, *waitp := the others in arrival order (both to be
 * freed); returns how many wait.
 * sched_prio_slot(): jobs by key[] (ties to arrival), each in turn keeps
 * its GPUs when they are still free, else gets its max_gpus packed on
 * the GPUs no later running job holds when they suffice, else on any
 * free GPUs; elastic: as many as there are, up to max_gpus and at least
 * min_gpus; once every GPU is given, the jobs after get none.
 */
size_t sched_keep_running(struct sched *s, const struct sched_slotprob *pb,
    int **freevp, size_t **waitp, int *out);
void sched_prio_slot(struct sched *s, const struct sched_slotprob *pb,
    const double *key, int elastic, int *out);

#endif
