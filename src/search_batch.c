/*
 * search_batch.c - the improvement phase's shapes solved a batch at a time
 * on several threads, with the outcome of solving them one by one.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The phase tries shapes in a fixed order and, in its usual mode, stops
 * at the first that makes the best plan strictly faster.  Every shape
 * before that one is solved against the same best plan, so a batch of
 * them can be solved at once, each on a context of its own that starts
 * from the batch's best.  The results are then taken in order as the
 * one-by-one run would have taken them: a shape's plan replaces the best
 * when its key (T, job, round) comes before the best's, and the first
 * that lowers T ends the batch, the shapes after it given back to the
 * budget.  A shape that lost to the batch's best also loses to any later
 * best, whose key only comes earlier, and a shape's best round beats a
 * later best exactly when the one-by-one run would have ended on that
 * round; so the plan, and every shape the phase tries after, are those
 * of the one-by-one run whatever the number of threads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lp.h"
#include "search_int.h"

/* One shape of a batch and what solving it gave. */
struct bjob {
	struct unit *u;		/* its units in order, copied */
	int *S, G;
	long through;		/* the budget charged up to and with it */
	struct dl_plan plan;	/* the shape's best plan, when it beat */
	double t;
	long bj;
	int round, beat, failed;
	struct dl_err err;
};

struct batch {
	struct ctx *C;		/* the line's context, whose best is kept */
	long *left;		/* the line's budget of shapes */
	int nt, all;
	struct ctx *W;		/* nt contexts, one a thread */
	struct dl_costctx *xw;	/* their cost contexts */
	struct search_stats *ws;
	struct bjob *job;
	size_t n, cap;
	long charged;		/* the budget charged since the last flush */
	/* While a batch runs, under mu: */
	pthread_mutex_t mu;
	size_t next, stop;	/* the next job; none after stop is needed */
};

/* Jobs a batch holds per thread. */
#define BATCH_PER_THREAD 4

struct batch *
batch_new(struct ctx *C, int nt, long *left)
{
	struct batch *b = xcalloc(1, sizeof(*b));

	b->C = C;
	b->left = left;
	b->nt = nt;
	b->cap = (size_t)nt * BATCH_PER_THREAD;
	b->job = xcalloc(b->cap, sizeof(*b->job));
	b->W = xcalloc((size_t)nt, sizeof(*b->W));
	b->xw = xcalloc((size_t)nt, sizeof(*b->xw));
	b->ws = xcalloc((size_t)nt, sizeof(*b->ws));
	/* Thread 0 is the caller's, which leaves C's router alone. */
	for (int i = 0; i < nt; i++)
		search_ctx_thread(&b->W[i], &b->xw[i], C, &b->ws[i], i > 0);
	pthread_mutex_init(&b->mu, NULL);
	return b;
}

/* Free the batch's jobs and empty it. */
static void
jobs_clear(struct batch *b)
{
	for (size_t j = 0; j < b->n; j++) {
		plan_free(&b->job[j].plan);
		free(b->job[j].u);
		free(b->job[j].S);
	}
	b->n = 0;
}

void
batch_free(struct batch *b)
{
	if (b == NULL)
		return;
	for (int i = 0; i < b->nt; i++)
		search_ctx_thread_free(&b->W[i], b->C->st, i > 0);
	jobs_clear(b);
	pthread_mutex_destroy(&b->mu);
	free(b->job);
	free(b->W);
	free(b->xw);
	free(b->ws);
	free(b);
}

void
batch_all(struct batch *b, int all)
{
	b->all = all;
}

/* Solve jb on context W, which starts from the line's best key. */
static void
solve(struct batch *b, struct ctx *W, struct bjob *jb)
{
	const struct ctx *C = b->C;
	const struct unit **ord;
	struct shape sh;
	size_t n = 0;

	for (int g = 0; g < jb->G; g++)
		n += (size_t)jb->S[g];
	ord = xcalloc(n + 1, sizeof(*ord));
	sh.G = jb->G;
	sh.S = jb->S;
	sh.off = xcalloc((size_t)jb->G + 1, sizeof(int));
	for (int g = 0, k = 0; g < jb->G; k += jb->S[g], g++)
		sh.off[g] = k;
	for (size_t i = 0; i < n; i++)
		ord[i] = &jb->u[i];
	sh.u = ord;
	W->best = &jb->plan;
	W->have_best = 1;
	W->best_t = C->best_t;
	W->best_job = C->best_job;
	W->best_round = C->best_round;
	W->job = C->job;
	W->failed = 0;
	search_solve_shape(W, &sh);
	jb->t = W->best_t;
	jb->bj = W->best_job;
	jb->round = W->best_round;
	jb->beat = jb->plan.ngroups > 0;
	jb->failed = W->failed;
	if (W->failed)
		jb->err = W->err;
	W->best = NULL;
	free(sh.off);
	free(ord);
}

struct brun {
	struct batch *b;
	int i;
};

/* A thread's loop: the next job until none is left or needed. */
static void *
brun(void *arg)
{
	struct brun *r = arg;
	struct batch *b = r->b;

	for (;;) {
		size_t j;

		pthread_mutex_lock(&b->mu);
		if (b->next >= b->n || b->next > b->stop) {
			pthread_mutex_unlock(&b->mu);
			break;
		}
		j = b->next++;
		pthread_mutex_unlock(&b->mu);
		solve(b, &b->W[r->i], &b->job[j]);
		/* A faster plan or a failure ends the usual mode's batch. */
		if (!b->all && (b->job[j].failed || (b->job[j].beat &&
		    b->job[j].t < b->C->best_t))) {
			pthread_mutex_lock(&b->mu);
			if (j < b->stop)
				b->stop = j;
			pthread_mutex_unlock(&b->mu);
		}
	}
	if (r->i > 0)
		lp_thread_exit();
	return NULL;
}

int
batch_flush(struct batch *b)
{
	struct ctx *C = b->C;
	pthread_t *tid;
	struct brun *r;
	int hit = 0;
	long used = b->charged;

	if (b->n == 0) {
		b->charged = 0;
		return 0;
	}
	tid = xcalloc((size_t)b->nt, sizeof(*tid));
	r = xcalloc((size_t)b->nt, sizeof(*r));
	b->next = 0;
	b->stop = b->n;
	for (int i = 0; i < b->nt; i++) {
		r[i].b = b;
		r[i].i = i;
	}
	for (int i = 1; i < b->nt; i++)
		if (pthread_create(&tid[i], NULL, brun, &r[i]) != 0)
			r[i].b = NULL;
	brun(&r[0]);
	for (int i = 1; i < b->nt; i++)
		if (r[i].b != NULL)
			pthread_join(tid[i], NULL);
	/* The results in order, as one by one. */
	for (size_t j = 0; j < b->n && j <= b->stop; j++) {
		struct bjob *jb = &b->job[j];
		double before = C->best_t;

		if (jb->failed) {
			C->failed = 1;
			C->err = jb->err;
			break;
		}
		if (jb->beat && search_key_before(jb->t, jb->bj, jb->round,
		    C->best_t, C->best_job, C->best_round)) {
			plan_free(C->best);
			plan_copy(C->best, &jb->plan);
			C->best_t = jb->t;
			C->best_job = jb->bj;
			C->best_round = jb->round;
		}
		if (C->best_t < before) {
			hit = 1;
			if (!b->all) {
				/* The shapes after it were not tried. */
				used = jb->through;
				break;
			}
		}
	}
	jobs_clear(b);
	*b->left += b->charged - used;
	b->charged = 0;
	free(tid);
	free(r);
	return hit;
}

int
batch_add(struct batch *b, const struct shape *sh, int ok, long charge)
{
	struct bjob *jb;
	size_t n = 0;

	b->charged += charge;
	if (!ok)
		return 0;
	jb = &b->job[b->n];
	memset(jb, 0, sizeof(*jb));
	plan_init(&jb->plan);
	for (int g = 0; g < sh->G; g++)
		n += (size_t)sh->S[g];
	jb->G = sh->G;
	jb->S = xmemdup(sh->S, (size_t)sh->G, sizeof(int));
	jb->u = xcalloc(n + 1, sizeof(*jb->u));
	for (size_t i = 0; i < n; i++)
		jb->u[i] = *sh->u[i];
	jb->through = b->charged;
	if (++b->n < b->cap)
		return 0;
	return batch_flush(b);
}
