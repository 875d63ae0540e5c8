/*
 * search_bound.c - a lower bound on the iteration time of every plan the
 * options allow, counting the pipeline fill, the pipeline transfers and
 * the sync rings (search_bound(), see search.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The proof, for a plan of G groups (src/DESIGN-NOTES, dlplan(1) ALGORITHMS,
 * Cost model).  Write mu for the micro-batch, B for the global batch, W for
 * the FLOPs of one sample through every layer, s_U for the speed of unit U
 * (the sum over its GPUs) and S_g for the sum of s_U over the stages of group
 * g.
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
 *	T_g >= F + (m_g - 1) beta tau_g,	F = F0 + (Smem - 1) cmin,
 *
 * where beta is the least backward share of a stage's time (cost.h,
 * bwd_min): in 1F1B, one micro-batch's way down the pipeline and back to
 * the stage q that takes tau_g, then q's other m_g - 1 backwards, is a
 * path of the schedule; and so is the way to q, all of q's 2 m_g passes
 * and the way back, so T_g >= m_g tau_g too.
 *
 * Summing m_g - 1 <= (T - F) / (beta tau_g) over the groups gives
 * T >= F + beta (B - G mu) W / Scap, and m_g tau_g <= T_g gives
 * T >= B W / Scap, where Scap bounds the sum of mu W / tau_g: every GPU
 * of the cluster, the G * min(L, max_stages) fastest units there can be
 * (struct bclass), and G mu W / heavy.  A second bound counts the fill
 * of every stage against the units' speeds (struct fillfn), derived for
 * T'_g = sum_j t_j + (T_g - sum_j t_j) / beta >= T_g / beta, which meets
 * the inequality with tau_g in full: beta times it bounds T.  The larger
 * of the two holds.
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
 * least over every G the batch and the memory allow, and on a cluster of
 * several sites the least over classes of plans that together hold every
 * plan (bound_sites()).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_bound_int.h"

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

/*
 * The fill of every stage.  Write tau_g for the longest t_j of group g
 * and x_u = t_u / tau_g (in [0, 1]) for the stage on unit u, whose
 * layers run at most e_u FLOP/s (the fastest rate any layer reaches on
 * a unit of that size on that node, TP all-reduce included; or, counting
 * only the layers of rho_R or more, the rate of rho_R: struct leancand).
 * Then
 * T_g >= sum_j t_j + (m_g - 1) tau_g, sum_j t_j = tau_g sum_u x_u and
 * mu W <= tau_g sum_u e_u x_u, so
 *
 *	m_g - 1 <= (T - sum_j t_j) / tau_g <= sum_u x_u (T e_u / (mu W) - 1)
 *
 * and, summed over the groups, M - G <= sum_u x_u (T e_u / (mu W) - 1).
 * Every group has a unit with x_u = 1 (the one that takes tau_g), so
 * sum_u x_u >= G, and for any lambda >= 0
 *
 *	M - G <= sum_u x_u (T e_u / (mu W) - 1 + lambda) - lambda G
 *	      <= Phi_lambda(T) - lambda G,
 *
 * where Phi_lambda adds for every node its GPUs times the best of
 * (T e_k / (mu W) - 1 + lambda) / k over the unit sizes k it allows, or
 * 0 (units of one node are at most its GPUs; x_u = 1 where the term is
 * positive).  Every stage beyond the first of a group costs one
 * micro-batch of its own time; lambda = 1 is T_lb over effective speeds,
 * lambda = 0 counts every unit's fill.  Phi_lambda is convex, piecewise
 * linear and non-decreasing in T; struct fillfn keeps its pieces so that
 * the least T with Phi_lambda(T) >= M - (1 - lambda) G is a binary
 * search, and the bound takes the best of a few lambda.
 */
struct fillfn {
	size_t n;		/* pieces */
	double *t;		/* piece j starts at t[j] (t[0] = 0) */
	double *a, *c;		/* on it Phi(T) = a[j] T + c[j] */
	double *phi;		/* Phi(t[j]) */
};

struct fillev {
	double t, da, dc;
};

static int
fillev_cmp(const void *pa, const void *pb)
{
	const struct fillev *a = pa, *b = pb;

	return (a->t > b->t) - (a->t < b->t);
}

/*
 * Layers by their TP all-reduce bytes per FLOP, rho.  A stage's time per
 * FLOP of a layer is 1 / (k s) + rho times a constant of its unit, so
 * the layers of rho at least rho_R (FLOPs W_R in all) take a unit at
 * least their FLOPs over the rate of the layer of rho_R, whatever else
 * the unit holds: the argument below holds with W_R for W and that rate
 * for e_u, for every rho_R.  struct leancand lists the first NRHO
 * distinct rho_R that leave out at most half of the FLOPs.
 */
#define NRHO 4
#define NTP 4			/* unit sizes 1, 2, 4, 8 */
struct leancand {
	int n;
	int layer[NRHO];	/* the layer that sets the rate */
	double W[NRHO];		/* W_R */
	/*
	 * slope[r][n * NTP + i]: g e / (k mu W_R) for the units of k = 2^i
	 * GPUs of node n (g GPUs), i < ntp[n]: the lines of Phi before
	 * lambda moves them.
	 */
	double *slope[NRHO];
	int *ntp;
};

static _Thread_local const double *sort_key;

/* Indices (long) by sort_key[], then by index. */
static int
key_cmp(const void *pa, const void *pb)
{
	long a = *(const long *)pa, b = *(const long *)pb;

	if (sort_key[a] != sort_key[b])
		return sort_key[a] < sort_key[b] ? -1 : 1;
	return (a > b) - (a < b);
}

static void
leancand_init(struct leancand *lc, const struct dl_costctx *x)
{
	int L = (int)x->m->nlayers, n = 0;
	long *idx = xcalloc((size_t)(L ? L : 1), sizeof(long));
	double *rho = xcalloc((size_t)(L ? L : 1), sizeof(double));
	double W = 0, left;

	for (int l = 0; l < L; l++) {
		double f = cost_range_flops(x, l, l);

		if (f > 0) {
			rho[l] = cost_range_tp(x, l, l) / f;
			idx[n++] = l;
			W += f;
		}
	}
	sort_key = rho;
	qsort(idx, (size_t)n, sizeof(long), key_cmp);
	lc->n = 0;
	left = W;
	for (int i = 0; i < n && lc->n < NRHO && left >= W / 2; i++) {
		if (i == 0 || rho[idx[i]] != rho[idx[i - 1]]) {
			lc->layer[lc->n] = (int)idx[i];
			lc->W[lc->n++] = left;
		}
		left -= cost_range_flops(x, (int)idx[i], (int)idx[i]);
	}
	free(idx);
	free(rho);
	lc->ntp = xcalloc(x->c->nnodes ? x->c->nnodes : 1, sizeof(int));
	for (size_t nd = 0; nd < x->c->nnodes; nd++)
		for (int k = 1; k <= widest_tp(x, (int)nd); k *= 2)
			lc->ntp[nd]++;
	for (int r = 0; r < lc->n; r++) {
		int l = lc->layer[r];
		double mu = (double)x->o->micro_batch;
		double f = mu * cost_range_flops(x, l, l);

		lc->slope[r] = xcalloc(x->c->nnodes ? x->c->nnodes * NTP : 1,
		    sizeof(double));
		for (size_t nd = 0; nd < x->c->nnodes; nd++)
			for (int i = 0, k = 1; i < lc->ntp[nd]; i++, k *= 2) {
				/* The rate rounded up a little, to stay a
				 * bound. */
				double e = f / cost_stage_compute(x, (int)nd, k,
				    l, l) * (1 + 1e-12);

				lc->slope[r][nd * NTP + (size_t)i] =
				    x->c->nodes[nd].gpus * e / (k * mu *
				    lc->W[r]);
			}
	}
}

static void
leancand_free(struct leancand *lc)
{
	for (int r = 0; r < lc->n; r++)
		free(lc->slope[r]);
	free(lc->ntp);
}

/*
 * Phi_lambda over the nodes with in_class[n] (NULL: every node), whose
 * lines before lambda are slope[] of struct leancand.
 */
static void
fillfn_init(struct fillfn *ff, const struct dl_cluster *c,
    const unsigned char *in_class, const double *slope, const int *ntp,
    double lambda)
{
	size_t nev = 0, cap = 16;
	struct fillev *ev = xreallocarray(NULL, cap, sizeof(*ev));
	double a = 0, cc = 0;

	memset(ff, 0, sizeof(*ff));
	for (size_t n = 0; n < c->nnodes; n++) {
		double la[NTP], lc[NTP], cand[16], prev_a = 0, prev_c = 0;
		int nl = ntp[n], nc = 0;

		if (in_class != NULL && !in_class[n])
			continue;
		for (int i = 0; i < nl; i++) {
			la[i] = slope[n * NTP + (size_t)i];
			lc[i] = c->nodes[n].gpus * (lambda - 1) / (1 << i);
		}
		/* Where the upper envelope of the lines and 0 may bend. */
		for (int i = 0; i < nl; i++) {
			cand[nc++] = fmax(0, -lc[i] / la[i]);
			for (int j = i + 1; j < nl; j++)
				if (la[i] != la[j] && (lc[j] - lc[i]) /
				    (la[i] - la[j]) > 0)
					cand[nc++] = (lc[j] - lc[i]) /
					    (la[i] - la[j]);
		}
		qsort(cand, (size_t)nc, sizeof(double), cmp_double);
		for (int i = 0; i < nc; i++) {
			/* The line on top just after cand[i]. */
			double tt = i + 1 < nc && cand[i + 1] > cand[i] ?
			    (cand[i] + cand[i + 1]) / 2 : cand[i] * 2 + 1;
			double ba = 0, bc = 0, bv = 0;

			if (i + 1 < nc && cand[i + 1] == cand[i])
				continue;
			for (int j = 0; j < nl; j++)
				if (la[j] * tt + lc[j] > bv) {
					bv = la[j] * tt + lc[j];
					ba = la[j];
					bc = lc[j];
				}
			if (ba == prev_a && bc == prev_c)
				continue;
			if (nev == cap)
				ev = xreallocarray(ev, cap *= 2, sizeof(*ev));
			ev[nev].t = cand[i];
			ev[nev].da = ba - prev_a;
			ev[nev++].dc = bc - prev_c;
			prev_a = ba;
			prev_c = bc;
		}
	}
	qsort(ev, nev, sizeof(*ev), fillev_cmp);
	ff->t = xreallocarray(NULL, nev + 1, sizeof(double));
	ff->a = xreallocarray(NULL, nev + 1, sizeof(double));
	ff->c = xreallocarray(NULL, nev + 1, sizeof(double));
	ff->phi = xreallocarray(NULL, nev + 1, sizeof(double));
	ff->t[0] = ff->a[0] = ff->c[0] = ff->phi[0] = 0;
	ff->n = 1;
	for (size_t i = 0; i < nev; i++) {
		a += ev[i].da;
		cc += ev[i].dc;
		if (i + 1 < nev && ev[i + 1].t == ev[i].t)
			continue;
		ff->t[ff->n] = ev[i].t;
		ff->a[ff->n] = a;
		ff->c[ff->n] = cc;
		ff->phi[ff->n] = fmax(0, a * ev[i].t + cc);
		ff->n++;
	}
	free(ev);
}

static void
fillfn_free(struct fillfn *ff)
{
	free(ff->t);
	free(ff->a);
	free(ff->c);
	free(ff->phi);
}

/* The least T with Phi(T) >= y (0 for y <= 0 or no Phi; HUGE_VAL: never). */
static double
fillfn_time(const struct fillfn *ff, double y)
{
	size_t lo = 0, hi;

	if (y <= 0 || ff->n == 0)
		return 0;
	/* The last piece that starts below y. */
	hi = ff->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ff->phi[mid] < y)
			lo = mid;
		else
			hi = mid;
	}
	if (ff->a[lo] <= 0)
		return HUGE_VAL;
	return fmax(ff->t[lo], (y - ff->c[lo]) / ff->a[lo]);
}

/* Phi_lambda for the lambdas and rho_R the bound tries, over one class of
 * nodes. */
#define NLAMBDA 5
struct fillset {
	int n;			/* rho_R tried */
	struct fillfn f[NRHO][NLAMBDA];
};

static double
lambda_of(int i)
{
	return (double)i / (NLAMBDA - 1);
}

static void
fillset_init(struct fillset *fs, const struct dl_cluster *c,
    const unsigned char *in_class, const struct leancand *lc)
{
	fs->n = lc->n;
	for (int r = 0; r < lc->n; r++)
		for (int i = 0; i < NLAMBDA; i++)
			fillfn_init(&fs->f[r][i], c, in_class, lc->slope[r],
			    lc->ntp, lambda_of(i));
}

static void
fillset_free(struct fillset *fs)
{
	for (int r = 0; r < fs->n; r++)
		for (int i = 0; i < NLAMBDA; i++)
			fillfn_free(&fs->f[r][i]);
}

/* The least T that M micro-batches in G groups need, by the fill. */
static double
fillset_time(const struct fillset *fs, long M, long G)
{
	double t = 0;

	for (int r = 0; r < fs->n; r++)
		for (int i = 0; i < NLAMBDA; i++)
			t = fmax(t, fillfn_time(&fs->f[r][i], (double)M -
			    (1 - lambda_of(i)) * (double)G));
	return t;
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

/*
 * Which hops a ring may use (bound_groups()): any; none out of its site;
 * one between sites; one out of site "site" to another of "sites".
 */
enum { RING_ANY, RING_SITE, RING_CROSS, RING_EXIT };

struct ringspec {
	int kind;
	size_t site;			/* RING_EXIT */
	const unsigned char *sites;	/* RING_EXIT: the sites in use */
	double punit;	/* parameters of the unit that syncs; < 0: P / Smin */
};

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
 * site (always, for RING_CROSS; out of rs->site for RING_EXIT).
 */
static double
ring_hop(const struct dl_costctx *x, const struct netb *nb,
    const struct ringspec *rs, long G, double bytes)
{
	int ring = rs->kind;
	double h = HUGE_VAL;

	if ((ring == RING_ANY || ring == RING_SITE) && G <= nb->node_gpus)
		return nb->bw_any > 0 ? 8 * bytes / (nb->bw_any * 1e9) : 0;
	if (ring == RING_SITE || (ring == RING_ANY && (G <= nb->site_gpus ||
	    x->c->nsites < 2)))
		return nb->bw_net > 0 ? nb->lat_net + 8 * bytes /
		    (nb->bw_net * 1e9) : 0;
	if (ring == RING_EXIT) {
		for (size_t s = 0; s < x->c->nsites; s++)
			if (s != rs->site && rs->sites[s])
				h = fmin(h, cost_site_hop(&nb->sb,
				    x->c->nsites, rs->site, s, bytes));
	} else
		h = cross_hop(x, nb, bytes);
	return h == HUGE_VAL ? 0 : h;
}

/* What every class of plans shares (search_bound()). */
struct bctx {
	const struct dl_costctx *x;
	struct netb nb;
	double W, P, B, mu, F, pmin;
	double amin;		/* the least activation a boundary sends */
	double heavy;		/* the heaviest layer on its fastest unit */
	long M, Mall, Smem, Lmax;
	struct leancand lc;
};

/*
 * The nodes a class of plans may use.  A unit lies in one node and has
 * at most the widest TP degree of it, so cut every node into chunks of
 * that many GPUs: any X units of a plan are together at most as fast as
 * the X fastest chunks.
 */
struct bclass {
	double S;		/* the speed of its GPUs */
	long N;			/* its GPUs */
	double *top;		/* top[i]: the i + 1 fastest chunks together */
	size_t ntop;
	struct fillset fs;
};

/* in: which nodes (NULL: all). */
static void
bclass_init(struct bclass *cl, const struct bctx *b, const unsigned char *in)
{
	const struct dl_costctx *x = b->x;
	const struct dl_cluster *c = x->c;
	size_t cap = 0;

	cl->S = 0;
	cl->N = 0;
	cl->ntop = 0;
	cl->top = NULL;
	for (size_t n = 0; n < c->nnodes; n++) {
		int k = widest_tp(x, (int)n);

		if (in != NULL && !in[n])
			continue;
		cl->S += c->nodes[n].gpus * x->speed[n];
		cl->N += c->nodes[n].gpus;
		for (int left = c->nodes[n].gpus; left > 0; left -= k) {
			if (cl->ntop == cap)
				cl->top = xreallocarray(cl->top, cap = cap ?
				    2 * cap : 64, sizeof(double));
			cl->top[cl->ntop++] = (left < k ? left : k) *
			    x->speed[n];
		}
	}
	if (cl->ntop > 0) {
		qsort(cl->top, cl->ntop, sizeof(double), cmp_double_desc);
		for (size_t i = 1; i < cl->ntop; i++)
			cl->top[i] += cl->top[i - 1];
	}
	fillset_init(&cl->fs, c, in, &b->lc);
}

static void
bclass_free(struct bclass *cl)
{
	free(cl->top);
	fillset_free(&cl->fs);
}

/*
 * What a class knows of its groups besides its nodes (bound_groups()).
 * Sites: when topsite is set, the groups that lie in one site use at
 * most G - in_minus sites, so they are at most as fast as that many of
 * the fastest (topsite[i]: the i + 1 fastest together).  Span: when
 * span > 0, every other group has a pipeline hop between sites that
 * costs at least span per micro-batch, so runs at most one micro-batch
 * per span; with no topsite, the groups in one site are at most
 * site_speed fast.  Where those hops share links, rate[G] bounds the
 * sum over G such groups of one over their hop's cost (span_rates()),
 * at most G / span.  all_span: every group has such a hop, so at least
 * two units.
 */
struct bshape {
	double span, site_speed;
	const double *rate;	/* span > 0: rate[G] (span_rates()) */
	int all_span;		/* every group has a hop between sites */
	const double *topsite;
	size_t nsite;
	long in_minus;
};

/*
 * The least bound over G of the plans of class cl whose rings use hops
 * as rs says and whose groups are as sh says.  With pipe and tot (M + 1
 * entries each, HUGE_VAL where G is not possible), the bound on the
 * pipeline time and on T for each G.
 */
static double
bound_groups(const struct bctx *b, const struct bclass *cl,
    const struct ringspec *rs, const struct bshape *sh, double *pipe,
    double *tot)
{
	const struct dl_opts *o = b->x->o;
	long smin = sh->all_span && b->Smem < 2 ? 2 : b->Smem;
	long Gmax = b->M < cl->N / smin ? b->M : cl->N / smin;
	double best = HUGE_VAL;
	int cross = rs->kind == RING_CROSS || rs->kind == RING_EXIT;

	if (cl->ntop == 0)
		return HUGE_VAL;
	for (long G = cross ? 2 : 1; G <= Gmax; G++) {
		/* At most G Lmax units, none faster than its chunk. */
		double units = (double)G * (double)b->Lmax;
		double cap = fmin(cl->S, cl->top[units < (double)cl->ntop ?
		    (size_t)units - 1 : cl->ntop - 1]), t, pu;
		long Smin = cl->N / G < b->Lmax ? cl->N / G : b->Lmax;

		/* A group runs at most one micro-batch per heavy. */
		if (b->heavy > 0)
			cap = fmin(cap, (double)G * b->mu * b->W / b->heavy);
		if (sh->topsite != NULL || sh->span > 0) {
			double in_site = sh->site_speed;
			long k = G - sh->in_minus;

			if (sh->topsite != NULL)
				in_site = k < 1 ? 0 : sh->topsite[(size_t)k <
				    sh->nsite ? (size_t)k - 1 : sh->nsite - 1];
			/* A group with a hop between sites runs at most
			 * one micro-batch per that hop's cost. */
			cap = fmin(cap, sh->span > 0 ? in_site + b->mu *
			    b->W * sh->rate[G] : in_site);
		}
		t = fmax(b->B * b->W / cap, b->F + b->x->bwd_min * (b->B -
		    (double)G * b->mu) * b->W / cap);
		t = fmax(t, b->x->bwd_min * fillset_time(&cl->fs, b->Mall, G));
		if (pipe != NULL)
			pipe[G] = t;
		pu = rs->punit >= 0 ? rs->punit : b->P / (double)Smin;
		/* An overlapped sync may hide whole: sync_floor 0. */
		if (G > 1 && b->x->sync_floor > 0)
			t += 2 * (double)(G - 1) * ring_hop(b->x, &b->nb, rs, G,
			    pu * o->grad_bytes / (double)G);
		if (tot != NULL)
			tot[G] = t;
		best = fmin(best, t);
	}
	return best;
}

/* The most G the relaxation raises (up to 13 programs each). */
#define BOUND_LP_GROUPS 64

/*
 * Raise the bound of the plans inside one site (the nodes with in[n];
 * NULL: all, on a one-site cluster) with the linear relaxations of
 * search_bound_lp.c.  The bound is the least over G of tot[G]; G = 1
 * rises to what the relaxation of one group proves, and each G from 2
 * on to what the relaxation of the sync proves, taken in the order of
 * tot and only while tot is below the least so far.  least: that least,
 * as bound_groups() returned it; *raised: whether a relaxation set the
 * result.  Nothing is raised above cap (HUGE_VAL: no cap), the least
 * bound of other plans: the result, still a bound, is then at least
 * min(cap, the raised bound), which is all the caller keeps.
 */
static double
bound_raise(const struct bctx *b, const unsigned char *in,
    const double *pipe, const double *tot, double least, double cap,
    int *raised)
{
	struct bound_lp *B;
	long *ord, n = 0;
	double u;

	*raised = 0;
	if (least >= cap || (B = bound_lp_new(b->x, in)) == NULL)
		return least;
	ord = xcalloc((size_t)b->M + 1, sizeof(long));
	for (long G = 2; G <= b->M; G++)
		if (tot[G] < HUGE_VAL)
			ord[n++] = G;
	sort_key = tot;
	qsort(ord, (size_t)n, sizeof(long), key_cmp);
	u = tot[1];
	if (u < HUGE_VAL && u < cap)
		u = fmax(u, bound_lp_one(B, b->Mall));
	u = fmin(u, cap);
	for (long i = 0; i < n; i++) {
		long G = ord[i];
		double p1 = fmin(u, 4 * tot[G]);

		if (tot[G] >= u)
			break;
		if (i == BOUND_LP_GROUPS) {
			/* The rest keep their bound. */
			u = fmin(u, tot[G]);
			break;
		}
		u = fmin(u, fmax(tot[G], bound_lp_time(B, G, b->Mall,
		    pipe[G], p1, u)));
	}
	free(ord);
	bound_lp_free(B);
	*raised = u > least;
	return u;
}

/*
 * The bound of the plans on the nodes with in[n] (NULL: all, on a
 * one-site cluster), their rings inside that site: bound_groups()'s,
 * raised by bound_raise() up to cap (*raised as it says).
 */
static double
bound_in_site(const struct bctx *b, const unsigned char *in, double cap,
    int *raised)
{
	struct ringspec rs = { RING_SITE, 0, NULL, -1 };
	struct bshape sh = { 0, 0, NULL, 0, NULL, 0, 0 };
	double *pipe = xcalloc((size_t)b->M + 1, sizeof(double));
	double *tot = xcalloc((size_t)b->M + 1, sizeof(double));
	struct bclass cl;
	double v;

	for (long G = 0; G <= b->M; G++)
		pipe[G] = tot[G] = HUGE_VAL;
	bclass_init(&cl, b, in);
	v = bound_groups(b, &cl, &rs, &sh, pipe, tot);
	bclass_free(&cl);
	v = bound_raise(b, in, pipe, tot, v, cap, raised);
	free(pipe);
	free(tot);
	return v;
}

struct site_ord {
	double exit;		/* least latency to another site */
	size_t s;
};

static int
site_ord_cmp(const void *pa, const void *pb)
{
	const struct site_ord *a = pa, *b = pb;

	if (a->exit != b->exit)
		return (a->exit > b->exit) - (a->exit < b->exit);
	return (a->s > b->s) - (a->s < b->s);
}

/* The speeds of the sites with in[s], fastest first, summed (ts[i]: the
 * i + 1 fastest together); returns how many. */
static size_t
top_sites(const double *site_s, const unsigned char *in, size_t ns,
    double *ts)
{
	size_t n = 0;

	for (size_t s = 0; s < ns; s++)
		if (in == NULL || in[s])
			ts[n++] = site_s[s];
	qsort(ts, n, sizeof(double), cmp_double_desc);
	for (size_t i = 1; i < n; i++)
		ts[i] += ts[i - 1];
	return n;
}

/*
 * Pipeline hops between sites share the links out of a site.  Label
 * every vertex with a site (cluster_site_labels(): a node with its own,
 * any other with the site of the node nearest to it).  Whatever the labels, a path from a node of site s to a
 * node of another site takes an edge from s's label to another, one of
 * E_s.  A flow of S bytes over edge e that n - 1 flows of its phase took
 * before costs at least latency_e + 8 S n / gbps_e there (its 1/n of the
 * free bandwidth, at most gbps_e; an implicit switch's edge its latency).
 * Which flows took e is known where a flow's price is the cost of the
 * path it loads: with one congestion regime, and with several where E_s
 * is one edge, which every path out of s takes.  There the flows out of
 * s that first leave its label by e cost at least latency_e + 8 S j /
 * gbps_e, j = 1, 2, ...; elsewhere a flow out of s costs at least the
 * least of latency_e + 8 S / gbps_e over E_s.  And every one at least h,
 * the least cost of a flow alone between two sites (cross_hop()).
 *
 * A group with a hop between sites sends a flow each way, out of two
 * sites.  Each flow waits on the lane of the stage that receives it
 * (pipesched.h), once per micro-batch, so the group runs at most one
 * micro-batch per the larger of the two costs.  Sort the least costs the
 * flows out of all sites can take, x_1 <= x_2 <= ...: the 2G flows of G
 * such groups cost at least x_1 .. x_2G, one each, and the i-th smallest
 * of the groups' larger costs is at least x_2i, so the sum over those
 * groups of one over their larger cost is at most rate[G] = sum over
 * i <= G of 1 / x_2i.  S is the least activation of a micro-batch;
 * without sharing every x is h and rate[G] = G / h.
 * Returns rate[0 .. M], to free.
 */
struct spangen {
	double lat, slope;	/* x_j = max(lat + slope j, h) */
	long j;			/* the next j */
};

static double *
span_rates(const struct bctx *b, double h)
{
	const struct dl_cluster *c = b->x->c;
	double S = b->mu * b->amin, *rate, *xs;
	int *label = xcalloc(c->nverts ? c->nverts : 1, sizeof(int));
	struct spangen *gen = xcalloc(c->nedges + c->nsites + 1,
	    sizeof(*gen));
	size_t ngen = 0, nx = 2 * (size_t)b->M;
	int shared = b->x->router != NULL &&
	    router_nregimes(b->x->router) == 1;

	cluster_site_labels(c, label);
	for (size_t s = 0; s < c->nsites; s++) {
		size_t first = ngen, nout = 0;
		double least = HUGE_VAL;

		for (size_t i = 0; i < c->nedges; i++) {
			const struct dl_edge *e = &c->edges[i];
			double slope;

			if (label[e->src] != (int)s || label[e->dst] < 0 ||
			    label[e->dst] == (int)s)
				continue;
			slope = e->from_switch || !(e->gbps > 0) ? 0 :
			    8 * S / (e->gbps * 1e9);
			gen[ngen].lat = e->latency_ms / 1000;
			gen[ngen].slope = slope;
			gen[ngen++].j = 1;
			least = fmin(least, e->latency_ms / 1000 + slope);
			nout++;
		}
		if (nout > 1 && !shared) {
			/* One cost for every flow out of s. */
			ngen = first;
			gen[ngen].lat = least;
			gen[ngen].slope = 0;
			gen[ngen++].j = 1;
		}
	}
	xs = xcalloc(nx ? nx : 1, sizeof(double));
	for (size_t i = 0; i < nx; i++) {
		size_t best = 0;
		double v = HUGE_VAL;

		for (size_t k = 0; k < ngen; k++) {
			double w = gen[k].lat + gen[k].slope * (double)gen[k].j;

			if (w < v) {
				v = w;
				best = k;
			}
		}
		if (ngen > 0)
			gen[best].j++;
		xs[i] = fmax(v, h);
	}
	rate = xcalloc((size_t)b->M + 1, sizeof(double));
	for (long G = 1; G <= b->M; G++) {
		double pair = xs[2 * G - 1];

		rate[G] = rate[G - 1] + (pair > 0 ? 1 / pair : HUGE_VAL);
	}
	free(label);
	free(gen);
	free(xs);
	return rate;
}

/*
 * Raise class (a) below, site by site, with the relaxations of
 * search_bound_lp.c: one[s] is the bound of the plans inside site s as
 * bound_groups() has it, cls[] every class's.  Only what can lower the
 * least of all classes is raised: the sites in the order of one[], each
 * capped at the least bound of everything else (the other classes, the
 * sites raised so far and the sites not yet taken).  in: scratch, a
 * flag per node.  Returns whether a raised site now sets the least.
 */
static int
raise_sites(const struct bctx *b, const double *one, unsigned char *in,
    double *cls)
{
	const struct dl_cluster *c = b->x->c;
	size_t ns = c->nsites;
	long *ord = xcalloc(ns, sizeof(long));
	double *val = xcalloc(ns, sizeof(double)), rest = HUGE_VAL, best;
	int lp = 0;

	for (int i = 0; i < BOUND_NCLASS; i++)
		if (i != BOUND_ONE_SITE)
			rest = fmin(rest, cls[i]);
	for (size_t s = 0; s < ns; s++) {
		ord[s] = (long)s;
		val[s] = one[s];
	}
	sort_key = one;
	qsort(ord, ns, sizeof(long), key_cmp);
	for (size_t j = 0; j < ns; j++) {
		size_t s = (size_t)ord[j];
		double cap = rest;
		int raised;

		for (size_t i = 0; i < ns; i++)
			if (i != s)
				cap = fmin(cap, val[i]);
		if (one[s] >= cap)
			break;	/* and so do the sites after it */
		for (size_t n = 0; n < c->nnodes; n++)
			in[n] = (size_t)c->nodes[n].site_idx == s;
		val[s] = bound_in_site(b, in, cap, &raised);
	}
	cls[BOUND_ONE_SITE] = HUGE_VAL;
	for (size_t s = 0; s < ns; s++)
		cls[BOUND_ONE_SITE] = fmin(cls[BOUND_ONE_SITE], val[s]);
	best = cls[BOUND_ONE_SITE];
	for (size_t s = 0; s < ns; s++)
		if (val[s] == best && val[s] > one[s] && best < rest)
			lp = 1;
	free(ord);
	free(val);
	return lp;
}

/*
 * The classes of a cluster of ns >= 2 sites; together they hold every
 * plan.
 * (a) Its units lie in one site.
 * (b) Its groups lie in one site each, in two sites or more, so in at
 *     most G sites.  A ring has a member in every site in use, so a hop
 *     out of each of them: class b_j holds the plans whose last site in
 *     use, in the order of their least latency to another, is the j-th.
 * (c) Every group has a pipeline hop between sites, which takes at least
 *     span per micro-batch, and more where the hops of the groups share
 *     the links out of a site (span_rates()); so every group has two
 *     units or more.
 * (d) Some groups do and others lie in one site each.  (d1) Those lie in
 *     one site C: a spanning group has a unit in a site other than C, and
 *     the rings of the segments that unit holds (one layer or more) have
 *     a member in C, so a hop between sites.  (d2) They lie in two sites
 *     or more (at most G - 1): every ring has a hop between sites.
 */
static void
bound_sites(const struct bctx *b, const long *site_n, const double *site_s,
    double *cls, int *lp)
{
	const struct dl_costctx *x = b->x;
	const struct dl_cluster *c = x->c;
	size_t ns = c->nsites;
	unsigned char *in = xcalloc(c->nnodes ? c->nnodes : 1, 1);
	unsigned char *sites = xcalloc(ns, 1);
	struct site_ord *ord = xcalloc(ns, sizeof(*ord));
	double *ts = xcalloc(ns, sizeof(double));
	double *one = xcalloc(ns, sizeof(double));
	struct ringspec rs = { RING_SITE, 0, NULL, -1 };
	struct bshape sh = { 0, 0, NULL, 0, NULL, 0, 0 };
	struct bclass cl;
	double span, smax = 0, *rate = NULL;

	for (size_t s = 0; s < ns; s++) {
		smax = fmax(smax, site_s[s]);
		one[s] = HUGE_VAL;
		if (site_n[s] == 0 || site_s[s] <= 0)
			continue;
		for (size_t n = 0; n < c->nnodes; n++)
			in[n] = (size_t)c->nodes[n].site_idx == s;
		bclass_init(&cl, b, in);
		one[s] = bound_groups(b, &cl, &rs, &sh, NULL, NULL);
		cls[BOUND_ONE_SITE] = fmin(cls[BOUND_ONE_SITE], one[s]);
		bclass_free(&cl);
	}
	for (size_t s = 0; s < ns; s++) {
		ord[s].s = s;
		ord[s].exit = HUGE_VAL;
		for (size_t t = 0; t < ns; t++)
			if (t != s)
				ord[s].exit = fmin(ord[s].exit,
				    cost_site_hop(&b->nb.sb, ns, s, t, 0));
	}
	qsort(ord, ns, sizeof(*ord), site_ord_cmp);
	rs.kind = RING_EXIT;
	rs.sites = sites;
	sh.topsite = ts;
	for (size_t j = 0; j < ns; j++) {
		sites[ord[j].s] = 1;
		if (j == 0)
			continue;
		for (size_t n = 0; n < c->nnodes; n++)
			in[n] = sites[c->nodes[n].site_idx];
		rs.site = ord[j].s;
		sh.nsite = top_sites(site_s, sites, ns, ts);
		bclass_init(&cl, b, in);
		cls[BOUND_IN_SITES] = fmin(cls[BOUND_IN_SITES],
		    bound_groups(b, &cl, &rs, &sh, NULL, NULL));
		bclass_free(&cl);
	}
	span = b->amin < HUGE_VAL ? 2 * cross_hop(x, &b->nb, b->mu * b->amin) :
	    0;
	if (span == HUGE_VAL)
		span = 0;
	if (span > 0)
		rate = span_rates(b, span / 2);
	bclass_init(&cl, b, NULL);
	/* (c) */
	rs.kind = RING_ANY;
	sh.span = span;
	sh.rate = rate;
	sh.all_span = 1;
	sh.topsite = NULL;
	cls[BOUND_SPAN] = bound_groups(b, &cl, &rs, &sh, NULL, NULL);
	sh.all_span = 0;
	/* (d1) */
	rs.kind = RING_CROSS;
	rs.punit = b->pmin;
	sh.site_speed = smax;
	cls[BOUND_MIXED_ONE] = bound_groups(b, &cl, &rs, &sh, NULL, NULL);
	/* (d2) */
	rs.punit = -1;
	sh.topsite = ts;
	sh.nsite = top_sites(site_s, NULL, ns, ts);
	sh.in_minus = 1;
	cls[BOUND_MIXED_MANY] = bound_groups(b, &cl, &rs, &sh, NULL, NULL);
	bclass_free(&cl);
	*lp = raise_sites(b, one, in, cls);
	free(rate);
	free(in);
	free(sites);
	free(ord);
	free(ts);
	free(one);
}

static double bound_all(const struct dl_costctx *,
    const struct search_opts *, double *, int *);

double
search_bound(const struct dl_costctx *x, const struct search_opts *so)
{
	enum dl_bound method;

	return search_bound_method(x, so, &method);
}

double
search_bound_method(const struct dl_costctx *x, const struct search_opts *so,
    enum dl_bound *method)
{
	double cls[BOUND_NCLASS], t;
	int lp;

	t = bound_all(x, so, cls, &lp);
	*method = lp ? BOUND_LP : BOUND_COMBINATORIAL;
	return t;
}

double
search_bound_classes(const struct dl_costctx *x, const struct search_opts *so,
    double cls[BOUND_NCLASS])
{
	int lp;

	return bound_all(x, so, cls, &lp);
}

/* cls as search_bound_classes() has it; *lp: whether the linear
 * relaxation set the bound. */
static double
bound_all(const struct dl_costctx *x, const struct search_opts *so,
    double *cls, int *lp)
{
	const struct dl_cluster *c = x->c;
	const struct dl_opts *o = x->o;
	int L = (int)x->m->nlayers;
	size_t ns = c->nsites;
	long *site_n, gpus = 0;
	double capmax = 0, *site_s, best;
	double bytes = o->param_bytes + o->grad_bytes + o->optimizer_bytes;
	struct bctx b;

	*lp = 0;
	for (int i = 0; i < BOUND_NCLASS; i++)
		cls[i] = 0;	/* until proven */
	b.x = x;
	b.M = b.Mall = o->global_batch / o->micro_batch;
	if (L < 1 || b.M < 1 || x->speed_total <= 0)
		return 0;
	b.W = cost_range_flops(x, 0, L - 1);
	b.P = cost_range_params(x, 0, L - 1);
	b.B = (double)o->global_batch;
	b.mu = (double)o->micro_batch;
	site_n = xcalloc(ns ? ns : 1, sizeof(long));
	site_s = xcalloc(ns ? ns : 1, sizeof(double));
	for (size_t n = 0; n < c->nnodes; n++) {
		int k = widest_tp(x, (int)n);

		site_n[c->nodes[n].site_idx] += c->nodes[n].gpus;
		site_s[c->nodes[n].site_idx] += c->nodes[n].gpus * x->speed[n];
		capmax = fmax(capmax, k * cost_gpu_capacity(x, (int)n));
		gpus += c->nodes[n].gpus;
	}
	/*
	 * Every group has a GPU of its own, so G never exceeds the GPUs:
	 * the tables over G (span_rates(), bound_in_site()) stop there,
	 * whatever the micro-batch count.
	 */
	if (b.M > gpus)
		b.M = gpus > 0 ? gpus : 1;
	b.Lmax = o->max_stages > 0 && o->max_stages < L ? o->max_stages : L;
	if (so->strategy == STRAT_DP)
		b.Lmax = 1;
	b.Smem = capmax > 0 ? (long)ceil(bytes * b.P / capmax) : 1;
	if (b.Smem < 1)
		b.Smem = 1;
	if (so->strategy == STRAT_PP)
		b.M = 1;	/* one group: G <= 1 */
	if (b.Smem > b.Lmax) {
		free(site_n);
		free(site_s);
		return 0;	/* no plan fits: nothing to bound */
	}
	b.amin = HUGE_VAL;
	for (int l = 0; l + 1 < L; l++)
		b.amin = fmin(b.amin, x->m->layers[l].act_mb * 1e6);
	netb_init(x, site_n, &b.nb);
	leancand_init(&b.lc, x);
	b.F = fill_compute(x, &b.heavy);
	if (b.Smem > 1 && b.amin < HUGE_VAL && b.nb.bw_any > 0)
		b.F += (double)(b.Smem - 1) * 2 * 8 * b.mu * b.amin /
		    (b.nb.bw_any * 1e9);
	for (int i = 0; i < BOUND_NCLASS; i++)
		cls[i] = HUGE_VAL;
	b.pmin = HUGE_VAL;
	for (int l = 0; l < L; l++)
		b.pmin = fmin(b.pmin, cost_range_params(x, l, l));
	if (ns < 2)
		cls[BOUND_ONE_SITE] = bound_in_site(&b, NULL, HUGE_VAL, lp);
	else
		bound_sites(&b, site_n, site_s, cls, lp);
	best = HUGE_VAL;
	for (int i = 0; i < BOUND_NCLASS; i++)
		best = fmin(best, cls[i]);
	leancand_free(&b.lc);
	cost_sitebound_free(&b.nb.sb);
	free(site_n);
	free(site_s);
	return best == HUGE_VAL ? 0 : best;
}
