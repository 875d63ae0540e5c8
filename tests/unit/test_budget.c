/*
 * test_budget.c - the budgeted schedule (budget.h): sub-clusters, slot
 * forecasts, the drift-plus-penalty choice against a schedule worked out
 * by hand, the documented bound on the time-averaged cost over a range of
 * V, and the schedule's JSON.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>

#include "budget.h"
#include "cost.h"
#include "fixture.h"
#include "forecast.h"
#include "gmc.h"
#include "plan_json.h"
#include "route.h"
#include "sb.h"
#include "search.h"
#include "tap.h"

#define H "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu," \
	"cost_per_hour\n"

/*
 * The hand example.  Node a: 1 GPU, 1 TFLOPS x mfu 0.5 = 5e11 FLOP/s,
 * 10 per hour; node b: 0.5 TFLOPS x 0.5 = 2.5e11 FLOP/s, 2 per hour.  One
 * layer of 1 GFLOP forward (3e9 FLOP per sample with the backward), no
 * parameters (so no sync), global batch 8 in micro-batches of 1.
 *
 * Ranking by FLOP/s per price: b 1.25e11, a 5e10, so the candidates are
 * {b} and {b, a}.
 *	{b}: t = 3e9 / 2.5e11 = 0.012 s per micro-batch, T = 8 t = 0.096 s,
 *	     cost 2.
 *	{b, a}: a alone takes 8 x 0.006 = 0.048 s; both as two replicas take
 *	     max(m_a 0.006, m_b 0.012) with m_a + m_b = 8: 6 + 2 (or 5 + 3)
 *	     gives 0.036 s, the best; cost 12.
 * Budget C = 5, V = 1000; score = 1000 T + Q cost.
 *	slot 1: Q = 0: {b,a} 36, {b} 96: {b,a}; Q2 = max(0 + 12 - 5, 0) = 7.
 *	slot 2: Q = 7: {b,a} 36 + 84 = 120, {b} 96 + 14 = 110: {b};
 *	        Q3 = max(7 + 2 - 5, 0) = 4.
 *	slot 3: Q = 4: {b,a} 36 + 48 = 84, {b} 96 + 8 = 104: {b,a};
 *	        Q4 = 4 + 12 - 5 = 11.
 * Average cost (12 + 2 + 12) / 3 = 26/3.  Bound: D = 0.096 - 0.036 = 0.06,
 * delta = 12 - 2 = 10, cmax - C = 7: Qmax = 1000 x 0.06 / 10 + 7 = 13,
 * C + Qmax / N = 5 + 13/3.
 */
static const char hand_nodes[] = H
    "a,s,1,X,1,16,100,100,0.5,10\n"
    "b,s,1,Y,0.5,16,100,100,0.5,2\n";
static const char hand_model[] = "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,1,0,1,1\n";

struct env {
	struct fixture f;
	struct dl_cluster c;
	struct dl_model m;
	struct dl_opts o;
	struct dl_router *r;
};

static int
env_open(struct env *v, const char *nodes, const char *links,
    const char *load, const char *model, long gb)
{
	struct dl_route_opts ro = { 3, 1, 0 };
	struct dl_err e = { 0 };

	fx_begin(&v->f);
	fx_file(&v->f, "nodes.csv", nodes);
	if (links)
		fx_file(&v->f, "links.csv", links);
	if (load)
		fx_file(&v->f, "load.csv", load);
	fx_file(&v->f, "model.csv", model);
	if (fx_load(&v->f, &v->c, &v->m) != 0)
		return -1;
	plan_opts_default(&v->o);
	v->o.global_batch = gb;
	v->o.micro_batch = 1;
	if (router_new(&v->r, &v->c, &ro, &e) != DL_OK) {
		dl_perr(&e);
		return -1;
	}
	return 0;
}

static void
env_close(struct env *v)
{
	router_free(v->r);
	model_free(&v->m);
	cluster_free(&v->c);
	fx_end(&v->f);
}

static void
bo_init(struct budget_opts *bo, double C, int N, int K, double V)
{
	memset(bo, 0, sizeof(*bo));
	bo->budget = C;
	bo->nslots = N;
	bo->slot_steps = K;
	bo->tradeoff = V;
	bo->so.strategy = STRAT_AUTO;
	bo->so.exact = -1;
	bo->so.time_limit = 60;
}

static void
free_plans(struct dl_plan *p, int n)
{
	for (int i = 0; i < n; i++)
		plan_free(&p[i]);
}

static void
test_choose(void)
{
	double T[2] = { 0.096, 0.036 }, cost[2] = { 2, 12 };

	is_int(budget_choose(2, T, cost, 1000, 0), 1, "choose: Q 0 fastest");
	is_int(budget_choose(2, T, cost, 1000, 7), 0, "choose: Q 7 cheap");
	is_int(budget_choose(2, T, cost, 1000, 4), 1, "choose: Q 4 fastest");
	/* 1000 x 0.06 = 60 = Q x 10 at Q = 6: a tie goes to the cheaper. */
	is_int(budget_choose(2, T, cost, 1000, 6), 0, "choose: tie cheaper");
	is_near(budget_queue_next(0, 12, 5), 7, 0, "queue 0 + 12 - 5");
	is_near(budget_queue_next(7, 2, 5), 4, 0, "queue 7 + 2 - 5");
	is_near(budget_queue_next(1, 2, 5), 0, 0, "queue floors at 0");
}

static void
test_hand(void)
{
	struct env v;
	struct budget_opts bo;
	struct dl_schedule s;
	struct budget_stats st;
	struct dl_plan plans[3];
	struct dl_err e = { 0 };
	const double q[4] = { 0, 7, 4, 11 };
	const int pick[3] = { 1, 0, 1 };
	json_t *root, *back;
	struct dl_schedule *rd = NULL;
	char *txt;
	int rc;

	if (env_open(&v, hand_nodes, NULL, NULL, hand_model, 8) != 0) {
		ok(0, "hand: fixture");
		return;
	}
	bo_init(&bo, 5, 3, 1, 1000);
	rc = budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e);
	if (!is_int(rc, DL_OK, "hand: runs")) {
		dl_perr(&e);
		env_close(&v);
		return;
	}
	for (int t = 0; t < 3; t++) {
		const struct dl_budget_slot *sl = &s.slots[t];
		char name[64];

		snprintf(name, sizeof(name), "hand: slot %d has 2 candidates",
		    t + 1);
		is_int(sl->ncand, 2, name);
		is_near(sl->cand[0].iteration_s, 0.096, 1e-12, "hand: T {b}");
		is_near(sl->cand[1].iteration_s, 0.036, 1e-12, "hand: T {b,a}");
		is_near(sl->cand[0].cost, 2, 0, "hand: cost {b}");
		is_near(sl->cand[1].cost, 12, 0, "hand: cost {b,a}");
		snprintf(name, sizeof(name), "hand: slot %d queue", t + 1);
		is_near(sl->queue, q[t], 1e-12, name);
		is_near(sl->queue_after, q[t + 1], 1e-12, name);
		snprintf(name, sizeof(name), "hand: slot %d choice", t + 1);
		is_int(sl->chosen, pick[t], name);
		is_near(plans[t].est.iteration_s, sl->cand[pick[t]].iteration_s,
		    0, "hand: slot plan is the chosen candidate");
		is_near(sl->best_s, 0.036, 1e-12, "hand: unconstrained T");
	}
	is_near(s.slots[1].cand[0].score, 96 + 14, 1e-9, "hand: score slot 2");
	is_near(s.avg_cost, 26.0 / 3, 1e-12, "hand: average cost");
	is_near(s.bound, 5 + 13.0 / 3, 1e-12, "hand: bound");
	is_int(st.searches, 2, "hand: two subsets searched");
	is_int(st.reused, 4, "hand: slots 2, 3 reuse them");

	/* The JSON reads back (through its text, as from a file). */
	root = json_object();
	json_object_set_new(root, "schedule", plan_schedule_json(&s, &v.c,
	    8));
	txt = json_dumps(root, JSON_REAL_PRECISION(17));
	back = json_loads(txt, 0, NULL);
	free(txt);
	rc = plan_schedule_read(back, &v.c, "x.json", &rd, &e);
	if (is_int(rc, DL_OK, "json: reads back") && rd) {
		is_int(rd->nslots, 3, "json: slots");
		is_near(rd->slots[2].queue_after, 11, 0, "json: queue");
		is_int(rd->slots[1].chosen, 0, "json: choice");
		is_int(rd->slots[1].cand[1].nused, 2, "json: nodes");
		is_near(rd->slots[0].cand[1].iteration_s,
		    s.slots[0].cand[1].iteration_s, 0, "json: exact T");
		is_near(rd->bound, s.bound, 0, "json: bound");
		is_near(rd->tradeoff, 1000, 0, "json: tradeoff");
	}
	plan_schedule_free(rd);
	json_object_set_new(json_object_get(back, "schedule"), "slots",
	    json_string("no"));
	rc = plan_schedule_read(back, &v.c, "x.json", &rd, &e);
	is_int(rc, DL_EDATA, "json: bad slots refused");
	is_str(e.msg, "schedule.slots: expected an array of at least one slot",
	    "json: message");
	json_decref(root);
	json_decref(back);
	plan_schedule_clear(&s);
	free_plans(plans, 3);

	/* Below the cheapest candidate: infeasible, with the numbers. */
	bo_init(&bo, 1, 3, 1, 1000);
	rc = budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e);
	is_int(rc, DL_EINFEAS, "budget below the cheapest: infeasible");
	is_str(e.msg, "budget 1 per hour is below the cheapest plans that "
	    "fit: 2 per hour on average over 3 slots (slot 1: 2 per hour on "
	    "'b')", "budget below the cheapest: message");
	free_plans(plans, 3);

	/* A budget above the best plan's cost keeps Q at 0. */
	bo_init(&bo, 12, 3, 1, 0);
	rc = budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e);
	is_int(rc, DL_OK, "budget 12: runs");
	for (int t = 0; rc == DL_OK && t < 3; t++) {
		is_near(s.slots[t].queue, 0, 0, "budget 12: queue stays 0");
		is_int(s.slots[t].chosen, 1, "budget 12: the best every slot");
	}
	/* Default V = C^2 / T_ref = 144 / 0.036. */
	is_near(s.tradeoff, 144 / 0.036, 1e-12, "default tradeoff");
	plan_schedule_clear(&s);
	free_plans(plans, 3);
	env_close(&v);
}

static void
test_prices(void)
{
	struct env v;
	struct budget_opts bo;
	struct dl_schedule s;
	struct budget_stats st;
	struct dl_plan plans[1];
	struct dl_err e = { 0 };
	char want[512];

	if (env_open(&v, H "a,s,1,X,1,16,100,100,0.5,10\n"
	    "b,s,1,Y,0.5,16,100,100,0.5,\n", NULL, NULL, hand_model, 8) != 0) {
		ok(0, "prices: fixture");
		return;
	}
	bo_init(&bo, 5, 1, 1, 0);
	is_int(budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e),
	    DL_EDATA, "a node without a price: data error");
	snprintf(want, sizeof(want), "%s/nodes.csv", v.f.dir);
	is_str(e.file, want, "no price: names nodes.csv");
	is_int(e.line, 3, "no price: the node's line");
	is_str(e.msg, "node 'b' has no cost_per_hour (--budget needs the "
	    "price of every node)", "no price: message");
	free_plans(plans, 1);
	env_close(&v);
}

/*
 * Sub-clusters: planning on cluster_sub() gives what planning on a
 * nodes.csv with only those nodes gives (the same links.csv, in which the
 * nodes left out are then plain vertices).
 */
static const char geo_nodes[] = H
    "e1,east,2,A,100,40,800,100,0.5,9\n"
    "e2,east,1,B,60,24,400,50,0.5,3\n"
    "w1,west,2,A,100,40,800,100,0.5,9\n"
    "w2,west,1,C,30,16,200,25,0.5,1\n";
static const char geo_links[] = "src,dst,gbps,latency_ms\n"
    "e1,swe,100,0.01\ne2,swe,50,0.01\nw1,sww,100,0.01\nw2,sww,25,0.01\n"
    "swe,gw,10,5\nsww,gw,10,5\ne2,w2,1,20\n";
static const char geo_model[] = "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,20,300,4,50\nl1,30,500,4,80\nl2,30,500,4,80\nl3,10,200,2,20\n";

static int
plan_t(const struct dl_cluster *c, const struct dl_model *m,
    const struct dl_opts *o, double *T, int *nodes)
{
	struct dl_route_opts ro = { 3, 1, 0 };
	struct search_opts so = { STRAT_AUTO, 0, NULL, 60, 1, RUNTIME_DLPLAN, NULL, NULL };
	struct search_stats st;
	struct dl_router *r = NULL;
	struct dl_costctx x;
	struct dl_plan p;
	struct dl_err e = { 0 };
	int rc;

	*nodes = 0;
	if ((rc = router_new(&r, c, &ro, &e)) != DL_OK)
		return rc;
	if ((rc = cost_init(&x, c, m, o, NULL, r, &e)) == DL_OK) {
		rc = search_plan(&x, &so, &p, &st, &e);
		if (rc == DL_OK) {
			*T = p.est.iteration_s;
			for (int g = 0; g < p.ngroups; g++)
				for (int j = 0; j < p.groups[g].nstages; j++)
					*nodes |= 1 << p.groups[g].stages[j].node;
		}
		plan_free(&p);
		cost_free(&x);
	}
	router_free(r);
	return rc;
}

static void
test_subcluster(void)
{
	struct env v;
	const unsigned char keeps[3][4] = {
		{ 1, 0, 1, 0 }, { 0, 1, 0, 1 }, { 1, 1, 0, 1 }
	};

	if (env_open(&v, geo_nodes, geo_links, NULL, geo_model, 16) != 0) {
		ok(0, "subcluster: fixture");
		return;
	}
	for (int k = 0; k < 3; k++) {
		struct dl_cluster sub, ref;
		struct fixture f2;
		struct strbuf sb = STRBUF_INIT;
		int *vmap = xcalloc(v.c.nverts, sizeof(int)), good = 1;
		int n1, n2, rc1, rc2;
		double T1 = 0, T2 = 0;
		size_t kept = 0;

		cluster_sub(&sub, &v.c, keeps[k], vmap);
		for (size_t i = 0; i < 4; i++)
			kept += keeps[k][i];
		good &= sub.nnodes == kept && sub.nverts == v.c.nverts &&
		    sub.nedges == v.c.nedges;
		for (size_t i = 0; i < sub.nverts; i++)
			good &= strcmp(sub.verts[i].id, v.c.verts[vmap[i]].id) ==
			    0 && (i < kept) == (sub.verts[i].node >= 0);
		for (size_t i = 0; i < sub.nedges; i++)
			good &= vmap[sub.edges[i].src] == v.c.edges[i].src &&
			    vmap[sub.edges[i].dst] == v.c.edges[i].dst;
		for (size_t u = 0; u < sub.nverts; u++)
			for (size_t j = sub.out_off[u]; j < sub.out_off[u + 1];
			    j++)
				good &= sub.edges[sub.out_edge[j]].src == (int)u;
		ok(good, "subcluster %d: vertices, edges, adjacency", k);

		/* The same nodes from a nodes.csv of their own. */
		sb_adds(&sb, H);
		for (size_t i = 0, line = 0; i < 4; i++) {
			const char *p = geo_nodes + strlen(H);

			for (line = 0; line < i; line++)
				p = strchr(p, '\n') + 1;
			if (keeps[k][i])
				sb_add(&sb, p, (size_t)(strchr(p, '\n') - p + 1));
		}
		fx_begin(&f2);
		fx_file(&f2, "nodes.csv", sb.buf);
		fx_file(&f2, "links.csv", geo_links);
		fx_file(&f2, "model.csv", geo_model);
		if (fx_load(&f2, &ref, NULL) != 0) {
			ok(0, "subcluster %d: reference cluster", k);
		} else {
			rc1 = plan_t(&sub, &v.m, &v.o, &T1, &n1);
			rc2 = plan_t(&ref, &v.m, &v.o, &T2, &n2);
			is_int(rc1, rc2, "subcluster: same status");
			is_near(T1, T2, 1e-12, "subcluster: same iteration time");
			is_int(n1, n2, "subcluster: same nodes used");
			cluster_free(&ref);
		}
		fx_end(&f2);
		sb_free(&sb);
		free(vmap);
		cluster_free(&sub);
	}
	env_close(&v);
}

/* Slot forecasts: slot 1 of K steps is forecast_node_loads(K). */
static void
test_slot_loads(void)
{
	struct env v;
	struct strbuf sb = STRBUF_INIT;
	struct dl_err e = { 0 };
	double *u, ref[4], fc[12];

	sb_adds(&sb, "node,t,util\n");
	for (int t = 0; t < 24; t++) {
		sb_addf(&sb, "e1,%d,%.4f\n", t, 0.3 + 0.2 * sin(t / 3.0));
		sb_addf(&sb, "w1,%d,%.4f\n", t, 0.1 + 0.01 * t);
	}
	sb_adds(&sb, "w2,0,0.5\nw2,1,0.25\n");
	if (env_open(&v, geo_nodes, geo_links, sb.buf, geo_model, 16) != 0) {
		ok(0, "slot loads: fixture");
		sb_free(&sb);
		return;
	}
	u = xcalloc(4 * 4, sizeof(double));
	is_int(budget_slot_loads(&v.c, 4, 3, 0, u, &e), DL_OK, "slot loads: ok");
	forecast_node_loads(&v.c, 3, 0, ref, &e);
	for (int i = 0; i < 4; i++)
		is_near(u[i], ref[i], 0, "slot 1 = forecast_node_loads(K)");
	is_near(u[4 * 3 + 1], 0, 0, "no history: 0");
	is_near(u[4 * 2 + 3], 0.25, 0, "short history: the last value");
	{
		struct gmc_opts go;
		struct gmc_fit f;

		gmc_opts_default(&go);
		gmc_fit(v.c.load[2].v, v.c.load[2].n, &go, &f, &e);
		gmc_forecast(&f, 12, fc);
		is_near(u[4 * 2 + 2], (fc[6] + fc[7] + fc[8]) / 3, 1e-15,
		    "slot 3 = mean of forecast steps 7..9");
	}
	free(u);
	sb_free(&sb);
	env_close(&v);
}

/*
 * The bound of budget.h across V, on a cluster with load histories, and
 * the unconstrained schedule.  The bound is recomputed here from the
 * candidates, and every queue value is checked against Qmax.
 */
static void
test_bound(void)
{
	struct env v;
	struct strbuf sb = STRBUF_INIT;
	const double Vs[] = { 1e-3, 1e-1, 1, 10, 1e3, 1e5 };
	const int N = 8;
	struct dl_plan *plans = xcalloc(N, sizeof(*plans));

	fx_seed(&v.f, 7);
	sb_adds(&sb, "node,t,util\n");
	for (int t = 0; t < 32; t++) {
		sb_addf(&sb, "e1,%d,%.3f\n", t, 0.4 + 0.3 * sin(t / 2.5));
		sb_addf(&sb, "e2,%d,%.3f\n", t, 0.2 + 0.15 * cos(t / 4.0));
		sb_addf(&sb, "w1,%d,%.3f\n", t, 0.05 + 0.02 * t);
		sb_addf(&sb, "w2,%d,%.3f\n", t, 0.1);
	}
	if (env_open(&v, geo_nodes, geo_links, sb.buf, geo_model, 16) != 0) {
		ok(0, "bound: fixture");
		sb_free(&sb);
		free(plans);
		return;
	}
	for (size_t iv = 0; iv < ARRAY_SIZE(Vs); iv++) {
		struct budget_opts bo;
		struct dl_schedule s;
		struct budget_stats st;
		struct dl_err e = { 0 };
		double D = 0, cmax = 0, delta = HUGE_VAL, C = 10, Qmax, sum = 0;
		int rc, qok = 1, any_over = 0;

		bo_init(&bo, C, N, 2, Vs[iv]);
		bo.so.exact = 0;	/* the structured search: faster */
		rc = budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e);
		if (!is_int(rc, DL_OK, "bound: runs")) {
			dl_perr(&e);
			continue;
		}
		for (int t = 0; t < N; t++) {
			const struct dl_budget_slot *sl = &s.slots[t];
			double tmin = HUGE_VAL, tmax = 0, cmin = HUGE_VAL;

			for (int i = 0; i < sl->ncand; i++) {
				tmin = fmin(tmin, sl->cand[i].iteration_s);
				tmax = fmax(tmax, sl->cand[i].iteration_s);
				cmin = fmin(cmin, sl->cand[i].cost);
				cmax = fmax(cmax, sl->cand[i].cost);
			}
			D = fmax(D, tmax - tmin);
			for (int i = 0; i < sl->ncand; i++)
				if (sl->cand[i].cost > C) {
					delta = fmin(delta, sl->cand[i].cost -
					    cmin);
					any_over = 1;
				}
			sum += sl->cand[sl->chosen].cost - C;
		}
		Qmax = any_over ? Vs[iv] * D / delta + fmax(cmax - C, 0) : 0;
		for (int t = 0; t < N; t++)
			qok &= s.slots[t].queue_after <= Qmax * (1 + 1e-12);
		ok(qok, "V %g: every queue value within Qmax %g", Vs[iv], Qmax);
		ok(sum <= s.slots[N - 1].queue_after + 1e-9,
		    "V %g: sum of overshoots <= final queue", Vs[iv]);
		is_near(s.bound, C + Qmax / N, 1e-12, "bound as documented");
		ok(s.avg_cost <= s.bound + 1e-12, "V %g: average cost %g <= "
		    "bound %g", Vs[iv], s.avg_cost, s.bound);
		plan_schedule_clear(&s);
		free_plans(plans, N);
	}

	/* A budget above every plan's cost: the fastest in every slot. */
	{
		struct budget_opts bo;
		struct dl_schedule s;
		struct budget_stats st;
		struct dl_err e = { 0 };
		int rc, good = 1;

		bo_init(&bo, 1e6, N, 2, 0);
		bo.so.exact = 0;
		rc = budget_run(&v.c, &v.m, &v.o, v.r, &bo, &s, plans, &st, &e);
		is_int(rc, DL_OK, "unconstrained: runs");
		for (int t = 0; rc == DL_OK && t < N; t++) {
			const struct dl_budget_slot *sl = &s.slots[t];

			good &= sl->queue == 0 &&
			    sl->cand[sl->chosen].iteration_s == sl->best_s &&
			    plans[t].est.iteration_s == sl->best_s;
		}
		ok(good, "unconstrained: every slot takes its fastest plan");
		if (rc == DL_OK)
			is_near(s.avg_throughput, s.best_throughput, 1e-15,
			    "unconstrained: all of the throughput");
		plan_schedule_clear(&s);
		free_plans(plans, N);
	}
	free(plans);
	sb_free(&sb);
	env_close(&v);
}

int
main(void)
{
	test_choose();
	test_hand();
	test_prices();
	test_subcluster();
	test_slot_loads();
	test_bound();
	return done_testing();
}
