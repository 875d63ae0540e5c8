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
#include "gmc.h"
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

/*
 * What "dlplan predict" shows of a fit of one series.  Not the whole
 * struct gmc_fit: with its K x K Markov tables that is 12 KB, 120 MB for
 * 10,000 series.
 */
struct forecast_summary {
	size_t n;
	double a, b, shift, mre, C, P;
	int ratio_ok;
	enum gmc_grade grade;
};

struct forecast_result {
	struct forecast_summary f;
	double *fc;		/* horizon values (owned) */
	double mean;		/* their mean */
};

/*
 * Fit the GMC model with options o to s (at least GMC_MIN_POINTS points)
 * and forecast steps 1..horizon into r (r->fc is new; free it).  Errors
 * are gmc_fit()'s; r is left alone then.
 */
int forecast_run(const struct dl_series *s, const struct gmc_opts *o,
    int horizon, struct forecast_result *r, struct dl_err *e);

/*
 * Rolling-origin backtest (DESIGN.md section 5.1, step 7): for every
 * origin k = W..n-1 of s (W = o->window), fit the W points ending at k
 * and forecast h = 1..horizon as far as k + h <= n, comparing with the
 * actual values.  Methods: the corrected forecast, plain GM(1,1) with the
 * same shift, the last value and the window mean.
 */
enum { FC_GMC, FC_GM11, FC_LAST, FC_MEAN, FC_NMETHODS };

/* Error sums of one method at one step h. */
struct forecast_acc {
	long n, nape;		/* points; points with a non-zero actual */
	double ae, ape;		/* sums of |error| and |error|/|actual| */
};

/*
 * Add the errors of backtesting s to acc[(h - 1) * FC_NMETHODS + method]
 * (horizon * FC_NMETHODS sums, zeroed by the caller).  Errors are
 * gmc_fit()'s.
 */
int forecast_backtest(const struct dl_series *s, const struct gmc_opts *o,
    int horizon, struct forecast_acc *acc, struct dl_err *e);

/* to[i] += from[i] for n sums. */
void forecast_acc_merge(struct forecast_acc *to,
    const struct forecast_acc *from, size_t n);

#endif
