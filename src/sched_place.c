/*
 * sched_place.c - where a job's GPUs go, as GPUs per node (sched_int.h):
 * packed on the fewest servers, or grown next to what it holds.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

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
int
sched_place_pack(const struct sched *s, const struct sched_class *k, int n,
    const int *avail, const int *prev, int *out)
{
	size_t nn = s->c->nnodes;
	int best = -1, bsite = -1, bcount = 0, total = 0, pn = 0, pok = 1;
	int *tmp = NULL;
	char *skip = NULL;

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
		tmp = xcalloc(nn + 1, sizeof(int));
		skip = xcalloc(nn + 1, 1);
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
int
sched_place_extend(const struct sched *s, const struct sched_class *k,
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

int
sched_place_fit(struct sched *s, int cls, int n, const int *avail,
    const int *prev, int *out)
{
	const struct sched_class *k = &s->classes[cls];

	if (!sched_place_pack(s, k, n, avail, prev, out))
		return 0;
	if (!k->mp || isfinite(sched_iter_time(s, cls, out)))
		return 1;
	if (sched_mp_fill(s, cls, n, avail, out))
		return 1;
	memset(out, 0, s->c->nnodes * sizeof(int));
	return 0;
}

int
sched_gpus(const int *cnt, size_t nn)
{
	int n = 0;

	for (size_t v = 0; v < nn; v++)
		n += cnt[v];
	return n;
}

int
sched_held(const struct sched_slotprob *pb, size_t a, size_t nn)
{
	return pb->held ? pb->held[a] : sched_gpus(pb->prev + a * nn, nn);
}
