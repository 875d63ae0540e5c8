/*
 * ring.h - the order of a data-parallel sync ring (dlplan(1) ALGORITHMS,
 * Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A ring's members pass one hop of gradients each to the next, the last
 * back to the first; its time is set by the slowest hop.  ring_order()
 * orders the members to minimise that slowest hop (a bottleneck
 * travelling salesman): exactly up to 8 members, by a greedy start and
 * 2-opt above, and, above 64 members, where pricing every pair would cost
 * too much, site by site and node by node without pricing.  Member 0
 * always comes first.  The caller prices hops; nothing is printed.
 */
#ifndef DL_RING_H
#define DL_RING_H

#include "cluster.h"
#include "kc.h"
#include "util.h"

struct ring_spec {
	const struct dl_cluster *c;
	int n;			/* members */
	const int *node;	/* per member: its node (members may share) */
	double bytes;		/* one hop's transfer; <= 0: hops cost 0 */
	/*
	 * The time of a hop of bytes from node a to node b (a == b: inside
	 * the node) into *t: DL_OK, or an error in e, which ring_order()
	 * returns after ordering with the hops it could not price at
	 * HUGE_VAL.  Called at most once per ordered pair of the members'
	 * nodes.
	 */
	int (*price)(void *ctx, int a, int b, double bytes, double *t,
	    struct dl_err *e);
	void *ctx;
	/*
	 * Optional (NULL: none): orders already found, keyed by bytes and
	 * the members' nodes, so one cache must serve one price function.
	 * The cache owns its values (plain blocks) when its vfree is free.
	 */
	struct kcache *cache;
};

/*
 * Order the members of rs into order[] (n member indices, 0 first).  When
 * slowest is not NULL it receives the slowest hop of that order as
 * priced, or 0 when the order was made without prices (2 members or
 * fewer, or above 64).
 */
int ring_order(const struct ring_spec *rs, int *order, double *slowest,
    struct dl_err *e);

/*
 * The search behind ring_order() on n members with hop costs hop_cost(i,
 * j), which is called once for every ordered pair i != j before anything
 * else.  site: per member, its site (>= 0), or NULL; above 8 members the
 * greedy finishes a site before it leaves it, or without sites simply
 * takes the cheapest next hop.  Ties: below 9 members the
 * lexicographically first optimal order; above, the greedy takes the
 * lowest index among equally cheap hops and 2-opt accepts only a lower
 * slowest hop, or the same slowest hop with a lower total.
 */
void ring_order_hops(int n, const int *site,
    double (*hop_cost)(void *ctx, int i, int j), void *ctx, int *order);

#endif
