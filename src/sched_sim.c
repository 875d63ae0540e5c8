/*
 * sched_sim.c - the slot-by-slot simulation of sched.h sched_run(): the
 * events, at which the policy's row of the table (sched_policy.c)
 * decides, the records, the fitting of its allocation to the GPUs and
 * plans, and the summary.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb.h"
#include "sched_int.h"


struct sim {
	struct sched *s;
	const struct sched_params *sp;
	struct sched_result *r;
	const struct sched_policy *pol;
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
	size_t nended;		/* jobs ended so far */
	struct sched_slot scr;	/* forget: the one record, its GPUs in */
	int *pool;		/* node[], gpu[] of each entry in turn */
	long pool_used;
	struct strbuf log;
	double *since;		/* per job: waiting since (arrival, a stop) */
	char *guard;		/* per job: started overdue, not preempted */
	double next_over;	/* the first time a waiting job is overdue */
	int *stop;		/* jobs that lost their GPUs at this event */
	size_t nstop;
	int *at;		/* per job: its entry in the record being made */
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
	/* What each job kept is among its previous GPUs (counted there, not
	 * over every GPU); the rest come from the free ones. */
	for (size_t a = 0; a < m->nrun; a++) {
		int j = (int)m->run[a];

		memset(kept, 0, nn * sizeof(int));
		for (int i = 0; i < m->pn[j]; i++) {
			int v = m->pnode[j][i];

			kept[v] += m->owner[m->goff[v] + m->pgpu[j][i]] == j;
		}
		for (size_t v = 0; v < nn; v++)
			for (int g = 0; g < c->nodes[v].gpus &&
			    kept[v] < m->runcnt[a * nn + v]; g++)
				if (m->owner[m->goff[v] + g] < 0) {
					m->owner[m->goff[v] + g] = j;
					kept[v]++;
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
		m->nended++;
	} else {
		en->iters = d;
		en->run_s = sp->slot_s - lost;
		st->gpu_s += en->ngpus * sp->slot_s;
		st->held_s += sp->slot_s;
		m->left[j] -= d;
	}
	/* The policy decides again when the job's service crosses its
	 * next mark (tiresias: a queue threshold). */
	if (m->pol->next_service != NULL &&
	    st->gpu_s >= m->pol->next_service(held))
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
		int n = sched_gpus(m->runcnt + a * nn, nn);

		en->job = (int)j;
		m->at[j] = (int)a;
		entry_gpus(m, en, n, fresh ? NULL : m->pnode[j],
		    fresh ? NULL : m->pgpu[j]);
		en->ngpus = fresh ? 0 : n;
	}
	/* Fresh: each job's GPUs from owner[] (assign_gpus() gave it its
	 * count), by node then local index, in one pass over the GPUs. */
	for (size_t v = 0; fresh && v < nn; v++)
		for (int g = 0; g < m->s->c->nodes[v].gpus; g++) {
			int j = m->owner[m->goff[v] + g];
			struct sched_entry *en;

			if (j < 0)
				continue;
			en = &sl->e[m->at[j]];
			en->node[en->ngpus] = (int)v;
			en->gpu[en->ngpus++] = g;
		}
	for (size_t a = 0; a < m->nrun; a++)
		run_job(m, k, &sl->e[a], m->run[a], m->runcnt + a * nn,
		    m->runt[a]);
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
 * next arrival, before any job's last slot, before the slot in which a
 * job's service crosses the policy's next mark (tiresias: a queue
 * threshold), before a waiting job becomes overdue (--max-wait, when the
 * policy serves such jobs), and within max_slots.
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
	if ((m->pol->flags & SCHED_POL_MAX_WAIT) && isfinite(m->next_over) &&
	    ceil(m->next_over / S) - k < span)
		span = ceil(m->next_over / S) - k;
	for (size_t a = 0; a < m->nrun; a++) {
		size_t j = m->run[a];
		const int *cnt = m->runcnt + a * m->nn;
		double d = S / m->runt[a];
		double p = floor(m->left[j] / d * (1 - 1e-12)), q, held;

		if (p < span)
			span = p;
		if (m->pol->next_service == NULL)
			continue;
		held = m->r->jobs[j].gpu_s;
		q = m->pol->next_service(held);
		if (!isfinite(q))
			continue;
		q = ceil((q - held) / (sched_gpus(cnt, m->nn) * S)) - 1;
		if (q < span)
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
	double *left, *served, *waited, *age;
	char *guarded;
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
 * dp_repack()'s last resort: sizes[] (as there) on runs of nodes next to
 * each other in speed order (the fastest first, then from each next
 * node down), the GPUs whose speeds differ least, into cnt; 1 when one
 * keeps the job's min_gpus after sched_trim().  On GPUs of about one
 * speed n GPUs of at least n micro-batches all get one, so a job that
 * fits alone on an empty cluster runs.
 */
static int
dp_repack_even(struct sim *m, const struct sched_job *jb, const int *avail,
    const int *sizes, int *cnt)
{
	const struct sched_class *k = &m->s->classes[jb->cls];
	size_t nn = m->nn, no = 0;
	int *ord = xcalloc(nn + 1, sizeof(int)), ok = 0;

	for (size_t v = 0; v < nn; v++)
		if (k->fits[v] && avail[v] > 0)
			ord[no++] = (int)v;
	/* Speed order, the faster first, ties to the lower index. */
	for (size_t i = 1; i < no; i++)
		for (size_t j = i; j > 0 && k->x.speed[ord[j]] >
		    k->x.speed[ord[j - 1]]; j--) {
			int t = ord[j];

			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	for (size_t i = 0; i < no && !ok; i++)
		for (int z = 0; z < 3 && !ok; z++) {
			int need = sizes[z];

			if (need < jb->min_gpus)
				continue;
			memset(cnt, 0, nn * sizeof(int));
			for (size_t j = i; j < no && need > 0; j++) {
				int take = avail[ord[j]] < need ?
				    avail[ord[j]] : need;

				cnt[ord[j]] = take;
				need -= take;
			}
			ok = need == 0 && sched_trim(m->s, jb->cls, cnt) >=
			    jb->min_gpus;
		}
	free(ord);
	return ok;
}

/*
 * A data-parallel job (active job a) whose GPUs, once those without a
 * micro-batch are dropped (sched_trim()), fall below its min_gpus (the
 * random baseline draws slow GPUs beside fast ones): as many, else its
 * max_gpus, else its min_gpus, packed on the fewest servers where every
 * GPU gets a micro-batch; else on GPUs of about one speed
 * (dp_repack_even()); else it waits.
 */
static void
dp_repack(struct sim *m, struct dscratch *d, size_t a)
{
	size_t nn = m->nn;
	const struct sched_job *jb = &m->s->jobs[d->job[a]];
	int *cnt = d->cnt + a * nn, ok = 0;
	int sizes[3] = { sched_gpus(cnt, nn), jb->max_gpus, jb->min_gpus };
	int *avail = xcalloc(nn + 1, sizeof(int));

	for (size_t v = 0; v < nn; v++) {
		avail[v] = m->s->c->nodes[v].gpus;
		for (size_t b = 0; b < d->n; b++)
			avail[v] -= b != a ? d->cnt[b * nn + v] : 0;
	}
	for (int i = 0; i < 3 && !ok; i++)
		ok = sizes[i] >= jb->min_gpus && sched_place_fit(m->s, jb->cls,
		    sizes[i], avail, NULL, cnt) && sched_trim(m->s, jb->cls,
		    cnt) >= jb->min_gpus;
	if (!ok)
		ok = dp_repack_even(m, jb, avail, sizes, cnt);
	if (!ok)
		memset(cnt, 0, nn * sizeof(int));
	free(avail);
}

/*
 * A model-parallel job holds the GPUs its plan uses: when the planner's
 * plan on cnt leaves GPUs out, the job gets the GPUs it uses (their
 * shape keeps that plan, sched_mp_used()).  Only a job whose plan uses
 * fewer GPUs than its min_gpus holds the min_gpus it asked for.
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
		if ((u = sched_mp_used(m->s, jb->cls, tmp)) == n ||
		    u < jb->min_gpus || !isfinite(sched_iter_time(m->s,
		    jb->cls, tmp)))
			break;
		memcpy(cnt, tmp, nn * sizeof(int));
		n = u;
	}
	free(tmp);
}

/*
 * The most waiting jobs a policy with SCHED_POL_WINDOW looks at in one
 * event, the first by arrival: at most one job per GPU can start, so a
 * window of the cluster's GPUs (at least SCHED_WINDOW) keeps an event's
 * time from growing with the queue.
 */
#define SCHED_WINDOW 64

/* One event: the policy's allocation of every active job, then run[]. */
static void
decide(struct sim *m, unsigned long long *rng, struct dscratch *d, long k)
{
	struct sched_slotprob pb;
	size_t nn = m->nn, n = 0, nwait = 0, window;
	int windowed = m->pol->flags & SCHED_POL_WINDOW;
	double t = (double)k * m->sp->slot_s, W = m->sp->max_wait_s;

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
		d->waited[n] = m->pn[j] > 0 ? 0 : t - m->since[j];
		d->guarded[n] = m->guard[j];
		d->age[n] = t - m->s->jobs[j].arrival_s - m->r->jobs[j].held_s;
		if (d->age[n] < 0)
			d->age[n] = 0;
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
	pb.waited = d->waited;
	pb.guarded = d->guarded;
	pb.age = d->age;
	pb.t0 = t;
	pb.rng = rng;
	pb.log = m->sp->explain ? &m->log : NULL;
	m->pol->decide(m->s, m->sp, &pb, d->cnt);
	m->nrun = 0;
	m->next_over = HUGE_VAL;
	for (size_t a = 0; a < n; a++) {
		size_t j = (size_t)d->job[a];

		if (d->held[a] > 0)
			memset(d->prev + a * nn, 0, nn * sizeof(int));
		if (m->s->classes[m->s->jobs[j].cls].mp) {
			mp_repack(m, d, a);
			mp_trim(m, d->cnt + a * nn, (int)j);
		} else if (sched_trim(m->s, m->s->jobs[j].cls, d->cnt + a * nn) <
		    m->s->jobs[j].min_gpus && (!(m->pol->flags &
		    SCHED_POL_WAITS) || sched_gpus(d->cnt + a * nn, nn) > 0))
			dp_repack(m, d, a);
		if (sched_gpus(d->cnt + a * nn, nn) == 0) {
			if (m->pn[j] > 0) {
				memset(m->prevcnt + j * nn, 0,
				    nn * sizeof(int));
				m->stop[m->nstop++] = (int)j;
				m->since[j] = t;
				m->guard[j] = 0;
			}
			m->pn[j] = 0;
			/* One overdue already waits on the overdue jobs
			 * that run: the next end is its event. */
			if (W > 0 && m->since[j] + W > t &&
			    m->since[j] + W < m->next_over)
				m->next_over = m->since[j] + W;
			continue;
		}
		if (m->pn[j] == 0 && W > 0 && d->waited[a] >= W)
			m->guard[j] = 1;
		memcpy(m->runcnt + m->nrun * nn, d->cnt + a * nn,
		    nn * sizeof(int));
		m->runt[m->nrun] = sched_iter_time(m->s, m->s->jobs[j].cls,
		    d->cnt + a * nn);
		m->run[m->nrun++] = j;
	}
}

/* Tell sched_params.progress how far the run is at slot k. */
static void
progress(const struct sim *m, long k, int final)
{
	struct sched_progress pg;

	if (m->sp->progress == NULL)
		return;
	pg.policy = m->r->policy;
	pg.ended = m->nended;
	pg.njobs = m->s->njobs;
	pg.events = m->r->events;
	pg.time_s = (double)k * m->sp->slot_s;
	pg.final = final;
	m->sp->progress(m->sp->progress_arg, &pg);
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
	free(m->since);
	free(m->guard);
	free(m->at);
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
	    m->pol->name, jb ? jb->id : "?",
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
	m->pol = sched_policy(policy);
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
	m->since = xcalloc(nj + 1, sizeof(double));
	m->guard = xcalloc(nj + 1, 1);
	m->at = xcalloc(nj + 1, sizeof(int));
	m->next_over = HUGE_VAL;
	for (size_t j = 0; j < nj; j++)
		m->since[j] = s->jobs[j].arrival_s;
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

	if (sched_policy(policy) == NULL) {
		memset(r, 0, sizeof(*r));
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "no policy %d",
		    policy);
	}
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
	d.waited = xcalloc(nj + 1, sizeof(double));
	d.guarded = xcalloc(nj + 1, 1);
	d.age = xcalloc(nj + 1, sizeof(double));
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
		/* A waiting job becomes overdue: gadget decides again. */
		if ((m.pol->flags & SCHED_POL_MAX_WAIT) && sp->max_wait_s > 0 &&
		    m.next_over <= start)
			event = 1;
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
			progress(&m, k, 0);
			if (m.nrun == 0 && ai == nj) {
				rc = dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "%s "
				    "schedule stalls at slot %ld: no waiting job "
				    "can start", m.pol->name, k);
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
	free(d.waited);
	free(d.guarded);
	free(d.age);
	progress(&m, k, 1);
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
