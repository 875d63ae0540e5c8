/*
 * route.c - MDP routing of flows over the cluster network
 * (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The router's life and its answers: router_new() and its relatives,
 * router_flow() and router_price() over the solves of route_solve.c, the
 * routes of committed flows kept by the state they were routed under,
 * and the size a search may route (router_check_size()).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gmc.h"
#include "route_int.h"

#define MEMO_BYTES	(16 << 20)	/* routes of committed flows kept */
/*
 * Below this many links between vertices that are not stubs a solve is
 * cheaper than keeping its route: 4,096 GPUs of gen-cluster2.py (56 such
 * links) planned 10 % slower with the memo; a 30-node mesh (870) 20 %
 * faster.
 */
#define MEMO_LINKS	512

/* A route kept in memo: what router_flow() returns and commits. */
struct memo_route {
	int np;			/* hops */
	double *Ca;		/* K expected times, one per start regime */
	int *first;		/* K first hops */
	int *pe;		/* np edges */
};

static _Thread_local const struct dl_cluster *sort_c;

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

/* The nodes and the directed links that no stub ends. */
static void
core_counts(const struct dl_cluster *c, const unsigned char *stub,
    size_t *nodes, size_t *links)
{
	*nodes = *links = 0;
	for (size_t k = 0; k < c->nedges; k++)
		*links += !stub[c->edges[k].src] && !stub[c->edges[k].dst];
	for (size_t v = 0; v < c->nverts; v++)
		*nodes += c->verts[v].node >= 0 && !stub[v];
}

size_t
router_work(const struct dl_cluster *c, size_t *nodes, size_t *links)
{
	unsigned char *stub = find_stubs(c);

	core_counts(c, stub, nodes, links);
	free(stub);
	return *nodes * *links;
}

int
router_check_size(const struct dl_cluster *c, struct dl_err *e)
{
	size_t nodes, links;

	if (router_work(c, &nodes, &links) <= ROUTE_WORK_MAX)
		return DL_OK;
	return dl_seterr(e, DL_EDATA, c->path_links, 0, 0, "a mesh too dense "
	    "to search: %zu nodes joined to more than one vertex x %zu links "
	    "between such vertices = %zu, at most %d (a full mesh of 64 "
	    "nodes); join nodes through switches (dlplan-formats(5), "
	    "links.csv)", nodes, links, nodes * links, ROUTE_WORK_MAX);
}

int
router_new(struct dl_router **rp, const struct dl_cluster *c,
    const struct dl_route_opts *o, struct dl_err *e)
{
	struct dl_router *r;
	int K, horizon;
	size_t ne = c->nedges, nv = c->nverts, nodes, links;
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
	if ((rc = route_regimes_build(r, horizon, o ? o->forecast : 0, e)) != DL_OK) {
		router_free(r);
		return rc;
	}
	route_q_sparse(r);
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
	core_counts(c, r->stub, &nodes, &links);
	r->memo_on = links >= MEMO_LINKS;
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
	r->memo_on = o->memo_on;
	r->gen = o->dirty ? ++r->gens : GEN_IDLE;
	r->h1 = o->h1;
	r->h2 = o->h2;
	r->steps = xmemdup(o->steps, K, sizeof(size_t));
	r->count = xmemdup(o->count, K * K, sizeof(long));
	r->Q = xmemdup(o->Q, K * K, sizeof(double));
	route_q_sparse(r);
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
	} else if (commit && r->memo_on && r->fast_ok && (m = kc_find(
	    &r->memo, key, klen = memo_key(r, a, b, bytes, key))) != NULL) {
		r->st.cache_hits++;
		np = m->np;
		memcpy(pe, m->pe, (size_t)np * sizeof(int));
		memcpy(Ca, m->Ca, (size_t)K * sizeof(double));
		memcpy(first, m->first, (size_t)K * sizeof(int));
	} else {
		if ((rc = route_solve_for(r, a, b, bytes, commit, &s,
		    e)) != DL_OK)
			goto fail;
		for (int l = 0; l < K; l++) {
			int ed = s->next[(size_t)a * K + l];

			Ca[l] = s->C[(size_t)a * K + l];
			first[l] = ed < 0 ? -1 : c->edges[ed].dst;
		}
		if ((rc = follow(r, s, a, b, pe, &np, e)) != DL_OK)
			goto fail;
		if (commit && r->memo_on && r->fast_ok)
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
	if ((rc = route_solve_for(r, a, b, bytes, 0, &s, e)) != DL_OK ||
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
