/*
 * search_cuts.c - the last step of the search: each pipeline's stage
 * boundaries moved one layer at a time while its exact 1F1B makespan
 * falls.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The layer partition (partition.h) minimises the closed form of a
 * pipeline's time, the fill plus m - 1 steady periods.  That is the
 * makespan's slope and its intercept for many micro-batches, but with
 * few micro-batches per stage the fill and the drain weigh more, and
 * another cut can be faster.  So the plan the search keeps is scored by
 * the makespan itself (pipesched.h): in every pipeline of two or more
 * stages with even TP shares, each boundary is moved by one layer either
 * way, and a move is kept when the group's makespan (transfers priced
 * alone) falls and every stage still fits in memory; sweeps repeat until
 * none helps or CUTS_SWEEPS have run.  The plan so changed is then
 * priced in full (shared transfers, the sync) and replaces the old one
 * only when its T is lower, so this step never makes a plan slower.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "search_int.h"

/* Sweeps over the boundaries of one pipeline. */
#define CUTS_SWEEPS 16
/* A pipeline is left alone above this many stage-passes (S x m). */
#define CUTS_MAX_WORK 2000000L

/* Whether stage s of gr splits its layers evenly over its GPUs. */
static int
even_shares(const struct dl_stage *s)
{
	for (int i = 0; i < s->ngpus; i++)
		if (s->tp_share[i] != 1.0 / s->ngpus)
			return 0;
	return 1;
}

/*
 * Move the stage ends last[] of a pipeline one layer at a time while its
 * makespan with m micro-batches (transfers priced alone) falls and every
 * stage fits; 1 when one moved.
 */
static int
refine_ends(const struct dl_costctx *x, int S, const int *node,
    const int *k, int *last, long m)
{
	double best;
	int moved = 0;

	if (S < 2 || (double)S * (double)m > (double)CUTS_MAX_WORK)
		return 0;
	best = search_group_span(x, S, node, k, last, NULL, m);
	for (int sweep = 0, better = 1; better && sweep < CUTS_SWEEPS;
	    sweep++) {
		better = 0;
		for (int j = 0; j + 1 < S; j++)
			for (int d = -1; d <= 1; d += 2) {
				int lo = j > 0 ? last[j - 1] + 1 : 0;
				double v;

				last[j] += d;
				if (last[j] < lo || last[j] >= last[j + 1] ||
				    part_mcap(x, S, k, node, last) < m ||
				    (v = search_group_span(x, S, node, k, last,
				    NULL, m)) >= best) {
					last[j] -= d;
					continue;
				}
				best = v;
				better = moved = 1;
			}
	}
	return moved;
}

/* refine_ends() on group gr of a plan; 1 when a boundary moved. */
static int
refine_group(const struct dl_costctx *x, struct dl_group *gr)
{
	int S = gr->nstages, moved;
	int *node = xcalloc((size_t)S, sizeof(int));
	int *k = xcalloc((size_t)S, sizeof(int));
	int *last = xcalloc((size_t)S, sizeof(int));

	for (int j = 0; j < S; j++) {
		node[j] = gr->stages[j].node;
		k[j] = gr->stages[j].ngpus;
		last[j] = gr->stages[j].last;
	}
	moved = refine_ends(x, S, node, k, last, gr->micro_batches);
	for (int j = 0; moved && j < S; j++) {
		gr->stages[j].last = last[j];
		if (j + 1 < S)
			gr->stages[j + 1].first = last[j] + 1;
	}
	free(node);
	free(k);
	free(last);
	return moved;
}

long
search_refine_cuts(const struct dl_costctx *x, struct dl_plan *p)
{
	struct dl_plan q;
	struct dl_err e = { 0 };
	int moved = 0;

	plan_copy(&q, p);
	for (int g = 0; g < q.ngroups; g++) {
		struct dl_group *gr = &q.groups[g];
		int ok = 1;

		for (int j = 0; ok && j < gr->nstages; j++)
			ok = even_shares(&gr->stages[j]);
		if (ok)
			moved |= refine_group(x, gr);
	}
	if (!moved) {
		plan_free(&q);
		return 0;
	}
	if (cost_eval(x, &q, &e) == DL_OK &&
	    q.est.iteration_s < p->est.iteration_s) {
		plan_free(p);
		plan_copy(p, &q);
	}
	plan_free(&q);
	return 1;
}
