/*
 * search_explain.c - why a plan leaves nodes out: the plan with them.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The search keeps the nodes that make T smallest; the others are left
 * out.  To say what they would have cost, the best plan's groups are
 * solved again with the left-out nodes added as more pipelines, exactly
 * as the structured mode solves a shape (search_solve_shape()), and the
 * summary reports that T against the plan's.
 */
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "search_int.h"


/* Whether a pipeline of the n units u[] holds the model (one micro-batch,
 * transfers left out: memory only). */
static int
chain_fits(const struct dl_costctx *x, const struct unit *const *u, int n)
{
	int *node = xcalloc((size_t)n, sizeof(int));
	int *k = xcalloc((size_t)n, sizeof(int));
	struct commctx cc = { x, node, 1, NULL };
	struct part_group pg = { 0 };
	struct part_result r;
	int ok;

	for (int j = 0; j < n; j++) {
		node[j] = u[j]->node;
		k[j] = u[j]->k;
	}
	pg.S = n;
	pg.node = node;
	pg.k = k;
	pg.m = 1;
	pg.comm = search_comm;
	pg.ctx = &cc;
	ok = part_dp(x, &pg, 1, &r) == DL_OK && r.status != LP_INFEASIBLE;
	part_result_free(&r);
	free(node);
	free(k);
	return ok;
}

void
search_left_out(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best)
{
	const struct dl_cluster *c = x->c;
	char *used = xcalloc(c->nnodes + 1, 1);
	struct unit *lo = xcalloc((size_t)cluster_gpus(c) + 1, sizeof(*lo));
	const struct unit **ord;
	struct unit *u;
	struct shape sh;
	size_t nlo, nu, start;
	int maxs = x->o->max_stages > 0 ? x->o->max_stages : 1 << 30;

	free(best->left_out);
	best->left_out = NULL;
	best->nleft_out = 0;
	best->left_out_t_s = 0;
	best->left_out_busy = 0;
	nlo = search_left_units(x, best, used, lo, 0);
	for (size_t i = 0; i < c->nnodes; i++)
		if (!used[i]) {
			best->left_out = xreallocarray(best->left_out,
			    best->nleft_out + 1, sizeof(int));
			best->left_out[best->nleft_out++] = (int)i;
		}
	if (nlo == 0 || (u = search_plan_units(x, best, nlo, &nu)) == NULL) {
		free(used);
		free(lo);
		return;
	}
	ord = xcalloc(nu + nlo + 1, sizeof(*ord));
	sh.S = xcalloc((size_t)best->ngroups + nlo + 1, sizeof(int));
	sh.off = xcalloc((size_t)best->ngroups + nlo + 1, sizeof(int));
	sh.G = 0;
	for (size_t i = 0; i < nu; i++)
		ord[i] = &u[i];
	for (int g = 0, off = 0; g < best->ngroups; g++) {
		sh.S[sh.G] = best->groups[g].nstages;
		sh.off[sh.G++] = off;
		off += best->groups[g].nstages;
	}
	/* Chain the left-out units into pipelines that hold the model. */
	start = nu;
	for (size_t i = 0; i < nlo; i++) {
		int len;

		ord[nu + i] = &lo[i];
		len = (int)(nu + i + 1 - start);
		if (chain_fits(x, ord + start, len)) {
			sh.S[sh.G] = len;
			sh.off[sh.G++] = (int)start;
			start = nu + i + 1;
		} else if (len >= maxs) {
			/* Too long for --max-stages: start again after it. */
			start = nu + i + 1;
		}
	}
	sh.u = ord;
	if (sh.G > best->ngroups && search_strategy_allows(so->strategy,
	    &sh)) {
		struct dl_costctx xl;
		struct search_stats st;
		struct dl_plan with;
		struct ctx C;

		memset(&st, 0, sizeof(st));
		plan_init(&with);
		search_ctx_open(&C, &xl, x, so, &st, &with);
		search_solve_shape(&C, &sh);
		if (C.have_best && !C.failed) {
			best->left_out_t_s = with.est.iteration_s;
			/*
			 * The split drops the groups it gives nothing: count
			 * those kept that hold a left-out node.
			 */
			for (int g = 0; g < with.ngroups; g++) {
				const struct dl_group *gr = &with.groups[g];
				int s = 0;

				while (s < gr->nstages &&
				    used[gr->stages[s].node])
					s++;
				best->left_out_busy += s < gr->nstages;
			}
		}
		search_ctx_free(&C);
		plan_free(&with);
	}
	free(sh.S);
	free(sh.off);
	free(ord);
	free(u);
	free(used);
	free(lo);
}
