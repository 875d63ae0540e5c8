/*
 * search_structured.c - the structured mode of the plan search
 * (dlplan(1) ALGORITHMS, Solver): the shapes it tries (pipelines of units
 * kept inside a node or site, stripes, mixed shapes), their lower bounds,
 * and the passes that run them on the pool's threads; each shape is
 * solved in search_shape.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

/* 2^i or 3 * 2^i: the stage counts above 8 the structured mode tries. */
static int
stage_count_tried(int S)
{
	while (S % 2 == 0)
		S /= 2;
	return S == 1 || S == 3;
}

/*
 * The TP degree of each node in use[] (0 elsewhere) into kn[]: k on every
 * node, or with bal set k times the largest power of 2 at most the ratio
 * of the fastest GPU in use to the node's, so that slower GPUs form wider
 * units of about the same speed.  (The power of 2 above the ratio was
 * tried too: it made none of the 19 cases of oneclock-compare.sh's corpus
 * that the mixed pass sped up and cost 23 to 40 % of the pass's time.)
 * Each is
 * what search_node_units() makes of it: at most the node's GPUs, as the
 * largest power of 2 that fits.
 */
static void
unit_degrees(const struct ctx *C, const int *use, int k, int bal, int *kn)
{
	const struct dl_costctx *x = C->x;
	size_t nn = x->c->nnodes;
	double smax = 0;

	for (size_t i = 0; i < nn; i++)
		if (use[i] && x->speed[i] > smax)
			smax = x->speed[i];
	for (size_t i = 0; i < nn; i++) {
		int d = k, e = 0, gpus = x->c->nodes[i].gpus;

		if (!use[i]) {
			kn[i] = 0;
			continue;
		}
		if (bal && x->speed[i] > 0) {
			double r = log2(smax / x->speed[i]);

			e = (int)floor(r + 1e-9);
			while (e > 0 && d < DL_MAX_TP && d < x->o->max_tp) {
				d *= 2;
				e--;
			}
		}
		while (d > gpus)
			d /= 2;
		kn[i] = d;
	}
}

/*
 * The units of TP degree k (per node as unit_degrees() says for bal) on
 * the nodes in use[], listed site by site (fastest first inside a site,
 * so that a pipeline's hops stay in one node or site) in ord, and all of
 * them fastest first in fast.  Returns their number; 0 when k > 1 changes
 * no unit of the uniform degree (the degree is skipped).
 */
static size_t
list_units(const struct ctx *C, const int *use, int k, int bal,
    struct unit *units, const struct unit **ord, const struct unit **fast)
{
	const struct dl_costctx *x = C->x;
	int *kn = xcalloc(x->c->nnodes, sizeof(int));
	size_t n = 0, m = 0, any = 0;

	unit_degrees(C, use, k, bal, kn);
	for (size_t i = 0; i < x->c->nnodes; i++)
		if (use[i])
			n += search_node_units(x, (int)i, kn[i], units + n);
	free(kn);
	/* Over the whole cluster: the degrees tried do not depend on use[]. */
	for (size_t i = 0; i < x->c->nnodes; i++)
		any += x->c->nodes[i].gpus >= k;
	if (!bal && k > 1 && any == 0)
		return 0;
	for (size_t s = 0; s < x->c->nsites; s++) {
		size_t first = m;

		for (size_t i = 0; i < n; i++)
			if (x->c->nodes[units[i].node].site_idx == (int)s)
				ord[m++] = &units[i];
		qsort(ord + first, m - first, sizeof(*ord), search_cmp_unit);
	}
	memcpy(fast, ord, m * sizeof(*fast));
	qsort(fast, m, sizeof(*fast), search_cmp_unit);
	return m;
}

/*
 * The structured mode's structures, in a fixed order: for each set of
 * nodes, TP degree and stage count, the units cut into pipelines of S
 * (all of them, and only the fastest half, when slow units would hold
 * the others back).  Then, for each set of nodes, the mixed shapes: the
 * units dealt to the groups in turn, fastest first, so that every
 * pipeline gets its share of each kind of GPU (and a node's units go to
 * different groups, whose rings then stay inside it); the units dealt
 * after the slowest few are split in two halves each, as many as the
 * groups need to get S units each (when S does not divide them); and the
 * units of degrees balanced per GPU (unit_degrees()) cut and dealt.
 * Dealt groups list their units fastest first, or with _REV slowest.
 */
enum { CUT_ALL, CUT_HALF, CUT_DEAL, CUT_DEAL_REV, CUT_SPLIT, CUT_SPLIT_REV };

struct job {
	int use;		/* index of the node set */
	int k, S, half;		/* half: CUT_* */
	int bal;		/* 1: unit_degrees() balanced */
	int stripe;		/* 1: a striped shape, sp */
	struct stripe sp;
	double lb;		/* search_shape_bound(): orders the keys */
	double cut;		/* its *cut, with the floors: cuts */
	size_t seq;		/* the order listed */
};

struct joblist {
	int **use;		/* node sets: per node, 1 when used */
	size_t nuse;
	struct job *job;
	size_t n, cap;
	long base;		/* job j's plans have key base + j */
	size_t most;		/* jobs run at most (0: all) */
	int only;		/* 1: only jobs of node set only_use, S only_S
				 * (0: any) and not not_S (0: none) */
	int only_use, only_S, not_S;
	/*
	 * The order the jobs run in, by cut: first the nprobe probes (each
	 * node set's first job, so that a good plan is known early), then
	 * all of them, those already run skipped (done).
	 */
	size_t *run, nrun, nprobe;
	unsigned char *done;
};

/* Units the job uses (0: none) and its number of groups. */
static size_t
job_units(const struct ctx *C, size_t n, int S, int half, int *G)
{
	size_t use_n = half == CUT_HALF ? n / 2 : n;

	if (half >= CUT_SPLIT) {
		/* ceil(n / S) groups; the units short are halves. */
		*G = (int)((n + (size_t)S - 1) / (size_t)S);
		if (n % (size_t)S == 0 || (size_t)*G * (size_t)S - n > n ||
		    *G > C->total)
			return 0;
		return (size_t)*G * (size_t)S;
	}
	use_n -= use_n % (size_t)S;
	if (use_n == 0 || (half == CUT_HALF && n < 4))
		return 0;
	*G = (int)(use_n / (size_t)S);
	if (*G > C->total)
		*G = (int)C->total;
	if (half >= CUT_DEAL && (*G < 2 || S < 2))
		return 0;
	return use_n;
}

/* Whether the last q of the n units fast[] each have two GPUs or more. */
static int
halves(const struct unit **fast, size_t n, size_t q)
{
	for (size_t i = n - q; i < n; i++)
		if (fast[i]->k < 2)
			return 0;
	return 1;
}

/*
 * Add the jobs of node set u, degree k and bal over its n units (fast:
 * fastest first) for each cut in cuts[0] .. cuts[ncut - 1]; a dealt cut
 * only where the units it deals differ in speed.
 */
static void
add_cuts(const struct ctx *C, struct joblist *jl, int u, int k, int bal,
    size_t n, const struct unit **fast, const int *cuts, int ncut)
{
	const struct dl_costctx *x = C->x;
	int maxs = (int)n < C->L ? (int)n : C->L;
	/* Split halves make up to 2 n units. */
	int maxh = 2 * (int)n < C->L ? 2 * (int)n : C->L;

	if (x->o->max_stages > 0 && maxs > x->o->max_stages)
		maxs = x->o->max_stages;
	if (x->o->max_stages > 0 && maxh > x->o->max_stages)
		maxh = x->o->max_stages;
	for (int S = 1; S <= maxh; S++) {
		/*
		 * Beyond 8 stages try only 12, 16, 24, 32, 48 ... (each
		 * about 1.4 times the last) and the most.
		 */
		if (S > 8 && !stage_count_tried(S) && S != maxs && S != maxh)
			continue;
		for (int i = 0; i < ncut; i++) {
			size_t used;
			int G;

			if (S > maxs && cuts[i] < CUT_SPLIT)
				continue;
			if ((used = job_units(C, n, S, cuts[i], &G)) == 0)
				continue;
			if ((cuts[i] == CUT_DEAL || cuts[i] == CUT_DEAL_REV) &&
			    fast[0]->speed == fast[used - 1]->speed)
				continue;
			if (cuts[i] >= CUT_SPLIT && !halves(fast, n, used - n))
				continue;
			if (!search_strategy_fits(C->so->strategy, G, S))
				continue;
			jl->job = xgrow(jl->job, &jl->cap, jl->n + 1,
			    sizeof(struct job));
			memset(&jl->job[jl->n], 0, sizeof(struct job));
			jl->job[jl->n].use = u;
			jl->job[jl->n].k = k;
			jl->job[jl->n].S = S;
			jl->job[jl->n].half = cuts[i];
			jl->job[jl->n].bal = bal;
			jl->n++;
		}
	}
}

/*
 * Add the jobs over the nodes in use[] (copied) to jl; with mixed set,
 * the mixed shapes instead.  A balanced set of degrees
 * is tried only when it differs from every uniform degree and from the
 * other balanced ones.
 */
static void
add_jobs(const struct ctx *C, struct joblist *jl, const int *use, int mixed)
{
	static const int plain[] = { CUT_ALL, CUT_HALF };
	static const int dealt[] = { CUT_DEAL, CUT_DEAL_REV, CUT_SPLIT,
	    CUT_SPLIT_REV };
	static const int all[] = { CUT_ALL, CUT_DEAL, CUT_DEAL_REV };
	const struct dl_costctx *x = C->x;
	long gpus = cluster_gpus(x->c);
	size_t nn = x->c->nnodes, nk = 0;
	struct unit *units = xcalloc((size_t)gpus, sizeof(struct unit));
	const struct unit **ord = xcalloc((size_t)gpus, sizeof(*ord));
	const struct unit **fast = xcalloc((size_t)gpus, sizeof(*fast));
	int *kv = xcalloc(2 * (DL_MAX_TP + 1) * nn, sizeof(int));
	int u = (int)jl->nuse;

	jl->use = xreallocarray(jl->use, jl->nuse + 1, sizeof(int *));
	jl->use[jl->nuse++] = xmemdup(use, nn, sizeof(int));
	for (int bal = 0; bal < (mixed ? 2 : 1); bal++)
		for (int k = 1; k <= x->o->max_tp && k <= DL_MAX_TP; k *= 2) {
			size_t n, i;

			if (bal) {
				/* Skip degrees already tried. */
				unit_degrees(C, use, k, bal, kv + nk * nn);
				for (i = 0; i < nk; i++)
					if (memcmp(kv + i * nn, kv + nk * nn,
					    nn * sizeof(int)) == 0)
						break;
				if (i < nk)
					continue;
			}
			if ((n = list_units(C, use, k, bal, units, ord,
			    fast)) == 0)
				continue;
			if (!bal)
				unit_degrees(C, use, k, 0, kv + nk * nn);
			nk++;
			if (!mixed)
				add_cuts(C, jl, u, k, 0, n, fast, plain, 2);
			else if (!bal)
				add_cuts(C, jl, u, k, 0, n, fast, dealt, 4);
			else
				add_cuts(C, jl, u, k, bal, n, fast, all, 3);
		}
	free(kv);
	free(units);
	free(ord);
	free(fast);
}

static void
joblist_free(struct joblist *jl)
{
	for (size_t i = 0; i < jl->nuse; i++)
		free(jl->use[i]);
	free(jl->use);
	free(jl->job);
	free(jl->run);
	free(jl->done);
	memset(jl, 0, sizeof(*jl));
}

/*
 * The rows of C->wmin for S stages: for each stage j, the least FLOPs and
 * the least TP volume of a layer it may hold.
 */
static const double *
window_min(struct ctx *C, int S)
{
	const struct dl_costctx *x = C->x;
	size_t L = (size_t)C->L;
	double *row;

	if (C->wmin == NULL) {
		C->wmin = xcalloc(2 * L * L, sizeof(double));
		C->wmin_ok = xcalloc(L, 1);
	}
	row = C->wmin + (size_t)(S - 1) * L;
	if (C->wmin_ok[S - 1])
		return row;
	for (int j = 0; j < S; j++) {
		double f = HUGE_VAL, tp = HUGE_VAL;

		for (int l = j; l <= C->L - S + j; l++) {
			f = fmin(f, cost_range_flops(x, l, l));
			tp = fmin(tp, cost_range_tp(x, l, l));
		}
		row[j] = f;
		row[L * L + j] = tp;
	}
	C->wmin_ok[S - 1] = 1;
	return row;
}

/*
 * A floor under the bottleneck of group g of sh, whatever its partition:
 * every stage holds at least one layer of its window (window_min()), so
 * its time per micro-batch is at least what cost_stage_compute() gives
 * for the least FLOPs and TP volume of those layers (it grows with both,
 * in floating point too), and the 1F1B schedule runs every stage's m
 * forwards and backwards one after another: T_g >= m_g times the largest.
 * HUGE_VAL when the group has more stages than the model has layers.
 */
double
search_group_floor(struct ctx *C, const struct shape *sh, int g)
{
	int S = sh->S[g];
	size_t L = (size_t)C->L;
	const double *row;
	double b = 0;

	/* More stages than layers: no partition, no micro-batches. */
	if (S > C->L)
		return HUGE_VAL;
	row = window_min(C, S);

	for (int j = 0; j < S; j++) {
		const struct unit *u = sh->u[sh->off[g] + j];

		b = fmax(b, cost_unit_time(C->x, u->node, u->k, row[j],
		    row[L * L + j]));
	}
	return b;
}

/*
 * A lower bound on T for every plan of shape sh, before any partition.
 * Say the split uses Gu of the groups.  Pipeline: group g with S_g
 * stages and fastest unit s_g runs m_g micro-batches in at least
 * m_g mu W / (S_g s_g) (its stages add up to at least mu W / s_g, and the
 * slowest is at least their mean), so max_g T_g >= mu W M / sum S_g s_g
 * over the Gu groups, at best the fastest.  Sync: when Gu exceeds the
 * most groups that touch any one site, every ring spans two sites and
 * has a hop between them: R_q >= 2 (Gu - 1) (lat + 8 P_q gb / (Gu bw))
 * with the least latency and widest bandwidth between sites the shape
 * uses; a unit of a group holds segments whose R_q add up to at least
 * 1 / S_g of all of them, and there are at least S_g segments.  The bound
 * is the least over Gu of the two together.  *cut gets the same with a
 * second bound on the pipeline: group g takes at least m_g b_g
 * (search_group_floor()), so with M micro-batches over the Gu groups of
 * least b_g, max_g T_g >= M / sum 1 / b_g.  That one is not the returned bound
 * (the order of the plans' keys), only what cuts the job.
 */
double
search_shape_bound(struct ctx *C, const struct shape *sh, double *cut)
{
	const struct dl_costctx *x = C->x;
	const struct dl_cluster *c = x->c;
	size_t ns = c->nsites;
	int G = sh->G, smax = 1, tmax = 0, np = 0;
	double *w = xcalloc((size_t)G, sizeof(double));
	int *touch = xcalloc(ns, sizeof(int)), *last = xcalloc(ns, sizeof(int));
	double mu = (double)x->o->micro_batch, lat = HUGE_VAL, bw = 0;
	double W = cost_range_flops(x, 0, C->L - 1);
	double P = cost_range_params(x, 0, C->L - 1) * x->o->grad_bytes;
	double sum = 0, best = HUGE_VAL, *inv = xcalloc((size_t)G,
	    sizeof(double)), isum = 0, best2 = HUGE_VAL;
	unsigned char *present = xcalloc(ns, 1);

	for (size_t i = 0; i < ns; i++)
		last[i] = -1;
	for (int g = 0; g < G; g++) {
		double f = 0;

		for (int j = 0; j < sh->S[g]; j++) {
			const struct unit *u = sh->u[sh->off[g] + j];
			int si = c->nodes[u->node].site_idx;

			f = fmax(f, u->speed);
			present[si] = 1;
			if (last[si] != g) {
				last[si] = g;
				touch[si]++;
			}
		}
		w[g] = sh->S[g] * f;
		inv[g] = 1 / search_group_floor(C, sh, g);
		if (sh->S[g] > smax)
			smax = sh->S[g];
	}
	for (size_t a = 0; a < ns; a++) {
		tmax = touch[a] > tmax ? touch[a] : tmax;
		np += present[a];
	}
	if (np >= 2) {
		cost_sitebound_init(&C->sb, c);
		for (size_t a = 0; a < ns; a++)
			for (size_t b = 0; b < ns; b++)
				if (a != b && present[a] && present[b] &&
				    C->sb.bw[a * ns + b] > 0) {
					lat = fmin(lat, C->sb.lat[a * ns + b]);
					bw = fmax(bw, C->sb.bw[a * ns + b]);
				}
	}
	qsort(w, (size_t)G, sizeof(double), cmp_double_desc);
	qsort(inv, (size_t)G, sizeof(double), cmp_double_desc);
	for (int gu = 1; gu <= G; gu++) {
		double t, sync = 0;

		sum += w[gu - 1];
		isum += inv[gu - 1];
		if (!(sum > 0))
			continue;
		t = mu * W * (double)C->total / sum;
		if (gu > tmax && np >= 2 && bw > 0 && C->x->sync_floor > 0)
			sync = 2.0 * (gu - 1) * (lat + 8 * P / ((double)smax *
			    gu * bw * 1e9));
		best = fmin(best, t + sync);
		best2 = fmin(best2, fmax(t, (double)C->total / isum) + sync);
	}
	free(w);
	free(inv);
	free(touch);
	free(last);
	free(present);
	/* Rounding must never make the bound pass the true value. */
	*cut = best2 == HUGE_VAL ? 0 : best2 * (1 - 1e-9);
	return best == HUGE_VAL ? 0 : best * (1 - 1e-9);
}

/*
 * A context's scratch for its jobs (C->scratch): the units of the last
 * job run, and of the last stripe, with their orders and shape arrays.
 */
struct jscratch {
	struct unit *units, *sunits, *halves;
	const struct unit **ord, **fast, **sord, **deal, **split;
	int *shS, *shoff;
	int cur_use, cur_k, cur_bal;
	size_t cur_n;
};

static void
jscratch_free(void *p)
{
	struct jscratch *J = p;

	free(J->units);
	free(J->ord);
	free(J->fast);
	free(J->deal);
	free(J->split);
	free(J->halves);
	free(J->shS);
	free(J->shoff);
	free(J->sunits);
	free(J->sord);
	free(J);
}

/* C's scratch, made on first use. */
static struct jscratch *
jscratch(struct ctx *C)
{
	size_t gpus = (size_t)cluster_gpus(C->x->c);
	struct jscratch *J = C->scratch;

	if (J != NULL)
		return J;
	J = xcalloc(1, sizeof(*J));
	J->units = xcalloc(gpus, sizeof(struct unit));
	J->ord = xcalloc(gpus, sizeof(*J->ord));
	J->fast = xcalloc(gpus, sizeof(*J->fast));
	J->deal = xcalloc(gpus, sizeof(*J->deal));
	J->split = xcalloc(gpus, sizeof(*J->split));
	J->halves = xcalloc(gpus, sizeof(*J->halves));
	J->shS = xcalloc(gpus, sizeof(int));
	J->shoff = xcalloc(gpus, sizeof(int));
	J->sunits = xcalloc(gpus, sizeof(struct unit));
	J->sord = xcalloc(gpus, sizeof(*J->sord));
	J->cur_use = -1;
	C->scratch = J;
	C->scratch_free = jscratch_free;
	return J;
}

/* The shape of job j of jl in C's scratch (its units listed unless the
 * last job had them). */
static void
job_shape(struct ctx *C, const struct joblist *jl, size_t j,
    struct shape *sh)
{
	const struct job *jb = &jl->job[j];
	struct jscratch *J = jscratch(C);
	const struct unit **src;
	size_t used;
	int rev;

	if (jb->stripe) {
		search_stripe_shape(C, &jb->sp, J->sunits, J->sord, J->shS,
		    J->shoff, sh);
		return;
	}
	if (J->cur_use != jb->use || J->cur_k != jb->k ||
	    J->cur_bal != jb->bal) {
		J->cur_n = list_units(C, jl->use[jb->use], jb->k, jb->bal,
		    J->units, J->ord, J->fast);
		J->cur_use = jb->use;
		J->cur_k = jb->k;
		J->cur_bal = jb->bal;
	}
	memset(sh, 0, sizeof(*sh));
	used = job_units(C, J->cur_n, jb->S, jb->half, &sh->G);
	src = J->fast;
	if (jb->half >= CUT_SPLIT) {
		/* The slowest q units as two halves each, fastest first. */
		size_t n = J->cur_n, q = used - n, keep = n - q;

		memcpy(J->split, J->fast, keep * sizeof(*J->split));
		for (size_t i = 0; i < q; i++)
			for (int h = 0; h < 2; h++) {
				struct unit *v = &J->halves[2 * i + (size_t)h];

				*v = *J->fast[keep + i];
				v->k /= 2;
				v->gpu0 += h * v->k;
				v->speed /= 2;
				J->split[keep + 2 * i + (size_t)h] = v;
			}
		qsort(J->split, used, sizeof(*J->split), search_cmp_unit);
		src = J->split;
	}
	rev = jb->half == CUT_DEAL_REV || jb->half == CUT_SPLIT_REV;
	sh->S = J->shS;
	sh->off = J->shoff;
	sh->u = jb->half == CUT_ALL ? J->ord : jb->half == CUT_HALF ?
	    J->fast : J->deal;
	for (int g = 0; g < sh->G; g++) {
		sh->S[g] = jb->S;
		sh->off[g] = g * jb->S;
		/* Dealt: stage i of group g is unit i G + g (or S - 1 - i). */
		for (int i = 0; jb->half >= CUT_DEAL && i < jb->S; i++)
			J->deal[g * jb->S + i] = src[(size_t)(rev ?
			    jb->S - 1 - i : i) * (size_t)sh->G + (size_t)g];
	}
}

/* The GPUs of the nodes in use[]. */
static long
set_gpus(const struct ctx *C, const int *use)
{
	long n = 0;

	for (size_t i = 0; i < C->x->c->nnodes; i++)
		if (use[i])
			n += C->x->c->nodes[i].gpus;
	return n;
}

/*
 * Run job j of jl on C.  Returns 0 when the job's lower bound cannot
 * beat the best plan so far: the jobs come in ascending order of their
 * bounds, so no later one can either; and past the pass's most jobs.
 * Jobs that the pass's only leaves out are skipped.
 */
static int
run_job(struct ctx *C, size_t i, void *arg)
{
	const struct joblist *jl = arg;
	struct shape sh;
	int probe = i < jl->nprobe;
	size_t j = jl->run[i];

	/* A probe's job is not run again (done is set before the pass). */
	if (!probe && jl->done != NULL && jl->done[j])
		return 1;
	if ((jl->most > 0 && j >= jl->most) || (jl->only &&
	    (jl->job[j].use != jl->only_use || (jl->only_S > 0 &&
	    jl->job[j].S != jl->only_S) || jl->job[j].S == jl->not_S)))
		return 1;
	job_shape(C, jl, j, &sh);
	C->job = jl->base + (long)j;
	C->round = 0;
	if (search_cut(C, jl->job[j].cut)) {
		C->st->pruned++;
		return probe;
	}
	search_solve_shape(C, &sh);
	return 1;
}

static int
cmp_job(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->lb != y->lb)
		return x->lb < y->lb ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Job indices by cut, ties by index (cmp_run()'s list). */
static _Thread_local const struct job *run_jobs;

static int
cmp_run(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (run_jobs[i].cut != run_jobs[j].cut)
		return run_jobs[i].cut < run_jobs[j].cut ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * The order jl's jobs run in (jl->run): by their cuts, so that the first
 * job the best plan cuts ends the pass (every later one has a cut at
 * least as large, and on a tie a later key); with probes, each node
 * set's first job of that order runs before them all.  The plans, and
 * which wins a tie, do not depend on this order: a plan's key is its
 * job's place in the order of lb.
 */
static void
order_runs(struct joblist *jl, int probes)
{
	unsigned char *seen;

	jl->nrun = jl->n;
	jl->run = xcalloc(2 * jl->n + 1, sizeof(size_t));
	for (size_t j = 0; j < jl->n; j++)
		jl->run[j] = j;
	run_jobs = jl->job;
	if (jl->n > 0)
		qsort(jl->run, jl->n, sizeof(size_t), cmp_run);
	if (!probes || jl->n == 0)
		return;
	seen = xcalloc(jl->nuse + 1, 1);
	jl->done = xcalloc(jl->n, 1);
	for (size_t i = 0; i < jl->n; i++) {
		int u = jl->job[jl->run[i]].use;

		if (u >= 0 && !seen[u]) {
			seen[u] = 1;
			jl->nprobe++;
		}
	}
	/* The probes, then the whole order again. */
	memmove(jl->run + jl->nprobe, jl->run, jl->n * sizeof(size_t));
	memset(seen, 0, jl->nuse + 1);
	for (size_t i = jl->nprobe, p = 0; p < jl->nprobe; i++) {
		size_t j = jl->run[i];
		int u = jl->job[j].use;

		if (u >= 0 && !seen[u]) {
			seen[u] = 1;
			jl->done[j] = 1;
			jl->run[p++] = j;
		}
	}
	jl->nrun += jl->nprobe;
	free(seen);
}

/*
 * Order the jobs best first: by their lower bounds (search_shape_bound()),
 * ties in the order they were listed.  Job j's plans have key base + j.
 * With set other than ALL_SETS only the jobs of that node set are bounded
 * (a pass that runs no others); the rest go last, in the order listed,
 * which keeps the order of those that run.
 */
#define ALL_SETS (-2)
static void
order_jobs(struct ctx *C, struct joblist *jl, long base, int sharp,
    int probes, int set)
{
	for (size_t j = 0; j < jl->n; j++) {
		struct shape sh;

		jl->job[j].seq = j;
		if (set != ALL_SETS && jl->job[j].use != set) {
			/* Not run: last, in the order listed. */
			jl->job[j].lb = jl->job[j].cut = HUGE_VAL;
			continue;
		}
		job_shape(C, jl, j, &sh);
		jl->job[j].lb = search_shape_bound(C, &sh, &jl->job[j].cut);
		if (!sharp)
			jl->job[j].cut = jl->job[j].lb;
	}
	jl->base = base;
	if (jl->n > 0)
		qsort(jl->job, jl->n, sizeof(struct job), cmp_job);
	order_runs(jl, sharp && probes);
}

/* Most groups a striped shape has. */
#define STRIPE_GROUPS_MAX 16

/*
 * The striped shapes (search_stripe.c): for each number of groups, the
 * fastest 1, 2, 4 ... and all of the nodes it divides (of any site, or
 * with per_site of each site in turn), at each TP degree, in both stage
 * orders.
 */
/* Append the stripes of G groups over the nodes of site (-1: any). */
static void
add_stripes_of(const struct ctx *C, struct joblist *jl, int G, int site,
    struct unit *units, const struct unit **u)
{
	const struct dl_costctx *x = C->x;
	size_t n = search_stripe_count(x, G, site);
	int S[STRIPE_GROUPS_MAX], off[STRIPE_GROUPS_MAX];

	for (size_t top = 1; top <= n; top = top < n && 2 * top > n ? n :
	    2 * top) {
		for (int k = 1; k <= x->o->max_tp && k <= DL_MAX_TP; k *= 2)
			for (int rev = 0; rev < 2; rev++) {
				struct stripe sp = { G, k, (int)top, rev, site };
				struct shape sh;
				struct job *jb;

				if (!search_stripe_shape(C, &sp, units, u, S,
				    off, &sh))
					continue;
				jl->job = xgrow(jl->job, &jl->cap, jl->n + 1,
				    sizeof(struct job));
				jb = &jl->job[jl->n++];
				memset(jb, 0, sizeof(*jb));
				jb->k = k;
				jb->stripe = 1;
				jb->sp = sp;
			}
		if (top == n)
			break;
	}
}

/*
 * The striped shapes (search_stripe.c): for each number of groups, the
 * fastest 1, 2, 4 ... and all of the nodes it divides (of any site, or
 * with per_site of each site in turn, on a cluster of several), at each
 * TP degree, in both stage orders.
 */
static void
add_stripes(const struct ctx *C, struct joblist *jl, int per_site)
{
	const struct dl_cluster *c = C->x->c;
	size_t gpus = (size_t)cluster_gpus(c);
	struct unit *units = xcalloc(gpus, sizeof(*units));
	const struct unit **u = xcalloc(gpus, sizeof(*u));
	int first = per_site ? 0 : -1;
	int end = !per_site ? 0 : c->nsites > 1 ? (int)c->nsites : 0;

	for (int site = first; site < end; site++)
		for (int G = 2; G <= STRIPE_GROUPS_MAX; G++)
			add_stripes_of(C, jl, G, site, units, u);
	free(units);
	free(u);
}

/* Largest number of nodes for which node subsets are tried too. */
#define NODE_SUBSETS_MAX 64

static _Thread_local const double *rank_key;

static int
cmp_rank(const void *a, const void *b)
{
	int i = *(const int *)a, j = *(const int *)b;

	if (rank_key[i] != rank_key[j])
		return rank_key[i] > rank_key[j] ? -1 : 1;
	return (i > j) - (i < j);
}

/*
 * The node sets: every node together; then, on a multi-site cluster,
 * each site alone and the fastest 2, 4, 8 ... sites, since a ring over a
 * slow WAN link can cost more than the GPUs behind it bring; then (up to
 * 64 nodes) the fastest 1, 2, 4 ... nodes, since a data-parallel ring
 * inside one node can beat one that leaves it.
 */
static void
make_jobs(const struct ctx *C, struct joblist *jl)
{
	const struct dl_cluster *c = C->x->c;
	size_t ns = c->nsites, nn = c->nnodes;
	int *use = xcalloc(nn, sizeof(int));
	double *speed = xcalloc(ns, sizeof(double));
	double *nspeed = xcalloc(nn, sizeof(double));
	int *rank = xcalloc(ns > nn ? ns : nn, sizeof(int));

	for (size_t i = 0; i < nn; i++)
		use[i] = 1;
	add_jobs(C, jl, use, 0);
	if (ns > 1) {
		for (size_t i = 0; i < nn; i++)
			speed[c->nodes[i].site_idx] += c->nodes[i].gpus *
			    C->x->speed[i];
		for (size_t s = 0; s < ns; s++)
			rank[s] = (int)s;
		rank_key = speed;
		qsort(rank, ns, sizeof(int), cmp_rank);
		for (size_t s = 0; s < ns && s < 16; s++) {
			for (size_t i = 0; i < nn; i++)
				use[i] = c->nodes[i].site_idx == (int)s;
			add_jobs(C, jl, use, 0);
		}
		for (size_t top = 2; top < ns; top *= 2) {
			for (size_t i = 0; i < nn; i++) {
				use[i] = 0;
				for (size_t k = 0; k < top; k++)
					use[i] |= c->nodes[i].site_idx ==
					    rank[k];
			}
			add_jobs(C, jl, use, 0);
		}
	}
	if (nn > 1 && nn <= NODE_SUBSETS_MAX) {
		for (size_t i = 0; i < nn; i++) {
			nspeed[i] = c->nodes[i].gpus * C->x->speed[i];
			rank[i] = (int)i;
		}
		rank_key = nspeed;
		qsort(rank, nn, sizeof(int), cmp_rank);
		for (size_t top = 1; top < nn; top *= 2) {
			memset(use, 0, nn * sizeof(int));
			for (size_t k = 0; k < top; k++)
				use[rank[k]] = 1;
			add_jobs(C, jl, use, 0);
		}
	}
	free(use);
	free(speed);
	free(nspeed);
	free(rank);
}

/*
 * The structured mode, in five passes: every job of make_jobs(), the
 * stripes over any nodes, the stripes of each site (add_stripes()), the
 * mixed shapes over make_jobs()'s node sets (after the others, so that
 * the best of the passes before, which the improvement phase takes on
 * too, is what the planner found without them), and above
 * IMPROVE_MAX_GPUS the mixed shapes again, of the stage counts the
 * fourth pass leaves out there (last, for the same reason).  Each
 * runs on so->jobs threads (C itself is one of them; the others get their
 * own router and caches, which hold the same values, so the plan does not
 * depend on the number of threads, only how many plans are scored before
 * the bounds cut the rest does).  A pass's plans have keys after every
 * earlier pass's, so it wins only when strictly faster; then the best of
 * the passes before it goes to prev[], in pass order (not initialised
 * before; the caller frees them).  Returns how many did.
 */
int
search_structured(struct ctx *C, struct dl_plan prev[SEARCH_PASSES - 1],
    int *mixed)
{
	struct joblist jl[SEARCH_PASSES] = { { 0 } };
	struct dl_plan last;
	int nt = C->so->jobs > 1 ? C->so->jobs : 1, nprev = 0;
	long base = 0, total = 0, runs = 0, best_job = -1, solved;
	long gpus = cluster_gpus(C->x->c);
	/*
	 * Where the mixed pass is capped by the first pass's structures, a
	 * sharper cut there would shrink the cap (gen 2's 512 GPUs planned
	 * 2.9% slower): the first pass keeps its plain bounds and order.
	 */
	int sharp = gpus <= MIXED_FULL_GPUS || gpus > IMPROVE_MAX_GPUS;
	size_t ran, ran0 = 0;
	struct job win = { .use = -1 };

	*mixed = 0;
	make_jobs(C, &jl[0]);
	add_stripes(C, &jl[1], 0);
	add_stripes(C, &jl[2], 1);
	for (size_t u = 0; u < jl[0].nuse; u++)
		add_jobs(C, &jl[MIXED_PASS], jl[0].use[u], 1);
	for (int i = 0; i < SEARCH_PASSES; i++) {
		if (i == MIXED_PASS + 1) {
			/* The same jobs, keys after them; only above
			 * IMPROVE_MAX_GPUS. */
			jl[i] = jl[MIXED_PASS];
			jl[i].base = base;
			if (gpus <= IMPROVE_MAX_GPUS)
				jl[i].n = jl[i].nrun = 0;
		} else if (i == MIXED_PASS && gpus > IMPROVE_MAX_GPUS) {
			/* Ordered once the first pass's best is known. */
			jl[i].base = base;
			jl[i].nrun = jl[i].n;
		} else
			order_jobs(C, &jl[i], base, sharp, i == 0, ALL_SETS);
		base += (long)jl[i].n;
		runs += (long)jl[i].nrun;
	}
	if (gpus < THREADS_MIN_GPUS)
		nt = 1;
	C->rep_total = runs;
	for (int i = 0; i < SEARCH_PASSES && !C->failed; i++) {
		size_t n = jl[i].nrun;

		if (i > 0 && best_job >= 0)
			plan_copy(&last, C->best);
		C->rep_more = i + 1 < SEARCH_PASSES;
		C->rep_done = total;
		if (i >= MIXED_PASS && gpus > IMPROVE_MAX_GPUS) {
			/*
			 * The best's node set: its stage count, then the
			 * others where the set is small enough.  Only its
			 * jobs are bounded (the others' bounds cost most of
			 * the ordering on the largest clusters); the second
			 * pass shares the first's job list and order.
			 */
			if (i == MIXED_PASS) {
				order_jobs(C, &jl[i], jl[i].base, sharp, 0,
				    win.use);
				jl[i + 1].run = jl[i].run;
			}
			jl[i].only = 1;
			jl[i].only_use = win.use;
			if (i == MIXED_PASS)
				jl[i].only_S = win.S;
			else if (win.use >= 0 && set_gpus(C,
			    jl[i].use[win.use]) <= MIXED_SET_GPUS)
				jl[i].not_S = win.S;
			else
				jl[i].only_use = -1;
		} else if (i == MIXED_PASS && gpus > MIXED_FULL_GPUS)
			jl[i].most = ran0 > 0 ? 2 * ran0 : 1;
		solved = C->st->structures;
		ran = search_pool_run(C, n, nt > (int)n ? (int)n : nt, run_job,
		    &jl[i]);
		/* The structures the first pass solved, not its runs. */
		if (i == 0)
			ran0 = (size_t)(C->st->structures - solved);
		/* The best structure of the first pass, if any. */
		if (i == 0 && C->have_best && C->best_job >= jl[0].base &&
		    C->best_job < jl[0].base + (long)jl[0].n)
			win = jl[0].job[C->best_job - jl[0].base];
		total += (long)ran;
		if (i > 0 && best_job >= 0) {
			if (C->best_job != best_job) {
				plan_copy(&prev[nprev++], &last);
				*mixed = i >= MIXED_PASS;
			}
			plan_free(&last);
		}
		best_job = C->have_best ? C->best_job : -1;
	}
	C->rep_more = 0;
	/* Anything scored later comes after every job. */
	C->job = base;
	C->round = 0;
	for (int i = 0; i < SEARCH_PASSES; i++)
		if (i != MIXED_PASS + 1)
			joblist_free(&jl[i]);
	return nprev;
}
