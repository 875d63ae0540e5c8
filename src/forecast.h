/*
 * forecast.h - the GMC forecasts the planner and the router use.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * These apply gmc.h with the section 5.1 defaults (window 16, 3 states,
 * expectation correction, clamped to [0, 1]) to the histories of a loaded
 * cluster.  One rule for short histories, shared with the start regime of
 * section 5.4: a history with no points forecasts 0 (an idle node or
 * link), one with 1 to 3 points forecasts its last value for every step.
 */
#ifndef DL_FORECAST_H
#define DL_FORECAST_H

#include <stddef.h>

#include "cluster.h"
#include "series.h"
#include "util.h"

/* Highest node load the cost model accepts (section 4). */
#define FORECAST_LOAD_MAX 0.95

/*
 * Mean of the forecast of s over steps 1..horizon (horizon >= 1), in
 * [0, 1].  Returns DL_OK, or DL_EDATA with e filled when a value of s is
 * not finite.
 */
int forecast_mean(const struct dl_series *s, int horizon, double *out,
    struct dl_err *e);

/*
 * uhat[i] for every node i of c (c->nnodes values): forecast_mean() of
 * its load history, clamped to [0, FORECAST_LOAD_MAX]; 0 for a node
 * without history.  On failure e names the node.
 */
int forecast_node_loads(const struct dl_cluster *c, int horizon,
    double *uhat, struct dl_err *e);

/*
 * The mean link-load series of c: series_mean() of its traffic histories
 * in edge order.  Release it with series_free() (forecast_series_free()
 * is the same, kept for its callers).
 */
void forecast_mean_link_series(const struct dl_cluster *c,
    struct dl_series *out);
void forecast_series_free(struct dl_series *s);

#endif
