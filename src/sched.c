/*
 * sched.c - the policies of sched.h and the slot-by-slot simulation.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb.h"
#include "sched.h"

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

	if (st->shrunk[a] || g > n || (g < n && n - g < ja->min_gpus))
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

/* The most waiting jobs one event tries to shrink a running job for. */
#define SHRINK_TRIES 64

/*
 * GADGET at an event (sched.h): keep, start the waiting, shrink for the
 * ones left waiting, grow into the GPUs still free.
 */
static void
stable_slot(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out, struct strbuf *log,
    double t0)
{
	struct stable st;
	size_t na = pb->njobs, nn = s->c->nnodes, nr = 0, nw = 0, tries = 0;
	size_t *order = xcalloc(na + 1, sizeof(size_t)), *run, *wait;
	double *key = xcalloc(na + 1, sizeof(double)), tfree = HUGE_VAL;

	st = (struct stable){ .s = s, .sp = sp, .pb = pb, .nn = nn, .out = out,
	    .log = log, .t0 = t0 };
	st.freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	st.tmp = xcalloc(nn + 1, sizeof(int));
	st.best = xcalloc(nn + 1, sizeof(int));
	st.wcnt = xcalloc(nn + 1, sizeof(int));
	st.avail = xcalloc(nn + 1, sizeof(int));
	st.shrunk = xcalloc(na + 1, 1);
	run = xcalloc(na + 1, sizeof(size_t));
	wait = xcalloc(na + 1, sizeof(size_t));
	memset(out, 0, na * nn * sizeof(int));
	/* The shortest first: remaining iterations on one GPU over weight. */
	for (size_t a = 0; a < na; a++)
		key[a] = pb->left[a] * sched_iter_floor(s, pb->job[a], 1) /
		    s->jobs[pb->job[a]].weight;
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
	start_waiting(&st, wait, nw);
	for (size_t i = 0; i < nw && nr > 0 && tries < SHRINK_TRIES; i++)
		if (sched_gpus(out + wait[i] * nn, nn) == 0) {
			shrink_for(&st, wait[i], tfree, run, nr);
			tries++;
		}
	for (size_t i = 0; i < nr; i++)
		if (!st.shrunk[run[i]] && sched_gpus(st.freev, nn) > 0)
			grow(&st, run[i]);
	free(st.freev);
	free(st.tmp);
	free(st.best);
	free(st.wcnt);
	free(st.avail);
	free(st.shrunk);
	free(run);
	free(wait);
	free(order);
	free(key);
}

/* --- the simulation ------------------------------------------------------ */

struct sim {
	struct sched *s;
	const struct sched_params *sp;
	struct sched_result *r;
	int policy;
	size_t nn, cap;
	int *prevcnt;		/* per job x node: GPUs held last slot */
	int **pnode, **pgpu, *pn;	/* per job: the GPUs held last slot */
	double *left;
	int *owner, *goff;	/* per GPU (goff[node] + local): job, -1 */
	size_t *act, na;	/* active jobs, by arrival */
	size_t *run, nrun;	/* the jobs that run, their GPUs per node: */
	int *runcnt;		/* nrun x nn */
	double *runt;		/* nrun: their iteration times */
	int changed;		/* an event for the next slot */
	int ended;		/* a job ended in this slot */
	struct sched_slot scr;	/* forget: the one record, its GPUs in */
	int *pool;		/* node[], gpu[] of each entry in turn */
	long pool_used;
	struct strbuf log;
	int *stop;		/* jobs that lost their GPUs at this event */
	size_t nstop;
	int rc;			/* the emit callback's */
	struct dl_err *e;
};

/* Concrete GPUs for runcnt: a job keeps its previous GPUs on a node as
 * far as its count there allows; the rest come lowest first. */
static void
assign_gpus(struct sim *m)
{
	const struct dl_cluster *c = m->s->c;
	size_t nn = m->nn;
	int *kept = xcalloc(nn + 1, sizeof(int));

	for (long i = 0; i < m->goff[nn]; i++)
		m->owner[i] = -1;
	for (size_t a = 0; a < m->nrun; a++) {
		size_t j = m->run[a];

		memset(kept, 0, nn * sizeof(int));
		for (int i = 0; i < m->pn[j]; i++) {
			int v = m->pnode[j][i];

			if (kept[v] < m->runcnt[a * nn + v]) {
				kept[v]++;
				m->owner[m->goff[v] + m->pgpu[j][i]] = (int)j;
			}
		}
	}
	for (size_t a = 0; a < m->nrun; a++)
		for (size_t v = 0; v < nn; v++) {
			int have = 0, j = (int)m->run[a];

			for (int g = 0; g < c->nodes[v].gpus; g++)
				have += m->owner[m->goff[v] + g] == j;
			for (int g = 0; g < c->nodes[v].gpus &&
			    have < m->runcnt[a * nn + v]; g++)
				if (m->owner[m->goff[v] + g] < 0) {
					m->owner[m->goff[v] + g] = j;
					have++;
				}
		}
	free(kept);
}

/* The entry of job j (slot index k), its progress and statistics. */
static void
run_job(struct sim *m, long k, struct sched_entry *en, size_t j,
    const int *cnt, double T)
{
	struct sched_jobstat *st = &m->r->jobs[j];
	const struct sched_params *sp = m->sp;
	double t0 = (double)k * sp->slot_s, lost, d, held = st->gpu_s;
	int launch = en->ngpus != m->pn[j];

	for (int i = 0; i < en->ngpus && !launch; i++)
		launch = en->node[i] != m->pnode[j][i] ||
		    en->gpu[i] != m->pgpu[j][i];
	en->launch = launch;
	en->iter_s = T;
	lost = launch ? sp->restart_s : 0;
	if (lost > sp->slot_s)
		lost = sp->slot_s;
	d = (sp->slot_s - lost) / en->iter_s;
	if (launch) {
		st->launches++;
		if (st->start_s < 0) {
			st->start_s = t0;
			st->first_slot = (long)m->r->nslots - 1;
		}
	}
	if (d >= m->left[j]) {
		en->iters = m->left[j];
		en->run_s = m->left[j] * en->iter_s;
		en->finished = 1;
		st->finish_s = t0 + lost + en->run_s;
		st->gpu_s += en->ngpus * (lost + en->run_s);
		st->held_s += lost + en->run_s;
		m->left[j] = 0;
		m->changed = 1;
		m->ended = 1;
	} else {
		en->iters = d;
		en->run_s = sp->slot_s - lost;
		st->gpu_s += en->ngpus * sp->slot_s;
		st->held_s += sp->slot_s;
		m->left[j] -= d;
	}
	/* Tiresias decides again when a job changes queue. */
	if (m->policy == SCHED_LAS && ((held < SCHED_LAS_Q1) !=
	    (st->gpu_s < SCHED_LAS_Q1) || (held < SCHED_LAS_Q2) !=
	    (st->gpu_s < SCHED_LAS_Q2)))
		m->changed = 1;
	st->done += en->iters;
	if (!launch)
		return;
	/* What it holds now is its "previous" allocation next slot. */
	free(m->pnode[j]);
	free(m->pgpu[j]);
	m->pnode[j] = xmemdup(en->node, en->ngpus, sizeof(int));
	m->pgpu[j] = xmemdup(en->gpu, en->ngpus, sizeof(int));
	m->pn[j] = en->ngpus;
	memcpy(m->prevcnt + j * m->nn, cnt, m->nn * sizeof(int));
}

/*
 * A new record for slots k .. k+repeat-1, one entry per running job; with
 * forget, the one scratch record, its GPUs in one pool (a job runs on at
 * least one GPU, so the entries and their GPUs fit the cluster's).
 */
static struct sched_slot *
new_slot(struct sim *m, long k, long repeat)
{
	struct sched_result *r = m->r;
	struct sched_slot *sl = &m->scr;

	if (!m->sp->forget) {
		if (r->nslots == m->cap)
			r->slots = xgrow(r->slots, &m->cap, r->nslots + 1,
			    sizeof(*r->slots));
		sl = &r->slots[r->nslots++];
		memset(sl, 0, sizeof(*sl));
		sl->e = xcalloc(m->nrun + 1, sizeof(*sl->e));
	} else {
		memset(sl->e, 0, m->nrun * sizeof(*sl->e));
		m->pool_used = 0;
	}
	sl->index = k;
	sl->repeat = repeat;
	sl->n = m->nrun;
	return sl;
}

/* Room for n GPUs of entry en, a copy of node[] and gpu[] unless NULL. */
static void
entry_gpus(struct sim *m, struct sched_entry *en, int n, const int *node,
    const int *gpu)
{
	if (m->sp->forget) {
		en->node = m->pool + 2 * m->pool_used;
		en->gpu = en->node + n;
		m->pool_used += n;
	} else {
		en->node = xcalloc(n + 1, sizeof(int));
		en->gpu = xcalloc(n + 1, sizeof(int));
	}
	if (node != NULL) {
		memcpy(en->node, node, n * sizeof(int));
		memcpy(en->gpu, gpu, n * sizeof(int));
	}
}

/* Hand slot record sl to the emit callback when a job launched, ended or
 * stopped in it. */
static void
emit(struct sim *m, const struct sched_slot *sl)
{
	int change = m->nstop > 0;

	for (size_t a = 0; a < sl->n && !change; a++)
		change = sl->e[a].launch || sl->e[a].finished;
	if (m->sp->emit != NULL && change && m->rc == DL_OK)
		m->rc = m->sp->emit(m->sp->emit_arg, sl, m->stop, m->nstop,
		    m->e);
	m->nstop = 0;
}

/* Record slot k for the jobs in run[] (fresh: their GPUs were decided in
 * this slot); drop the jobs that finished from run[] and act[]. */
static void
record_slot(struct sim *m, long k, int fresh)
{
	struct sched_slot *sl;
	size_t keep = 0, nn = m->nn;

	if (m->nrun == 0) {
		struct sched_slot none = { k, 1, 0, NULL };

		emit(m, &none);
		return;
	}
	if (fresh)
		assign_gpus(m);
	sl = new_slot(m, k, 1);
	for (size_t a = 0; a < m->nrun; a++) {
		size_t j = m->run[a];
		struct sched_entry *en = &sl->e[a];
		int n = sched_gpus(m->runcnt + a * nn, nn), i = 0;

		en->job = (int)j;
		en->ngpus = n;
		if (fresh) {
			entry_gpus(m, en, n, NULL, NULL);
			for (size_t v = 0; v < nn; v++)
				for (int g = 0; g < m->s->c->nodes[v].gpus; g++)
					if (m->owner[m->goff[v] + g] == (int)j) {
						en->node[i] = (int)v;
						en->gpu[i++] = g;
					}
		} else {
			entry_gpus(m, en, n, m->pnode[j], m->pgpu[j]);
		}
		run_job(m, k, en, j, m->runcnt + a * nn, m->runt[a]);
	}
	emit(m, sl);
	if (!m->ended)
		return;
	m->ended = 0;
	for (size_t a = 0; a < m->nrun; a++)
		if (m->left[m->run[a]] > 0) {
			memmove(m->runcnt + keep * nn, m->runcnt + a * nn,
			    nn * sizeof(int));
			m->runt[keep] = m->runt[a];
			m->run[keep++] = m->run[a];
		}
	m->nrun = keep;
	keep = 0;
	for (size_t a = 0; a < m->na; a++)
		if (m->left[m->act[a]] > 0)
			m->act[keep++] = m->act[a];
	m->na = keep;
}

/*
 * How many slots from k on are alike for the jobs that run: before the
 * next arrival, before any job's last slot, before a tiresias job's
 * slot that crosses a queue threshold, and within max_slots.
 */
static long
plain_slots(struct sim *m, long k, size_t ai)
{
	const struct sched *s = m->s;
	double S = m->sp->slot_s, span = (double)(SCHED_MAX_SLOTS - k);

	if (ai < s->njobs && ceil(s->jobs[ai].arrival_s / S) - k < span)
		span = ceil(s->jobs[ai].arrival_s / S) - k;
	if (m->sp->max_slots > 0 && m->sp->max_slots - k < span)
		span = (double)(m->sp->max_slots - k);
	for (size_t a = 0; a < m->nrun; a++) {
		size_t j = m->run[a];
		const int *cnt = m->runcnt + a * m->nn;
		double d = S / m->runt[a];
		double p = floor(m->left[j] / d * (1 - 1e-12)), q, held;

		if (p < span)
			span = p;
		if (m->policy != SCHED_LAS)
			continue;
		held = m->r->jobs[j].gpu_s;
		q = held < SCHED_LAS_Q1 ? SCHED_LAS_Q1 : SCHED_LAS_Q2;
		q = ceil((q - held) / (sched_gpus(cnt, m->nn) * S)) - 1;
		if (held < SCHED_LAS_Q2 && q < span)
			span = q;
	}
	return span > 0 ? (long)span : 0;
}

/* Slots k .. k+span-1, alike: one record, the jobs' progress times span. */
static void
record_span(struct sim *m, long k, long span)
{
	struct sched_result *r = m->r;
	struct sched_slot *sl;
	double S = m->sp->slot_s;

	sl = new_slot(m, k, span);
	for (size_t a = 0; a < m->nrun; a++) {
		size_t j = m->run[a];
		struct sched_entry *en = &sl->e[a];
		struct sched_jobstat *st = &r->jobs[j];

		en->job = (int)j;
		en->ngpus = m->pn[j];
		entry_gpus(m, en, m->pn[j], m->pnode[j], m->pgpu[j]);
		en->iter_s = m->runt[a];
		en->run_s = S;
		en->iters = S / en->iter_s;
		m->left[j] -= (double)span * en->iters;
		st->done += (double)span * en->iters;
		st->gpu_s += (double)span * en->ngpus * S;
		st->held_s += (double)span * S;
	}
}

/*
 * The summary of a run that ended at end_s.  The makespan runs from the
 * first arrival of a job that ran to the last finish; a job's wait is
 * the time it was active without GPUs, up to its end or end_s.
 */
static void
summarise(struct sched *s, struct sched_result *r, long nslots, double end_s)
{
	struct sched_summary *u = &r->sum;
	double *jct = xcalloc(s->njobs + 1, sizeof(double)), gs = 0, last = 0;
	double first = HUGE_VAL;
	size_t nf = 0;

	memset(u, 0, sizeof(*u));
	for (size_t j = 0; j < s->njobs; j++) {
		struct sched_jobstat *st = &r->jobs[j];
		double arr = s->jobs[j].arrival_s, end;

		gs += st->gpu_s;
		u->restarts += st->restarts = st->launches > 1 ?
		    st->launches - 1 : 0;
		if (s->jobs[j].why != NULL) {
			u->unschedulable++;
			continue;
		}
		end = st->finish_s >= 0 ? st->finish_s : end_s > arr ? end_s :
		    arr;
		st->wait_s = end - arr - st->held_s;
		if (st->wait_s < 0)
			st->wait_s = 0;
		if (st->wait_s > u->max_wait_s)
			u->max_wait_s = st->wait_s;
		if (st->start_s >= 0 && arr < first)
			first = arr;
		if (st->finish_s < 0) {
			u->unfinished++;
			continue;
		}
		jct[nf++] = st->finish_s - arr;
		u->avg_jct_s += jct[nf - 1];
		if (st->finish_s > last)
			last = st->finish_s;
	}
	if (nf > 0) {
		qsort(jct, nf, sizeof(double), cmp_double);
		u->avg_jct_s /= (double)nf;
		u->p95_jct_s = jct[(size_t)ceil(0.95 * (double)nf) - 1];
		u->makespan_s = last - first;
	}
	if (u->makespan_s > 0)
		u->utilisation = gs / ((double)s->ngpus * u->makespan_s);
	u->slots = nslots;
	free(jct);
}

/* Scratch of one decision: the active jobs' problem and the answer. */
struct dscratch {
	int *cnt, *prev, *job, *freev, *held;	/* prev: zero but in decide() */
	double *left, *served;
	size_t n;		/* the active jobs the policy sees */
};

/*
 * A baseline may give a model-parallel job (active job a) GPUs on which
 * no plan fits, scattered over servers where pipelines of single GPUs
 * hold more activations than tensor-parallel units would: it gets as many
 * GPUs where a plan fits (sched_place_fit()), else its max_gpus, else its
 * min_gpus there, else it waits.  On an otherwise empty cluster the last
 * always fits, so a job alone is never left waiting.
 */
static void
mp_repack(struct sim *m, struct dscratch *d, size_t a)
{
	size_t nn = m->nn;
	const struct sched_job *jb = &m->s->jobs[d->job[a]];
	int *cnt = d->cnt + a * nn, n = sched_gpus(cnt, nn), ok = 0;
	int *avail, *out, sizes[3] = { n, jb->max_gpus, jb->min_gpus };

	if (n == 0 || isfinite(sched_iter_time(m->s, jb->cls, cnt)))
		return;
	avail = xcalloc(nn + 1, sizeof(int));
	out = xcalloc(nn + 1, sizeof(int));
	for (size_t v = 0; v < nn; v++) {
		avail[v] = m->s->c->nodes[v].gpus;
		for (size_t b = 0; b < d->n; b++)
			avail[v] -= b != a ? d->cnt[b * nn + v] : 0;
	}
	for (int i = 0; i < 3 && !ok; i++)
		ok = sched_place_fit(m->s, jb->cls, sizes[i], avail, NULL, out);
	memcpy(cnt, out, nn * sizeof(int));
	if (!ok)
		memset(cnt, 0, nn * sizeof(int));
	free(avail);
	free(out);
}

/*
 * A model-parallel job holds the GPUs its plan uses: when the planner's
 * plan on cnt leaves GPUs out, the job gets the GPUs it uses, as long as
 * a plan on those uses them all (a few rounds), else it waits.
 */
static void
mp_trim(struct sim *m, int *cnt, int j)
{
	size_t nn = m->nn;
	const struct sched_job *jb = &m->s->jobs[j];
	int *tmp = xcalloc(nn + 1, sizeof(int)), n = sched_gpus(cnt, nn);

	for (int round = 0; round < 4 && n > 0; round++) {
		int u;

		memcpy(tmp, cnt, nn * sizeof(int));
		if ((u = sched_mp_used(m->s, jb->cls, tmp)) == n)
			break;
		if (u < jb->min_gpus || !isfinite(sched_iter_time(m->s,
		    jb->cls, tmp)))
			u = 0;
		memcpy(cnt, tmp, nn * sizeof(int));
		if (u == 0 || round == 3)
			memset(cnt, 0, nn * sizeof(int));
		n = sched_gpus(cnt, nn);
	}
	free(tmp);
}

/*
 * The most waiting jobs fifo and random look at in one event, the first
 * by arrival: at most one job per GPU can start, so a window of the
 * cluster's GPUs (at least SCHED_WINDOW) keeps an event's time from
 * growing with the queue.
 */
#define SCHED_WINDOW 64

/* One event: the policy's allocation of every active job, then run[]. */
static void
decide(struct sim *m, unsigned long long *rng, struct dscratch *d, long k)
{
	struct sched_slotprob pb;
	size_t nn = m->nn, n = 0, nwait = 0, window;
	int windowed = m->policy == SCHED_FIFO || m->policy == SCHED_RANDOM;

	window = m->s->ngpus > SCHED_WINDOW ? (size_t)m->s->ngpus :
	    SCHED_WINDOW;
	for (size_t v = 0; v < nn; v++)
		d->freev[v] = m->s->c->nodes[v].gpus;
	for (size_t a = 0; a < m->na; a++) {
		size_t j = m->act[a];

		if (windowed && m->pn[j] == 0 && nwait++ >= window)
			continue;
		d->job[n] = (int)j;
		d->left[n] = m->left[j];
		d->served[n] = m->r->jobs[j].gpu_s;
		if ((d->held[n] = m->pn[j]) > 0)
			memcpy(d->prev + n * nn, m->prevcnt + j * nn,
			    nn * sizeof(int));
		n++;
	}
	d->n = n;
	memset(&pb, 0, sizeof(pb));
	pb.njobs = n;
	pb.job = d->job;
	pb.left = d->left;
	pb.prev = d->prev;
	pb.free_gpus = d->freev;
	pb.served = d->served;
	pb.held = d->held;
	if (m->policy == SCHED_GADGET)
		stable_slot(m->s, m->sp, &pb, d->cnt, m->sp->explain ?
		    &m->log : NULL, (double)k * m->sp->slot_s);
	else
		sched_baseline_slot(m->s, m->policy, &pb, rng, d->cnt);
	m->nrun = 0;
	for (size_t a = 0; a < n; a++) {
		size_t j = (size_t)d->job[a];

		if (d->held[a] > 0)
			memset(d->prev + a * nn, 0, nn * sizeof(int));
		if (m->s->classes[m->s->jobs[j].cls].mp) {
			mp_repack(m, d, a);
			mp_trim(m, d->cnt + a * nn, (int)j);
		} else if (sched_trim(m->s, m->s->jobs[j].cls, d->cnt + a * nn) <
		    m->s->jobs[j].min_gpus)
			memset(d->cnt + a * nn, 0, nn * sizeof(int));
		if (sched_gpus(d->cnt + a * nn, nn) == 0) {
			if (m->pn[j] > 0) {
				memset(m->prevcnt + j * nn, 0,
				    nn * sizeof(int));
				m->stop[m->nstop++] = (int)j;
			}
			m->pn[j] = 0;
			continue;
		}
		memcpy(m->runcnt + m->nrun * nn, d->cnt + a * nn,
		    nn * sizeof(int));
		m->runt[m->nrun] = sched_iter_time(m->s, m->s->jobs[j].cls,
		    d->cnt + a * nn);
		m->run[m->nrun++] = j;
	}
}

static void
sim_free(struct sim *m)
{
	for (size_t j = 0; j < m->s->njobs; j++) {
		free(m->pnode[j]);
		free(m->pgpu[j]);
	}
	free(m->pnode);
	free(m->pgpu);
	free(m->pn);
	free(m->prevcnt);
	free(m->left);
	free(m->owner);
	free(m->goff);
	free(m->act);
	free(m->run);
	free(m->runcnt);
	free(m->runt);
	free(m->scr.e);
	free(m->pool);
	free(m->stop);
	sb_free(&m->log);
}

#define TOO_LONG_HINT "give fewer iterations, longer --slot-seconds, " \
	"or --slots N to stop early"

/*
 * The error when the jobs still run after SCHED_MAX_SLOTS simulated slots:
 * it names the running job with the most iterations left.
 */
static int
too_long(const struct sim *m, struct dl_err *e)
{
	const struct sched_job *jb = NULL;
	double most = -1;

	for (size_t a = 0; a < m->na; a++)
		if (m->left[m->act[a]] > most) {
			most = m->left[m->act[a]];
			jb = &m->s->jobs[m->act[a]];
		}
	return dl_seterr(e, DL_EDATA, NULL, jb ? jb->line : 0, 0, "%s "
	    "schedule: job '%s' (%.6g iterations) still runs after %ld slots "
	    "of %g s, the most dlplan simulates (" TOO_LONG_HINT ")",
	    sched_policy_name(m->policy), jb ? jb->id : "?",
	    jb ? jb->iterations : 0, SCHED_MAX_SLOTS, m->sp->slot_s);
}

/* A job that cannot end within SCHED_MAX_SLOTS slots even alone. */
static int
never_ends(const struct sched *s, const struct sched_params *sp,
    struct dl_err *e)
{
	double cap = (double)SCHED_MAX_SLOTS * sp->slot_s;

	for (size_t j = 0; j < s->njobs; j++) {
		const struct sched_job *jb = &s->jobs[j];
		double t = sched_iter_floor(s, (int)j, jb->max_gpus);

		if (jb->why == NULL && jb->iterations * t > cap)
			return dl_seterr(e, DL_EDATA, NULL, jb->line, 0, "job "
			    "'%s' needs at least %.6g s (%.6g iterations of at "
			    "least %.6g s on %d GPUs), more than the %ld slots of "
			    "%g s dlplan simulates (" TOO_LONG_HINT ")", jb->id,
			    jb->iterations * t, jb->iterations, t, jb->max_gpus,
			    SCHED_MAX_SLOTS, sp->slot_s);
	}
	return DL_OK;
}

static void
sim_init(struct sim *m, struct sched *s, int policy,
    const struct sched_params *sp, struct sched_result *r)
{
	size_t nj = s->njobs, nn = s->c->nnodes;

	memset(r, 0, sizeof(*r));
	memset(m, 0, sizeof(*m));
	r->policy = policy;
	r->jobs = xcalloc(nj + 1, sizeof(*r->jobs));
	for (size_t j = 0; j < nj; j++) {
		r->jobs[j].start_s = r->jobs[j].finish_s = -1;
		r->jobs[j].first_slot = -1;
	}
	m->s = s;
	m->sp = sp;
	m->r = r;
	m->policy = policy;
	m->nn = nn;
	sb_init(&m->log);
	m->prevcnt = xcalloc(nj * nn + 1, sizeof(int));
	m->pnode = xcalloc(nj + 1, sizeof(int *));
	m->pgpu = xcalloc(nj + 1, sizeof(int *));
	m->pn = xcalloc(nj + 1, sizeof(int));
	m->left = xcalloc(nj + 1, sizeof(double));
	m->goff = xcalloc(nn + 1, sizeof(int));
	for (size_t v = 0; v < nn; v++)
		m->goff[v + 1] = m->goff[v] + s->c->nodes[v].gpus;
	m->owner = xcalloc(m->goff[nn] + 1, sizeof(int));
	m->act = xcalloc(nj + 1, sizeof(size_t));
	m->run = xcalloc(nj + 1, sizeof(size_t));
	m->runcnt = xcalloc(nj * nn + 1, sizeof(int));
	m->runt = xcalloc(nj + 1, sizeof(double));
	m->scr.e = xcalloc(s->ngpus + 1, sizeof(*m->scr.e));
	m->pool = xcalloc(2 * s->ngpus + 1, sizeof(int));
	m->stop = xcalloc(s->ngpus + 1, sizeof(int));
	for (size_t j = 0; j < nj; j++)
		m->left[j] = s->jobs[j].iterations;
}

int
sched_run(struct sched *s, int policy, const struct sched_params *sp,
    struct sched_result *r, struct dl_err *e)
{
	struct sim m;
	struct dscratch d;
	size_t nj = s->njobs, nn = s->c->nnodes, ai = 0;
	unsigned long long rng = 0x9E3779B97F4A7C15ULL * (sp->seed + 1) | 1;
	double t0;
	int rc = DL_OK;
	long k = 0, span;

	t0 = mono_now();
	sim_init(&m, s, policy, sp, r);
	m.e = e;
	d.cnt = xcalloc(nj * nn + 1, sizeof(int));
	d.prev = xcalloc(nj * nn + 1, sizeof(int));
	d.job = xcalloc(nj + 1, sizeof(int));
	d.freev = xcalloc(nn + 1, sizeof(int));
	d.left = xcalloc(nj + 1, sizeof(double));
	d.served = xcalloc(nj + 1, sizeof(double));
	d.held = xcalloc(nj + 1, sizeof(int));
	if (sp->max_slots == 0)
		rc = never_ends(s, sp, e);
	m.changed = 1;
	while (rc == DL_OK && (ai < nj || m.na > 0) &&
	    (sp->max_slots == 0 || k < sp->max_slots)) {
		double start = (double)k * sp->slot_s;
		int event = m.changed;

		for (; ai < nj && s->jobs[ai].arrival_s <= start; ai++)
			if (s->jobs[ai].why == NULL) {
				m.act[m.na++] = ai;
				event = 1;
			}
		if (m.na == 0 || (!event && m.nrun == 0)) {
			/* Nothing runs: on to the slot of the next arrival. */
			if (ai == nj)
				break;
			k = (long)ceil(s->jobs[ai].arrival_s / sp->slot_s);
			continue;
		}
		if (sp->max_slots == 0 && k >= SCHED_MAX_SLOTS) {
			rc = too_long(&m, e);
			break;
		}
		m.changed = 0;
		if (event) {
			decide(&m, &rng, &d, k);
			r->events++;
			if (m.nrun == 0 && ai == nj) {
				rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "%s "
				    "schedule stalls at slot %ld: no waiting job "
				    "can start", sched_policy_name(policy), k);
				break;
			}
			record_slot(&m, k++, 1);
			if ((rc = m.rc) != DL_OK)
				break;
		} else if ((span = plain_slots(&m, k, ai)) > 0) {
			record_span(&m, k, span);
			k += span;
		} else {
			record_slot(&m, k++, 0);
			if ((rc = m.rc) != DL_OK)
				break;
		}
	}
	free(d.cnt);
	free(d.prev);
	free(d.job);
	free(d.freev);
	free(d.left);
	free(d.served);
	free(d.held);
	if (sp->explain && m.log.len > 0)
		r->log = sb_detach(&m.log);
	sim_free(&m);
	summarise(s, r, k, (double)k * sp->slot_s);
	r->time_s = mono_now() - t0;
	return rc;
}

void
sched_result_free(struct sched_result *r)
{
	for (size_t i = 0; i < r->nslots; i++) {
		for (size_t k = 0; k < r->slots[i].n; k++) {
			free(r->slots[i].e[k].node);
			free(r->slots[i].e[k].gpu);
		}
		free(r->slots[i].e);
	}
	free(r->slots);
	free(r->jobs);
	free(r->log);
	free(r->stalled);
	memset(r, 0, sizeof(*r));
}
