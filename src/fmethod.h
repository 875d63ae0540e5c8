/*
 * fmethod.h - the forecast methods of "predict --method" and of the
 * planner's --forecast: GMC and the simple forecasts it is measured
 * against, their fixed combination, and a per-series choice among them.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pure numeric module like gmc.h: no I/O.  A window x(1..n) is the last
 * n = min(len, W) points of a series, oldest first.  Per method, the
 * forecast h steps ahead:
 *
 *	gmc	  the GMC of dlplan(1) ALGORITHMS, Forecast (gmc_forecast()).
 *	gm	  plain GM(1,1) with the same shift (gmc_plain()).
 *	last	  x(n).
 *	mean	  (x(1) + ... + x(n)) / n, summed oldest first.
 *	median	  the middle value of the sorted window; for even n the mean
 *		  of the two middle values.
 *	wmed	  the weighted median: weight g(k) = 0.8^(n-k) / max(x(k),
 *		  1e-3), 0.8^(n-k) by repeated multiplication from the newest
 *		  point (weight 1 / max(x(n), 1e-3)); values ascending, equal
 *		  values oldest first; the first value whose running weight
 *		  reaches half the total (summed oldest first).  MAPE's best
 *		  constant is the 1/y-weighted median; the recency weights let
 *		  it follow a shift of level.
 *	ensemble  clamp01(w1(h) gmc + w2(h) last + w3(h) mean + w4(h) median
 *		  + w5(h) wmed), summed in that order from 0, with the
 *		  weights of fmethod.c for h = 1..6 (h > 6 uses those of 6).
 *	auto	  per series and h, the method among ensemble, gmc, gm,
 *		  last, mean and median whose forecasts h steps ahead had the
 *		  lowest sum of |error| / |actual| over the earlier origins
 *		  of the same series whose actual value is known: every
 *		  o' = W .. len - h, each fitted on the W points before o'
 *		  (points with actual 0 are skipped).  Ties, and a series too
 *		  short to have such origins, pick the earliest in that list
 *		  (ensemble).  Nothing after the origin is looked at.
 *
 * last, mean, median and wmed are not clamped (load histories are in
 * [0, 1] already); gmc and gm are clamped as their gmc_opts say, ensemble
 * always.
 */
#ifndef DL_FMETHOD_H
#define DL_FMETHOD_H

#include <stddef.h>

#include "gmc.h"
#include "util.h"

enum fm_method {
	FM_GMC = 0, FM_GM, FM_LAST, FM_MEAN, FM_MEDIAN, FM_WMED, FM_ENSEMBLE,
	FM_AUTO,
	FM_NMETHODS
};

/* Methods computed from one window (all but auto). */
#define FM_NWINDOW FM_AUTO

/* For option tables: the names in enum order. */
#define FM_NAMES "gmc|gm|last|mean|median|wmed|ensemble|auto"

/* Horizons with their own ensemble weights (1..FM_WEIGHT_STEPS). */
#define FM_WEIGHT_STEPS 6

/* "gmc", "gm", ...; NULL out of range. */
const char *fm_name(int m);

/* The method called s, or -1. */
int fm_parse(const char *s);

/*
 * Every window method's forecasts h = 1..horizon of the window x(1..n)
 * (x[0..n-1]) that f was fitted on: out[m * horizon + h - 1] for m in
 * FM_GMC..FM_ENSEMBLE.  tmp holds at least n doubles of scratch space.
 */
void fm_window(const struct gmc_fit *f, const double *x, size_t n,
    int horizon, double *out, double *tmp);

/*
 * The forecasts h = 1..horizon of method m for the series x[0..len-1]
 * (len >= GMC_MIN_POINTS), its windows of o->window points fitted with o,
 * into out[0..horizon-1].  For auto, picks[h-1] gets the method chosen at
 * h (picks may be NULL; for other methods it gets m).  Errors are
 * gmc_fit()'s.
 */
int fm_forecast(const double *x, size_t len, int m, const struct gmc_opts *o,
    int horizon, double *out, int *picks, struct dl_err *e);

/*
 * Auto's choice at every origin of a backtest.  f holds the window
 * forecasts of the origins W..len-1 (fm_window() layout, FM_NWINDOW *
 * horizon values per origin, origin o at (o - W)), x the series.  For
 * every origin and h with o + h <= len, out and picks get auto's forecast
 * and choice (same layout as f, one value per origin and h: index
 * (o - W) * horizon + h - 1); the others are left alone.
 */
void fm_auto_backtest(const double *x, size_t len, size_t W, int horizon,
    const double *f, double *out, int *picks);

/*
 * The same choice origin by origin, in memory that does not grow with the
 * series: at origin o, first fm_autobt_score() for every h the forecasts
 * fk of origin o - h (fm_window() layout) against y = x[o - 1], then
 * fm_autobt_pick(a, h) is the method index auto takes at o for h (the
 * same, bit for bit, as fm_auto_backtest()).
 */
struct fm_autobt {
	int horizon;
	double *tot;
};
void fm_autobt_init(struct fm_autobt *a, int horizon);
void fm_autobt_score(struct fm_autobt *a, int h, const double *fk, double y);
int fm_autobt_pick(const struct fm_autobt *a, int h);
void fm_autobt_free(struct fm_autobt *a);

#endif
