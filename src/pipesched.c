/*
 * pipesched.c - makespan, period and fill of a 1F1B pipeline (pipesched.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipesched.h"
#include "util.h"

static double walk(int S, int v, long m, const double *f, const double *b,
    const double *xf, const double *xb, int wait, double *bend,
    struct pipe_op *F, struct pipe_op *B);

/*
 * One pass: it starts when its lane is free and its input has arrived
 * (ready, the producer's end, plus the transfer x) and lasts c.  The
 * same expression as walk()'s, so the same bits.
 */
static double
pass(double lane, double ready, double x, double c)
{
	double start = fmax(lane, ready) + x;

	return start + c;
}

/*
 * The block of doubles holding v >= 0: [*lo, *hi), a binade, or the
 * subnormals with the least binade, whose spacing is the same.  Every
 * double in a block is a multiple of its spacing u, and a real number in
 * it rounds to one.
 */
static void
block_of(double v, double *lo, double *hi)
{
	int e;

	(void)frexp(v, &e);	/* v in [2^(e-1), 2^e) */
	*lo = ldexp(1, e - 1);
	*hi = ldexp(1, e);
	if (v < 2 * DBL_MIN) {
		*lo = 0;
		*hi = 2 * DBL_MIN;
	}
}

/*
 * The states stepped() keeps to find a repeat: the last PIPE_HIST.  And
 * the most steps it runs in a row without one before it extrapolates.
 */
#define PIPE_HIST 8
#define PIPE_STEP_MAX 16384L

/*
 * x, the state after some step n, and h, the state after step n - q:
 * when x = h + D in every component, with every value of the steps
 * between inside one block (block_of()) and D an even multiple of its
 * spacing u (or 0, a cycle), the steps from n on repeat those from
 * n - q shifted by D (stepped()).  Then add k D to x for the most k
 * with k q <= left and x inside the block, and return k q, the steps
 * skipped; else 0.
 */
static long
skip_steps(double *x, const double *h, size_t nx, int q, long left)
{
	double D = x[0] - h[0], lo, hi, top = 0, least = HUGE_VAL, room, u;
	long k;

	for (size_t i = 0; i < nx; i++) {
		if (x[i] - h[i] != D)
			return 0;
		least = fmin(least, h[i]);
		top = fmax(top, x[i]);
	}
	if (D == 0) {
		k = left / q;	/* x repeats every q steps */
	} else {
		block_of(least, &lo, &hi);
		u = lo > 0 ? ldexp(lo, -52) : ldexp(1, -1074);
		if (!(least >= lo && top < hi) || D / (2 * u) != floor(D /
		    (2 * u)))
			return 0;
		room = floor((hi - top) / D);
		k = room < (double)(left / q) ? (long)room : left / q;
		while (k > 0 && top + (double)k * D >= hi)
			k--;
	}
	for (size_t i = 0; i < nx && k > 0; i++)
		x[i] += (double)k * D;
	return k * q;
}

/*
 * The makespan of m >= S micro-batches by steps, in O(S) memory: the
 * same passes as walk() with the same arithmetic, so the same
 * result to the last bit, in another order.  Stage s first runs its
 * w_s = S - s - 1 warm-up forwards.  Step n then runs, on every stage
 * from the last to the first, its forward of micro-batch w_s + n (while
 * there is one) and its backward of micro-batch n: the forward needs
 * the previous stage's forward of step n - 1 (or its last warm-up), the
 * backward the next stage's backward of this step.  The state after a
 * step is X = (lane[0..S-1], fwd[0..S-2]): each lane's end and each
 * stage's last forward end.
 *
 * Steps 0 .. m - S are all alike (every stage runs both passes), so X
 * after step n is G(X after step n - 1) for one function G.  Within a
 * block of spacing u (block_of()), G commutes with adding any even
 * multiple of u to every component: fmax does, and a sum rounded to a
 * multiple of u moves by the same even multiple (ties go to even, and
 * an even shift keeps evenness).  So when X grew by the same d in every
 * component over two steps in a row, with everything inside one block,
 * X(n + k) = X(n) + k d for as long as the values stay inside that
 * block (by induction: X(n + 1) = G(X(n - 1) + 2d) = X(n) + 2d), and
 * the steps up to the block's end are skipped in one addition, exact
 * because k d and X + k d are multiples of u inside the block.  The
 * stepping goes on through the block's end, where the spacing doubles,
 * and skips again once X grows evenly.  A step's passes lie between the
 * least component of X before it and the largest after it, as no time
 * or transfer is negative (checked; otherwise every step is run).
 */
static double
stepped(int S, long m, const double *f, const double *b, const double *xf,
    const double *xb)
{
	size_t nx = 2 * (size_t)S - 1;
	double *x = xcalloc((PIPE_HIST + 1) * nx, sizeof(double)),
	    *lane = x, *fwd = x + S, *wu, end = 0;
	long full = m - S;	/* the last step of both passes everywhere */
	int skip = 1, nh = 0, at = 0;
	long run = 0;		/* steps since the last skip */
	double base = 0;	/* lane[0] when that run began */

	for (int s = 0; s < S; s++) {
		double in[4] = { f[s], b[s], s + 1 < S ? xf[s] : 0,
		    s + 1 < S ? xb[s] : 0 };

		for (int i = 0; i < 4; i++)
			if (!(in[i] >= 0 && in[i] < HUGE_VAL))
				skip = 0;
	}
	/* Warm-up: wu[i] holds the forward of micro-batch i of the stage
	 * before, replaced in place by this stage's. */
	wu = xcalloc((size_t)S, sizeof(double));
	for (int s = 0; s < S - 1; s++) {
		long w = S - s - 1;

		for (long i = 0; i < w; i++) {
			lane[s] = s > 0 ? pass(lane[s], wu[i], xf[s - 1], f[s]) :
			    pass(lane[s], 0, 0, f[s]);
			wu[i] = lane[s];
		}
		fwd[s] = lane[s];
	}
	free(wu);
	for (long n = 0; n < m; n++) {
		double bnext = 0;

		for (int s = S - 1; s >= 0; s--) {
			if (S - s - 1 + n < m) {
				lane[s] = s > 0 ? pass(lane[s], fwd[s - 1],
				    xf[s - 1], f[s]) : pass(lane[s], 0, 0, f[s]);
				if (s + 1 < S)
					fwd[s] = lane[s];
			}
			lane[s] = s + 1 < S ? pass(lane[s], bnext, xb[s], b[s]) :
			    pass(lane[s], 0, 0, b[s]);
			bnext = lane[s];
		}
		if (!skip || n >= full)
			continue;
		for (int q = 1; q <= nh; q++) {
			long k = skip_steps(x, x + (size_t)(1 + (at + PIPE_HIST -
			    q) % PIPE_HIST) * nx, nx, q, full - n);

			if (k > 0) {
				n += k;
				nh = 0;
				run = 0;
				break;
			}
		}
		if (run == 0)
			base = lane[0];
		if (++run > PIPE_STEP_MAX) {
			/*
			 * No repeat in so many steps (stages whose lanes tie
			 * exactly drift against each other by an ulp a
			 * step): go on to the end of this binade at the mean
			 * growth of the first stage's lane over these, the
			 * one exception to the walk's bits.
			 */
			double D = (lane[0] - base) / (double)(run - 1), lo, hi,
			    top = 0;
			long k;

			for (size_t i = 0; i < nx; i++)
				top = fmax(top, x[i]);
			block_of(top, &lo, &hi);
			k = D > 0 && (hi - top) / D < (double)(full - n) ?
			    (long)((hi - top) / D) : full - n;
			for (size_t i = 0; i < nx; i++)
				x[i] += (double)k * D;
			n += k;
			nh = 0;
			run = 0;
		}
		/* The history: the state after step n - q is in slot
		 * (at - q) mod PIPE_HIST. */
		memcpy(x + (size_t)(1 + at) * nx, x, nx * sizeof(double));
		at = (at + 1) % PIPE_HIST;
		if (nh < PIPE_HIST)
			nh++;
	}
	for (int s = 0; s < S; s++)
		end = fmax(end, lane[s]);
	free(x);
	return end;
}

double
pipe_makespan(int S, long m, const double *f, const double *b,
    const double *xf, const double *xb, struct pipe_op *F, struct pipe_op *B)
{
	if (S < 1 || m < 1)
		return 0;
	if (F != NULL || B != NULL || m < S)
		return walk(S, 1, m, f, b, xf, xb, 1, NULL, F, B);
	return stepped(S, m, f, b, xf, xb);
}

double
pipe_period(int S, const double *f, const double *b, const double *xf,
    const double *xb)
{
	double p = 0;

	for (int s = 0; s < S; s++)
		p = fmax(p, pipe_lane(f[s] + b[s], s > 0 ? xf[s - 1] : 0,
		    s + 1 < S ? xb[s] : 0));
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

/*
 * The order of Megatron-LM's interleaved schedule (d98e8a64,
 * megatron/core/pipeline_parallel/schedules.py): get_schedule_table()
 * (lines 989-1016) lists the virtual micro-batches k = 0 .. m v - 1 as
 * (micro-batch, chunk) pairs, in groups of S micro-batches (the default
 * microbatch_group_size_per_vp_stage, model_parallel_config.py:567-568)
 * taken chunk by chunk; the last group holds what is left.
 */
static void
vp_table(int S, int v, long m, long *mb, int *ck)
{
	long k = 0;

	for (long lo = 0; lo < m; lo += S) {
		long hi = lo + S >= m ? m : lo + S;

		for (int c = 0; c < v; c++)
			for (long i = lo; i < hi; i++, k++) {
				mb[k] = i;
				ck[k] = c;
			}
	}
}

long
pipe_vwarmup(int S, int v, long m, int r)
{
	long w = v > 1 ? 2L * (S - r - 1) + (long)(v - 1) * S :
	    (long)(S - r - 1);

	return w < m * v ? w : m * v;
}

/*
 * The k-th operation of rank r (get_pp_rank_microbatches(), lines
 * 929-986, and the loops of forward_backward_pipelining_with_
 * interleaving()): w warm-up forwards, then a forward and a backward
 * alternately, then the remaining backwards.  Forward j is the table's
 * pair j, backward j its micro-batch in chunk v - 1 - its chunk
 * (get_model_chunk_id(), lines 1244-1249).  With v = 1 this is the
 * plain 1F1B order.
 */
static void
vop_of(int S, int v, long m, int r, long k, const long *mb, const int *ck,
    int *back, long *i, int *c)
{
	long n = m * v, w = pipe_vwarmup(S, v, m, r), j;

	if (k < w) {
		*back = 0;
		j = k;
	} else if (k < w + 2 * (n - w)) {
		*back = (int)((k - w) % 2);
		j = *back ? (k - w) / 2 : w + (k - w) / 2;
	} else {
		*back = 1;
		j = k - n;
	}
	*i = mb[j];
	*c = *back ? v - 1 - ck[j] : ck[j];
}

/*
 * The event simulation of pipe_vmakespan() and of pipe_makespan() with
 * F and B or few micro-batches (v 1, wait set): O(S v m) time and
 * memory.  Each round lets every rank run as many operations as have
 * their input; a rank blocks only on another, and the schedule never
 * deadlocks, so every round makes progress.  F and B (NULL: not wanted)
 * receive every operation, [o m + i] for micro-batch i of virtual stage
 * o.
 */
static double
walk(int S, int v, long m, const double *f, const double *b,
    const double *xf, const double *xb, int wait, double *bend,
    struct pipe_op *F, struct pipe_op *B)
{
	size_t n, at;
	double *fe, *be, *lane, *link, end = 0;
	long *next, *mb, left;
	int *ck;

	n = (size_t)S * (size_t)v * (size_t)m;
	fe = xcalloc(n, sizeof(double));
	be = xcalloc(n, sizeof(double));
	lane = xcalloc((size_t)S, sizeof(double));
	link = xcalloc((size_t)S, sizeof(double));
	next = xcalloc((size_t)S, sizeof(long));
	mb = xcalloc((size_t)m * (size_t)v, sizeof(long));
	ck = xcalloc((size_t)m * (size_t)v, sizeof(int));
	vp_table(S, v, m, mb, ck);
	for (size_t i = 0; i < n; i++)
		fe[i] = be[i] = -1;
	left = 2 * m * v * S;
	while (left > 0) {
		long ran = 0;

		for (int r = 0; r < S; r++) {
			while (next[r] < 2 * m * v) {
				int back, c, o;
				long i;
				double ready, x, start;
				int in = 1;

				vop_of(S, v, m, r, next[r], mb, ck, &back, &i,
				    &c);
				o = c * S + r;
				at = (size_t)o * (size_t)m + (size_t)i;
				if (!back && o > 0) {
					/* Virtual stage o - 1: the rank before,
					 * or the last rank's previous chunk. */
					ready = fe[at - (size_t)m];
					x = xf[o - 1];
				} else if (back && o + 1 < S * v) {
					ready = be[at + (size_t)m];
					x = xb[o];
				} else {
					ready = 0;
					x = 0;
					in = 0;
				}
				if (ready < 0)
					break;
				if (wait) {
					start = fmax(lane[r], ready) + x;
				} else if (in) {
					link[r] = fmax(link[r], ready) + x;
					start = fmax(lane[r], link[r]);
				} else {
					start = lane[r];
				}
				if (F != NULL || B != NULL) {
					struct pipe_op *op = back ? B : F;

					if (op != NULL) {
						op[at].post = lane[r];
						op[at].start = start;
						op[at].end = start + (back ?
						    b[o] : f[o]);
					}
				}
				if (back)
					lane[r] = be[at] = start + b[o];
				else
					lane[r] = fe[at] = start + f[o];
				next[r]++;
				ran++;
			}
		}
		left -= ran;
		if (ran == 0) {
			end = HUGE_VAL;
			break;
		}
	}
	for (int r = 0; r < S && end != HUGE_VAL; r++)
		end = fmax(end, lane[r]);
	for (int o = 0; o < S * v && bend != NULL; o++)
		bend[o] = be[(size_t)o * (size_t)m + (size_t)m - 1];
	free(fe);
	free(be);
	free(lane);
	free(link);
	free(next);
	free(mb);
	free(ck);
	return end;
}

double
pipe_vmakespan(int S, int v, long m, const double *f, const double *b,
    const double *xf, const double *xb, int wait, double *bend)
{
	if (S < 1 || v < 1 || m < 1)
		return 0;
	if ((double)S * v * (double)m > PIPE_VMAX)
		return -1;
	return walk(S, v, m, f, b, xf, xb, wait, bend, NULL, NULL);
}

double
pipe_vlane(int S, int v, const double *f, const double *b)
{
	double most = 0;

	for (int r = 0; r < S; r++) {
		double t = 0;

		for (int c = 0; c < v; c++)
			t += f[c * S + r] + b[c * S + r];
		most = fmax(most, t);
	}
	return most;
}
