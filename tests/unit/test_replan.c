/*
 * test_replan.c - re-planning from step logs (replan.h): the log reader's
 * checks, the estimator against speed factors worked out by hand, the
 * re-split and re-partition against plans worked out by hand, and the
 * robustness of both estimators to noisy logs.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Nodes a, b, c: one GPU each, 100 TFLOPS x mfu 0.4 = 4e13 FLOP/s, on one
 * site (the implicit switch: a transfer of S bytes costs
 * 2 x 0.005 ms + 8 S / 100e9 s).  Model: layers of 100 GFLOP forward
 * (3e11 FLOP per sample with the backward), 10 M parameters, act_mb 1:
 * a layer takes 3e11 / 4e13 = 0.0075 s per sample on any node.
 *
 * dp3: three replicas of both layers (2 x 0.0075 = 0.015 s per
 * micro-batch), 4 micro-batches each: T_g = 0.06 s.  Sync: 20 M
 * parameters, hop 20e6 x 2 / 3 bytes: tau = 1e-5 + 8 x 13333333.3 / 1e11
 * = 1.0766667e-3 s, R = 2 (3 - 1) tau = 4.3066667e-3 s.
 *
 * pp2: one pipeline a [0-1] > b [2-3] of a 4-layer model, 12
 * micro-batches: t = 0.015 s per stage, c = 2 (1e-5 + 8e6 / 1e11) =
 * 1.8e-4 s, T = 0.015 + 1.8e-4 + 0.015 + 11 x 0.015 = 0.19518 s.
 */
#include <math.h>

#include "cost.h"
#include "fixture.h"
#include "replan.h"
#include "route.h"
#include "sb.h"
#include "tap.h"

static const char nodes3[] =
    "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"
    "a,s,1,X,100,16,100,100\nb,s,1,X,100,16,100,100\n"
    "c,s,1,X,100,16,100,100\n";
static const char model2[] = "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,100,10,1,1\nl1,100,10,1,1\n";
static const char model4[] = "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,100,10,1,1\nl1,100,10,1,1\nl2,100,10,1,1\nl3,100,10,1,1\n";

#define INPUTS "\"schema\": \"dlplan.plan/1\", \"inputs\": [" \
	"{ \"kind\": \"nodes\", \"path\": \"nodes.csv\" }, " \
	"{ \"kind\": \"model\", \"path\": \"model.csv\" } ], "
#define DP(n, m) "{ \"micro_batches\": " #m ", \"stages\": [ { \"node\": " \
	"\"" n "\", \"gpus\": [0], \"layers\": [0, 1] } ] }"

static const char dp3[] = "{ " INPUTS
    "\"options\": { \"global_batch\": 12, \"micro_batch\": 1, \"mfu\": 0.4 }, "
    "\"groups\": [ " DP("a", 4) ", " DP("b", 4) ", " DP("c", 4) " ] }";
static const char pp2[] = "{ " INPUTS
    "\"options\": { \"global_batch\": 12, \"micro_batch\": 1, \"mfu\": 0.4 }, "
    "\"groups\": [ { \"micro_batches\": 12, \"stages\": [ "
    "{ \"node\": \"a\", \"gpus\": [0], \"layers\": [0, 1] }, "
    "{ \"node\": \"b\", \"gpus\": [0], \"layers\": [2, 3] } ] } ] }";

static const double tau3 = 1e-5 + 8 * (20e6 * 2 / 3) / 1e11;

struct env {
	struct fixture f;
	struct dl_cluster c;
	struct dl_model m;
	struct dl_plan p;		/* as read */
	struct dl_plan ev;		/* evaluated at the forecast speeds */
	struct dl_router *r;
	struct dl_costctx x;
	char path[512];
};

static int
env_open(struct env *v, const char *model, const char *plan)
{
	struct dl_route_opts ro = { 3, 1, 0 };
	struct dl_err e = { 0 };

	fx_begin(&v->f);
	fx_file(&v->f, "nodes.csv", nodes3);
	fx_file(&v->f, "model.csv", model);
	fx_file(&v->f, "plan.json", plan);
	snprintf(v->path, sizeof(v->path), "%s/plan.json", v->f.dir);
	if (fx_load(&v->f, &v->c, &v->m) != 0)
		return -1;
	if (plan_read_json(&v->p, v->path, &v->c, &v->m, 0, &e) != DL_OK ||
	    router_new(&v->r, &v->c, &ro, &e) != DL_OK ||
	    cost_init(&v->x, &v->c, &v->m, &v->p.opts, NULL, v->r, &e) !=
	    DL_OK) {
		dl_perr(&e);
		return -1;
	}
	plan_copy(&v->ev, &v->p);
	if (cost_eval(&v->x, &v->ev, &e) != DL_OK) {
		dl_perr(&e);
		return -1;
	}
	return 0;
}

static void
env_close(struct env *v)
{
	cost_free(&v->x);
	router_free(v->r);
	plan_free(&v->ev);
	plan_free(&v->p);
	model_free(&v->m);
	cluster_free(&v->c);
	fx_rm(&v->f, "plan.json");
	fx_rm(&v->f, "steps.csv");
	fx_rm(&v->f, "out.json");
	fx_end(&v->f);
}

/*
 * A log of the evaluated plan in which node n runs slow[n] times slower:
 * every rank of group g logs the group's T_g with its stages' compute
 * times scaled (and, with compute, its own m_g t_sigma), each value times
 * 1 + u, u uniform in [-noise, noise], and with probability spike_p times
 * spike.
 */
static char *
gen_log(struct env *v, const double *slow, int steps, double noise,
    double spike_p, double spike, int compute, uint64_t seed)
{
	struct strbuf sb = STRBUF_INIT;
	struct dl_rank *rk = plan_rank_table(&v->ev);
	long nr = plan_ranks(&v->ev);

	fx_seed(&v->f, seed);
	sb_adds(&sb, compute ? "rank,step,seconds,compute_seconds\n" :
	    "rank,step,seconds\n");
	for (int st = 0; st < steps; st++)
		for (long r = 0; r < nr; r++) {
			const struct dl_group *gr = &v->ev.groups[rk[r].group];
			double sum = 0, mx = 0, T, busy;

			for (int j = 0; j < gr->nstages; j++) {
				const struct dl_stage *s = &gr->stages[j];
				double t = s->compute_s * slow[s->node];

				sum += t + s->p2p_s;
				mx = fmax(mx, fmax(t, s->p2p_s));
			}
			T = sum + (gr->micro_batches - 1) * mx;
			T *= 1 + noise * (2 * fx_rand(&v->f) - 1);
			if (fx_rand(&v->f) < spike_p)
				T *= spike;
			sb_addf(&sb, "%ld,%d,%.17g", r, st, T);
			if (compute) {
				const struct dl_stage *s =
				    &gr->stages[rk[r].stage];

				busy = gr->micro_batches * s->compute_s *
				    slow[s->node];
				busy *= 1 + noise * (2 * fx_rand(&v->f) - 1);
				if (fx_rand(&v->f) < spike_p)
					busy *= spike;
				sb_addf(&sb, ",%.17g", busy);
			}
			sb_addc(&sb, '\n');
		}
	free(rk);
	return sb_detach(&sb);
}

static int
load_log(struct env *v, const char *text, struct dl_steplog *L,
    struct dl_err *e)
{
	char path[600];

	fx_file(&v->f, "steps.csv", text);
	snprintf(path, sizeof(path), "%s/steps.csv", v->f.dir);
	return steplog_load(L, path, &v->p, e);
}

/* Re-plan with a log; returns the status, fills np. */
static int
replan(struct env *v, const char *text, int window, int repart,
    struct dl_plan *np, struct dl_err *e)
{
	struct replan_opts ro = { window, repart, REPLAN_MIN_GAIN_DEFAULT, 60 };
	struct dl_steplog L;
	int rc;

	memset(np, 0, sizeof(*np));
	if ((rc = load_log(v, text, &L, e)) != DL_OK)
		return rc;
	rc = replan_run(&v->x, &v->p, &L, &ro, np, e);
	steplog_free(&L);
	return rc;
}

static int
same_split(const struct dl_plan *a, const struct dl_plan *b)
{
	if (a->ngroups != b->ngroups)
		return 0;
	for (int g = 0; g < a->ngroups; g++)
		if (a->groups[g].micro_batches != b->groups[g].micro_batches ||
		    a->groups[g].stages[0].last != b->groups[g].stages[0].last)
			return 0;
	return 1;
}

/* Every check of the log reader, with its message. */
static void
test_log_errors(void)
{
	struct env v;
	struct dl_steplog L;
	struct dl_err e;
	const struct {
		const char *text, *msg;
		long line, col;
	} bad[] = {
		{ "rank,step,seconds\n0,0,1\n1,0,1\n3,0,1\n2,0,1\n",
		    "column 'rank': rank 3 is not in the plan (it has 3 ranks, "
		    "0 to 2)", 4, 1 },
		{ "rank,step,seconds\n0,0,1\n2,0,1\n",
		    "rank 1 of the plan has no steps in the log", 0, 0 },
		{ "rank,step,seconds\n0,0,1\n1,0,1\n",
		    "the log has ranks 0 to 1, the plan has 3 ranks (a log of "
		    "another plan?)", 0, 0 },
		{ "rank,step,seconds\n0,0,1\n1,0,0\n2,0,1\n", NULL, 3, 3 },
		{ "rank,step,seconds\n0,0,1\n1,0,-2\n2,0,1\n", NULL, 3, 3 },
		{ "rank,step,seconds\n0,5,1\n1,5,1\n2,5,1\n0,5,1\n",
		    "column 'step': rank 0 step 5 appears twice (also on line "
		    "2)", 5, 2 },
		{ "rank,step,seconds,samples\n0,0,1,4\n1,0,1,8\n2,0,1,4\n",
		    "column 'samples': rank 1 processed 8 samples, the plan "
		    "gives its group 4 (a log of another plan?)", 3, 4 },
		{ "rank,step,seconds,compute_seconds\n0,0,1,1\n1,0,1,\n"
		    "2,0,1,1\n", "column 'compute_seconds': empty (the column "
		    "is given, so every step needs a time)", 3, 4 },
		{ "rank,step,seconds\n", "no steps (expected at least one row "
		    "after the header)", 1, 0 },
	};

	if (env_open(&v, model2, dp3) != 0) {
		ok(0, "log errors: fixture");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&e, 0, sizeof(e));
		is_int(load_log(&v, bad[i].text, &L, &e), DL_EDATA,
		    "bad log: data error");
		if (bad[i].msg)
			is_str(e.msg, bad[i].msg, "bad log: message");
		else
			ok(strstr(e.msg, "column 'seconds'") != NULL,
			    "bad log: non-positive seconds (%s)", e.msg);
		is_int(e.line, bad[i].line, "bad log: line");
		is_int(e.col, bad[i].col, "bad log: column");
		ok(strstr(e.file, "steps.csv") != NULL, "bad log: names file");
	}
	memset(&e, 0, sizeof(e));
	is_int(load_log(&v, "rank,step,seconds,samples\n2,1,0.5,4\n0,3,1,4\n"
	    "1,0,2,\n0,1,3,4\n", &L, &e), DL_OK, "good log: reads");
	is_int((long)L.rank[0].n, 2, "good log: rank 0 has 2 steps");
	is_int(L.rank[0].step[0], 1, "good log: sorted by step");
	is_near(L.rank[0].seconds[1], 1, 0, "good log: seconds");
	steplog_free(&L);
	env_close(&v);
}

/* One replica 2x slower: micro-batches move away from it. */
static void
test_slow_unit(void)
{
	struct env v;
	struct dl_plan np;
	struct dl_err e = { 0 };
	const double slow[3] = { 1, 1, 2 };
	char *log;

	if (env_open(&v, model2, dp3) != 0) {
		ok(0, "slow: fixture");
		return;
	}
	is_near(v.ev.est.iteration_s, 0.06 + 4 * tau3, 1e-12,
	    "dp3: planned T = 0.06 + 4 tau");
	log = gen_log(&v, slow, 16, 0, 0, 1, 0, 1);
	if (is_int(replan(&v, log, 8, 0, &np, &e), DL_OK, "slow: replans")) {
		const struct dl_lineage *l = np.lineage;

		/* 4 x 0.015 x 2 = 0.12 s observed: f = 0.06 / 0.12. */
		is_near(l->unit[2].observed_s, 0.12, 1e-12, "slow: observed");
		is_near(l->unit[2].factor, 0.5, 1e-12, "slow: factor 0.5");
		is_near(l->unit[0].factor, 1, 0, "slow: others as planned");
		is_near(l->factor[2], 0.5, 1e-12, "slow: node c x0.5");
		/*
		 * Per micro-batch 0.015, 0.015, 0.03: m = 5, 5, 2 gives
		 * max(0.075, 0.075, 0.06); no other split is as low.
		 */
		ok(l->adopted, "slow: adopted");
		is_int(np.ngroups, 3, "slow: 3 groups");
		is_int(np.groups[0].micro_batches, 5, "slow: a 5");
		is_int(np.groups[1].micro_batches, 5, "slow: b 5");
		is_int(np.groups[2].micro_batches, 2, "slow: c 2");
		is_near(l->measured_s, 0.12 + 4 * tau3, 1e-12,
		    "slow: parent under the measured speeds");
		is_near(l->iteration_s, 0.075 + 4 * tau3, 1e-12,
		    "slow: new T = 0.075 + 4 tau");
		is_near(l->gain, 0.045 / (0.12 + 4 * tau3), 1e-12,
		    "slow: predicted gain");
		is_near(np.est.iteration_s, l->iteration_s, 0,
		    "slow: the estimate is the new T");
	}
	plan_free(&np);
	free(log);

	/* The same log with the busy times: the same answer per unit. */
	log = gen_log(&v, slow, 16, 0, 0, 1, 1, 1);
	if (is_int(replan(&v, log, 8, 0, &np, &e), DL_OK, "slow compute")) {
		is_int(np.lineage->compute, 1, "compute: estimator");
		is_near(np.lineage->unit[2].factor, 0.5, 1e-12,
		    "compute: factor 0.5");
		is_int(np.groups[2].micro_batches, 2, "compute: c 2");
	}
	plan_free(&np);
	free(log);

	/* The lineage survives plan.json. */
	log = gen_log(&v, slow, 16, 0, 0, 1, 0, 1);
	if (replan(&v, log, 8, 0, &np, &e) == DL_OK) {
		struct dl_plan back;
		char out[600];

		np.lineage->observed = xstrdup("steps.csv");
		snprintf(out, sizeof(out), "%s/out.json", v.f.dir);
		is_int(plan_write_json(&np, &v.c, &v.m, out, &e), DL_OK,
		    "lineage: written");
		if (is_int(plan_read_json(&back, out, &v.c, &v.m, 1, &e), DL_OK,
		    "lineage: read back") && back.lineage) {
			is_int(back.lineage->nunits, 3, "lineage: units");
			is_near(back.lineage->unit[2].factor, 0.5, 1e-12,
			    "lineage: factor");
			is_near(back.lineage->factor[2], 0.5, 1e-12,
			    "lineage: node factor");
			ok(back.lineage->adopted, "lineage: adopted");
			is_str(back.lineage->observed, "steps.csv",
			    "lineage: observed");
			is_near(back.lineage->gain, np.lineage->gain, 0,
			    "lineage: gain");
		}
		plan_free(&back);
	}
	plan_free(&np);
	free(log);
	env_close(&v);
}

/* A log that matches the plan changes nothing. */
static void
test_matching(void)
{
	struct env v;
	struct dl_plan np;
	struct dl_err e = { 0 };
	const double one[3] = { 1, 1, 1 };
	char *log;

	if (env_open(&v, model2, dp3) != 0) {
		ok(0, "matching: fixture");
		return;
	}
	for (int compute = 0; compute < 2; compute++) {
		log = gen_log(&v, one, 10, 0, 0, 1, compute, 1);
		if (is_int(replan(&v, log, 8, 1, &np, &e), DL_OK,
		    "matching: replans")) {
			ok(!np.lineage->adopted, "matching: not adopted");
			ok(same_split(&np, &v.p), "matching: same m_g");
			is_near(np.lineage->gain, 0, 0, "matching: no gain");
			is_near(np.est.iteration_s, v.ev.est.iteration_s, 0,
			    "matching: same T");
		}
		plan_free(&np);
		free(log);
	}
	env_close(&v);
}

/*
 * Noisy logs: +-10 % per rank and step, and 2 % of the values 5x (a
 * stall), 16 steps, 100 seeds each, with and without the busy times: the
 * plan never changes.
 */
static void
test_noise(void)
{
	const char *plans[2] = { dp3, pp2 }, *models[2] = { model2, model4 };

	for (int k = 0; k < 2; k++) {
		struct env v;
		const double one[3] = { 1, 1, 1 };
		int flips = 0, errs = 0, runs = 0;

		if (env_open(&v, models[k], plans[k]) != 0) {
			ok(0, "noise: fixture");
			continue;
		}
		for (int compute = 0; compute < 2; compute++)
			for (uint64_t seed = 1; seed <= 100; seed++) {
				struct dl_plan np;
				struct dl_err e = { 0 };
				char *log = gen_log(&v, one, 16, 0.10, 0.02, 5,
				    compute, seed);

				runs++;
				if (replan(&v, log, 8, 1, &np, &e) != DL_OK)
					errs++;
				else if (!same_split(&np, &v.p) ||
				    np.lineage->adopted)
					flips++;
				plan_free(&np);
				free(log);
			}
		is_int(errs, 0, "noise: every log replans");
		ok(flips == 0, "noise (%s): %d of %d logs changed the plan",
		    k ? "pp2" : "dp3", flips, runs);
		env_close(&v);
	}
}

/* A pipeline whose second stage is 2x slower. */
static void
test_pipeline(void)
{
	struct env v;
	struct dl_plan np;
	struct dl_err e = { 0 };
	const double slow[3] = { 1, 2, 1 };
	char *log;

	if (env_open(&v, model4, pp2) != 0) {
		ok(0, "pipeline: fixture");
		return;
	}
	/*
	 * Planned: two stages of 0.015 s, 9e-5 s each way; in 1F1B every
	 * lane takes 0.015 + 9e-5 per micro-batch, so T = 0.03 + 1.8e-4 +
	 * 11 x 0.01509 = 0.19617.
	 */
	is_near(v.ev.est.iteration_s, 0.19617, 1e-12, "pp2: planned T");

	/*
	 * Step times alone: T = 0.015 + 0.03 + 1.8e-4 + 11 x 0.03 = 0.37518
	 * observed; one factor for the group: 0.195 / f + 1.8e-4 = 0.37518,
	 * f = 0.195 / 0.375 = 0.52.  One group cannot re-split, and a
	 * uniform slow-down does not move the boundary: kept.
	 */
	log = gen_log(&v, slow, 8, 0, 0, 1, 0, 1);
	if (is_int(replan(&v, log, 8, 1, &np, &e), DL_OK, "pipeline: runs")) {
		is_near(np.lineage->unit[0].observed_s, 0.37518, 1e-12,
		    "pipeline: observed T_g");
		is_near(np.lineage->unit[0].factor, 0.52, 1e-9,
		    "pipeline: group factor 0.52");
		is_near(np.lineage->unit[1].factor, 0.52, 1e-9,
		    "pipeline: shared by both stages");
		ok(!np.lineage->adopted, "pipeline: kept");
	}
	plan_free(&np);
	free(log);

	/*
	 * Busy times: stage b 12 x 0.03 = 0.36 s against 0.18: f = 0.5, a
	 * as planned.  Measured T = 0.015 + 1.8e-4 + 0.03 + 11 x (0.03 +
	 * 9e-5) = 0.37617 (b's lane is the bottleneck).  Re-partitioned,
	 * a [0-2] (0.0225) > b [3] (0.015), forward a third: a runs F0 F1
	 * to 0.015; b's B0 ends 0.02259; a's B0 receives and ends 0.03768;
	 * then a's lane holds ten F-B pairs of 0.0075 + 9e-5 + 0.015 (to
	 * 0.26358) while b keeps up, and B11 receives and ends at T =
	 * 0.26358 + 9e-5 + 0.015 = 0.27867.
	 */
	log = gen_log(&v, slow, 8, 0, 0, 1, 1, 1);
	if (is_int(replan(&v, log, 8, 0, &np, &e), DL_OK, "busy: runs")) {
		is_near(np.lineage->unit[1].factor, 0.5, 1e-12,
		    "busy: stage b x0.5");
		is_near(np.lineage->unit[0].factor, 1, 0, "busy: stage a x1");
		ok(!np.lineage->adopted, "busy without --repartition: kept");
	}
	plan_free(&np);
	if (is_int(replan(&v, log, 8, 1, &np, &e), DL_OK, "repartition")) {
		ok(np.lineage->adopted, "repartition: adopted");
		is_int(np.groups[0].stages[0].last, 2, "repartition: a 0-2");
		is_int(np.groups[0].stages[1].first, 3, "repartition: b 3");
		is_near(np.lineage->measured_s, 0.37617, 1e-12,
		    "repartition: parent measured");
		is_near(np.est.iteration_s, 0.27867, 1e-12,
		    "repartition: new T");
	}
	plan_free(&np);
	free(log);
	env_close(&v);
}

int
main(void)
{
	test_log_errors();
	test_slow_unit();
	test_matching();
	test_noise();
	test_pipeline();
	return done_testing();
}
