/*
 * forecast.c - the GMC forecasts the planner and the router use.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "gmc.h"

int
forecast_mean(const struct dl_series *s, int horizon, double *out,
    struct dl_err *e)
{
	struct gmc_opts o;
	struct gmc_fit f;
	double *fc, sum = 0;
	int rc;

	if (s->n == 0) {
		*out = 0;
		return DL_OK;
	}
	if (s->n < GMC_MIN_POINTS) {
		*out = s->v[s->n - 1];
		return DL_OK;
	}
	if (horizon < 1)
		horizon = 1;
	gmc_opts_default(&o);
	if ((rc = gmc_fit(s->v, s->n, &o, &f, e)) != DL_OK)
		return rc;
	fc = xcalloc((size_t)horizon, sizeof(double));
	gmc_forecast(&f, horizon, fc);
	for (int h = 0; h < horizon; h++)
		sum += fc[h];
	free(fc);
	*out = sum / horizon;
	return DL_OK;
}

int
forecast_node_loads(const struct dl_cluster *c, int horizon, double *uhat,
    struct dl_err *e)
{
	for (size_t i = 0; i < c->nnodes; i++) {
		double u = 0;
		int rc;

		if (c->load != NULL &&
		    (rc = forecast_mean(&c->load[i], horizon, &u, e)) != DL_OK) {
			char msg[sizeof(e->msg)];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			return dl_seterr(e, rc, c->path_load, 0, 0,
			    "node '%s': %s", c->nodes[i].id, msg);
		}
		uhat[i] = u < 0 ? 0 : u > FORECAST_LOAD_MAX ?
		    FORECAST_LOAD_MAX : u;
	}
	return DL_OK;
}

void
forecast_mean_link_series(const struct dl_cluster *c, struct dl_series *out)
{
	series_mean(c->traffic, c->traffic ? c->nedges : 0, out);
}

void
forecast_series_free(struct dl_series *s)
{
	series_free(s);
}

int
forecast_run(const struct dl_series *s, const struct gmc_opts *o,
    int horizon, struct forecast_result *r, struct dl_err *e)
{
	struct gmc_fit *f = xmalloc(sizeof(*f));
	double sum = 0;
	int rc;

	if ((rc = gmc_fit(s->v, s->n, o, f, e)) != DL_OK) {
		free(f);
		return rc;
	}
	r->f.n = f->n;
	r->f.a = f->a;
	r->f.b = f->b;
	r->f.shift = f->shift;
	r->f.mre = f->mre;
	r->f.C = f->C;
	r->f.P = f->P;
	r->f.ratio_ok = f->ratio_ok;
	r->f.grade = f->grade;
	r->fc = xcalloc((size_t)horizon, sizeof(double));
	gmc_forecast(f, horizon, r->fc);
	for (int h = 0; h < horizon; h++)
		sum += r->fc[h];
	r->mean = sum / horizon;
	free(f);
	return DL_OK;
}

static void
acc_add(struct forecast_acc *a, double fc, double actual)
{
	double err = fc > actual ? fc - actual : actual - fc;

	a->n++;
	a->ae += err;
	if (actual != 0) {
		a->nape++;
		a->ape += err / (actual < 0 ? -actual : actual);
	}
}

int
forecast_backtest(const struct dl_series *s, const struct gmc_opts *o,
    int horizon, struct forecast_acc *acc, struct dl_err *e)
{
	size_t W = o->window;
	double *fc = xcalloc((size_t)horizon, sizeof(double));
	int rc = DL_OK;

	for (size_t k = W; k < s->n && rc == DL_OK; k++) {
		struct gmc_fit f;

		/* Fit on x(k-W+1 .. k), 1-based: s->v[k-W .. k-1]. */
		if ((rc = gmc_fit(s->v + (k - W), W, o, &f, e)) != DL_OK)
			break;
		gmc_forecast(&f, horizon, fc);
		for (int h = 1; h <= horizon && k + (size_t)h <= s->n; h++) {
			struct forecast_acc *a = &acc[(size_t)(h - 1) *
			    FC_NMETHODS];
			double actual = s->v[k + (size_t)h - 1];

			acc_add(&a[FC_GMC], fc[h - 1], actual);
			acc_add(&a[FC_GM11], gmc_plain(&f, h), actual);
			acc_add(&a[FC_LAST], f.last, actual);
			acc_add(&a[FC_MEAN], f.mean, actual);
		}
	}
	free(fc);
	return rc;
}

void
forecast_acc_merge(struct forecast_acc *to, const struct forecast_acc *from,
    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		to[i].n += from[i].n;
		to[i].nape += from[i].nape;
		to[i].ae += from[i].ae;
		to[i].ape += from[i].ape;
	}
}
