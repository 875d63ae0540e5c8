/*
 * test_partition.c - the layer partition (DP and MILP) against brute
 * force, and the data split (threshold search and MILP) against brute
 * force, on random instances with fixed seeds.
 */
#include <limits.h>
#include <math.h>

#include "cost.h"
#include "fixture.h"
#include "partition.h"
#include "sb.h"
#include "split.h"
#include "tap.h"

/*
 * Synthetic boundary cost: depends on the boundary and the bytes, and the
 * two directions differ.
 */
static void
comm(void *ctx, int j, double bytes, double *fwd, double *bwd)
{
	const double *w = ctx;

	*fwd = w[j] * 1e-3 + bytes * 1e-10 * (1 + j);
	*bwd = w[j] * 4e-4 + bytes * 3e-10;
}

/* The transfers of boundary j when the stage before it ends at layer l. */
static void
bnd(const struct dl_costctx *x, const struct part_group *g, int j, int l,
    double *xf, double *xb)
{
	*xf = *xb = 0;
	if (j >= 0 && j + 1 < g->S)
		g->comm(g->ctx, j, (double)x->o->micro_batch *
		    x->m->layers[l].act_mb * 1e6, xf, xb);
}

/*
 * T(m) of a partition, straight from the formulas of partition.h: the
 * sum of every stage's compute and the transfers after it, plus m - 1
 * times the largest P_j (compute, activations received from the stage
 * before, gradients received from the stage after); *btp that largest.
 */
static double
direct_bt(const struct dl_costctx *x, const struct part_group *g,
    const int *last, int *fits, double *btp)
{
	double sum = 0, bt = 0;

	*fits = 1;
	for (int j = 0, a = 0; j < g->S; j++) {
		double t = cost_stage_compute(x, g->node[j], g->k[j], a,
		    last[j]);
		double xf, xb, pf, pb;

		bnd(x, g, j, last[j], &xf, &xb);
		bnd(x, g, j - 1, j > 0 ? last[j - 1] : 0, &pf, &pb);
		if (cost_stage_memory(x, a, last[j], 1.0 / g->k[j], j + 1,
		    g->S, g->m) > cost_gpu_capacity(x, g->node[j]))
			*fits = 0;
		sum += t + xf + xb;
		bt = fmax(bt, t + pf + xb);
		a = last[j] + 1;
	}
	*btp = bt;
	return sum + (double)(g->m - 1) * bt;
}

/* The next choice of stage ends last[0 .. S-2] (lexicographic); 0 at
 * the end. */
static int
next_cuts(int *last, int S, int L)
{
	int j;

	for (j = S - 2; j >= 0; j--)
		if (last[j] < L - 1 - (S - 1 - j))
			break;
	if (j < 0)
		return 0;
	last[j]++;
	for (int i = j + 1; i < S - 1; i++)
		last[i] = last[i - 1] + 1;
	return 1;
}

/* Best T over every boundary choice with bottleneck <= cap (brute force). */
static double
brute_cap(const struct dl_costctx *x, const struct part_group *g, int L,
    double cap)
{
	int last[16], S = g->S;
	double best = HUGE_VAL;

	for (int j = 0; j < S; j++)
		last[j] = j;
	last[S - 1] = L - 1;
	for (;;) {
		int fits;
		double bt, t = direct_bt(x, g, last, &fits, &bt);

		if (fits && bt <= cap && t < best)
			best = t;
		if (!next_cuts(last, S, L))
			break;
	}
	return best;
}

static double
brute(const struct dl_costctx *x, const struct part_group *g, int L)
{
	return brute_cap(x, g, L, HUGE_VAL);
}

/*
 * The n-th smallest distinct candidate bottleneck (1-based; the largest
 * when there are fewer), listed by brute force: P of every stage that
 * fits and could be part of a partition (stage 0 starts at layer 0, the
 * last ends at the last layer, stage j leaves a layer for each other),
 * at least the least bottleneck of any partition.
 */
static double
nth_candidate(const struct dl_costctx *x, const struct part_group *g, int L,
    int n)
{
	double *v = calloc((size_t)g->S * (size_t)L * (size_t)L + 1,
	    sizeof(double)), bmin = HUGE_VAL, r;
	int nv = 0, nd = 0, last[16], S = g->S;

	/* bmin: the least bottleneck over partitions that fit. */
	for (int j = 0; j < S; j++)
		last[j] = j;
	last[S - 1] = L - 1;
	for (;;) {
		int fits;
		double bt;

		direct_bt(x, g, last, &fits, &bt);
		if (fits && bt < bmin)
			bmin = bt;
		if (!next_cuts(last, S, L))
			break;
	}
	for (int j = 0; j < S; j++)
		for (int a = j; a < L; a++)
			for (int b = a; b <= L - (S - j); b++) {
				double t = cost_stage_compute(x, g->node[j],
				    g->k[j], a, b);
				double xf, xb, pf, pb, p;

				if ((j == 0 && a != 0) || (j == S - 1 &&
				    b != L - 1))
					continue;
				bnd(x, g, j, b, &xf, &xb);
				bnd(x, g, j - 1, a > 0 ? a - 1 : 0, &pf, &pb);
				p = t + pf + xb;
				if (cost_stage_memory(x, a, b, 1.0 / g->k[j],
				    j + 1, S, g->m) > cost_gpu_capacity(x,
				    g->node[j]) || p < bmin)
					continue;
				v[nv++] = p;
			}
	qsort(v, (size_t)nv, sizeof(double), cmp_double);
	for (int i = 0; i < nv; i++)
		if (i == 0 || v[i] != v[i - 1])
			v[nd++] = v[i];
	r = nd == 0 ? HUGE_VAL : v[(n < nd ? n : nd) - 1];
	free(v);
	return r;
}

static void
random_instance(struct fixture *f, int nodes, int L, int tight)
{
	struct strbuf sb = STRBUF_INIT;

	sb_adds(&sb, "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
	    "nic_gbps\n");
	for (int i = 0; i < nodes; i++)
		sb_addf(&sb, "n%d,s,%d,G,%d,%g,%d,%d\n", i, 1 << fx_int(f, 0, 2),
		    fx_int(f, 20, 300), tight ? 0.2 + fx_rand(f) : 40.0,
		    fx_int(f, 100, 2400), fx_int(f, 10, 400));
	fx_file(f, "nodes.csv", sb.buf);
	sb_reset(&sb);
	sb_adds(&sb, "layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\n");
	for (int l = 0; l < L; l++)
		sb_addf(&sb, "l%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", l,
		    0.5 + 20 * fx_rand(f), 1 + 10 * fx_rand(f),
		    0.1 + 5 * fx_rand(f), 1 + 30 * fx_rand(f), 2 * fx_rand(f));
	fx_file(f, "model.csv", sb.buf);
	sb_free(&sb);
}

/*
 * A random group for seed: nodes, a model of lo..hi layers (memory binding
 * when mem), a micro-batch of 1..4, S of 1..smax stages with random nodes,
 * TP degrees and transfer weights w.  0 when the fixture loads.
 */
struct inst {
	struct dl_cluster c;
	struct dl_model m;
	struct dl_opts o;
	struct dl_costctx x;
	int L, node[8], k[8];
	double w[8];
	struct part_group g;
};

static int
inst_make(struct fixture *f, uint64_t seed, int lo, int hi, int smax,
    int mem, struct inst *in)
{
	struct dl_err e = { 0 };
	int nodes, S;

	memset(in, 0, sizeof(*in));
	fx_seed(f, seed);
	nodes = fx_int(f, 1, 4);
	in->L = fx_int(f, lo, hi);
	random_instance(f, nodes, in->L, mem);
	if (fx_load(f, &in->c, &in->m) != 0)
		return -1;
	plan_opts_default(&in->o);
	in->o.micro_batch = fx_int(f, 1, 4);
	in->o.global_batch = in->o.micro_batch * 8;
	cost_init(&in->x, &in->c, &in->m, &in->o, NULL, NULL, &e);
	S = fx_int(f, 1, in->L < smax ? in->L : smax);
	for (int j = 0; j < S; j++) {
		in->node[j] = fx_int(f, 0, nodes - 1);
		in->k[j] = 1 << fx_int(f, 0, 1);
		if (in->k[j] > in->c.nodes[in->node[j]].gpus)
			in->k[j] = 1;
		in->w[j] = fx_rand(f);
	}
	in->g.S = S;
	in->g.node = in->node;
	in->g.k = in->k;
	in->g.comm = comm;
	in->g.ctx = in->w;
	return 0;
}

static void
inst_free(struct inst *in)
{
	cost_free(&in->x);
	model_free(&in->m);
	cluster_free(&in->c);
}

static void
test_partition(void)
{
	struct fixture f;
	int agree_dp = 1, agree_milp = 1, infeas_ok = 1, n = 0, ninf = 0;

	fx_begin(&f);
	for (int seed = 1; seed <= 60; seed++) {
		struct inst in;
		struct dl_err e = { 0 };
		struct part_result r, r2;
		struct lp_params prm = { 30, 0 };
		double bf;

		if (inst_make(&f, (uint64_t)seed, 1, 9, 5, seed % 4 == 0,
		    &in) != 0) {
			ok(0, "fixture %d loads", seed);
			continue;
		}
		in.g.m = fx_int(&f, 1, 8);
		bf = brute(&in.x, &in.g, in.L);
		part_dp(&in.x, &in.g, 0, &r);
		n++;
		if (bf == HUGE_VAL) {
			ninf++;
			if (r.status != LP_INFEASIBLE)
				infeas_ok = 0;
		} else if (r.status != LP_OPTIMAL ||
		    fabs(r.obj - bf) > 1e-9 * bf) {
			agree_dp = 0;
			printf("# seed %d: dp %.17g brute %.17g\n", seed, r.obj,
			    bf);
		}
		if (part_milp(&in.x, &in.g, seed % 2 ? &r : NULL, &prm, NULL, &r2,
		    &e) != DL_OK) {
			agree_milp = 0;
		} else if (bf == HUGE_VAL) {
			if (r2.status != LP_INFEASIBLE)
				infeas_ok = 0;
		} else if (r2.status != LP_OPTIMAL ||
		    fabs(r2.obj - bf) > 1e-6 * bf) {
			agree_milp = 0;
			printf("# seed %d: milp %.17g (%s) brute %.17g\n", seed,
			    r2.obj, lp_status_name(r2.status), bf);
		}
		part_result_free(&r);
		part_result_free(&r2);
		inst_free(&in);
	}
	fx_end(&f);
	ok(agree_dp, "layer partition DP equals brute force (%d instances)", n);
	ok(agree_milp, "layer partition MILP equals brute force");
	ok(infeas_ok && ninf > 0, "memory-infeasible instances are reported "
	    "as such (%d of them)", ninf);
}

/* The sliding-window DP of long models, run on small ones. */
static void
test_window(void)
{
	struct fixture f;
	int agree = 1, n = 0, ninf = 0, saved = part_window_layers;

	part_window_layers = 0;
	fx_begin(&f);
	for (int seed = 1; seed <= 120; seed++) {
		struct inst in;
		struct part_result r;
		double bf;

		if (inst_make(&f, (uint64_t)seed + 1000, 1, 12, 5,
		    seed % 4 == 0, &in) != 0) {
			ok(0, "fixture %d loads", seed);
			continue;
		}
		in.g.m = fx_int(&f, 1, 8);
		bf = brute(&in.x, &in.g, in.L);
		part_dp(&in.x, &in.g, 0, &r);
		n++;
		if (bf == HUGE_VAL) {
			ninf++;
			agree &= r.status == LP_INFEASIBLE;
		} else if (r.status != LP_OPTIMAL ||
		    fabs(r.obj - bf) > 1e-9 * bf) {
			agree = 0;
			printf("# seed %d: window dp %.17g brute %.17g\n", seed,
			    r.obj, bf);
		}
		part_result_free(&r);
		inst_free(&in);
	}
	fx_end(&f);
	part_window_layers = saved;
	ok(agree && n - ninf > 80, "window DP equals brute force (%d "
	    "instances, %d infeasible)", n, ninf);
}

/*
 * One frontier answers every m as part_dp() does for that m alone: the
 * same objective bit for bit, the same stage ends and status, whatever
 * order the queries come in, with and without a scan limit.
 */
static void
test_front(void)
{
	static const long ms[] = { 40, 2, 1000, 5, 3, 17, 1, 8, 250, 4 };
	struct fixture f;
	int same = 1, n = 0, cut = 0, capped = 1, ncap = 0;

	fx_begin(&f);
	for (int seed = 1; seed <= 60; seed++) {
		struct inst in;
		int S;

		if (inst_make(&f, (uint64_t)seed + 1000, 2, 24, 6, seed % 3 == 0,
		    &in) != 0) {
			ok(0, "fixture %d loads", seed);
			continue;
		}
		S = in.g.S;
		/* The scan limit against brute force, on the smaller ones. */
		for (int lim = 1; lim <= 4 && in.L <= 12; lim++) {
			struct part_result r;
			double want, B;

			in.g.m = 2 + seed % 7;
			B = nth_candidate(&in.x, &in.g, in.L, lim);
			want = brute_cap(&in.x, &in.g, in.L, B);
			part_dp(&in.x, &in.g, lim, &r);
			ncap++;
			if (want == HUGE_VAL ? r.status != LP_INFEASIBLE :
			    fabs(r.obj - want) > 1e-9 * want) {
				capped = 0;
				printf("# seed %d limit %d: dp %.17g brute "
				    "%.17g\n", seed, lim, r.obj, want);
			}
			part_result_free(&r);
		}
		for (int lim = 0; lim < 2; lim++) {
			long scan = lim ? 3 : 0;
			struct part_front *big, *small[8] = { 0 };

			in.g.m = 1000;
			big = part_front_new(&in.x, &in.g, scan);
			for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
				struct part_result r1, r2;
				struct part_front *F = big;

				in.g.m = ms[i];
				if (ms[i] < S) {
					if (small[ms[i]] == NULL)
						small[ms[i]] = part_front_new(
						    &in.x, &in.g, scan);
					F = small[ms[i]];
				}
				part_front_query(F, ms[i], &r1);
				part_dp(&in.x, &in.g, scan, &r2);
				n++;
				cut += r2.status == LP_FEASIBLE;
				if (r1.status != r2.status || (r1.status !=
				    LP_INFEASIBLE && (memcmp(&r1.obj, &r2.obj,
				    sizeof(double)) != 0 || memcmp(r1.last,
				    r2.last, (size_t)S * sizeof(int)) != 0))) {
					same = 0;
					printf("# seed %d m %ld scan %ld: front "
					    "%.17g (%d) dp %.17g (%d)\n", seed,
					    ms[i], scan, r1.obj, r1.status,
					    r2.obj, r2.status);
				}
				part_result_free(&r1);
				part_result_free(&r2);
			}
			part_front_free(big);
			for (int i = 0; i < 8; i++)
				part_front_free(small[i]);
		}
		inst_free(&in);
	}
	fx_end(&f);
	ok(same, "a frontier answers every m as part_dp does (%d queries)", n);
	ok(cut > 0, "some of them hit the scan limit (%d)", cut);
	ok(capped, "with a scan limit of n, the DP's answer is the best "
	    "partition whose bottleneck is at most the n-th candidate (%d "
	    "checks)", ncap);
}

static double
gtime(const struct split_group *g, long m)
{
	return m <= 0 ? 0 : g->A + (double)(m - 1) * g->M;
}

/* Brute force over every split of total into G parts >= lo. */
static long split_lo;

static double
split_brute(const struct split_group *g, int G, long total, long *m, int i)
{
	double best = HUGE_VAL;

	if (i == G - 1) {
		if (total > g[i].cap || total < split_lo)
			return HUGE_VAL;
		m[i] = total;
		best = 0;
		for (int q = 0; q < G; q++)
			best = fmax(best, gtime(&g[q], m[q]));
		return best;
	}
	for (long v = split_lo; v <= total && v <= g[i].cap; v++) {
		double t;

		m[i] = v;
		t = split_brute(g, G, total - v, m, i + 1);
		if (t < best)
			best = t;
	}
	return best;
}

static void
test_split(void)
{
	struct fixture f;
	int good_exact = 1, good_milp = 1, good_all = 1, n = 0;

	fx_begin(&f);
	for (int seed = 1; seed <= 200; seed++) {
		struct split_group g[6];
		long m[6], m2[6], total;
		int G, st, st2;
		double z, z2, bf;
		struct dl_err e = { 0 };
		struct lp_params prm = { 10, 0 };

		fx_seed(&f, (uint64_t)seed + 1000);
		/* The last fifty have many micro-batches (the bisection). */
		G = seed > 150 ? fx_int(&f, 1, 3) : fx_int(&f, 1, 5);
		total = seed > 150 ? fx_int(&f, 200, 400) : fx_int(&f, 1, 10);
		for (int i = 0; i < G; i++) {
			g[i].A = 1 + 9 * fx_rand(&f);
			g[i].M = fx_rand(&f) * g[i].A;
			/* Equal groups now and then, to test ties. */
			if (i > 0 && seed % 5 == 0)
				g[i] = g[0];
			g[i].cap = seed % 3 == 0 ? fx_int(&f, 0, seed > 150 ?
			    200 : 4) : LONG_MAX;
		}
		split_lo = 1;
		bf = split_brute(g, G, total, m, 0);
		split_exact(g, G, total, 1, m, &z, &st);
		if (bf == HUGE_VAL)
			good_all &= st == LP_INFEASIBLE;
		else {
			long sum = 0;

			for (int i = 0; i < G; i++)
				sum += m[i];
			if (st != LP_OPTIMAL || sum != total ||
			    fabs(z - bf) > 1e-12 * bf) {
				good_all = 0;
				printf("# seed %d: all %.17g brute %.17g\n",
				    seed, z, bf);
			}
		}
		split_lo = 0;
		bf = split_brute(g, G, total, m, 0);
		split_exact(g, G, total, 0, m, &z, &st);
		n++;
		if (bf == HUGE_VAL) {
			good_exact &= st == LP_INFEASIBLE;
		} else {
			long sum = 0;

			for (int i = 0; i < G; i++)
				sum += m[i];
			if (st != LP_OPTIMAL || sum != total ||
			    fabs(z - bf) > 1e-12 * bf) {
				good_exact = 0;
				printf("# seed %d: exact %.17g brute %.17g\n",
				    seed, z, bf);
			}
		}
		if (split_milp(g, G, total, &prm, NULL, m2, &z2, &st2, &e) !=
		    DL_OK) {
			good_milp = 0;
			continue;
		}
		if (bf == HUGE_VAL)
			good_milp &= st2 == LP_INFEASIBLE;
		else if (st2 != LP_OPTIMAL || fabs(z2 - bf) > 1e-7 * bf) {
			good_milp = 0;
			printf("# seed %d: milp %.17g brute %.17g\n", seed, z2,
			    bf);
		}
	}
	fx_end(&f);
	ok(good_exact, "data split threshold search equals brute force (%d)",
	    n);
	ok(good_milp, "data split MILP equals brute force");
	ok(good_all, "data split with every group used equals brute force");
}

int
main(void)
{
	test_partition();
	test_window();
	test_front();
	test_split();
	return done_testing();
}
