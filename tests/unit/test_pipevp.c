/*
 * test_pipevp.c - the interleaved 1F1B schedule of pipesched.h
 * (pipe_vmakespan()) against Megatron-LM's own order and a longest-path
 * oracle, and against pipe_makespan() where the two must agree.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * ORDERS below are the operations of each rank as Megatron-LM d98e8a64
 * runs them: printed by tests/unit/vp-order.py, which calls Megatron's
 * own get_schedule_table() and get_pp_rank_microbatches()
 * (megatron/core/pipeline_parallel/schedules.py:929-1016) and follows the
 * loops of forward_backward_pipelining_with_interleaving() (lines 1573,
 * 1733-1749, 1971): "S v m r" and then Fi.c / Bi.c, micro-batch i of
 * chunk c.  The oracle reads those orders, not pipesched.c's, and finds
 * each operation's end by memoised recursion over its inputs: the
 * operation before it on its rank, and its producer (virtual stage o - 1
 * forward, o + 1 backward) whose transfer waits for the rank's previous
 * transfer (the link) unless transfers are on the lane.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipesched.h"
#include "tap.h"

static const char *const ORDERS[] = {
	"2 2 4 0 F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0",
	"2 2 4 1 F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 B1.0 F2.1 B2.1 F3.1 B3.1 B2.0 B3.0",
	"3 2 6 0 F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 F3.0 F4.0 B0.1 F5.0 B1.1 F3.1 B2.1 F4.1 B0.0 F5.1 B1.0 B2.0 B3.1 B4.1 B5.1 B3.0 B4.0 B5.0",
	"3 2 6 1 F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 B0.1 F3.0 B1.1 F4.0 B2.1 F5.0 B0.0 F3.1 B1.0 F4.1 B2.0 F5.1 B3.1 B4.1 B5.1 B3.0 B4.0 B5.0",
	"3 2 6 2 F0.0 F1.0 F2.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.0 B0.0 F4.0 B1.0 F5.0 B2.0 F3.1 B3.1 F4.1 B4.1 F5.1 B5.1 B3.0 B4.0 B5.0",
	"2 3 4 0 F0.0 F1.0 F0.1 F1.1 F0.2 F1.2 F2.0 B0.2 F3.0 B1.2 F2.1 B0.1 F3.1 B1.1 F2.2 B0.0 F3.2 B1.0 B2.2 B3.2 B2.1 B3.1 B2.0 B3.0",
	"2 3 4 1 F0.0 F1.0 F0.1 F1.1 F0.2 B0.2 F1.2 B1.2 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 F2.2 B2.2 F3.2 B3.2 B2.1 B3.1 B2.0 B3.0",
	"4 2 8 0 F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 F5.0 F6.0 B0.1 F7.0 B1.1 F4.1 B2.1 F5.1 B3.1 F6.1 B0.0 F7.1 B1.0 B2.0 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0",
	"4 2 8 1 F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 F3.1 F4.0 B0.1 F5.0 B1.1 F6.0 B2.1 F7.0 B3.1 F4.1 B0.0 F5.1 B1.0 F6.1 B2.0 F7.1 B3.0 B4.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0",
	"4 2 8 2 F0.0 F1.0 F2.0 F3.0 F0.1 F1.1 F2.1 B0.1 F3.1 B1.1 F4.0 B2.1 F5.0 B3.1 F6.0 B0.0 F7.0 B1.0 F4.1 B2.0 F5.1 B3.0 F6.1 B4.1 F7.1 B5.1 B6.1 B7.1 B4.0 B5.0 B6.0 B7.0",
	"4 2 8 3 F0.0 F1.0 F2.0 F3.0 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 F4.0 B0.0 F5.0 B1.0 F6.0 B2.0 F7.0 B3.0 F4.1 B4.1 F5.1 B5.1 F6.1 B6.1 F7.1 B7.1 B4.0 B5.0 B6.0 B7.0",
	"3 3 3 0 F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 F0.2 F1.2 F2.2 B0.2 B1.2 B2.2 B0.1 B1.1 B2.1 B0.0 B1.0 B2.0",
	"3 3 3 1 F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 F0.2 F1.2 F2.2 B0.2 B1.2 B2.2 B0.1 B1.1 B2.1 B0.0 B1.0 B2.0",
	"3 3 3 2 F0.0 F1.0 F2.0 F0.1 F1.1 F2.1 F0.2 B0.2 F1.2 B1.2 F2.2 B2.2 B0.1 B1.1 B2.1 B0.0 B1.0 B2.0",
};

#define MAXO 64

struct vorc {
	int S, v, m, wait;
	const double *f, *b, *xf, *xb;
	int n[8];			/* operations of rank r */
	int back[8][MAXO], mb[8][MAXO], ck[8][MAXO];
	double end[8][MAXO], lend[8][MAXO];
	int done[8][MAXO];
};

static double vend(struct vorc *o, int r, int k);

/* When rank r's link is free after its operation k: the end of the last
 * transfer into r up to k (0 before any). */
static double
link_end(struct vorc *o, int r, int k)
{
	if (k < 0)
		return 0;
	vend(o, r, k);
	return o->lend[r][k];
}

static int
pos_of(const struct vorc *o, int r, int back, int i, int c)
{
	for (int k = 0; k < o->n[r]; k++)
		if (o->back[r][k] == back && o->mb[r][k] == i &&
		    o->ck[r][k] == c)
			return k;
	return -1;
}

static double
vend(struct vorc *o, int r, int k)
{
	int back = o->back[r][k], i = o->mb[r][k], c = o->ck[r][k];
	int vs = c * o->S + r, last = o->S * o->v - 1, in = 1;
	double lane, ready = 0, x = 0, start;

	if (o->done[r][k])
		return o->end[r][k];
	lane = k > 0 ? vend(o, r, k - 1) : 0;
	if (!back && vs > 0) {
		int pr = (vs - 1) % o->S, pc = (vs - 1) / o->S;

		ready = vend(o, pr, pos_of(o, pr, 0, i, pc));
		x = o->xf[vs - 1];
	} else if (back && vs < last) {
		int pr = (vs + 1) % o->S, pc = (vs + 1) / o->S;

		ready = vend(o, pr, pos_of(o, pr, 1, i, pc));
		x = o->xb[vs];
	} else
		in = 0;
	o->lend[r][k] = link_end(o, r, k - 1);
	if (o->wait)
		start = fmax(lane, ready) + x;
	else if (in) {
		o->lend[r][k] = fmax(o->lend[r][k], ready) + x;
		start = fmax(lane, o->lend[r][k]);
	} else
		start = lane;
	o->end[r][k] = start + (back ? o->b[vs] : o->f[vs]);
	o->done[r][k] = 1;
	return o->end[r][k];
}

/* Read the orders of (S, v, m) from ORDERS; 0 when they are not there. */
static int
load(struct vorc *o, int S, int v, int m)
{
	int found = 0;

	memset(o->n, 0, sizeof(o->n));
	memset(o->done, 0, sizeof(o->done));
	for (size_t l = 0; l < sizeof(ORDERS) / sizeof(ORDERS[0]); l++) {
		int s, vv, mm, r, used;
		const char *p = ORDERS[l];

		if (sscanf(p, "%d %d %d %d%n", &s, &vv, &mm, &r, &used) != 4 ||
		    s != S || vv != v || mm != m)
			continue;
		p += used;
		found++;
		while (*p == ' ') {
			char kind;
			int i, c, k = o->n[r]++;

			if (sscanf(p, " %c%d.%d%n", &kind, &i, &c, &used) != 3)
				return 0;
			o->back[r][k] = kind == 'B';
			o->mb[r][k] = i;
			o->ck[r][k] = c;
			p += used;
		}
	}
	o->S = S;
	o->v = v;
	o->m = m;
	return found == S;
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
	static const int cases[][3] = { { 2, 2, 4 }, { 3, 2, 6 }, { 2, 3, 4 },
	    { 4, 2, 8 }, { 3, 3, 3 } };
	unsigned st = 11;
	int bad = 0, badv1 = 0, badlb = 0, tried = 0;

	for (size_t cs = 0; cs < sizeof(cases) / sizeof(cases[0]); cs++) {
		int S = cases[cs][0], v = cases[cs][1], m = cases[cs][2];
		static struct vorc o;

		if (!ok(load(&o, S, v, m), "Megatron's order of S %d, v %d, "
		    "m %d is in ORDERS", S, v, m))
			continue;
		for (int t = 0; t < 200; t++) {
			double f[32], b[32], xf[32], xb[32], want = 0, got;

			for (int i = 0; i < S * v; i++) {
				f[i] = rnd(&st);
				b[i] = 2 * rnd(&st);
				xf[i] = t % 3 == 0 ? 0 : rnd(&st) / 2;
				xb[i] = t % 3 == 0 ? 0 : rnd(&st) / 2;
			}
			o.f = f;
			o.b = b;
			o.xf = xf;
			o.xb = xb;
			o.wait = t % 2;
			memset(o.done, 0, sizeof(o.done));
			for (int r = 0; r < S; r++)
				want = fmax(want, vend(&o, r, o.n[r] - 1));
			got = pipe_vmakespan(S, v, m, f, b, xf, xb, o.wait, NULL);
			bad += got != want;
			badlb += !o.wait && m * pipe_vlane(S, v, f, b) >
			    got * (1 + 1e-12);
			tried++;
		}
	}
	ok(bad == 0, "the interleaved makespan is the oracle's to the last "
	    "bit in %d of %d random pipelines (Megatron's order)",
	    tried - bad, tried);
	ok(badlb == 0, "m times the busiest rank's compute never exceeds it "
	    "(%d exceed)", badlb);
	/*
	 * Four equal stages of 3 s a micro-batch (a forward 1 s, a backward
	 * 2 s), no transfers, 8 micro-batches: plain 1F1B takes (m + S - 1) 3
	 * = 33 s; in two chunks a rank of 1.5 s the bubble is S - 1 chunks,
	 * 8 x 3 + 3 x 1.5 = 28.5 s.
	 */
	{
		double f1[4] = { 1, 1, 1, 1 }, b1[4] = { 2, 2, 2, 2 }, f2[8],
		    b2[8], z[8] = { 0 };

		for (int i = 0; i < 8; i++) {
			f2[i] = 0.5;
			b2[i] = 1;
		}
		is_near(pipe_vmakespan(4, 1, 8, f1, b1, z, z, 0, NULL), 33, 1e-12,
		    "plain 1F1B of 4 equal stages, 8 micro-batches: 33 s");
		is_near(pipe_vmakespan(4, 2, 8, f2, b2, z, z, 0, NULL), 28.5, 1e-12,
		    "two chunks a rank: 24 s of work and 4.5 s of bubble");
	}
	/* v = 1 with transfers on the lane is pipe_makespan() itself. */
	for (int t = 0; t < 2000; t++) {
		int S = 1 + (int)(rnd(&st) * 6);
		long m = 1 + (long)(rnd(&st) * 30);
		double f[8], b[8], xf[8], xb[8];

		for (int i = 0; i < S; i++) {
			f[i] = rnd(&st);
			b[i] = rnd(&st) * 3;
			xf[i] = rnd(&st) / 3;
			xb[i] = rnd(&st) / 3;
		}
		badv1 += pipe_vmakespan(S, 1, m, f, b, xf, xb, 1, NULL) !=
		    pipe_makespan(S, m, f, b, xf, xb, NULL, NULL);
	}
	ok(badv1 == 0, "one chunk, transfers on the lane: pipe_makespan()'s "
	    "bits (%d of 2000 differ)", badv1);
	ok(pipe_vmakespan(64, 64, 4096, NULL, NULL, NULL, NULL, 0, NULL) < 0,
	    "more than PIPE_VMAX operations: -1, nothing simulated");
	is_int(pipe_vwarmup(4, 2, 8, 0), 10, "rank 0 of 4, v 2: 2 (S - 1) + S "
	    "warm-up forwards");
	is_int(pipe_vwarmup(4, 1, 8, 0), 3, "v 1: S - 1");
	return done_testing();
}
