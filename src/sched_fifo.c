/*
 * sched_fifo.c - the fifo policy (sched_int.h): first come, first fit.
 * Running jobs keep their GPUs until they end; in arrival order, a
 * waiting job starts when its whole request (max_gpus) is free, packed on
 * the fewest nodes (sched_place_fit()); once no GPU is free, no job after
 * it starts.  Not preemptive, not elastic.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

static void
fifo_decide(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	size_t nn = s->c->nnodes, *wait, nw;
	int *freev;

	(void)sp;
	nw = sched_keep_running(s, pb, &freev, &wait, out);
	for (size_t i = 0; i < nw && sched_gpus(freev, nn) > 0; i++) {
		const struct sched_job *jb = &s->jobs[pb->job[wait[i]]];
		int *cnt = out + wait[i] * nn;

		if (!sched_place_fit(s, jb->cls, jb->max_gpus, freev, NULL,
		    cnt))
			memset(cnt, 0, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			freev[v] -= cnt[v];
	}
	free(freev);
	free(wait);
}

const struct sched_policy sched_fifo = {
	"fifo", fifo_decide, NULL, SCHED_POL_WINDOW
};
