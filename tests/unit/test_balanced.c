/*
 * test_balanced.c - dlplan's layer partition against DeepSpeed's
 * partition_balanced on homogeneous GPUs.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * DeepSpeed's pipeline engine ("partition_method: parameters" and
 * friends) cuts the layer list into k contiguous parts with
 * partition_balanced(weights, k): the heaviest part is made as light as
 * possible by bisection on that bottleneck B between total/k and total,
 * down to an absolute eps (1e-3), where each probe packs layers greedily
 * from the front into parts of weight at most B and succeeds when k parts
 * are enough.  balanced() below is that idea written from the published
 * description (not DeepSpeed's code); exact() is the same search over the
 * finite set of candidate bottlenecks (every range sum), so it returns
 * the true least bottleneck.
 *
 * On k identical GPUs with k = 1 per unit and no transfer cost, the
 * objective part_dp() minimises, sum_j t_j + (m - 1) max_j t_j, has a
 * constant sum (all layers run once on the same speed), so for m >= 2
 * its partition must have the least bottleneck: never heavier than
 * balanced()'s, and equal to exact()'s.  The weights are the layers'
 * (fwd + bwd) FLOPs, the stage times' only input here; both partitions
 * are scored by summing the same weights in the same order.
 *
 *	test_balanced                 TAP: bundled models and random weights
 *	test_balanced --table M.csv... TAP, and a comparison table on stdout
 *	                              ("# " lines) for the given models
 *
 * The table is what "make bench" prints (tests/bench/run.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "fixture.h"
#include "partition.h"
#include "sb.h"
#include "tap.h"

#define DS_EPS 1e-3		/* DeepSpeed's default, in weight units */

/* The greedy probe: can w[0..n-1] be cut into at most k parts of weight
 * at most B?  The cut (last index of each part) goes to last[] when not
 * NULL; unused parts repeat the final index (empty parts). */
static int
probe(const double *w, int n, int k, double B, int *last)
{
	int part = 0;
	double sum = 0;

	for (int i = 0; i < n; i++) {
		if (w[i] > B)
			return 0;
		if (sum + w[i] > B) {
			if (last)
				last[part] = i - 1;
			if (++part >= k)
				return 0;
			sum = 0;
		}
		sum += w[i];
	}
	if (last)
		for (int j = part; j < k; j++)
			last[j] = n - 1;
	return 1;
}

/* partition_balanced: bisection on B to eps (weights in GFLOP). */
static void
balanced(const double *w, int n, int k, double eps, int *last)
{
	double total = 0, lo, hi;

	for (int i = 0; i < n; i++)
		total += w[i];
	lo = total / k;
	hi = total;
	while (hi > lo + eps) {
		double mid = lo + (hi - lo) / 2;

		if (probe(w, n, k, mid, NULL))
			hi = mid;
		else
			lo = mid + eps;
	}
	/* hi always passes: it is total or a mid that passed. */
	if (!probe(w, n, k, hi, last))
		probe(w, n, k, total, last);
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The least bottleneck: binary search over every range sum. */
static double
exact(const double *w, int n, int k)
{
	size_t nc = 0, lo = 0, hi;
	double *cand = xcalloc((size_t)n * (size_t)(n + 1) / 2, sizeof(double));
	double B;

	for (int a = 0; a < n; a++) {
		double s = 0;

		for (int b = a; b < n; b++)
			cand[nc++] = s += w[b];
	}
	qsort(cand, nc, sizeof(double), cmp_dbl);
	hi = nc - 1;		/* the whole list always fits in one part */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (probe(w, n, k, cand[mid], NULL))
			hi = mid;
		else
			lo = mid + 1;
	}
	B = cand[lo];
	free(cand);
	return B;
}

/* The heaviest part of a cut (parts may be empty). */
static double
heaviest(const double *w, int k, const int *last)
{
	double B = 0;

	for (int j = 0, a = 0; j < k; j++) {
		double s = 0;

		for (int i = a; i <= last[j]; i++)
			s += w[i];
		if (s > B)
			B = s;
		if (last[j] + 1 > a)
			a = last[j] + 1;
	}
	return B;
}

static void
nocomm(void *ctx, int j, double bytes, double *fwd, double *bwd)
{
	(void)ctx;
	(void)j;
	(void)bytes;
	*fwd = *bwd = 0;
}

/* k identical one-GPU nodes, ample memory. */
static void
homogeneous(struct fixture *f, int k)
{
	struct strbuf sb = STRBUF_INIT;

	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	for (int i = 0; i < k; i++)
		sb_addf(&sb, "n%d,s,1,G,100,1000000,100,100\n", i);
	fx_file(f, "nodes.csv", sb.buf);
	sb_free(&sb);
}

struct cmp {
	double ds, dl, dl_planner, opt;	/* bottlenecks, GFLOP per sample */
	int feasible;
};

/*
 * Partition m's layers on k identical GPUs both ways.  dl: part_dp with
 * no scan limit; dl_planner: with the planner's limit (search_run.c: 4096).
 */
static int
compare(struct fixture *f, const struct dl_model *m, int k, long micro,
    struct cmp *out)
{
	struct dl_cluster c;
	struct dl_cluster_paths cp = { f->dir, NULL, NULL, NULL, NULL };
	struct dl_opts o;
	struct dl_costctx x;
	struct dl_err e = { 0 };
	struct part_group g = { 0 };
	struct part_result r;
	int n = (int)m->nlayers, *node, *kk, *last;
	double *w;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	homogeneous(f, k);
	if (cluster_load(&c, &cp, &e) != DL_OK) {
		dl_perr(&e);
		return -1;
	}
	plan_opts_default(&o);
	o.micro_batch = 1;
	o.global_batch = micro;
	if (cost_init(&x, &c, m, &o, NULL, NULL, &e) != DL_OK) {
		dl_perr(&e);
		cluster_free(&c);
		return -1;
	}
	w = xcalloc((size_t)n, sizeof(double));
	for (int l = 0; l < n; l++)
		w[l] = cost_range_flops(&x, l, l) / 1e9;
	node = xcalloc((size_t)k, sizeof(int));
	kk = xcalloc((size_t)k, sizeof(int));
	last = xcalloc((size_t)k, sizeof(int));
	for (int j = 0; j < k; j++) {
		node[j] = j;
		kk[j] = 1;
	}
	g.S = k;
	g.node = node;
	g.k = kk;
	g.m = micro;
	g.comm = nocomm;
	g.ctx = NULL;

	balanced(w, n, k, DS_EPS, last);
	out->ds = heaviest(w, k, last);
	out->opt = exact(w, n, k);
	if (part_dp(&x, &g, 0, &r) == DL_OK && r.status == LP_OPTIMAL) {
		out->dl = heaviest(w, k, r.last);
		out->feasible = 1;
		part_result_free(&r);
		if (part_dp(&x, &g, 4096, &r) == DL_OK &&
		    r.status != LP_INFEASIBLE)
			out->dl_planner = heaviest(w, k, r.last);
		else
			out->feasible = 0;
		part_result_free(&r);
		rc = 0;
	} else {
		part_result_free(&r);
	}
	free(w);
	free(node);
	free(kk);
	free(last);
	cost_free(&x);
	cluster_free(&c);
	return rc;
}

/* Not heavier, up to the rounding of one sum. */
static int
le(double a, double b)
{
	return a <= b * (1 + 1e-12) + 1e-300;
}

static const char *const bundled[] = {
	"datasets/models/llama2-7b.csv", "datasets/models/llama2-13b.csv",
	"datasets/models/llama2-70b.csv", "datasets/models/gpt2-xl.csv",
	"datasets/models/gpt3-175b.csv", "datasets/models/bert-large.csv",
	"datasets/models/resnet50.csv",
	"datasets/models/resnet50-pipedream.csv", NULL
};

static const int parts[] = { 2, 3, 4, 6, 8, 12, 16, 24, 32, 0 };

static void
models(struct fixture *f, char **paths, int npaths, int table)
{
	int n = 0, never_worse = 1, optimal = 1, planner = 1, better = 0;

	if (table)
		printf("# %-24s %6s %3s %14s %14s %14s %10s\n", "model",
		    "layers", "k", "balanced_gflop", "dlplan_gflop",
		    "optimum_gflop", "ds/dlplan");
	for (int i = 0; i < npaths; i++) {
		struct dl_model m;
		struct dl_err e = { 0 };
		const char *base = strrchr(paths[i], '/');

		if (model_load(&m, paths[i], &e) != DL_OK) {
			dl_perr(&e);
			ok(0, "model %s loads", paths[i]);
			continue;
		}
		base = base ? base + 1 : paths[i];
		for (int p = 0; parts[p]; p++) {
			struct cmp r;
			int k = parts[p];

			if (k > (int)m.nlayers)
				break;
			if (compare(f, &m, k, 64, &r) != 0 || !r.feasible) {
				ok(0, "%s k=%d: dlplan partitions", base, k);
				continue;
			}
			n++;
			if (!le(r.dl, r.ds)) {
				never_worse = 0;
				printf("# %s k=%d: dlplan %.17g > balanced "
				    "%.17g\n", base, k, r.dl, r.ds);
			}
			if (!le(r.dl, r.opt)) {
				optimal = 0;
				printf("# %s k=%d: dlplan %.17g > optimum "
				    "%.17g\n", base, k, r.dl, r.opt);
			}
			if (!le(r.dl_planner, r.ds))
				planner = 0;
			if (r.dl < r.ds * (1 - 1e-12))
				better++;
			if (table)
				printf("# %-24s %6zu %3d %14.6g %14.6g %14.6g "
				    "%10.6f\n", base, m.nlayers, k, r.ds, r.dl,
				    r.opt, r.ds / r.dl);
		}
		model_free(&m);
	}
	ok(n > 0 && never_worse, "dlplan's partition is never heavier than "
	    "partition_balanced's (%d model/k pairs, %d strictly lighter)",
	    n, better);
	ok(n > 0 && optimal, "dlplan's partition has the least bottleneck");
	ok(n > 0 && planner, "so has it with the planner's scan limit");
}

/* Random weights: zeros, ties, one heavy layer, many layers. */
static void
random_weights(struct fixture *f)
{
	int n = 0, never_worse = 1, optimal = 1;

	for (int seed = 1; seed <= 120; seed++) {
		struct strbuf sb = STRBUF_INIT;
		struct dl_model m;
		struct dl_err e = { 0 };
		char path[512];
		int L, k, kind;

		fx_seed(f, (uint64_t)seed);
		L = fx_int(f, 1, seed % 10 == 0 ? 200 : 40);
		k = fx_int(f, 1, L < 16 ? L : 16);
		kind = seed % 4;
		sb_adds(&sb, "layer,fwd_gflop,params_m,act_mb,mem_mb\n");
		for (int l = 0; l < L; l++) {
			double v = 1 + 99 * fx_rand(f);

			if (kind == 1 && fx_rand(f) < 0.3)
				v = 0;			/* empty layers */
			else if (kind == 2)
				v = (double)fx_int(f, 1, 3);	/* ties */
			else if (kind == 3 && l == L / 2)
				v = 5000;		/* one giant */
			sb_addf(&sb, "l%d,%.6g,1,1,1\n", l, v);
		}
		fx_file(f, "model.csv", sb.buf);
		sb_free(&sb);
		snprintf(path, sizeof(path), "%s/model.csv", f->dir);
		if (model_load(&m, path, &e) != DL_OK) {
			dl_perr(&e);
			ok(0, "random model %d loads", seed);
			continue;
		}
		for (long micro = 2; micro <= 32; micro *= 16) {
			struct cmp r;

			if (compare(f, &m, k, micro, &r) != 0 || !r.feasible) {
				ok(0, "seed %d k=%d: dlplan partitions", seed,
				    k);
				continue;
			}
			n++;
			if (!le(r.dl, r.ds)) {
				never_worse = 0;
				printf("# seed %d L=%d k=%d m=%ld: dlplan %.17g"
				    " > balanced %.17g\n", seed, L, k, micro,
				    r.dl, r.ds);
			}
			if (!le(r.dl, r.opt)) {
				optimal = 0;
				printf("# seed %d L=%d k=%d m=%ld: dlplan %.17g"
				    " > optimum %.17g\n", seed, L, k, micro,
				    r.dl, r.opt);
			}
		}
		model_free(&m);
	}
	ok(n > 0 && never_worse, "random weights: never heavier than "
	    "partition_balanced (%d instances)", n);
	ok(n > 0 && optimal, "random weights: the least bottleneck");
}

/* The probe and the bisection on a case worked out by hand. */
static void
hand(void)
{
	/* 1 2 3 4 5 6 7 8 9 into 3: best 17 (1-5 | 6-7 | 8-9: 15 13 17). */
	double w[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	int last[3];

	is_near(exact(w, 9, 3), 17, 0, "least bottleneck of 1..9 in 3 parts");
	balanced(w, 9, 3, DS_EPS, last);
	is_near(heaviest(w, 3, last), 17, 0, "partition_balanced finds it");
	ok(!probe(w, 9, 3, 16.999, NULL), "16.999 does not fit in 3 parts");
}

int
main(int argc, char **argv)
{
	struct fixture f;
	int table = argc > 1 && strcmp(argv[1], "--table") == 0;

	fx_begin(&f);
	hand();
	if (table && argc > 2) {
		models(&f, argv + 2, argc - 2, 1);
	} else {
		int n = 0;

		while (bundled[n])
			n++;
		models(&f, (char **)bundled, n, table);
		random_weights(&f);
	}
	fx_end(&f);
	return done_testing();
}
