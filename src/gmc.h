/*
 * gmc.h - Grey Markov Chain (GMC) forecasting: GM(1,1) with a Markov
 * correction of its relative residuals (dlplan(1) ALGORITHMS, Forecast).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pure numeric module: no I/O, no allocation.  Indices k below are
 * 1-based as in the design: x(1..n) are the last n = min(len, window)
 * points of a series, y(k) = x(k) + c the shifted series.
 *
 * gmc_fit() does all of it:
 *
 *  1. Window: the last min(len, window) points; at least GMC_MIN_POINTS.
 *  2. Shift: c = 0 when every x > 0 and the class-ratio test passes;
 *     otherwise c = j * max(mean |x|, 1e-3) for the first j = 1..20 whose
 *     y = x + c passes; when none does, j = 20 and ratio_ok = 0 (the fit
 *     is "flagged" but still made).  "Passes" means every y(k) > 0 and
 *     every y(k-1)/y(k) lies in the open interval
 *     (exp(-2/(n+1)), exp(2/(n+1))).
 *  3. GM(1,1) on y: 1-AGO y1(k) = y(1) + ... + y(k), background
 *     z(k) = (y1(k) + y1(k-1))/2, and (a, b) by least squares on
 *     y(k) = -a z(k) + b, k = 2..n (solved in centred form, the means
 *     taken as offsets from the first term so that a constant series gives
 *     a = 0 exactly).  Fitted values
 *	yhat(1) = y(1),
 *	yhat(k) = (b - a y(1)) phi(a) exp(-a (k-1)),  k >= 2,
 *     with phi(a) = expm1(a)/a and phi(0) = 1, which is the difference of
 *     consecutive AGO predictions without ever subtracting them.
 *  4. Markov states: relative residuals r(k) = (y(k) - yhat(k))/y(k),
 *     k = 2..n (r(k) = 0 for a y(k) of exactly 0, which only a flagged
 *     series with negative values can have).  K equal-width states over
 *     [rmin, rmax]: state j holds [rmin + j w, rmin + (j+1) w) with
 *     w = (rmax - rmin)/K, the top state also holds rmax; its midpoint is
 *     mid(j) = rmin + (j + 1/2) w.  When rmin == rmax (w = 0) every
 *     residual is in state 0 and every midpoint is rmin.  Transition
 *     counts between r(k) and r(k+1), k = 2..n-1, row-normalised; a row
 *     without transitions is the identity row (the chain stays there).
 *     p(h) = e_{state(r(n))} P^h.
 *  5. Forecast h steps ahead: yhat(n+h) corrected by
 *	expect:  sum_j p_j(h) yhat(n+h) / (1 - mid(j))
 *	argmax:  yhat(n+h) / (1 - mid(j*)), j* = argmax p_j(h), lowest j
 *		 on ties,
 *     where a state with mid(j) >= 1 (the fit predicted a non-positive
 *     value) contributes yhat(n+h) uncorrected.  Then unshifted (minus c)
 *     and, when opts.clamp is set, clamped to [0, 1] (a NaN becomes 0).
 *  6. Quality: mre = mean |r(k)|, k = 2..n (on the shifted series, before
 *     the Markov correction); with e(k) = y(k) - yhat(k), k = 1..n, S1 and
 *     S2 the population standard deviations of y and of e: C = S2/S1 and
 *     P = share of k with |e(k) - mean e| < 0.6745 S1.  A constant series
 *     (S1 = 0) has C = 0 and P = 1 when every e(k) is 0, else C = 1 and
 *     P = 0.  The grade is the worse of the grades of C (good <= 0.35,
 *     qualified <= 0.50, barely <= 0.65) and of P (good >= 0.95,
 *     qualified >= 0.80, barely >= 0.70); otherwise unqualified.
 *
 * A struct gmc_fit is a plain value: it may be copied and needs no
 * freeing; it does not point into the caller's data.
 */
#ifndef DL_GMC_H
#define DL_GMC_H

#include <stddef.h>

#include "util.h"

#define GMC_MIN_POINTS		4	/* shortest series that can be fitted */
#define GMC_MAX_STATES		32	/* largest K */
#define GMC_WINDOW_DEFAULT	16
#define GMC_STATES_DEFAULT	3
#define GMC_SHIFT_STEPS		20	/* j = 1..20 in the shift search */

enum gmc_correction { GMC_EXPECT = 0, GMC_ARGMAX = 1 };

/* In order of worsening; gmc_grade_name() spells them. */
enum gmc_grade { GMC_GOOD = 0, GMC_QUALIFIED, GMC_BARELY, GMC_UNQUALIFIED };

struct gmc_opts {
	size_t window;		/* W >= GMC_MIN_POINTS */
	int states;		/* K in 1..GMC_MAX_STATES */
	enum gmc_correction correction;
	int clamp;		/* 1: clamp forecasts to [0, 1] (loads) */
};

struct gmc_fit {
	/* Options the fit was made with. */
	int states;
	enum gmc_correction correction;
	int clamp;

	size_t n;		/* points fitted */
	double y1;		/* y(1), the first shifted point */
	double last;		/* x(n), the last unshifted point */
	double mean;		/* mean of x(1..n) */
	double shift;		/* c */
	int shift_j;		/* c = shift_j * max(mean |x|, 1e-3) */
	int ratio_ok;		/* 0: no shift passed the test (flagged) */
	double a, b;		/* development coefficient, grey input */
	double coef;		/* (b - a y(1)) phi(a) */

	/* Markov chain on the relative residuals. */
	double rmin, rmax, width;
	double mid[GMC_MAX_STATES];
	int last_state;		/* state of r(n) */
	int count[GMC_MAX_STATES][GMC_MAX_STATES];
	double trans[GMC_MAX_STATES][GMC_MAX_STATES];	/* row-normalised */

	double mre, C, P;
	enum gmc_grade grade;
};

/* W = 16, K = 3, expect, clamp on: the forecast defaults for loads. */
void gmc_opts_default(struct gmc_opts *o);

/* phi(a) = expm1(a)/a, phi(0) = 1. */
double gmc_phi(double a);

/* Does y(1..n) pass the class-ratio test (all y > 0, ratios in range)? */
int gmc_ratio_test(const double *y, size_t n);

/*
 * Fit the last min(len, o->window) points of x[0..len-1].  Returns DL_OK,
 * or DL_EDATA with e filled (no file) when fewer than GMC_MIN_POINTS
 * points are given or a value is not finite, or DL_EUSAGE for options out
 * of range.  Never fails otherwise: a series that no shift makes pass the
 * ratio test is fitted with ratio_ok = 0.
 */
int gmc_fit(const double *x, size_t len, const struct gmc_opts *o,
    struct gmc_fit *f, struct dl_err *e);

/* yhat(k) on the shifted scale, k >= 1 (k > n extrapolates). */
double gmc_fitted(const struct gmc_fit *f, size_t k);

/* Markov state of a relative residual r (0..states-1). */
int gmc_state(const struct gmc_fit *f, double r);

/* p(h) = e_{last_state} P^h into p[0..states-1], h >= 0. */
void gmc_probs(const struct gmc_fit *f, int h, double *p);

/*
 * The Markov-corrected, unshifted (and, with clamp, clamped) forecasts
 * xhat(n+h), h = 1..horizon, into out[0..horizon-1].
 */
void gmc_forecast(const struct gmc_fit *f, int horizon, double *out);

/* The plain GM(1,1) forecast yhat(n+h) - c (clamped with clamp), h >= 1. */
double gmc_plain(const struct gmc_fit *f, int h);

/* "good", "qualified", "barely", "unqualified". */
const char *gmc_grade_name(enum gmc_grade g);

#endif
