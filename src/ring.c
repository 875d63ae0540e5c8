/*
 * ring.c - the order of a sync ring (see ring.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "ring.h"

#define RING_EXACT_MAX	8	/* rings enumerated up to this size */
#define RING_MULTISTART	128	/* greedy from every start up to this size */
#define RING_PRICED_MAX	64	/* above: by site and node, not priced */
#define RING_CACHE_MAX	65536	/* orders a cache keeps at most */

/*
 * w is the n x n hop cost matrix; a ring's value is its slowest hop,
 * including the hop back to the first member.
 */
static double
ring_max(int n, const double *w, const int *o)
{
	double m = -HUGE_VAL;

	for (int k = 0; k < n; k++) {
		double x = w[o[k] * n + o[(k + 1) % n]];

		if (x > m)
			m = x;
	}
	return m;
}

static double
ring_sum(int n, const double *w, const int *o)
{
	double s = 0;

	for (int k = 0; k < n; k++)
		s += w[o[k] * n + o[(k + 1) % n]];
	return s;
}

/* Exact search: permutations fixing member 0, in lexicographic order. */
struct exact {
	int n;
	const double *w;
	int cur[RING_EXACT_MAX], best[RING_EXACT_MAX];
	int used[RING_EXACT_MAX];
	double bestv;
};

static void
exact_rec(struct exact *x, int depth, double sofar)
{
	int n = x->n;

	if (depth == n) {
		double v = x->w[x->cur[n - 1] * n + x->cur[0]];

		if (v < sofar)
			v = sofar;
		if (v < x->bestv) {
			x->bestv = v;
			memcpy(x->best, x->cur, (size_t)n * sizeof(int));
		}
		return;
	}
	for (int j = 1; j < n; j++) {
		double v;

		if (x->used[j])
			continue;
		v = x->w[x->cur[depth - 1] * n + j];
		if (v < sofar)
			v = sofar;
		/* Only a strictly better ring replaces the incumbent. */
		if (!(v < x->bestv))
			continue;
		x->used[j] = 1;
		x->cur[depth] = j;
		exact_rec(x, depth + 1, v);
		x->used[j] = 0;
	}
}

static void
ring_exact(int n, const double *w, int *order)
{
	struct exact x;

	memset(&x, 0, sizeof(x));
	x.n = n;
	x.w = w;
	/* The identity is the lexicographically first ring: the incumbent. */
	for (int i = 0; i < n; i++)
		x.best[i] = i;
	x.bestv = ring_max(n, w, x.best);
	x.cur[0] = 0;
	x.used[0] = 1;
	exact_rec(&x, 1, -HUGE_VAL);
	memcpy(order, x.best, (size_t)n * sizeof(int));
}

/*
 * Greedy from member start: the next member is the cheapest hop among the
 * unvisited members of the current member's site, or among all unvisited
 * members when the site is done (lowest index on ties).  The ring is then
 * rotated to begin with member 0.
 */
static void
ring_greedy(int n, const double *w, const int *site, int start, int *o,
    int *nx)
{
	int cur = start, k0 = 0;
	const int head = n;

	/*
	 * The unvisited members as a list in ascending index (nx[n] is the
	 * head, -1 ends it), so a step looks at each of them once and keeps
	 * both the best of the site and the best of all, each the first of
	 * its least cost.
	 */
	for (int j = 0, p = head; j <= n; j++)
		if (j == n)
			nx[p] = -1;
		else if (j != start)
			p = nx[p] = j;
	o[0] = start;
	for (int k = 1; k < n; k++) {
		const double *wc = w + (size_t)cur * n;
		int ps = -1, pa = -1, qs = -1, qa = -1;

		for (int p = head, j; (j = nx[p]) >= 0; p = j) {
			if (site != NULL && site[j] == site[cur] && (ps < 0 ||
			    wc[j] < wc[ps])) {
				ps = j;
				qs = p;
			}
			if (pa < 0 || wc[j] < wc[pa]) {
				pa = j;
				qa = p;
			}
		}
		cur = ps >= 0 ? ps : pa;
		/* Off the list: nx of its predecessor skips it. */
		nx[ps >= 0 ? qs : qa] = nx[cur];
		o[k] = cur;
	}
	for (int k = 0; k < n; k++)
		if (o[k] == 0)
			k0 = k;
	if (k0 > 0) {
		int *tmp = xcalloc((size_t)n, sizeof(int));

		for (int k = 0; k < n; k++)
			tmp[k] = o[(k0 + k) % n];
		memcpy(o, tmp, (size_t)n * sizeof(int));
		free(tmp);
	}
}

/* Is (m1, s1) better than (m0, s0): a lower slowest hop, or the same
 * slowest hop and a clearly lower total? */
static int
ring_better(double m1, double s1, double m0, double s0)
{
	if (m1 != m0)
		return m1 < m0;
	return s1 < s0 - 1e-12 * (1 + fabs(s0));
}

/* Reverse o[i..j]. */
static void
reverse(int *o, int i, int j)
{
	for (; i < j; i++, j--) {
		int t = o[i];

		o[i] = o[j];
		o[j] = t;
	}
}

/*
 * 2-opt: reverse o[i..j] (1 <= i < j <= n-1, member 0 stays first) when
 * that lowers (slowest hop, total).  With prefix and suffix maxima and
 * sums of the hops a candidate costs O(1); the first improving move is
 * taken and the scan restarts.
 */
static void
ring_2opt(int n, const double *w, int *o)
{
	double *fw = xcalloc((size_t)n, sizeof(double));
	double *pmax = xcalloc((size_t)n + 1, sizeof(double));
	double *psum = xcalloc((size_t)n + 1, sizeof(double));
	double *smax = xcalloc((size_t)n + 1, sizeof(double));
	double *ssum = xcalloc((size_t)n + 1, sizeof(double));
	long moves = 0, maxmoves = 50L * n * n;
	int improved = 1;

	while (improved && moves < maxmoves) {
		double cm, cs;

		improved = 0;
		/* Hop k: o[k] -> o[k + 1], the last one back to o[0]. */
		for (int k = 0; k < n; k++)
			fw[k] = w[o[k] * n + o[(k + 1) % n]];
		pmax[0] = -HUGE_VAL;
		psum[0] = 0;
		for (int k = 0; k < n; k++) {
			pmax[k + 1] = fmax(pmax[k], fw[k]);
			psum[k + 1] = psum[k] + fw[k];
		}
		smax[n] = -HUGE_VAL;
		ssum[n] = 0;
		for (int k = n - 1; k >= 0; k--) {
			smax[k] = fmax(smax[k + 1], fw[k]);
			ssum[k] = ssum[k + 1] + fw[k];
		}
		cm = pmax[n];
		cs = psum[n];
		for (int i = 1; i < n - 1 && !improved; i++) {
			double imax = -HUGE_VAL, isum = 0;

			for (int j = i + 1; j < n; j++) {
				double a, b, nm, ns;

				/* Inner hops reversed: o[k + 1] -> o[k]. */
				imax = fmax(imax, w[o[j] * n + o[j - 1]]);
				isum += w[o[j] * n + o[j - 1]];
				a = w[o[i - 1] * n + o[j]];
				b = w[o[i] * n + o[(j + 1) % n]];
				nm = fmax(fmax(pmax[i - 1], smax[j + 1]),
				    fmax(imax, fmax(a, b)));
				ns = psum[i - 1] + a + isum + b + ssum[j + 1];
				if (!ring_better(nm, ns, cm, cs))
					continue;
				reverse(o, i, j);
				/* Guard against rounding in the sums. */
				if (!ring_better(ring_max(n, w, o),
				    ring_sum(n, w, o), cm, cs)) {
					reverse(o, i, j);
					continue;
				}
				improved = 1;
				moves++;
				break;
			}
		}
	}
	free(fw);
	free(pmax);
	free(psum);
	free(smax);
	free(ssum);
}

static void
ring_heuristic(int n, const double *w, const int *site, int *order)
{
	int *o = xcalloc((size_t)n, sizeof(int));
	int *nx = xcalloc((size_t)n + 1, sizeof(int));
	int starts = n <= RING_MULTISTART ? n : 1;
	double bm = HUGE_VAL, bs = HUGE_VAL;

	for (int s = 0; s < starts; s++) {
		double m, sum;

		ring_greedy(n, w, site, s, o, nx);
		m = ring_max(n, w, o);
		sum = ring_sum(n, w, o);
		if (s == 0 || ring_better(m, sum, bm, bs)) {
			bm = m;
			bs = sum;
			memcpy(order, o, (size_t)n * sizeof(int));
		}
	}
	ring_2opt(n, w, order);
	free(o);
	free(nx);
}

void
ring_order_hops(int n, const int *site,
    double (*hop_cost)(void *ctx, int i, int j), void *ctx, int *order)
{
	double *w;

	if (n <= 0)
		return;
	if (n <= 2) {
		for (int i = 0; i < n; i++)
			order[i] = i;
		return;
	}
	w = xcalloc((size_t)n * n, sizeof(double));
	/* Column by column: a router prices toward one destination at a time. */
	for (int j = 0; j < n; j++)
		for (int i = 0; i < n; i++)
			w[i * n + j] = i == j ? 0 : hop_cost(ctx, i, j);
	if (n <= RING_EXACT_MAX)
		ring_exact(n, w, order);
	else
		ring_heuristic(n, w, site, order);
	free(w);
}

/* The hop costs between the members of one ring, priced on demand. */
struct hops {
	const struct ring_spec *rs;
	int nd;			/* distinct nodes */
	int *node;		/* distinct node -> node index */
	int *slot;		/* member -> distinct node */
	double *cost;		/* nd x nd; < 0 until priced */
	int status;
	struct dl_err *e;
};

static double
hop(void *ctx, int i, int j)
{
	struct hops *h = ctx;
	int a = h->slot[i], b = h->slot[j];
	double *c = &h->cost[a * h->nd + b];

	if (*c >= 0 || h->status != DL_OK)
		return *c >= 0 ? *c : HUGE_VAL;
	if (!(h->rs->bytes > 0)) {
		*c = 0;
	} else {
		double t;

		h->status = h->rs->price(h->rs->ctx, h->node[a], h->node[b],
		    h->rs->bytes, &t, h->e);
		if (h->status == DL_OK)
			*c = t;
	}
	return *c >= 0 ? *c : HUGE_VAL;
}

static _Thread_local const struct ring_spec *sort_rs;

/* Members by site, then node index, then member (member 0 stays first). */
static int
cmp_member(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;
	int ni = sort_rs->node[i], nj = sort_rs->node[j];
	int si = sort_rs->c->nodes[ni].site_idx;
	int sj = sort_rs->c->nodes[nj].site_idx;

	if (si != sj)
		return si < sj ? -1 : 1;
	if (ni != nj)
		return ni < nj ? -1 : 1;
	return (i > j) - (i < j);
}

/* The cache key of rs: its bytes and its members' nodes. */
static char *
cache_key(const struct ring_spec *rs, size_t *len)
{
	char *key;

	*len = sizeof(double) + (size_t)rs->n * sizeof(int);
	key = xmalloc(*len);
	memcpy(key, &rs->bytes, sizeof(double));
	memcpy(key + sizeof(double), rs->node, (size_t)rs->n * sizeof(int));
	return key;
}

/* What a cache keeps of a ring: its order and its slowest hop. */
struct found {
	double slowest;
	int order[];
};

int
ring_order(const struct ring_spec *rs, int *order, double *slowest,
    struct dl_err *e)
{
	int n = rs->n;
	struct hops h;
	struct found *hit = NULL, *f;
	char *key = NULL;
	size_t klen = 0;
	double m = 0;

	if (slowest != NULL)
		*slowest = 0;
	if (n > RING_PRICED_MAX) {
		/*
		 * Ordering needs every pair's hop cost, n^2 priced flows; a
		 * large ring goes site by site, node by node instead, which
		 * keeps all but one hop per site inside a site.
		 */
		sort_rs = rs;
		for (int i = 0; i < n; i++)
			order[i] = i;
		qsort(order + 1, (size_t)n - 1, sizeof(int), cmp_member);
		return DL_OK;
	}
	/* The same members and size: the same order. */
	if (rs->cache != NULL) {
		key = cache_key(rs, &klen);
		hit = kc_find(rs->cache, key, klen);
	}
	if (hit != NULL) {
		memcpy(order, hit->order, (size_t)n * sizeof(int));
		if (slowest != NULL)
			*slowest = hit->slowest;
		free(key);
		return DL_OK;
	}
	h.rs = rs;
	h.nd = 0;
	h.node = xcalloc((size_t)n, sizeof(int));
	h.slot = xcalloc((size_t)n, sizeof(int));
	h.status = DL_OK;
	h.e = e;
	for (int i = 0, j; i < n; i++) {
		for (j = 0; j < h.nd; j++)
			if (h.node[j] == rs->node[i])
				break;
		if (j == h.nd)
			h.node[h.nd++] = rs->node[i];
		h.slot[i] = j;
	}
	h.cost = xcalloc((size_t)h.nd * (size_t)h.nd, sizeof(double));
	for (int i = 0; i < h.nd * h.nd; i++)
		h.cost[i] = -1;
	ring_order_hops(n, NULL, hop, &h, order);
	/* Above 2 members every hop was priced: h answers. */
	for (int k = 0; k < n && n > 2; k++)
		m = fmax(m, hop(&h, order[k], order[(k + 1) % n]));
	if (slowest != NULL && h.status == DL_OK)
		*slowest = m;
	if (key != NULL && h.status == DL_OK && rs->cache->n < RING_CACHE_MAX) {
		f = xmalloc(sizeof(*f) + (size_t)n * sizeof(int));
		f->slowest = m;
		memcpy(f->order, order, (size_t)n * sizeof(int));
		kc_put(rs->cache, key, klen, f);
	}
	free(key);
	free(h.cost);
	free(h.node);
	free(h.slot);
	return h.status;
}
