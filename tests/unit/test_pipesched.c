/*
 * test_pipesched.c - the 1F1B makespan, period and lower bound of
 * pipesched.h against hand-derived numbers and a longest-path oracle.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The oracle builds the schedule's event graph explicitly: one node per
 * pass (stage s, forward or backward, micro-batch i), an edge from the
 * pass before it on its lane, and an edge from the neighbour's pass it
 * needs, which adds the transfer.  A pass ends at its duration after the
 * latest of (the lane's previous end) and (the neighbour's end plus the
 * transfer); the end of the last pass is a longest path, found here by
 * memoised recursion instead of the round-robin replay of pipesched.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipesched.h"
#include "tap.h"
#include "util.h"

#define MAXS 6
#define MAXM 12

struct orc {
	int S;
	long m;
	const double *f, *b, *xf, *xb;
	/* lane position of (s, back, i) and the pass at (s, k) */
	int pos[MAXS][2][MAXM];
	int kind[MAXS][2 * MAXM], mb[MAXS][2 * MAXM];
	double end[MAXS][2 * MAXM];
	int done[MAXS][2 * MAXM];
};

static double
orc_end(struct orc *o, int s, int k)
{
	int back, i;
	double start = 0, in = 0;

	if (o->done[s][k])
		return o->end[s][k];
	back = o->kind[s][k];
	i = o->mb[s][k];
	if (k > 0)
		start = orc_end(o, s, k - 1);
	if (!back && s > 0)
		in = orc_end(o, s - 1, o->pos[s - 1][0][i]), start = fmax(start,
		    in) + o->xf[s - 1];
	else if (back && s + 1 < o->S)
		in = orc_end(o, s + 1, o->pos[s + 1][1][i]), start = fmax(start,
		    in) + o->xb[s];
	o->end[s][k] = start + (back ? o->b[s] : o->f[s]);
	o->done[s][k] = 1;
	return o->end[s][k];
}

static double
oracle(int S, long m, const double *f, const double *b, const double *xf,
    const double *xb)
{
	struct orc *o = calloc(1, sizeof(*o));
	double t = 0;

	o->S = S;
	o->m = m;
	o->f = f;
	o->b = b;
	o->xf = xf;
	o->xb = xb;
	for (int s = 0; s < S; s++) {
		long w = S - s - 1 < m ? S - s - 1 : m;
		int k = 0;

		for (long i = 0; i < w; i++, k++)
			o->kind[s][k] = 0, o->mb[s][k] = (int)i;
		for (long j = 0; j < m - w; j++) {
			o->kind[s][k] = 0, o->mb[s][k++] = (int)(w + j);
			o->kind[s][k] = 1, o->mb[s][k++] = (int)j;
		}
		for (long j = m - w; j < m; j++, k++)
			o->kind[s][k] = 1, o->mb[s][k] = (int)j;
		for (k = 0; k < 2 * m; k++)
			o->pos[s][o->kind[s][k]][o->mb[s][k]] = k;
	}
	for (int s = 0; s < S; s++)
		t = fmax(t, orc_end(o, s, (int)(2 * m - 1)));
	free(o);
	return t;
}

static double
rnd(unsigned *st)
{
	*st = *st * 1103515245u + 12345u;
	return (double)((*st >> 8) & 0xffff) / 65536.0;
}

int
main(void)
{
	/*
	 * Two stages of 1 s (a third forward), 0.5 s each way, 100
	 * micro-batches: each lane takes 1 + 0.5 s per micro-batch, the fill
	 * is 3 s, so T = 3 + 99 x 1.5 = 151.5 s; the closed form of earlier
	 * versions said 102 s and a transfer as a pure delay 151 s.
	 */
	double f2[] = { 1.0 / 3, 1.0 / 3 }, b2[] = { 2.0 / 3, 2.0 / 3 };
	double x2[] = { 0.5, 0 };
	int bad = 0, badlb = 0, badmono = 0, badp = 0;
	unsigned st = 7;

	is_near(pipe_makespan(2, 100, f2, b2, x2, x2, NULL, NULL), 151.5,
	    1e-12, "two stages, 0.5 s each way: 151.5 s");
	is_near(pipe_period(2, f2, b2, x2, x2), 1.5, 1e-12,
	    "its period: 1 s of compute and 0.5 s received");
	is_near(pipe_fill(2, f2, b2, x2, x2), 3, 1e-12, "its fill: 3 s");
	is_near(pipe_makespan(1, 7, f2, b2, NULL, NULL, NULL, NULL), 7, 1e-12,
	    "one stage: m (f + b)");
	ok(pipe_makespan(3, 0, f2, b2, x2, x2, NULL, NULL) == 0,
	    "no micro-batch: 0");
	{
		struct pipe_op F[4], B[4];

		pipe_makespan(2, 2, f2, b2, x2, x2, F, B);
		/* s0 F0 [0, 1/3], F1 [1/3, 2/3]; s1 F0 receives to 5/6. */
		is_near(F[2].start, 1.0 / 3 + 0.5, 1e-12,
		    "stage 1's first forward starts after its receive");
		is_near(F[2].post, 0, 1e-12, "... which it posted at 0");
		is_near(B[1].end, pipe_makespan(2, 2, f2, b2, x2, x2, NULL,
		    NULL), 1e-12, "stage 0's last backward ends last");
	}
	for (int n = 0; n < 3000; n++) {
		int S = 1 + (int)(rnd(&st) * MAXS);
		long m = 1 + (long)(rnd(&st) * MAXM);
		double f[MAXS], b[MAXS], xf[MAXS], xb[MAXS], t, prev = 0;

		if (S > MAXS)
			S = MAXS;
		if (m > MAXM)
			m = MAXM;
		for (int s = 0; s < S; s++) {
			f[s] = rnd(&st);
			b[s] = f[s] * (1 + 2 * rnd(&st));
			xf[s] = rnd(&st) < 0.3 ? 0 : rnd(&st);
			xb[s] = xf[s] * (0.5 + rnd(&st));
		}
		t = pipe_makespan(S, m, f, b, xf, xb, NULL, NULL);
		if (fabs(t - oracle(S, m, f, b, xf, xb)) > 1e-9 * (1 + t))
			bad++;
		if (pipe_lower(S, m, f, b, xf, xb) > t * (1 + 1e-12))
			badlb++;
		for (long k = 1; k <= m; k++) {
			double tk = pipe_makespan(S, k, f, b, xf, xb, NULL,
			    NULL);

			if (tk < prev * (1 - 1e-12))
				badmono++;
			prev = tk;
		}
		if (n < 200) {
			/* The period is what each further micro-batch adds. */
			double a = pipe_makespan(S, 400, f, b, xf, xb, NULL,
			    NULL), z = pipe_makespan(S, 800, f, b, xf, xb, NULL,
			    NULL), p = pipe_period(S, f, b, xf, xb);

			if (fabs((z - a) / 400 - p) > 1e-9 * (1 + p))
				badp++;
		}
	}
	ok(bad == 0, "makespan equals the longest-path oracle on 3000 "
	    "random pipelines (%d differ)", bad);
	ok(badlb == 0, "pipe_lower() never above the makespan (%d over)",
	    badlb);
	ok(badmono == 0, "the makespan never falls as m grows (%d falls)",
	    badmono);
	ok(badp == 0, "the period is the makespan's growth per micro-batch "
	    "(%d of 200 differ)", badp);
	{
		/*
		 * Without F and B the makespan is taken by steps, skipping
		 * the steady ones (pipesched.c, stepped()); with them every
		 * pass is simulated (the walk).  The two agree to the last
		 * bit, on random pipelines and on the hard ones: equal
		 * stages, stages equal but for the last bits, idle stages,
		 * tiny and subnormal times.
		 */
		int badx = 0, nx = 0;
		double t0, t12;

		for (int n = 0; n < 600; n++) {
			int S = 1 + (int)(rnd(&st) * 12), kind = n % 6;
			long m = 1 + (long)(pow(rnd(&st), 2) * (n < 20 ? 300000 :
			    20000));
			double f[12], b[12], xf[12], xb[12], a, w;
			struct pipe_op *F, *B;

			if (S > 12)
				S = 12;
			for (int s = 0; s < S; s++) {
				f[s] = rnd(&st);
				b[s] = f[s] * (1 + 2 * rnd(&st));
				xf[s] = rnd(&st) < 0.3 ? 0 : rnd(&st) * 0.3;
				xb[s] = xf[s] * (0.5 + rnd(&st));
				if (kind == 1) {
					f[s] = 0.1;
					b[s] = 0.2;
					xf[s] = xb[s] = 0.01;
				} else if (kind == 2) {
					f[s] = 0.1 + 1e-17 * (s % 3);
					b[s] = 0.2 - 1e-17 * (s % 2);
					xf[s] = 0.01;
					xb[s] = 0.01 + 1e-18 * s;
				} else if (kind == 3) {
					f[s] = b[s] = rnd(&st) < 0.5 ? 0 : 1e-3;
					xf[s] = xb[s] = 0;
				} else if (kind == 4) {
					f[s] *= 1e-300;
					b[s] *= 1e-300;
					xf[s] *= 1e-300;
					xb[s] *= 1e-300;
				} else if (kind == 5) {
					f[s] = 1e-312 * (1 + s % 2);
					b[s] = 2e-312;
					xf[s] = xb[s] = 1e-313;
				}
			}
			F = xcalloc((size_t)S * (size_t)m, sizeof(*F));
			B = xcalloc((size_t)S * (size_t)m, sizeof(*B));
			a = pipe_makespan(S, m, f, b, xf, xb, NULL, NULL);
			w = pipe_makespan(S, m, f, b, xf, xb, F, B);
			if (memcmp(&a, &w, sizeof(a)) != 0)
				badx++;
			nx++;
			free(F);
			free(B);
		}
		ok(badx == 0, "by steps = simulated pass by pass, bit for bit "
		    "(%d of %d differ)", badx, nx);
		t0 = mono_now();
		t12 = pipe_makespan(2, 1000000000000L, f2, b2, x2, x2, NULL,
		    NULL);
		is_near(t12, 3 + 999999999999.0 * 1.5, 1e-12,
		    "1e12 micro-batches: fill plus 999999999999 periods");
		ok(mono_now() - t0 < 1, "... in under a second (%.3g s)",
		    mono_now() - t0);
		t0 = mono_now();
		for (int S = 2; S <= 64; S *= 2) {
			double f[64], b[64], xf[64], xb[64];

			for (int s = 0; s < S; s++) {
				f[s] = rnd(&st);
				b[s] = 2 * f[s] + 0.1 * rnd(&st);
				xf[s] = xb[s] = 0.01 * rnd(&st);
			}
			(void)pipe_makespan(S, 1000000000000L, f, b, xf, xb,
			    NULL, NULL);
		}
		ok(mono_now() - t0 < 1, "1e12 micro-batches on 2 to 64 stages "
		    "in under a second together (%.3g s)", mono_now() - t0);
	}
	return done_testing();
}
