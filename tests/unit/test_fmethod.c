/*
 * test_fmethod.c - the forecast methods of fmethod.h against hand-derived
 * numbers and against tests/bench/fit-ensemble.py.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fmethod.h"
#include "tap.h"

static char nm[128];

static struct gmc_opts
opts(size_t window)
{
	struct gmc_opts o;

	gmc_opts_default(&o);
	o.window = window;
	return o;
}

/* The forecast of method m, h = 1, on x[0..n-1] with a window of n. */
static double
one(const double *x, size_t n, int m)
{
	struct gmc_opts o = opts(n);
	struct dl_err e = { 0 };
	double f = -1;

	if (fm_forecast(x, n, m, &o, 1, &f, NULL, &e) != DL_OK)
		return -1;
	return f;
}

static void
names(void)
{
	is_int(fm_parse("gmc"), FM_GMC, "parse gmc");
	is_int(fm_parse("auto"), FM_AUTO, "parse auto");
	is_int(fm_parse("gm11"), -1, "gm11 is not a method name");
	is_int(fm_parse(""), -1, "empty name");
	for (int m = 0; m < FM_NMETHODS; m++)
		ok(fm_parse(fm_name(m)) == m, "name %d round-trips", m);
	ok(fm_name(FM_NMETHODS) == NULL, "no name past the end");
}

/*
 * By hand: x = 0.2, 0.4, 0.1, 0.3.  wmed weights from the newest:
 * 1/0.3, 0.8/0.1 = 8, 0.64/0.4 = 1.6, 0.512/0.2 = 2.56; total 15.49, half
 * 7.75; ascending, 0.1 (weight 8) already reaches it.  x = 0.1, 0.2, 0.3,
 * 0.4: weights 5.12, 3.2, 2.667, 2.5, half 6.74: 0.1 (5.12) does not,
 * 0.2 (8.32) does.
 */
static void
simple_by_hand(void)
{
	static const double a[] = { 0.2, 0.4, 0.1, 0.3 };
	static const double b[] = { 0.1, 0.2, 0.3, 0.4 };
	static const double c[] = { 0.5, 0.1, 0.3, 0.2, 0.4 };
	static const double z[] = { 0, 0, 0.0005, 0.001 };

	is_near(one(a, 4, FM_LAST), 0.3, 0, "last");
	is_near(one(a, 4, FM_MEAN), (((0.2 + 0.4) + 0.1) + 0.3) / 4, 0,
	    "mean, summed oldest first");
	is_near(one(a, 4, FM_MEDIAN), (0.2 + 0.3) / 2, 0, "median, even n");
	is_near(one(c, 5, FM_MEDIAN), 0.3, 0, "median, odd n");
	is_near(one(a, 4, FM_WMED), 0.1, 0, "wmed: the heavy recent low value");
	is_near(one(b, 4, FM_WMED), 0.2, 0, "wmed: second value reaches half");
	/*
	 * Near zero the floor 1e-3 caps the weights: 0.512/1e-3, 0.64/1e-3,
	 * 0.8/1e-3 and 1/1e-3: the two zeros (1,152 of 2,952) reach half
	 * only with 0.0005 (1,952), so wmed is 0.0005.
	 */
	is_near(one(z, 4, FM_WMED), 0.0005, 0, "wmed: floor on tiny values");
}

/*
 * A constant window: every member is the constant, so the ensemble is
 * the constant times the sum of the h = 1 weights (0.997887).
 */
static void
constant(void)
{
	static const double x[16] = {
		0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
		0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5
	};
	double e = one(x, 16, FM_ENSEMBLE);

	is_near(one(x, 16, FM_GMC), 0.5, 0, "constant: gmc exact");
	ok(fabs(e - 0.5 * 0.997887) < 1e-6,
	    "constant: ensemble is 0.5 x the weight sum (%.17g)", e);
}

/*
 * Against tests/bench/fit-ensemble.py (its Python GMC port, median, wmed,
 * the weights of ensemble-spec.md and its auto rule), run on this series
 * with window 16 and h = 1..3: the numbers below are its output printed
 * with %.17g, so C and Python must agree to the last bit.
 */
static const double series[40] = {0.41999999999999998, 0.54442176872376913, 0.63854497299884605, 0.53632093666488745, 0.5434988150155905, 0.38492167723103798, 0.39284242275864117, 0.44175473873756671, 0.38687333621276787, 0.51168139004843494, 0.48569865987187888, 0.57881682338770002, 0.62545989080882813, 0.48190983623493522, 0.47335208707480725, 0.332030424002833, 0.38208222708486822, 0.47818628877629649, 0.4533623047221137, 0.57695697621966013, 0.51906073556948706, 0.56457468311429349, 0.57031183567457044, 0.41179285828159939, 0.42124329664184967, 0.32243739945318423, 0.41951671775937155, 0.54504226878068107, 0.51819636200681329, 0.60927664058359066, 0.50366556385360561, 0.50870526513277281, 0.50024443168785671, 0.36048126321803198, 0.41282015542561357, 0.36086424701348752, 0.48672080725254746, 0.60941646682522421, 0.54946447738778381, 0.59273279005953805};
static const double want[FM_NMETHODS][3] = {
	{ 0.57703077917268764, 0.57616680698545975, 0.57600900153412238 },
	{ 0.53869692317886542, 0.54536919822752528, 0.55207107777228193 },
	{ 0.59273279005953805, 0.59273279005953805, 0.59273279005953805 },
	{ 0.48255175956762197, 0.48255175956762197, 0.48255175956762197 },
	{ 0.50195499777073116, 0.50195499777073116, 0.50195499777073116 },
	{ 0.50870526513277281, 0.50870526513277281, 0.50870526513277281 },
	{ 0.54355614931377882, 0.5269637521207271, 0.52078203506675114 },
	/* auto: gm, median, median */ { 0.53869692317886542, 0.50195499777073116, 0.50195499777073116 }
};

static void
against_python(void)
{
	struct gmc_opts o = opts(16);
	struct dl_err e = { 0 };
	int picks[3], want_picks[3] = { FM_GM, FM_MEDIAN, FM_MEDIAN };

	for (int m = 0; m < FM_NMETHODS; m++) {
		double f[3];

		snprintf(nm, sizeof(nm), "%s: forecast", fm_name(m));
		is_int(fm_forecast(series, 40, m, &o, 3, f, picks, &e), DL_OK,
		    nm);
		for (int h = 0; h < 3; h++) {
			snprintf(nm, sizeof(nm), "%s: h=%d as in Python",
			    fm_name(m), h + 1);
			is_near(f[h], want[m][h], 0, nm);
		}
	}
	for (int h = 0; h < 3; h++)
		ok(picks[h] == want_picks[h], "auto: pick at h=%d", h + 1);
}

/*
 * auto in a backtest sees only origins whose target is known: at the
 * first origin it has no history and picks ensemble; at every origin o
 * its pick and value equal fm_forecast() on the points before o.
 */
static void
auto_no_lookahead(void)
{
	enum { W = 16, N = 40, H = 2, PER = FM_NWINDOW * H };
	struct gmc_opts o = opts(W);
	struct dl_err e = { 0 };
	double f[(N - W) * PER], au[(N - W) * H], tmp[2 * W];
	int picks[(N - W) * H], bad = 0;

	for (size_t k = W; k < N; k++) {
		struct gmc_fit g;

		gmc_fit(series + (k - W), W, &o, &g, &e);
		fm_window(&g, series + (k - W), W, H, f + (k - W) * PER, tmp);
	}
	fm_auto_backtest(series, N, W, H, f, au, picks);
	is_int(picks[0], FM_ENSEMBLE, "first origin: no history, ensemble");
	for (size_t k = W; k < N; k++)
		for (size_t h = 1; h <= H && k + h <= N; h++) {
			double g[H];
			int p[H];

			fm_forecast(series, k, FM_AUTO, &o, H, g, p, &e);
			bad += picks[(k - W) * H + h - 1] != p[h - 1] ||
			    au[(k - W) * H + h - 1] != g[h - 1];
		}
	is_int(bad, 0, "backtest picks = forecasts from the points before");

	/* The streaming choice (fm_autobt_*) is the same, origin by origin. */
	{
		struct fm_autobt ab;

		bad = 0;
		fm_autobt_init(&ab, H);
		for (size_t k = W; k < N; k++) {
			for (size_t h = 1; h <= H && k >= W + h; h++)
				fm_autobt_score(&ab, (int)h, f + (k - h - W) *
				    PER, series[k - 1]);
			for (size_t h = 1; h <= H && k + h <= N; h++)
				bad += fm_autobt_pick(&ab, (int)h) !=
				    picks[(k - W) * H + h - 1];
		}
		fm_autobt_free(&ab);
		is_int(bad, 0, "streaming picks = fm_auto_backtest()'s");
	}
}

int
main(void)
{
	names();
	simple_by_hand();
	constant();
	against_python();
	auto_no_lookahead();
	return done_testing();
}
