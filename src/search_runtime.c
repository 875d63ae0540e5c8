/*
 * search_runtime.c - the search restricted to what a training framework
 * can run (plan --runtime megatron|deepspeed|torchtitan).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Megatron-LM, DeepSpeed and torchtitan describe a job by a TP degree, a
 * PP degree, a DP degree and one layer split that every replica shares.
 * So every group here has the same shape: S stages, each one unit of k
 * GPUs of one node (TP inside a node), the same layer boundaries, and the
 * same number of micro-batches (the total divided by G).  The layer split
 * is one the framework can express:
 *
 *	megatron	in transformer blocks: an even split, one even with
 *			the embedding and the loss counted as a layer each
 *			(--account-for-embedding-in-pipeline-split,
 *			--account-for-loss-in-pipeline-split), or the first
 *			and the last stage of their own size with the stages
 *			between even (--decoder-first-pipeline-num-layers,
 *			--decoder-last-pipeline-num-layers)
 *	deepspeed	PipelineModule's partition_method "uniform": L / S
 *			layers per stage, the first L mod S stages one more
 *	torchtitan	any split (module_fqns_per_model_part): the
 *			Megatron splits and the split that balances the
 *			slowest stage
 *
 * Megatron-LM counts transformer layers (model_is_block()), not model.csv
 * rows: its split is runtime_megatron_split()'s, over the blocks of each
 * stage.  The TP degrees are those runtime_fits() allows.
 *
 * For each TP degree k, stage count S and group count G, the groups take
 * the G * S fastest units of degree k in the order search_cmp_unit()
 * gives, S consecutive units each.  Every split the framework allows is
 * priced cheaply (the pipeline times of search_group_am() with unshared
 * transfers, memory checked), and the cheapest is scored by the full cost
 * model through search_consider().  Deterministic: the loops run in a
 * fixed order and ties keep the first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipesched.h"
#include "runtime.h"
#include "search_int.h"

/* One structure: G groups of S units of degree k, m micro-batches each. */
struct rtshape {
	int k, S, G;
	long m;
	const struct unit **u;	/* G * S units, group g at u[g * S] */
	int *node, *kk;		/* scratch for search_group_am() */
};

/*
 * The cheap price of stage ends last[] for every group of r: the largest
 * T_g = A + (m - 1) M, or HUGE_VAL when a GPU runs out of memory.
 */
static double
price_split(struct ctx *C, const struct rtshape *r, const int *last)
{
	const struct dl_costctx *x = C->x;
	double worst = 0;

	for (int g = 0; g < r->G; g++) {
		const struct unit **u = r->u + (size_t)g * r->S;
		double A, M;

		for (int j = 0, a = 0; j < r->S; j++) {
			double mem = cost_stage_memory_dp(x, a, last[j],
			    1.0 / r->k, j + 1, r->S, r->m, r->G);

			if (mem > cost_gpu_capacity(x, u[j]->node))
				return HUGE_VAL;
			r->node[j] = u[j]->node;
			r->kk[j] = r->k;
			a = last[j] + 1;
		}
		search_group_am(x, r->S, r->node, r->kk, last, &C->tc, &A, &M);
		worst = fmax(worst, pipe_closed(A, M, r->m));
	}
	return worst;
}

/* Keep split try[] in best[] when it is cheaper than *bestp. */
static void
offer(struct ctx *C, const struct rtshape *r, const int *try, int *best,
    double *bestp)
{
	double p = price_split(C, r, try);

	if (p < *bestp) {
		*bestp = p;
		memcpy(best, try, (size_t)r->S * sizeof(int));
	}
}

/* Whether Megatron builds split last[] of r exactly. */
static int
megatron_builds(const struct ctx *C, const struct rtshape *r,
    const int *last)
{
	int *b = xcalloc((size_t)r->S, sizeof(int)), ok;
	struct mt_split ms;

	for (int j = 0, a = 0; j < r->S; j++) {
		b[j] = model_blocks(C->x->m, a, last[j]);
		a = last[j] + 1;
	}
	ok = runtime_megatron_split(b, r->S, &ms);
	free(b);
	return ok;
}

/*
 * The Megatron splits: even, and every first/last pair whose middle
 * stages split evenly; for megatron only those it builds exactly.
 */
static void
offer_megatron(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	int L = C->L, S = r->S;

	if (S == 1) {
		try[0] = L - 1;
		offer(C, r, try, best, bestp);
		return;
	}
	for (int f = 1; f <= L - S + 1; f++)
		for (int l = 1; f + l <= L - (S - 2); l++) {
			int rest = L - f - l, per;

			if (S == 2 ? rest != 0 : rest % (S - 2) != 0)
				continue;
			per = S > 2 ? rest / (S - 2) : 0;
			if (S > 2 && per < 1)
				continue;
			try[0] = f - 1;
			for (int j = 1; j < S - 1; j++)
				try[j] = try[j - 1] + per;
			try[S - 1] = L - 1;
			if (C->so->runtime != RUNTIME_MEGATRON ||
			    megatron_builds(C, r, try))
				offer(C, r, try, best, bestp);
		}
}

/* DeepSpeed's "uniform" partition: the first L mod S stages one more. */
static void
offer_deepspeed(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	int L = C->L, S = r->S, per = L / S, extra = L % S;

	for (int j = 0, a = 0; j < S; j++) {
		a += per + (j < extra);
		try[j] = a - 1;
	}
	offer(C, r, try, best, bestp);
}

/*
 * The split that minimises the slowest stage's compute time over the
 * groups (stage j of every group runs on that group's j-th unit), by
 * dynamic programming over (stages, layers); ties keep the earliest cut.
 */
static void
offer_balanced(struct ctx *C, const struct rtshape *r, int *try, int *best,
    double *bestp)
{
	const struct dl_costctx *x = C->x;
	int L = C->L, S = r->S;
	double *f = xcalloc((size_t)(S + 1) * (size_t)(L + 1), sizeof(double));
	int *cut = xcalloc((size_t)(S + 1) * (size_t)(L + 1), sizeof(int));

#define F(j, l) f[(size_t)(j) * (size_t)(L + 1) + (size_t)(l)]
#define CUT(j, l) cut[(size_t)(j) * (size_t)(L + 1) + (size_t)(l)]
	for (int l = 0; l <= L; l++)
		F(0, l) = l == 0 ? 0 : HUGE_VAL;
	for (int j = 1; j <= S; j++)
		for (int l = 0; l <= L; l++) {
			F(j, l) = HUGE_VAL;
			for (int a = j - 1; a < l; a++) {
				double t = 0, v;

				if (F(j - 1, a) == HUGE_VAL)
					continue;
				for (int g = 0; g < r->G; g++)
					t = fmax(t, cost_stage_compute(x,
					    r->u[(size_t)g * S + j - 1]->node,
					    r->k, a, l - 1));
				v = fmax(F(j - 1, a), t);
				if (v < F(j, l)) {
					F(j, l) = v;
					CUT(j, l) = a;
				}
			}
		}
	if (F(S, L) < HUGE_VAL) {
		for (int j = S, l = L; j >= 1; j--) {
			try[j - 1] = l - 1;
			l = CUT(j, l);
		}
		offer(C, r, try, best, bestp);
	}
#undef F
#undef CUT
	free(f);
	free(cut);
}

/*
 * The interleaved schedule on the split last[] that C->work holds (run_
 * shape()): every v >= 2 that divides each stage's blocks, priced by the
 * full model, where Megatron builds the chunks dlplan prices (no
 * embedding or loss counted as a layer) and cost_vp_layout() allows it.
 */
static void
offer_interleaved(struct ctx *C, const struct rtshape *r, const int *last)
{
	int S = r->S, least = 0, *b;
	struct mt_split ms;
	struct dl_err e = { 0 };

	if (S < 2)
		return;
	b = xcalloc((size_t)S, sizeof(int));
	for (int j = 0, a = 0; j < S; j++) {
		b[j] = model_blocks(C->x->m, a, last[j]);
		a = last[j] + 1;
		least = j == 0 || b[j] < least ? b[j] : least;
	}
	if (!runtime_megatron_split(b, S, &ms) || ms.embed || ms.loss)
		least = 0;
	free(b);
	/* cost_vp_layout() refuses a v that does not divide every stage. */
	for (int v = 2; v <= least && !C->failed; v++) {
		if (cost_vp_layout(C->x, &C->work.groups[0], v, NULL, NULL,
		    &e) != DL_OK)
			continue;
		for (int g = 0; g < C->work.ngroups; g++)
			C->work.groups[g].vstages = v;
		search_consider(C);
	}
}

/* Price the splits of r's runtime; score the cheapest with the model. */
static void
run_shape(struct ctx *C, const struct rtshape *r)
{
	int S = r->S, *try = xcalloc((size_t)S, sizeof(int));
	int *best = xcalloc((size_t)S, sizeof(int));
	int **last = xcalloc((size_t)r->G, sizeof(int *));
	int *shS = xcalloc((size_t)r->G, sizeof(int));
	int *off = xcalloc((size_t)r->G, sizeof(int));
	long *m = xcalloc((size_t)r->G, sizeof(long));
	double bestp = HUGE_VAL;
	struct shape sh;

	C->st->structures++;
	if (C->so->runtime == RUNTIME_DEEPSPEED)
		offer_deepspeed(C, r, try, best, &bestp);
	else
		offer_megatron(C, r, try, best, &bestp);
	if (C->so->runtime == RUNTIME_TORCHTITAN)
		offer_balanced(C, r, try, best, &bestp);
	if (bestp < HUGE_VAL) {
		for (int g = 0; g < r->G; g++) {
			last[g] = best;
			shS[g] = S;
			off[g] = g * S;
			m[g] = r->m;
		}
		sh.G = r->G;
		sh.S = shS;
		sh.off = off;
		sh.u = r->u;
		search_build_plan(C, &C->work, &sh, last, m);
		search_consider(C);
		if (C->so->runtime == RUNTIME_MEGATRON)
			offer_interleaved(C, r, best);
	}
	free(try);
	free(best);
	free(last);
	free(shS);
	free(off);
	free(m);
}

void
search_runtime(struct ctx *C)
{
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	const struct unit **ord = xcalloc((size_t)gpus, sizeof(*ord));
	int *node = xcalloc((size_t)gpus, sizeof(int));
	int *kk = xcalloc((size_t)gpus, sizeof(int));
	int maxs = x->o->max_stages > 0 ? x->o->max_stages : C->L;

	for (int k = 1; k <= x->o->max_tp && k <= DL_MAX_TP && !C->failed;
	    k *= 2) {
		size_t all = search_make_units(x, k, units), n = 0;

		for (size_t i = 0; i < all; i++)
			if (units[i].k == k && !runtime_gpu_refused(
			    x->c, C->so->runtime, units[i].node))
				ord[n++] = &units[i];
		qsort(ord, n, sizeof(*ord), search_cmp_unit);
		for (int S = 1; S <= (int)n && S <= C->L && S <= maxs &&
		    !C->failed; S++)
			for (int G = 1; G * S <= (int)n && !C->failed; G++) {
				struct rtshape r = { k, S, G, C->total / G,
				    ord, node, kk };

				if (C->total % G != 0 ||
				    !search_strategy_fits(C->so->strategy, G,
				    S) || !runtime_fits(x->m,
				    C->so->runtime, k, S, NULL, 0) ||
				    !runtime_saver_fits(C->so->runtime,
				    x->o, S, C->total / G, G, x->rc_fold, NULL,
				    0))
					continue;
				run_shape(C, &r);
			}
	}
	free(units);
	free(ord);
	free(node);
	free(kk);
}
