/*
 * test_search.c - the plan search against a brute-force oracle.
 *
 * The oracle enumerates the whole plan space of src/DESIGN-NOTES in
 * its own way (every subset of units, every permutation of the subset,
 * every cut of the permutation into consecutive pipelines, every split of
 * the micro-batches with each group >= 1, every layer boundary) and
 * scores each plan with the cost model.  On random tiny instances (<= 6
 * GPUs, <= 8 layers, <= 8 micro-batches, memory binding in some) the
 * search must find the oracle's optimum within 0.1% and never beat it.
 */
#include <math.h>

#include "cost.h"
#include "fixture.h"
#include "forecast.h"
#include "route.h"
#include "sb.h"
#include "search_bound_int.h"
#include "search_int.h"
#include "tap.h"

struct ounit {
	int node, k, gpu0;
};

struct oracle {
	const struct dl_costctx *x;
	struct ounit u[16];
	int n;
	int L;
	long M;
	double best;
	double cbest[BOUND_NCLASS];	/* the best plan of each class */
	double gbest[17];		/* the best plan of G groups */
	long evals;
	/* cost_sync_bound() against the T_sync of every plan scored */
	struct dl_sitebound sb;
	long bounded, over;
	/*
	 * search_group_floor() against every group's T_g (floor_close: the
	 * floor times m_g is at least half of T_g, so that the test has
	 * teeth), and search_shape_bound() and its cut against the best plan
	 * of every structure (cut_above: the cut is the sharper).
	 */
	struct ctx *C;
	long floor_n, floor_over, floor_close;
	long shape_n, shape_over, cut_above;
	double smin;		/* the best plan of the current structure */
	/* current structure */
	int G, len[16], seq[16];	/* groups as consecutive runs of seq */
	long m[16];
	int last[16][16];
};

/* The class of search_bound_classes() that plan p falls in. */
static int
plan_class(const struct dl_cluster *c, const struct dl_plan *p)
{
	int all = -1, one = 1, span = 0, in = 0, insite = -2;

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		int site = c->nodes[gr->stages[0].node].site_idx;

		for (int j = 0; j < gr->nstages; j++) {
			int sj = c->nodes[gr->stages[j].node].site_idx;

			if (all == -1)
				all = sj;
			one &= sj == all;
			if (sj != site)
				site = -1;
		}
		if (site < 0) {
			span++;
			continue;
		}
		in++;
		/* The site of the groups inside one, -1 when several. */
		insite = insite == -2 || insite == site ? site : -1;
	}
	if (one)
		return BOUND_ONE_SITE;
	if (span == 0)
		return BOUND_IN_SITES;
	if (in == 0)
		return BOUND_SPAN;
	return insite >= 0 ? BOUND_MIXED_ONE : BOUND_MIXED_MANY;
}

static void o_split(struct oracle *, int, long);

/*
 * The search's shape of groups g0 .. g0 + G - 1 of the current structure
 * (their units in u[], pointers in up[]).
 */
static void
o_shape(const struct oracle *O, int g0, int G, struct unit *u,
    const struct unit **up, int *S, int *off, struct shape *sh)
{
	int pos = 0, n = 0;

	for (int g = 0; g < g0; g++)
		pos += O->len[g];
	for (int g = 0; g < G; g++) {
		S[g] = O->len[g0 + g];
		off[g] = n;
		for (int j = 0; j < S[g]; j++, n++) {
			const struct ounit *o = &O->u[O->seq[pos++]];

			u[n] = (struct unit){ o->node, o->k, o->gpu0, o->k *
			    O->x->speed[o->node] };
			up[n] = &u[n];
		}
	}
	sh->G = G;
	sh->S = S;
	sh->off = off;
	sh->u = up;
}

/* The group floors of the plan p just priced, against its T_g. */
static void
o_floors(struct oracle *O, const struct dl_plan *p)
{
	for (int g = 0; g < O->G; g++) {
		struct unit u[16];
		const struct unit *up[16];
		int S, off;
		struct shape sh;
		double b, t = p->groups[g].time_s;

		o_shape(O, g, 1, u, up, &S, &off, &sh);
		b = (double)O->m[g] * search_group_floor(O->C, &sh, 0);
		O->floor_n++;
		if (b > t * (1 + 1e-12)) {
			O->floor_over++;
			printf("# group floor %.17g x %ld above T_g %.17g\n",
			    b / (double)O->m[g], O->m[g], t);
		}
		if (b >= 0.5 * t)
			O->floor_close++;
	}
}

static void
o_score(struct oracle *O)
{
	struct dl_plan p;
	struct dl_err e = { 0 };
	int pos = 0, cls;

	plan_init(&p);
	p.opts = *O->x->o;
	p.nnodes = O->x->c->nnodes;
	p.uhat = xcalloc(p.nnodes, sizeof(double));
	memcpy(p.uhat, O->x->uhat, p.nnodes * sizeof(double));
	p.ngroups = O->G;
	p.groups = xcalloc((size_t)O->G, sizeof(struct dl_group));
	for (int g = 0; g < O->G; g++) {
		struct dl_group *gr = &p.groups[g];

		gr->micro_batches = O->m[g];
		gr->nstages = O->len[g];
		gr->stages = xcalloc((size_t)O->len[g], sizeof(struct dl_stage));
		for (int j = 0; j < O->len[g]; j++) {
			const struct ounit *u = &O->u[O->seq[pos++]];
			struct dl_stage *s = &gr->stages[j];

			s->node = u->node;
			s->ngpus = u->k;
			for (int i = 0; i < u->k; i++) {
				s->gpus[i] = u->gpu0 + i;
				s->tp_share[i] = 1.0 / u->k;
			}
			s->first = j == 0 ? 0 : O->last[g][j - 1] + 1;
			s->last = O->last[g][j];
		}
	}
	O->evals++;
	if (cost_eval(O->x, &p, &e) == DL_OK) {
		double lb = cost_sync_bound(O->x, &O->sb, &p);

		O->bounded += lb > 0;
		if (lb > p.est.sync_s)
			O->over++;
		if (p.est.iteration_s < O->best)
			O->best = p.est.iteration_s;
		cls = plan_class(O->x->c, &p);
		if (p.est.iteration_s < O->cbest[cls])
			O->cbest[cls] = p.est.iteration_s;
		if (p.est.iteration_s < O->gbest[O->G])
			O->gbest[O->G] = p.est.iteration_s;
		if (p.est.iteration_s < O->smin)
			O->smin = p.est.iteration_s;
		o_floors(O, &p);
	}
	plan_free(&p);
}

/* The current structure's bounds against its best plan. */
static void
o_structure(struct oracle *O)
{
	struct unit u[16];
	const struct unit *up[16];
	int S[16], off[16];
	struct shape sh;
	double lb, cut;

	o_shape(O, 0, O->G, u, up, S, off, &sh);
	lb = search_shape_bound(O->C, &sh, &cut);
	O->smin = HUGE_VAL;
	o_split(O, 0, O->M);
	if (O->smin == HUGE_VAL)
		return;
	O->shape_n++;
	if (lb > O->smin * (1 + 1e-12) || cut > O->smin * (1 + 1e-12) ||
	    cut < lb) {
		O->shape_over++;
		printf("# structure of %d groups: bound %.17g, cut %.17g, "
		    "best plan %.17g\n", O->G, lb, cut, O->smin);
	}
	if (cut > lb * (1 + 1e-9))
		O->cut_above++;
}

/* Every boundary choice of group g onwards. */
static void
o_cuts(struct oracle *O, int g)
{
	int S;

	if (g == O->G) {
		o_score(O);
		return;
	}
	S = O->len[g];
	if (S > O->L)
		return;
	/* Choose S-1 cut points among L-1 gaps by bitmask. */
	for (unsigned mask = 0; mask < 1u << (O->L - 1); mask++) {
		int cnt = 0, j = 0;

		for (int b = 0; b < O->L - 1; b++)
			cnt += (mask >> b) & 1;
		if (cnt != S - 1)
			continue;
		for (int b = 0; b < O->L - 1; b++)
			if ((mask >> b) & 1)
				O->last[g][j++] = b;
		O->last[g][S - 1] = O->L - 1;
		o_cuts(O, g + 1);
	}
}

static void
o_split(struct oracle *O, int g, long left)
{
	if (g == O->G - 1) {
		O->m[g] = left;
		o_cuts(O, 0);
		return;
	}
	for (long v = 1; v <= left - (O->G - 1 - g); v++) {
		O->m[g] = v;
		o_split(O, g + 1, left - v);
	}
}

/* Permutations of seq[i..k-1], then every cut into groups. */
static void
o_perm(struct oracle *O, int i, int k)
{
	if (i == k) {
		/* Cuts: bit b set = a group ends after position b. */
		for (unsigned mask = 0; mask < 1u << (k - 1); mask++) {
			int start = 0;

			O->G = 0;
			for (int b = 0; b < k; b++)
				if (b == k - 1 || ((mask >> b) & 1)) {
					O->len[O->G++] = b - start + 1;
					start = b + 1;
				}
			if (O->G <= O->M)
				o_structure(O);
		}
		return;
	}
	for (int j = i; j < k; j++) {
		int t = O->seq[i];

		O->seq[i] = O->seq[j];
		O->seq[j] = t;
		o_perm(O, i + 1, k);
		t = O->seq[i];
		O->seq[i] = O->seq[j];
		O->seq[j] = t;
	}
}

/* Every non-empty subset of units. */
static void
o_subsets(struct oracle *O)
{
	for (unsigned s = 1; s < 1u << O->n; s++) {
		int k = 0;

		for (int i = 0; i < O->n; i++)
			if ((s >> i) & 1)
				O->seq[k++] = i;
		o_perm(O, 0, k);
	}
}

/* Every way to cut each node's GPUs into units of 1, 2, 4 GPUs. */
static void
o_units(struct oracle *O, size_t node)
{
	const struct dl_cluster *c = O->x->c;

	if (node == c->nnodes) {
		if (O->n > 0)
			o_subsets(O);
		return;
	}
	for (int c4 = 0; 4 * c4 <= c->nodes[node].gpus; c4++)
		for (int c2 = 0; 4 * c4 + 2 * c2 <= c->nodes[node].gpus; c2++)
			for (int c1 = 0; 4 * c4 + 2 * c2 + c1 <=
			    c->nodes[node].gpus; c1++) {
				int n0 = O->n, gpu = 0;

				for (int i = 0; i < c4; i++, gpu += 4)
					O->u[O->n++] = (struct ounit){
					    (int)node, 4, gpu };
				for (int i = 0; i < c2; i++, gpu += 2)
					O->u[O->n++] = (struct ounit){
					    (int)node, 2, gpu };
				for (int i = 0; i < c1; i++, gpu += 1)
					O->u[O->n++] = (struct ounit){
					    (int)node, 1, gpu };
				o_units(O, node + 1);
				O->n = n0;
			}
}

/* model.csv: L layers of random costs. */
static void
write_model(struct fixture *f, int L)
{
	struct strbuf sb = STRBUF_INIT;

	sb_adds(&sb, "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n");
	for (int l = 0; l < L; l++)
		sb_addf(&sb, "l%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", l,
		    0.2 + 8 * fx_rand(f), 1 + 20 * fx_rand(f),
		    0.1 + 20 * fx_rand(f), 1 + 40 * fx_rand(f),
		    3 * fx_rand(f));
	fx_file(f, "model.csv", sb.buf);
	sb_free(&sb);
}

static void
make_instance(struct fixture *f, int seed, int *L, long *M, long *mu)
{
	struct strbuf sb = STRBUF_INIT;
	int nodes, gpus_left, two_sites, tight;

	fx_seed(f, (uint64_t)seed);
	/* Bigger spaces get fewer layers and micro-batches. */
	gpus_left = seed % 5 == 0 ? fx_int(f, 5, 6) : fx_int(f, 1, 4);
	nodes = fx_int(f, 1, gpus_left < 3 ? gpus_left : 3);
	two_sites = nodes >= 2 && seed % 3 == 0;
	tight = seed % 4 == 1;
	*L = gpus_left >= 5 ? fx_int(f, 1, 5) : fx_int(f, 1, 8);
	*M = gpus_left >= 5 ? fx_int(f, 1, 4) : fx_int(f, 1, 8);
	*mu = fx_int(f, 1, 3);
	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	for (int i = 0; i < nodes; i++) {
		int g = i == nodes - 1 ? gpus_left : fx_int(f, 1,
		    gpus_left - (nodes - 1 - i));

		if (g > 4)
			g = 4;
		gpus_left -= g;
		sb_addf(&sb, "n%d,%s,%d,G%d,%d,%.2f,%d,%d\n", i,
		    two_sites && i % 2 ? "east" : "west", g, i,
		    fx_int(f, 10, 300), tight ? 0.05 + 0.4 * fx_rand(f) : 40.0,
		    fx_int(f, 50, 2400), fx_int(f, 1, 200));
	}
	fx_file(f, "nodes.csv", sb.buf);
	sb_reset(&sb);
	if (two_sites) {
		sb_adds(&sb, "src,dst,gbps,latency_ms\n");
		for (int i = 0; i < nodes; i++)
			sb_addf(&sb, "n%d,sw-%s,%d,0.01\n", i,
			    i % 2 ? "east" : "west", fx_int(f, 10, 200));
		sb_addf(&sb, "sw-west,sw-east,%d,%.1f\n", fx_int(f, 1, 50),
		    1 + 30 * fx_rand(f));
		fx_file(f, "links.csv", sb.buf);
	} else {
		fx_rm(f, "links.csv");
	}
	sb_free(&sb);
	write_model(f, *L);
}

/* An instance loaded, priced and searched by the brute force. */
struct inst {
	struct dl_cluster c;
	struct dl_model m;
	struct dl_opts o;
	struct dl_costctx x;
	struct dl_router *r;
	struct oracle O;
	/* A search context for the bounds of the oracle's structures. */
	struct search_opts so;
	struct search_stats st;
	struct dl_costctx xl;
	struct dl_plan best;
	struct ctx C;
};

/*
 * Load the instance just written, with micro-batch mu and M of them, into
 * in and run the brute force over it into in->O.
 */
static int
inst_run(struct fixture *f, int L, long M, long mu, struct inst *in)
{
	struct dl_route_opts ro = { 3, 1, 0 };
	struct dl_err e = { 0 };
	struct oracle *O = &in->O;

	if (fx_load(f, &in->c, &in->m) != 0)
		return -1;
	plan_opts_default(&in->o);
	in->o.micro_batch = mu;
	in->o.global_batch = M * mu;
	in->r = NULL;
	router_new(&in->r, &in->c, &ro, &e);
	cost_init(&in->x, &in->c, &in->m, &in->o, NULL, in->r, &e);
	memset(O, 0, sizeof(*O));
	in->so = (struct search_opts){ STRAT_AUTO, 1, NULL, 30, 1,
	    RUNTIME_DLPLAN, NULL, NULL };
	plan_init(&in->best);
	search_ctx_open(&in->C, &in->xl, &in->x, &in->so, &in->st,
	    &in->best);
	O->C = &in->C;
	O->x = &in->x;
	O->L = L;
	O->M = M;
	O->best = HUGE_VAL;
	for (int i = 0; i < BOUND_NCLASS; i++)
		O->cbest[i] = HUGE_VAL;
	for (int i = 0; i <= 16; i++)
		O->gbest[i] = HUGE_VAL;
	o_units(O, 0);
	cost_sitebound_free(&O->sb);
	return 0;
}

static void
inst_free(struct inst *in)
{
	search_ctx_free(&in->C);
	plan_free(&in->best);
	cost_free(&in->x);
	router_free(in->r);
	model_free(&in->m);
	cluster_free(&in->c);
}

/*
 * Three sites, one node each (seeds of the second oracle): what the site
 * classes of search_bound() must cover.  The links join each node to its
 * site's switch and the switches in a line, a triangle or a star.
 */
static void
make_instance3(struct fixture *f, int seed, int *L, long *M, long *mu)
{
	struct strbuf sb = STRBUF_INIT;
	static const char *site[] = { "a", "b", "c" };
	int gpus[3], total = 0;

	fx_seed(f, (uint64_t)seed + 1000);
	for (int i = 0; i < 3; i++) {
		gpus[i] = fx_int(f, 1, 2);
		total += gpus[i];
	}
	*L = total >= 5 ? fx_int(f, 1, 4) : fx_int(f, 1, 6);
	*M = total >= 5 ? fx_int(f, 1, 4) : fx_int(f, 1, 6);
	*mu = fx_int(f, 1, 2);
	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	for (int i = 0; i < 3; i++)
		sb_addf(&sb, "n%d,%s,%d,G%d,%d,%.2f,%d,%d\n", i, site[i],
		    gpus[i], i, fx_int(f, 10, 300), seed % 2 ? 40.0 : 0.05 +
		    0.4 * fx_rand(f), fx_int(f, 50, 2400), fx_int(f, 1, 200));
	fx_file(f, "nodes.csv", sb.buf);
	sb_reset(&sb);
	sb_adds(&sb, "src,dst,gbps,latency_ms\n");
	for (int i = 0; i < 3; i++)
		sb_addf(&sb, "n%d,sw-%s,%d,0.01\n", i, site[i],
		    fx_int(f, 10, 200));
	/* Every other instance has fast links between sites, so that its
	 * best plan may well span them. */
	for (int i = 0; i < 3; i++) {
		static const char *pair[] = { "sw-a,sw-b", "sw-b,sw-c",
		    "sw-a,sw-c" };

		if ((i == 1 && seed % 3 == 0) || (i == 2 && seed % 3 == 1))
			continue;
		if (seed % 4 < 2)
			sb_addf(&sb, "%s,%d,%.3f\n", pair[i],
			    fx_int(f, 100, 800), 0.001 + 0.1 * fx_rand(f));
		else
			sb_addf(&sb, "%s,%d,%.1f\n", pair[i],
			    fx_int(f, 1, 50), 0.5 + 30 * fx_rand(f));
	}
	fx_file(f, "links.csv", sb.buf);
	/*
	 * Every fifth has a traffic history on the links between sites, so
	 * three congestion regimes: where a flow's price is no longer the
	 * cost of the path it loads.
	 */
	sb_reset(&sb);
	if (seed % 5 == 0) {
		static const char *dir[] = { "sw-a,sw-b", "sw-b,sw-a",
		    "sw-b,sw-c", "sw-c,sw-b", "sw-a,sw-c", "sw-c,sw-a" };

		sb_adds(&sb, "t,src,dst,util\n");
		for (int t = 0; t < 12; t++)
			for (int i = 0; i < 6; i++)
				if (!((i / 2 == 1 && seed % 3 == 0) ||
				    (i / 2 == 2 && seed % 3 == 1)))
					sb_addf(&sb, "%d,%s,%.3f\n", t, dir[i],
					    0.9 * fx_rand(f));
		fx_file(f, "traffic.csv", sb.buf);
	} else
		fx_rm(f, "traffic.csv");
	sb_free(&sb);
	write_model(f, *L);
}

/*
 * search_bound() against the brute-force optimum on three-site
 * instances; returns how many were above it, *n how many had a plan and
 * *sum the sum of bound / optimum.
 */
static int
bound_three_sites(struct fixture *f, int *n, double *sum, int *nclass)
{
	int over = 0;

	*n = 0;
	*sum = 0;
	for (int seed = 1; seed <= 60; seed++) {
		struct search_opts so = { STRAT_AUTO, 1, NULL, 30, 1,
		    RUNTIME_DLPLAN, NULL, NULL };
		struct inst in;
		double cls[BOUND_NCLASS], bd;
		int L;
		long M, mu;

		make_instance3(f, seed, &L, &M, &mu);
		if (inst_run(f, L, M, mu, &in) != 0) {
			over++;
			printf("# three sites, seed %d: does not load\n", seed);
			continue;
		}
		/* Each class's bound holds for that class's best plan. */
		bd = search_bound_classes(&in.x, &so, cls);
		for (int i = 0; i < BOUND_NCLASS; i++) {
			if (in.O.cbest[i] == HUGE_VAL)
				continue;
			nclass[i]++;
			if (cls[i] > in.O.cbest[i] * (1 + 1e-12)) {
				over++;
				printf("# three sites, seed %d: class %d bound "
				    "%.17g above its best plan %.17g\n", seed,
				    i, cls[i], in.O.cbest[i]);
			}
		}
		if (in.O.best < HUGE_VAL) {
			(*n)++;
			*sum += bd / in.O.best;
			if (bd > in.O.best * (1 + 1e-12)) {
				over++;
				printf("# three sites, seed %d: bound %.17g above "
				    "the optimum %.17g\n", seed, bd, in.O.best);
			}
		}
		inst_free(&in);
	}
	fx_rm(f, "traffic.csv");
	return over;
}

/*
 * One site: a node of 2 GPUs on a fast link and one or two of 1 or
 * 2 GPUs behind slow ones, layers of many parameters (seeds of the third
 * oracle): where the sync rings keep nodes out and the linear relaxation
 * of search_bound_lp.c raises the bound.
 */
static void
make_instance_nic(struct fixture *f, int seed, int *L, long *M, long *mu)
{
	struct strbuf sb = STRBUF_INIT;
	double first[5];
	int nodes;

	fx_seed(f, (uint64_t)seed + 5000);
	nodes = fx_int(f, 2, 3);
	*L = fx_int(f, 2, 3);
	*M = fx_int(f, 2, 4);
	*mu = fx_int(f, 1, 2);
	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	sb_addf(&sb, "n0,lab,2,G0,%d,40,%d,%d\n",
	    fx_int(f, 100, 300), fx_int(f, 600, 2400), fx_int(f, 50, 400));
	for (int i = 1; i < nodes; i++)
		sb_addf(&sb, "n%d,lab,%d,G%d,%d,%s,%d,%.2f\n", i, fx_int(f, 1,
		    2), i, fx_int(f, 20, 300), seed % 3 == 0 ? "1.5" : "40",
		    fx_int(f, 50, 1200), 0.2 + 5 * fx_rand(f));
	fx_file(f, "nodes.csv", sb.buf);
	fx_rm(f, "links.csv");
	sb_reset(&sb);
	sb_adds(&sb, "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n");
	for (int l = 0; l < *L; l++) {
		double v[5] = { 0.5 + 20 * fx_rand(f), 20 + 200 * fx_rand(f),
		    0.1 + 5 * fx_rand(f), 1 + 20 * fx_rand(f),
		    2 * fx_rand(f) };
		const double *u = v;

		if (l == 0)
			memcpy(first, v, sizeof(first));
		/* Some models repeat one block, as transformers do. */
		if (seed % 4 == 3 && l > 0 && l < *L - 1)
			u = first;
		sb_addf(&sb, "l%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", l, u[0],
		    l == *L - 1 && seed % 2 ? 0.01 : u[1], u[2], u[3], u[4]);
	}
	fx_file(f, "model.csv", sb.buf);
	sb_free(&sb);
}

/*
 * bound_lp_one() and bound_lp_time() against the brute force's best plan
 * of each G on the third oracle's instances; returns how many were over.
 * *n: the (instance, G) pairs checked; *tight: of them, those the
 * relaxation proves within 10% and above T_lb by 5% or more.
 */
static int
bound_lp_nics(struct fixture *f, int *n, int *tight)
{
	int over = 0;

	*n = *tight = 0;
	for (int seed = 1; seed <= 40; seed++) {
		struct inst in;
		struct bound_lp *B;
		double lb;
		int L;
		long M, mu;

		make_instance_nic(f, seed, &L, &M, &mu);
		if (inst_run(f, L, M, mu, &in) != 0)
			continue;
		B = bound_lp_new(&in.x, NULL);
		lb = cost_lower_bound(&in.x);
		for (long G = 1; G <= M && G <= 16 && B != NULL; G++) {
			double best = in.O.gbest[G], v;

			if (best == HUGE_VAL)
				continue;
			/* T_lb bounds the pipeline time of every plan. */
			v = G == 1 ? bound_lp_one(B, M) : bound_lp_time(B, G, M,
			    lb, 4 * best, HUGE_VAL);
			(*n)++;
			if (v > best * (1 + 1e-9)) {
				over++;
				printf("# nics seed %d G %ld: relaxation %.17g "
				    "above the best %.17g\n", seed, G, v, best);
			}
			if (v >= 0.9 * best && v >= 1.05 * lb)
				(*tight)++;
		}
		bound_lp_free(B);
		inst_free(&in);
	}
	return over;
}

int
main(void)
{
	struct fixture f;
	int n = 0, match = 0, never_better = 1, infeasible = 0, bad = 0;
	long evals = 0, bounded = 0, over = 0;
	long floor_n = 0, floor_over = 0, floor_close = 0;
	long shape_n = 0, shape_over = 0, cut_above = 0;
	int bound_over = 0, bound_above_tlb = 0, bound_n = 0;
	double sum_bd = 0, sum_lb = 0;

	fx_begin(&f);
	for (int seed = 1; seed <= 80; seed++) {
		struct search_opts so = { STRAT_AUTO, 1, NULL, 30, 1, RUNTIME_DLPLAN, NULL, NULL };
		struct search_stats st;
		struct dl_plan p;
		struct dl_err e = { 0 };
		struct inst in;
		struct oracle *O = &in.O;
		struct dl_costctx *x = &in.x;
		int L, rc;
		long M, mu;

		make_instance(&f, seed, &L, &M, &mu);
		if (inst_run(&f, L, M, mu, &in) != 0) {
			bad++;
			continue;
		}
		evals += O->evals;
		bounded += O->bounded;
		over += O->over;
		floor_n += O->floor_n;
		floor_over += O->floor_over;
		floor_close += O->floor_close;
		shape_n += O->shape_n;
		shape_over += O->shape_over;
		cut_above += O->cut_above;
		/* search_bound() holds for every plan, so for the optimum. */
		if (O->best < HUGE_VAL) {
			double bd = search_bound(x, &so);

			bound_n++;
			sum_bd += bd / O->best;
			sum_lb += cost_lower_bound(x) / O->best;
			if (bd > O->best * (1 + 1e-12)) {
				bound_over++;
				printf("# seed %d: bound %.17g above the optimum "
				    "%.17g\n", seed, bd, O->best);
			}
			if (bd > cost_lower_bound(x) * (1 + 1e-9))
				bound_above_tlb++;
		}
		rc = search_plan(x, &so, &p, &st, &e);
		n++;
		if (O->best == HUGE_VAL) {
			infeasible++;
			if (rc != DL_EINFEAS) {
				never_better = 0;
				printf("# seed %d: oracle infeasible, search "
				    "rc %d\n", seed, rc);
			}
		} else if (rc != DL_OK) {
			printf("# seed %d: search failed (%d): %s\n", seed, rc,
			    e.msg);
		} else {
			double t = p.est.iteration_s;

			if (t < O->best * (1 - 1e-9)) {
				never_better = 0;
				printf("# seed %d: search %.17g beats oracle "
				    "%.17g\n", seed, t, O->best);
			}
			if (t <= O->best * 1.001 && p.status == PLAN_OPTIMAL)
				match++;
			else
				printf("# seed %d: search %.17g (%s) oracle "
				    "%.17g\n", seed, t,
				    plan_status_names[p.status], O->best);
		}
		plan_free(&p);
		inst_free(&in);
	}
	{
		int n3, over3, ncl[BOUND_NCLASS] = { 0 }, every = 1;
		double sum3;

		over3 = bound_three_sites(&f, &n3, &sum3, ncl);
		printf("# three sites: search_bound %.3f of the optimum on "
		    "average; instances with a plan of each class:", sum3 /
		    (n3 ? n3 : 1));
		for (int i = 0; i < BOUND_NCLASS; i++) {
			printf(" %d", ncl[i]);
			every &= ncl[i] >= 10;
		}
		printf("\n");
		ok(over3 == 0 && n3 >= 40 && every, "search_bound and each of "
		    "its classes never exceed the optimum over their plans on "
		    "%d three-site instances (%d over)", n3, over3);
	}
	{
		int nn, tight, overn = bound_lp_nics(&f, &nn, &tight);

		/*
		 * 27 of 102 within 10% when written (11 of 62 for G >= 2);
		 * 11 of 102 since the 1F1B makespan: a stage's steady term
		 * is only its backward share (cost.h, bwd_min) for sure.
		 */
		ok(overn == 0 && nn >= 80 && tight >= 9, "the linear "
		    "relaxations never exceed the best plan of their "
		    "G on %d (instance, G) with slow links (%d over, %d "
		    "within 10%%)", nn, overn, tight);
	}
	fx_end(&f);
	ok(bad == 0, "all random instances load");
	ok(match == n - infeasible, "search finds the oracle optimum within "
	    "0.1%% on %d of %d feasible instances (%ld oracle plans)", match,
	    n - infeasible, evals);
	ok(never_better, "search never beats the oracle and reports "
	    "infeasible instances (%d) as such", infeasible);
	ok(n - infeasible >= 50, "at least 50 feasible instances (%d)",
	    n - infeasible);
	ok(over == 0 && bounded > 1000, "the sync lower bound never exceeds "
	    "T_sync (%ld of %ld plans over; %ld with a bound > 0)", over, evals,
	    bounded);
	ok(floor_over == 0 && floor_close >= 1000, "m_g times the "
	    "group floor never exceeds T_g (%ld of %ld groups over) and is "
	    "half of it or more on %ld", floor_over, floor_n, floor_close);
	ok(shape_over == 0 && shape_n > 1000 && cut_above >= shape_n / 20,
	    "a structure's bound and its sharper cut never exceed its best "
	    "plan (%ld of %ld over); the cut is above the bound on %ld",
	    shape_over, shape_n, cut_above);
	printf("# mean over the optima: search_bound %.3f, T_lb %.3f\n",
	    sum_bd / (bound_n ? bound_n : 1), sum_lb / (bound_n ? bound_n : 1));
	/*
	 * 0.81 before the fill of every stage and the per-class caps, 0.844
	 * before the linear relaxation of the sync, 0.853 before the one of
	 * a single group and the cap of M micro-batches per group.
	 */
	/* 0.864 on average before the 1F1B makespan, 0.799 after. */
	ok(bound_over == 0 && bound_above_tlb >= bound_n / 2 &&
	    sum_bd >= 0.78 * bound_n,
	    "search_bound never exceeds the optimum (%d of %d over), is "
	    "above T_lb on %d and 0.78 of the optimum or more on average",
	    bound_over, bound_n, bound_above_tlb);
	return done_testing();
}
