/*
 * cost_vp.h - what cost.c shares with cost_vp.c: a stage's compute time
 * and the interleaved schedule's inputs (dlplan(1) ALGORITHMS,
 * Interleaved schedule).  Private to the cost model.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_COST_VP_H
#define DL_COST_VP_H

#include "cost.h"

/*
 * A stage's compute under its own TP shares: the GPU with the largest
 * share of the layers' FLOPs sets the pace (cost_vp.c says more).
 */
double cost_stage_time(const struct dl_costctx *x, const struct dl_stage *st);

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
