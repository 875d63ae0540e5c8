/*
 * pipesched.h - the time of one pipeline's 1F1B schedule: its makespan,
 * its steady period and its fill.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pipeline of S stages runs m micro-batches in 1F1B order: stage s
 * (0-based) runs w = min(S - s - 1, m) forwards, then one forward and one
 * backward alternately, then its remaining backwards.  f[s] and b[s] are
 * the forward and backward compute of one micro-batch on stage s;
 * xf[s] is the transfer of the activations from stage s to s + 1 and
 * xb[s] that of their gradients back from s + 1 to s (s < S - 1).
 *
 * Transfer semantics ("receiver waits").  A point-to-point message is a
 * rendezvous: its bytes move only once the receiver has posted the
 * receive, and the receiver waits for them on its own lane; the sender
 * posts the send and goes on.  So an operation that needs a neighbour's
 * output starts its transfer at max(its lane is free, the neighbour's
 * operation has ended), and its compute starts after the transfer.  This
 * is what gloo and NCCL send/receive do (measured with the executor's
 * --trace: a receive posted one second after the matching send still
 * takes the whole transfer time) and what dlplan_exec.py does (isend,
 * blocking recv).
 *
 * Under these semantics every cycle of the schedule's event graph has a
 * mean no larger than the largest lane, so the steady period is exactly
 *
 *	P = max_s (f[s] + b[s] + xf[s - 1] + xb[s])
 *
 * (a stage's compute plus the two transfers it receives), and the fill of
 * one micro-batch is F = sum_s (f[s] + b[s]) + sum_s (xf[s] + xb[s]).
 * F + (m - 1) P is a good guess of the makespan for many micro-batches
 * but neither a bound nor exact; pipe_makespan() is exact.
 */
#ifndef DL_PIPESCHED_H
#define DL_PIPESCHED_H

/* Start and end of one forward or backward operation. */
struct pipe_op {
	double post;		/* the lane turned to it (waiting begins) */
	double start;		/* its compute began (input arrived) */
	double end;		/* its compute ended */
};

/*
 * The makespan of m >= 1 micro-batches (0 when m < 1).  When F and B are
 * not NULL they receive every operation, [s * m + i] for micro-batch i
 * of stage s: O(S m) time and memory.  Without them it is taken step by
 * step in O(S) memory, and the steady steps are skipped once the state
 * repeats, shifted, within a binade (pipesched.c, stepped()): the result
 * is the same to the last bit.  Each binade of the result costs a few
 * S steps of O(S) (1e12 micro-batches on 64 stages: milliseconds).  The
 * one exception: where no repeat comes in 16,384 steps (stages whose
 * lanes tie exactly can drift against each other by an ulp a step), the
 * rest of that binade grows at the mean rate of those steps, within
 * 3e-9 of the walk at 1e9 micro-batches on the 16-stage pipeline that
 * showed it (schedule of llama2-13b on philly-64).
 */
double pipe_makespan(int S, long m, const double *f, const double *b,
    const double *xf, const double *xb, struct pipe_op *F,
    struct pipe_op *B);
/* The steady period P and the fill F of the comment above. */
double pipe_period(int S, const double *f, const double *b,
    const double *xf, const double *xb);
double pipe_fill(int S, const double *f, const double *b, const double *xf,
    const double *xb);

/*
 * A lower bound on pipe_makespan() for transfers at least xf and xb (NULL:
 * 0): the largest of three kinds of paths through the schedule.  One
 * micro-batch down and back (the fill F); the way down to stage q, all 2m
 * passes of q's lane with what they receive, the way back up from q; and
 * one micro-batch down and back up to q, then q's passes after its first
 * backward (its other m - 1 backwards and the forwards not in its
 * warm-up), each with what it receives.  O(S); non-decreasing in m.
 */
double pipe_lower(int S, long m, const double *f, const double *b,
    const double *xf, const double *xb);

#endif
