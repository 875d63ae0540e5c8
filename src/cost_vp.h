/*
 * cost_vp.h - a stage's compute time and the interleaved schedule's
 * chunks and inputs (dlplan(1) ALGORITHMS, Interleaved schedule).  cost.c
 * prices plans with them; cost.h, the model's whole face, includes this.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_COST_VP_H
#define DL_COST_VP_H

#include "cost_savers.h"

/*
 * A stage's compute under its own TP shares: the GPU with the largest
 * share of the layers' FLOPs sets the pace (cost_vp.c says more).
 */
double cost_stage_time(const struct dl_costctx *x, const struct dl_stage *st);

/*
 * The layers of every model chunk of group gr under the interleaved
 * schedule with v >= 2 chunks a stage (dlplan(1) ALGORITHMS, Interleaved
 * schedule): Megatron-LM's assignment, stage s holding n_s transformer
 * blocks in v chunks of n_s / v; chunk c of stage s (virtual stage c S +
 * s) holds the blocks from c sum_j n_j / v + sum_{j<s} n_j / v on, the
 * rows before the first block go with the first chunk and those after
 * the last block with the last.  cf[c S + s] and cl[c S + s] receive the
 * first and last layer (NULL: only checked).  DL_EINFEAS with e set when
 * the schedule does not apply: fewer than 2 stages, micro-batches not a
 * multiple of the stages, a stage's blocks not a multiple of v, blocks
 * not consecutive or not alike, or more than PIPE_VMAX operations.
 */
int cost_vp_layout(const struct dl_costctx *x, const struct dl_group *gr,
    int v, int *cf, int *cl, struct dl_err *e);

/* A group's interleaved inputs; v 1 and NULL arrays: the plain schedule. */
struct cost_vp {
	int v;
	int *cf, *cl;			/* chunk layers, S v each */
	double *f, *b, *xf, *xb;	/* pipe_vmakespan()'s, S v each */
	double *bend;			/* and its bend, S v */
};

/* The chunks of every interleaved group of p into vp[0 .. ngroups - 1]
 * (cost_vp_layout()); DL_EINFEAS with e set where one does not apply. */
int cost_vp_init(const struct dl_costctx *x, const struct dl_plan *p,
    struct cost_vp *vp, struct dl_err *e);
void cost_vp_free(struct cost_vp *vp, int n);
/* A chunk as a stage of its own: layers [first, last] of stage st and its
 * share of st's recomputed blocks. */
struct dl_stage cost_vp_chunk(const struct dl_costctx *x,
    const struct dl_stage *st, int v, int first, int last);
/* Stage s of group gr's compute: its chunks' when w interleaves, whose
 * forward and backward it keeps in w->f and w->b. */
double cost_vp_stage_time(const struct dl_costctx *x,
    const struct dl_group *gr, struct cost_vp *w, int s);
/* Fill vp's xf and xb from the plain inputs in (cost_pipe_inputs(),
 * base[] the groups' first stages). */
void cost_vp_transfers(const struct dl_plan *p, int g, const int *base,
    const double *in, struct cost_vp *vp);
/* When interleaved stage s's reduction rs (nb buckets) ends, and how much
 * of its all-gather ag does not hide (dlplan(1), Interleaved schedule). */
double cost_vp_reduced(const struct cost_vp *vp, int S, int s, double rs,
    double nb);
double cost_vp_gathered(const struct cost_vp *vp, int S, int s, double ag,
    double nb);

#endif
