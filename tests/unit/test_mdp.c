/*
 * test_mdp.c - value iteration against MDPs with exact solutions derived
 * by hand or by solving the Bellman linear system of the policy found.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mdp.h"
#include "tap.h"

/* A small MDP under construction, held in the compressed rows of mdp.h. */
#define MAXA 64
#define MAXT 256
struct build {
	int nstates, nact, ntr;
	int act_off[MAXA + 1];
	double cost[MAXA];
	int tr_off[MAXA + 1];
	int tr_to[MAXT];
	double tr_p[MAXT];
	unsigned char terminal[MAXA];
	int cur;		/* state whose actions are being added */
};

static void
b_init(struct build *b, int nstates)
{
	memset(b, 0, sizeof(*b));
	b->nstates = nstates;
	b->cur = 0;
}

/* Start the action list of state s (states must come in order). */
static void
b_state(struct build *b, int s)
{
	while (b->cur <= s)
		b->act_off[b->cur++] = b->nact;
}

/* Add an action with cost c and n (state, probability) pairs. */
static void
b_action(struct build *b, double c, int n, const int *to, const double *p)
{
	b->cost[b->nact] = c;
	b->tr_off[b->nact] = b->ntr;
	for (int i = 0; i < n; i++) {
		b->tr_to[b->ntr] = to[i];
		b->tr_p[b->ntr] = p[i];
		b->ntr++;
	}
	b->nact++;
	b->tr_off[b->nact] = b->ntr;
}

static struct mdp
b_done(struct build *b, double gamma)
{
	struct mdp m;

	b_state(b, b->nstates - 1);
	b->act_off[b->nstates] = b->nact;
	b->tr_off[b->nact] = b->ntr;
	m.nstates = b->nstates;
	m.act_off = b->act_off;
	m.cost = b->cost;
	m.tr_off = b->tr_off;
	m.tr_to = b->tr_to;
	m.tr_p = b->tr_p;
	m.terminal = b->terminal;
	m.discount = gamma;
	return m;
}

static struct mdp_opts
opts(double tol, int maxit)
{
	struct mdp_opts o;

	o.abs_tol = o.rel_tol = tol;
	o.max_iter = maxit;
	o.tie_abs = o.tie_rel = 1e-9;
	return o;
}

/*
 * A deterministic chain 0 -> 1 -> 2 -> 3 -> 4 (terminal) with costs 1, 2,
 * 3, 4, and a shortcut 0 -> 3 of cost 7 listed second.  V = (10, 9, 7, 4,
 * 0): the shortcut ties with the chain at state 0 (7 + 4 = 1 + 9), so the
 * first-listed action wins.  On the acyclic chain sweep k fixes the
 * states k hops from the end; sweep 5 changes nothing.
 */
static void
chain(void)
{
	struct build b;
	struct mdp m;
	struct mdp_opts o = opts(1e-12, 100);
	struct mdp_result r;
	double V[5], best[5];
	int pol[5];
	static const double want[] = { 10, 9, 7, 4, 0 };

	b_init(&b, 5);
	for (int s = 0; s < 4; s++) {
		int to = s + 1;
		double p = 1;

		b_state(&b, s);
		b_action(&b, s + 1, 1, &to, &p);
		if (s == 0) {
			to = 3;
			b_action(&b, 7, 1, &to, &p);
		}
	}
	b.terminal[4] = 1;
	m = b_done(&b, 1);
	is_int(mdp_solve(&m, &o, V, &r), 1, "chain: converged");
	is_int(r.iterations, 5, "chain: 4 hops need 4 sweeps plus 1 to see "
	    "no change");
	is_near(r.residual, 0, 0, "chain: residual 0");
	for (int s = 0; s < 5; s++) {
		char name[64];

		snprintf(name, sizeof(name), "chain: V(%d) = %g", s, want[s]);
		is_near(V[s], want[s], 0, name);
	}
	mdp_policy(&m, &o, V, pol, best);
	is_int(pol[0], 0, "chain: exact tie goes to the first action");
	is_int(pol[4], -1, "chain: terminal state has no action");
	is_near(best[0], 10, 0, "chain: best value of state 0");
	is_near(best[4], 0, 0, "chain: best value of the terminal state");
}

/*
 * A stochastic shortest path with a self-loop: state 0 may "try" (cost 1,
 * reaches the goal with probability 1/2, else stays) or go "safe" (cost 3,
 * straight to the goal).  V(0) = 1 + V(0)/2 gives V = 2 < 3.  From V = 0
 * the sweeps give V_k = 2 - 2^(1-k) (1, 1.5, 1.75, ...), so sweep k >= 2
 * changes V by 2^(1-k).  The test 1e-12 (1 + V) ~ 3e-12 first passes at
 * 2^-39 = 1.8e-12 (2^-38 = 3.6e-12 does not), i.e. at sweep 40.
 */
static void
geometric(void)
{
	struct build b;
	struct mdp m;
	struct mdp_opts o = opts(1e-12, 1000);
	struct mdp_result r;
	double V[2];
	int pol[2];
	int to[2] = { 1, 0 }, goal = 1;
	double p[2] = { 0.5, 0.5 }, one = 1;

	b_init(&b, 2);
	b_state(&b, 0);
	b_action(&b, 1, 2, to, p);
	b_action(&b, 3, 1, &goal, &one);
	b.terminal[1] = 1;
	m = b_done(&b, 1);
	is_int(mdp_solve(&m, &o, V, &r), 1, "geometric: converged");
	is_int(r.iterations, 40, "geometric: 40 sweeps to 1e-12 (1 + V)");
	is_near(r.residual, ldexp(1, -39), 0, "geometric: last change 2^-39");
	is_near(V[0], 2, 1e-11, "geometric: V = 2");
	mdp_policy(&m, &o, V, pol, NULL);
	is_int(pol[0], 0, "geometric: try is optimal");

	o.max_iter = 3;
	is_int(mdp_solve(&m, &o, V, &r), 0, "geometric: cap of 3 sweeps");
	is_int(r.iterations, 3, "geometric: stopped after 3 sweeps");
	is_near(r.residual, 0.25, 0, "geometric: residual of sweep 3");
	is_near(V[0], 1.75, 0, "geometric: V_3 = 1.75");
}

/*
 * Policy ties within the tolerance: three actions of state 0 to the goal
 * with costs 5 + 4e-9, 5 and 5 + 1e-9.  The best is 5; the tolerance is
 * 1e-9 (1 + 5) = 6e-9, so the first action (4e-9 worse) is taken.  With
 * costs 5 + 7e-9, 5, 5 + 1e-9 the first is out and the second taken.
 */
static void
ties(void)
{
	struct build b;
	struct mdp m;
	struct mdp_opts o = opts(1e-12, 10);
	struct mdp_result r;
	double V[2];
	int pol[2], goal = 1;
	double one = 1;

	for (int round = 0; round < 2; round++) {
		b_init(&b, 2);
		b_state(&b, 0);
		b_action(&b, 5 + (round ? 7e-9 : 4e-9), 1, &goal, &one);
		b_action(&b, 5, 1, &goal, &one);
		b_action(&b, 5 + 1e-9, 1, &goal, &one);
		b.terminal[1] = 1;
		m = b_done(&b, 1);
		mdp_solve(&m, &o, V, &r);
		is_near(V[0], 5, 0, "ties: V = best cost");
		mdp_policy(&m, &o, V, pol, NULL);
		is_int(pol[0], round ? 1 : 0, round ?
		    "ties: 7e-9 worse is outside 6e-9" :
		    "ties: 4e-9 worse is within 1e-9 (1 + 5)");
	}
}

/*
 * Dead ends: state 1 has no action and is not terminal, so V(1) = inf.
 * State 0 can go to 1 (cost 1) or to the goal 2 (cost 10), and has an
 * action to the goal that reaches the dead end with probability 0 (the
 * zero-probability term is ignored, not inf * 0).
 */
static void
dead_end(void)
{
	struct build b;
	struct mdp m;
	struct mdp_opts o = opts(1e-12, 10);
	struct mdp_result r;
	double V[3];
	int pol[3], to1 = 1, to2 = 2, both[2] = { 1, 2 };
	double one = 1, zp[2] = { 0, 1 };

	b_init(&b, 3);
	b_state(&b, 0);
	b_action(&b, 1, 1, &to1, &one);
	b_action(&b, 10, 1, &to2, &one);
	b_action(&b, 12, 2, both, zp);
	b_state(&b, 1);
	b_state(&b, 2);
	b.terminal[2] = 1;
	m = b_done(&b, 1);
	is_int(mdp_solve(&m, &o, V, &r), 1, "dead end: converged");
	ok(isinf(V[1]) && V[1] > 0, "dead end: V = +inf");
	is_near(V[0], 10, 0, "dead end: avoided");
	is_near(mdp_action_value(&m, V, 2), 12, 0,
	    "dead end: probability 0 ignored");
	mdp_policy(&m, &o, V, pol, NULL);
	is_int(pol[0], 1, "dead end: policy takes the goal");
	is_int(pol[1], -1, "dead end: no policy");
}

/*
 * A discounted textbook case, gamma = 0.9:
 *	state 0: a0 cost 2, to 0 or 1 with 1/2 each;  a1 cost 4, to 1
 *	state 1: b0 cost 1, to 0;                      b1 cost 3, stays at 1
 * Under (a0, b0):  V0 = 2 + 0.45 V0 + 0.45 V1,  V1 = 1 + 0.9 V0, so
 * V0 = 2.45 + 0.855 V0, V0 = 2.45 / 0.145 = 490/29 = 16.896551724...,
 * V1 = 1 + 441/29 = 470/29 = 16.206896551...  Optimal: a1 gives
 * 4 + 0.9 * 470/29 = 539/29 > 490/29, b1 gives 3 + 423/29 = 510/29 >
 * 470/29.
 */
static void
discounted(void)
{
	struct build b;
	struct mdp m;
	struct mdp_opts o = opts(1e-13, 100000);
	struct mdp_result r;
	double V[2];
	int pol[2], to01[2] = { 0, 1 }, to0 = 0, to1 = 1;
	double half[2] = { 0.5, 0.5 }, one = 1;

	b_init(&b, 2);
	b_state(&b, 0);
	b_action(&b, 2, 2, to01, half);
	b_action(&b, 4, 1, &to1, &one);
	b_state(&b, 1);
	b_action(&b, 1, 1, &to0, &one);
	b_action(&b, 3, 1, &to1, &one);
	m = b_done(&b, 0.9);
	m.terminal = NULL;
	is_int(mdp_solve(&m, &o, V, &r), 1, "discounted: converged");
	ok(r.iterations > 100 && r.iterations < 1000,
	    "discounted: a contraction by 0.9 needs hundreds of sweeps (%d)",
	    r.iterations);
	is_near(V[0], 490.0 / 29, 1e-11, "discounted: V0 = 490/29");
	is_near(V[1], 470.0 / 29, 1e-11, "discounted: V1 = 470/29");
	mdp_policy(&m, &o, V, pol, NULL);
	is_int(pol[0], 0, "discounted: a0 at state 0");
	is_int(pol[1], 0, "discounted: b0 at state 1");
	is_near(mdp_action_value(&m, V, 1), 539.0 / 29, 1e-11,
	    "discounted: Q(0, a1) = 539/29");
	is_near(mdp_action_value(&m, V, 3), 510.0 / 29, 1e-11,
	    "discounted: Q(1, b1) = 510/29");
}

/* Solve A x = y (n x n, row-major, destroyed) by Gaussian elimination with
 * partial pivoting. */
static void
gauss(int n, double *A, double *y, double *x)
{
	for (int c = 0; c < n; c++) {
		int p = c;

		for (int r = c + 1; r < n; r++)
			if (fabs(A[r * n + c]) > fabs(A[p * n + c]))
				p = r;
		for (int k = 0; k < n; k++) {
			double t = A[c * n + k];

			A[c * n + k] = A[p * n + k];
			A[p * n + k] = t;
		}
		{
			double t = y[c];

			y[c] = y[p];
			y[p] = t;
		}
		for (int r = c + 1; r < n; r++) {
			double f = A[r * n + c] / A[c * n + c];

			for (int k = c; k < n; k++)
				A[r * n + k] -= f * A[c * n + k];
			y[r] -= f * y[c];
		}
	}
	for (int r = n - 1; r >= 0; r--) {
		double s = y[r];

		for (int k = r + 1; k < n; k++)
			s -= A[r * n + k] * x[k];
		x[r] = s / A[r * n + r];
	}
}

static unsigned long rng_state;

static double
rnd(void)
{
	rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/*
 * Random discounted MDPs (5 states, 3 actions, dense transitions) and
 * random stochastic shortest paths (5 states + goal, every action reaches
 * the goal with probability >= 0.2): the value of the policy found,
 * solved exactly from (I - gamma P) V = c, equals V, and no action
 * improves on it (Bellman optimality).
 */
static void
random_linear(void)
{
	enum { N = 5, A = 3 };

	rng_state = 12345;
	for (int trial = 0; trial < 20; trial++) {
		int ssp = trial % 2;
		int ns = ssp ? N + 1 : N;
		double gamma = ssp ? 1 : 0.5 + 0.4 * rnd();
		struct build b;
		struct mdp m;
		struct mdp_opts o = opts(1e-14, 100000);
		struct mdp_result r;
		double V[N + 1], M[N * N], y[N], x[N + 1], worst = 0;
		int pol[N + 1], optimal = 1;

		b_init(&b, ns);
		for (int s = 0; s < N; s++) {
			b_state(&b, s);
			for (int a = 0; a < A; a++) {
				int to[N + 1];
				double p[N + 1], sum = 0;

				for (int k = 0; k < ns; k++) {
					to[k] = k;
					p[k] = rnd();
					if (ssp && k == N)
						p[k] += 0.5;
					sum += p[k];
				}
				for (int k = 0; k < ns; k++)
					p[k] /= sum;
				b_action(&b, 1 + 9 * rnd(), ns, to, p);
			}
		}
		if (ssp)
			b.terminal[N] = 1;
		m = b_done(&b, gamma);
		if (!ssp)
			m.terminal = NULL;
		mdp_solve(&m, &o, V, &r);
		mdp_policy(&m, &o, V, pol, NULL);
		/* (I - gamma P_pi) x = c_pi over the non-terminal states. */
		for (int s = 0; s < N; s++) {
			int a = b.act_off[s] + pol[s];

			for (int k = 0; k < N; k++)
				M[s * N + k] = s == k;
			for (int k = b.tr_off[a]; k < b.tr_off[a + 1]; k++)
				if (b.tr_to[k] < N)
					M[s * N + b.tr_to[k]] -= gamma *
					    b.tr_p[k];
			y[s] = b.cost[a];
		}
		gauss(N, M, y, x);
		x[N] = 0;	/* the goal of the ssp trials */
		for (int s = 0; s < N; s++) {
			double d = fabs(x[s] - V[s]) / fmax(1, fabs(x[s]));

			if (d > worst)
				worst = d;
			for (int a = b.act_off[s]; a < b.act_off[s + 1]; a++)
				if (mdp_action_value(&m, x, a) <
				    x[s] - 1e-9 * (1 + x[s]))
					optimal = 0;
		}
		ok(r.converged && worst < 1e-10, "random %s %d: V equals the "
		    "linear solve of its policy (rel. error %.3g, %d sweeps)",
		    ssp ? "ssp" : "discounted", trial, worst, r.iterations);
		ok(optimal, "random %s %d: no action improves on the policy",
		    ssp ? "ssp" : "discounted", trial);
	}
}

int
main(void)
{
	chain();
	geometric();
	ties();
	dead_end();
	discounted();
	random_linear();
	return done_testing();
}
