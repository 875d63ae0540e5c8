/*
 * timeline.c - the 1F1B simulator of "dlplan eval --svg" (timeline.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "timeline.h"

double
timeline_flow_time(const struct dl_plan *p, int g, int s, int dir)
{
	for (size_t i = 0; i < p->nflows; i++) {
		const struct dl_flow *f = &p->flows[i];

		if (f->phase == DL_PHASE_PIPE && f->a == g && f->b == s &&
		    f->dir == dir)
			return f->expected_s;
	}
	return 0;
}

/* The share of a stage's time that is forward work. */
static double
fwd_share(const struct dl_model *m, const struct dl_stage *st)
{
	double f = 0, all = 0;

	for (int l = st->first; l <= st->last; l++) {
		f += m->layers[l].fwd_gflop;
		all += m->layers[l].fwd_gflop + m->layers[l].bwd_gflop;
	}
	return all > 0 ? f / all : 1.0 / 3;
}

int
timeline_fits(const struct dl_plan *p, long max)
{
	long sum = 0;

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];

		if (gr->micro_batches > (max - sum) / (gr->nstages > 0 ?
		    gr->nstages : 1))
			return 0;
		sum += (long)gr->nstages * gr->micro_batches;
	}
	return 1;
}

void
timeline_simulate(const struct dl_plan *p, const struct dl_model *model,
    int g, struct tl_sim *sm)
{
	const struct dl_group *gr = &p->groups[g];
	int S = gr->nstages;
	long m = gr->micro_batches;
	long *next, left = 2 * m * S;
	double *free_at, *xt_f, *xt_b, *ff;

	if (S < 1 || m < 1 || m > TL_SIM_MAX / S) {
		sm->F = sm->B = NULL;
		sm->end = S < 1 || m < 1 ? 0 : NAN;
		return;
	}
	next = xcalloc(S, sizeof(long));
	free_at = xcalloc(S, sizeof(double));
	/* The transfers into each stage, looked up once. */
	xt_f = xcalloc(S, sizeof(double));
	xt_b = xcalloc(S, sizeof(double));
	ff = xcalloc(S, sizeof(double));
	for (int s = 0; s < S; s++)
		ff[s] = fwd_share(model, &gr->stages[s]);
	for (int s = 0; s + 1 < S; s++) {
		xt_f[s] = timeline_flow_time(p, g, s, 0);
		xt_b[s] = timeline_flow_time(p, g, s, 1);
	}
	sm->F = xcalloc((size_t)S * m, sizeof(struct tl_blk));
	sm->B = xcalloc((size_t)S * m, sizeof(struct tl_blk));
	for (size_t i = 0; i < (size_t)S * m; i++)
		sm->F[i].end = sm->B[i].end = -1;
	sm->end = 0;
	while (left > 0) {
		int progress = 0;

		for (int s = 0; s < S; s++) {
			const struct dl_stage *st = &gr->stages[s];
			long warm = S - s - 1 < m ? S - s - 1 : m, k = next[s];
			long i;
			int back;
			double ready, xt;
			struct tl_blk *bk;

			if (k >= 2 * m)
				continue;
			/* The k-th operation of stage s in 1F1B order. */
			if (k < warm) {
				back = 0;
				i = k;
			} else if (k < warm + 2 * (m - warm)) {
				back = (k - warm) % 2;
				i = back ? (k - warm) / 2 : warm + (k - warm) / 2;
			} else {
				back = 1;
				i = k - warm - (m - warm);
			}
			/*
			 * The input's producer and the transfer that brings
			 * it: the receive is posted when the lane is free,
			 * the bytes move once both sides are there, and the
			 * pass starts when they have arrived.
			 */
			xt = 0;
			if (!back) {
				ready = 0;
				if (s > 0) {
					if (sm->F[(s - 1) * m + i].end < 0)
						continue;
					ready = sm->F[(s - 1) * m + i].end;
					xt = xt_f[s - 1];
				}
			} else if (s + 1 < S) {
				if (sm->B[(s + 1) * m + i].end < 0)
					continue;
				ready = sm->B[(s + 1) * m + i].end;
				xt = xt_b[s];
			} else {
				ready = sm->F[s * m + i].end;
			}
			bk = back ? &sm->B[s * m + i] : &sm->F[s * m + i];
			bk->recv = fmax(ready, free_at[s]);
			bk->start = bk->recv + xt;
			bk->end = bk->start + st->compute_s * (back ? 1 - ff[s] : ff[s]);
			free_at[s] = bk->end;
			sm->end = fmax(sm->end, bk->end);
			next[s]++;
			left--;
			progress = 1;
		}
		if (!progress)
			break;
	}
	free(next);
	free(free_at);
	free(xt_f);
	free(xt_b);
	free(ff);
}

void
timeline_sim_free(struct tl_sim *sm)
{
	free(sm->F);
	free(sm->B);
	sm->F = sm->B = NULL;
}
