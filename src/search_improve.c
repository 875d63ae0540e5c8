/*
 * search_improve.c - the improvement phase: local moves from the best
 * plan (swaps, merges, packs, inserted runs of left-out nodes), each a
 * shape solved as the structured mode solves one, kept when T falls.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Also the two views of a plan both this phase and search_explain.c
 * start from: the plan's stages as units, and the units of the nodes it
 * leaves out.
 */
#include <stdlib.h>
#include <string.h>

#include "search_int.h"

/*
 * The units of the nodes best does not use (TP as wide as --max-tp, the
 * node and wmax allow; wmax 0: no more limit; site by site, nodes in file
 * order), into lo[]; marks used[] and returns their number.
 */
size_t
search_left_units(const struct dl_costctx *x, const struct dl_plan *best,
    char *used, struct unit *lo, int wmax)
{
	const struct dl_cluster *c = x->c;
	int kmax = x->o->max_tp > 0 ? x->o->max_tp : 8;
	size_t n = 0;

	if (wmax > 0 && wmax < kmax)
		kmax = wmax;

	for (int g = 0; g < best->ngroups; g++)
		for (int s = 0; s < best->groups[g].nstages; s++)
			used[best->groups[g].stages[s].node] = 1;
	for (size_t site = 0; site < c->nsites; site++)
		for (size_t i = 0; i < c->nnodes; i++)
			if (!used[i] && c->nodes[i].site_idx == (int)site)
				n += search_node_units(x, (int)i, kmax, lo + n);
	return n;
}

/*
 * best's groups as units (NULL when a stage's GPUs are not one contiguous
 * run, which no search builds) followed by room for nmore units.
 */
struct unit *
search_plan_units(const struct dl_costctx *x, const struct dl_plan *best,
    size_t nmore, size_t *n)
{
	size_t cap = nmore;
	struct unit *u;

	for (int g = 0; g < best->ngroups; g++)
		cap += (size_t)best->groups[g].nstages;
	u = xcalloc(cap + 1, sizeof(*u));
	*n = 0;
	for (int g = 0; g < best->ngroups; g++)
		for (int s = 0; s < best->groups[g].nstages; s++) {
			const struct dl_stage *st = &best->groups[g].stages[s];

			for (int i = 1; i < st->ngpus; i++)
				if (st->gpus[i] != st->gpus[0] + i) {
					free(u);
					return NULL;
				}
			u[*n].node = st->node;
			u[*n].k = st->ngpus;
			u[*n].gpu0 = st->gpus[0];
			u[*n].speed = st->ngpus * x->speed[st->node];
			(*n)++;
		}
	return u;
}


/*
 * The improvement phase: local moves from the best plan, each a shape
 * solved as the structured mode solves one (partition, split, repeat,
 * score), kept when T falls.
 */

/* A shape under construction: groups as lists of indices into u[]. */
struct mv {
	long *left;		/* the line's budget */
	struct unit *u;
	size_t nu, cap;
	int *grp;		/* per group: its unit indices, at goff[g] */
	int *goff, *glen;
	int G;
};

/*
 * Solve the shape of groups lst[] (G groups of len[g] units, listed in
 * order) on C, or add it to C's batch (C->scratch) when there is one; 1
 * when C's best got faster.  The caller has charged the shape one of
 * the budget; above IMPROVE_MAX_GPUS GPUs a shape of more than
 * IMPROVE_CHARGE_GPUS GPUs is charged the rest here.
 */
static int
try_shape(struct ctx *C, const struct mv *m, const int *lst, const int *len,
    int G)
{
	const struct unit **ord = xcalloc(m->nu + 2, sizeof(*ord));
	struct shape sh;
	double before = C->best_t;
	int n = 0, maxs = C->x->o->max_stages, ok = 1, hit = 0;
	long gpus = 0, charge = 1;

	sh.G = G;
	sh.S = xcalloc((size_t)G + 1, sizeof(int));
	sh.off = xcalloc((size_t)G + 1, sizeof(int));
	for (int g = 0; g < G; g++) {
		sh.S[g] = len[g];
		sh.off[g] = n;
		ok &= len[g] >= 1 && (maxs <= 0 || len[g] <= maxs);
		for (int j = 0; j < len[g]; j++) {
			ord[n] = &m->u[lst[sh.off[g] + j]];
			gpus += ord[n++]->k;
		}
	}
	sh.u = ord;
	ok = ok && search_strategy_allows(C->so->strategy, &sh);
	if (ok && cluster_gpus(C->x->c) > IMPROVE_MAX_GPUS) {
		/* The caller charged one. */
		charge = (gpus + IMPROVE_CHARGE_GPUS - 1) / IMPROVE_CHARGE_GPUS;
		*m->left -= charge - 1;
	}
	if (C->scratch != NULL)
		hit = batch_add(C->scratch, &sh, ok, charge);
	else if (ok)
		search_solve_shape(C, &sh);
	free(sh.S);
	free(sh.off);
	free(ord);
	return hit || C->best_t < before;
}

/* Solve the shapes a batch holds, if any: 1 when they made the best plan
 * faster. */
static int
flushed(struct ctx *C)
{
	return C->scratch != NULL ? batch_flush(C->scratch) : 0;
}

/* The current best plan's groups as m's groups over its units. */
static int
mv_load(struct mv *m, const struct dl_costctx *x, const struct dl_plan *p)
{
	size_t n;
	struct unit *pu = search_plan_units(x, p, 0, &n);

	if (pu == NULL)
		return 0;
	m->nu = 0;
	for (size_t i = 0; i < n; i++) {
		m->u = xgrow(m->u, &m->cap, m->nu + 1, sizeof(*m->u));
		m->u[m->nu++] = pu[i];
	}
	free(pu);
	m->G = p->ngroups;
	free(m->grp);
	free(m->goff);
	free(m->glen);
	m->grp = xcalloc(n + 1, sizeof(int));
	m->goff = xcalloc((size_t)m->G + 1, sizeof(int));
	m->glen = xcalloc((size_t)m->G + 1, sizeof(int));
	for (int g = 0, k = 0; g < m->G; g++) {
		m->goff[g] = k;
		m->glen[g] = p->groups[g].nstages;
		for (int j = 0; j < m->glen[g]; j++, k++)
			m->grp[k] = k;
	}
	return 1;
}

/*
 * Swap two units: first at one position of two groups (members of one
 * sync ring), then anywhere in two groups or in one.  lst and len are
 * scratch for n units; 1 when a swap made the best plan faster.
 */
static int
mv_swaps(struct ctx *C, struct mv *m, int *lst, int *len, size_t n,
    long *left)
{
	int G = m->G, hit = 0;

	for (int pass = 0; pass < 2; pass++)
		for (int a = 0; a < G && !hit && *left > 0; a++)
			for (int b = a + (pass == 0); b < G && !hit &&
			    *left > 0; b++)
				for (int i = 0; i < m->glen[a] && !hit &&
				    *left > 0; i++)
					for (int j = pass == 0 ? i : a == b ?
					    i + 1 : 0; j < m->glen[b] &&
					    (pass == 1 || j == i) && !hit &&
					    *left > 0; j++) {
						if (pass == 1 && a != b && i == j)
							continue;
						memcpy(lst, m->grp, n *
						    sizeof(int));
						memcpy(len, m->glen, (size_t)G *
						    sizeof(int));
						lst[m->goff[a] + i] =
						    m->grp[m->goff[b] + j];
						lst[m->goff[b] + j] =
						    m->grp[m->goff[a] + i];
						(*left)--;
						hit = try_shape(C, m, lst, len,
						    G);
					}
	return hit;
}

/*
 * Merge two consecutive stages of a group whose units are halves of one
 * wider unit (the same node, the same degree, side by side): the inverse
 * of a split, so that each GPU type can settle on its own TP degree.  lst
 * and len are scratch; 1 when a merge made the best plan faster.
 */
static int
mv_merges(struct ctx *C, struct mv *m, int *lst, int *len, long *left)
{
	int G = m->G, hit = 0;

	for (int g = 0; g < G && !hit && *left > 0; g++)
		for (int j = 0; j + 1 < m->glen[g] && !hit && *left > 0; j++) {
			const struct unit *p = &m->u[m->grp[m->goff[g] + j]];
			const struct unit *q = &m->u[m->grp[m->goff[g] + j +
			    1]];
			int gpu0 = p->gpu0 < q->gpu0 ? p->gpu0 : q->gpu0;
			size_t k = 0;

			if (p->node != q->node || p->k != q->k || 2 * p->k >
			    C->x->o->max_tp || abs(p->gpu0 - q->gpu0) != p->k)
				continue;
			m->u = xgrow(m->u, &m->cap, m->nu + 1, sizeof(*m->u));
			/* xgrow may move u[]: p and q are not used below. */
			m->u[m->nu] = m->u[m->grp[m->goff[g] + j]];
			m->u[m->nu].k *= 2;
			m->u[m->nu].gpu0 = gpu0;
			m->u[m->nu].speed = m->u[m->nu].k *
			    C->x->speed[m->u[m->nu].node];
			for (int gg = 0; gg < G; gg++) {
				len[gg] = m->glen[gg] - (gg == g);
				for (int jj = 0; jj < m->glen[gg]; jj++) {
					if (gg == g && jj == j + 1)
						continue;
					lst[k++] = gg == g && jj == j ?
					    (int)m->nu : m->grp[m->goff[gg] + jj];
				}
			}
			m->nu++;
			(*left)--;
			hit = try_shape(C, m, lst, len, G);
			m->nu--;
		}
	return hit;
}

/* Order of the units on a node when it is packed again: wider first,
 * then as listed. */
struct pack {
	int k, pos;
};

static int
pack_cmp(const void *pa, const void *pb)
{
	const struct pack *a = pa, *b = pb;

	if (a->k != b->k)
		return b->k - a->k;
	return a->pos - b->pos;
}

/*
 * Merge two consecutive stages of a group on one node and of one degree
 * that mv_merges() leaves out because they are not side by side (the
 * search's other moves can leave a node's units in any order): the units
 * the shape has on that node are packed again, wider first, so that the
 * merged one gets contiguous GPUs.  Only a unit's node and degree enter
 * the cost, not which of the node's GPUs it has.  lst and len are
 * scratch; 1 when a merge made the best plan faster.
 */
static int
mv_packs(struct ctx *C, struct mv *m, int *lst, int *len, long *left)
{
	int G = m->G, hit = 0;

	for (int g = 0; g < G && !hit && *left > 0; g++)
		for (int j = 0; j + 1 < m->glen[g] && !hit && *left > 0; j++) {
			int a = m->grp[m->goff[g] + j];
			int b = m->grp[m->goff[g] + j + 1];
			int node = m->u[a].node, k2 = 2 * m->u[a].k, gpu = 0;
			size_t k = 0, nn = 0, base;
			struct pack *pk;

			if (m->u[b].node != node || m->u[b].k != m->u[a].k ||
			    k2 > C->x->o->max_tp || abs(m->u[a].gpu0 -
			    m->u[b].gpu0) == m->u[a].k)
				continue;
			for (int gg = 0; gg < G; gg++) {
				len[gg] = m->glen[gg] - (gg == g);
				for (int jj = 0; jj < m->glen[gg]; jj++)
					if (gg != g || jj != j + 1)
						lst[k++] = m->grp[m->goff[gg] +
						    jj];
			}
			for (size_t i = 0; i < k; i++)
				nn += m->u[lst[i]].node == node;
			/* The node's units in the shape, as fresh copies. */
			m->u = xgrow(m->u, &m->cap, m->nu + nn, sizeof(*m->u));
			base = m->nu;
			pk = xcalloc(nn, sizeof(*pk));
			nn = 0;
			for (size_t i = 0; i < k; i++) {
				if (m->u[lst[i]].node != node)
					continue;
				m->u[base + nn] = m->u[lst[i]];
				if (lst[i] == a) {
					m->u[base + nn].k = k2;
					m->u[base + nn].speed = k2 *
					    C->x->speed[node];
				}
				lst[i] = (int)(base + nn);
				pk[nn].k = m->u[base + nn].k;
				pk[nn].pos = (int)nn;
				nn++;
			}
			qsort(pk, nn, sizeof(*pk), pack_cmp);
			for (size_t i = 0; i < nn; i++) {
				m->u[base + (size_t)pk[i].pos].gpu0 = gpu;
				gpu += pk[i].k;
			}
			free(pk);
			m->nu += nn;
			(*left)--;
			hit = try_shape(C, m, lst, len, G);
			m->nu = base;
		}
	return hit;
}

/* The widest units of left-out nodes in search_improve()'s second line. */
#define IMPROVE_NARROW 2

/* The most left-out units mv_inserts() gives each group. */
#define INSERT_RUN 8

/*
 * The nodes of lo[] (search_left_units(): each node's units one after another)
 * cut again into units of at most w GPUs, into out[]; returns how many.
 */
static size_t
recut(const struct dl_costctx *x, const struct unit *lo, size_t nlo, int w,
    struct unit *out)
{
	size_t n = 0;

	for (size_t i = 0; i < nlo; i++)
		if (i == 0 || lo[i - 1].node != lo[i].node)
			n += search_node_units(x, lo[i].node, w, out + n);
	return n;
}

/*
 * One shape of mv_inserts(): lo[g k .. g k + k - 1] before stage p of
 * group g (at its end when it has fewer), for every g.  l2 and len2 are
 * scratch; 1 when the shape made the best plan faster.
 */
static int
insert_run(struct ctx *C, struct mv *m, const struct unit *lo, size_t k,
    int p, int *l2, int *len2)
{
	int G = m->G, hit;
	size_t at = 0;

	m->u = xgrow(m->u, &m->cap, m->nu + k * (size_t)G, sizeof(*m->u));
	for (size_t i = 0; i < k * (size_t)G; i++)
		m->u[m->nu + i] = lo[i];
	for (int g = 0; g < G; g++) {
		int cut = p < m->glen[g] ? p : m->glen[g];

		len2[g] = m->glen[g] + (int)k;
		for (int j = 0; j < cut; j++)
			l2[at++] = m->grp[m->goff[g] + j];
		for (size_t i = 0; i < k; i++)
			l2[at++] = (int)(m->nu + (size_t)g * k + i);
		for (int j = cut; j < m->glen[g]; j++)
			l2[at++] = m->grp[m->goff[g] + j];
	}
	m->nu += k * (size_t)G;
	hit = try_shape(C, m, l2, len2, G);
	m->nu -= k * (size_t)G;
	return hit;
}

/*
 * Left-out units as a run of short stages inside every group: k of them
 * to each group (dealt in site order, the first k to the first group),
 * before the same stage p, for k = 1 .. INSERT_RUN and every p; the
 * units are lo0[]'s nodes cut into units of at most w GPUs.
 * A slow node alone seldom pays for the stage it adds to the pipeline's
 * fill, so single moves do not find this; a few together can (philly-64's
 * P100 nodes, three in each pipeline of V100s, holding a block each).
 * Every run is tried, so that the best of them, not the first that
 * helps, is the one kept.  1 when a run made the best plan faster.
 */
static int
mv_inserts(struct ctx *C, struct mv *m, const struct unit *lo0, size_t nlo0,
    int w, long *left)
{
	int G = m->G, hit = 0, smax = 0;
	size_t n = 0, cap = 0, nlo;
	int *l2, *len2;
	struct unit *lo;

	for (int g = 0; g < G; g++) {
		n += (size_t)m->glen[g];
		if (m->glen[g] > smax)
			smax = m->glen[g];
	}
	for (size_t i = 0; i < nlo0; i++)
		cap += (size_t)lo0[i].k;
	lo = xcalloc(cap + 1, sizeof(*lo));
	nlo = recut(C->x, lo0, nlo0, w, lo);
	l2 = xcalloc(n + cap + 2, sizeof(int));
	len2 = xcalloc((size_t)G + 2, sizeof(int));
	if (C->scratch != NULL)
		batch_all(C->scratch, 1);
	for (size_t k = 1; k <= INSERT_RUN && k * (size_t)G <= nlo &&
	    *left > 0; k++)
		for (int p = 0; p <= smax && *left > 0; p++) {
			(*left)--;
			hit |= insert_run(C, m, lo, k, p, l2, len2);
		}
	hit |= flushed(C);
	if (C->scratch != NULL)
		batch_all(C->scratch, 0);
	free(lo);
	free(l2);
	free(len2);
	return hit;
}

/*
 * The moves of one round that use only the plan's own units: swaps,
 * splits into halves, moves to another group.  lst and len are scratch
 * for n units; 1 as soon as one makes the best plan faster.
 */
static int
mv_round_own(struct ctx *C, struct mv *m, int *lst, int *len, size_t n,
    long *left)
{
	int G = m->G, hit = mv_swaps(C, m, lst, len, n, left) || flushed(C);

	/* Split a unit in two halves: the second half joins another group
	 * at its end, or follows the first as a stage of its own. */
	for (int g = 0; g < G && !hit && *left > 0; g++)
		for (int j = 0; j < m->glen[g] && !hit && *left > 0; j++) {
			int ui = m->grp[m->goff[g] + j];
			struct unit h = m->u[ui];

			if (h.k < 2)
				continue;
			for (int g2 = 0; g2 < G && !hit && *left > 0; g2++) {
				size_t k = 0;
				int *l2 = xcalloc(n + 2, sizeof(int));

				m->u = xgrow(m->u, &m->cap, m->nu + 2,
				    sizeof(*m->u));
				m->u[m->nu] = m->u[ui];
				m->u[m->nu].k = h.k / 2;
				m->u[m->nu].speed = h.speed / 2;
				m->u[m->nu + 1] = m->u[m->nu];
				m->u[m->nu + 1].gpu0 = h.gpu0 + h.k / 2;
				for (int gg = 0; gg < G; gg++) {
					len[gg] = m->glen[gg];
					for (int jj = 0; jj < m->glen[gg]; jj++) {
						int v = m->grp[m->goff[gg] + jj];

						l2[k++] = v == ui ? (int)m->nu : v;
						if (v == ui && g2 == g) {
							l2[k++] = (int)m->nu + 1;
							len[gg]++;
						}
					}
					if (gg == g2 && g2 != g) {
						l2[k++] = (int)m->nu + 1;
						len[gg]++;
					}
				}
				m->nu += 2;
				(*left)--;
				hit = try_shape(C, m, l2, len, G);
				m->nu -= 2;
				free(l2);
			}
		}
	hit = hit || flushed(C);
	/* Move a unit of a group of two or more stages to another group. */
	for (int a = 0; a < G && !hit && *left > 0; a++)
		for (int i = 0; i < m->glen[a] && m->glen[a] >= 2 && !hit &&
		    *left > 0; i++)
			for (int b = 0; b < G && !hit && *left > 0; b++) {
				size_t k = 0;

				if (b == a)
					continue;
				for (int gg = 0; gg < G; gg++) {
					len[gg] = m->glen[gg] - (gg == a);
					for (int jj = 0; jj < m->glen[gg]; jj++)
						if (gg != a || jj != i)
							lst[k++] = m->grp[m->goff[gg] +
							    jj];
					if (gg == b) {
						lst[k++] = m->grp[m->goff[a] + i];
						len[gg]++;
					}
				}
				(*left)--;
				hit = try_shape(C, m, lst, len, G);
			}
	return hit || flushed(C);
}

/*
 * Where the first line's moves first depend on the left-out units, which
 * are all the two lines differ in (search_improve()).  Up to there the
 * second line would try the same shapes on the same plans, so it starts
 * from this plan and budget instead.
 */
struct fork {
	int have;		/* the first line got there */
	struct dl_plan plan;	/* the best plan then */
	long left;		/* the shapes it had left then */
};

/*
 * One round of moves in a fixed order; 1 as soon as one makes the best
 * plan faster (the caller reloads and starts again), 0 when none does or
 * the budget of shapes is spent.  With from_lo set the round starts at
 * the moves of left-out units; fk, when not NULL, records where the
 * round first reaches them.
 */
static int
mv_round(struct ctx *C, struct mv *m, const struct unit *lo, size_t nlo,
    long *left, int from_lo, struct fork *fk)
{
	size_t n = 0;
	int G = m->G, *lst, *len, hit = 0, wmax = 0;

	for (int g = 0; g < G; g++)
		n += (size_t)m->glen[g];
	lst = xcalloc(n + 2, sizeof(int));
	len = xcalloc((size_t)G + 2, sizeof(int));
	if (!from_lo)
		hit = mv_round_own(C, m, lst, len, n, left);
	if (fk != NULL && !fk->have && nlo > 0 && !hit && *left > 0) {
		fk->have = 1;
		plan_copy(&fk->plan, C->best);
		fk->left = *left;
	}
	/* Every left-out unit, in site order, as one more pipeline. */
	if (nlo > 0 && !hit && *left > 0) {
		int *l2 = xcalloc(n + nlo + 2, sizeof(int));
		int *len2 = xcalloc((size_t)G + 2, sizeof(int));

		m->u = xgrow(m->u, &m->cap, m->nu + nlo, sizeof(*m->u));
		memcpy(l2, m->grp, n * sizeof(int));
		memcpy(len2, m->glen, (size_t)G * sizeof(int));
		for (size_t i = 0; i < nlo; i++) {
			m->u[m->nu + i] = lo[i];
			l2[n + i] = (int)(m->nu + i);
		}
		len2[G] = (int)nlo;
		m->nu += nlo;
		(*left)--;
		hit = try_shape(C, m, l2, len2, G + 1) || flushed(C);
		m->nu -= nlo;
		free(l2);
		free(len2);
	}
	/* A left-out unit joins a group at its end. */
	for (size_t i = 0; i < nlo && !hit && *left > 0; i++)
		for (int g = 0; g < G && !hit && *left > 0; g++) {
			size_t k = 0;
			int *l2 = xcalloc(n + 2, sizeof(int));

			m->u = xgrow(m->u, &m->cap, m->nu + 1, sizeof(*m->u));
			m->u[m->nu] = lo[i];
			for (int gg = 0; gg < G; gg++) {
				len[gg] = m->glen[gg];
				for (int jj = 0; jj < m->glen[gg]; jj++)
					l2[k++] = m->grp[m->goff[gg] + jj];
				if (gg == g) {
					l2[k++] = (int)m->nu;
					len[gg]++;
				}
			}
			m->nu++;
			(*left)--;
			hit = try_shape(C, m, l2, len, G);
			m->nu--;
			free(l2);
		}
	hit = hit || flushed(C);
	if (!hit)
		hit = mv_merges(C, m, lst, len, left) || flushed(C);
	if (!hit)
		hit = mv_packs(C, m, lst, len, left) || flushed(C);
	/*
	 * Runs of left-out units as wide as lo[] has them (cut again at its
	 * widest, a node's units are lo[]'s), then narrower.
	 */
	for (size_t i = 0; i < nlo; i++)
		wmax = lo[i].k > wmax ? lo[i].k : wmax;
	for (int w = wmax; w >= 1 && !hit && *left > 0; w /= 2)
		hit = mv_inserts(C, m, lo, nlo, w, left);
	free(lst);
	free(len);
	return hit;
}

/*
 * The shapes a line may try: IMPROVE_SHAPES, and above IMPROVE_LAYERS
 * layers that many times IMPROVE_LAYERS / L, since each shape's
 * partition grows with the layers (at 200 layers the full budget took
 * 81% of the planning time for a plan 0.18% faster).  Above
 * IMPROVE_MAX_GPUS GPUs, that many times IMPROVE_MAX_GPUS / GPUs, and
 * try_shape() charges a wide shape more: with the full budget the phase
 * took 2.3 and 5.8 s on top of 1.9 and 1.4 s at 4,096 GPUs, for plans
 * 0.67% and 0.09% faster.
 */
static long
improve_budget(const struct dl_costctx *x)
{
	long L = (long)x->m->nlayers, gpus = cluster_gpus(x->c);
	long n = IMPROVE_SHAPES;

	if (L > IMPROVE_LAYERS)
		n = n * IMPROVE_LAYERS / L;
	if (gpus > IMPROVE_MAX_GPUS)
		n = n * IMPROVE_MAX_GPUS / gpus;
	return n > 0 ? n : 1;
}

/* batch_free() as a context's scratch_free. */
static void
batch_free_v(void *b)
{
	batch_free(b);
}

/*
 * One line of the improvement phase from best, the left-out nodes cut
 * into units of at most wmax GPUs (0: as wide as they go), with left
 * shapes to try.  With from_lo set its first round starts at the moves
 * of left-out units; fk, when not NULL, records where they are first
 * reached.
 */
static void
improve_line(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st, int wmax, long left,
    int from_lo, struct fork *fk)
{
	struct dl_costctx xl;
	struct mv m = { 0 };
	struct ctx C;
	char *used = xcalloc(x->c->nnodes + 1, 1);
	struct unit *lo = xcalloc((size_t)cluster_gpus(x->c) + 1, sizeof(*lo));
	size_t nlo = search_left_units(x, best, used, lo, wmax);
	int nt = so->jobs > 1 && cluster_gpus(x->c) >= THREADS_MIN_GPUS ?
	    so->jobs : 1;

	search_ctx_open(&C, &xl, x, so, st, best);
	C.have_best = 1;
	C.best_t = best->est.iteration_s;
	/* Ties keep the plan found: a move must be strictly faster. */
	C.best_job = -1;
	C.job = 0;
	m.left = &left;
	if (nt > 1) {
		C.scratch = batch_new(&C, nt, &left);
		C.scratch_free = batch_free_v;
	}
	while (left > 0 && !C.failed && mv_load(&m, x, best) &&
	    mv_round(&C, &m, lo, nlo, &left, from_lo, fk)) {
		from_lo = 0;
		memset(used, 0, x->c->nnodes + 1);
		nlo = search_left_units(x, best, used, lo, wmax);
	}
	search_ctx_free(&C);
	free(m.u);
	free(m.grp);
	free(m.goff);
	free(m.glen);
	free(used);
	free(lo);
}

/*
 * The moves are taken as they come, so where they end depends on the
 * units the left-out nodes are cut into: on hetero-lab the T4 and V100
 * nodes join gpt2-xl's pipeline better as TP2 units than as the widest
 * ones.  When a left-out node has more than two GPUs in units, a second
 * line starts from the same plan with units of at most two, and its end
 * is kept only when strictly faster, so the plan is never worse than
 * the first line's.  Until the first line reaches a move of left-out
 * units the second would repeat it shape for shape, so it starts where
 * the first got to then, and not at all when the first never got there.
 */
void
search_improve(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st)
{
	char *used = xcalloc(x->c->nnodes + 1, 1);
	struct unit *lo = xcalloc((size_t)cluster_gpus(x->c) + 1, sizeof(*lo));
	size_t nlo = search_left_units(x, best, used, lo, 0);
	int wide = 0;
	struct fork fk = { 0 };

	for (size_t i = 0; i < nlo; i++)
		wide |= lo[i].k > IMPROVE_NARROW;
	free(used);
	free(lo);
	improve_line(x, so, best, st, 0, improve_budget(x), 0,
	    wide ? &fk : NULL);
	if (!fk.have)
		return;
	improve_line(x, so, &fk.plan, st, IMPROVE_NARROW, fk.left, 1, NULL);
	if (fk.plan.est.iteration_s < best->est.iteration_s) {
		plan_free(best);
		plan_copy(best, &fk.plan);
	}
	plan_free(&fk.plan);
}
