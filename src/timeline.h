/*
 * timeline.h - one iteration of a priced plan as a 1F1B timeline, and its
 * SVG rendering ("dlplan eval --svg").
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The simulator (timeline.c) replays one group's pipeline phase in 1F1B
 * order with the model's stage times (plan.h: compute_s, split into
 * forward and backward by the stage's layers' FLOPs) and its transfer
 * times (the plan's pipeline flows, expected_s), with the transfer
 * semantics of pipesched.h: the receiver waits for the bytes on its own
 * lane, the sender does not.  It is written apart from pipesched.c, as an
 * event loop over the lanes, so that the two check each other.  The renderer
 * (timeline_svg.c) draws every group's simulation, the sync phase after
 * the pipeline phase and the model's T_g and T.  Compute only: nothing
 * is printed; the caller writes the returned text.
 */
#ifndef DL_TIMELINE_H
#define DL_TIMELINE_H

#include "cluster.h"
#include "model.h"
#include "plan.h"

/*
 * One block of the timeline: a forward or backward pass of a stage, and
 * the transfer of its input before it (recv to start; empty when none).
 */
struct tl_blk {
	double recv, start, end;
};

/* 1F1B on one group: per stage, m forward and m backward blocks. */
struct tl_sim {
	struct tl_blk *F, *B;	/* [stage * m + i], end < 0: never ran */
	double end;		/* the last block's end */
};

/*
 * The expected time of group g's pipeline transfer after stage s in
 * direction dir (0 forward, 1 backward); 0 when the plan has none.
 */
double timeline_flow_time(const struct dl_plan *p, int g, int s, int dir);

/*
 * The simulator keeps every pass, so it takes groups of at most
 * TL_SIM_MAX stage micro-batches (stages x micro-batches; 48 MB), and
 * the SVG draws at most TL_SVG_MAX over all groups (about 14 MB of SVG);
 * timeline_fits() says whether plan p's groups are within max.
 */
#define TL_SIM_MAX (1L << 20)
#define TL_SVG_MAX (1L << 16)
int timeline_fits(const struct dl_plan *p, long max);

/*
 * Simulate 1F1B on group g of p (priced, layers of m): stage s (0-based of
 * S) runs min(S - s - 1, micro-batches) forwards, then alternates one
 * forward and one backward, then the remaining backwards.  A forward's
 * transfer starts when the stage is free and the previous stage's
 * forward has ended, a backward's when the stage is free and the next
 * stage's backward has ended; the pass starts when its transfer ends.  Release with
 * timeline_sim_free().  The group must be within TL_SIM_MAX (sm->end is
 * NaN and nothing is simulated otherwise).
 */
void timeline_simulate(const struct dl_plan *p, const struct dl_model *m,
    int g, struct tl_sim *sm);
void timeline_sim_free(struct tl_sim *sm);

/*
 * The SVG document (new string, the caller frees it) of one iteration of
 * p, priced for cluster c and model m: one lane per stage with its
 * forward, backward and transfer blocks, each group's T_g, the sync
 * phase and the model's T on a time axis in seconds.  title names the
 * plan in the heading.
 */
char *timeline_svg(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *title);

#endif
