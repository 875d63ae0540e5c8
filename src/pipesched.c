/*
 * pipesched.c - makespan, period and fill of a 1F1B pipeline (pipesched.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "pipesched.h"
#include "util.h"

/*
 * Micro-batches simulated before the makespan is extrapolated, the steps
 * checked to be one period, and the most simulated while looking for
 * the steady state (pipe_makespan()).
 */
#define PIPE_DIRECT 4096L
#define PIPE_CHECK 3L
#define PIPE_DIRECT_MAX (1L << 20)

/* The k-th operation of stage s in 1F1B order: *back and micro-batch *i. */
static void
op_of(int S, int s, long m, long k, int *back, long *i)
{
	long w = S - s - 1 < m ? S - s - 1 : m;

	if (k < w) {
		*back = 0;
		*i = k;
	} else if (k < w + 2 * (m - w)) {
		*back = (int)((k - w) % 2);
		*i = *back ? (k - w) / 2 : w + (k - w) / 2;
	} else {
		*back = 1;
		*i = k - (m - w) - w;
	}
}

/* The event simulation of pipe_makespan(): O(S m) time and memory. */
static double
simulate(int S, long m, const double *f, const double *b, const double *xf,
    const double *xb, struct pipe_op *F, struct pipe_op *B)
{
	size_t n = (size_t)S * (size_t)m;
	double *fe, *be, *lane, end = 0;
	long *next, left;

	if (S < 1 || m < 1)
		return 0;
	fe = xcalloc(n, sizeof(double));
	be = xcalloc(n, sizeof(double));
	lane = xcalloc((size_t)S, sizeof(double));
	next = xcalloc((size_t)S, sizeof(long));
	for (size_t i = 0; i < n; i++)
		fe[i] = be[i] = -1;
	left = 2 * m * S;
	/*
	 * Each round lets every stage run as many operations as have their
	 * input; a stage blocks only on a neighbour, and 1F1B never
	 * deadlocks, so every round makes progress.
	 */
	while (left > 0) {
		long ran = 0;

		for (int s = 0; s < S; s++) {
			while (next[s] < 2 * m) {
				int back;
				long i;
				double ready, x, start;
				size_t at;

				op_of(S, s, m, next[s], &back, &i);
				at = (size_t)s * (size_t)m + (size_t)i;
				if (!back && s > 0) {
					ready = fe[at - (size_t)m];
					x = xf[s - 1];
				} else if (back && s + 1 < S) {
					ready = be[at + (size_t)m];
					x = xb[s];
				} else {
					ready = 0;
					x = 0;
				}
				if (ready < 0)
					break;	/* the neighbour has not run it */
				start = fmax(lane[s], ready) + x;
				if (back) {
					be[at] = start + b[s];
					if (B != NULL) {
						B[at].post = lane[s];
						B[at].start = start;
						B[at].end = be[at];
					}
					lane[s] = be[at];
				} else {
					fe[at] = start + f[s];
					if (F != NULL) {
						F[at].post = lane[s];
						F[at].start = start;
						F[at].end = fe[at];
					}
					lane[s] = fe[at];
				}
				next[s]++;
				ran++;
			}
		}
		left -= ran;
		if (ran == 0) {
			end = HUGE_VAL;
			break;
		}
	}
	for (int s = 0; s < S && end != HUGE_VAL; s++)
		end = fmax(end, lane[s]);
	free(fe);
	free(be);
	free(lane);
	free(next);
	return end;
}

/* Is d the period p, up to rounding? */
static int
is_period(double d, double p)
{
	return fabs(d - p) <= 1e-9 * fmax(p, 1e-300);
}

double
pipe_makespan(int S, long m, const double *f, const double *b,
    const double *xf, const double *xb, struct pipe_op *F, struct pipe_op *B)
{
	double p;

	if (S < 1 || m < 1)
		return 0;
	if (F != NULL || B != NULL || m <= PIPE_DIRECT + PIPE_CHECK)
		return simulate(S, m, f, b, xf, xb, F, B);
	/*
	 * Past the fill, one more micro-batch adds one steady period P to
	 * the makespan (each stage runs one more forward and backward pair
	 * in its steady phase, and the steady state repeats with period P):
	 * once the makespans of k, k + 1, ..., k + PIPE_CHECK micro-batches
	 * grow by P each, the makespan of m is that of k plus (m - k) P.
	 * The fill may last long when two lanes are nearly equal: k doubles
	 * until the steps are P, and m is simulated whole if it never is.
	 */
	p = pipe_period(S, f, b, xf, xb);
	for (long k = PIPE_DIRECT; k + PIPE_CHECK < m && k <= PIPE_DIRECT_MAX;
	    k *= 2) {
		double base = simulate(S, k, f, b, xf, xb, NULL, NULL), prev;
		int steady = isfinite(base) && p > 0;

		prev = base;
		for (long j = 1; j <= PIPE_CHECK && steady; j++) {
			double t = simulate(S, k + j, f, b, xf, xb, NULL, NULL);

			steady = is_period(t - prev, p);
			prev = t;
		}
		if (steady)
			return base + (double)(m - k) * p;
	}
	return simulate(S, m, f, b, xf, xb, NULL, NULL);
}

double
pipe_period(int S, const double *f, const double *b, const double *xf,
    const double *xb)
{
	double p = 0;

	for (int s = 0; s < S; s++) {
		double lane = f[s] + b[s];

		if (s > 0)
			lane += xf[s - 1];
		if (s + 1 < S)
			lane += xb[s];
		p = fmax(p, lane);
	}
	return p;
}

double
pipe_fill(int S, const double *f, const double *b, const double *xf,
    const double *xb)
{
	double sum = 0;

	for (int s = 0; s < S; s++) {
		sum += f[s] + b[s];
		if (s + 1 < S)
			sum += xf[s] + xb[s];
	}
	return sum;
}

double
pipe_lower(int S, long m, const double *f, const double *b,
    const double *xf, const double *xb)
{
	double fill = 0, down = 0, up = 0, lb;

	if (S < 1 || m < 1)
		return 0;
	for (int s = 0; s < S; s++) {
		fill += f[s] + b[s];
		if (s + 1 < S && xf != NULL)
			fill += xf[s] + xb[s];
	}
	lb = fill;
	for (int q = 0; q < S; q++) {
		long w = S - q - 1, more = m - 1 - w > 0 ? m - 1 - w : 0;
		double rf = q > 0 && xf != NULL ? xf[q - 1] : 0;
		double rb = q + 1 < S && xb != NULL ? xb[q] : 0;

		/* down: the forwards before q and the transfers between
		 * them; up: the backwards before q and their transfers. */
		lb = fmax(lb, down + (double)m * (f[q] + b[q] + rf + rb) + up);
		lb = fmax(lb, fill + (double)(m - 1) * (b[q] + rb) +
		    (double)more * (f[q] + rf));
		/* Stage q's forward and the transfer into it join the way
		 * down to q + 1; q's backward and the transfer into it the
		 * way up. */
		down += f[q] + rf;
		up += b[q] + rb;
	}
	return lb;
}
