/*
 * sched_pol.c - the steps the baseline policies share (sched_int.h):
 * running jobs keep their GPUs (fifo, random), jobs in the order of a
 * key (every policy), and the priority step of tiresias and srtf.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

size_t
sched_keep_running(struct sched *s, const struct sched_slotprob *pb,
    int **freevp, size_t **waitp, int *out)
{
	size_t na = pb->njobs, nn = s->c->nnodes, nw = 0;
	int *freev = *freevp = xmemdup(pb->free_gpus, nn, sizeof(int));
	size_t *wait = *waitp = xcalloc(na + 1, sizeof(size_t));

	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++) {
		if (sched_held(pb, a, nn) == 0) {
			wait[nw++] = a;
			continue;
		}
		memcpy(out + a * nn, pb->prev + a * nn, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			freev[v] -= pb->prev[a * nn + v];
	}
	return nw;
}

/* Sort keys of the active jobs, ties to arrival (the index). */
static const double *prio_key;
static int
cmp_prio(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (prio_key[x] != prio_key[y])
		return prio_key[x] < prio_key[y] ? -1 : 1;
	return (x > y) - (x < y);
}

void
sched_order(size_t n, const double *key, size_t *order)
{
	for (size_t a = 0; a < n; a++)
		order[a] = a;
	prio_key = key;
	qsort(order, n, sizeof(size_t), cmp_prio);
}

/*
 * n GPUs for job a: on GPUs no later running job holds (untouched) when
 * they suffice, else on any free GPU; elastic: as many as there are, up
 * to n and at least min_gpus.  0 when it gets none.
 */
static int
prio_place(struct sched *s, const struct sched_slotprob *pb, size_t a,
    int n, int elastic, const int *freev, const int *untouched, int *cnt)
{
	const struct sched_job *jb = &s->jobs[pb->job[a]];
	const struct sched_class *k = &s->classes[jb->cls];
	const int *prev = pb->prev + a * s->c->nnodes;
	const int *from[2] = { untouched, freev };

	for (int f = 0; f < 2; f++) {
		int have = 0, want = n;

		for (size_t v = 0; v < s->c->nnodes; v++)
			have += k->fits[v] ? from[f][v] : 0;
		if (elastic && have < want)
			want = have;
		if (want < jb->min_gpus || want < 1)
			continue;
		if (sched_place_fit(s, jb->cls, want, from[f], prev, cnt))
			return want;
	}
	memset(cnt, 0, s->c->nnodes * sizeof(int));
	return 0;
}

void
sched_prio_slot(struct sched *s, const struct sched_slotprob *pb,
    const double *key, int elastic, int *out)
{
	size_t na = pb->njobs, nn = s->c->nnodes;
	int *freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	int *untouched = xmemdup(pb->free_gpus, nn, sizeof(int));
	size_t *order = xcalloc(na + 1, sizeof(size_t));

	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++)
		for (size_t v = 0; sched_held(pb, a, nn) > 0 && v < nn; v++)
			untouched[v] -= pb->prev[a * nn + v];
	sched_order(na, key, order);
	/* Once every GPU is given, the jobs after get none. */
	for (size_t i = 0; i < na && sched_gpus(freev, nn) > 0; i++) {
		size_t a = order[i];
		const int *prev = pb->prev + a * nn;
		int *cnt = out + a * nn, pn = 0, keep = 1;

		for (size_t v = 0; v < nn; v++) {
			pn += prev[v];
			keep &= prev[v] <= freev[v];
			untouched[v] += prev[v];
			if (untouched[v] > freev[v])
				untouched[v] = freev[v];
		}
		if (pn > 0 && keep)
			memcpy(cnt, prev, nn * sizeof(int));
		else
			prio_place(s, pb, a, s->jobs[pb->job[a]].max_gpus,
			    elastic, freev, untouched, cnt);
		for (size_t v = 0; v < nn; v++) {
			freev[v] -= cnt[v];
			untouched[v] -= cnt[v];
			if (untouched[v] > freev[v])
				untouched[v] = freev[v];
			if (untouched[v] < 0)
				untouched[v] = 0;
		}
	}
	free(freev);
	free(untouched);
	free(order);
}
