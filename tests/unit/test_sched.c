/*
 * test_sched.c - the job scheduler (sched.h): the memoised iteration time
 * against cost_eval() of the same plan, the GADGET greedy of one slot
 * against a brute force of that slot on small instances (the ratio is
 * reported), the invariants of whole simulations, JOBS.csv errors, and
 * jobs that need model parallelism (their least GPUs derived by hand,
 * their plans reused across alike nodes, their T against cost_eval()).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <string.h>

#include "fixture.h"
#include "sched_int.h"
#include "tap.h"

/* 8 GPUs on three nodes behind one switch: 4 fast, 2 + 2 slower, one of
 * them with a slow NIC, so that placement matters. */
static const char nodes_csv[] =
    "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"
    "fast,s,4,X,100,40,1000,100\n"
    "mid,s,2,Y,60,40,500,25\n"
    "slow,s,2,Z,40,16,200,10\n";

/* Two layers with parameters, so the ring costs something. */
static const char model_csv[] =
    "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,40,200,1,50\n"
    "l1,40,200,1,50\n";

static const char jobs_csv[] =
    "job,arrival_s,model,global_batch,micro_batch,iterations,min_gpus,"
    "max_gpus,weight\n"
    "a,0,model.csv,64,2,3000,1,8,1\n"
    "b,50,model.csv,32,2,800,1,4,2\n"
    "c,120,model.csv,64,4,1500,2,6,1\n";

static int
load(struct fixture *f, struct dl_cluster *c, struct sched *s,
    const char *jobs)
{
	struct dl_err e = { 0 };
	char path[600];

	fx_file(f, "jobs.csv", jobs);
	if (fx_load(f, c, NULL) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/jobs.csv", f->dir);
	if (sched_load(s, c, path, &e) != DL_OK) {
		cluster_free(c);
		return e.code;
	}
	return 0;
}

/* The fast T against cost_eval() of the plan sched_job_plan() builds. */
static void
test_iter_time(struct fixture *f, struct sched *s)
{
	size_t nn = s->c->nnodes;
	double worst = 0;

	for (int t = 0; t < 60; t++) {
		int cnt[3], node[8], gpu[8], n = 0, job = t % 3;
		struct dl_plan p;
		struct dl_err e;
		double fast;

		for (size_t v = 0; v < nn; v++) {
			cnt[v] = fx_int(f, 0, s->c->nodes[v].gpus);
			for (int g = 0; g < cnt[v]; g++) {
				node[n] = (int)v;
				gpu[n++] = g;
			}
		}
		if (n == 0 || n > s->jobs[job].max_gpus)
			continue;
		fast = sched_iter_time(s, s->jobs[job].cls, cnt);
		if (sched_job_plan(s, job, (size_t)n, node, gpu, &p, &e) !=
		    DL_OK) {
			ok(0, "plan of job %d on %d GPUs: %s", job, n, e.msg);
			continue;
		}
		if (fabs(fast - p.est.iteration_s) / p.est.iteration_s > worst)
			worst = fabs(fast - p.est.iteration_s) /
			    p.est.iteration_s;
		plan_free(&p);
	}
	ok(worst < 1e-12, "memoised T equals cost_eval of the same plan "
	    "(worst relative difference %.3g)", worst);
}

/* Random slots of <= 3 jobs on the 8 GPUs: greedy against the optimum. */
static void
test_brute(struct fixture *f, struct sched *s)
{
	struct sched_params sp = { .slot_s = 300, .restart_s = 30,
	    .objective = SCHED_JCT, .seed = 1 };
	size_t nn = s->c->nnodes;
	double minr = 1, sum = 0, above = 0;
	int n = 0, below_half = 0;

	for (int t = 0; t < 300; t++) {
		int job[3], prev[9] = { 0 }, freev[3], g[9], b[9];
		double left[3], ug, ub;
		struct sched_slotprob pb;
		size_t na = (size_t)fx_int(f, 1, 3);

		sp.objective = t % 2 ? SCHED_UTILITY : SCHED_JCT;
		sp.slot_s = t % 3 ? 300 : 60;
		for (size_t v = 0; v < nn; v++)
			freev[v] = s->c->nodes[v].gpus;
		for (size_t a = 0; a < na; a++) {
			job[a] = (int)a;
			left[a] = s->jobs[a].iterations * (0.05 + fx_rand(f));
			/* Some jobs ran last slot on a GPU or two. */
			if (fx_int(f, 0, 1))
				prev[a * nn + (size_t)fx_int(f, 0, 2)] =
				    s->jobs[a].min_gpus;
		}
		memset(&pb, 0, sizeof(pb));
		pb.njobs = na;
		pb.job = job;
		pb.left = left;
		pb.prev = prev;
		pb.free_gpus = freev;
		ug = sched_slot_greedy(s, &sp, &pb, g);
		ub = sched_slot_best(s, &sp, &pb, b);
		if (ug > ub + 1e-9)
			above++;
		if (ub > 0) {
			double r = ug / ub;

			minr = r < minr ? r : minr;
			sum += r;
			n++;
			below_half += r < 0.5;
		}
	}
	ok(above == 0, "brute force is never beaten by the greedy");
	printf("# gadget / brute force over %d slots: mean %.4f, worst %.4f\n",
	    n, sum / n, minr);
	ok(below_half == 0, "the greedy reaches half of the optimum in every "
	    "slot (worst %.4f; a regression guard, not a theorem)", minr);
}

/* Whole runs: no GPU twice in a slot, max_gpus, every job ends with all
 * its iterations. */
static void
test_runs(struct sched *s)
{
	struct sched_params sp = { .slot_s = 300, .restart_s = 30,
	    .objective = SCHED_JCT, .seed = 7 };

	for (int pol = 0; pol < sched_npolicy(); pol++) {
		struct sched_result r;
		struct dl_err e;
		int twice = 0, over = 0, sums = 1;
		double *done = xcalloc(s->njobs, sizeof(double));

		if (sched_run(s, pol, &sp, &r, &e) != DL_OK) {
			ok(0, "%s runs: %s", sched_policy_name(pol), e.msg);
			free(done);
			continue;
		}
		for (size_t i = 0; i < r.nslots; i++) {
			int used[3][8] = { { 0 } };

			for (size_t k = 0; k < r.slots[i].n; k++) {
				const struct sched_entry *en = &r.slots[i].e[k];

				over |= en->ngpus > s->jobs[en->job].max_gpus;
				for (int q = 0; q < en->ngpus; q++)
					twice |= used[en->node[q]][en->gpu[q]]++;
				done[en->job] += en->iters *
				    (double)r.slots[i].repeat;
			}
		}
		for (size_t j = 0; j < s->njobs; j++)
			sums &= fabs(done[j] - s->jobs[j].iterations) <
			    1e-9 * s->jobs[j].iterations && r.jobs[j].finish_s > 0;
		ok(!twice && !over && sums && r.sum.unfinished == 0,
		    "%s: no GPU twice, max_gpus kept, iterations add up",
		    sched_policy_name(pol));
		free(done);
		sched_result_free(&r);
	}
}

static void
test_errors(struct fixture *f)
{
	static const char *const bad[][2] = {
		{ "a,-1,model.csv,64,2,10\n", "2" },
		{ "a,0,nosuch,64,2,10\n", "2" },
		{ "a,0,model.csv,64,3,10\n", "2" },
		{ "a,0,model.csv,64,2,10,9\n", "3" },
		{ "a,0,model.csv,4,2,10,3\n", "3" },
		{ "a,0,model.csv,64,2,10\na,1,model.csv,64,2,10\n", "2" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct dl_cluster c;
		struct sched s;
		char text[512];

		snprintf(text, sizeof(text), "job,arrival_s,model,global_batch,"
		    "micro_batch,iterations,min_gpus\n%s", bad[i][0]);
		ok(load(f, &c, &s, text) == bad[i][1][0] - '0',
		    "bad jobs.csv %zu gives exit status %s", i, bad[i][1]);
	}
}

/*
 * Three alike servers of 2 GPUs of 40 GB (36 GB usable), and a model of
 * two layers of 1,500 M parameters: 1.5e9 x (2 + 2 + 12) bytes = 24 GB of
 * state per layer, so both layers (48 GB) fit on no GPU while one layer
 * fits on one: a pipeline of two GPUs (or TP 2) is the least plan.
 */
static const char mp_nodes_csv[] =
    "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"
    "n0,s,2,X,100,40,500,100\n"
    "n1,s,2,X,100,40,500,100\n"
    "n2,s,2,X,100,40,500,100\n";
static const char mp_model_csv[] =
    "layer,fwd_gflop,params_m,act_mb,mem_mb\n"
    "l0,40,1500,1,50\n"
    "l1,40,1500,1,50\n";

static void
test_mp(struct fixture *f)
{
	struct dl_cluster c;
	struct sched s;
	int one[3] = { 1, 0, 0 }, a[3] = { 2, 0, 0 }, b[3] = { 0, 2, 0 };
	double worst = 0, ta, tb;
	long before;
	int agree = 1;

	fx_file(f, "nodes.csv", mp_nodes_csv);
	fx_file(f, "big.csv", mp_model_csv);
	if (load(f, &c, &s, "job,arrival_s,model,global_batch,micro_batch,"
	    "iterations,min_gpus,max_gpus\nbig,0,big.csv,8,1,100,1,6\n") !=
	    0) {
		ok(0, "model-parallel fixture loads");
		return;
	}
	ok(s.classes[0].mp && s.jobs[0].why == NULL && s.jobs[0].min_gpus ==
	    2, "a job no GPU holds needs 2 GPUs (by hand), got %d",
	    s.jobs[0].min_gpus);
	ok(!isfinite(sched_iter_time(&s, 0, one)), "no plan fits on 1 GPU");
	ta = sched_iter_time(&s, 0, a);
	before = s.searches;
	tb = sched_iter_time(&s, 0, b);
	ok(isfinite(ta) && ta == tb && s.searches == before, "two GPUs of "
	    "another alike server reuse the plan at the same T (%g, %g s)",
	    ta, tb);
	for (int t = 0; t < 40; t++) {
		int cnt[3], node[6], gpu[6], n = 0;
		struct dl_plan p;
		struct dl_err e;
		double fast;
		int rc;

		for (int v = 0; v < 3; v++) {
			int skip = fx_int(f, 0, 1);

			cnt[v] = fx_int(f, 0, 2);
			for (int g = 0; g < cnt[v]; g++) {
				node[n] = v;
				/* One GPU: sometimes the second. */
				gpu[n++] = cnt[v] == 1 ? skip : g;
			}
		}
		if (n == 0)
			continue;
		fast = sched_iter_time(&s, 0, cnt);
		rc = sched_job_plan(&s, 0, (size_t)n, node, gpu, &p, &e);
		agree &= (rc == DL_OK) == (isfinite(fast) != 0);
		if (rc == DL_OK && fabs(fast - p.est.iteration_s) /
		    p.est.iteration_s > worst)
			worst = fabs(fast - p.est.iteration_s) /
			    p.est.iteration_s;
		if (rc == DL_OK)
			for (int g = 0; g < p.ngroups; g++)
				for (int j = 0; j < p.groups[g].nstages; j++) {
					const struct dl_stage *st =
					    &p.groups[g].stages[j];

					for (int i = 0; i < st->ngpus; i++) {
						int held = 0;

						for (int k = 0; k < n; k++)
							held |= node[k] ==
							    st->node && gpu[k]
							    == st->gpus[i];
						agree &= held;
					}
				}
		plan_free(&p);
	}
	ok(agree && worst < 1e-12, "model-parallel T equals cost_eval of "
	    "its plan on the GPUs given, which it holds (worst relative "
	    "difference %.3g)", worst);
	sched_free(&s);
	cluster_free(&c);
	fx_rm(f, "big.csv");
	fx_file(f, "nodes.csv", nodes_csv);
}

/*
 * The table of policies: every row has a name and a decision, the
 * option's words are the names in table order, and the numbers out of
 * range have none.
 */
static void
test_table(void)
{
	char words[256] = "";
	int whole = 1;

	for (int i = 0; i < sched_npolicy(); i++) {
		const struct sched_policy *p = sched_policy(i);

		whole &= p != NULL && p->name != NULL && p->decide != NULL &&
		    strcmp(p->name, sched_policy_name(i)) == 0;
		if (i > 0)
			strncat(words, "|", sizeof(words) - strlen(words) - 1);
		if (p != NULL)
			strncat(words, p->name, sizeof(words) - strlen(words) -
			    1);
	}
	ok(whole, "every policy row has a name and a decision");
	is_str(words, sched_policy_words, "the --policy words are the "
	    "table's names in its order");
	ok(sched_npolicy() >= 1 && strcmp(sched_policy_name(0), "gadget") == 0,
	    "policy 0, the default, is gadget");
	ok(sched_policy(-1) == NULL && sched_policy(sched_npolicy()) == NULL &&
	    strcmp(sched_policy_name(sched_npolicy()), "?") == 0,
	    "no policy out of the table's range");
}

int
main(void)
{
	struct fixture f;
	struct dl_cluster c;
	struct sched s;

	test_table();
	fx_begin(&f);
	fx_file(&f, "nodes.csv", nodes_csv);
	fx_file(&f, "model.csv", model_csv);
	if (load(&f, &c, &s, jobs_csv) != 0) {
		ok(0, "fixture loads");
		return done_testing();
	}
	test_iter_time(&f, &s);
	test_brute(&f, &s);
	test_runs(&s);
	sched_free(&s);
	cluster_free(&c);
	test_errors(&f);
	test_mp(&f);
	fx_rm(&f, "jobs.csv");
	fx_end(&f);
	return done_testing();
}
