/*
 * sched_best.c - the exact answer to one slot's subproblem (sched_int.h
 * sched_slot_best()): every allocation of the free GPUs tried, for the
 * tests that measure the greedy against it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

#define GAIN_EPS 1e-12

struct brute {
	struct sched *s;
	const struct sched_params *sp;
	const struct sched_slotprob *pb;
	size_t nn;
	int *freev, *cur, *best;
	double bestu;
};

static void brute_job(struct brute *b, size_t a, double acc);

/* Every count on nodes v.. for job a, then the next job. */
static void
brute_node(struct brute *b, size_t a, size_t v, int n, double acc)
{
	const struct sched_job *jb = &b->s->jobs[b->pb->job[a]];
	int *cnt = b->cur + a * b->nn;

	if (v == b->nn) {
		if (n != 0 && (n < jb->min_gpus || n > jb->max_gpus))
			return;
		brute_job(b, a + 1, acc + sched_utility(b->s, b->sp,
		    b->pb->job[a], b->pb->left[a], cnt, b->pb->prev +
		    a * b->nn));
		return;
	}
	int top = b->s->classes[jb->cls].fits[v] ? b->freev[v] : 0;

	for (int c = 0; c <= top && n + c <= jb->max_gpus; c++) {
		cnt[v] = c;
		b->freev[v] -= c;
		brute_node(b, a, v + 1, n + c, acc);
		b->freev[v] += c;
	}
	cnt[v] = 0;
}

static void
brute_job(struct brute *b, size_t a, double acc)
{
	if (a < b->pb->njobs) {
		brute_node(b, a, 0, 0, acc);
		return;
	}
	if (acc > b->bestu + GAIN_EPS) {
		b->bestu = acc;
		memcpy(b->best, b->cur, b->pb->njobs * b->nn * sizeof(int));
	}
}

double
sched_slot_best(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	struct brute b;
	size_t cells = pb->njobs * s->c->nnodes;

	b.s = s;
	b.sp = sp;
	b.pb = pb;
	b.nn = s->c->nnodes;
	b.freev = xmemdup(pb->free_gpus, b.nn, sizeof(int));
	b.cur = xcalloc(cells + 1, sizeof(int));
	b.best = out;
	b.bestu = 0;
	memset(out, 0, cells * sizeof(int));
	brute_job(&b, 0, 0);
	free(b.freev);
	free(b.cur);
	return b.bestu;
}

