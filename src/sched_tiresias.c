/*
 * sched_tiresias.c - the tiresias policy (sched_int.h): Tiresias's
 * discretised two-dimensional least attained service.  A job's attained
 * service is the GPU-seconds it has held: queue 0 below LAS_Q1, queue 1
 * below LAS_Q2, queue 2 above.  Jobs by queue, then arrival, each get
 * their whole request packed (a running job keeps its GPUs when they are
 * still free), skipping a job that does not fit; a running job whose GPUs
 * a job before it took is suspended (sched_prio_slot()).  A running job
 * that crosses a threshold is an event.  Preemptive, not elastic; no
 * starvation guard.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "sched_int.h"

/* The queue thresholds, in GPU-seconds of attained service. */
#define LAS_Q1 3600.0
#define LAS_Q2 36000.0

static void
tiresias_decide(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	double *key = xcalloc(pb->njobs + 1, sizeof(double));

	(void)sp;
	for (size_t a = 0; a < pb->njobs; a++)
		key[a] = pb->served[a] < LAS_Q1 ? 0 : pb->served[a] < LAS_Q2 ?
		    1 : 2;
	sched_prio_slot(s, pb, key, 0, out);
	free(key);
}

/* A job with served GPU-seconds changes queue at the next threshold. */
static double
tiresias_next(double served)
{
	return served < LAS_Q1 ? LAS_Q1 : served < LAS_Q2 ? LAS_Q2 : HUGE_VAL;
}

const struct sched_policy sched_tiresias = {
	"tiresias", tiresias_decide, tiresias_next, 0
};
