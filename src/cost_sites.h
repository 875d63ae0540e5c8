/*
 * cost_sites.h - the site bounds of the cost model: for every pair of
 * sites, the least latency and the widest bottleneck of any path between
 * them (dlplan(1) ALGORITHMS, Solver).  cost.h includes it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Any transfer of S bytes from site A to site B takes at least the least
 * latency plus 8 S over the widest bottleneck of any A-B path, whatever
 * the route, load and sharing.  A struct dl_sitebound caches those per
 * site pair: zero it before the first call, free it with
 * cost_sitebound_free().
 */
#ifndef DL_COST_SITES_H
#define DL_COST_SITES_H

#include <stddef.h>

#include "cluster.h"

struct dl_sitebound {
	double *lat;		/* nsites x nsites, seconds */
	double *bw;		/* nsites x nsites, Gbps (0: no path) */
};

/* Fill sb for cluster c (once; later calls do nothing). */
void cost_sitebound_init(struct dl_sitebound *sb, const struct dl_cluster *c);
/* That least time for bytes from site a to site b of the ns sites of an
 * initialised sb (HUGE_VAL when no path joins them). */
double cost_site_hop(const struct dl_sitebound *sb, size_t ns, size_t a,
    size_t b, double bytes);
void cost_sitebound_free(struct dl_sitebound *sb);

#endif
