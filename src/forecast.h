/*
 * forecast.h - the GMC forecasts the planner and the router use.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * These apply gmc.h with the forecast defaults of dlplan(1) (window 16, 3
 * states, expectation correction, clamped to [0, 1]) to the histories of a
 * loaded cluster.  One rule for short histories, shared with the start regime
 * of routing: a history with no points forecasts 0 (an idle node or
 * link), one with 1 to 3 points forecasts its last value for every step.
 */
#ifndef DL_FORECAST_H
#define DL_FORECAST_H

#include <stddef.h>

#include "cluster.h"
#include "fmethod.h"
#include "gmc.h"
#include "series.h"
#include "util.h"

/* Highest node load the cost model accepts (dlplan(1) ALGORITHMS). */
#define FORECAST_LOAD_MAX 0.95

/*
 * The forecasts h = 1..horizon (horizon >= 1) of method m (fmethod.h) for
 * s with the forecast defaults, into fc[0..horizon-1]; with the short
 * history rule above (picks then get -1).  picks (may be NULL) gets auto's
 * choice per step (m for the other methods).  Returns DL_OK, or DL_EDATA
 * with e filled when a value of s is not finite.
 */
int forecast_steps(const struct dl_series *s, int m, int horizon, double *fc,
    int *picks, struct dl_err *e);

/* The mean of forecast_steps() over steps 1..horizon, in [0, 1]. */
int forecast_mean(const struct dl_series *s, int m, int horizon, double *out,
    struct dl_err *e);

/*
 * What forecast_steps() used for s (s may be NULL: no history), as
 * plan.json records it: "none" (no history: 0), "last" (1 to 3 points),
 * the method's name, or for auto "auto:" and the choice at each step
 * joined with commas.  A new string, or NULL with e filled when the
 * forecast fails.
 */
char *forecast_used(const struct dl_series *s, int m, int horizon,
    struct dl_err *e);

/*
 * What the forecast of each node of c used (forecast_used() of its load
 * history with method m over horizon steps): a new array of c->nnodes
 * strings, NULL where the forecast fails; NULL when c has no load
 * histories.  Free it with forecast_used_free(used, c->nnodes).
 */
char **forecast_node_used(const struct dl_cluster *c, int horizon, int m);
void forecast_used_free(char **used, size_t n);

/*
 * uhat[i] for every node i of c (c->nnodes values): forecast_mean() of
 * its load history with method m, clamped to [0, FORECAST_LOAD_MAX]; 0 for a node
 * without history.  On failure e names the node.
 */
int forecast_node_loads(const struct dl_cluster *c, int horizon, int m,
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
	int *picks;		/* auto's choice per step (owned), or NULL */
	double mean;		/* their mean */
};

/*
 * Fit the GMC model with options o to s (at least GMC_MIN_POINTS points)
 * and forecast steps 1..horizon with method m (fmethod.h) into r (r->fc
 * is new, and for auto r->picks; free them).  r->f always describes the
 * GMC fit of the window.  Errors are gmc_fit()'s; r is left alone then.
 */
int forecast_run(const struct dl_series *s, const struct gmc_opts *o,
    int m, int horizon, struct forecast_result *r, struct dl_err *e);

/*
 * Rolling-origin backtest (dlplan(1) ALGORITHMS, Forecast): for every
 * origin k = W..n-1 of s (W = o->window), fit the W points ending at k
 * and forecast h = 1..horizon as far as k + h <= n with every method of
 * fmethod.h (auto choosing from the origins before k), comparing with the
 * actual values.  Only the origins W, W + every, W + 2 every, ... (every
 * >= 1) are scored; auto still learns from all of them.
 */
/* Error sums of one method at one step h. */
struct forecast_acc {
	long n, nape;		/* points; points with a non-zero actual */
	double ae, ape;		/* sums of |error| and |error|/|actual| */
};

/*
 * Add the errors of backtesting s to acc[(h - 1) * FM_NMETHODS + method]
 * (horizon * FM_NMETHODS sums, zeroed by the caller).  Errors are
 * gmc_fit()'s.
 */
int forecast_backtest(const struct dl_series *s, const struct gmc_opts *o,
    int horizon, size_t every, struct forecast_acc *acc, struct dl_err *e);

/* to[i] += from[i] for n sums. */
void forecast_acc_merge(struct forecast_acc *to,
    const struct forecast_acc *from, size_t n);

#endif
