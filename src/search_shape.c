/*
 * search_shape.c - one shape of the structured mode (dlplan(1) ALGORITHMS,
 * Solver): each group partitioned by the layer-partition DP (and the MILP
 * where the DP's scan stops short), the micro-batches split by the exact
 * data-split search, in rounds until the split stops changing, every
 * round's plan scored.  The frontiers and answers of the partitions are
 * cached in the context.  search_structured.c lists the shapes.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "partition.h"
#include "search_int.h"
#include "split.h"

/* Candidate bottlenecks the DP scans before the MILP takes over. */
#define PART_SCAN 4096

static int partition_solve(struct ctx *, const struct part_group *,
    struct part_front *, int, const char *, struct part_result *,
    struct dl_err *);

/*
 * The id of the price vector of boundary j of cc's pipeline (node j to
 * node j + 1); -1 when transfers are left out.
 */
static int
comm_id(struct ctx *C, const struct commctx *cc, int j)
{
	const struct dl_costctx *x = C->x;
	int ab[2] = { cc->node[j], cc->node[j + 1] }, *id, *pid;
	double mu = (double)x->o->micro_batch, *v;
	size_t n = 2 * (size_t)C->L * sizeof(double);	/* fwd, then bwd */

	if (cc->zero)
		return -1;
	if ((id = kc_find(&C->cid.pair, (const char *)ab, sizeof(ab))) != NULL)
		return *id;
	v = xmalloc(n);
	for (int l = 0; l < C->L; l++)
		search_comm((void *)cc, j, mu * x->m->layers[l].act_mb * 1e6,
		    &v[l], &v[C->L + l]);
	if ((id = kc_find(&C->cid.vec, (const char *)v, n)) == NULL) {
		id = xmalloc(sizeof(int));
		*id = C->cid.n;
		kc_put(&C->cid.vec, (const char *)v, n, id);
		C->cid.v = xgrow(C->cid.v, &C->cid.cap, (size_t)C->cid.n + 1,
		    sizeof(double *));
		C->cid.v[C->cid.n++] = v;
	} else {
		free(v);
	}
	pid = xmalloc(sizeof(int));
	*pid = *id;
	kc_put(&C->cid.pair, (const char *)ab, sizeof(ab), pid);
	return *pid;
}

/* Append n bytes at p to key buffer k at *len. */
static void
key_add(char *k, size_t *len, const void *p, size_t n)
{
	memcpy(k + *len, p, n);
	*len += n;
}

/*
 * What search_solve_shape() works out once for its shape: the node and the
 * TP degree of every unit (group g's from off[g]), and room for the cache
 * key and the price vectors of partition() for the largest group.
 */
struct shape_buf {
	int *node, *k;
	char *key;
	const double **commv;
};

/*
 * Partition group g of sh for m micro-batches: the exact DP and then, for
 * two or more stages when use_milp is set, the MILP started from it.  With
 * zero the transfers are left out (the compute-only lower bound).  Answers
 * are cached; so is each group's DP frontier, which serves every m.
 */
static int
partition(struct ctx *C, const struct shape *sh, const struct shape_buf *sb,
    int g, long m, int zero, int use_milp, const char *dump,
    struct part_result *r, struct dl_err *e)
{
	const struct dl_costctx *x = C->x;
	int S = sh->S[g];
	const int *node = sb->node + sh->off[g], *k = sb->k + sh->off[g];
	struct commctx cc;
	struct part_group pg = { 0 };
	struct part_result *hit;
	struct part_front *F;
	const double **commv = sb->commv;
	char *key = sb->key;
	size_t len = 0, plen;
	long mm = m < S ? m : S;
	int rc;

	cc.x = x;
	cc.node = node;
	cc.zero = zero;
	cc.cache = &C->tc;
	pg.S = S;
	pg.node = node;
	pg.k = k;
	pg.m = m;
	pg.comm = search_comm;
	pg.ctx = &cc;
	if (dump != NULL)
		return partition_solve(C, &pg, NULL, use_milp, dump, r, e);
	if (C->cid.zero == NULL)
		C->cid.zero = xcalloc(2 * (size_t)C->L, sizeof(double));
	key_add(key, &len, &S, sizeof(S));
	key_add(key, &len, &zero, sizeof(zero));
	for (int j = 0; j < S; j++) {
		double f[3] = { x->speed[node[j]], cost_gpu_capacity(x,
		    node[j]), x->c->nodes[node[j]].intra_gbps };
		int id = j + 1 < S ? comm_id(C, &cc, j) : -2;

		commv[j] = j + 1 == S ? NULL : id >= 0 ? C->cid.v[id] :
		    C->cid.zero;
		key_add(key, &len, f, sizeof(f));
		key_add(key, &len, &k[j], sizeof(int));
		key_add(key, &len, &id, sizeof(int));
	}
	plen = len;
	key_add(key, &len, &m, sizeof(m));
	if ((hit = kc_find(&C->pc, key, len)) != NULL) {
		*r = *hit;
		r->last = xmemdup(hit->last, (size_t)S, sizeof(int));
		return DL_OK;
	}
	len = plen;
	key_add(key, &len, &mm, sizeof(mm));
	if ((F = kc_find(&C->fc, key, len)) == NULL) {
		pg.commv = (const double *const *)commv;
		F = part_front_new(x, &pg, PART_SCAN);
		pg.commv = NULL;
		kc_put(&C->fc, key, len, F);
	}
	rc = partition_solve(C, &pg, F, use_milp, NULL, r, e);
	if (rc == DL_OK) {
		hit = xmemdup(r, 1, sizeof(*r));
		hit->last = xmemdup(r->last, (size_t)S, sizeof(int));
		len = plen;
		key_add(key, &len, &m, sizeof(m));
		kc_put(&C->pc, key, len, hit);
	}
	return rc;
}

/*
 * The DP (from frontier F when given), and the MILP when the DP's scan
 * was cut short.
 */
static int
partition_solve(struct ctx *C, const struct part_group *pg,
    struct part_front *F, int use_milp, const char *dump,
    struct part_result *r, struct dl_err *e)
{
	int S = pg->S, rc;

	rc = F ? part_front_query(F, pg->m, r) :
	    part_dp(C->x, pg, PART_SCAN, r);
	/*
	 * The DP is exact when its bottleneck scan finishes; GLPK proves the
	 * rest when the scan was cut short.
	 */
	if (rc == DL_OK && use_milp && S >= 2 && r->status == LP_FEASIBLE) {
		struct part_result mr;
		struct lp_params prm = { C->so->time_limit, 0 };
		struct dl_err me = { 0 };

		/*
		 * Without a dump, a GLPK failure (extreme coefficients) leaves
		 * the DP's partition standing, feasible but unproven.
		 */
		rc = part_milp(C->x, pg, r, &prm, dump, &mr, dump ? e : &me);
		C->st->milps++;
		if (rc != DL_OK && dump == NULL)
			return DL_OK;
		if (rc == DL_OK) {
			if (mr.status == LP_OPTIMAL || (mr.status ==
			    LP_FEASIBLE && mr.obj < r->obj)) {
				part_result_free(r);
				*r = mr;
			} else {
				part_result_free(&mr);
			}
		}
	}
	return rc;
}

/* Group speed for the first split: FLOP/s of its slowest stage times S. */
static double
group_speed(const struct shape *sh, int g)
{
	double s = 0;

	for (int j = 0; j < sh->S[g]; j++)
		s += sh->u[sh->off[g] + j]->speed;
	return s;
}

/* Split total in proportion to w (largest remainder, ties by index). */
static void
proportional(const double *w, int G, long total, long *m)
{
	double sum = 0, *rem = xcalloc((size_t)G, sizeof(double));
	long given = 0;

	for (int g = 0; g < G; g++)
		sum += w[g];
	for (int g = 0; g < G; g++) {
		double q = sum > 0 ? (double)total * w[g] / sum :
		    (double)total / G;

		m[g] = (long)floor(q);
		rem[g] = q - (double)m[g];
		given += m[g];
	}
	while (given < total) {
		int b = 0;

		for (int g = 1; g < G; g++)
			if (rem[g] > rem[b])
				b = g;
		m[b]++;
		rem[b] = -1;
		given++;
	}
	free(rem);
}

/* The data-split terms of group g of sh with stage ends last. */
static void
split_terms(struct ctx *C, const struct shape *sh, const struct shape_buf *sb,
    int g, const int *last, struct split_group *sg)
{
	int S = sh->S[g];
	const int *node = sb->node + sh->off[g], *k = sb->k + sh->off[g];

	search_group_am(C->x, S, node, k, last, &C->tc, &sg->A, &sg->M);
	sg->cap = part_mcap(C->x, S, k, node, last);
}

/* The largest search_group_lb() of sh's groups with stage ends last[g]
 * and m[g] micro-batches (groups with none take no time). */
static double
group_bounds(struct ctx *C, const struct shape *sh, const struct shape_buf *sb,
    int *const *last, const long *m)
{
	double z = 0;

	for (int g = 0; g < sh->G; g++) {
		if (m[g] <= 0)
			continue;
		z = fmax(z, search_group_lb(C->x, sh->S[g], sb->node +
		    sh->off[g], sb->k + sh->off[g], last[g], &C->tc, m[g]));
	}
	return z;
}

/*
 * The structured mode's inner loop for one shape: partition every group
 * for its share of micro-batches, split the micro-batches for those
 * partitions, and repeat until the split stops changing (at most four
 * rounds).  Every round's plan is scored.
 */
void
search_solve_shape(struct ctx *C, const struct shape *sh)
{
	int G = sh->G;
	long *m = xcalloc((size_t)G, sizeof(long));
	long *m2 = xcalloc((size_t)G, sizeof(long));
	double *w = xcalloc((size_t)G, sizeof(double));
	int **last = xcalloc((size_t)G, sizeof(int *));
	unsigned char *dead = xcalloc((size_t)G, 1);
	struct split_group *sg = xcalloc((size_t)G, sizeof(*sg));
	struct shape_buf sb;
	int n = 0, smax = 1;

	for (int g = 0; g < G; g++) {
		n += sh->S[g];
		if (sh->S[g] > smax)
			smax = sh->S[g];
	}
	sb.node = xcalloc(2 * (size_t)(n > 0 ? n : 1), sizeof(int));
	sb.k = sb.node + n;
	for (int g = 0; g < G; g++)
		for (int j = 0; j < sh->S[g]; j++) {
			sb.node[sh->off[g] + j] = sh->u[sh->off[g] + j]->node;
			sb.k[sh->off[g] + j] = sh->u[sh->off[g] + j]->k;
		}
	sb.key = xmalloc(2 * sizeof(int) + (size_t)smax * (3 *
	    sizeof(double) + 2 * sizeof(int)) + 2 * sizeof(long));
	sb.commv = xcalloc((size_t)smax, sizeof(*sb.commv));
	C->st->structures++;
	for (int g = 0; g < G; g++)
		w[g] = group_speed(sh, g);
	proportional(w, G, C->total, m);
	for (int round = 0; round < 4 && !C->failed; round++) {
		int ok = 1, st, same = round > 0;
		double z;

		C->round = round;
		for (int g = 0; g < G && ok; g++) {
			struct part_result r;
			long mg = m[g] > 0 ? m[g] : 1;

			if (partition(C, sh, &sb, g, mg, 0, 1, NULL, &r,
			    &C->err) != DL_OK) {
				C->failed = 1;
				ok = 0;
				break;
			}
			if (same && (dead[g] != (r.status == LP_INFEASIBLE) ||
			    memcmp(last[g], r.last, (size_t)sh->S[g] *
			    sizeof(int)) != 0))
				same = 0;
			free(last[g]);
			last[g] = r.last;
			dead[g] = r.status == LP_INFEASIBLE;
			if (dead[g]) {
				/* This group cannot hold the model. */
				sg[g].A = sg[g].M = 0;
				sg[g].cap = 0;
				continue;
			}
			split_terms(C, sh, &sb, g, last[g], &sg[g]);
		}
		/*
		 * The partitions of the last round again: the split is a
		 * function of them, so this round would score the same plan
		 * as the last one, which it cannot beat (ties go to the
		 * earlier round), and end there.
		 */
		if (!ok || same)
			break;
		/*
		 * The exact threshold search: the optimum of the data-split
		 * MILP (tested against GLPK and a brute force) with fixed tie
		 * rules, and no solver's time cap to depend on.
		 */
		split_exact(sg, G, C->total, 0, m2, &z, &st);
		if (st != LP_OPTIMAL && st != LP_FEASIBLE)
			break;
		/*
		 * z is the split's estimate, not a bound; lb bounds every
		 * group's T_g from below with its transfers unshared and
		 * leaves out the sync, so a plan with lb above the best T so
		 * far cannot win.
		 */
		z = group_bounds(C, sh, &sb, last, m2);
		if (search_cut(C, z)) {
			C->st->pruned++;
		} else {
			search_build_plan(C, &C->work, sh, last, m2);
			/* Nor can one whose sync alone would make up the rest. */
			if (C->work.ngroups > 0 && search_cut(C, z +
			    cost_sync_bound(C->x, &C->sb, &C->work)))
				C->st->pruned++;
			else if (C->work.ngroups > 0)
				search_consider(C);
		}
		if (memcmp(m, m2, (size_t)G * sizeof(long)) == 0)
			break;
		memcpy(m, m2, (size_t)G * sizeof(long));
	}
	for (int g = 0; g < G; g++)
		free(last[g]);
	free(last);
	free(dead);
	free(m);
	free(m2);
	free(w);
	free(sg);
	free(sb.node);
	free(sb.key);
	free(sb.commv);
}
