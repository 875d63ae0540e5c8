/*
 * sched_random.c - the random policy (sched_int.h): running jobs keep
 * their GPUs until they end; waiting jobs, in a random order, get a
 * random number of GPUs in [min_gpus, max_gpus] (fewer when fewer are
 * free where the job fits, none below min_gpus) on random free GPUs.
 * Seeded (--seed), so deterministic.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

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

/* Job a draws its size, then one free GPU at a time, uniformly. */
static void
draw(struct sched *s, const struct sched_slotprob *pb, size_t a,
    const int *freev, int *cnt)
{
	const struct sched_job *jb = &s->jobs[pb->job[a]];
	const struct sched_class *k = &s->classes[jb->cls];
	size_t nn = s->c->nnodes;
	int have = 0, want;

	for (size_t v = 0; v < nn; v++)
		have += k->fits[v] ? freev[v] : 0;
	want = jb->min_gpus + (int)rng_below(pb->rng,
	    jb->max_gpus - jb->min_gpus + 1);
	if (want > have)
		want = have;
	if (want < jb->min_gpus)
		want = 0;
	for (int w = 0; w < want; w++) {
		long r = rng_below(pb->rng, have--);
		size_t v = 0;

		while (!k->fits[v] || r >= freev[v] - cnt[v]) {
			r -= k->fits[v] ? freev[v] - cnt[v] : 0;
			v++;
		}
		cnt[v]++;
	}
}

static void
random_decide(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	size_t nn = s->c->nnodes, *wait, nw;
	int *freev;

	(void)sp;
	nw = sched_keep_running(s, pb, &freev, &wait, out);
	for (size_t i = 0; i + 1 < nw; i++) {
		size_t r = i + (size_t)rng_below(pb->rng, (long)(nw - i)), t;

		t = wait[i];
		wait[i] = wait[r];
		wait[r] = t;
	}
	for (size_t i = 0; i < nw; i++) {
		int *cnt = out + wait[i] * nn;

		draw(s, pb, wait[i], freev, cnt);
		for (size_t v = 0; v < nn; v++)
			freev[v] -= cnt[v];
	}
	free(freev);
	free(wait);
}

const struct sched_policy sched_random = {
	"random", random_decide, NULL, SCHED_POL_WINDOW
};
