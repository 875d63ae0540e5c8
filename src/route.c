/*
 * route.c - MDP routing of flows over the cluster network
 * (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One solve prices every vertex toward one destination b for one flow
 * size S under the current n_e: hop costs per edge and regime, D* by
 * Dijkstra on the cheapest regime of every edge, the acyclic MDP on the
 * states (v, l) with the admissible moves D*(u) < D*(v), value iteration
 * (mdp.c) and the policy.  A solve answers every source, so it is kept in
 * a small cache keyed by (b, S, generation of n_e); the generation moves
 * when a commit changes some n_e.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "gmc.h"
#include "kc.h"
#include "mdp.h"
#include "route.h"

/* Section 5.4 tolerances. */
#define VI_TOL		1e-12	/* convergence: 1e-12 (1 + C) */
#define TIE_TOL		1e-9	/* policy ties: 1e-9 (1 + C_best) */
#define UBAR_MAX	0.99	/* u_e(l) is clamped to [0, 0.99] */
#define CACHE_MAX	128	/* solves kept */
#define MEMO_BYTES	(16 << 20)	/* routes of committed flows kept */

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
	unsigned long long h1, h2;
};

/* A route kept in memo: what router_flow() returns and commits. */
struct memo_route {
	int np;			/* hops */
	double *Ca;		/* K expected times, one per start regime */
	int *first;		/* K first hops */
	int *pe;		/* np edges */
};

/* Regime of a mean utilisation m: floor(m K) clamped to [0, K - 1]. */
static int
regime_of(double m, int K)
{
	double l = floor(m * K);

	if (!(l >= 0))
		return 0;
	if (l > K - 1)
		return K - 1;
	return (int)l;
}

/* Index of step t in the sorted steps ts[0..n-1], or -1. */
static long
find_step(const long *ts, size_t n, long t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ts[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ts[lo] == t ? (long)lo : -1;
}

/* Regimes of the steps, Q, the start regime and u_e(l). */
static int
build_regimes(struct dl_router *r, int horizon, int method,
    struct dl_err *e)
{
	const struct dl_cluster *c = r->c;
	struct dl_series ms;
	int K = r->K, *reg, rc;
	double *sum;
	size_t *cnt;

	forecast_mean_link_series(c, &ms);
	r->nsteps = ms.n;
	reg = xcalloc(ms.n ? ms.n : 1, sizeof(int));
	for (size_t i = 0; i < ms.n; i++) {
		reg[i] = regime_of(ms.v[i], K);
		r->steps[reg[i]]++;
		if (i > 0)
			r->count[reg[i - 1] * K + reg[i]]++;
	}
	for (int l = 0; l < K; l++) {
		long row = 0;

		for (int m = 0; m < K; m++)
			row += r->count[l * K + m];
		for (int m = 0; m < K; m++)
			r->Q[l * K + m] = row == 0 ? (l == m) :
			    (double)r->count[l * K + m] / (double)row;
	}
	rc = forecast_mean(&ms, method, horizon, &r->forecast, e);
	if (rc != DL_OK) {
		char msg[sizeof(e->msg)];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		dl_seterr(e, rc, c->path_traffic, 0, 0, "mean link "
		    "utilisation: %s", msg);
		free(reg);
		forecast_series_free(&ms);
		return rc;
	}
	r->l0 = regime_of(r->forecast, K);

	sum = xcalloc((size_t)K, sizeof(double));
	cnt = xcalloc((size_t)K, sizeof(size_t));
	for (size_t k = 0; k < c->nedges; k++) {
		const struct dl_series *s = c->traffic ? &c->traffic[k] : NULL;
		double all = 0, mean;

		if (s == NULL || s->n == 0)
			continue;
		memset(sum, 0, (size_t)K * sizeof(double));
		memset(cnt, 0, (size_t)K * sizeof(size_t));
		for (size_t j = 0; j < s->n; j++) {
			long i = find_step(ms.t, ms.n, s->t[j]);
			int l = i >= 0 ? reg[i] : 0;

			sum[l] += s->v[j];
			cnt[l]++;
			all += s->v[j];
		}
		mean = all / (double)s->n;
		for (int l = 0; l < K; l++) {
			double u = cnt[l] ? sum[l] / (double)cnt[l] : mean;

			r->ubar[k * K + l] = u < 0 ? 0 : u > UBAR_MAX ?
			    UBAR_MAX : u;
		}
	}
	free(sum);
	free(cnt);
	free(reg);
	forecast_series_free(&ms);
	return DL_OK;
}

/* The nonzero entries of Q by row, in column order. */
static void
q_sparse(struct dl_router *r)
{
	int K = r->K, n = 0;

	r->qoff = xcalloc((size_t)K + 1, sizeof(int));
	r->qcol = xcalloc((size_t)K * K + 1, sizeof(int));
	r->qp = xcalloc((size_t)K * K + 1, sizeof(double));
	for (int l = 0; l < K; l++) {
		r->qoff[l] = n;
		for (int m = 0; m < K; m++)
			if (r->Q[l * K + m] != 0) {
				r->qcol[n] = m;
				r->qp[n++] = r->Q[l * K + m];
			}
	}
	r->qoff[K] = n;
}

static const struct dl_cluster *sort_c;

static int
cmp_by_dst(const void *a, const void *b)
{
	int x = sort_c->edges[*(const int *)a].dst;
	int y = sort_c->edges[*(const int *)b].dst;

	return (x > y) - (x < y);
}

/* The scratch of one solve, sized for r's network and regimes. */
static void
alloc_scratch(struct dl_router *r)
{
	size_t ne = r->c->nedges, nv = r->c->nverts, K = (size_t)r->K;

	r->cost = xcalloc(ne * K + 1, sizeof(double));
	r->dstar = xcalloc(nv + 1, sizeof(double));
	r->heapcap = ne + 2;
	r->heapv = xcalloc(r->heapcap, sizeof(int));
	r->heapd = xcalloc(r->heapcap, sizeof(double));
	r->act_off = xcalloc(nv * K + 1, sizeof(int));
	r->term = xcalloc(nv * K + 1, 1);
	r->pol = xcalloc(nv * K + 1, sizeof(int));
	r->acost = xcalloc(ne * K + 1, sizeof(double));
	r->act_edge = xcalloc(ne * K + 1, sizeof(int));
	r->tr_off = xcalloc(ne * K + 1, sizeof(int));
	r->tr_to = xcalloc(ne * K * K + 1, sizeof(int));
	r->tr_p = xcalloc(ne * K * K + 1, sizeof(double));
	r->touched = xcalloc(nv + 1, sizeof(int));
	r->head = xcalloc(nv + 1, sizeof(int));
	for (size_t v = 0; v < nv; v++)
		r->head[v] = -1;
	r->dstar_clean = 0;
	r->scratch.C = xcalloc(nv * K + 1, sizeof(double));
	r->scratch.E = xcalloc(nv * K + 1, sizeof(double));
	r->scratch.next = xcalloc(nv * K + 1, sizeof(int));
	r->scratch.D = xcalloc(nv + 1, sizeof(double));
}

/*
 * The vertices a path can only end at: every edge into or out of v joins
 * it to one neighbour w (a node hanging off its switch).  A path through
 * v would go w -> v -> w, and admissible moves lower D* strictly, so no
 * admissible path passes v unless it starts or ends there.
 */
static unsigned char *
find_stubs(const struct dl_cluster *c)
{
	unsigned char *stub = xcalloc(c->nverts + 1, 1);

	for (size_t v = 0; v < c->nverts; v++) {
		int w = -1, ok = c->out_off[v] < c->out_off[v + 1];

		for (size_t k = c->out_off[v]; ok && k < c->out_off[v + 1];
		    k++) {
			int u = c->edges[c->out_edge[k]].dst;

			if (w < 0)
				w = u;
			ok = u == w;
		}
		for (size_t k = c->in_off[v]; ok && k < c->in_off[v + 1]; k++)
			ok = c->edges[c->in_edge[k]].src == w;
		stub[v] = (unsigned char)ok;
	}
	return stub;
}

/* The neighbour of every stub, and the out-edges toward non-stubs. */
static void
stub_lists(struct dl_router *r)
{
	const struct dl_cluster *c = r->c;
	size_t nv = c->nverts, ne = c->nedges, n = 0;

	r->nb = xcalloc(nv + 1, sizeof(int));
	r->ns_off = xcalloc(nv + 1, sizeof(size_t));
	r->nspos = xcalloc(ne + 1, sizeof(int));
	r->allpos = xcalloc(ne + 1, sizeof(int));
	r->adm = xcalloc(ne + 1, sizeof(int));
	for (size_t j = 0; j < ne; j++)
		r->allpos[j] = (int)j;
	for (size_t v = 0; v < nv; v++) {
		r->nb[v] = -1;
		if (r->stub[v])
			r->nb[v] = c->edges[c->out_edge[c->out_off[v]]].dst;
		r->ns_off[v] = n;
		for (size_t j = c->out_off[v]; j < c->out_off[v + 1]; j++)
			if (!r->stub[c->edges[r->sout[j]].dst])
				r->nspos[n++] = (int)j;
	}
	r->ns_off[nv] = n;
	r->nsin_off = xcalloc(nv + 1, sizeof(size_t));
	r->nsin = xcalloc(ne + 1, sizeof(int));
	n = 0;
	for (size_t v = 0; v < nv; v++) {
		r->nsin_off[v] = n;
		for (size_t k = c->in_off[v]; k < c->in_off[v + 1]; k++)
			if (!r->stub[c->edges[c->in_edge[k]].src])
				r->nsin[n++] = c->in_edge[k];
	}
	r->nsin_off[nv] = n;
}

int
router_new(struct dl_router **rp, const struct dl_cluster *c,
    const struct dl_route_opts *o, struct dl_err *e)
{
	struct dl_router *r;
	int K, horizon;
	size_t ne = c->nedges, nv = c->nverts;
	int rc;

	*rp = NULL;
	K = o && o->states > 0 ? o->states : 3;
	horizon = o && o->horizon > 0 ? o->horizon : 1;
	if (o && (o->states < 0 || o->horizon < 0))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "regimes and "
		    "horizon must be positive");
	if (!c->has_traffic)
		K = 1;
	r = xcalloc(1, sizeof(*r));
	r->c = c;
	r->K = K;
	r->fast_ok = 1;
	r->steps = xcalloc((size_t)K, sizeof(size_t));
	r->count = xcalloc((size_t)K * K, sizeof(long));
	r->Q = xcalloc((size_t)K * K, sizeof(double));
	r->ubar = xcalloc(ne * K + 1, sizeof(double));
	r->ne = xcalloc(ne + 1, sizeof(int));
	for (size_t k = 0; k < ne; k++)
		r->ne[k] = 1;
	if ((rc = build_regimes(r, horizon, o ? o->forecast : 0, e)) != DL_OK) {
		router_free(r);
		return rc;
	}
	q_sparse(r);
	r->den = xcalloc(ne * K + 1, sizeof(double));
	r->lat = xcalloc(ne + 1, sizeof(double));
	r->dmax = xcalloc(ne + 1, sizeof(double));
	for (size_t k = 0; k < ne; k++) {
		const struct dl_edge *ed = &c->edges[k];

		r->lat[k] = ed->latency_ms / 1000;
		for (int l = 0; l < K; l++) {
			r->den[k * K + l] = ed->gbps * 1e9 *
			    (1 - r->ubar[k * K + l]);
			if (l == 0 || r->den[k * K + l] > r->dmax[k])
				r->dmax[k] = r->den[k * K + l];
		}
	}

	/* Out-edges in listing order of their destinations. */
	r->sout = xcalloc(ne + 1, sizeof(int));
	for (size_t v = 0; v < nv; v++) {
		size_t a = c->out_off[v], b = c->out_off[v + 1];

		memcpy(r->sout + a, c->out_edge + a, (b - a) * sizeof(int));
		sort_c = c;
		qsort(r->sout + a, b - a, sizeof(int), cmp_by_dst);
	}

	r->stub = find_stubs(c);
	stub_lists(r);
	alloc_scratch(r);
	*rp = r;
	return DL_OK;
}

int
router_clone(struct dl_router **rp, const struct dl_router *o)
{
	const struct dl_cluster *c = o->c;
	size_t ne = c->nedges, K = (size_t)o->K;
	struct dl_router *r = xcalloc(1, sizeof(*r));

	r->c = c;
	r->K = o->K;
	r->l0 = o->l0;
	r->forecast = o->forecast;
	r->nsteps = o->nsteps;
	r->fast_ok = o->fast_ok;
	r->dirty = o->dirty;
	r->gen = o->dirty ? ++r->gens : GEN_IDLE;
	r->h1 = o->h1;
	r->h2 = o->h2;
	r->steps = xmemdup(o->steps, K, sizeof(size_t));
	r->count = xmemdup(o->count, K * K, sizeof(long));
	r->Q = xmemdup(o->Q, K * K, sizeof(double));
	q_sparse(r);
	r->ubar = xmemdup(o->ubar, ne * K, sizeof(double));
	r->den = xmemdup(o->den, ne * K, sizeof(double));
	r->lat = xmemdup(o->lat, ne, sizeof(double));
	r->dmax = xmemdup(o->dmax, ne, sizeof(double));
	r->ne = xmemdup(o->ne, ne, sizeof(int));
	r->sout = xmemdup(o->sout, ne, sizeof(int));
	r->stub = xmemdup(o->stub, c->nverts, 1);
	stub_lists(r);
	alloc_scratch(r);
	*rp = r;
	return DL_OK;
}

void
router_free(struct dl_router *r)
{
	if (r == NULL)
		return;
	kc_free(&r->memo);
	for (int i = 0; i < r->ncache; i++) {
		free(r->cache[i].C);
		free(r->cache[i].E);
		free(r->cache[i].next);
		free(r->cache[i].D);
		free(r->cache[i].wr);
	}
	free(r->steps);
	free(r->count);
	free(r->Q);
	free(r->qoff);
	free(r->qcol);
	free(r->qp);
	free(r->ubar);
	free(r->den);
	free(r->lat);
	free(r->dmax);
	free(r->ne);
	free(r->sout);
	free(r->stub);
	free(r->nb);
	free(r->ns_off);
	free(r->nspos);
	free(r->allpos);
	free(r->adm);
	free(r->nsin_off);
	free(r->nsin);
	free(r->cost);
	free(r->dstar);
	free(r->heapv);
	free(r->heapd);
	free(r->act_off);
	free(r->term);
	free(r->pol);
	free(r->acost);
	free(r->act_edge);
	free(r->tr_off);
	free(r->tr_to);
	free(r->tr_p);
	free(r->touched);
	free(r->head);
	free(r->scratch.C);
	free(r->scratch.E);
	free(r->scratch.next);
	free(r->scratch.D);
	free(r);
}

void
router_reset(struct dl_router *r)
{
	/* Cached solves stay valid when no n_e has moved. */
	if (!r->dirty)
		return;
	for (size_t k = 0; k < r->c->nedges; k++)
		r->ne[k] = 1;
	r->dirty = 0;
	r->gen = GEN_IDLE;
	r->h1 = r->h2 = 0;
}

int
router_regime(const struct dl_router *r)
{
	return r->l0;
}

int
router_nregimes(const struct dl_router *r)
{
	return r->K;
}

void
router_info(const struct dl_router *r, struct dl_regime_info *ri)
{
	ri->nregimes = r->K;
	ri->start = r->l0;
	ri->forecast = r->forecast;
	ri->nsteps = r->nsteps;
	ri->steps = r->steps;
	ri->count = r->count;
	ri->q = r->Q;
	ri->ubar = r->ubar;
}

int
router_ne(const struct dl_router *r, int edge)
{
	return r->ne[edge];
}

void
router_fast_paths(struct dl_router *r, int on)
{
	r->fast_ok = on;
}

void
router_stats(const struct dl_router *r, struct dl_router_stats *st)
{
	*st = r->st;
}

double
router_hop_cost(const struct dl_router *r, int edge, int l, double bytes)
{
	/*
	 * latency + 8 S / (gbps 1e9 (1 - u) / n_e), with the parts that do
	 * not change from flow to flow computed once, the same way.
	 */
	if (r->c->edges[edge].from_switch)
		return r->lat[edge];
	return r->lat[edge] +
	    8 * bytes / (r->den[(size_t)edge * r->K + l] / r->ne[edge]);
}

/* A binary min-heap of (D, vertex) with lazy deletion. */
static void
heap_push(struct dl_router *r, size_t *n, double d, int v)
{
	size_t i = (*n)++;

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (r->heapd[p] <= d)
			break;
		r->heapd[i] = r->heapd[p];
		r->heapv[i] = r->heapv[p];
		i = p;
	}
	r->heapd[i] = d;
	r->heapv[i] = v;
}

static void
heap_pop(struct dl_router *r, size_t *n, double *d, int *v)
{
	double ld;
	int lv;
	size_t i = 0;

	*d = r->heapd[0];
	*v = r->heapv[0];
	ld = r->heapd[--*n];
	lv = r->heapv[*n];
	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= *n)
			break;
		if (k + 1 < *n && r->heapd[k + 1] < r->heapd[k])
			k++;
		if (ld <= r->heapd[k])
			break;
		r->heapd[i] = r->heapd[k];
		r->heapv[i] = r->heapv[k];
		i = k;
	}
	r->heapd[i] = ld;
	r->heapv[i] = lv;
}

/*
 * D*(v): the cheapest cost from v to b with every edge at its cheapest
 * regime (r->cost filled), by Dijkstra on the in-edges.
 */
static void
dijkstra(struct dl_router *r, int b)
{
	const struct dl_cluster *c = r->c;
	int K = r->K;
	size_t n = 0;

	r->dstar_clean = 0;
	for (size_t v = 0; v < c->nverts; v++)
		r->dstar[v] = HUGE_VAL;
	r->dstar[b] = 0;
	heap_push(r, &n, 0, b);
	while (n > 0) {
		double d;
		int u;

		heap_pop(r, &n, &d, &u);
		if (d > r->dstar[u])
			continue;
		for (size_t k = c->in_off[u]; k < c->in_off[u + 1]; k++) {
			int ed = c->in_edge[k], v = c->edges[ed].src;
			double w = r->cost[(size_t)ed * K], nd;

			for (int l = 1; l < K; l++)
				if (r->cost[(size_t)ed * K + l] < w)
					w = r->cost[(size_t)ed * K + l];
			nd = w + d;
			if (nd < r->dstar[v]) {
				r->dstar[v] = nd;
				heap_push(r, &n, nd, v);
			}
		}
	}
}

/*
 * E(v, .) from C(v, .): the sum is formed as value iteration forms it
 * inside an action's value (mdp.c), over the nonzero Q(l, l') in the same
 * order, so an action value
 * hop + E(u, l) is the same double as before.  Once per vertex rather
 * than once per edge into it: on a mesh, where a vertex has hundreds of
 * admissible successors, this is most of the pricing.
 */
static void
set_expect(const struct dl_router *r, struct solve *s, int v)
{
	int K = r->K;

	const double *C = s->C + (size_t)v * K;

	for (int l = 0; l < K; l++) {
		double sum = 0;

		for (int i = r->qoff[l]; i < r->qoff[l + 1]; i++)
			sum += r->qp[i] * C[r->qcol[i]];
		s->E[(size_t)v * K + l] = sum;
	}
}

/*
 * C(v, l) and pi(v, l) for every regime l of a settled vertex v, from the
 * values of its admissible successors (all settled before it): the action
 * values in listing order, as mdp.c forms them, and the policy the first
 * within the tie tolerance of the best.  D holds D* (a successor u is
 * admissible when D[u] < D[v]).
 */
static void
price_vertex(struct dl_router *r, struct solve *s, int v, double bytes,
    const double *D)
{
	const struct dl_cluster *c = r->c;
	int K = r->K, nadm = 0, b = s->b;
	double dv = D[v];
	const int *pos;
	int npos;

	/*
	 * The admissible successors, in listing order.  A stub other than b
	 * never is one (find_stubs()), so unless v is the switch of a stub b
	 * only the out-edges toward other vertices are looked at.
	 */
	if (r->stub[b] && r->nb[b] == v) {
		pos = r->allpos + c->out_off[v];
		npos = (int)(c->out_off[v + 1] - c->out_off[v]);
	} else {
		pos = r->nspos + r->ns_off[v];
		npos = (int)(r->ns_off[v + 1] - r->ns_off[v]);
	}
	for (int i = 0; i < npos; i++)
		if (D[c->edges[r->sout[pos[i]]].dst] < dv)
			r->adm[nadm++] = pos[i];
	for (int l = 0; l < K; l++) {
		double best = HUGE_VAL;
		int pick = -1;

		for (int i = 0; i < nadm; i++) {
			int j = r->adm[i], ed = r->sout[j];
			int u = c->edges[ed].dst;
			double val;

			val = router_hop_cost(r, ed, l, bytes) + 1 *
			    s->E[(size_t)u * K + l];
			r->acost[j] = val;
			if (val < best)
				best = val;
		}
		s->C[(size_t)v * K + l] = best;
		/* The policy: the first action value within the tolerance. */
		if (isfinite(best))
			for (int i = 0; i < nadm; i++)
				if (r->acost[r->adm[i]] - best <= TIE_TOL +
				    TIE_TOL * fabs(best)) {
					pick = r->sout[r->adm[i]];
					break;
				}
		s->next[(size_t)v * K + l] = pick;
	}
	set_expect(r, s, v);
}

/*
 * A cache slot to fill with a solve toward b: a free one, or the oldest,
 * taken off the list of its old destination.  It is on b's list, marked
 * as being filled (GEN_NONE) until the solve sets its generation.
 */
static struct solve *
cache_slot(struct dl_router *r, int b)
{
	size_t n = r->c->nverts * (size_t)r->K;
	struct solve *s;
	int i;

	if (r->ncache < CACHE_MAX) {
		i = r->ncache++;
		s = &r->cache[i];
		s->C = xcalloc(n, sizeof(double));
		s->E = xcalloc(n, sizeof(double));
		s->next = xcalloc(n, sizeof(int));
		s->D = xcalloc(r->c->nverts + 1, sizeof(double));
		s->wr = xcalloc(r->c->nverts + 1, sizeof(int));
		for (size_t v = 0; v < n; v++) {
			s->C[v] = NAN;
			s->next[v] = -1;
		}
	} else {
		int *pp;

		i = r->nextslot;
		r->nextslot = (r->nextslot + 1) % CACHE_MAX;
		s = &r->cache[i];
		for (pp = &r->head[s->b]; *pp != i; pp = &r->cache[*pp].link)
			;
		*pp = s->link;
		/* Only the vertices it priced are not NaN. */
		for (size_t w = 0; w < s->nwr; w++)
			for (int l = 0; l < r->K; l++) {
				s->C[(size_t)s->wr[w] * r->K + l] = NAN;
				s->next[(size_t)s->wr[w] * r->K + l] = -1;
			}
	}
	s->nwr = 0;
	s->b = b;
	s->gen = GEN_NONE;
	s->link = r->head[b];
	r->head[b] = i;
	return s;
}

/*
 * Price a stub a (sect. find_stubs()) in a solve that settled its only
 * neighbour w, as the solve would have: D*(a) the least of the relaxations
 * over a's edges to w, then C and pi from w's values.  Skipping stubs in
 * the solve changes nothing else, since no path passes them.  Returns 0
 * when w was not priced.
 */
static int
price_stub(struct dl_router *r, struct solve *s, int a, double bytes)
{
	const struct dl_cluster *c = r->c;
	size_t o = c->out_off[a];
	int w = c->edges[c->out_edge[o]].dst;
	double d = HUGE_VAL;

	if (isnan(s->C[(size_t)w * r->K]) || s->D[w] == HUGE_VAL)
		return 0;
	/* a's out-edges all end at w; Dijkstra relaxes each once. */
	for (size_t k = c->out_off[a]; k < c->out_off[a + 1]; k++) {
		int ed = c->out_edge[k];
		double x, nd;

		x = c->edges[ed].from_switch ? r->lat[ed] : r->lat[ed] +
		    8 * bytes / (r->dmax[ed] / r->ne[ed]);
		nd = x + s->D[w];
		if (nd < d)
			d = nd;
	}
	s->D[a] = d;
	price_vertex(r, s, a, bytes, s->D);
	s->wr[s->nwr++] = a;
	return 1;
}

/*
 * A cached solve toward b for this size, made under the current n_e,
 * that has priced vertex a (or can, when a is a stub).  Two solves that
 * fit hold the same values, so which one answers does not matter.
 */
static struct solve *
cache_find(struct dl_router *r, int a, int b, double bytes)
{
	for (int i = r->head[b]; i >= 0; i = r->cache[i].link) {
		struct solve *s = &r->cache[i];

		if (s->gen != r->gen || s->bytes != bytes)
			continue;
		if (!isnan(s->C[(size_t)a * r->K]))
			return s;
		if (r->stub[a] && a != b && price_stub(r, s, a, bytes))
			return s;
	}
	return NULL;
}

/* Price every vertex toward b for a flow of the given size. */
static int
solve(struct dl_router *r, int b, double bytes, struct solve **out,
    struct dl_err *e)
{
	const struct dl_cluster *c = r->c;
	int K = r->K, nact = 0, ntr = 0;
	struct mdp m;
	struct mdp_opts o;
	struct mdp_result res;
	struct solve *s;

	for (size_t k = 0; k < c->nedges; k++)
		for (int l = 0; l < K; l++)
			r->cost[k * K + l] = router_hop_cost(r, (int)k, l,
			    bytes);
	dijkstra(r, b);

	/* States (v, l) = v K + l; actions in listing order of u. */
	for (size_t v = 0; v < c->nverts; v++) {
		double dv = r->dstar[v];

		for (int l = 0; l < K; l++) {
			size_t st = v * K + l;

			r->act_off[st] = nact;
			r->term[st] = (int)v == b;
			if ((int)v == b || !isfinite(dv))
				continue;
			for (size_t j = c->out_off[v]; j < c->out_off[v + 1];
			    j++) {
				int ed = r->sout[j], u = c->edges[ed].dst;

				if (!(r->dstar[u] < dv))
					continue;
				r->acost[nact] = r->cost[(size_t)ed * K + l];
				r->act_edge[nact] = ed;
				r->tr_off[nact] = ntr;
				for (int l2 = 0; l2 < K; l2++) {
					double p = r->Q[l * K + l2];

					if (p == 0)
						continue;
					r->tr_to[ntr] = u * K + l2;
					r->tr_p[ntr] = p;
					ntr++;
				}
				nact++;
			}
		}
	}
	r->act_off[c->nverts * K] = nact;
	r->tr_off[nact] = ntr;

	m.nstates = (int)c->nverts * K;
	m.act_off = r->act_off;
	m.cost = r->acost;
	m.tr_off = r->tr_off;
	m.tr_to = r->tr_to;
	m.tr_p = r->tr_p;
	m.terminal = r->term;
	m.discount = 1;
	o.abs_tol = o.rel_tol = VI_TOL;
	o.tie_abs = o.tie_rel = TIE_TOL;
	/* The longest admissible path has at most |V| - 1 hops. */
	o.max_iter = (int)c->nverts + 1;

	s = cache_slot(r, b);
	/* Value iteration writes every state, even when it fails. */
	for (size_t v = 0; v < c->nverts; v++)
		s->wr[v] = (int)v;
	s->nwr = c->nverts;
	if (!mdp_solve(&m, &o, s->C, &res))
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "routing toward "
		    "'%s': value iteration did not converge in %d sweeps "
		    "(residual %g)", c->verts[b].id, res.iterations,
		    res.residual);
	mdp_policy(&m, &o, s->C, r->pol, NULL);
	for (size_t v = 0; v < c->nverts; v++)
		set_expect(r, s, (int)v);
	memcpy(s->D, r->dstar, c->nverts * sizeof(double));
	for (int st = 0; st < m.nstates; st++)
		s->next[st] = r->pol[st] < 0 ? -1 :
		    r->act_edge[r->act_off[st] + r->pol[st]];
	s->b = b;
	s->bytes = bytes;
	s->gen = r->gen;
	r->st.solves++;
	r->st.sweeps += res.iterations;
	*out = s;
	return DL_OK;
}

/*
 * The same values for the vertices a flow from a can reach, computed in
 * one pass.  Admissible moves lower D*, so the admissible graph is
 * acyclic and ascending D* is a topological order of it: Dijkstra from b,
 * stopped once a is settled, settles every vertex a can reach before a,
 * and each value only needs values settled before it.  Synchronous
 * sweeps reach this same fixed point, the same expression evaluated on
 * the same successor values in the same order, so the numbers are equal
 * to the last bit (test_route compares both).  Vertices not settled keep
 * C = NaN: the cache knows they were not priced.
 */
static int
solve_local(struct dl_router *r, int a, int b, double bytes, int stop,
    struct solve **out)
{
	const struct dl_cluster *c = r->c;
	int K = r->K;
	size_t n = 0, nset = 0, ntouch = 0;
	struct solve *s;
	int *order = r->pol;	/* scratch: settle order */

	/*
	 * A solve that stops at a is for a flow about to be committed, which
	 * invalidates every cached solve: it goes to a scratch slot that is
	 * never looked up, and only the entries it settles are written.
	 * Otherwise the whole network is priced into a cache slot, and every
	 * vertex not settled is NaN there.
	 */
	if (stop) {
		s = &r->scratch;
		s->b = b;
	} else {
		s = cache_slot(r, b);
	}
	if (!r->dstar_clean)
		for (size_t v = 0; v < c->nverts; v++)
			r->dstar[v] = HUGE_VAL;
	r->dstar[b] = 0;
	r->touched[ntouch++] = b;
	heap_push(r, &n, 0, b);
	while (n > 0) {
		double d;
		int u;

		heap_pop(r, &n, &d, &u);
		if (d > r->dstar[u])
			continue;
		order[nset++] = u;
		if (u == a && stop)
			break;
		/*
		 * No path from another source passes a stub: only the
		 * in-edges from other vertices are relaxed, and those from a
		 * when u is a's switch.  The cache prices stubs when they ask
		 * (price_stub()).
		 */
		const size_t *off = r->stub[a] && r->nb[a] == u ? c->in_off :
		    r->nsin_off;
		const int *lst = off == c->in_off ? c->in_edge : r->nsin;

		for (size_t k = off[u]; k < off[u + 1]; k++) {
			int ed = lst[k], v = c->edges[ed].src;
			double w, nd;

			if (r->stub[v] && v != a)
				continue;
			/*
			 * The cheapest regime's hop cost: the price only falls
			 * as den grows, so it is the price at the largest den,
			 * the same double as the least of the K prices.
			 */
			w = c->edges[ed].from_switch ? r->lat[ed] : r->lat[ed] +
			    8 * bytes / (r->dmax[ed] / r->ne[ed]);
			nd = w + d;
			if (nd < r->dstar[v]) {
				if (r->dstar[v] == HUGE_VAL)
					r->touched[ntouch++] = v;
				r->dstar[v] = nd;
				heap_push(r, &n, nd, v);
			}
		}
	}
	for (int l = 0; l < K; l++)
		s->C[(size_t)b * K + l] = 0;
	set_expect(r, s, b);
	for (size_t i = 0; i < nset; i++) {
		if (!stop)
			s->wr[s->nwr++] = order[i];
		s->D[order[i]] = r->dstar[order[i]];
		if (order[i] != b)
			price_vertex(r, s, order[i], bytes, r->dstar);
	}
	/* a was never settled: it cannot reach b; price it infinite. */
	if (r->dstar[a] == HUGE_VAL && !stop)
		s->wr[s->nwr++] = a;
	if (r->dstar[a] == HUGE_VAL)
		for (int l = 0; l < K; l++) {
			s->C[(size_t)a * K + l] = HUGE_VAL;
			s->next[(size_t)a * K + l] = -1;
		}
	if (r->dstar[a] == HUGE_VAL)
		set_expect(r, s, a);
	for (size_t i = 0; i < ntouch; i++)
		r->dstar[r->touched[i]] = HUGE_VAL;
	r->dstar_clean = 1;
	s->b = b;
	s->bytes = bytes;
	s->gen = r->gen;
	r->st.solves++;
	r->st.sweeps++;
	*out = s;
	return DL_OK;
}

/*
 * The fast path of a cluster without links.csv: every node reaches every
 * other through its site's implicit switch only (a -> sw -> b), so the
 * values are those value iteration would reach, computed directly with
 * the same arithmetic: C(sw, l) = latency of sw -> b, and
 * C(a, l) = cost(a -> sw, l) + sum_l' Q(l, l') C(sw, l').
 * Returns 0 when the flow is not such a flow.
 */
static int
fast_path(struct dl_router *r, int a, int b, double bytes, int *e1p,
    int *e2p, double *Ca)
{
	const struct dl_cluster *c = r->c;
	int K = r->K, e1, e2, sw;
	double lat;

	if (!r->fast_ok || c->has_links || c->verts[a].node < 0 || c->verts[b].node < 0)
		return 0;
	if (c->out_off[a + 1] - c->out_off[a] != 1)
		return 0;
	e1 = c->out_edge[c->out_off[a]];
	sw = c->edges[e1].dst;
	if (!c->verts[sw].implicit_switch || (e2 = cluster_edge(c, sw, b)) < 0)
		return 0;
	/* C(sw, l') = lat + sum of Q * 0 = lat in every regime. */
	lat = router_hop_cost(r, e2, 0, bytes);
	for (int l = 0; l < K; l++) {
		double sum = 0;

		for (int l2 = 0; l2 < K; l2++) {
			double p = r->Q[l * K + l2];

			if (p != 0)
				sum += p * lat;
		}
		Ca[l] = router_hop_cost(r, e1, l, bytes) + sum;
	}
	*e1p = e1;
	*e2p = e2;
	return 1;
}

/* A flow router_flow() and router_price() refuse, or DL_OK. */
static int
check_flow(const struct dl_router *r, int a, int b, double bytes,
    struct dl_err *e)
{
	const struct dl_cluster *c = r->c;

	if (a < 0 || b < 0 || (size_t)a >= c->nverts ||
	    (size_t)b >= c->nverts || a == b || !(bytes > 0) ||
	    !isfinite(bytes))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "bad flow: vertices "
		    "%d -> %d, %g bytes", a, b, bytes);
	return DL_OK;
}

/*
 * A solve toward b for this size that has priced a: a cached one, or one
 * made now (with stop, only as far as a flow from a reaches).
 */
static int
solve_for(struct dl_router *r, int a, int b, double bytes, int stop,
    struct solve **s, struct dl_err *e)
{
	if ((*s = cache_find(r, a, b, bytes)) != NULL) {
		r->st.cache_hits++;
		return DL_OK;
	}
	if (r->fast_ok) {
		solve_local(r, a, b, bytes, stop, s);
		return DL_OK;
	}
	return solve(r, b, bytes, s, e);
}

/*
 * Follow pi(., l0) from a to b with the regime held at l0, putting the
 * edges in pe (when not NULL; *np of them).  Every vertex on the way has
 * a policy once a has one, unless rounding made some hop too cheap to
 * lower D* (a dead end): no route either.
 */
static int
follow(const struct dl_router *r, const struct solve *s, int a, int b,
    int *pe, int *np, struct dl_err *e)
{
	const struct dl_cluster *c = r->c;

	for (int v = a; v != b;) {
		int ed = s->next[(size_t)v * r->K + r->l0];

		if (ed < 0)
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "no route "
			    "from '%s' to '%s' in the network",
			    c->verts[a].id, c->verts[b].id);
		if (pe != NULL)
			pe[(*np)++] = ed;
		v = c->edges[ed].dst;
	}
	return DL_OK;
}

/* A 64-bit mix of x (the finaliser of splitmix64). */
static unsigned long long
mix64(unsigned long long x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The key of flow a -> b of bytes under the current n_e, in buf. */
static size_t
memo_key(const struct dl_router *r, int a, int b, double bytes,
    char *buf)
{
	size_t n = 0;

	memcpy(buf + n, &r->h1, sizeof(r->h1));
	n += sizeof(r->h1);
	memcpy(buf + n, &r->h2, sizeof(r->h2));
	n += sizeof(r->h2);
	memcpy(buf + n, &a, sizeof(a));
	n += sizeof(a);
	memcpy(buf + n, &b, sizeof(b));
	n += sizeof(b);
	memcpy(buf + n, &bytes, sizeof(bytes));
	return n + sizeof(bytes);
}

static void
memo_free(void *p)
{
	struct memo_route *m = p;

	free(m->Ca);
	free(m->first);
	free(m->pe);
	free(m);
}

/* Keep the route of a flow about to be committed; past MEMO_BYTES the
 * memo starts over. */
static void
memo_put(struct dl_router *r, const char *key, size_t klen, int np,
    const int *pe, const double *Ca, const int *first)
{
	struct memo_route *m;
	size_t K = (size_t)r->K;

	if (r->memo_bytes > MEMO_BYTES) {
		kc_free(&r->memo);
		r->memo_bytes = 0;
	}
	r->memo.vfree = memo_free;
	m = xcalloc(1, sizeof(*m));
	m->np = np;
	m->Ca = xmemdup(Ca, K, sizeof(double));
	m->first = xmemdup(first, K, sizeof(int));
	m->pe = xmemdup(pe, (size_t)np + 1, sizeof(int));
	kc_put(&r->memo, key, klen, m);
	r->memo_bytes += sizeof(*m) + K * (sizeof(double) + sizeof(int)) +
	    ((size_t)np + 1) * sizeof(int) + 2 * klen + 64;
}

int
router_flow(struct dl_router *r, int a, int b, double bytes, int commit,
    struct dl_route *out, struct dl_err *e)
{
	const struct dl_cluster *c = r->c;
	int K = r->K, l0 = r->l0, e1, e2, *pe, np = 0;
	double *Ca = xcalloc((size_t)K, sizeof(double));
	int *first = xcalloc((size_t)K, sizeof(int));
	struct solve *s = NULL;
	struct memo_route *m;
	char key[64];
	size_t klen = 0;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	if ((rc = check_flow(r, a, b, bytes, e)) != DL_OK) {
		free(Ca);
		free(first);
		return rc;
	}
	r->st.flows++;
	pe = xcalloc(c->nverts, sizeof(int));
	if (fast_path(r, a, b, bytes, &e1, &e2, Ca)) {
		r->st.fast++;
		pe[np++] = e1;
		pe[np++] = e2;
		for (int l = 0; l < K; l++)
			first[l] = c->edges[e1].dst;
	} else if (commit && r->fast_ok && (m = kc_find(&r->memo, key,
	    klen = memo_key(r, a, b, bytes, key))) != NULL) {
		r->st.cache_hits++;
		np = m->np;
		memcpy(pe, m->pe, (size_t)np * sizeof(int));
		memcpy(Ca, m->Ca, (size_t)K * sizeof(double));
		memcpy(first, m->first, (size_t)K * sizeof(int));
	} else {
		if ((rc = solve_for(r, a, b, bytes, commit, &s,
		    e)) != DL_OK)
			goto fail;
		for (int l = 0; l < K; l++) {
			int ed = s->next[(size_t)a * K + l];

			Ca[l] = s->C[(size_t)a * K + l];
			first[l] = ed < 0 ? -1 : c->edges[ed].dst;
		}
		if ((rc = follow(r, s, a, b, pe, &np, e)) != DL_OK)
			goto fail;
		if (commit && r->fast_ok)
			memo_put(r, key, klen, np, pe, Ca, first);
	}
	if (commit) {
		for (int i = 0; i < np; i++) {
			r->ne[pe[i]]++;
			r->h1 += mix64((unsigned long long)pe[i] * 2 + 1);
			r->h2 += mix64((unsigned long long)pe[i] * 2 + 2 +
			    0x9e3779b97f4a7c15ULL);
		}
		r->dirty = 1;
		r->gen = ++r->gens;
	}
	if (out) {
		out->expected_s = Ca[l0];
		out->regime = l0;
		out->npath = (size_t)np + 1;
		out->path = xcalloc(out->npath, sizeof(int));
		out->path[0] = a;
		for (int i = 0; i < np; i++)
			out->path[i + 1] = c->edges[pe[i]].dst;
		out->nregimes = K;
		out->regime_s = Ca;
		out->first_hop = first;
	} else {
		free(Ca);
		free(first);
	}
	free(pe);
	return DL_OK;
fail:
	free(pe);
	free(Ca);
	free(first);
	return rc;
}

int
router_price(struct dl_router *r, int a, int b, double bytes, double *t,
    struct dl_err *e)
{
	int K = r->K, l0 = r->l0, e1, e2;
	double Ca[GMC_MAX_STATES];
	struct solve *s = NULL;
	int rc;

	if ((rc = check_flow(r, a, b, bytes, e)) != DL_OK)
		return rc;
	if (K > GMC_MAX_STATES)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "%d regimes: at most "
		    "%d", K, GMC_MAX_STATES);
	r->st.flows++;
	if (fast_path(r, a, b, bytes, &e1, &e2, Ca)) {
		r->st.fast++;
		*t = Ca[l0];
		return DL_OK;
	}
	if ((rc = solve_for(r, a, b, bytes, 0, &s, e)) != DL_OK ||
	    (rc = follow(r, s, a, b, NULL, NULL, e)) != DL_OK)
		return rc;
	*t = s->C[(size_t)a * K + l0];
	return DL_OK;
}

void
route_clear(struct dl_route *rt)
{
	if (rt == NULL)
		return;
	free(rt->path);
	free(rt->regime_s);
	free(rt->first_hop);
	memset(rt, 0, sizeof(*rt));
}
