/*
 * test_improve.c - the improvement phase on several threads against the
 * same phase on one.
 *
 * On 256 GPUs and more the phase solves its shapes in batches on the
 * plan's threads (src/search_batch.c) and must end exactly where the
 * one-thread run ends: the same plan, to the last bit of T, whatever the
 * number of threads.  Each instance starts from a poor plan (nodes of
 * mixed speeds dealt round-robin into pipelines, some nodes left out) so
 * that the phase takes many moves, swaps and left-out units among them,
 * and the batches' early stops and returned budget all come into play.
 */
#include <math.h>
#include <string.h>

#include "cost.h"
#include "fixture.h"
#include "route.h"
#include "sb.h"
#include "search_int.h"
#include "tap.h"

#define NODES 32

/* 32 nodes of 8 GPUs of four speeds in two sites, and a model of L
 * random layers. */
static void
write_instance(struct fixture *f, int seed, int L)
{
	struct strbuf sb = STRBUF_INIT;

	fx_seed(f, (uint64_t)seed);
	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	for (int i = 0; i < NODES; i++)
		sb_addf(&sb, "n%d,s%d,8,G%d,%d,80,2400,%d\n", i, i % 2, i % 4,
		    100 + 100 * (i % 4) + fx_int(f, 0, 40),
		    fx_int(f, 100, 400));
	fx_file(f, "nodes.csv", sb.buf);
	sb_reset(&sb);
	sb_adds(&sb, "src,dst,gbps,latency_ms\n");
	for (int i = 0; i < NODES; i++)
		sb_addf(&sb, "n%d,sw%d,400,0.005\n", i, i % 2);
	sb_addf(&sb, "sw0,sw1,%d,8\n", fx_int(f, 25, 100));
	fx_file(f, "links.csv", sb.buf);
	sb_reset(&sb);
	sb_adds(&sb, "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n");
	for (int l = 0; l < L; l++)
		sb_addf(&sb, "l%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", l,
		    200 + 800 * fx_rand(f), 100 + 400 * fx_rand(f),
		    20 + 60 * fx_rand(f), 100 + 400 * fx_rand(f),
		    10 * fx_rand(f));
	fx_file(f, "model.csv", sb.buf);
	sb_free(&sb);
}

/* Whether plans a and b are the same plan with the same T. */
static int
same_plan(const struct dl_plan *a, const struct dl_plan *b)
{
	if (a->ngroups != b->ngroups ||
	    a->est.iteration_s != b->est.iteration_s)
		return 0;
	for (int g = 0; g < a->ngroups; g++) {
		const struct dl_group *ga = &a->groups[g], *gb = &b->groups[g];

		if (ga->nstages != gb->nstages ||
		    ga->micro_batches != gb->micro_batches)
			return 0;
		for (int s = 0; s < ga->nstages; s++) {
			const struct dl_stage *p = &ga->stages[s];
			const struct dl_stage *q = &gb->stages[s];

			if (p->node != q->node || p->ngpus != q->ngpus ||
			    p->first != q->first || p->last != q->last ||
			    memcmp(p->gpus, q->gpus, (size_t)p->ngpus *
			    sizeof(int)) != 0)
				return 0;
		}
	}
	return 1;
}

/*
 * The start plan: G pipelines of S nodes each as TP8 units, node i of
 * pipeline g the (g + i G)-th of a fixed shuffle, solved as the structured
 * mode solves a shape; the other nodes are left out.
 */
static int
start_plan(const struct dl_costctx *x, struct search_opts *so, int seed,
    int G, int S, struct dl_plan *p)
{
	struct dl_costctx xl;
	struct search_stats st = { 0 };
	struct unit u[NODES];
	const struct unit *ord[NODES];
	int Sg[NODES], off[NODES];
	struct shape sh = { G, Sg, off, ord };
	struct ctx C;
	size_t n = search_make_units(x, 8, u);
	int ok;

	plan_init(p);
	search_ctx_open(&C, &xl, x, so, &st, p);
	for (int g = 0; g < G; g++) {
		Sg[g] = S;
		off[g] = g * S;
		for (int i = 0; i < S; i++)
			ord[g * S + i] = &u[(size_t)(g + i * G + 7 * seed) % n];
	}
	search_solve_shape(&C, &sh);
	ok = C.have_best && !C.failed;
	search_ctx_free(&C);
	return ok;
}

int
main(void)
{
	struct fixture f;
	int runs = 0, faster = 0, same = 0, moved = 0;

	fx_begin(&f);
	for (int seed = 1; seed <= 3; seed++) {
		struct dl_route_opts ro = { 3, 1, 0 };
		struct search_opts so = { STRAT_AUTO, 0, NULL, 30, 1,
		    RUNTIME_DLPLAN, NULL, NULL };
		struct dl_cluster c;
		struct dl_model m;
		struct dl_opts o;
		struct dl_router *r = NULL;
		struct dl_costctx x;
		struct dl_err e = { 0 };
		struct dl_plan start, one;
		struct search_stats st = { 0 };

		write_instance(&f, seed, 12);
		if (fx_load(&f, &c, &m) != 0)
			continue;
		plan_opts_default(&o);
		o.micro_batch = 1;
		o.global_batch = 32;
		o.mfu = 0.4;	/* the regime the instances were drawn for */
		router_new(&r, &c, &ro, &e);
		cost_init(&x, &c, &m, &o, NULL, r, &e);
		if (start_plan(&x, &so, seed, 3, 8, &start)) {
			runs++;
			plan_copy(&one, &start);
			search_improve(&x, &so, &one, &st);
			faster += one.est.iteration_s <
			    start.est.iteration_s * (1 - 1e-3);
			for (int g = 0; g < one.ngroups; g++)
				moved += one.groups[g].nstages != 8;
			for (int jobs = 2; jobs <= 3; jobs++) {
				struct dl_plan p;
				int eq;

				so.jobs = jobs;
				plan_copy(&p, &start);
				search_improve(&x, &so, &p, &st);
				eq = same_plan(&one, &p);
				same += eq;
				if (!eq)
					printf("# seed %d, %d threads: T %.17g, "
					    "one thread %.17g\n", seed, jobs,
					    p.est.iteration_s,
					    one.est.iteration_s);
				plan_free(&p);
			}
			printf("# seed %d: T %.6g -> %.6g, %d groups\n", seed,
			    start.est.iteration_s, one.est.iteration_s,
			    one.ngroups);
			plan_free(&one);
		}
		plan_free(&start);
		cost_free(&x);
		router_free(r);
		model_free(&m);
		cluster_free(&c);
	}
	fx_end(&f);
	ok(runs == 3, "the three start plans solve (%d)", runs);
	ok(faster == runs, "the phase makes each start plan faster by 0.1%% "
	    "or more (%d of %d)", faster, runs);
	ok(moved > 0, "it changes the pipelines' lengths somewhere, not only "
	    "which node holds a stage (%d groups)", moved);
	ok(same == 2 * runs, "2 and 3 threads end on the one-thread plan, T "
	    "to the last bit (%d of %d)", same, 2 * runs);
	return done_testing();
}
