/*
 * forecast.c - the GMC forecasts the planner and the router use.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "gmc.h"
#include "fmethod.h"
#include "sb.h"

int
forecast_steps(const struct dl_series *s, int m, int horizon, double *fc,
    int *picks, struct dl_err *e)
{
	struct gmc_opts o;

	if (horizon < 1)
		horizon = 1;
	if (s->n < GMC_MIN_POINTS) {
		for (int h = 0; h < horizon; h++) {
			fc[h] = s->n == 0 ? 0 : s->v[s->n - 1];
			if (picks)
				picks[h] = -1;
		}
		return DL_OK;
	}
	gmc_opts_default(&o);
	return fm_forecast(s->v, s->n, m, &o, horizon, fc, picks, e);
}

int
forecast_mean(const struct dl_series *s, int m, int horizon, double *out,
    struct dl_err *e)
{
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
	fc = xcalloc((size_t)horizon, sizeof(double));
	if ((rc = forecast_steps(s, m, horizon, fc, NULL, e)) == DL_OK) {
		for (int h = 0; h < horizon; h++)
			sum += fc[h];
		*out = sum / horizon;
	}
	free(fc);
	return rc;
}

char *
forecast_used(const struct dl_series *s, int m, int horizon,
    struct dl_err *e)
{
	struct strbuf sb;
	double *fc;
	int *picks;

	if (s == NULL || s->n == 0)
		return xstrdup("none");
	if (s->n < GMC_MIN_POINTS)
		return xstrdup("last");
	if (m != FM_AUTO)
		return xstrdup(fm_name(m));
	if (horizon < 1)
		horizon = 1;
	picks = xcalloc((size_t)horizon, sizeof(int));
	fc = xcalloc((size_t)horizon, sizeof(double));
	if (forecast_steps(s, m, horizon, fc, picks, e) != DL_OK) {
		free(fc);
		free(picks);
		return NULL;
	}
	sb_init(&sb);
	sb_adds(&sb, "auto:");
	for (int h = 0; h < horizon; h++)
		sb_addf(&sb, "%s%s", h ? "," : "", fm_name(picks[h]));
	free(fc);
	free(picks);
	return sb_detach(&sb);
}

char **
forecast_node_used(const struct dl_cluster *c, int horizon, int m)
{
	char **used;

	if (c->load == NULL)
		return NULL;
	used = xcalloc(c->nnodes + 1, sizeof(*used));
	for (size_t i = 0; i < c->nnodes; i++) {
		struct dl_err e = { 0 };

		used[i] = forecast_used(&c->load[i], m, horizon, &e);
	}
	return used;
}

void
forecast_used_free(char **used, size_t n)
{
	for (size_t i = 0; used != NULL && i < n; i++)
		free(used[i]);
	free(used);
}

int
forecast_node_loads(const struct dl_cluster *c, int horizon, int m,
    double *uhat, struct dl_err *e)
{
	for (size_t i = 0; i < c->nnodes; i++) {
		double u = 0;
		int rc;

		if (c->load != NULL &&
		    (rc = forecast_mean(&c->load[i], m, horizon, &u, e)) != DL_OK) {
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
    int m, int horizon, struct forecast_result *r, struct dl_err *e)
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
	r->picks = NULL;
	if (m == FM_GMC) {
		gmc_forecast(f, horizon, r->fc);
	} else {
		if (m == FM_AUTO)
			r->picks = xcalloc((size_t)horizon, sizeof(int));
		if ((rc = fm_forecast(s->v, s->n, m, o, horizon, r->fc,
		    r->picks, e)) != DL_OK) {
			free(r->fc);
			free(r->picks);
			free(f);
			return rc;
		}
	}
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
    int horizon, size_t every, struct forecast_acc *acc, struct dl_err *e)
{
	size_t W = o->window, H = (size_t)horizon, per = FM_NWINDOW * H;
	/* The window forecasts of the last H + 1 origins: auto's choice at
	 * origin k needs the errors of the origins k - H .. k - 1 only. */
	size_t R = H + 1;
	double *ring = xcalloc(R * per, sizeof(double));
	double *tmp = xcalloc(2 * W, sizeof(double));
	struct fm_autobt ab;
	int rc = DL_OK;

	fm_autobt_init(&ab, horizon);
	for (size_t k = W; k < s->n; k++) {
		struct gmc_fit g;
		double *fk = ring + (k % R) * per;

		/* Fit on x(k-W+1 .. k), 1-based: s->v[k-W .. k-1]. */
		if ((rc = gmc_fit(s->v + (k - W), W, o, &g, e)) != DL_OK)
			break;
		fm_window(&g, s->v + (k - W), W, horizon, fk, tmp);
		/* The origins whose h-step target x[k - 1] is now known. */
		for (size_t h = 1; h <= H && k >= W + h; h++)
			fm_autobt_score(&ab, (int)h, ring + ((k - h) % R) *
			    per, s->v[k - 1]);
		if ((k - W) % every != 0)
			continue;
		for (size_t h = 1; h <= H && k + h <= s->n; h++) {
			struct forecast_acc *a = &acc[(h - 1) * FM_NMETHODS];
			double actual = s->v[k + h - 1];
			int b = fm_autobt_pick(&ab, (int)h);

			for (int m = 0; m < FM_NWINDOW; m++)
				acc_add(&a[m], fk[(size_t)m * H + h - 1],
				    actual);
			acc_add(&a[FM_AUTO], fk[(size_t)b * H + h - 1],
			    actual);
		}
	}
	fm_autobt_free(&ab);
	free(ring);
	free(tmp);
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
