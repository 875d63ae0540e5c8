/*
 * sched.c - the policies of sched.h and the slot-by-slot simulation.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* --- placement on GPUs per node ------------------------------------- */

/* The node with the most of avail[] (fits, not excluded), ties to the
 * faster GPU, then the lower index; -1 when none has any. */
static int
most_free(const struct sched *s, const struct sched_class *k,
    const int *avail, const char *skip)
{
	int best = -1;

	for (size_t v = 0; v < s->c->nnodes; v++) {
		if (!k->fits[v] || avail[v] <= 0 || (skip && skip[v]))
			continue;
		if (best < 0 || avail[v] > avail[best] || (avail[v] ==
		    avail[best] && k->x.speed[v] > k->x.speed[best]))
			best = (int)v;
	}
	return best;
}

/*
 * n GPUs on the fewest servers from avail[] into out[] (zeroed here):
 * prev when it has exactly n GPUs that are all available; else the
 * smallest single node that holds them; else the site that needs the
 * fewest nodes (most free first); else every site.  0 when they do not
 * fit.
 */
static int
place_pack(const struct sched *s, const struct sched_class *k, int n,
    const int *avail, const int *prev, int *out)
{
	size_t nn = s->c->nnodes;
	int best = -1, bsite = -1, bcount = 0, total = 0, pn = 0, pok = 1;
	int *tmp = xcalloc(nn + 1, sizeof(int));
	char *skip = xcalloc(nn + 1, 1);

	memset(out, 0, nn * sizeof(int));
	for (size_t v = 0; v < nn; v++) {
		pn += prev ? prev[v] : 0;
		pok &= prev == NULL || prev[v] <= avail[v];
		if (!k->fits[v])
			continue;
		total += avail[v];
		if (avail[v] >= n && (best < 0 || avail[v] < avail[best] ||
		    (avail[v] == avail[best] && k->x.speed[v] >
		    k->x.speed[best])))
			best = (int)v;
	}
	if (prev != NULL && pn == n && pok) {
		memcpy(out, prev, nn * sizeof(int));
	} else if (best >= 0) {
		out[best] = n;
	} else if (total >= n) {
		/* The site that holds n on the fewest nodes. */
		for (size_t st = 0; st < s->c->nsites; st++) {
			int need = n, used = 0, v;

			memcpy(tmp, avail, nn * sizeof(int));
			for (size_t u = 0; u < nn; u++)
				skip[u] = s->c->nodes[u].site_idx != (int)st;
			while (need > 0 && (v = most_free(s, k, tmp, skip)) >= 0) {
				need -= tmp[v];
				tmp[v] = 0;
				used++;
			}
			if (need <= 0 && (bsite < 0 || used < bcount)) {
				bsite = (int)st;
				bcount = used;
			}
		}
		for (size_t u = 0; u < nn; u++)
			skip[u] = bsite >= 0 && s->c->nodes[u].site_idx != bsite;
		memcpy(tmp, avail, nn * sizeof(int));
		for (int need = n, v; need > 0;) {
			v = most_free(s, k, tmp, skip);
			out[v] = tmp[v] < need ? tmp[v] : need;
			need -= out[v];
			tmp[v] = 0;
		}
	}
	free(tmp);
	free(skip);
	return total >= n;
}

/*
 * cur plus d GPUs from avail[] (free GPUs, not counting cur) into out[]:
 * first back on the job's previous GPUs, then on its nodes, then in its
 * sites, then anywhere, the nodes with the most free first.  0 when d
 * GPUs are not there.
 */
static int
place_extend(const struct sched *s, const struct sched_class *k,
    const int *cur, const int *prev, int d, const int *avail, int *out)
{
	size_t nn = s->c->nnodes;
	int *tmp = xcalloc(nn + 1, sizeof(int)), v;
	char *skip = xcalloc(nn + 1, 1), *site = xcalloc(s->c->nsites + 1, 1);

	memcpy(out, cur, nn * sizeof(int));
	memcpy(tmp, avail, nn * sizeof(int));
	for (size_t u = 0; u < nn && d > 0; u++) {
		int want = prev[u] - cur[u];

		if (!k->fits[u] || want <= 0)
			continue;
		want = want < tmp[u] ? want : tmp[u];
		want = want < d ? want : d;
		out[u] += want;
		tmp[u] -= want;
		d -= want;
	}
	for (size_t u = 0; u < nn; u++) {
		if (out[u] > 0 || prev[u] > 0)
			site[s->c->nodes[u].site_idx] = 1;
		skip[u] = out[u] == 0;
	}
	/* Its nodes, its sites, then anywhere. */
	for (int pass = 0; pass < 3 && d > 0; pass++) {
		for (size_t u = 0; u < nn; u++)
			skip[u] = pass == 0 ? out[u] == 0 : pass == 1 ?
			    !site[s->c->nodes[u].site_idx] : 0;
		while (d > 0 && (v = most_free(s, k, tmp, skip)) >= 0) {
			int take = tmp[v] < d ? tmp[v] : d;

			out[v] += take;
			tmp[v] -= take;
			d -= take;
		}
	}
	free(tmp);
	free(skip);
	free(site);
	return d == 0;
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

	if (gain > g->gain[a] + GAIN_EPS) {
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
		if (place_extend(g->s, k, cur, prev, t - n, g->freev, g->tmp))
			consider(g, a, t, g->tmp);
		if (place_pack(g->s, k, t, g->avail, prev, g->tmp))
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
			if (g.gain[a] > GAIN_EPS && (best == na ||
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

/* --- brute force of one slot ----------------------------------------- */

struct brute {
	struct sched *s;
	const struct sched_params *sp;
	const struct sched_slotprob *pb;
	size_t nn;
	int *freev, *cur, *best;
	double bestu;
};

static void brute_job(struct brute *b, size_t a, double acc);

/* Every count on nodes v.. for job a, then the next job. */
static void
brute_node(struct brute *b, size_t a, size_t v, int n, double acc)
{
	const struct sched_job *jb = &b->s->jobs[b->pb->job[a]];
	int *cnt = b->cur + a * b->nn;

	if (v == b->nn) {
		if (n != 0 && (n < jb->min_gpus || n > jb->max_gpus))
			return;
		brute_job(b, a + 1, acc + sched_utility(b->s, b->sp,
		    b->pb->job[a], b->pb->left[a], cnt, b->pb->prev +
		    a * b->nn));
		return;
	}
	int top = b->s->classes[jb->cls].fits[v] ? b->freev[v] : 0;

	for (int c = 0; c <= top && n + c <= jb->max_gpus; c++) {
		cnt[v] = c;
		b->freev[v] -= c;
		brute_node(b, a, v + 1, n + c, acc);
		b->freev[v] += c;
	}
	cnt[v] = 0;
}

static void
brute_job(struct brute *b, size_t a, double acc)
{
	if (a < b->pb->njobs) {
		brute_node(b, a, 0, 0, acc);
		return;
	}
	if (acc > b->bestu + GAIN_EPS) {
		b->bestu = acc;
		memcpy(b->best, b->cur, b->pb->njobs * b->nn * sizeof(int));
	}
}

double
sched_slot_best(struct sched *s, const struct sched_params *sp,
    const struct sched_slotprob *pb, int *out)
{
	struct brute b;
	size_t cells = pb->njobs * s->c->nnodes;

	b.s = s;
	b.sp = sp;
	b.pb = pb;
	b.nn = s->c->nnodes;
	b.freev = xmemdup(pb->free_gpus, b.nn, sizeof(int));
	b.cur = xcalloc(cells + 1, sizeof(int));
	b.best = out;
	b.bestu = 0;
	memset(out, 0, cells * sizeof(int));
	brute_job(&b, 0, 0);
	free(b.freev);
	free(b.cur);
	return b.bestu;
}

/* --- the baselines ----------------------------------------------------- */

static unsigned long long
rng_next(unsigned long long *st)
{
	unsigned long long x = *st;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*st = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* A uniform integer in [0, n). */
static long
rng_below(unsigned long long *st, long n)
{
	return (long)(rng_next(st) % (unsigned long long)n);
}

/*
 * FIFO and RANDOM: running jobs (prev holds GPUs) keep them; waiting ones
 * start in arrival order (FIFO: the whole request packed, when it fits)
 * or in a random order (RANDOM: a random size on random free GPUs).
 */
static void
baseline_slot(struct sched *s, int policy, const struct sched_slotprob *pb,
    unsigned long long *rng, int *out)
{
	size_t na = pb->njobs, nn = s->c->nnodes;
	int *freev = xmemdup(pb->free_gpus, nn, sizeof(int));
	size_t *order = xcalloc(na + 1, sizeof(size_t)), nw = 0;

	memset(out, 0, na * nn * sizeof(int));
	for (size_t a = 0; a < na; a++) {
		int held = 0;

		for (size_t v = 0; v < nn; v++)
			held += pb->prev[a * nn + v];
		if (held == 0) {
			order[nw++] = a;
			continue;
		}
		memcpy(out + a * nn, pb->prev + a * nn, nn * sizeof(int));
		for (size_t v = 0; v < nn; v++)
			freev[v] -= pb->prev[a * nn + v];
	}
	for (size_t i = 0; policy == SCHED_RANDOM && i + 1 < nw; i++) {
		size_t r = i + (size_t)rng_below(rng, (long)(nw - i)), t;

		t = order[i];
		order[i] = order[r];
		order[r] = t;
	}
	for (size_t i = 0; i < nw; i++) {
		size_t a = order[i];
		const struct sched_job *jb = &s->jobs[pb->job[a]];
		const struct sched_class *k = &s->classes[jb->cls];
		int *cnt = out + a * nn, have = 0, want;

		if (policy == SCHED_FIFO) {
			if (!place_pack(s, k, jb->max_gpus, freev, NULL, cnt))
				memset(cnt, 0, nn * sizeof(int));
		} else {
			for (size_t v = 0; v < nn; v++)
				have += k->fits[v] ? freev[v] : 0;
			want = jb->min_gpus + (int)rng_below(rng,
			    jb->max_gpus - jb->min_gpus + 1);
			if (want > have)
				want = have;
			if (want < jb->min_gpus)
				want = 0;
			/* One free GPU at a time, uniformly. */
			for (int w = 0; w < want; w++) {
				long r = rng_below(rng, have--);
				size_t v = 0;

				while (!k->fits[v] || r >= freev[v] - cnt[v]) {
					r -= k->fits[v] ? freev[v] - cnt[v] : 0;
					v++;
				}
				cnt[v]++;
			}
		}
		for (size_t v = 0; v < nn; v++)
			freev[v] -= cnt[v];
	}
	free(freev);
	free(order);
}

/* --- the simulation ------------------------------------------------------ */

struct sim {
	struct sched *s;
	const struct sched_params *sp;
	struct sched_result *r;
	size_t nn, cap;
	int *prevcnt;		/* per job x node: GPUs held last slot */
	int **pnode, **pgpu, *pn;	/* per job: the GPUs held last slot */
	double *left;
	int *owner, *goff;	/* per GPU (goff[node] + local): job, -1 */
	size_t *act, na;
};

/* Concrete GPUs for cnt (na x nn): a job keeps its previous GPUs on a
 * node as far as its count there allows; the rest come lowest first. */
static void
assign_gpus(struct sim *m, const int *cnt)
{
	const struct dl_cluster *c = m->s->c;
	size_t nn = m->nn;

	for (long i = 0; i < m->goff[nn]; i++)
		m->owner[i] = -1;
	for (size_t a = 0; a < m->na; a++) {
		size_t j = m->act[a];
		int *kept = xcalloc(nn + 1, sizeof(int));

		for (int i = 0; i < m->pn[j]; i++) {
			int v = m->pnode[j][i];

			if (kept[v] < cnt[a * nn + v]) {
				kept[v]++;
				m->owner[m->goff[v] + m->pgpu[j][i]] = (int)j;
			}
		}
		free(kept);
	}
	for (size_t a = 0; a < m->na; a++)
		for (size_t v = 0; v < nn; v++) {
			int have = 0;

			for (int g = 0; g < c->nodes[v].gpus; g++)
				have += m->owner[m->goff[v] + g] == (int)m->act[a];
			for (int g = 0; g < c->nodes[v].gpus &&
			    have < cnt[a * nn + v]; g++)
				if (m->owner[m->goff[v] + g] < 0) {
					m->owner[m->goff[v] + g] = (int)m->act[a];
					have++;
				}
		}
}

/* The entry of job j (slot index k), its progress and statistics. */
static void
run_job(struct sim *m, long k, struct sched_entry *en, size_t j,
    const int *cnt)
{
	struct sched_jobstat *st = &m->r->jobs[j];
	const struct sched_params *sp = m->sp;
	double t0 = (double)k * sp->slot_s, lost, d;
	int launch = en->ngpus != m->pn[j];

	for (int i = 0; i < en->ngpus && !launch; i++)
		launch = en->node[i] != m->pnode[j][i] ||
		    en->gpu[i] != m->pgpu[j][i];
	en->launch = launch;
	en->iter_s = sched_iter_time(m->s, m->s->jobs[j].cls, cnt);
	lost = launch ? sp->restart_s : 0;
	if (lost > sp->slot_s)
		lost = sp->slot_s;
	d = (sp->slot_s - lost) / en->iter_s;
	if (launch) {
		st->launches++;
		if (st->start_s < 0) {
			st->start_s = t0;
			st->first_slot = (long)m->r->nslots;
		}
	}
	if (d >= m->left[j]) {
		en->iters = m->left[j];
		en->run_s = m->left[j] * en->iter_s;
		en->finished = 1;
		st->finish_s = t0 + lost + en->run_s;
		st->gpu_s += en->ngpus * (lost + en->run_s);
		m->left[j] = 0;
	} else {
		en->iters = d;
		en->run_s = sp->slot_s - lost;
		st->gpu_s += en->ngpus * sp->slot_s;
		m->left[j] -= d;
	}
	st->done += en->iters;
	/* What it holds now is its "previous" allocation next slot. */
	free(m->pnode[j]);
	free(m->pgpu[j]);
	m->pnode[j] = xmemdup(en->node, en->ngpus, sizeof(int));
	m->pgpu[j] = xmemdup(en->gpu, en->ngpus, sizeof(int));
	m->pn[j] = en->ngpus;
	memcpy(m->prevcnt + j * m->nn, cnt, m->nn * sizeof(int));
}

/* Record slot k for the allocation cnt (na x nn); drop finished jobs. */
static void
record_slot(struct sim *m, long k, const int *cnt)
{
	struct sched_result *r = m->r;
	struct sched_slot *sl;
	size_t keep = 0;

	assign_gpus(m, cnt);
	if (r->nslots == m->cap)
		r->slots = xgrow(r->slots, &m->cap, r->nslots + 1,
		    sizeof(*r->slots));
	sl = &r->slots[r->nslots];
	memset(sl, 0, sizeof(*sl));
	sl->index = k;
	sl->e = xcalloc(m->na + 1, sizeof(*sl->e));
	for (size_t a = 0; a < m->na; a++) {
		size_t j = m->act[a];
		struct sched_entry *en = &sl->e[sl->n];
		int n = 0, i = 0;

		for (size_t v = 0; v < m->nn; v++)
			n += cnt[a * m->nn + v];
		if (n == 0) {
			m->pn[j] = 0;
			memset(m->prevcnt + j * m->nn, 0, m->nn * sizeof(int));
			continue;
		}
		en->job = (int)j;
		en->ngpus = n;
		en->node = xcalloc(n, sizeof(int));
		en->gpu = xcalloc(n, sizeof(int));
		for (size_t v = 0; v < m->nn; v++)
			for (int g = 0; g < m->s->c->nodes[v].gpus; g++)
				if (m->owner[m->goff[v] + g] == (int)j) {
					en->node[i] = (int)v;
					en->gpu[i++] = g;
				}
		run_job(m, k, en, j, cnt + a * m->nn);
		sl->n++;
	}
	if (sl->n > 0)
		r->nslots++;
	else
		free(sl->e);
	for (size_t a = 0; a < m->na; a++)
		if (m->left[m->act[a]] > 0)
			m->act[keep++] = m->act[a];
	m->na = keep;
}

static void
summarise(struct sched *s, struct sched_result *r, long nslots)
{
	struct sched_summary *u = &r->sum;
	double *jct = xcalloc(s->njobs + 1, sizeof(double)), gs = 0, last = 0;
	size_t nf = 0;

	memset(u, 0, sizeof(*u));
	for (size_t j = 0; j < s->njobs; j++) {
		struct sched_jobstat *st = &r->jobs[j];

		gs += st->gpu_s;
		u->restarts += st->restarts = st->launches > 1 ?
		    st->launches - 1 : 0;
		if (st->finish_s < 0) {
			u->unfinished++;
			continue;
		}
		jct[nf++] = st->finish_s - s->jobs[j].arrival_s;
		u->avg_jct_s += jct[nf - 1];
		if (st->finish_s > last)
			last = st->finish_s;
	}
	if (nf > 0) {
		qsort(jct, nf, sizeof(double), cmp_double);
		u->avg_jct_s /= (double)nf;
		u->p95_jct_s = jct[(size_t)ceil(0.95 * (double)nf) - 1];
		u->makespan_s = last - s->jobs[0].arrival_s;
	}
	if (u->makespan_s > 0)
		u->utilisation = gs / ((double)s->ngpus * u->makespan_s);
	u->slots = nslots;
	free(jct);
}

/* One slot's allocation by the policy into cnt (na x nn). */
static void
decide(struct sim *m, int policy, unsigned long long *rng, int *cnt,
    int *prev, double *left, int *job)
{
	struct sched_slotprob pb;
	int *freev = xcalloc(m->nn + 1, sizeof(int));

	for (size_t v = 0; v < m->nn; v++)
		freev[v] = m->s->c->nodes[v].gpus;
	for (size_t a = 0; a < m->na; a++) {
		job[a] = (int)m->act[a];
		left[a] = m->left[m->act[a]];
		memcpy(prev + a * m->nn, m->prevcnt + m->act[a] * m->nn,
		    m->nn * sizeof(int));
	}
	pb.njobs = m->na;
	pb.job = job;
	pb.left = left;
	pb.prev = prev;
	pb.free_gpus = freev;
	if (policy == SCHED_GADGET)
		sched_slot_greedy(m->s, m->sp, &pb, cnt);
	else
		baseline_slot(m->s, policy, &pb, rng, cnt);
	free(freev);
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
}

/*
 * The error when the jobs still run after SCHED_MAX_SLOTS simulated slots:
 * it names the running job with the most iterations left.
 */
static int
too_long(const struct sim *m, int policy, struct dl_err *e)
{
	const struct sched_job *jb = NULL;
	double most = -1;

	for (size_t a = 0; a < m->na; a++)
		if (m->left[m->act[a]] > most) {
			most = m->left[m->act[a]];
			jb = &m->s->jobs[m->act[a]];
		}
	return dl_seterr(e, DL_EDATA, NULL, jb ? jb->line : 0, 0, "%s "
	    "schedule: job '%s' (%.6g iterations) still runs after %d slots "
	    "of %g s, the most dlplan simulates (give fewer iterations, "
	    "longer --slot-seconds, or --slots N to stop early)",
	    sched_policy_name(policy), jb ? jb->id : "?",
	    jb ? jb->iterations : 0, SCHED_MAX_SLOTS, m->sp->slot_s);
}

int
sched_run(struct sched *s, int policy, const struct sched_params *sp,
    struct sched_result *r, struct dl_err *e)
{
	struct sim m;
	size_t nj = s->njobs, nn = s->c->nnodes, ai = 0, left_jobs = nj;
	unsigned long long rng = 0x9E3779B97F4A7C15ULL * (sp->seed + 1) | 1;
	double t0;
	int *cnt, *prev, *job, rc = DL_OK;
	double *left;
	long k = 0, steps = 0;

	t0 = mono_now();
	memset(r, 0, sizeof(*r));
	memset(&m, 0, sizeof(m));
	r->policy = policy;
	r->jobs = xcalloc(nj + 1, sizeof(*r->jobs));
	for (size_t j = 0; j < nj; j++) {
		r->jobs[j].start_s = r->jobs[j].finish_s = -1;
		r->jobs[j].first_slot = -1;
	}
	m.s = s;
	m.sp = sp;
	m.r = r;
	m.nn = nn;
	m.prevcnt = xcalloc(nj * nn + 1, sizeof(int));
	m.pnode = xcalloc(nj + 1, sizeof(int *));
	m.pgpu = xcalloc(nj + 1, sizeof(int *));
	m.pn = xcalloc(nj + 1, sizeof(int));
	m.left = xcalloc(nj + 1, sizeof(double));
	m.goff = xcalloc(nn + 1, sizeof(int));
	for (size_t v = 0; v < nn; v++)
		m.goff[v + 1] = m.goff[v] + s->c->nodes[v].gpus;
	m.owner = xcalloc(m.goff[nn] + 1, sizeof(int));
	m.act = xcalloc(nj + 1, sizeof(size_t));
	for (size_t j = 0; j < nj; j++)
		m.left[j] = s->jobs[j].iterations;
	cnt = xcalloc(nj * nn + 1, sizeof(int));
	prev = xcalloc(nj * nn + 1, sizeof(int));
	job = xcalloc(nj + 1, sizeof(int));
	left = xcalloc(nj + 1, sizeof(double));
	while (left_jobs > 0 && (sp->max_slots == 0 || k < sp->max_slots)) {
		double start = (double)k * sp->slot_s;
		size_t before = r->nslots;

		while (ai < nj && s->jobs[ai].arrival_s <= start)
			m.act[m.na++] = ai++;
		if (m.na == 0) {
			/* Nothing to run: on to the slot of the next arrival. */
			k = (long)ceil(s->jobs[ai].arrival_s / sp->slot_s);
			continue;
		}
		if (sp->max_slots == 0 && steps++ == SCHED_MAX_SLOTS) {
			rc = too_long(&m, policy, e);
			break;
		}
		decide(&m, policy, &rng, cnt, prev, left, job);
		record_slot(&m, k, cnt);
		left_jobs = nj - ai + m.na;
		if (r->nslots == before && ai == nj) {
			rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "%s schedule "
			    "stalls at slot %ld: no waiting job can start",
			    sched_policy_name(policy), k);
			break;
		}
		k++;
	}
	free(cnt);
	free(prev);
	free(job);
	free(left);
	sim_free(&m);
	summarise(s, r, k);
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
	memset(r, 0, sizeof(*r));
}
