/*
 * sched_pol.c - the baselines of sched.h: fifo, random, Tiresias-style
 * least attained service and elastic shortest remaining time.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

static unsigned long long
rng_next(unsigned long long *st)
{
	unsigned long long x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* A uniform integer in [0, n). */
static long
rng_below(unsigned long long *st, long n)
{
	return (long)(rng_next(st) % (unsigned long long)n);
}

/*
 * FIFO and RANDOM: running jobs (prev holds GPUs) keep them; waiting ones
 * start in arrival order (FIFO: the whole request packed, when it fits)
 * or in a random order (RANDOM: a random size on random free GPUs).
 */
static void
keep_slot(struct sched *s, int policy, const struct sched_slotprob *pb,
    unsigned long long *rng, int *out)
{
	size_t na = pb->njobs, nn = s->c->nnodes;
	int *freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	size_t *order = xcalloc(na + 1, sizeof(size_t)), nw = 0;

	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++) {
		if (sched_held(pb, a, nn) == 0) {
			order[nw++] = a;
			continue;
		}
		memcpy(out + a * nn, pb->prev + a * nn, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			freev[v] -= pb->prev[a * nn + v];
	}
	for (size_t i = 0; policy == SCHED_RANDOM && i + 1 < nw; i++) {
		size_t r = i + (size_t)rng_below(rng, (long)(nw - i)), t;

		t = order[i];
		order[i] = order[r];
		order[r] = t;
	}
	for (size_t i = 0; i < nw; i++) {
		size_t a = order[i];
		const struct sched_job *jb = &s->jobs[pb->job[a]];
		const struct sched_class *k = &s->classes[jb->cls];
		int *cnt = out + a * nn, have = 0, want;

		/* fifo: no job after can start (random draws on, as ever) */
		if (policy == SCHED_FIFO && sched_gpus(freev, nn) == 0)
			break;

		if (policy == SCHED_FIFO) {
			if (!sched_place_fit(s, jb->cls, jb->max_gpus, freev,
			    NULL, cnt))
				memset(cnt, 0, nn * sizeof(int));
		} else {
			for (size_t v = 0; v < nn; v++)
				have += k->fits[v] ? freev[v] : 0;
			want = jb->min_gpus + (int)rng_below(rng,
			    jb->max_gpus - jb->min_gpus + 1);
			if (want > have)
				want = have;
			if (want < jb->min_gpus)
				want = 0;
			/* One free GPU at a time, uniformly. */
			for (int w = 0; w < want; w++) {
				long r = rng_below(rng, have--);
				size_t v = 0;

				while (!k->fits[v] || r >= freev[v] - cnt[v]) {
					r -= k->fits[v] ? freev[v] - cnt[v] : 0;
					v++;
				}
				cnt[v]++;
			}
		}
		for (size_t v = 0; v < nn; v++)
			freev[v] -= cnt[v];
	}
	free(freev);
	free(order);
}


/* --- the priority baselines: tiresias and srtf ------------------------- */

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

/* Tiresias's queue of a job with served GPU-seconds. */
static int
las_queue(double served)
{
	return served < SCHED_LAS_Q1 ? 0 : served < SCHED_LAS_Q2 ? 1 : 2;
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

static void
prio_slot(struct sched *s, int policy, const struct sched_slotprob *pb,
    int *out)
{
	size_t na = pb->njobs, nn = s->c->nnodes;
	int *freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	int *untouched = xmemdup(pb->free_gpus, nn, sizeof(int));
	size_t *order = xcalloc(na + 1, sizeof(size_t));
	double *key = xcalloc(na + 1, sizeof(double));

	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++) {
		const struct sched_job *jb = &s->jobs[pb->job[a]];

		for (size_t v = 0; sched_held(pb, a, nn) > 0 && v < nn; v++)
			untouched[v] -= pb->prev[a * nn + v];
		if (policy == SCHED_LAS)
			key[a] = las_queue(pb->served[a]);
		else
			key[a] = pb->left[a] * sched_iter_floor(s, pb->job[a],
			    jb->max_gpus) / jb->weight;
	}
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
			    policy == SCHED_SRTF, freev, untouched, cnt);
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
	free(key);
}

void
sched_baseline_slot(struct sched *s, int policy,
    const struct sched_slotprob *pb, unsigned long long *rng, int *out)
{
	if (policy == SCHED_LAS || policy == SCHED_SRTF)
		prio_slot(s, policy, pb, out);
	else
		keep_slot(s, policy, pb, rng, out);
}
