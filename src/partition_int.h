/*
 * partition_int.h - what the two files of the layer partition share:
 * partition.c (the DP and its frontier) and partition_milp.c (the same
 * model as a MILP).  Nothing else includes it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_PARTITION_INT_H
#define DL_PARTITION_INT_H

#include "partition.h"

/* The prices of one group's stages and boundaries. */
struct tab {
	int S, L;
	/*
	 * S rows of L each, for stage j ending at layer l: its boundary's
	 * forward transfer xf (cf) and backward transfer xb (cb).
	 */
	const double **cf, **cb;
	double *own;		/* the cf and cb rows when computed here */
	double *cap;		/* S: usable bytes per GPU of unit j */
	struct cost_unit *unit;	/* S: what pricing unit j's ranges needs */
	double *phi;		/* S: largest TP share of unit j */
	struct cost_mem *mem;	/* S: what pricing stage j's memory needs */
	/*
	 * S x L, filled a stage's row at a time when first asked: 1 + the
	 * first layer a such that stage j holding [a, b] fits in memory
	 * (memory grows as a falls), 0 until known; NULL outside a front's
	 * scan (scan_stage() then prices memory
	 * itself), so that the many fronts kept do not keep it.  A front is
	 * used by one thread at a time.
	 */
	int *amin;
	/*
	 * Stage compute times, filled as asked like amin and under the same
	 * rule: tc[(ty[j] * L + b) * L + a] for stage j holding [a, b],
	 * 0 until known (a time of 0 is priced again, to the same 0).
	 * Stages on nodes of the same speed and NVLink with the same TP
	 * degree share a row of types (ty), so a group of one GPU type
	 * prices each range once.  NULL above TAB_TC_LAYERS layers, and
	 * when fewer than two stages share a type on average: where every
	 * node has its own forecast load, every stage is a type, and
	 * clearing nty L^2 doubles for each scan cost more than pricing
	 * the ranges again (4,096 GPUs of gen-cluster2.py planned about
	 * 4 % faster without it).
	 */
	int *ty, nty;
	double *tc;
	/*
	 * nty x L: 1 once row (ty, b) of tc is cleared.  A row is cleared
	 * (up to b, the only first layers it has) when first asked for, so
	 * that a scan clears only the rows it reads.
	 */
	unsigned char *tc_ok;
};

/* Models up to this many layers keep tab.tc (nty * L * L doubles). */
#define TAB_TC_LAYERS 128

/* Fill T for group g (transfer prices from g->comm or g->commv). */
void tab_init(struct tab *T, const struct dl_costctx *x,
    const struct part_group *g);
void tab_free(struct tab *T);
/* Stage j holding layers [a, b]: time *t, transfer *c; 0 when it does not
 * fit in memory or its boundary has no route. */
int tab_stage(const struct dl_costctx *x, const struct part_group *g,
    const struct tab *T, int j, int a, int b, double *t, double *c);

/*
 * The transfers stage j receives per micro-batch: the activations from
 * stage j - 1 when it starts at layer a (xin), and the gradients from
 * stage j + 1 when it ends at layer b (xback).  P_j = t + xin + xback.
 */
static inline double
xin(const struct tab *T, int j, int a)
{
	return j > 0 ? T->cf[j - 1][a - 1] : 0;
}

static inline double
xback(const struct tab *T, int j, int b)
{
	return j < T->S - 1 ? T->cb[j][b] : 0;
}

/* Both transfers of boundary j when stage j ends at layer l (the fill's
 * share of the boundary). */
static inline double
tab_comm(const struct tab *T, int j, int l)
{
	return T->cf[j][l] + T->cb[j][l];
}

/*
 * The heaps of a frontier's candidate listing (partition_heap.c).  struct
 * cheap holds entries (v, j, b, a), the first stage a not yet taken of
 * list (j, b) under its key v, ordered by v, then j, then b; cheap_sift()
 * puts entry (v, j, b, a) in slot i of a heap of n and sifts it down,
 * cheap_pop() drops the top, cheap_heapify() orders the n entries
 * appended (Floyd).  struct vheap is a binary min-heap of values.
 */
struct cheap {
	double *v;
	int *j, *b, *a;
	size_t n;
};

void cheap_sift(struct cheap *h, size_t i, size_t n, double v, int j, int b,
    int a);
void cheap_pop(struct cheap *h);
void cheap_heapify(struct cheap *h);

struct vheap {
	double *v;
	size_t n, cap;
};

void vheap_push(struct vheap *h, double v);
double vheap_pop(struct vheap *h);

#endif
