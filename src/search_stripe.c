/*
 * search_stripe.c - striped shapes for the structured mode:
 * G groups that each take the same share, 1/G, of the GPUs of every node
 * they use, so that every ring of the sync stays inside one node.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The structured mode cuts a list of units into consecutive pipelines,
 * so a node's GPUs serve one or two groups and a ring of the sync that
 * reaches a node with a slow link out pays for that link.  In a stripe
 * every node holds one stage range of every group, and the rings hop
 * between the GPUs of one node only; what leaves a node is the pipeline
 * transfers.  Those are fewest at the two ends of a pipeline (one
 * boundary instead of two), so the two nodes with the slowest links out
 * go first and last, and the others follow fastest first in between.
 */
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

struct snode {
	double total;		/* GPUs times speed */
	double speed;		/* of one GPU */
	double out;		/* widest link out, Gbit/s */
	int n;
};

/* Faster nodes first (all GPUs together), then lower index. */
static int
cmp_total(const void *pa, const void *pb)
{
	const struct snode *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return (a->n > b->n) - (a->n < b->n);
}

/* Slower links out first, then faster GPUs, then lower index. */
static int
cmp_out(const void *pa, const void *pb)
{
	const struct snode *a = pa, *b = pb;

	if (a->out != b->out)
		return a->out < b->out ? -1 : 1;
	if (a->speed != b->speed)
		return a->speed > b->speed ? -1 : 1;
	return (a->n > b->n) - (a->n < b->n);
}

/* Faster GPUs first, then lower index. */
static int
cmp_speed(const void *pa, const void *pb)
{
	const struct snode *a = pa, *b = pb;

	if (a->speed != b->speed)
		return a->speed > b->speed ? -1 : 1;
	return (a->n > b->n) - (a->n < b->n);
}

/*
 * The nodes (of site, -1: any) whose GPUs G divides into G equal parts,
 * into sn[] (room for every node), fastest first; returns their number.
 */
static size_t
stripe_nodes(const struct dl_costctx *x, int G, int site, struct snode *sn)
{
	const struct dl_cluster *c = x->c;
	double *out = xcalloc(c->nnodes, sizeof(double));
	size_t n = 0;

	cluster_widest_out(c, out);
	for (size_t i = 0; i < c->nnodes; i++) {
		if (c->nodes[i].gpus < G || c->nodes[i].gpus % G != 0 ||
		    (site >= 0 && c->nodes[i].site_idx != site))
			continue;
		sn[n].speed = x->speed[i];
		sn[n].total = c->nodes[i].gpus * x->speed[i];
		sn[n].out = out[i];
		sn[n].n = (int)i;
		n++;
	}
	free(out);
	qsort(sn, n, sizeof(*sn), cmp_total);
	return n;
}

size_t
search_stripe_count(const struct dl_costctx *x, int G, int site)
{
	struct snode *sn = xcalloc(x->c->nnodes, sizeof(*sn));
	size_t n = stripe_nodes(x, G, site, sn);

	free(sn);
	return n;
}

int
search_stripe_shape(const struct ctx *C, const struct stripe *sp,
    struct unit *units, const struct unit **u, int *S, int *off,
    struct shape *sh)
{
	const struct dl_costctx *x = C->x;
	struct snode *sn = xcalloc(x->c->nnodes, sizeof(*sn));
	size_t n = stripe_nodes(x, sp->G, sp->site, sn), top = (size_t)sp->top;
	int stages = 0, wider = 0, maxs = C->L;

	memset(sh, 0, sizeof(*sh));
	if (top == 0 || top > n || sp->G < 2 || sp->G > C->total ||
	    (sp->rev && top < 2)) {
		free(sn);
		return 0;
	}
	/* The ends: the two slowest links out; between them, fastest first. */
	qsort(sn, top, sizeof(*sn), cmp_out);
	if (top > 2) {
		struct snode last = sn[1];

		memmove(sn + 1, sn + 2, (top - 2) * sizeof(*sn));
		qsort(sn + 1, top - 2, sizeof(*sn), cmp_speed);
		sn[top - 1] = last;
	}
	if (sp->rev) {
		for (size_t i = 0; i < top / 2; i++) {
			struct snode t = sn[i];

			sn[i] = sn[top - 1 - i];
			sn[top - 1 - i] = t;
		}
	}
	if (x->o->max_stages > 0 && x->o->max_stages < maxs)
		maxs = x->o->max_stages;
	/* A unit of the node's share, k or the largest power of 2 below. */
	for (int g = 0; g < sp->G; g++) {
		off[g] = stages;
		for (size_t i = 0; i < top; i++) {
			int q = x->c->nodes[sn[i].n].gpus / sp->G;
			int gpu = g * q, left = q;

			if (g == 0 && sp->k > 1 && q > sp->k / 2)
				wider = 1;
			while (left > 0) {
				int kk = sp->k;

				while (kk > left)
					kk /= 2;
				if (stages - off[g] == maxs) {
					free(sn);
					return 0;
				}
				units[stages].node = sn[i].n;
				units[stages].k = kk;
				units[stages].gpu0 = gpu;
				units[stages].speed = kk * sn[i].speed;
				u[stages] = &units[stages];
				stages++;
				gpu += kk;
				left -= kk;
			}
		}
		S[g] = stages - off[g];
	}
	free(sn);
	/* A degree wider than every share repeats the one half its size. */
	if (sp->k > 1 && !wider)
		return 0;
	sh->G = sp->G;
	sh->S = S;
	sh->off = off;
	sh->u = u;
	return search_strategy_allows(C->so->strategy, sh);
}
