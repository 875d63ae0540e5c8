/*
 * dheap.h - a binary min-heap of (key, vertex) pairs kept in two arrays
 * the caller owns, for Dijkstra with lazy deletion (a vertex may be in it
 * several times; the caller skips the stale entries it pops).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Invariant: key[0 .. n-1] is a heap (no key below its parent's).  An
 * entry moves up only past a strictly larger key and down only past a
 * strictly smaller one, so equal keys pop in an order fixed by the
 * pushes alone: the same pushes give the same pops on every build.
 * Room is the caller's: dheap_push() writes key[n] and val[n].
 */
#ifndef DL_DHEAP_H
#define DL_DHEAP_H

#include <stddef.h>

/* Add (k, v) to the *n entries, which must have room for one more. */
static inline void
dheap_push(double *key, int *val, size_t *n, double k, int v)
{
	size_t i = (*n)++;

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (key[p] <= k)
			break;
		key[i] = key[p];
		val[i] = val[p];
		i = p;
	}
	key[i] = k;
	val[i] = v;
}

/* Take the entry of least key (*n > 0) into *k and *v. */
static inline void
dheap_pop(double *key, int *val, size_t *n, double *k, int *v)
{
	double lk;
	int lv;
	size_t i = 0;

	*k = key[0];
	*v = val[0];
	lk = key[--*n];
	lv = val[*n];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && key[c + 1] < key[c])
			c++;
		if (lk <= key[c])
			break;
		key[i] = key[c];
		val[i] = val[c];
		i = c;
	}
	key[i] = lk;
	val[i] = lv;
}

#endif
