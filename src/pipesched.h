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
 * The closed form F + (m - 1) P in the pieces that the layer partition,
 * the data split and the search's cheap prices work with (partition.h,
 * split.h, search_group_am()), which know a stage's compute t = f + b
 * whole.  pipe_lane(): stage s's lane per micro-batch, its compute and
 * the two transfers it receives (xin = xf[s - 1], 0 on the first stage;
 * xback = xb[s], 0 on the last), whose largest is P.  pipe_fill_share():
 * stage s's share of F, its compute and both transfers of the boundary
 * after it.  pipe_closed(): F + (m - 1) P, 0 for m < 1.  Each adds in the
 * order written, so that every caller's sums agree to the last bit.
 */
static inline double
pipe_lane(double t, double xin, double xback)
{
	return t + xin + xback;
}

static inline double
pipe_fill_share(double t, double xf, double xb)
{
	return t + xf + xb;
}

static inline double
pipe_closed(double F, double P, long m)
{
	return m < 1 ? 0 : F + (double)(m - 1) * P;
}

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

/*
 * The interleaved 1F1B schedule (virtual pipeline stages, Megatron-LM's
 * --num-virtual-stages-per-pipeline-rank v).  Rank r of S holds v model
 * chunks; virtual stage o = c S + r (chunk c of rank r) runs after o - 1,
 * so the activations go round the ranks v times.  f[o] and b[o] are the
 * compute of virtual stage o, xf[o] the transfer from o to o + 1 and
 * xb[o] the one back (o < S v - 1; xf[c S + S - 1] is the last rank's
 * send to rank 0).  Each rank runs Megatron's order (pipesched.c,
 * vop_of()): pipe_vwarmup() forwards, then a forward and a backward
 * alternately, then the rest of the backwards.  With wait set the
 * transfers are on the receiving lane as above; without it they run under
 * compute, as Megatron's interleaved schedule posts its receives ahead
 * (--overlap-p2p-comm, on by default), one after the other on the
 * receiving rank's link in the order its operations need them: a
 * transfer starts at max(the link is free, its producer ended), and the
 * operation at max(its lane is free, the transfer ended).  With v = 1
 * the order is plain 1F1B, and with wait set the result is
 * pipe_makespan()'s to the last bit.  bend (NULL: not wanted) receives
 * the end of each virtual stage's last backward, S v of them.  The event
 * simulation takes O(S v m) time and memory: -1 when S v m > PIPE_VMAX.
 */
#define PIPE_VMAX 4194304.0
double pipe_vmakespan(int S, int v, long m, const double *f, const double *b,
    const double *xf, const double *xb, int wait, double *bend);
/* The forwards rank r runs before its first backward: min(m v, 2 (S - r
 * - 1) + (v - 1) S) for v > 1, min(m, S - r - 1) for v = 1. */
long pipe_vwarmup(int S, int v, long m, int r);
/* The most compute one rank does for one micro-batch, max_r sum_c (f +
 * b): m times it is a lower bound on pipe_vmakespan(). */
double pipe_vlane(int S, int v, const double *f, const double *b);

#endif
