/*
 * sched_srtf.c - the srtf policy (sched_int.h): elastic shortest
 * remaining time.  Jobs by remaining iterations times the least iteration
 * time on max_gpus GPUs (sched_iter_floor()) over weight; each in turn
 * keeps its GPUs when they are still free, else gets as many as are free,
 * up to max_gpus and at least min_gpus, on the GPUs no later running job
 * holds when they suffice (sched_prio_slot()).  Preemptive and elastic.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>

#include "sched_int.h"

static void
srtf_decide(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	double *key = xcalloc(pb->njobs + 1, sizeof(double));

	(void)sp;
	for (size_t a = 0; a < pb->njobs; a++) {
		const struct sched_job *jb = &s->jobs[pb->job[a]];

		key[a] = pb->left[a] * sched_iter_floor(s, pb->job[a],
		    jb->max_gpus) / jb->weight;
	}
	sched_prio_slot(s, pb, key, 1, out);
	free(key);
}

const struct sched_policy sched_srtf = {
	"srtf", srtf_decide, NULL, 0
};
