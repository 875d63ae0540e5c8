/*
 * cost_sites.c - the site bounds of the cost model (cost_sites.h): for
 * every pair of sites, the least latency and the widest bottleneck of any
 * path between them.  Split from cost.c, on its floor, when cost.c
 * reached the cap; cost.c uses it, never the other way round.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cost_sites.h"
#include "dheap.h"
#include "util.h"

/* A min-heap of (key, vertex) that grows as it needs (dheap.h). */
struct sheap {
	double *key;
	int *v;
	size_t cap;
};

static void
sheap_push(struct sheap *h, size_t *n, double key, int v)
{
	if (*n + 1 > h->cap) {
		size_t cap = h->cap;

		h->key = xgrow(h->key, &cap, *n + 1, sizeof(double));
		h->v = xgrow(h->v, &h->cap, *n + 1, sizeof(int));
	}
	dheap_push(h->key, h->v, n, key, v);
}

/*
 * For every pair of sites (A, B), over every path from a node of A to a
 * node of B: the least total latency (seconds) and the widest bottleneck
 * bandwidth (Gbps; an implicit switch forwards without serialising, so
 * its out-edges do not narrow a path).  Any transfer of S bytes between
 * the two sites then takes at least lat + 8 S / (bw 1e9), whatever the
 * route, load and sharing.  Dijkstra from all nodes of A at once, twice.
 */
static void
sites_init(struct dl_sitebound *sb, const struct dl_cluster *c)
{
	size_t ns = c->nsites, nv = c->nverts;
	double *d = xcalloc(nv, sizeof(double));
	unsigned char *done = xcalloc(nv, 1);
	struct sheap h = { 0 };

	sb->lat = xcalloc(ns * ns, sizeof(double));
	sb->bw = xcalloc(ns * ns, sizeof(double));
	for (size_t A = 0; A < ns; A++)
		for (int widest = 0; widest < 2; widest++) {
			size_t nh = 0;

			/* Keys are negated for the widest path: a min-heap. */
			for (size_t v = 0; v < nv; v++) {
				int n = c->verts[v].node;

				done[v] = 0;
				d[v] = widest ? -1 : HUGE_VAL;
				if (n >= 0 && c->nodes[n].site_idx == (int)A) {
					d[v] = widest ? HUGE_VAL : 0;
					sheap_push(&h, &nh, widest ? -d[v] : d[v],
					    (int)v);
				}
			}
			while (nh > 0) {
				double key;
				int u;

				dheap_pop(h.key, h.v, &nh, &key, &u);
				if (done[u])
					continue;
				done[u] = 1;
				for (size_t k = c->out_off[u];
				    k < c->out_off[u + 1]; k++) {
					const struct dl_edge *ed =
					    &c->edges[c->out_edge[k]];
					double w;

					if (widest) {
						w = fmin(d[u], ed->from_switch ?
						    HUGE_VAL : ed->gbps);
						if (w <= d[ed->dst])
							continue;
					} else {
						w = d[u] + ed->latency_ms / 1000;
						if (w >= d[ed->dst])
							continue;
					}
					d[ed->dst] = w;
					sheap_push(&h, &nh, widest ? -w : w,
					    ed->dst);
				}
			}
			for (size_t B = 0; B < ns; B++)
				(widest ? sb->bw : sb->lat)[A * ns + B] =
				    widest ? 0 : HUGE_VAL;
			for (size_t v = 0; v < nv; v++) {
				int n = c->verts[v].node;
				double *o;

				if (n < 0)
					continue;
				o = (widest ? sb->bw : sb->lat) + A * ns +
				    (size_t)c->nodes[n].site_idx;
				if (widest ? d[v] > *o : d[v] < *o)
					*o = d[v];
			}
		}
	free(d);
	free(done);
	free(h.key);
	free(h.v);
}

void
cost_sitebound_init(struct dl_sitebound *sb, const struct dl_cluster *c)
{
	if (sb->lat == NULL)
		sites_init(sb, c);
}

double
cost_site_hop(const struct dl_sitebound *sb, size_t ns, size_t a, size_t b,
    double bytes)
{
	size_t ab = a * ns + b;

	return sb->bw[ab] > 0 ? sb->lat[ab] + 8 * bytes / (sb->bw[ab] * 1e9) :
	    HUGE_VAL;
}

void
cost_sitebound_free(struct dl_sitebound *sb)
{
	free(sb->lat);
	free(sb->bw);
	sb->lat = sb->bw = NULL;
}
