/*
 * search_bound.c - a lower bound on the iteration time of every plan the
 * options allow, counting the pipeline fill, the pipeline transfers and
 * the sync rings (search_bound(), see search.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proof, for a plan of G groups (DESIGN.md 3 and 4).  Write mu for
 * the micro-batch, B for the global batch, W for the FLOPs of one sample
 * through every layer, s_U for the speed of unit U (the sum over its
 * GPUs) and S_g for the sum of s_U over the stages of group g.
 *
 * Fill.  sum_j t_j of a group is at least F0 = sum over layers l of the
 * least time any unit takes for l (compute and TP all-reduce are linear
 * in the layers a stage holds).  Every group has at least Smem stages,
 * Smem = ceil(P (param+grad+optimizer bytes) / the most memory of one
 * unit), and each of its Smem - 1 boundaries costs at least cmin, both
 * directions of the smallest activation over the widest link or NVLink.
 * Some stage holds a share W_j / s_j >= W / S_g of the work, and the
 * stage that holds the heaviest layer takes at least heavy, that layer's
 * least time on any unit, so with tau_g = max(mu W / S_g, heavy)
 *
 *	T_g >= F + (m_g - 1) tau_g,	F = F0 + (Smem - 1) cmin.
 *
 * Summing m_g - 1 <= (T - F) / tau_g over the groups gives
 * T >= F + (B - G mu) W / Scap, and m_g tau_g <= T_g gives
 * T >= B W / Scap, where Scap bounds the sum of mu W / tau_g: every GPU
 * of the cluster, at most G * min(L, max_stages) units as fast as the
 * fastest, and G mu W / heavy.
 *
 * Sync.  The group with the fewest stages has at most
 * Smin = min(L, max_stages, N / G) of them (the units are disjoint GPUs),
 * so one of its units holds at least P / Smin parameters and syncs them,
 * segment by segment, in rings of G members: R_q >= 2 (G - 1) h(P_q
 * grad_bytes / G) for the cheapest hop h a ring of G members must have.
 * With G at most the GPUs of one node that is a transfer over the widest
 * NVLink or link; with more, some hop leaves a node (at least the least
 * latency plus the bytes over the widest link); with more than the GPUs
 * of any site, some hop leaves a site (the site bound of cost.h).  h is
 * affine with a non-negative constant, so the segments of the unit sum
 * to at least 2 (G - 1) h(P grad_bytes / (G Smin)).
 *
 * T = max_g T_g + T_sync is at least the two together; the bound is the
 * least over every G the batch and the memory allow.
 */
#include <math.h>
#include <stdlib.h>

#include "search.h"

/* The widest TP degree the options allow on node n, as the units of
 * search_make_units() have it (max_tp is a power of two). */
static int
widest_tp(const struct dl_costctx *x, int n)
{
	int k = x->o->max_tp;

	while (k > x->c->nodes[n].gpus)
		k /= 2;
	return k;
}

/*
 * F0: per layer, the least stage time of any unit, summed; *heavy: the
 * largest of them (the stage that holds that layer takes at least this
 * long on whichever unit it runs).
 */
static double
fill_compute(const struct dl_costctx *x, double *heavy)
{
	int L = (int)x->m->nlayers;
	double f = 0;

	*heavy = 0;

	for (int l = 0; l < L; l++) {
		double best = HUGE_VAL;

		for (size_t n = 0; n < x->c->nnodes; n++)
			for (int k = 1; k <= widest_tp(x, (int)n); k *= 2)
				best = fmin(best, cost_stage_compute(x,
				    (int)n, k, l, l));
		f += best;
		*heavy = fmax(*heavy, best);
	}
	return f;
}

struct netb {
	double bw_any;		/* widest NVLink or link, Gbps */
	double bw_net;		/* widest link, Gbps */
	double lat_net;		/* least link latency, s */
	long node_gpus;		/* most GPUs on one node */
	long site_gpus;		/* most GPUs in one site */
	struct dl_sitebound sb;
};

/* site_n: the GPUs of each site. */
static void
netb_init(const struct dl_costctx *x, const long *site_n, struct netb *nb)
{
	const struct dl_cluster *c = x->c;

	nb->bw_any = nb->bw_net = 0;
	nb->lat_net = HUGE_VAL;
	nb->node_gpus = nb->site_gpus = 0;
	for (size_t n = 0; n < c->nnodes; n++) {
		nb->bw_any = fmax(nb->bw_any, c->nodes[n].intra_gbps);
		if (c->nodes[n].gpus > nb->node_gpus)
			nb->node_gpus = c->nodes[n].gpus;
	}
	for (size_t s = 0; s < c->nsites; s++)
		if (site_n[s] > nb->site_gpus)
			nb->site_gpus = site_n[s];
	for (size_t i = 0; i < c->nedges; i++) {
		nb->lat_net = fmin(nb->lat_net, c->edges[i].latency_ms / 1000);
		/* An implicit switch's out-edges cost their latency only. */
		if (!c->edges[i].from_switch)
			nb->bw_net = fmax(nb->bw_net, c->edges[i].gbps);
	}
	nb->bw_any = fmax(nb->bw_any, nb->bw_net);
	if (nb->lat_net == HUGE_VAL)
		nb->lat_net = 0;
	nb->sb.lat = nb->sb.bw = NULL;
	if (c->nsites > 1)
		cost_sitebound_init(&nb->sb, c);
}

/* Which hops a ring may use (bound_groups()). */
enum { RING_ANY, RING_SITE, RING_CROSS };

/* The cheapest hop of bytes from one site to another. */
static double
cross_hop(const struct dl_costctx *x, const struct netb *nb, double bytes)
{
	size_t ns = x->c->nsites;
	double h = HUGE_VAL;

	for (size_t a = 0; a < ns; a++)
		for (size_t b = 0; b < ns; b++)
			if (a != b)
				h = fmin(h, cost_site_hop(&nb->sb, ns, a, b,
				    bytes));
	return h;
}

/*
 * The cheapest hop of bytes that a ring of G members must have: any hop
 * while G fits on one node, one that leaves a node while G fits in one
 * site (or the ring stays in one: RING_SITE), else one that leaves a
 * site (always, for RING_CROSS).
 */
static double
ring_hop(const struct dl_costctx *x, const struct netb *nb, int ring,
    long G, double bytes)
{
	double h;

	if (ring != RING_CROSS && G <= nb->node_gpus)
		return nb->bw_any > 0 ? 8 * bytes / (nb->bw_any * 1e9) : 0;
	if (ring == RING_SITE || (ring == RING_ANY && (G <= nb->site_gpus ||
	    x->c->nsites < 2)))
		return nb->bw_net > 0 ? nb->lat_net + 8 * bytes /
		    (nb->bw_net * 1e9) : 0;
	h = cross_hop(x, nb, bytes);
	return h == HUGE_VAL ? 0 : h;
}

/* What every class of plans shares (search_bound()). */
struct bctx {
	const struct dl_costctx *x;
	struct netb nb;
	double W, P, B, mu, F, umax;
	double heavy;		/* the heaviest layer on its fastest unit */
	long M, Smem, Lmax;
};

/*
 * The least bound over G of the plans whose units have at most speed S
 * in all and N GPUs, whose rings use hops of kind ring, and, when span >
 * 0, whose groups outside the fastest site each have a pipeline hop
 * between sites that costs at least span per micro-batch.
 */
static double
bound_groups(const struct bctx *b, double S, long N, int ring, double span,
    double site_speed)
{
	const struct dl_opts *o = b->x->o;
	long Gmax = b->M < N / b->Smem ? b->M : N / b->Smem;
	double best = HUGE_VAL;

	for (long G = ring == RING_CROSS ? 2 : 1; G <= Gmax; G++) {
		double cap = fmin(S, (double)G * (double)b->Lmax * b->umax), t;
		long Smin = N / G < b->Lmax ? N / G : b->Lmax;

		/* A group runs at most one micro-batch per heavy. */
		if (b->heavy > 0)
			cap = fmin(cap, (double)G * b->mu * b->W / b->heavy);
		/* A group with a hop between sites runs at most 1/span. */
		if (span > 0)
			cap = fmin(cap, site_speed + (double)G * b->mu * b->W /
			    span);
		t = fmax(b->B * b->W / cap, b->F + (b->B - (double)G * b->mu) *
		    b->W / cap);
		if (G > 1)
			t += 2 * (double)(G - 1) * ring_hop(b->x, &b->nb, ring, G,
			    b->P * o->grad_bytes / ((double)G * (double)Smin));
		best = fmin(best, t);
	}
	return best;
}

double
search_bound(const struct dl_costctx *x, const struct search_opts *so)
{
	const struct dl_cluster *c = x->c;
	const struct dl_opts *o = x->o;
	int L = (int)x->m->nlayers;
	size_t ns = c->nsites;
	long N = 0, *site_n;
	double capmax = 0, amin = HUGE_VAL, *site_s, smax = 0, best, span;
	double bytes = o->param_bytes + o->grad_bytes + o->optimizer_bytes;
	struct bctx b;

	b.x = x;
	b.M = o->global_batch / o->micro_batch;
	if (L < 1 || b.M < 1 || x->speed_total <= 0)
		return 0;
	b.W = cost_range_flops(x, 0, L - 1);
	b.P = cost_range_params(x, 0, L - 1);
	b.B = (double)o->global_batch;
	b.mu = (double)o->micro_batch;
	b.umax = 0;
	site_n = xcalloc(ns ? ns : 1, sizeof(long));
	site_s = xcalloc(ns ? ns : 1, sizeof(double));
	for (size_t n = 0; n < c->nnodes; n++) {
		int k = widest_tp(x, (int)n);

		N += c->nodes[n].gpus;
		site_n[c->nodes[n].site_idx] += c->nodes[n].gpus;
		site_s[c->nodes[n].site_idx] += c->nodes[n].gpus * x->speed[n];
		b.umax = fmax(b.umax, k * x->speed[n]);
		capmax = fmax(capmax, k * cost_gpu_capacity(x, (int)n));
	}
	b.Lmax = o->max_stages > 0 && o->max_stages < L ? o->max_stages : L;
	if (so->strategy == STRAT_DP)
		b.Lmax = 1;
	b.Smem = capmax > 0 ? (long)ceil(bytes * b.P / capmax) : 1;
	if (b.Smem < 1)
		b.Smem = 1;
	if (so->strategy == STRAT_PP)
		b.M = 1;	/* one group: G <= 1 */
	if (b.Smem > b.Lmax || b.umax <= 0) {
		free(site_n);
		free(site_s);
		return 0;	/* no plan fits: nothing to bound */
	}
	for (int l = 0; l + 1 < L; l++)
		amin = fmin(amin, x->m->layers[l].act_mb * 1e6);
	netb_init(x, site_n, &b.nb);
	b.F = fill_compute(x, &b.heavy);
	if (b.Smem > 1 && amin < HUGE_VAL && b.nb.bw_any > 0)
		b.F += (double)(b.Smem - 1) * 2 * 8 * b.mu * amin /
		    (b.nb.bw_any * 1e9);
	if (ns < 2) {
		best = bound_groups(&b, x->speed_total, N, RING_ANY, 0, 0);
	} else {
		/*
		 * Three classes cover every plan.  (a) Its units lie in one
		 * site.  (b) Groups of one site each, in two sites or more:
		 * every ring has a hop between sites.  (c) Some groups have a
		 * pipeline hop between sites, which takes at least span per
		 * micro-batch, and the other groups lie in one site.
		 */
		best = HUGE_VAL;
		for (size_t s = 0; s < ns; s++) {
			best = fmin(best, bound_groups(&b, site_s[s], site_n[s],
			    RING_SITE, 0, 0));
			smax = fmax(smax, site_s[s]);
		}
		best = fmin(best, bound_groups(&b, x->speed_total, N,
		    RING_CROSS, 0, 0));
		span = amin < HUGE_VAL ? 2 * cross_hop(x, &b.nb, b.mu * amin) :
		    HUGE_VAL;
		best = fmin(best, bound_groups(&b, x->speed_total, N, RING_ANY,
		    span < HUGE_VAL ? span : 0, smax));
	}
	cost_sitebound_free(&b.nb.sb);
	free(site_n);
	free(site_s);
	return best == HUGE_VAL ? 0 : best;
}
