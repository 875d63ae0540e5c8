/*
 * test_cost.c - the cost model of dlplan(1) ALGORITHMS, Cost model
 * against iteration
 * times worked out by hand.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every expected number below is derived in the comment above it from
 * the formulas of dlplan(1) ALGORITHMS and the CSV values, not from the
 * code.  The numbers are chosen so that the hand arithmetic is exact.
 *
 * Model "m4" (4 layers): fwd 1 GFLOP, bwd 2 GFLOP (the default 2 x fwd),
 * so (fwd+bwd) 1e9 = 3e9 FLOP per sample per layer, 1.2e10 in all;
 * params 10, 20, 30, 40 M; act_mb 1, 2, 2, 2; mem_mb 2 each; tp_mb 5
 * each.  Model "m3" (3 layers): 3e9 FLOP each, params 10 M each, act_mb
 * 1, 2, 1, mem_mb 2.
 *
 * Node speeds: tflops 100 and mfu 0.5 give s = 100e12 * 0.5 = 5e13 FLOP/s;
 * tflops 50 gives 2.5e13.  intra_gbps 800: 8 S / 8e11 = S * 1e-11 s.
 * nic_gbps 100: 8 S / 1e11 = S * 8e-11 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "tap.h"

static char dir[64];

static void
put(const char *name, const char *text)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(1);
	}
	fputs(text, fp);
	fclose(fp);
}

static void
rm(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

#define NODES_H "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps," \
	"nic_gbps,mfu\n"

/* A loaded cluster, model, router and cost context. */
struct fix {
	struct dl_cluster c;
	struct dl_model m;
	struct dl_opts o;
	struct dl_router *r;
	struct dl_costctx x;
};

static int
fix_load(struct fix *f, const char *nodes, const char *model, long global,
    long micro)
{
	struct dl_cluster_paths cp = { 0 };
	struct dl_route_opts ro = { 3, 1, 0 };
	struct dl_err e = { 0 };
	char mp[128];

	put("nodes.csv", nodes);
	put("model.csv", model);
	cp.nodes = NULL;
	cp.dir = dir;
	snprintf(mp, sizeof(mp), "%s/model.csv", dir);
	memset(f, 0, sizeof(*f));
	if (cluster_load(&f->c, &cp, &e) != DL_OK ||
	    model_load(&f->m, mp, &e) != DL_OK ||
	    router_new(&f->r, &f->c, &ro, &e) != DL_OK) {
		printf("# setup: %s\n", e.msg);
		return -1;
	}
	plan_opts_default(&f->o);
	f->o.global_batch = global;
	f->o.micro_batch = micro;
	if (cost_init(&f->x, &f->c, &f->m, &f->o, NULL, f->r, &e) != DL_OK) {
		printf("# setup: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static void
fix_free(struct fix *f)
{
	cost_free(&f->x);
	router_free(f->r);
	model_free(&f->m);
	cluster_free(&f->c);
}

/* Plans are built group by group, stage by stage. */
static struct dl_group *
add_group(struct dl_plan *p, long m, int nstages)
{
	struct dl_group *g;

	p->groups = xreallocarray(p->groups, p->ngroups + 1, sizeof(*g));
	g = &p->groups[p->ngroups++];
	memset(g, 0, sizeof(*g));
	g->micro_batches = m;
	g->nstages = nstages;
	g->stages = xcalloc(nstages, sizeof(struct dl_stage));
	return g;
}

static void
set_stage(struct dl_group *g, int s, int node, int k, int gpu0, int first,
    int last)
{
	struct dl_stage *st = &g->stages[s];

	st->node = node;
	st->ngpus = k;
	for (int d = 0; d < k; d++) {
		st->gpus[d] = gpu0 + d;
		st->tp_share[d] = 1.0 / k;
	}
	st->first = first;
	st->last = last;
}

static const char m4[] =
    "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n"
    "l0,1,10,1,2,5\nl1,1,20,2,2,5\nl2,1,30,2,2,5\nl3,1,40,2,2,5\n";
static const char m3[] =
    "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,1,10,1,2\nl1,1,10,2,2\nl2,1,10,1,2\n";
static const char one_node[] = NODES_H "a,s,4,A,100,80,800,100,0.5\n";

/* Two groups of two stages on one 4-GPU node, 2 and 4 micro-batches,
 * the layers split 1 + 3 and 2 + 2: hybrid()'s plan. */
static void
hybrid_plan(struct dl_plan *p, const struct dl_opts *o)
{
	struct dl_group *g;

	plan_init(p);
	p->opts = *o;
	g = add_group(p, 2, 2);
	set_stage(g, 0, 0, 1, 0, 0, 0);
	set_stage(g, 1, 0, 1, 1, 1, 3);
	g = add_group(p, 4, 2);
	set_stage(g, 0, 0, 1, 2, 0, 1);
	set_stage(g, 1, 0, 1, 3, 2, 3);
}

static const double tol = 1e-12;

/*
 * Pure data parallelism on two unequal GPUs: n1 (s = 5e13, nic 100) and
 * n2 (tflops 50: s = 2.5e13, nic 50), one site, implicit switch sw.s.
 * Model m4, micro-batch 1, global batch 4, m = 2 each.
 *	t(n1) = 1 * 1.2e10 / 5e13 = 2.4e-4,  T_1 = 2.4e-4 + 1 * 2.4e-4 = 4.8e-4
 *	t(n2) = 1.2e10 / 2.5e13 = 4.8e-4,    T_2 = 9.6e-4
 * Sync: one segment, P = 1e8 params; hop bytes 1e8 * 2 / 2 = 1e8.
 *	tau(n1->n2) = 0.005 ms + 8e8/(100e9) + 0.005 ms = 1e-5 + 8e-3
 *	tau(n2->n1) = 1e-5 + 8e8/50e9 = 1e-5 + 1.6e-2 = 0.01601
 *	R = 2 (2-1) * 0.01601 = 0.03202 = T_sync
 *	T = 9.6e-4 + 0.03202 = 0.03298
 *	T_lb = 4 * 1.2e10 / (5e13 + 2.5e13) = 6.4e-4, efficiency 6.4e-4/0.03298
 * Memory of n1: 16 B * 1e8 + min(2, 1) * 1 * 8e6 = 1.608e9.
 */
static void
dp_unequal(void)
{
	struct fix f;
	struct dl_plan p;
	struct dl_err e = { 0 };

	if (fix_load(&f, NODES_H "n1,s,1,A,100,80,800,100,0.5\n"
	    "n2,s,1,B,50,80,800,50,0.5\n", m4, 4, 1) != 0) {
		ok(0, "dp: setup");
		return;
	}
	plan_init(&p);
	p.opts = f.o;
	set_stage(add_group(&p, 2, 1), 0, 0, 1, 0, 0, 3);
	set_stage(add_group(&p, 2, 1), 0, 1, 1, 0, 0, 3);
	is_int(cost_eval(&f.x, &p, &e), DL_OK, "dp: evaluates");
	is_near(p.groups[0].time_s, 4.8e-4, tol, "dp: T_1");
	is_near(p.groups[1].time_s, 9.6e-4, tol, "dp: T_2 (slower GPU)");
	is_int(p.nrings, 1, "dp: one segment");
	is_near(p.rings[0].hop_bytes, 1e8, tol, "dp: hop bytes P*2/G");
	is_near(p.rings[0].time_s, 0.03202, tol, "dp: R = 2(G-1) max tau");
	is_near(p.est.sync_s, 0.03202, tol, "dp: T_sync");
	is_near(p.est.iteration_s, 0.03298, tol, "dp: T");
	is_near(p.est.lower_bound_s, 6.4e-4, tol, "dp: T_lb");
	is_near(p.est.efficiency, 6.4e-4 / 0.03298, tol, "dp: efficiency");
	is_near(p.est.throughput, 4 / 0.03298, tol, "dp: throughput");
	is_int(p.est.slowest_group, 1, "dp: slowest group");
	is_near(p.groups[0].stages[0].mem_bytes, 1.608e9, tol, "dp: memory");
	is_int((long)p.nflows, 2, "dp: two sync flows");
	if (p.nflows == 2) {
		is_int(p.flows[0].phase, DL_PHASE_SYNC, "dp: sync phase");
		is_near(p.flows[0].expected_s, 0.00801, tol, "dp: tau n1->n2");
		is_near(p.flows[1].expected_s, 0.01601, tol, "dp: tau n2->n1");
		is_int((long)p.flows[0].npath, 3, "dp: path via the switch");
		if (p.flows[0].npath == 3)
			is_str(f.c.verts[p.flows[0].path[1]].id, "sw.s",
			    "dp: switch vertex");
	}
	plan_free(&p);
	fix_free(&f);
}

/*
 * A 2-stage pipeline on one node (GPUs 0 and 1): stage 0 holds layer 0,
 * stage 1 layers 1..3.  Model m4, micro-batch 1.
 *	t0 = 3e9 / 5e13 = 6e-5,  t1 = 9e9 / 5e13 = 1.8e-4
 *	S = 1 * act_mb(l0) * 1e6 = 1e6, intra tau = 8e6 / 8e11 = 1e-5,
 *	c0 = 2e-5, c1 = 0
 *	m = 1:	T = (6e-5 + 2e-5) + 1.8e-4 = 2.6e-4
 *		T_lb = 1 * 1.2e10 / (4 * 5e13) = 6e-5
 *	m = 4:	forward a third of t (f0 2e-5, b0 4e-5, f1 6e-5, b1 1.2e-4),
 *		each transfer on its receiver's lane.  Stage 0 runs F0 F1
 *		B0 F2 B1 F3 B2 B3, stage 1 F0 B0 F1 B1 .. B3; by hand:
 *		s0 F0 [0, 2e-5] F1 [2e-5, 4e-5]; s1 F0 receives [2e-5,
 *		3e-5], runs [3e-5, 9e-5], B0 [9e-5, 2.1e-4]; s0 B0 receives
 *		[2.1e-4, 2.2e-4], runs to 2.6e-4; s1 F1 [2.2e-4, 2.8e-4],
 *		B1 to 4e-4; s0 F2 [2.6e-4, 2.8e-4], B1 [4.1e-4, 4.5e-4],
 *		F3 to 4.7e-4; s1 F2 [4.1e-4, 4.7e-4], B2 to 5.9e-4, F3
 *		[6e-4, 6.6e-4], B3 to 7.8e-4; s0 B2 [6e-4, 6.4e-4], B3
 *		[7.9e-4, 8.3e-4].  T = 8.3e-4 (the fill 2.6e-4 plus 3 times
 *		the period, stage 1's lane 1.8e-4 + 1e-5), T_lb = 2.4e-4,
 *		efficiency 2.4e-4 / 8.3e-4, steady-state term T - 2.6e-4.
 * Memory (m = 4): stage 0 at p = 1 of 2 keeps min(4, 2) = 2 micro-batches:
 *	16 * 1e7 + 2 * 1 * 2e6 = 1.64e8; stage 1 keeps min(4, 1) = 1:
 *	16 * 9e7 + 1 * 6e6 = 1.446e9.
 */
static void
pipeline2(void)
{
	for (long m = 1; m <= 4; m += 3) {
		struct fix f;
		struct dl_plan p;
		struct dl_err e = { 0 };
		struct dl_group *g;
		char name[64];

		if (fix_load(&f, one_node, m4, m, 1) != 0) {
			ok(0, "pp: setup");
			return;
		}
		plan_init(&p);
		p.opts = f.o;
		g = add_group(&p, m, 2);
		set_stage(g, 0, 0, 1, 0, 0, 0);
		set_stage(g, 1, 0, 1, 1, 1, 3);
		snprintf(name, sizeof(name), "pp m=%ld: evaluates", m);
		is_int(cost_eval(&f.x, &p, &e), DL_OK, name);
		snprintf(name, sizeof(name), "pp m=%ld: t0", m);
		is_near(g->stages[0].compute_s, 6e-5, tol, name);
		snprintf(name, sizeof(name), "pp m=%ld: t1", m);
		is_near(g->stages[1].compute_s, 1.8e-4, tol, name);
		snprintf(name, sizeof(name), "pp m=%ld: c0 (intra)", m);
		is_near(g->stages[0].p2p_s, 2e-5, tol, name);
		snprintf(name, sizeof(name), "pp m=%ld: T", m);
		is_near(p.est.iteration_s, m == 1 ? 2.6e-4 : 8.3e-4, tol,
		    name);
		snprintf(name, sizeof(name), "pp m=%ld: T_lb", m);
		is_near(p.est.lower_bound_s, m == 1 ? 6e-5 : 2.4e-4, tol, name);
		snprintf(name, sizeof(name), "pp m=%ld: steady-state term", m);
		is_near(p.est.steady_s, m == 1 ? 0 : 5.7e-4, tol, name);
		snprintf(name, sizeof(name), "pp m=%ld: no sync", m);
		ok(p.est.sync_s == 0 && p.nrings == 0, "%s", name);
		snprintf(name, sizeof(name), "pp m=%ld: flows are intra", m);
		ok(p.nflows == 2 && p.flows[0].intra && p.flows[1].intra &&
		    p.flows[1].dir == 1, "%s", name);
		if (m == 4) {
			is_near(p.est.efficiency, 2.4e-4 / 8.3e-4, tol,
			    "pp m=4: efficiency");
			is_near(g->stages[0].mem_bytes, 1.64e8, tol,
			    "pp m=4: memory of stage 0 (2 in flight)");
			is_near(g->stages[1].mem_bytes, 1.446e9, tol,
			    "pp m=4: memory of stage 1 (1 in flight)");
		}
		plan_free(&p);
		fix_free(&f);
	}
}

/*
 * Tensor parallelism on one node.  Model m4 (tp_mb 5 per layer: 2e7
 * bytes per sample over all layers), micro-batch 2, global batch 2.
 *	k = 2: 2 * 1.2e10 / (2 * 5e13) = 2.4e-4, plus the all-reduce
 *	       2 * 2e7 * 2(2-1)/2 / (800e9 / 8) = 4e7 / 1e11 = 4e-4: 6.4e-4
 *	k = 4: 2 * 1.2e10 / 2e14 = 1.2e-4, plus 2 * 2e7 * 1.5 / 1e11 = 6e-4:
 *	       7.2e-4
 *	k = 1: 2 * 1.2e10 / 5e13 = 4.8e-4 (no all-reduce)
 * The k = 2 plan (one stage, m = 1): T = 6.4e-4; T_lb = 2 * 1.2e10 /
 * (4 * 5e13) = 1.2e-4.  Memory per GPU with share 1/2:
 *	16 * 1e8 * 0.5 + 1 * 2 * 8e6 * 0.5 = 8e8 + 8e6 = 8.08e8.
 */
static void
tensor_parallel(void)
{
	struct fix f;
	struct dl_plan p;
	struct dl_err e = { 0 };

	if (fix_load(&f, one_node, m4, 2, 2) != 0) {
		ok(0, "tp: setup");
		return;
	}
	is_near(cost_stage_compute(&f.x, 0, 2, 0, 3), 6.4e-4, tol,
	    "tp: k=2 compute with all-reduce");
	is_near(cost_stage_compute(&f.x, 0, 4, 0, 3), 7.2e-4, tol,
	    "tp: k=4 compute with all-reduce");
	is_near(cost_stage_compute(&f.x, 0, 1, 0, 3), 4.8e-4, tol,
	    "tp: k=1 has no all-reduce");
	is_near(cost_stage_memory(&f.x, 0, 3, 0.5, 1, 1, 1), 8.08e8, tol,
	    "tp: memory of a half share");
	is_near(cost_gpu_capacity(&f.x, 0), 7.2e10, tol,
	    "tp: capacity 80 GB less 10%");
	plan_init(&p);
	p.opts = f.o;
	set_stage(add_group(&p, 1, 1), 0, 0, 2, 2, 0, 3);
	is_int(cost_eval(&f.x, &p, &e), DL_OK, "tp: evaluates");
	is_near(p.est.iteration_s, 6.4e-4, tol, "tp: T");
	is_near(p.est.lower_bound_s, 1.2e-4, tol, "tp: T_lb");
	is_near(p.groups[0].stages[0].mem_bytes, 8.08e8, tol, "tp: memory");
	is_int((long)p.nflows, 0, "tp: no flows");
	plan_free(&p);
	fix_free(&f);
}

/*
 * Two groups of two stages on one node, with unequal boundaries: group
 * 0 = a:0 [0,0], a:1 [1,3] with m = 2; group 1 = a:2 [0,1], a:3 [2,3]
 * with m = 4.  Model m4, micro-batch 1, global batch 6.
 * Group 0: t = 6e-5, 1.8e-4; S = act(l0) = 1e6, c0 = 2 * 1e-5 = 2e-5
 *	by hand as in pipeline2() up to stage 1's B1 (ends 4e-4); stage 0's
 *	B1 receives [4e-4, 4.1e-4] and runs to T_0 = 4.5e-4
 * Group 1: t = 1.2e-4, 1.2e-4 (f 4e-5, b 8e-5); S = act(l1) = 2e6,
 *	c0 = 2 * 2e-5 = 4e-5.  s0 F0 [0, 4e-5], F1 [4e-5, 8e-5]; s1 F0
 *	[6e-5, 1e-4], B0 to 1.8e-4; s0 B0 [2e-4, 2.8e-4]; s1 F1 [2e-4,
 *	2.4e-4], B1 to 3.2e-4; s0 F2 [2.8e-4, 3.2e-4], B1 [3.4e-4, 4.2e-4],
 *	F3 to 4.6e-4; s1 F2 [3.4e-4, 3.8e-4], B2 to 4.6e-4, F3 [4.8e-4,
 *	5.2e-4], B3 to 6e-4; s0 B2 [4.8e-4, 5.6e-4], B3 [6.2e-4, 7e-4]:
 *	T_1 = 7e-4 = 2.8e-4 + 3 (1.2e-4 + 2e-5)
 * Cuts after layers 0 (group 0) and 1 (group 1): segments [0,0] (1e7
 * params), [1,1] (2e7), [2,3] (7e7); G = 2 so hop bytes = P, all intra:
 *	tau = 8 P / 8e11:  1e-4, 2e-4, 7e-4;  R = 2 tau: 2e-4, 4e-4, 1.4e-3
 * Units: a:0 holds [0,0]: 2e-4; a:1 holds [1,1] and [2,3]: 1.8e-3;
 *	a:2 holds [0,0] and [1,1]: 6e-4; a:3 holds [2,3]: 1.4e-3.
 *	T_sync = 1.8e-3, T = 7e-4 + 1.8e-3 = 2.5e-3
 *	T_lb = 6 * 1.2e10 / 2e14 = 3.6e-4
 */
static void
hybrid(void)
{
	struct fix f;
	struct dl_plan p, q;
	struct dl_err e = { 0 };

	if (fix_load(&f, one_node, m4, 6, 1) != 0) {
		ok(0, "hybrid: setup");
		return;
	}
	hybrid_plan(&p, &f.o);
	is_int(cost_eval(&f.x, &p, &e), DL_OK, "hybrid: evaluates");
	is_near(p.groups[0].time_s, 4.5e-4, tol, "hybrid: T_0");
	is_near(p.groups[1].time_s, 7e-4, tol, "hybrid: T_1");
	is_int(p.nrings, 3, "hybrid: three segments");
	if (p.nrings == 3) {
		is_int(p.rings[1].first, 1, "hybrid: segment 1 starts at 1");
		is_int(p.rings[2].last, 3, "hybrid: segment 2 ends at 3");
		is_near(p.rings[0].time_s, 2e-4, tol, "hybrid: R_0");
		is_near(p.rings[1].time_s, 4e-4, tol, "hybrid: R_1");
		is_near(p.rings[2].time_s, 1.4e-3, tol, "hybrid: R_2");
		ok(p.rings[1].stage[0] + p.rings[1].stage[1] == 1,
		    "hybrid: segment 1 held by stage 1 of group 0 and stage 0 "
		    "of group 1");
	}
	is_near(p.est.sync_s, 1.8e-3, tol, "hybrid: T_sync");
	is_near(p.est.iteration_s, 2.5e-3, tol, "hybrid: T");
	is_near(p.est.lower_bound_s, 3.6e-4, tol, "hybrid: T_lb");
	is_near(p.est.compute_s, 2.4e-4, tol, "hybrid: compute of slowest");
	is_near(p.est.p2p_s, 4e-5, tol, "hybrid: p2p of slowest");
	is_near(p.est.steady_s, 4.2e-4, tol, "hybrid: steady-state term of slowest");
	is_int((long)p.nflows, 4 + 6, "hybrid: 4 pipeline + 6 sync flows");

	/* A copy is deep and evaluates to the same. */
	plan_copy(&q, &p);
	plan_clear_results(&p);
	is_int(cost_eval(&f.x, &q, &e), DL_OK, "hybrid: copy evaluates");
	is_near(q.est.iteration_s, 2.5e-3, tol, "hybrid: copy T");

	/*
	 * With a cut: the slowest group takes 7e-4, and so does the lower
	 * bound of its makespan (pipe_lower(): its two stages' lanes are
	 * busy from start to end), so a cut of 6.9e-4 stops before the
	 * sync (no rings, no sync flows).  Above it the
	 * sync flows are priced in order (all inside node a, so in the
	 * order listed, two hops a segment): segment 0's first makes a:0
	 * and a:2 2e-4, segment 1's first a:1 4e-4 and a:2 6e-4, so T is
	 * at least 7e-4 + 6e-4 = 1.3e-3 then, and a cut of 1.2e-3 stops
	 * there (the hops after it still unpriced); 2.49e-3 stops once
	 * every hop is priced, T being 2.5e-3.  At 2.51e-3, and at 0 (no
	 * cut), the whole plan is priced.
	 */
	{
		int over = -1;

		is_int(cost_eval_below(&f.x, &q, 6.9e-4, &over, &e), DL_OK,
		    "hybrid: below 6.9e-4 evaluates");
		is_int(over, 1, "hybrid: pipeline over 6.9e-4");
		is_int(q.nrings, 0, "hybrid: cut before the rings");
		is_int((long)q.nflows, 4, "hybrid: cut, pipeline flows only");
		is_int(cost_eval_below(&f.x, &q, 1.2e-3, &over, &e), DL_OK,
		    "hybrid: below 1.2e-3 evaluates");
		is_int(over, 1, "hybrid: pipeline and two segments over 1.2e-3");
		is_int((long)q.nflows, 4 + 6, "hybrid: cut 1.2e-3, sync flows listed");
		if (q.nflows == 10) {
			is_near(q.flows[6].expected_s, 2e-4, tol,
			    "hybrid: cut 1.2e-3, segment 1's first hop priced");
			is_near(q.flows[7].expected_s, 0, tol,
			    "hybrid: cut 1.2e-3, stops after it");
		}
		is_int(cost_eval_below(&f.x, &q, 2.49e-3, &over, &e), DL_OK,
		    "hybrid: below 2.49e-3 evaluates");
		is_int(over, 1, "hybrid: whole sync over 2.49e-3");
		is_int(cost_eval_below(&f.x, &q, 2.51e-3, &over, &e), DL_OK,
		    "hybrid: below 2.51e-3 evaluates");
		is_int(over, 0, "hybrid: not over 2.51e-3");
		is_near(q.est.iteration_s, 2.5e-3, tol, "hybrid: T, cut 2.51e-3");
		is_int(cost_eval_below(&f.x, &q, 0, &over, &e), DL_OK,
		    "hybrid: no cut evaluates");
		is_int(over, 0, "hybrid: no cut, not over");
		is_near(q.est.iteration_s, 2.5e-3, tol, "hybrid: T, no cut");
		is_int((long)q.nflows, 4 + 6, "hybrid: no cut, every flow");
	}
	plan_free(&q);
	plan_free(&p);
	fix_free(&f);
}

/*
 * A 3-stage pipeline over three nodes n1, n2, n3 of one site (implicit
 * switch sw.s, nic 100 Gbps, 1 GPU each).  Model m3, micro-batch 1, m = 2.
 * t = 3e9 / 5e13 = 6e-5 on every stage.  Flows: boundary 0 carries
 * S0 = act(l0) = 1e6 bytes, boundary 1 S1 = act(l1) = 2e6.  Largest
 * first: fwd1 n2->n3, bwd1 n3->n2 (2e6), then fwd0 n1->n2, bwd0 n2->n1.
 *	fwd1: n2->sw 5e-6 + 8 * 2e6 / 1e11 = 1.65e-4, sw->n3 5e-6: 1.7e-4
 *	bwd1: n3->sw alone too: 1.7e-4
 *	fwd0: n1->sw 5e-6 + 8e6 / 1e11 = 8.5e-5, sw->n2 5e-6: 9e-5
 *	bwd0: n2->sw is shared with fwd1 (n = 2): 5e-6 + 8e6 / (1e11 / 2)
 *	      = 1.65e-4, sw->n1 5e-6: 1.7e-4
 *	c0 = 9e-5 + 1.7e-4 = 2.6e-4, c1 = 3.4e-4, c2 = 0
 * 1F1B (f 2e-5, b 4e-5; stage 0 runs F0 F1 B0 B1, stage 1 F0 F1 B0 B1,
 * stage 2 F0 B0 F1 B1; a transfer waits on its receiver's lane):
 *	s0 F0 [0, 2e-5], F1 [2e-5, 4e-5]; s1 F0 receives [2e-5, 1.1e-4],
 *	runs to 1.3e-4, F1 receives [1.3e-4, 2.2e-4], runs to 2.4e-4;
 *	s2 F0 receives [1.3e-4, 3e-4], runs to 3.2e-4, B0 to 3.6e-4, F1
 *	receives [3.6e-4, 5.3e-4], runs to 5.5e-4, B1 to 5.9e-4; s1 B0
 *	receives [3.6e-4, 5.3e-4], runs to 5.7e-4, B1 receives [5.9e-4,
 *	7.6e-4], runs to 8e-4; s0 B0 receives [5.7e-4, 7.4e-4], runs to
 *	7.8e-4, B1 receives [8e-4, 9.7e-4], runs to T = 1.01e-3
 */
static void
pipeline_shared_link(void)
{
	struct fix f;
	struct dl_plan p;
	struct dl_err e = { 0 };
	struct dl_group *g;

	if (fix_load(&f, NODES_H "n1,s,1,A,100,80,800,100,0.5\n"
	    "n2,s,1,A,100,80,800,100,0.5\nn3,s,1,A,100,80,800,100,0.5\n", m3,
	    2, 1) != 0) {
		ok(0, "shared: setup");
		return;
	}
	plan_init(&p);
	p.opts = f.o;
	g = add_group(&p, 2, 3);
	set_stage(g, 0, 0, 1, 0, 0, 0);
	set_stage(g, 1, 1, 1, 0, 1, 1);
	set_stage(g, 2, 2, 1, 0, 2, 2);
	is_int(cost_eval(&f.x, &p, &e), DL_OK, "shared: evaluates");
	is_int((long)p.nflows, 4, "shared: four flows");
	if (p.nflows == 4) {
		/* Plan order: fwd0, bwd0, fwd1, bwd1. */
		is_near(p.flows[0].expected_s, 9e-5, tol, "shared: fwd0");
		is_near(p.flows[1].expected_s, 1.7e-4, tol,
		    "shared: bwd0 pays twice on n2->sw");
		is_near(p.flows[2].expected_s, 1.7e-4, tol, "shared: fwd1");
		is_near(p.flows[3].expected_s, 1.7e-4, tol, "shared: bwd1");
		ok(p.flows[2].order == 0 && p.flows[3].order == 1 &&
		    p.flows[0].order == 2 && p.flows[1].order == 3,
		    "shared: routed largest first, ties in plan order");
	}
	is_near(g->stages[0].p2p_s, 2.6e-4, tol, "shared: c0");
	is_near(g->stages[1].p2p_s, 3.4e-4, tol, "shared: c1");
	is_near(p.est.iteration_s, 1.01e-3, tol, "shared: T");
	plan_free(&p);
	fix_free(&f);
}

/*
 * Memory that does not fit: node "small" with mem_gb 1 has 1e9 * 0.9 =
 * 9e8 bytes per GPU.  Model m4 on GPU 1 alone, micro-batch 64, m = 1:
 *	16 * 1e8 = 1.6e9 already exceeds it; plus 1 * 64 * 8e6 = 5.12e8:
 *	2.112e9 needed, over by 1.212e9.
 */
static void
memory_infeasible(void)
{
	struct fix f;
	struct dl_plan p;
	struct dl_err e = { 0 };

	if (fix_load(&f, NODES_H "small,s,2,A,100,1,800,100,0.5\n", m4, 64,
	    64) != 0) {
		ok(0, "mem: setup");
		return;
	}
	plan_init(&p);
	p.opts = f.o;
	set_stage(add_group(&p, 1, 1), 0, 0, 1, 1, 0, 3);
	is_int(cost_eval(&f.x, &p, &e), DL_EINFEAS, "mem: infeasible");
	is_str(e.msg, "memory does not fit on GPU 1 of node 'small' "
	    "(groups[0].stages[0]): needs 2.112 GB, 0.9 GB available; over "
	    "by 1.212 GB (1212000000 bytes)", "mem: message");
	ok(p.est.iteration_s > 0 && !p.est.feasible,
	    "mem: estimate filled anyway");
	is_near(p.groups[0].stages[0].mem_bytes, 2.112e9, tol, "mem: bytes");
	plan_free(&p);
	fix_free(&f);
}

/*
 * Baselines over the GPUs of the dp_unequal plan (n1 twice as fast as
 * n2), M = 4 micro-batches.  Even: 2 and 2, the plan itself: 0.03298.
 * Proportional: 4 * 5e13 / 7.5e13 = 2.667 and 1.333: floors 2 and 1,
 * the last one to n1 (remainder 0.667 > 0.333): 3 and 1.
 *	T_1 = 3 * 2.4e-4 = 7.2e-4, T_2 = 4.8e-4; T = 7.2e-4 + 0.03202
 *	= 0.03274
 */
static void
baselines(void)
{
	struct fix f;
	struct dl_plan p, b;
	struct dl_err e = { 0 };

	if (fix_load(&f, NODES_H "n1,s,1,A,100,80,800,100,0.5\n"
	    "n2,s,1,B,50,80,800,50,0.5\n", m4, 4, 1) != 0) {
		ok(0, "baselines: setup");
		return;
	}
	plan_init(&p);
	p.opts = f.o;
	set_stage(add_group(&p, 1, 1), 0, 1, 1, 0, 0, 3);
	set_stage(add_group(&p, 3, 1), 0, 0, 1, 0, 0, 3);
	is_int(cost_baseline(&f.x, &p, COST_PROPORTIONAL, &b, &e), DL_OK,
	    "baselines: proportional evaluates");
	ok(b.ngroups == 2 && b.groups[0].micro_batches == 1 &&
	    b.groups[1].micro_batches == 3, "baselines: 1 and 3 micro-batches "
	    "in rank order (n2, n1)");
	is_near(b.est.iteration_s, 0.03274, tol, "baselines: proportional T");
	plan_free(&b);
	is_int(cost_baselines(&f.x, &p, &e), DL_OK, "baselines: both");
	is_near(p.even_s, 0.03298, tol, "baselines: even T");
	is_near(p.proportional_s, 0.03274, tol, "baselines: proportional");
	ok(p.even_fits && p.proportional_fits, "baselines: both fit");
	plan_free(&p);
	fix_free(&f);
}

/* Range sums far from layer 0 keep their precision. */
static void
prefix_precision(void)
{
	struct fix f;
	char model[8192];
	size_t n = 0;

	n += snprintf(model + n, sizeof(model) - n,
	    "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb\n");
	n += snprintf(model + n, sizeof(model) - n, "big,1e8,0,1,1,1\n");
	for (int i = 0; i < 50; i++)
		n += snprintf(model + n, sizeof(model) - n,
		    "l%d,0.1,0.2,1,1,1\n", i);
	if (fix_load(&f, one_node, model, 1, 1) != 0) {
		ok(0, "prefix: setup");
		return;
	}
	/* (0.1 + 0.2) * 1e9 rounds to 300000000.00000006, twice that
	 * to 600000000.0000001. */
	is_near(cost_range_flops(&f.x, 1, 1), (0.1 + 0.2) * 1e9, 0,
	    "prefix: one layer after a huge one is exact");
	is_near(cost_range_flops(&f.x, 5, 6), 2 * ((0.1 + 0.2) * 1e9), 0,
	    "prefix: two layers after a huge one are exact");
	fix_free(&f);
}

/*
 * The cut against full evaluation on random plans over six nodes with
 * unequal NICs (rings of 3 to 5 members, so ordered by priced hops, and
 * routed over shared links), in one site (its implicit switch) or in two
 * joined by a slow link, with the site bounds the search gives: a plan
 * said to be over a cut is slower than it; one whose T is clearly above
 * the cut is always said to be (once every hop is priced and routed the
 * bound is T itself); and one that is not over is priced to the same T
 * as without a cut.
 */
static void
cut_random(const char *name, const char *links)
{
	static const char nodes[] = NODES_H
	    "n0,s,1,A,100,80,800,100,0.5\n" "n1,s,1,A,50,80,800,50,0.5\n"
	    "n2,s,1,A,100,80,800,25,0.5\n" "n3,t,1,A,100,80,800,100,0.5\n"
	    "n4,t,1,A,50,80,800,40,0.5\n" "n5,t,1,A,100,80,800,80,0.5\n";
	static const char one_site[] = NODES_H
	    "n0,s,1,A,100,80,800,100,0.5\n" "n1,s,1,A,50,80,800,50,0.5\n"
	    "n2,s,1,A,100,80,800,25,0.5\n" "n3,s,1,A,100,80,800,100,0.5\n"
	    "n4,s,1,A,50,80,800,40,0.5\n" "n5,s,1,A,100,80,800,80,0.5\n";
	static const double frac[] = { 0.3, 0.7, 0.99, 1 - 1e-7, 1 + 1e-7,
	    1.5 };
	struct fix f;
	struct dl_err e = { 0 };
	struct dl_sitebound sb = { NULL, NULL };
	unsigned long long rng = 88172645463325252ULL;
	int sound = 1, sharp = 1, same = 1, multi = 0, early = 0;

	if (links != NULL)
		put("links.csv", links);
	if (fix_load(&f, links != NULL ? nodes : one_site, m4, 12, 1) != 0) {
		ok(0, "cut random %s: setup", name);
		if (links != NULL)
			rm("links.csv");
		return;
	}
	if (links != NULL)
		rm("links.csv");
	f.x.sites = &sb;
	for (int t = 0; t < 60; t++) {
		struct dl_plan p, q;
		int perm[6], used = 0, G;
		long left = 12;
		double T;

		for (int i = 0; i < 6; i++)
			perm[i] = i;
		for (int i = 5; i > 0; i--) {
			int j, tmp;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			j = (int)(rng % (unsigned long long)(i + 1));
			tmp = perm[i], perm[i] = perm[j], perm[j] = tmp;
		}
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		G = 2 + (int)(rng % 4);
		plan_init(&p);
		p.opts = f.o;
		for (int g = 0; g < G; g++) {
			int S, cut;
			long m;
			struct dl_group *gr;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			S = 6 - used - (G - 1 - g) >= 2 && rng % 2 ? 2 : 1;
			m = g == G - 1 ? left : 1 + (long)(rng % 3);
			if (left - m < G - 1 - g)
				m = left - (G - 1 - g);
			left -= m;
			gr = add_group(&p, m, S);
			cut = (int)((rng >> 8) % 3);
			if (S == 1) {
				set_stage(gr, 0, perm[used++], 1, 0, 0, 3);
			} else {
				set_stage(gr, 0, perm[used++], 1, 0, 0, cut);
				set_stage(gr, 1, perm[used++], 1, 0, cut + 1, 3);
			}
		}
		multi += G > 2;
		if (cost_eval(&f.x, &p, &e) != DL_OK) {
			ok(0, "cut random %s: plan %d evaluates: %s", name, t,
			    e.msg);
			plan_free(&p);
			continue;
		}
		T = p.est.iteration_s;
		for (size_t k = 0; k < sizeof(frac) / sizeof(frac[0]); k++) {
			double c = T * frac[k];
			int over = -1;

			plan_copy(&q, &p);
			if (cost_eval_below(&f.x, &q, c, &over, &e) != DL_OK) {
				sound = 0;
			} else if (over) {
				sound &= T > c;
				early += q.nflows < p.nflows;
			} else {
				sharp &= !(c < T * (1 - 1e-8));
				same &= q.est.iteration_s == T;
			}
			plan_free(&q);
		}
		plan_free(&p);
	}
	ok(multi > 10, "cut random %s: rings of 3 members or more (%d plans)",
	    name, multi);
	ok(early > 10, "cut random %s: cut before every hop is listed (%d)",
	    name, early);
	ok(sound, "cut random %s: every plan said over is slower than the cut",
	    name);
	ok(sharp, "cut random %s: every plan clearly slower is said over",
	    name);
	ok(same, "cut random %s: a plan not over has the T of a full pricing",
	    name);
	cost_sitebound_free(&sb);
	fix_free(&f);
}

/*
 * The search's memory bounds assume cost_least_state_bytes() a parameter:
 * 16 bytes replicated (2 + 2 + 12); sharded over at most one group per GPU
 * of the 4-GPU node, 2 + 2 + 12 / 4 = 7, and no stage of any plan holds
 * less per parameter.
 */
static void
least_state_bytes(void)
{
	struct fix f;

	if (fix_load(&f, one_node, m4, 8, 1) != 0) {
		ok(0, "least state bytes: setup");
		return;
	}
	is_near(cost_least_state_bytes(&f.x), 16, 1e-12,
	    "least state bytes, replicated: 16");
	f.o.optimizer = OPTIM_SHARDED;
	is_near(cost_least_state_bytes(&f.x), 7, 1e-12,
	    "least state bytes, sharded over 4 GPUs: 7");
	for (long dp = 1; dp <= 4; dp++) {
		double w = cost_stage_memory_dp(&f.x, 0, 3, 1, 1, 1, 1, dp) -
		    cost_stage_memory_dp(&f.x, 0, 3, 0, 1, 1, 1, dp);

		ok(w >= 7 * cost_range_params(&f.x, 0, 3) * (1 - 1e-12),
		    "sharded over %ld: a stage holds at least the bound's "
		    "bytes", dp);
	}
	fix_free(&f);
}

/*
 * DeepSpeed with a pipeline, 16-bit weights and ZeRO stage 0 (dlplan(1),
 * RUNTIMES, deepspeed): on bf16 GPUs its BF16_Optimizer holds the weights
 * (2 bytes), their gradients (2) and its own gradient buffer of the
 * model's type (2) whole, and the fp32 master weights and Adam state (12)
 * over the dp replicas: 18, 12 and 9 bytes a parameter for dp 1, 2 and 4.
 * On GPUs without bf16 its FP16_Optimizer keeps 2 + 2 + 12 = 16 whole,
 * and on a cluster of both kinds the stage takes the larger.  Without a
 * pipeline (torch DDP) or with ZeRO stage 1 nothing changes.
 */
/* The state bytes a parameter of the first of S stages holding the
 * fixture's layers under deepspeed: its memory less the same stage's
 * under --runtime dlplan replicated (16 bytes and the same activations). */
static double
state(struct fix *f, int S, long dp)
{
	int opt = f->o.optimizer;
	double ds, base;

	f->o.runtime = RUNTIME_DEEPSPEED;
	ds = cost_stage_memory_dp(&f->x, 0, 3, 1, 1, S, 1, dp);
	f->o.runtime = RUNTIME_DLPLAN;
	f->o.optimizer = OPTIM_REPLICATED;
	base = cost_stage_memory_dp(&f->x, 0, 3, 1, 1, S, 1, dp);
	f->o.optimizer = opt;
	return 16 + (ds - base) / cost_range_params(&f->x, 0, 3);
}

static void
deepspeed_bf16opt(void)
{
	static const struct {
		const char *name, *nodes;
		double want[3];		/* dp 1, 2, 4 */
	} c[] = {
		{ "bf16", NODES_H "a,s,4,A,100,80,800,100,0.5\n",
		    { 18, 12, 9 } },
		{ "fp16", NODES_H "a,s,4,V100,100,80,800,100,0.5\n",
		    { 16, 16, 16 } },
		{ "both", NODES_H "a,s,4,A,100,80,800,100,0.5\n"
		    "b,s,4,T4,100,80,800,100,0.5\n", { 18, 16, 16 } },
	};
	static const long dps[3] = { 1, 2, 4 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fix f;
		double P;

		if (fix_load(&f, c[i].nodes, m4, 8, 1) != 0) {
			ok(0, "deepspeed %s: setup", c[i].name);
			continue;
		}
		P = cost_range_params(&f.x, 0, 3);
		for (int d = 0; d < 3; d++) {
			ok(fabs(state(&f, 2, dps[d]) - c[i].want[d]) < 1e-9,
			    "deepspeed %s, a pipeline, dp %ld: %g bytes a "
			    "parameter (%.12g)", c[i].name, dps[d],
			    c[i].want[d], state(&f, 2, dps[d]));
			ok(fabs(state(&f, 1, dps[d]) - 16) < 1e-9, "deepspeed "
			    "%s, no pipeline, dp %ld: 16 bytes a parameter "
			    "(%.12g)", c[i].name, dps[d], state(&f, 1, dps[d]));
		}
		f.o.optimizer = OPTIM_SHARDED;
		P = state(&f, 2, 4);
		ok(fabs(P - 7) < 1e-9, "deepspeed %s, ZeRO stage 1 over 4: 7 "
		    "bytes a parameter (%.12g)", c[i].name, P);
		fix_free(&f);
	}
}

/*
 * The sync of that optimizer: an all-reduce of the gradients and, after
 * the step, an all-gather of the updated weights, 3 (G - 1) hops of a
 * ring where the all-reduce alone is 2 (G - 1): the rings of hybrid()'s
 * plan (2e-4, 4e-4 and 1.4e-3 s) half as long again, on bf16 GPUs only.
 */
static void
deepspeed_gather(void)
{
	static const struct {
		const char *name, *nodes;
		double k;
	} c[] = {
		{ "bf16", NODES_H "a,s,4,A,100,80,800,100,0.5\n", 1.5 },
		{ "fp16", NODES_H "a,s,4,V100,100,80,800,100,0.5\n", 1 },
	};
	static const double R[3] = { 2e-4, 4e-4, 1.4e-3 };

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fix f;
		struct dl_plan p;
		struct dl_err e = { 0 };

		if (fix_load(&f, c[i].nodes, m4, 6, 1) != 0) {
			ok(0, "deepspeed gather %s: setup", c[i].name);
			continue;
		}
		f.o.runtime = RUNTIME_DEEPSPEED;
		hybrid_plan(&p, &f.o);
		is_int(cost_eval(&f.x, &p, &e), DL_OK, "deepspeed gather: "
		    "evaluates");
		for (int q = 0; q < 3 && q < p.nrings; q++)
			ok(fabs(p.rings[q].time_s / (c[i].k * R[q]) - 1) < 1e-9,
			    "deepspeed gather %s: ring %d takes %g s (%.12g)",
			    c[i].name, q, c[i].k * R[q], p.rings[q].time_s);
		plan_free(&p);
		fix_free(&f);
	}
}

int
main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/dlplan-test-cost.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	dp_unequal();
	pipeline2();
	tensor_parallel();
	hybrid();
	pipeline_shared_link();
	memory_infeasible();
	baselines();
	least_state_bytes();
	deepspeed_bf16opt();
	deepspeed_gather();
	prefix_precision();
	cut_random("one site", NULL);
	cut_random("two sites", "src,dst,gbps,latency_ms\n"
	    "n0,sw-s,100,0.005\n" "n1,sw-s,50,0.005\n" "n2,sw-s,25,0.005\n"
	    "n3,sw-t,100,0.005\n" "n4,sw-t,40,0.005\n" "n5,sw-t,80,0.005\n"
	    "sw-s,sw-t,10,5\n");
	rm("nodes.csv");
	rm("model.csv");
	rmdir(dir);
	return done_testing();
}
