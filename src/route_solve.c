/*
 * route_solve.c - one solve of the router toward a destination b for a
 * flow size S under the current n_e (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Hop costs per edge and regime, D* by Dijkstra on the cheapest regime of
 * every edge, the acyclic MDP on the states (v, l) with the admissible
 * moves D*(u) < D*(v), value iteration (mdp.c) and the policy; or the
 * same values in one pass in ascending D* (solve_local()).  A solve
 * answers every source, so it is kept in a small cache keyed by (b, S,
 * generation of n_e); the generation moves when a commit changes some
 * n_e.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dheap.h"
#include "mdp.h"
#include "route_int.h"

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
	dheap_push(r->heapd, r->heapv, &n, 0, b);
	while (n > 0) {
		double d;
		int u;

		dheap_pop(r->heapd, r->heapv, &n, &d, &u);
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
				dheap_push(r->heapd, r->heapv, &n, nd, v);
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
	dheap_push(r->heapd, r->heapv, &n, 0, b);
	while (n > 0) {
		double d;
		int u;

		dheap_pop(r->heapd, r->heapv, &n, &d, &u);
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
				dheap_push(r->heapd, r->heapv, &n, nd, v);
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
 * A solve toward b for this size that has priced a: a cached one, or one
 * made now (with stop, only as far as a flow from a reaches).
 */
int
route_solve_for(struct dl_router *r, int a, int b, double bytes, int stop,
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
