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
