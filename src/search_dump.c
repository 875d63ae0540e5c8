/*
 * search_dump.c - the programs behind a plan, written in CPLEX LP format
 * (search_dump(), see search.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "af.h"
#include "partition.h"
#include "sb.h"
#include "search_int.h"
#include "split.h"

/* The node, TP degree and last layer of every stage of gr. */
static void
stage_arrays(const struct dl_group *gr, int *node, int *k, int *last)
{
	for (int j = 0; j < gr->nstages; j++) {
		node[j] = gr->stages[j].node;
		k[j] = gr->stages[j].ngpus;
		last[j] = gr->stages[j].last;
	}
}

/* Append "NAME STATUS OBJECTIVE" to objs. */
static void
add_objective(struct strbuf *objs, const char *name, int status, double obj)
{
	sb_addf(objs, "%s %s ", name, lp_status_name(status));
	sb_adddbl(objs, obj);
	sb_addc(objs, '\n');
}

/*
 * Write and solve the layer partition of group g (gr) for its
 * micro-batches, unless it has one stage; sg receives the group's A and M
 * as the plan has it, with no memory cap.
 */
static int
dump_partition(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_group *gr, int g, struct strbuf *objs,
    struct split_group *sg, struct dl_err *e)
{
	int S = gr->nstages, rc;
	int *node, *k, *last;
	struct commctx cc;
	struct part_group pg = { 0 };
	struct lp_params prm = { so->time_limit, 0 };
	struct part_result r, warm;
	struct strbuf path = STRBUF_INIT;
	char name[64];

	sg->cap = LONG_MAX;
	if (S < 2) {
		/* One stage: nothing to partition, no program. */
		sg->A = sg->M = cost_stage_compute(x, gr->stages[0].node,
		    gr->stages[0].ngpus, 0, (int)x->m->nlayers - 1);
		return DL_OK;
	}
	node = xcalloc((size_t)S, sizeof(int));
	k = xcalloc((size_t)S, sizeof(int));
	last = xcalloc((size_t)S, sizeof(int));
	stage_arrays(gr, node, k, last);
	cc.x = x;
	cc.node = node;
	cc.zero = 0;
	cc.cache = NULL;
	pg.S = S;
	pg.node = node;
	pg.k = k;
	pg.m = gr->micro_batches;
	pg.comm = search_comm;
	pg.ctx = &cc;
	snprintf(name, sizeof(name), "partition-g%d.lp", g);
	sb_addf(&path, "%s/%s", so->dump_dir, name);
	/*
	 * GLPK solves the program cold: a warm start would hand it the
	 * answer.  When its time limit stops it first (a slow machine,
	 * valgrind), the line gives the exact DP's optimum instead, so that
	 * the file always says what dlplan proved.
	 */
	rc = part_milp(x, &pg, NULL, &prm, path.buf, &r, e);
	if (rc == DL_OK && r.status != LP_OPTIMAL) {
		part_dp(x, &pg, 0, &warm);
		if (warm.status == LP_OPTIMAL && (r.status == LP_INFEASIBLE ||
		    warm.obj <= r.obj)) {
			part_result_free(&r);
			r = warm;
		} else {
			part_result_free(&warm);
		}
	}
	if (rc == DL_OK) {
		add_objective(objs, name, r.status, r.obj);
		part_result_free(&r);
	}
	search_group_am(x, S, node, k, last, NULL, &sg->A, &sg->M);
	sb_free(&path);
	free(node);
	free(k);
	free(last);
	return rc;
}

/* Write and solve the data split over p's groups with their stages
 * fixed (sg: A and M of each group; the memory caps are set here). */
static int
dump_split(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_plan *p, struct split_group *sg, struct strbuf *objs,
    struct dl_err *e)
{
	struct lp_params prm = { so->time_limit, 0 };
	struct strbuf path = STRBUF_INIT;
	long *m = xcalloc((size_t)p->ngroups, sizeof(long));
	long total = x->o->global_batch / x->o->micro_batch;
	double z;
	int rc, status;

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		int *node = xcalloc((size_t)gr->nstages, sizeof(int));
		int *k = xcalloc((size_t)gr->nstages, sizeof(int));
		int *last = xcalloc((size_t)gr->nstages, sizeof(int));

		stage_arrays(gr, node, k, last);
		sg[g].cap = part_mcap(x, gr->nstages, k, node, last);
		free(node);
		free(k);
		free(last);
	}
	sb_addf(&path, "%s/split.lp", so->dump_dir);
	rc = split_milp(sg, p->ngroups, total, &prm, path.buf, m, &z, &status,
	    e);
	if (rc == DL_OK)
		add_objective(objs, "split.lp", status, z);
	sb_free(&path);
	free(m);
	return rc;
}

int
search_dump(const struct dl_costctx *x, const struct search_opts *so,
    const struct dl_plan *p, struct dl_err *e)
{
	struct split_group *sg;
	struct strbuf path = STRBUF_INIT, objs = STRBUF_INIT;
	int rc;

	if ((rc = mkdir_p(so->dump_dir, e)) != DL_OK)
		return rc;
	sg = xcalloc((size_t)p->ngroups, sizeof(*sg));
	for (int g = 0; g < p->ngroups && rc == DL_OK; g++)
		rc = dump_partition(x, so, &p->groups[g], g, &objs, &sg[g], e);
	if (rc == DL_OK && p->ngroups > 1)
		rc = dump_split(x, so, p, sg, &objs, e);
	/* What GLPK found, for comparison with glpsol or cbc. */
	if (rc == DL_OK) {
		sb_addf(&path, "%s/objectives.txt", so->dump_dir);
		rc = af_write_file(path.buf, objs.buf ? objs.buf : "",
		    objs.len, e);
	}
	sb_free(&objs);
	sb_free(&path);
	free(sg);
	return rc;
}
