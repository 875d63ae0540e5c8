/*
 * sched_gadget.c - the GADGET policy (sched_int.h): the utility of a job
 * in a slot, the greedy by marginal utility per GPU, and the stable
 * policy at an event (keep, serve the overdue, start, shrink for the
 * waiting, grow, reconsider).
 *
 * Stable greedy.  A running job keeps its GPUs.  Jobs are ordered by
 * gadget_key(): the remaining time at their best less all the time they
 * waited.  Waiting jobs (in that order, at most one per free GPU) share
 * the free GPUs greedily
 * by marginal utility per GPU: repeatedly the job whose next step (one
 * more GPU, doubling, its largest) adds the most utility per added GPU,
 * placed next to what it has, else on the fewest servers.  A waiting job
 * left without GPUs may take min_gpus GPUs from a running job that keeps
 * at least its own min_gpus, when its weighted wait saved (the time until
 * the first running job ends) beats the victim's weighted loss (restart_s
 * plus its slowdown over its remaining iterations).  Free GPUs left go to
 * a running job when its remaining time shrinks by more than restart_s.
 * Then several running jobs of a greater key may be suspended for one
 * (make_room()).  A job that got GPUs this event takes others free now
 * where it ends sooner, or, model-parallel, waits on when it ends sooner
 * by waiting for running jobs to end (settle(), soonest()).  A job whose
 * key fell to 0 (it waited its own remaining time) is aged: the first
 * aged one left waiting holds a reservation for its soonest end
 * (reserve()), so that no later job delays it.  A job that waited
 * --max-wait is served first.  Preemptive (by shrinking) and elastic.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb.h"
#include "sched_int.h"

#define GAIN_EPS 1e-12

double
sched_utility(struct sched *s, const struct sched_params *sp, int j,
    double left, const int *cnt, const int *prev)
{
	const struct sched_job *jb = &s->jobs[j];
	size_t nn = s->c->nnodes;
	int n = 0, launch = 0;
	double T, run, d;

	for (size_t v = 0; v < nn; v++) {
		n += cnt[v];
		launch |= cnt[v] != prev[v];
	}
	if (n == 0 || !(left > 0))
		return 0;
	T = sched_iter_time(s, jb->cls, cnt);
	run = sp->slot_s - (launch ? sp->restart_s : 0);
	if (!(run > 0) || !isfinite(T))
		return 0;
	d = run / T;
	if (d < left)
		return jb->weight * d / (sp->objective == SCHED_JCT ? left :
		    jb->iterations);
	if (sp->objective == SCHED_UTILITY)
		return jb->weight * left / jb->iterations;
	return jb->weight * (1 + 0.1 * (run - left * T) / sp->slot_s);
}

/* --- GADGET: greedy by marginal utility per GPU --------------------- */

struct greedy {
	struct sched *s;
	const struct sched_params *sp;
	const struct sched_slotprob *pb;
	size_t nn;
	int *cur, *n, *freev, *cand, *cn, *tmp, *avail;
	double *ucur, *ucand, *gain;
};

/* Consider target t with the GPUs in tmp; keep it when it is better. */
static void
consider(struct greedy *g, size_t a, int t, const int *cnt)
{
	int j = g->pb->job[a];
	double u = sched_utility(g->s, g->sp, j, g->pb->left[a], cnt,
	    g->pb->prev + a * g->nn);
	double gain = (u - g->ucur[a]) / (t - g->n[a]);

	/* Relative: a job with 1e15 iterations left gains ~1e-12 a slot. */
	if (u - g->ucur[a] > GAIN_EPS * u && gain > g->gain[a] *
	    (1 + GAIN_EPS)) {
		g->gain[a] = gain;
		g->ucand[a] = u;
		g->cn[a] = t;
		memcpy(g->cand + a * g->nn, cnt, g->nn * sizeof(int));
	}
}

/* The best next step of active job a under the current free GPUs. */
static void
candidate(struct greedy *g, size_t a)
{
	const struct sched_job *jb = &g->s->jobs[g->pb->job[a]];
	const struct sched_class *k = &g->s->classes[jb->cls];
	const int *cur = g->cur + a * g->nn, *prev = g->pb->prev + a * g->nn;
	int n = g->n[a], targets[64], nt = 0, pn = 0;

	g->gain[a] = 0;
	for (size_t v = 0; v < g->nn; v++) {
		pn += prev[v];
		g->avail[v] = g->freev[v] + cur[v];
	}
	/*
	 * Every size up to 16 more GPUs, beyond that one more, double, the
	 * powers of two, the previous size and the most: a step that pays a
	 * restart may only pay off a few GPUs further on.
	 */
	if (jb->max_gpus - n <= 16) {
		for (int t = n + 1; t <= jb->max_gpus; t++)
			targets[nt++] = t;
	} else {
		targets[nt++] = n + 1;
		targets[nt++] = 2 * n;
		for (int p2 = 1; p2 <= jb->max_gpus && nt < 60; p2 *= 2)
			targets[nt++] = p2;
	}
	targets[nt++] = pn;
	targets[nt++] = jb->max_gpus;
	for (int i = 0; i < nt; i++) {
		int t = targets[i], dup = 0;

		for (int h = 0; h < i; h++)
			dup |= targets[h] == t;
		if (dup || t <= n || t < jb->min_gpus || t > jb->max_gpus)
			continue;
		if (sched_place_extend(g->s, k, cur, prev, t - n, g->freev, g->tmp))
			consider(g, a, t, g->tmp);
		if (sched_place_fit(g->s, jb->cls, t, g->avail, prev, g->tmp))
			consider(g, a, t, g->tmp);
	}
}

double
sched_slot_greedy(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	struct greedy g;
	size_t na = pb->njobs, nn = s->c->nnodes;
	double total = 0;

	memset(&g, 0, sizeof(g));
	g.s = s;
	g.sp = sp;
	g.pb = pb;
	g.nn = nn;
	g.cur = out;
	memset(out, 0, na * nn * sizeof(int));
	g.n = xcalloc(na + 1, sizeof(int));
	g.cn = xcalloc(na + 1, sizeof(int));
	g.freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	g.cand = xcalloc(na * nn + 1, sizeof(int));
	g.tmp = xcalloc(nn + 1, sizeof(int));
	g.avail = xcalloc(nn + 1, sizeof(int));
	g.ucur = xcalloc(na + 1, sizeof(double));
	g.ucand = xcalloc(na + 1, sizeof(double));
	g.gain = xcalloc(na + 1, sizeof(double));
	for (size_t a = 0; a < na; a++)
		candidate(&g, a);
	for (;;) {
		size_t best = na;
		int ok = 1;

		for (size_t a = 0; a < na; a++)
			if (g.gain[a] > 0 && (best == na ||
			    g.gain[a] > g.gain[best]))
				best = a;
		if (best == na)
			break;
		/* Others took GPUs since it was computed: look again. */
		for (size_t v = 0; v < nn; v++)
			ok &= g.cand[best * nn + v] <= g.freev[v] +
			    g.cur[best * nn + v];
		if (!ok) {
			candidate(&g, best);
			continue;
		}
		for (size_t v = 0; v < nn; v++)
			g.freev[v] += g.cur[best * nn + v] - g.cand[best * nn + v];
		memcpy(g.cur + best * nn, g.cand + best * nn, nn * sizeof(int));
		g.n[best] = g.cn[best];
		g.ucur[best] = g.ucand[best];
		candidate(&g, best);
	}
	for (size_t a = 0; a < na; a++)
		total += g.ucur[a];
	free(g.n);
	free(g.cn);
	free(g.freev);
	free(g.cand);
	free(g.tmp);
	free(g.avail);
	free(g.ucur);
	free(g.ucand);
	free(g.gain);
	return total;
}

/* --- GADGET across slots: keep, start, shrink, grow ------------------ */

struct stable {
	struct sched *s;
	const struct sched_params *sp;
	const struct sched_slotprob *pb;
	size_t nn;
	int *out, *freev, *tmp, *best, *wcnt, *avail;
	char *shrunk;		/* per active job: shrunk in this event */
	const double *key;	/* per active job: gadget_key() */
	struct strbuf *log;
	double t0;
};

/* Seconds active job a needs to finish on cnt (HUGE_VAL: cannot run). */
static double
rem_s(const struct stable *st, size_t a, const int *cnt)
{
	int cls = st->s->jobs[st->pb->job[a]].cls;

	return st->pb->left[a] * sched_iter_time(st->s, cls, cnt);
}

static void
say(struct stable *st, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	if (st->log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sb_addf(st->log, "t=%.0f s: %s\n", st->t0, buf);
}

/* Waiting jobs wait[0..nw) (shortest first) share the free GPUs by the
 * greedy, at most one job per free GPU. */
static void
start_waiting(struct stable *st, const size_t *wait, size_t nw)
{
	size_t nn = st->nn, nf = (size_t)sched_gpus(st->freev, nn);
	struct sched_slotprob sb;
	int *job, *prev, *sub;
	double *left;

	if (nw > nf)
		nw = nf;
	if (nw == 0)
		return;
	job = xcalloc(nw + 1, sizeof(int));
	left = xcalloc(nw + 1, sizeof(double));
	prev = xcalloc(nw * nn + 1, sizeof(int));
	sub = xcalloc(nw * nn + 1, sizeof(int));
	for (size_t i = 0; i < nw; i++) {
		job[i] = st->pb->job[wait[i]];
		left[i] = st->pb->left[wait[i]];
	}
	memset(&sb, 0, sizeof(sb));
	sb.njobs = nw;
	sb.job = job;
	sb.left = left;
	sb.prev = prev;
	sb.free_gpus = st->freev;
	sched_slot_greedy(st->s, st->sp, &sb, sub);
	for (size_t i = 0; i < nw; i++) {
		memcpy(st->out + wait[i] * nn, sub + i * nn, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			st->freev[v] -= sub[i * nn + v];
	}
	free(job);
	free(left);
	free(prev);
	free(sub);
}

/*
 * Running job a gives up g GPUs on nodes job w fits on (from the nodes
 * where a has the fewest first) into st->tmp, and w gets g GPUs in
 * st->wcnt; *tw: w's time to finish on them.  The weighted seconds a
 * loses: suspended (g: all it has), it waits for w (whole slots) and
 * restarts; shrunk, it restarts and runs slower, either to its end or
 * until w ends and it grows back (a second restart), whichever is less.
 * HUGE_VAL when a cannot give them.
 */
static double
shrink_cost(struct stable *st, size_t a, size_t w, int g, double *tw)
{
	const struct sched_job *ja = &st->s->jobs[st->pb->job[a]];
	const struct sched_class *kw =
	    &st->s->classes[st->s->jobs[st->pb->job[w]].cls];
	const int *cur = st->out + a * st->nn;
	int n = sched_gpus(cur, st->nn), rel = 0;
	double R = st->sp->restart_s, S = st->sp->slot_s, t0, t1, c1, c2;

	if (st->shrunk[a] || st->key[a] <= 0 || g > n || (g < n &&
	    n - g < ja->min_gpus))
		return HUGE_VAL;
	memcpy(st->tmp, cur, st->nn * sizeof(int));
	while (rel < g) {
		int u = -1, take;

		for (size_t v = 0; v < st->nn; v++)
			if (kw->fits[v] && st->tmp[v] > 0 && (u < 0 ||
			    st->tmp[v] < st->tmp[u]))
				u = (int)v;
		if (u < 0)
			return HUGE_VAL;
		take = st->tmp[u] < g - rel ? st->tmp[u] : g - rel;
		st->tmp[u] -= take;
		rel += take;
	}
	for (size_t v = 0; v < st->nn; v++)
		st->avail[v] = st->freev[v] + cur[v] - st->tmp[v];
	if (!sched_place_pack(st->s, kw, g, st->avail, NULL, st->wcnt))
		return HUGE_VAL;
	*tw = rem_s(st, w, st->wcnt);
	if (!isfinite(*tw))
		return HUGE_VAL;
	if (g == n)
		return ja->weight * (R + S * ceil((R + *tw) / S));
	t0 = sched_iter_time(st->s, ja->cls, cur);
	t1 = sched_iter_time(st->s, ja->cls, st->tmp);
	c1 = R + st->pb->left[a] * (t1 - t0);
	c2 = 2 * R + (R + *tw) * (1 - t0 / t1);
	return ja->weight * (c1 < c2 ? c1 : c2);
}

/*
 * Waiting job w takes g GPUs from one running job (shrunk, or suspended
 * when g is all it has) when w's weighted gain beats that job's weighted
 * loss: w would otherwise wait tfree (until the first running job ends)
 * and then run its fastest way; here it starts now on g GPUs.
 */
static void
shrink_for(struct stable *st, size_t w, double tfree, const size_t *run,
    size_t nr)
{
	const struct sched_job *jw = &st->s->jobs[st->pb->job[w]];
	size_t nn = st->nn, va = (size_t)-1, no = 0;
	struct opt { size_t a; int g; double cost, tw; } *o;
	double fastest = HUGE_VAL, bg = 0, bc = 0, btw = 0;
	int from, bgp = 0;

	o = xcalloc(nr * 40 + 1, sizeof(*o));
	for (size_t i = 0; i < nr; i++) {
		int n = sched_gpus(st->out + run[i] * nn, nn), g, gs[40], ng = 0;

		for (g = jw->min_gpus; g <= jw->max_gpus && g <= n && ng < 36;
		    g = g < 16 ? g + 1 : 2 * g)
			gs[ng++] = g;
		if (n <= jw->max_gpus && n >= jw->min_gpus)
			gs[ng++] = n;
		for (int h = 0; h < ng; h++) {
			double tw, c = shrink_cost(st, run[i], w, gs[h], &tw);

			if (!isfinite(c))
				continue;
			o[no++] = (struct opt){ run[i], gs[h], c, tw };
			if (tw < fastest)
				fastest = tw;
		}
	}
	for (size_t i = 0; i < no; i++) {
		double gain = jw->weight * (tfree + fastest - o[i].tw) -
		    o[i].cost;

		if (gain > bg + GAIN_EPS) {
			bg = gain;
			va = o[i].a;
			bgp = o[i].g;
			bc = o[i].cost;
			btw = o[i].tw;
		}
	}
	free(o);
	if (va == (size_t)-1)
		return;
	shrink_cost(st, va, w, bgp, &btw);
	from = sched_gpus(st->out + va * nn, nn);
	for (size_t v = 0; v < nn; v++) {
		st->freev[v] += st->out[va * nn + v] - st->tmp[v] -
		    st->wcnt[v];
		st->out[va * nn + v] = st->tmp[v];
		st->out[w * nn + v] = st->wcnt[v];
	}
	st->shrunk[va] = 1;
	say(st, "job '%s' %s %d to %d GPUs for job '%s', which starts "
	    "now on %d (done in %.0f s) instead of in about %.0f s: gain "
	    "%.0f s against %.0f s that '%s' loses (weighted)",
	    st->s->jobs[st->pb->job[va]].id, from == bgp ? "suspended, from" :
	    "shrinks from", from, from - bgp, jw->id, bgp, btw, tfree,
	    bg + bc, bc, st->s->jobs[st->pb->job[va]].id);
}

/* Free GPUs to running job a when its remaining time shrinks by more
 * than the restart. */
static void
grow(struct stable *st, size_t a)
{
	const struct sched_job *jb = &st->s->jobs[st->pb->job[a]];
	const struct sched_class *k = &st->s->classes[jb->cls];
	int *cur = st->out + a * st->nn, n = sched_gpus(cur, st->nn), bt = 0;
	double r0 = rem_s(st, a, cur), bg = 0, r1;
	int targets[20], nt = 0;

	if (n >= jb->max_gpus || !isfinite(r0))
		return;
	for (int t = n + 1; t <= jb->max_gpus && t <= n + 16; t++)
		targets[nt++] = t;
	targets[nt++] = 2 * n;
	targets[nt++] = jb->max_gpus;
	for (int i = 0; i < nt; i++) {
		int t = targets[i];

		if (t <= n || t > jb->max_gpus || !sched_place_extend(st->s, k,
		    cur, cur, t - n, st->freev, st->tmp))
			continue;
		r1 = rem_s(st, a, st->tmp);
		if (r0 - r1 - st->sp->restart_s > bg + GAIN_EPS) {
			bg = r0 - r1 - st->sp->restart_s;
			bt = t;
			memcpy(st->best, st->tmp, st->nn * sizeof(int));
		}
	}
	if (bt == 0)
		return;
	for (size_t v = 0; v < st->nn; v++) {
		st->freev[v] -= st->best[v] - cur[v];
		cur[v] = st->best[v];
	}
	say(st, "job '%s' grows from %d to %d GPUs: its remaining %.0f s "
	    "become %.0f s, %.0f s more than the %g s restart", jb->id, n,
	    bt, r0, r0 - bg - st->sp->restart_s, bg, st->sp->restart_s);
}

/* Active job a's GPUs back to the free ones: suspended this event. */
static void
suspend(struct stable *st, size_t a)
{
	for (size_t v = 0; v < st->nn; v++) {
		st->freev[v] += st->out[a * st->nn + v];
		st->out[a * st->nn + v] = 0;
	}
	st->shrunk[a] = 1;
}

/*
 * Waiting job w has waited max_wait_s or more (overdue): it starts now on
 * its max_gpus or its min_gpus where free GPUs allow, else on GPUs of
 * running jobs that are not overdue themselves, suspended the longest
 * remaining first until it fits.  It waits on only when the overdue
 * jobs running hold GPUs it needs.  Returns 1 when it starts.
 */
static int
serve_overdue(struct stable *st, size_t w, const size_t *run, size_t nr)
{
	const struct sched_job *jw = &st->s->jobs[st->pb->job[w]];
	size_t nn = st->nn, *vic = xcalloc(nr + 1, sizeof(size_t)), nv = 0;
	double *key = xcalloc(nr + 1, sizeof(double));
	size_t *ord = xcalloc(nr + 1, sizeof(size_t));
	int ok = 0;

	if (sched_place_fit(st->s, jw->cls, jw->max_gpus, st->freev, NULL,
	    st->wcnt) || sched_place_fit(st->s, jw->cls, jw->min_gpus,
	    st->freev, NULL, st->wcnt)) {
		ok = 1;
		goto place;
	}
	memcpy(st->avail, st->freev, nn * sizeof(int));
	for (size_t i = 0; i < nr; i++) {
		size_t a = run[i];

		if (st->shrunk[a] || (st->pb->guarded && st->pb->guarded[a]) ||
		    sched_gpus(st->out + a * nn, nn) == 0)
			continue;
		for (size_t v = 0; v < nn; v++)
			st->avail[v] += st->out[a * nn + v];
		key[nv] = -rem_s(st, a, st->out + a * nn);
		vic[nv++] = a;
	}
	if (!sched_place_fit(st->s, jw->cls, jw->min_gpus, st->avail, NULL,
	    st->wcnt))
		goto out;
	sched_order(nv, key, ord);
	for (size_t i = 0; i < nv && !ok; i++) {
		size_t a = vic[ord[i]];

		suspend(st, a);
		say(st, "job '%s' suspended for job '%s', which has waited "
		    "%.0f s (--max-wait %g)", st->s->jobs[st->pb->job[a]].id,
		    jw->id, st->pb->waited[w], st->sp->max_wait_s);
		ok = sched_place_fit(st->s, jw->cls, jw->min_gpus, st->freev,
		    NULL, st->wcnt);
	}
place:
	if (ok) {
		for (size_t v = 0; v < nn; v++) {
			st->out[w * nn + v] = st->wcnt[v];
			st->freev[v] -= st->wcnt[v];
		}
		st->shrunk[w] = 1;	/* not shrunk again this event */
	}
out:
	free(vic);
	free(key);
	free(ord);
	return ok;
}

/*
 * Whether node u is the first with GPUs in avail[] of its GPU speed for
 * class k: the loops over "each speed in turn, the nodes at least as
 * fast" take each speed once, at that node.
 */
static int
speed_first(const struct sched_class *k, const int *avail, size_t u)
{
	if (avail[u] == 0)
		return 0;
	for (size_t w = 0; w < u; w++)
		if (avail[w] > 0 && k->x.speed[w] == k->x.speed[u])
			return 0;
	return 1;
}

/*
 * Reconsider running job a now that GPUs are free: it moves (or grows) to
 * its size or its max_gpus packed on its own and the free GPUs of the
 * nodes at least as fast as some GPU speed (each speed in turn, so the
 * packing may leave slow servers for fast ones), when its remaining time
 * there plus one restart is less than where it is.
 */
static void
reconsider(struct stable *st, size_t a)
{
	const struct sched_job *jb = &st->s->jobs[st->pb->job[a]];
	const struct sched_class *k = &st->s->classes[jb->cls];
	int *cur = st->out + a * st->nn, n = sched_gpus(cur, st->nn), bt = 0;
	int sizes[2] = { n, jb->max_gpus };
	double r0 = rem_s(st, a, cur), bg = 0;

	if (n == 0 || !isfinite(r0))
		return;
	for (size_t u = 0; u < st->nn; u++) {
		double thr = k->x.speed[u];

		if (!speed_first(k, st->freev, u))
			continue;
		for (size_t v = 0; v < st->nn; v++)
			st->avail[v] = k->x.speed[v] >= thr ? st->freev[v] +
			    cur[v] : 0;
		for (int i = 0; i < 2; i++) {
			double r1;

			if ((i == 1 && sizes[1] == n) || !sched_place_fit(st->s,
			    jb->cls, sizes[i], st->avail, NULL, st->tmp) ||
			    memcmp(st->tmp, cur, st->nn * sizeof(int)) == 0)
				continue;
			r1 = rem_s(st, a, st->tmp);
			if (r0 - r1 - st->sp->restart_s > bg + GAIN_EPS) {
				bg = r0 - r1 - st->sp->restart_s;
				bt = sizes[i];
				memcpy(st->best, st->tmp, st->nn * sizeof(int));
			}
		}
	}
	if (bt == 0)
		return;
	for (size_t v = 0; v < st->nn; v++) {
		st->freev[v] += cur[v] - st->best[v];
		cur[v] = st->best[v];
	}
	say(st, "job '%s' moves from %d GPUs to %d elsewhere: its remaining "
	    "%.0f s become %.0f s, %.0f s more than the %g s restart", jb->id,
	    n, bt, r0, r0 - bg - st->sp->restart_s, bg, st->sp->restart_s);
}

/*
 * The order of the active jobs, the least first: the remaining time on
 * max_gpus GPUs at the least iteration time (sched_iter_floor()) over
 * weight, less the seconds the job has waited.  A model-parallel job's
 * floor leaves out its pipeline and tensor-parallel traffic, which can
 * make it ten times too low: its time is at least that of its plan on
 * min_gpus times a power of two or max_gpus GPUs of the empty cluster
 * (sched_place_fit()), the least of those.
 */
static double
gadget_key(struct sched *s, const struct sched_slotprob *pb, size_t a)
{
	const struct sched_job *jb = &s->jobs[pb->job[a]];
	double T = sched_iter_floor(s, pb->job[a], jb->max_gpus), k;

	if (s->classes[jb->cls].mp) {
		size_t nn = s->c->nnodes;
		int *all = xcalloc(nn + 1, sizeof(int));
		int *cnt = xcalloc(nn + 1, sizeof(int));
		double best = HUGE_VAL, t;

		for (size_t v = 0; v < nn; v++)
			all[v] = s->c->nodes[v].gpus;
		for (int g = jb->min_gpus; ; g = 2 * g < jb->max_gpus ? 2 * g :
		    jb->max_gpus) {
			if (sched_place_fit(s, jb->cls, g, all, NULL, cnt) &&
			    (t = sched_iter_time(s, jb->cls, cnt)) < best)
				best = t;
			if (g >= jb->max_gpus)
				break;
		}
		if (isfinite(best) && best > T)
			T = best;
		free(all);
		free(cnt);
	}
	k = pb->left[a] * T / jb->weight;
	return k - (pb->age != NULL ? pb->age[a] : 0);
}

/*
 * The soonest active job w could end, in seconds from now: on the GPUs
 * it may take now (st->avail on entry, holders()), or on those and the
 * GPUs of the jobs hold[0..nh) as they end (their times ends[], at the
 * slot after); at each such time on its min_gpus times a power of two or
 * its max_gpus packed there (sched_place_fit()) on the nodes at least as
 * fast as each GPU speed in turn, plus a restart.  The best time into
 * *tp, its GPUs into cnt[] and the GPUs free then into freed[] (any may
 * be NULL); HUGE_VAL when it fits nowhere.  st->avail is used up.
 */
static double
soonest(struct stable *st, size_t w, const size_t *hold,
    const double *ends, size_t nh, double *tp, int *cnt, int *freed)
{
	const struct sched_job *jw = &st->s->jobs[st->pb->job[w]];
	const struct sched_class *k = &st->s->classes[jw->cls];
	size_t nn = st->nn, *ord = xcalloc(nh + 1, sizeof(size_t));
	double best = HUGE_VAL, S = st->sp->slot_s;
	int *fast = xcalloc(nn + 1, sizeof(int));

	sched_order(nh, ends, ord);
	for (size_t i = 0; i <= nh; i++) {
		double t = i == 0 ? 0 : S * ceil(ends[ord[i - 1]] / S);

		if (i > 0) {
			const int *c = st->out + hold[ord[i - 1]] * nn;

			if (!isfinite(t) || t >= best)
				break;
			for (size_t v = 0; v < nn; v++)
				st->avail[v] += c[v];
			/* Jobs that end in one slot free their GPUs together. */
			if (i < nh && S * ceil(ends[ord[i]] / S) <= t)
				continue;
		}
		/* Each GPU speed in turn: the nodes at least as fast. */
		for (size_t u = 0; u < nn; u++) {
			double thr = k->x.speed[u];

			if (!speed_first(k, st->avail, u))
				continue;
			for (size_t v = 0; v < nn; v++)
				fast[v] = k->x.speed[v] >= thr ? st->avail[v] : 0;
			for (int g = jw->min_gpus; ; g = 2 * g < jw->max_gpus ?
			    2 * g : jw->max_gpus) {
				double f;

				if (sched_place_fit(st->s, jw->cls, g, fast,
				    NULL, st->tmp) && (f = t +
				    st->sp->restart_s + rem_s(st, w, st->tmp)) <
				    best) {
					best = f;
					if (tp != NULL)
						*tp = t;
					if (cnt != NULL)
						memcpy(cnt, st->tmp,
						    nn * sizeof(int));
					if (freed != NULL)
						memcpy(freed, st->avail,
						    nn * sizeof(int));
				}
				if (g >= jw->max_gpus)
					break;
			}
		}
	}
	free(ord);
	free(fast);
	return best;
}

/*
 * For soonest(): st->avail := the GPUs free, w's own and those of the
 * jobs marked in as_free[] (or NULL); the other active jobs that hold
 * GPUs in st->out into hold[], their remaining seconds into ends[];
 * returns how many.
 */
static size_t
holders(struct stable *st, size_t w, const char *as_free, size_t *hold,
    double *ends)
{
	size_t nn = st->nn, nh = 0;

	for (size_t v = 0; v < nn; v++)
		st->avail[v] = st->freev[v] + st->out[w * nn + v];
	for (size_t a = 0; a < st->pb->njobs; a++) {
		const int *c = st->out + a * nn;

		if (a == w || sched_gpus(c, nn) == 0)
			continue;
		if (as_free != NULL && as_free[a]) {
			for (size_t v = 0; v < nn; v++)
				st->avail[v] += c[v];
			continue;
		}
		ends[nh] = rem_s(st, a, c);
		hold[nh++] = a;
	}
	return nh;
}

/*
 * Each waiting job that got GPUs this event (not by suspending others),
 * in order, once: its GPUs are tentative for the jobs before it.  When it
 * would end more than a slot sooner on other GPUs free now (counting those
 * of the waiting jobs after it, which give them up and are started again
 * later), it takes those instead; when sooner by waiting for jobs holding
 * GPUs to end (soonest()), it waits on and its GPUs go back to the free
 * ones (declined).  Returns how many wait on or gave up their GPUs.
 */
static int
settle(struct stable *st, const size_t *wait, size_t nw, char *seen,
    char *declined)
{
	size_t nn = st->nn, na = st->pb->njobs;
	size_t *hold = xcalloc(na + 1, sizeof(size_t));
	double *ends = xcalloc(na + 1, sizeof(double));
	int *cnt = xcalloc(nn + 1, sizeof(int)), n = 0;
	char *tent = xcalloc(na + 1, 1);
	int live = 0, *tc = xcalloc(nn + 1, sizeof(int));

	/* Some job runs: it holds GPUs on which it can run (all of them). */
	for (size_t a = 0; a < na && !live; a++) {
		const struct sched_job *ja = &st->s->jobs[st->pb->job[a]];

		memcpy(tc, st->out + a * nn, nn * sizeof(int));
		live = sched_gpus(tc, nn) > 0 && isfinite(rem_s(st, a, tc)) &&
		    (st->s->classes[ja->cls].mp || sched_trim(st->s, ja->cls,
		    tc) >= ja->min_gpus);
	}
	free(tc);

	for (size_t i = 0; i < nw; i++) {
		size_t w = wait[i], nh;
		int *c = st->out + w * nn;
		double now, f, t = 0;

		if (seen[w] || st->shrunk[w] || sched_gpus(c, nn) == 0)
			continue;
		seen[w] = 1;
		now = st->sp->restart_s + rem_s(st, w, c);
		memset(tent, 0, na);
		for (size_t k = i + 1; k < nw; k++)
			tent[wait[k]] = !st->shrunk[wait[k]];
		nh = holders(st, w, tent, hold, ends);
		f = soonest(st, w, hold, ends, nh, &t, cnt, NULL);
		if (!(f + st->sp->slot_s < now))
			continue;
		/*
		 * A data-parallel job rather starts and moves later; and
		 * one waits only while some job runs.
		 */
		if (t > 0 && (!live ||
		    !st->s->classes[st->s->jobs[st->pb->job[w]].cls].mp))
			continue;
		for (size_t v = 0; v < nn; v++) {
			st->freev[v] += c[v];
			c[v] = 0;
		}
		if (t > 0) {
			say(st, "job '%s' waits: on the GPUs free now it ends in "
			    "%.0f s, waiting %.0f s for more in %.0f s",
			    st->s->jobs[st->pb->job[w]].id, now, t, f);
			declined[w] = 1;
			n++;
			continue;
		}
		/* The waiting jobs after it give up GPUs it needs, the last
		 * first. */
		for (size_t k = nw; k-- > i + 1; ) {
			size_t x = wait[k];
			int *cx = st->out + x * nn, need = 0;

			for (size_t v = 0; v < nn; v++)
				need |= cnt[v] > st->freev[v] && cx[v] > 0;
			if (!tent[x] || !need)
				continue;
			for (size_t v = 0; v < nn; v++) {
				st->freev[v] += cx[v];
				cx[v] = 0;
			}
			seen[x] = 0;
			n++;
		}
		for (size_t v = 0; v < nn; v++) {
			st->freev[v] -= cnt[v];
			c[v] = cnt[v];
		}
		say(st, "job '%s' starts on %d GPUs instead: it ends in %.0f s, "
		    "not %.0f s", st->s->jobs[st->pb->job[w]].id,
		    sched_gpus(c, nn), f, now);
	}
	free(hold);
	free(ends);
	free(cnt);
	free(tent);
	return n;
}

/*
 * Waiting job w (key kw) is left without GPUs: running jobs with a
 * greater key that were not shrunk or started overdue this event are
 * suspended, the greatest key first, until w's min_gpus fit on their and
 * the free GPUs, when w's weighted wait saved (until enough running jobs
 * end: tstart) beats their weighted loss (a restart, and the whole slots
 * they wait while w runs).  w starts on its max_gpus there when they fit,
 * else on its min_gpus.
 */
static void
make_room(struct stable *st, size_t w, const size_t *run, size_t nr)
{
	const double *key = st->key;
	const struct sched_job *jw = &st->s->jobs[st->pb->job[w]];
	size_t nn = st->nn, nv = 0, *vic, *ord;
	double *vk, R = st->sp->restart_s, S = st->sp->slot_s;
	double tstart, cost = 0, tw;
	int fits = 0;

	vic = xcalloc(nr + 1, sizeof(size_t));
	ord = xcalloc(nr + 1, sizeof(size_t));
	vk = xcalloc(nr + 1, sizeof(double));
	/* When would w end were nothing preempted? */
	{
		size_t na = st->pb->njobs, nh;
		size_t *hold = xcalloc(na + 1, sizeof(size_t));
		double *he = xcalloc(na + 1, sizeof(double));

		nh = holders(st, w, NULL, hold, he);
		tstart = soonest(st, w, hold, he, nh, NULL, NULL, NULL);
		free(hold);
		free(he);
	}
	for (size_t i = 0; i < nr; i++) {
		size_t a = run[i];

		if (st->shrunk[a] || (st->pb->guarded && st->pb->guarded[a]) ||
		    sched_gpus(st->out + a * nn, nn) == 0 || !(key[a] > key[w]))
			continue;
		vk[nv] = -key[a];
		vic[nv++] = a;
	}
	sched_order(nv, vk, ord);
	memcpy(st->avail, st->freev, nn * sizeof(int));
	for (size_t i = 0; i < nv && !fits; i++) {
		size_t a = vic[ord[i]];

		for (size_t v = 0; v < nn; v++)
			st->avail[v] += st->out[a * nn + v];
		fits = sched_place_fit(st->s, jw->cls, jw->min_gpus, st->avail,
		    NULL, st->wcnt);
		nv = i + 1;
		if (fits)
			break;
	}
	if (!fits)
		goto out;
	if (!sched_place_fit(st->s, jw->cls, jw->max_gpus, st->avail, NULL,
	    st->best))
		memcpy(st->best, st->wcnt, nn * sizeof(int));
	tw = rem_s(st, w, st->best);
	if (!isfinite(tw))
		goto out;
	for (size_t i = 0; i < nv; i++)
		cost += st->s->jobs[st->pb->job[vic[ord[i]]]].weight *
		    (R + S * ceil((R + tw) / S));
	if (!(jw->weight * (tstart - R - tw) > cost))
		goto out;
	for (size_t i = 0; i < nv; i++) {
		size_t a = vic[ord[i]];

		suspend(st, a);
		say(st, "job '%s' suspended for job '%s', which starts now on "
		    "%d GPUs (done in %.0f s) and ends in %.0f s, not about "
		    "%.0f s", st->s->jobs[st->pb->job[a]].id, jw->id,
		    sched_gpus(st->best, nn), tw, R + tw, tstart);
	}
	for (size_t v = 0; v < nn; v++) {
		st->out[w * nn + v] = st->best[v];
		st->freev[v] -= st->best[v];
	}
	st->shrunk[w] = 1;
out:
	free(vic);
	free(ord);
	free(vk);
}

/*
 * Waiting job h holds a reservation.  Its time tres is when it would end
 * soonest (soonest()): on the GPUs free now (but those the waiting jobs
 * after h got this event), or on those and the GPUs of the jobs that hold
 * GPUs (the running ones and the waiting ones before h) as they end; with
 * extra GPUs beyond its size then on the nodes it fits on.  The waiting
 * jobs after h that got GPUs this event keep them, in order, when they
 * end by tres or their GPUs fit in the extra ones; the others wait, and
 * h starts when tres is now.
 */
static void
reserve(struct stable *st, size_t h, const size_t *wait, size_t nw)
{
	const struct sched_job *jh = &st->s->jobs[st->pb->job[h]];
	const struct sched_class *kh = &st->s->classes[jh->cls];
	size_t nn = st->nn, na = st->pb->njobs, nh, i0 = 0;
	size_t *hold = xcalloc(na + 1, sizeof(size_t));
	double *ends = xcalloc(na + 1, sizeof(double)), tres = HUGE_VAL;
	int *freed = xcalloc(nn + 1, sizeof(int)), have = 0, extra, gres;
	int fits = 1;
	char *after = xcalloc(na + 1, 1);

	while (i0 < nw && wait[i0] != h)
		i0++;
	for (size_t i = i0 + 1; i < nw; i++)
		after[wait[i]] = 1;
	nh = holders(st, h, after, hold, ends);
	free(after);
	if (!isfinite(soonest(st, h, hold, ends, nh, &tres, st->best,
	    freed))) {
		free(hold);
		free(ends);
		free(freed);
		return;
	}
	free(hold);
	free(ends);
	gres = sched_gpus(st->best, nn);
	for (size_t v = 0; v < nn; v++)
		have += kh->fits[v] ? freed[v] : 0;
	free(freed);
	extra = have - gres;
	/* The jobs before h keep what they got. */
	while (nw > 0 && *wait != h) {
		wait++;
		nw--;
	}
	for (size_t i = 0; i < nw; i++) {
		size_t w = wait[i];
		int *c = st->out + w * nn, n = 0;

		if (w == h || sched_gpus(c, nn) == 0 ||
		    st->sp->restart_s + rem_s(st, w, c) <= tres)
			continue;
		for (size_t v = 0; v < nn; v++)
			n += kh->fits[v] ? c[v] : 0;
		if (n <= extra) {
			extra -= n;
			continue;
		}
		for (size_t v = 0; v < nn; v++) {
			st->freev[v] += c[v];
			c[v] = 0;
		}
	}
	for (size_t v = 0; v < nn; v++)
		fits &= st->best[v] <= st->freev[v];
	if (fits)
		memcpy(st->wcnt, st->best, nn * sizeof(int));
	if (tres == 0 && (fits || sched_place_fit(st->s, jh->cls, gres,
	    st->freev, NULL, st->wcnt) || sched_place_fit(st->s, jh->cls,
	    jh->min_gpus, st->freev, NULL, st->wcnt))) {
		for (size_t v = 0; v < nn; v++) {
			st->out[h * nn + v] = st->wcnt[v];
			st->freev[v] -= st->wcnt[v];
		}
		return;
	}
	say(st, "job '%s' holds a reservation: %d GPUs in about %.0f s",
	    jh->id, gres, tres);
}

/* The most waiting jobs one event tries to shrink a running job for. */
#define SHRINK_TRIES 64

/*
 * The waiting jobs left without GPUs, the first SHRINK_TRIES: each may
 * take GPUs from one running job (shrink_for()), then from several
 * (make_room()).
 */
static void
make_way(struct stable *st, const size_t *wait, size_t nw, const size_t *run,
    size_t nr, double tfree, const char *declined)
{
	size_t nn = st->nn, tries = 0;

	for (size_t i = 0; i < nw && nr > 0 && tries < SHRINK_TRIES; i++)
		if (sched_gpus(st->out + wait[i] * nn, nn) == 0 &&
		    !declined[wait[i]]) {
			shrink_for(st, wait[i], tfree, run, nr);
			tries++;
		}
	tries = 0;
	for (size_t i = 0; i < nw && nr > 0 && tries < SHRINK_TRIES; i++)
		if (sched_gpus(st->out + wait[i] * nn, nn) == 0) {
			make_room(st, wait[i], run, nr);
			tries++;
		}
}

/* No job waits while its min_gpus are free: wait[] in order. */
static void
start_min(struct stable *st, const size_t *wait, size_t nw,
    const char *declined)
{
	size_t nn = st->nn;

	for (size_t i = 0; i < nw && sched_gpus(st->freev, nn) > 0; i++) {
		const struct sched_job *jw = &st->s->jobs[st->pb->job[wait[i]]];

		if (sched_gpus(st->out + wait[i] * nn, nn) > 0 ||
		    (declined != NULL && declined[wait[i]]) ||
		    !sched_place_fit(st->s, jw->cls, jw->min_gpus, st->freev,
		    NULL, st->wcnt))
			continue;
		for (size_t v = 0; v < nn; v++) {
			st->out[wait[i] * nn + v] = st->wcnt[v];
			st->freev[v] -= st->wcnt[v];
		}
	}
}

/*
 * GADGET at an event: keep, start the waiting, shrink for the ones left
 * waiting, grow into the GPUs still free; with pb->log, one line per
 * move at pb->t0.
 */
static void
gadget_decide(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	struct stable st;
	size_t na = pb->njobs, nn = s->c->nnodes, nr = 0, nw = 0;
	size_t *order = xcalloc(na + 1, sizeof(size_t)), *run, *wait;
	double *key = xcalloc(na + 1, sizeof(double)), tfree = HUGE_VAL;
	size_t head = (size_t)-1;
	char *declined, *seen;

	st = (struct stable){ .s = s, .sp = sp, .pb = pb, .nn = nn, .out = out,
	    .log = pb->log, .t0 = pb->t0 };
	st.freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	st.tmp = xcalloc(nn + 1, sizeof(int));
	st.best = xcalloc(nn + 1, sizeof(int));
	st.wcnt = xcalloc(nn + 1, sizeof(int));
	st.avail = xcalloc(nn + 1, sizeof(int));
	st.shrunk = xcalloc(na + 1, 1);
	declined = xcalloc(na + 1, 1);
	seen = xcalloc(na + 1, 1);
	run = xcalloc(na + 1, sizeof(size_t));
	wait = xcalloc(na + 1, sizeof(size_t));
	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++)
		key[a] = gadget_key(s, pb, a);
	st.key = key;
	sched_order(na, key, order);
	for (size_t i = 0; i < na; i++) {
		size_t a = order[i];
		const int *prev = pb->prev + a * nn;
		double r;

		if (sched_held(pb, a, nn) == 0) {
			wait[nw++] = a;
			continue;
		}
		run[nr++] = a;
		memcpy(out + a * nn, prev, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			st.freev[v] -= prev[v];
		if ((r = rem_s(&st, a, prev)) < tfree)
			tfree = r;
	}
	/* Overdue first (--max-wait), the longest waiting first. */
	if (sp->max_wait_s > 0 && pb->waited != NULL) {
		size_t no = 0, *over = xcalloc(nw + 1, sizeof(size_t)), keep = 0;
		double *wk = xcalloc(nw + 1, sizeof(double));
		size_t *wo = xcalloc(nw + 1, sizeof(size_t));

		for (size_t i = 0; i < nw; i++)
			if (pb->waited[wait[i]] >= sp->max_wait_s) {
				wk[no] = -pb->waited[wait[i]];
				over[no++] = wait[i];
			}
		sched_order(no, wk, wo);
		for (size_t i = 0; i < no; i++)
			serve_overdue(&st, over[wo[i]], run, nr);
		for (size_t i = 0; i < nw; i++)
			if (sched_gpus(out + wait[i] * nn, nn) == 0)
				wait[keep++] = wait[i];
		nw = keep;
		free(over);
		free(wk);
		free(wo);
	}
	start_waiting(&st, wait, nw);
	settle(&st, wait, nw, seen, declined);
	for (size_t i = 0; i < nw && head == (size_t)-1; i++)
		if (key[wait[i]] <= 0 && sched_gpus(out + wait[i] * nn, nn) == 0)
			head = wait[i];
	if (head != (size_t)-1)
		make_room(&st, head, run, nr);
	else
		make_way(&st, wait, nw, run, nr, tfree, declined);
	do
		start_min(&st, wait, nw, declined);
	while (settle(&st, wait, nw, seen, declined) > 0);
	if (head != (size_t)-1 && sched_gpus(out + head * nn, nn) == 0) {
		/* A reservation: no running job grows or moves. */
		reserve(&st, head, wait, nw);
		nr = 0;
	}
	for (size_t i = 0; i < nr; i++)
		if (!st.shrunk[run[i]] && sched_gpus(st.freev, nn) > 0)
			grow(&st, run[i]);
	for (size_t i = 0; i < nr && head == (size_t)-1; i++)
		if (!st.shrunk[run[i]] && sched_gpus(st.freev, nn) > 0)
			reconsider(&st, run[i]);
	free(st.freev);
	free(st.tmp);
	free(st.best);
	free(st.wcnt);
	free(st.avail);
	free(st.shrunk);
	free(declined);
	free(seen);
	free(run);
	free(wait);
	free(order);
	free(key);
}

const struct sched_policy sched_gadget = {
	"gadget", gadget_decide, NULL, SCHED_POL_MAX_WAIT | SCHED_POL_WAITS
};
