/*
 * partition.h - the layer partition of one pipeline (dlplan(1) ALGORITHMS,
 * Solver).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Layer partition.  A group is a fixed, ordered list of S units; stage j
 * runs on unit j and holds a contiguous, non-empty range of layers.  Let
 * t_j be the compute of stage j for one micro-batch, and xf_j and xb_j
 * the transfers of boundary j (after stage j): the activations forward
 * and their gradients back.  The group's time with m micro-batches is
 * modelled as the 1F1B fill plus m - 1 steady periods:
 *
 *	T(m) = sum_j (t_j + xf_j + xb_j) + (m - 1) * max_j P_j,
 *	P_j  = t_j + xf_{j-1} + xb_j
 *
 * P_j is the work on stage j's lane per micro-batch: its compute and the
 * two transfers it receives (a transfer waits on the receiver's lane;
 * pipesched.h proves that the steady period is max_j P_j, and its
 * pipe_lane() and pipe_closed() are P_j and T(m)).  Each GPU's
 * memory must hold its stage.  part_dp() minimises T exactly by dynamic
 * programming (for every candidate bottleneck B it finds the least sum
 * with every P_j at most B); part_milp() solves the same model as a MILP
 * with GLPK, started from the DP's answer.  The transfer prices of a
 * boundary are given by the caller (the planner prices them with the
 * router, unshared).  The caller scores the chosen partition with the
 * exact makespan (pipesched.h); T is its closed form.  The data split
 * across groups is in split.h.
 */
#ifndef DL_PARTITION_H
#define DL_PARTITION_H

#include "cost.h"
#include "lp.h"

struct part_group {
	int S;
	const int *node;	/* per stage: node index */
	const int *k;		/* per stage: TP degree */
	long m;			/* micro-batches */
	/*
	 * The transfers of boundary j (0 <= j < S-1) for bytes each way:
	 * forward (*fwd, node j to node j + 1) and back (*bwd).
	 */
	void (*comm)(void *ctx, int j, double bytes, double *fwd,
	    double *bwd);
	void *ctx;
	/*
	 * Or, when not NULL, the prices already known: commv[j][l] is xf_j
	 * and commv[j][L + l] is xb_j when stage j ends at layer l (L the
	 * model's layers).  A frontier keeps these pointers, so they must
	 * outlive it.
	 */
	const double *const *commv;
};

struct part_result {
	int S;
	int *last;		/* per stage: last layer */
	double obj;		/* T(m) */
	int status;		/* LP_OPTIMAL, LP_FEASIBLE, LP_INFEASIBLE */
	double time_s;
	double gap;
};

/*
 * Exact DP.  DL_OK with r->status LP_OPTIMAL, or LP_INFEASIBLE when no
 * partition fits in memory (or S > layers).  If the candidate bottleneck
 * scan is cut short (more than max_scan candidates; 0 = no limit) the
 * answer is still feasible and r->status is LP_FEASIBLE.
 */
int part_dp(const struct dl_costctx *x, const struct part_group *g,
    long max_scan, struct part_result *r);
/*
 * The same DP for every m at once.  part_front_new() prepares group g
 * (node and k are copied, the transfer prices taken once; the comm
 * callback is not kept); part_front_query() then answers for any m with
 * min(m, S) = min(g->m, S) (the memory rows depend on m only below S),
 * exactly as part_dp(x, g, max_scan, r) would for that m, extending the
 * candidate scan only as far as that m needs.  The frontier owns its
 * memory (at most max_scan + 1 candidates when max_scan > 0):
 * part_front_free().
 */
struct part_front;
struct part_front *part_front_new(const struct dl_costctx *x,
    const struct part_group *g, long max_scan);
int part_front_query(struct part_front *f, long m, struct part_result *r);
void part_front_free(struct part_front *f);
/*
 * Above this many layers the least-sum DP slides a window over the first
 * layer of each stage instead of scanning it: O(S L) per candidate
 * bottleneck instead of O(S L^2), the same optimum, though between
 * partitions whose sums differ only in the last bits it may pick another.
 * A variable so that tests can run the window on small models; the
 * commands never change it.
 */
extern int part_window_layers;
#define PART_WINDOW_LAYERS 256
/*
 * The largest model the commands partition.  part_dp() takes O(S L)
 * time per candidate bottleneck (O(S L^2) at most part_window_layers
 * layers), O(S L^2) for the bottleneck DP, and O(S L) memory for the
 * candidates,
 * so far beyond this no search can finish: part_max_layers() fails with
 * DL_EDATA and a message naming the model when m has more layers, and
 * plan and replan --repartition call it before they start.
 */
#define PART_MAX_LAYERS 4096
int part_max_layers(const struct dl_model *m, struct dl_err *e);
/*
 * MILP (GLPK), warm-started from warm (may be NULL).  dump: when not NULL,
 * the program is also written there in CPLEX LP format.
 */
int part_milp(const struct dl_costctx *x, const struct part_group *g,
    const struct part_result *warm, const struct lp_params *prm,
    const char *dump, struct part_result *r, struct dl_err *e);
void part_result_free(struct part_result *r);

/* Memory cap on m for a group with fixed stages: largest feasible m
 * (LONG_MAX when every m fits, 0 when even m = 1 does not). */
long part_mcap(const struct dl_costctx *x, int S, const int *k,
    const int *node, const int *last);

#endif
