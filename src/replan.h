/*
 * replan.h - re-plan from measured step times (dlplan(1), dlplan
 * replan; Chao, Liao and Gao's self-adaptive data allocation).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The log.  STEPS.csv has the header rank,step,seconds[,samples]
 * [,compute_seconds], one row per rank and training iteration, in any
 * order:
 *	rank	the rank of the plan (0 .. ranks-1, plan.h's numbering)
 *	step	the iteration number (an integer >= 0; later is larger)
 *	seconds	the wall time of that rank's iteration step from its start
 *		until the rank has finished the forward and backward passes
 *		of all its group's micro-batches, not counting the
 *		data-parallel gradient all-reduce and the optimizer step
 *		(time the synchronisation separately, or log before it).  A
 *		rank of group g thus measures its pipeline's time T_g
 *		(the cost model).
 *	samples	optional: the samples the rank's group processed in the
 *		step; it must be the plan's m_g x micro-batch
 *	compute_seconds
 *		optional (on every row or on none): the rank's busy time in
 *		the step, the forward and backward compute of its
 *		micro-batches without any waiting (what per-stage timers
 *		such as CUDA events around forward and backward sum up)
 * Every rank of the plan must have at least one step; a rank outside the
 * plan, a duplicate (rank, step), a time that is not positive, or a
 * samples count that is not the plan's is an error (DL_EDATA with the
 * file, line and column): such a log is from another plan or is broken.
 *
 * The estimator.  For every rank, the median of its last W steps (by step
 * number; fewer when the log is shorter) is its typical time; medians make
 * rare stalls and spikes (up to half of the window) irrelevant.  What is
 * compared with the parent's prediction depends on the log:
 *	seconds only ("pipeline"): per group, the largest typical time of
 *		its ranks (the pipeline is done when its last rank is),
 *		against the predicted T_g.  Plain step times cannot tell
 *		which stage of a pipeline was slow, so every unit of the
 *		group gets the group's factor.
 *	compute_seconds ("compute"): per unit (stage), the largest typical
 *		busy time of its GPUs, against m_g t_sigma.  Every unit gets
 *		its own factor, which lets --repartition move layers away
 *		from a slow stage.
 * The noise of an observed time is estimated from the same samples: the
 * median absolute relative deviation of every sample from its rank's
 * median, scaled to a standard deviation (x 1.4826) and to the standard
 * error of a median of w samples (x 1.2533 / sqrt w); the larger of that
 * and the same figure over every rank of the log is used, since a few
 * samples say little about a spread.  When the observed time is within
 * max(1 %, 3 standard errors) of the prediction, the unit
 * ran as planned and its speed factor is exactly 1.  Otherwise the factor
 * f is the one that makes the cost model give the observed time when the
 * FLOP part of the stage(s) runs f times faster (t = t_flop / f + t_tp;
 * the transfers c and the tensor-parallel all-reduce keep their
 * predicted times): in closed form for a unit, by bisection on log f for
 * a pipeline; f is clamped to [1e-3, 1e3] (and flagged).
 *
 * Speeds.  The cost model has one GPU speed per node, so a node's factor
 * is the GPU-weighted mean of the factors of the units it holds (which
 * keeps the node's total FLOP/s); nodes the plan does not use keep 1.
 * What the parent predicted is priced at its forecast loads times, when
 * the parent was itself made by replan, the speed factors recorded in it;
 * the new plan records the product of those and the new factors, so that
 * factors are always relative to the forecast and a log that matches a
 * re-planned plan changes nothing.  The measured context is the forecast
 * speeds times these factors.
 *
 * The new plan.  Under the measured speeds, the parent's structure is
 * priced again (T_meas).  The data split is solved again with every
 * group's A_g, M_g and memory cap taken from that evaluation; with
 * repartition the layer partition of every group is solved again
 * for its micro-batches too, alternating with the split until the split
 * stops changing (at most four rounds).  A group left with no
 * micro-batch is dropped.  The result is adopted when its T is below
 * T_meas (1 - min_gain); otherwise, and when every factor is 1, the
 * parent's structure is kept (and priced under the measured speeds).
 */
#ifndef DL_REPLAN_H
#define DL_REPLAN_H

#include "cost.h"
#include "plan.h"

#define REPLAN_WINDOW_DEFAULT	8
#define REPLAN_MIN_GAIN_DEFAULT	0.01
#define REPLAN_FACTOR_MIN	1e-3
#define REPLAN_FACTOR_MAX	1e3

/* The log, per rank of the plan, sorted by step. */
struct dl_rankrun {
	size_t n;
	long *step;
	double *seconds;
	double *compute;	/* compute_seconds; NULL without the column */
};

struct dl_steplog {
	char *path;
	long nranks;
	int has_compute;	/* the log has compute_seconds */
	struct dl_rankrun *rank;
};

/* The columns of STEPS.csv, for tests and the formats man page. */
extern const struct csv_schema dl_steps_schema;
/* Read path against plan p (see above).  On failure L is left empty. */
int steplog_load(struct dl_steplog *L, const char *path,
    const struct dl_plan *p, struct dl_err *e);
void steplog_free(struct dl_steplog *L);

struct replan_opts {
	int window;		/* W >= 1 */
	int repartition;
	double min_gain;	/* in [0, 1) */
	double time_limit;	/* seconds per MILP */
};

/*
 * The estimator alone: parent must have been evaluated under x (the
 * forecast speeds); u (one per stage of parent, plan order) and
 * node_factor (x->c->nnodes entries) receive the results.
 */
void replan_estimate(const struct dl_costctx *x, const struct dl_plan *parent,
    const struct dl_steplog *L, int window, struct replan_unit *u,
    double *node_factor);

/*
 * Re-plan.  x is the parent's context (cost_init with the parent's opts
 * and uhat, and a router); parent is the plan as read.  out (initialised
 * here) receives the new plan, evaluated under the measured speeds, with
 * its baselines and a lineage (parent_file and observed left NULL for
 * the caller; parent, the digest, too).
 */
int replan_run(const struct dl_costctx *x, const struct dl_plan *parent,
    const struct dl_steplog *L, const struct replan_opts *ro,
    struct dl_plan *out, struct dl_err *e);

#endif
