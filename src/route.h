/*
 * route.h - MDP routing of flows over the cluster network (dlplan(1)
 * ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A router holds the regime model built from the cluster's traffic
 * history and, per directed edge, n_e: 1 + the flows of the current phase
 * already routed over it.  The cost model routes the flows of one phase
 * in order (largest first) with router_flow(..., commit = 1), after
 * router_reset() at the start of each phase.  The cluster must outlive
 * the router.
 *
 * The regimes, hop costs, admissible moves, value iteration (1e-12 (1 + C)
 * convergence) and the policy (first admissible successor in vertex
 * index order within 1e-9 (1 + C_best) of the best) are exactly those of
 * dlplan(1) ALGORITHMS, Routing; route.c says how.  One solve prices every
 * source toward one destination b for one size S under the current n_e, so it
 * is cached: flows (or queries) with the same b and S share it until a
 * commit changes some n_e.  In a cluster without links.csv a node-to-node
 * flow goes a -> sw.<site> -> b with no alternative, and is priced
 * without value iteration (the same bits).
 */
#ifndef DL_ROUTE_H
#define DL_ROUTE_H

#include "cluster.h"
#include "util.h"

struct dl_router;

struct dl_route_opts {
	int states;		/* K congestion regimes (default 3) */
	int horizon;		/* forecast steps for the start regime (1) */
	int forecast;		/* forecast method (fmethod.h): gmc */
};

struct dl_route {
	double expected_s;	/* tau(S, a->b) = C(a, l0) */
	int regime;		/* start regime l0 */
	size_t npath;
	int *path;		/* vertices a..b following pi(., l0) */
	int nregimes;
	double *regime_s;	/* C(a, l) per regime */
	int *first_hop;		/* pi(a, l) per regime: next vertex */
};

/*
 * The routing work of a search on c: the nodes that are not stubs (a
 * stub is joined to one neighbour only, like a node on its switch) times
 * the directed links between vertices that are not stubs.  A solve walks
 * those links, and a search solves toward every node it prices, so a
 * dense mesh of many nodes would be routed for minutes: plan, replan and
 * schedule refuse a network above ROUTE_WORK_MAX up front
 * (router_check_size(): DL_EDATA naming links.csv); a full mesh of 64
 * nodes is 64 x 4,032 = 258,048.  route and eval, whose work is one
 * solve per flow, take any size.
 */
#define ROUTE_WORK_MAX	262144
size_t router_work(const struct dl_cluster *c, size_t *nodes,
    size_t *links);
int router_check_size(const struct dl_cluster *c, struct dl_err *e);
int router_new(struct dl_router **r, const struct dl_cluster *c,
    const struct dl_route_opts *o, struct dl_err *e);
void router_free(struct dl_router *r);
/*
 * A second router over the same network, regimes and n_e as o, with
 * caches and scratch of its own: one per thread, since a router is not
 * safe to share.
 */
int router_clone(struct dl_router **r, const struct dl_router *o);
/* Start a new phase: every n_e = 1 (the cache survives when no n_e had
 * moved). */
void router_reset(struct dl_router *r);
/*
 * Price and route S bytes from vertex a to vertex b (a != b) under the
 * current n_e.  With commit, the edges of the path followed get n_e + 1.
 * out (may be NULL) receives the route; free it with route_clear().
 * No admissible path: DL_EINFEAS naming both ends.
 */
/*
 * The expected time router_flow(r, a, b, bytes, 0, ...) would report, in
 * *t, without building the route: the same errors, nothing committed.
 */
int router_price(struct dl_router *r, int a, int b, double bytes, double *t,
    struct dl_err *e);
int router_flow(struct dl_router *r, int a, int b, double bytes, int commit,
    struct dl_route *out, struct dl_err *e);
void route_clear(struct dl_route *rt);
/* The start regime and the number of regimes. */
int router_regime(const struct dl_router *r);
int router_nregimes(const struct dl_router *r);

/*
 * The regime model, for "route --regimes" and tests.  The pointers are
 * the router's and live as long as it does.
 */
struct dl_regime_info {
	int nregimes;		/* K: 1 without traffic.csv */
	int start;		/* l0 */
	double forecast;	/* GMC mean forecast of the mean utilisation */
	size_t nsteps;		/* steps of the mean-utilisation series */
	const size_t *steps;	/* per regime: steps classified in it */
	const long *count;	/* K x K transition counts, row-major */
	const double *q;	/* K x K, row-normalised (empty row: stays) */
	const double *ubar;	/* u_e(l) at [e * K + l], clamped [0, 0.99] */
};
void router_info(const struct dl_router *r, struct dl_regime_info *ri);

/* n_e of a directed edge in the current phase. */
int router_ne(const struct dl_router *r, int edge);

/*
 * The hop cost of an edge in regime l for a flow of the
 * given size under the current n_e: latency_ms / 1000 + 8 S / (gbps 1e9
 * (1 - u_e(l)) / n_e), or the latency alone out of an implicit switch.
 */
double router_hop_cost(const struct dl_router *r, int edge, int l,
    double bytes);

/* Work counters: flows priced, full solves, cache hits, fast paths
 * (implicit switch, no value iteration) and value-iteration sweeps. */
struct dl_router_stats {
	long flows, solves, cache_hits, fast, sweeps;
};
void router_stats(const struct dl_router *r, struct dl_router_stats *st);
/* Allow (1, the default) or forbid the implicit-switch fast path; tests
 * compare it with the full solve, which must give the same bits. */
void router_fast_paths(struct dl_router *r, int on);

/*
 * FLOWS.csv: flow,src,dst,mb (flow optional; without it, or for an empty
 * cell, the id is the row's number from 1 in file order).  Ids are
 * unique, src and dst are vertices of c and differ, 0 < mb <= 1e12.
 * Errors name the file, line and column, with the status of
 * csvin_read() or DL_EDATA.  flows_free() releases a loaded set.
 */
struct dl_flowreq {
	char *id;
	int src, dst;		/* vertex indices */
	double mb;		/* bytes = mb * 1e6 */
	long line;		/* in the file */
};
struct dl_flowset {
	char *path;
	struct dl_flowreq *flows;
	size_t n;		/* in file order */
};
extern const struct csv_schema dl_flows_schema;
int flows_load(struct dl_flowset *fs, const char *path,
    const struct dl_cluster *c, struct dl_err *e);
void flows_free(struct dl_flowset *fs);

#endif
