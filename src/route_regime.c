/*
 * route_regime.c - the congestion regimes of the router: the regime of
 * every step of the mean link utilisation in traffic.csv, the transition
 * matrix Q between them, the forecast start regime and each link's mean
 * utilisation per regime (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "route_int.h"

/* Regime of a mean utilisation m: floor(m K) clamped to [0, K - 1]. */
static int
regime_of(double m, int K)
{
	double l = floor(m * K);

	if (!(l >= 0))
		return 0;
	if (l > K - 1)
		return K - 1;
	return (int)l;
}

/* Index of step t in the sorted steps ts[0..n-1], or -1. */
static long
find_step(const long *ts, size_t n, long t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ts[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ts[lo] == t ? (long)lo : -1;
}

/* Regimes of the steps, Q, the start regime and u_e(l). */
int
route_regimes_build(struct dl_router *r, int horizon, int method,
    struct dl_err *e)
{
	const struct dl_cluster *c = r->c;
	struct dl_series ms;
	int K = r->K, *reg, rc;
	double *sum;
	size_t *cnt;

	forecast_mean_link_series(c, &ms);
	r->nsteps = ms.n;
	reg = xcalloc(ms.n ? ms.n : 1, sizeof(int));
	for (size_t i = 0; i < ms.n; i++) {
		reg[i] = regime_of(ms.v[i], K);
		r->steps[reg[i]]++;
		if (i > 0)
			r->count[reg[i - 1] * K + reg[i]]++;
	}
	for (int l = 0; l < K; l++) {
		long row = 0;

		for (int m = 0; m < K; m++)
			row += r->count[l * K + m];
		for (int m = 0; m < K; m++)
			r->Q[l * K + m] = row == 0 ? (l == m) :
			    (double)r->count[l * K + m] / (double)row;
	}
	rc = forecast_mean(&ms, method, horizon, &r->forecast, e);
	if (rc != DL_OK) {
		char msg[sizeof(e->msg)];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		dl_seterr(e, rc, c->path_traffic, 0, 0, "mean link "
		    "utilisation: %s", msg);
		free(reg);
		forecast_series_free(&ms);
		return rc;
	}
	r->l0 = regime_of(r->forecast, K);

	sum = xcalloc((size_t)K, sizeof(double));
	cnt = xcalloc((size_t)K, sizeof(size_t));
	for (size_t k = 0; k < c->nedges; k++) {
		const struct dl_series *s = c->traffic ? &c->traffic[k] : NULL;
		double all = 0, mean;

		if (s == NULL || s->n == 0)
			continue;
		memset(sum, 0, (size_t)K * sizeof(double));
		memset(cnt, 0, (size_t)K * sizeof(size_t));
		for (size_t j = 0; j < s->n; j++) {
			long i = find_step(ms.t, ms.n, s->t[j]);
			int l = i >= 0 ? reg[i] : 0;

			sum[l] += s->v[j];
			cnt[l]++;
			all += s->v[j];
		}
		mean = all / (double)s->n;
		for (int l = 0; l < K; l++) {
			double u = cnt[l] ? sum[l] / (double)cnt[l] : mean;

			r->ubar[k * K + l] = u < 0 ? 0 : u > UBAR_MAX ?
			    UBAR_MAX : u;
		}
	}
	free(sum);
	free(cnt);
	free(reg);
	forecast_series_free(&ms);
	return DL_OK;
}

/* The nonzero entries of Q by row, in column order. */
void
route_q_sparse(struct dl_router *r)
{
	int K = r->K, n = 0;

	r->qoff = xcalloc((size_t)K + 1, sizeof(int));
	r->qcol = xcalloc((size_t)K * K + 1, sizeof(int));
	r->qp = xcalloc((size_t)K * K + 1, sizeof(double));
	for (int l = 0; l < K; l++) {
		r->qoff[l] = n;
		for (int m = 0; m < K; m++)
			if (r->Q[l * K + m] != 0) {
				r->qcol[n] = m;
				r->qp[n++] = r->Q[l * K + m];
			}
	}
	r->qoff[K] = n;
}

int
router_regime(const struct dl_router *r)
{
	return r->l0;
}

int
router_nregimes(const struct dl_router *r)
{
	return r->K;
}

void
router_info(const struct dl_router *r, struct dl_regime_info *ri)
{
	ri->nregimes = r->K;
	ri->start = r->l0;
	ri->forecast = r->forecast;
	ri->nsteps = r->nsteps;
	ri->steps = r->steps;
	ri->count = r->count;
	ri->q = r->Q;
	ri->ubar = r->ubar;
}
