/*
 * test_plan.c - plan JSON and CSV: round trips, relative input paths,
 * digests, rank numbering and structure checks.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "fixture.h"
#include "tap.h"
#include "util_io.h"

static const char nodes[] =
    "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\n"
    "a,s,4,A,100,80,800,100,0.5\nb,s,2,B,50,40,400,50,0.3\n";
static const char model[] =
    "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n"
    "l0,1,10,1,2,5\nl1,1.1,20,2,2,5\nl2,0.7,30,2,2,5\nl3,1,40,2,2,5\n";

struct env {
	struct fixture f;
	struct dl_cluster c;
	struct dl_model m;
	struct dl_router *r;
	struct dl_costctx x;
};

static void
stage(struct dl_stage *st, int node, int k, const int *gpus,
    const double *share, int first, int last)
{
	memset(st, 0, sizeof(*st));
	st->node = node;
	st->ngpus = k;
	for (int d = 0; d < k; d++) {
		st->gpus[d] = gpus[d];
		st->tp_share[d] = share ? share[d] : 1.0 / k;
	}
	st->first = first;
	st->last = last;
}

/*
 * Group 0 (3 micro-batches): a:{1,0} with shares 0.25/0.75 on layers
 * 0-1, then b:0 on layers 2-3.  Group 1 (1 micro-batch): a:{2,3} on all
 * layers.  Micro-batch 2, global batch 8.
 */
static void
make_plan(struct dl_plan *p)
{
	static const int g0[] = { 1, 0 }, g1[] = { 0 }, g2[] = { 2, 3 };
	static const double sh[] = { 0.25, 0.75 };

	plan_init(p);
	p->opts.global_batch = 8;
	p->opts.micro_batch = 2;
	p->opts.mfu = 0.35;
	p->ngroups = 2;
	p->groups = xcalloc(2, sizeof(*p->groups));
	p->groups[0].micro_batches = 3;
	p->groups[0].nstages = 2;
	p->groups[0].stages = xcalloc(2, sizeof(struct dl_stage));
	stage(&p->groups[0].stages[0], 0, 2, g0, sh, 0, 1);
	stage(&p->groups[0].stages[1], 1, 1, g1, NULL, 2, 3);
	p->groups[1].micro_batches = 1;
	p->groups[1].nstages = 1;
	p->groups[1].stages = xcalloc(1, sizeof(struct dl_stage));
	stage(&p->groups[1].stages[0], 0, 2, g2, NULL, 0, 3);
	p->nnodes = 2;
	p->uhat = xcalloc(2, sizeof(double));
	p->uhat[0] = 0.1;
	p->uhat[1] = 1.0 / 3;
	p->status = PLAN_OPTIMAL;
	p->gap = 0.125;
	p->bound_s = 0.001;
	p->solve_s = 1.5;
	p->strategy = STRAT_HYBRID;
}

static int
env_load(struct env *v)
{
	struct dl_route_opts ro = { 3, 1, 0 };
	struct dl_err e = { 0 };

	fx_begin(&v->f);
	fx_file(&v->f, "nodes.csv", nodes);
	fx_file(&v->f, "model.csv", model);
	if (fx_load(&v->f, &v->c, &v->m) != 0)
		return -1;
	return router_new(&v->r, &v->c, &ro, &e) == DL_OK ? 0 : -1;
}

static void
env_free(struct env *v)
{
	char out[600];

	fx_rm(&v->f, "out/plan.json");
	fx_rm(&v->f, "out/again.json");
	fx_rm(&v->f, "plan.csv");
	snprintf(out, sizeof(out), "%s/out", v->f.dir);
	rmdir(out);
	router_free(v->r);
	model_free(&v->m);
	cluster_free(&v->c);
	fx_end(&v->f);
}

static char *
slurp(const char *path)
{
	struct dl_err e = { 0 };
	char *d = NULL;
	size_t n;

	if (read_file(path, &d, &n, &e) != DL_OK)
		return NULL;
	return d;
}

/* Load the fixture's model.csv again into v->m, as it is now. */
static void
reload_model(struct env *v, struct dl_err *e)
{
	char mp[600];
	struct dl_model m2;

	snprintf(mp, sizeof(mp), "%s/model.csv", v->f.dir);
	if (model_load(&m2, mp, e) == DL_OK) {
		model_free(&v->m);
		v->m = m2;
	}
}

static void
round_trip(struct env *v)
{
	struct dl_plan p, q;
	struct dl_err e = { 0 };
	char sub[600], path[700], path2[700], *a, *b;
	json_t *root, *x;
	json_error_t je;

	make_plan(&p);
	is_int(plan_validate(&p, &v->c, &v->m, "t", &e), DL_OK,
	    "rt: the plan is valid");
	is_int(cost_init(&v->x, &v->c, &v->m, &p.opts, p.uhat, v->r, &e),
	    DL_OK, "rt: cost_init");
	is_int(cost_eval(&v->x, &p, &e), DL_OK, "rt: evaluates");
	is_int(plan_set_inputs(&p, &v->c, &v->m, &e), DL_OK,
	    "rt: input digests");
	snprintf(sub, sizeof(sub), "%s/out", v->f.dir);
	mkdir(sub, 0777);
	snprintf(path, sizeof(path), "%s/plan.json", sub);
	is_int(plan_write_json(&p, &v->c, &v->m, path, &e), DL_OK,
	    "rt: write");

	/* Paths relative to the plan's directory; stable keys present. */
	root = json_load_file(path, 0, &je);
	ok(root != NULL, "rt: the file is JSON");
	x = json_object_get(json_array_get(json_object_get(root, "inputs"), 0),
	    "path");
	is_str(json_string_value(x), "../nodes.csv",
	    "rt: input path relative to the plan");
	x = json_object_get(root, "estimate");
	ok(json_is_real(json_object_get(x, "iteration_s")) &&
	    json_is_real(json_object_get(x, "lower_bound_s")) &&
	    json_is_real(json_object_get(x, "efficiency")),
	    "rt: estimate.iteration_s, lower_bound_s, efficiency");
	x = json_array_get(json_object_get(root, "routes"), 0);
	ok(json_is_string(json_object_get(x, "src")) &&
	    json_is_string(json_object_get(x, "dst")) &&
	    json_is_number(json_object_get(x, "bytes")) &&
	    json_is_number(json_object_get(x, "expected_s")) &&
	    json_is_array(json_object_get(x, "path")),
	    "rt: routes[].src, dst, bytes, expected_s, path");
	is_str(json_string_value(json_object_get(json_object_get(root,
	    "solver"), "status")), "optimal", "rt: solver status");
	json_decref(root);

	/* Read back: the same plan, bit for bit. */
	is_int(plan_read_json(&q, path, &v->c, &v->m, 1, &e), DL_OK,
	    "rt: read back with digests checked");
	ok(q.ngroups == 2 && q.groups[0].nstages == 2 &&
	    q.groups[0].micro_batches == 3 && q.groups[1].micro_batches == 1,
	    "rt: groups and micro-batches");
	ok(q.groups[0].stages[0].gpus[0] == 1 &&
	    q.groups[0].stages[0].gpus[1] == 0 &&
	    q.groups[0].stages[0].tp_share[0] == 0.25 &&
	    q.groups[0].stages[0].tp_share[1] == 0.75,
	    "rt: GPU order and shares");
	ok(q.uhat && q.uhat[1] == 1.0 / 3 && q.uhat[0] == 0.1,
	    "rt: forecasts round-trip exactly");
	ok(q.opts.mfu == 0.35 && q.opts.global_batch == 8 &&
	    q.opts.micro_batch == 2, "rt: options");
	ok(q.est.iteration_s == p.est.iteration_s &&
	    q.est.efficiency == p.est.efficiency, "rt: estimate exactly");
	ok(q.status == PLAN_OPTIMAL && q.gap == 0.125 &&
	    q.solve_s == 1.5 && q.strategy == STRAT_HYBRID,
	    "rt: solver status");
	{
		char want[700];

		snprintf(want, sizeof(want), "%s/../model.csv", sub);
		is_str(plan_input_path(&q, "model"), want,
		    "rt: input path read relative to the plan's directory");
	}
	cost_free(&v->x);

	/* Evaluated again and written elsewhere: the same bytes. */
	cost_init(&v->x, &v->c, &v->m, &q.opts, q.uhat, v->r, &e);
	is_int(cost_eval(&v->x, &q, &e), DL_OK, "rt: the copy evaluates");
	ok(q.est.iteration_s == p.est.iteration_s, "rt: same T");
	snprintf(path2, sizeof(path2), "%s/again.json", sub);
	plan_write_json(&q, &v->c, &v->m, path2, &e);
	a = slurp(path);
	b = slurp(path2);
	ok(a && b && strcmp(a, b) == 0, "rt: written twice, same bytes");
	free(a);
	free(b);
	cost_free(&v->x);

	/*
	 * A changed model is refused: the digest compared is that of the
	 * bytes the model was parsed from, so it is loaded again.
	 */
	fx_file(&v->f, "model.csv", model);
	{
		FILE *fp;
		char mp[600];

		snprintf(mp, sizeof(mp), "%s/model.csv", v->f.dir);
		fp = fopen(mp, "a");
		fputs("# changed\n", fp);
		fclose(fp);
		plan_free(&q);
		is_int(plan_read_json(&q, path, &v->c, &v->m, 1, &e), DL_OK,
		    "rt: the model parsed is the one the plan was made for");
		plan_free(&q);
		reload_model(v, &e);
	}
	is_int(plan_read_json(&q, path, &v->c, &v->m, 1, &e), DL_EDATA,
	    "rt: changed model refused");
	is_str(e.msg, "plan was made for a different model.csv (115 bytes, "
	    "the plan records 105); re-run dlplan plan", "rt: size message");
	ok(q.groups == NULL && q.generator == NULL, "rt: failure leaves the "
	    "plan empty");
	is_int(plan_read_json(&q, path, &v->c, &v->m, 0, &e), DL_OK,
	    "rt: without the check it reads");
	plan_free(&q);
	/* As many bytes as before, one of them changed: the digest says. */
	{
		char *same = xstrdup(model);

		memcpy(strstr(same, "l3,1,40"), "l3,1,50", 7);
		fx_file(&v->f, "model.csv", same);
		free(same);
		reload_model(v, &e);
	}
	is_int(plan_read_json(&q, path, &v->c, &v->m, 1, &e), DL_EDATA,
	    "rt: changed model of the same size refused");
	is_str(e.msg, "plan was made for a different model.csv (digest "
	    "mismatch); re-run dlplan plan", "rt: digest message");
	fx_file(&v->f, "model.csv", model);
	plan_free(&p);
}

#define CSV_HEAD "rank,node,local_gpu,group,stage,first_layer,last_layer," \
	"micro_batches,tp_share"

static void
ranks_and_csv(struct env *v)
{
	struct dl_plan p;
	struct dl_rank *r;
	struct dl_err e = { 0 };
	char path[600], *csv;

	make_plan(&p);
	is_int(plan_ranks(&p), 5, "ranks: five GPUs");
	r = plan_rank_table(&p);
	ok(r[0].node == 0 && r[0].gpu == 1 && r[1].gpu == 0 &&
	    r[2].node == 1 && r[2].stage == 1 && r[3].group == 1 &&
	    r[4].gpu == 3 && r[4].tp_rank == 1,
	    "ranks: groups, stages, then gpus[] order");
	free(r);
	snprintf(path, sizeof(path), "%s/plan.csv", v->f.dir);
	is_int(plan_write_csv(&p, &v->c, path, &e), DL_OK, "csv: written");
	csv = slurp(path);
	ok(csv && strncmp(csv, CSV_HEAD, strlen(CSV_HEAD)) == 0,
	    "csv: the header of dlplan-formats(5)");
	ok(csv && strstr(csv, "\n0,a,1,0,0,0,1,3,0.25,2,0,a,s\n") &&
	    strstr(csv, "\n2,b,0,0,1,2,3,3,1,1,0,b,s\n"), "csv: rows");
	free(csv);
	plan_free(&p);
}

static void
validation(struct env *v)
{
	struct dl_plan p;
	struct dl_err e = { 0 };

	make_plan(&p);
	p.groups[1].micro_batches = 2;
	is_int(plan_validate(&p, &v->c, &v->m, "f.json", &e), DL_EDATA,
	    "validate: batch mismatch");
	is_str(e.msg, "groups: micro-batches sum to 5, times micro-batch 2 is "
	    "10 samples, but options.global_batch is 8",
	    "validate: batch message");
	is_str(e.file, "f.json", "validate: names the file");
	p.groups[1].micro_batches = 1;
	p.groups[0].stages[1].gpus[0] = 2;
	is_int(plan_validate(&p, &v->c, &v->m, "f.json", &e), DL_EDATA,
	    "validate: missing GPU");
	is_str(e.msg, "groups[0].stages[1].gpus[0]: GPU 2 does not exist on "
	    "node 'b' (it has 2: 0 to 1)", "validate: missing GPU message");
	p.groups[0].stages[1].gpus[0] = 0;
	p.groups[0].stages[0].tp_share[1] = 0.7500000001;
	is_int(plan_validate(&p, &v->c, &v->m, "f.json", &e), DL_OK,
	    "validate: shares within 1e-9 of 1");
	p.groups[0].stages[0].tp_share[1] = 0.76;
	is_int(plan_validate(&p, &v->c, &v->m, "f.json", &e), DL_EDATA,
	    "validate: shares off by 0.01");
	plan_free(&p);
}

int
main(void)
{
	struct env v;

	if (env_load(&v) != 0) {
		ok(0, "setup");
		return done_testing();
	}
	round_trip(&v);
	ranks_and_csv(&v);
	validation(&v);
	env_free(&v);
	return done_testing();
}
