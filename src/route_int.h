/*
 * route_int.h - what the parts of the router share: its state, the solve
 * cache and the functions one part calls in another (route.c,
 * route_regime.c, route_solve.c).  Not for use outside them.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_ROUTE_INT_H
#define DL_ROUTE_INT_H

#include "kc.h"
#include "route.h"

/* Section 5.4 tolerances. */
#define VI_TOL		1e-12	/* convergence: 1e-12 (1 + C) */
#define TIE_TOL		1e-9	/* policy ties: 1e-9 (1 + C_best) */
#define UBAR_MAX	0.99	/* u_e(l) is clamped to [0, 0.99] */
#define CACHE_MAX	128	/* solves kept */

struct solve {
	int b;			/* -1: slot never filled */
	double bytes;
	unsigned long gen;
	double *C;		/* nverts * K: C(v, l); +inf: no route */
	double *E;		/* nverts * K: sum over l' of Q(l, l') C(v, l'),
				 * the expected cost-to-go of a move into v
				 * from regime l, set with C(v, .) */
	int *next;		/* nverts * K: edge of pi(v, l), or -1 */
	double *D;		/* nverts: D*(v) of the vertices priced */
	int link;		/* the next slot toward the same b, or -1 */
	int *wr;		/* the vertices priced (C not NaN) */
	size_t nwr;
};

/* The generation of a network with every n_e = 1. */
#define GEN_IDLE	0UL
/* A slot being filled. */
#define GEN_NONE	(~0UL)

struct dl_router {
	const struct dl_cluster *c;
	int K, l0;
	double forecast;
	size_t nsteps;
	size_t *steps;		/* K: steps of the mean series per regime */
	long *count;		/* K * K transition counts */
	double *Q;		/* K * K, row-normalised */
	int *qoff;		/* K + 1: row l's nonzero entries of Q are */
	int *qcol;		/* qcol[qoff[l] .. qoff[l + 1] - 1], in */
	double *qp;		/* ascending column order, values in qp */
	double *ubar;		/* nedges * K */
	double *den;		/* nedges * K: gbps 1e9 (1 - ubar), as in
				 * router_hop_cost() */
	double *lat;		/* nedges: latency in seconds */
	double *dmax;		/* nedges: the largest den over the regimes */
	int *ne;		/* per edge: 1 + flows committed this phase */
	int fast_ok;		/* implicit-switch fast path allowed */
	int dirty;		/* some n_e is not 1 */
	unsigned long gen;	/* GEN_IDLE when every n_e is 1, else a
				 * number new at every commit */
	unsigned long gens;	/* generations handed out */
	int *sout;		/* out-edges per vertex by destination index */
	unsigned char *stub;	/* per vertex: every edge in or out joins it
				 * to one neighbour, so no path passes it */
	int *nb;		/* per stub: that neighbour (else -1) */
	size_t *ns_off;		/* per vertex: its entries in nspos */
	int *nspos;		/* positions in sout of the out-edges toward
				 * vertices that are not stubs */
	int *allpos;		/* allpos[j] = j */
	int *adm;		/* scratch: admissible positions */
	size_t *nsin_off;	/* per vertex: its entries in nsin */
	int *nsin;		/* in-edges from vertices that are not stubs */
	struct dl_router_stats st;

	/* Scratch of one solve. */
	double *cost;		/* nedges * K */
	double *dstar;		/* nverts */
	int *heapv;
	double *heapd;
	size_t heapcap;
	int *act_off, *tr_off, *tr_to, *act_edge, *pol;
	double *acost, *tr_p;
	unsigned char *term;

	int *touched;		/* vertices whose dstar a local solve set */
	int dstar_clean;	/* every dstar is +inf */
	struct solve scratch;	/* a solve that stops at its source */

	struct solve cache[CACHE_MAX];
	int ncache, nextslot;
	int *head;		/* per vertex b: the first slot toward b */

	/*
	 * The routes of committed flows, by the state of n_e they were
	 * routed under and the flow (memo_key()).  A search prices many
	 * plans whose flows begin alike, and every commit invalidates the
	 * solves above, so without this each of them is solved anew: on a
	 * mesh of N nodes, a walk over N^2 links per flow.  The state is
	 * named by two sums over the committed hops of a 64-bit mix of the
	 * hop's edge, one per seed, so states with the same n_e have the
	 * same name whatever order the flows came in.
	 */
	struct kcache memo;
	size_t memo_bytes;
	int memo_on;		/* solves walk enough links to be worth it */
	unsigned long long h1, h2;
};

/* route_regime.c: the regimes of the steps, Q, the start regime and
 * u_e(l) (build_regimes), and Q's nonzero entries by row. */
int route_regimes_build(struct dl_router *r, int horizon, int method,
    struct dl_err *e);
void route_q_sparse(struct dl_router *r);

/* route_solve.c: a solve toward b for this size that has priced a: a
 * cached one, or one made now (with stop, only as far as a flow from a
 * reaches). */
int route_solve_for(struct dl_router *r, int a, int b, double bytes,
    int stop, struct solve **s, struct dl_err *e);

#endif
