/*
 * partition_heap.c - the two heaps with which a frontier of partition.c
 * lists its candidate bottlenecks in ascending order (front_cands()):
 * the merge of the S x L lists of stages, and the values taken from it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>

#include "partition_int.h"

/* Sift the entry (v, j, b, a) down from slot i of a heap of n. */
void
cheap_sift(struct cheap *h, size_t i, size_t n, double v, int j, int b, int a)
{
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && (h->v[c + 1] < h->v[c] || (h->v[c + 1] ==
		    h->v[c] && (h->j[c + 1] < h->j[c] || (h->j[c + 1] ==
		    h->j[c] && h->b[c + 1] < h->b[c])))))
			c++;
		if (v < h->v[c] || (v == h->v[c] && (j < h->j[c] ||
		    (j == h->j[c] && b < h->b[c]))))
			break;
		h->v[i] = h->v[c];
		h->j[i] = h->j[c];
		h->b[i] = h->b[c];
		h->a[i] = h->a[c];
		i = c;
	}
	h->v[i] = v;
	h->j[i] = j;
	h->b[i] = b;
	h->a[i] = a;
}

void
cheap_pop(struct cheap *h)
{
	size_t n = --h->n;

	cheap_sift(h, 0, n, h->v[n], h->j[n], h->b[n], h->a[n]);
}

/* Make the n entries appended unordered into a heap (Floyd). */
void
cheap_heapify(struct cheap *h)
{
	for (size_t i = h->n / 2; i-- > 0;)
		cheap_sift(h, i, h->n, h->v[i], h->j[i], h->b[i], h->a[i]);
}

void
vheap_push(struct vheap *h, double v)
{
	size_t i;

	h->v = xgrow(h->v, &h->cap, h->n + 1, sizeof(double));
	for (i = h->n++; i > 0 && h->v[(i - 1) / 2] > v; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = v;
}

double
vheap_pop(struct vheap *h)
{
	double top = h->v[0], v = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (v <= h->v[c])
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n > 0)
		h->v[i] = v;
	return top;
}
