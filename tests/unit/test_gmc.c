/*
 * test_gmc.c - GM(1,1) and the Markov correction against published and
 * hand-derived numbers.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <string.h>

#include "gmc.h"
#include "tap.h"

/* Absolute closeness, for numbers published to 4 decimals. */
static int
is_abs(double got, double want, double tol, const char *name)
{
	int c = isfinite(got) && fabs(got - want) <= tol;

	if (!ok(c, "%s", name))
		printf("#   got %.17g\n#  want %.17g (abs tol %g)\n", got, want,
		    tol);
	return c;
}

static struct gmc_opts
opts(size_t window, int states, enum gmc_correction corr, int clamp)
{
	struct gmc_opts o;

	o.window = window;
	o.states = states;
	o.correction = corr;
	o.clamp = clamp;
	return o;
}

/*
 * The classic worked example: 223.3 ... 251.1 passes the ratio test
 * (every ratio is in (exp(-2/7), exp(2/7)) = (0.7515, 1.3307)), so it is
 * fitted unshifted.
 */
static void
published_six(void)
{
	static const double x[] = { 223.3, 227.3, 230.5, 238.1, 242.9, 251.1 };
	static const double fit[] = { 226.0874, 231.8764, 237.8136, 243.9029,
	    250.1481 };
	static const double fc[] = { 256.5532, 263.1223, 269.8596, 276.7694,
	    283.8561 };
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 0);
	struct gmc_fit f;
	struct dl_err e = { 0 };
	char name[64];

	is_int(gmc_fit(x, 6, &o, &f, &e), DL_OK, "six: fit");
	is_int((long)f.n, 6, "six: all points used");
	is_int(f.ratio_ok, 1, "six: ratio test passes");
	is_int(gmc_ratio_test(x, 6), 1, "six: gmc_ratio_test");
	ok(f.shift == 0 && f.shift_j == 0, "six: no shift");
	is_near(gmc_fitted(&f, 1), 223.3, 0, "six: yhat(1) = y(1)");
	for (int k = 0; k < 5; k++) {
		snprintf(name, sizeof(name), "six: fitted yhat(%d)", k + 2);
		is_abs(gmc_fitted(&f, (size_t)k + 2), fit[k], 1e-4, name);
	}
	for (int h = 1; h <= 5; h++) {
		snprintf(name, sizeof(name), "six: plain forecast h=%d", h);
		is_abs(gmc_plain(&f, h), fc[h - 1], 1e-4, name);
	}
	is_near(f.a, -0.025282899224766103, 1e-12, "six: a");
	is_near(f.b, 217.5956625000323, 1e-12, "six: b");
}

/* 27260, 29547, 32411, 35388: a, b, the next two values, C and P. */
static void
published_four(void)
{
	static const double x[] = { 27260, 29547, 32411, 35388 };
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 0);
	struct gmc_fit f;
	struct dl_err e = { 0 };

	is_int(gmc_fit(x, 4, &o, &f, &e), DL_OK, "four: fit");
	is_int(f.ratio_ok, 1, "four: ratio test passes");
	ok(f.shift == 0, "four: no shift");
	is_abs(f.a, -0.0899952, 1e-7, "four: a");
	is_abs(f.b, 25790.28, 0.01, "four: b");
	is_abs(gmc_plain(&f, 1), 38713.40, 0.01, "four: forecast h=1");
	is_abs(gmc_plain(&f, 2), 42359.00, 0.01, "four: forecast h=2");
	is_abs(f.C, 0.0107, 5e-5, "four: posterior variance ratio C");
	is_near(f.P, 1, 0, "four: small-error probability P");
	is_str(gmc_grade_name(f.grade), "good", "four: grade");
}

/*
 * A geometric series x(k) = A q^(k-1) satisfies the grey equation
 * exactly: with y1(k) = A (q^k - 1)/(q - 1) and the trapezoid background
 * z(k) = A ((q^k + q^(k-1))/2 - 1)/(q - 1), one finds
 * x(k) = 2 (q-1)/(q+1) z(k) + 2A/(q+1), so least squares returns
 * a = -2 (q-1)/(q+1) and b = 2A/(q+1) with zero equation residuals.
 * The time response then grows by exp(-a) per step, which is close to q
 * (-a = 0.0952381 against ln q = 0.0953102 for q = 1.1) but not equal:
 * the trapezoid background makes GM(1,1) inexact on exponentials, so the
 * relative residuals are small (about 1e-3 here) rather than 0.
 */
static void
geometric(void)
{
	double x[6], q = 1.1, A = 2, p[3];
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 0);
	struct gmc_fit f;
	struct dl_err e = { 0 };
	int small = 1;

	for (int k = 0; k < 6; k++)
		x[k] = A * pow(q, k);
	is_int(gmc_fit(x, 6, &o, &f, &e), DL_OK, "geometric: fit");
	ok(f.shift == 0 && f.ratio_ok, "geometric: unshifted, passes");
	is_near(f.a, -2 * (q - 1) / (q + 1), 1e-12,
	    "geometric: a = -2(q-1)/(q+1)");
	is_near(f.b, 2 * A / (q + 1), 1e-12, "geometric: b = 2A/(q+1)");
	is_abs(f.a, -log(q), 1e-4, "geometric: a close to -ln q");
	is_near(gmc_fitted(&f, 5) / gmc_fitted(&f, 4), exp(-f.a), 1e-14,
	    "geometric: fitted ratio exp(-a)");
	for (int k = 2; k <= 7; k++) {
		double want = A * pow(q, k - 1);

		if (fabs(gmc_fitted(&f, (size_t)k) / want - 1) > 1.2e-3)
			small = 0;
	}
	ok(small, "geometric: fitted and forecast within 0.12%% of A q^(k-1)");
	ok(f.mre < 1e-3, "geometric: mean relative error below 0.1%%");
	is_str(gmc_grade_name(f.grade), "good", "geometric: grade good");
	gmc_probs(&f, 1, p);
	is_near(p[0] + p[1] + p[2], 1, 1e-15, "geometric: p(1) sums to 1");
}

/* A constant series: a = 0, the forecast is the constant. */
static void
constant(void)
{
	double x[20], out[4];
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 1);
	struct gmc_fit f;
	struct dl_err e = { 0 };

	for (int k = 0; k < 20; k++)
		x[k] = 0.3;
	is_int(gmc_fit(x, 20, &o, &f, &e), DL_OK, "constant: fit");
	is_int((long)f.n, 16, "constant: window of 16");
	ok(f.a == 0, "constant: a = 0 exactly");
	ok(f.b == 0.3, "constant: b = the constant");
	ok(f.shift == 0 && f.ratio_ok, "constant: unshifted, passes");
	ok(f.rmin == 0 && f.rmax == 0 && f.width == 0,
	    "constant: residuals all 0");
	is_int(f.last_state, 0, "constant: degenerate states: state 0");
	ok(f.mid[0] == 0 && f.mid[2] == 0, "constant: midpoints = rmin");
	gmc_forecast(&f, 4, out);
	ok(out[0] == 0.3 && out[3] == 0.3, "constant: forecast = constant");
	ok(gmc_plain(&f, 3) == 0.3, "constant: plain forecast = constant");
	ok(f.mre == 0 && f.C == 0 && f.P == 1, "constant: mre 0, C 0, P 1");
	is_str(gmc_grade_name(f.grade), "good", "constant: grade good");
}

/*
 * Zeros force a shift.  x = 0, .2, .4, .2, 0, .2 (n = 6, ratio bounds
 * (0.7515, 1.3307)); mean |x| = 1/6.  j = 1: y(1)/y(2) = (1/6)/(11/30)
 * = 0.4545 fails; j = 2: (1/3)/(8/15) = 0.625 fails; j = 3: 0.5/0.7 =
 * 0.714 fails; j = 4 (c = 2/3): the ratios are 0.769, 0.8125, 1.2308,
 * 1.3, 0.769, all inside, so c = 2/3.
 */
static void
zeros(void)
{
	static const double x[] = { 0, 0.2, 0.4, 0.2, 0, 0.2 };
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 1);
	struct gmc_fit f;
	struct dl_err e = { 0 };
	double out[3], y[6];

	is_int(gmc_ratio_test(x, 6), 0, "zeros: raw series fails the test");
	is_int(gmc_fit(x, 6, &o, &f, &e), DL_OK, "zeros: fit");
	is_int(f.shift_j, 4, "zeros: j = 4");
	is_near(f.shift, 4.0 / 6, 1e-15, "zeros: c = 4 mean|x|");
	is_int(f.ratio_ok, 1, "zeros: shifted series passes");
	for (int k = 0; k < 6; k++)
		y[k] = x[k] + f.shift;
	is_int(gmc_ratio_test(y, 6), 1, "zeros: gmc_ratio_test on y");
	is_near(gmc_fitted(&f, 1) - f.shift, 0, 1e-15,
	    "zeros: yhat(1) - c = x(1)");
	gmc_forecast(&f, 3, out);
	ok(out[0] >= 0 && out[0] <= 1 && out[2] >= 0 && out[2] <= 1,
	    "zeros: clamped forecasts in [0, 1]");
}

/*
 * A series no shift can fix: one spike in 16 points.  With mean |x| =
 * 1/16 the largest shift is 20/16 = 1.25, and 2.25/1.25 = 1.8 is still
 * far above exp(2/17) = 1.125.  The fit is made, flagged.
 */
static void
flagged(void)
{
	double x[16] = { 0 }, out[5];
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 1);
	struct gmc_fit f;
	struct dl_err e = { 0 };
	int fin = 1;

	x[7] = 1;
	is_int(gmc_fit(x, 16, &o, &f, &e), DL_OK, "flagged: fit made");
	is_int(f.ratio_ok, 0, "flagged: ratio_ok = 0");
	is_int(f.shift_j, 20, "flagged: j = 20");
	is_near(f.shift, 20.0 / 16, 1e-15, "flagged: c = 20 mean|x|");
	gmc_forecast(&f, 5, out);
	for (int h = 0; h < 5; h++)
		fin &= isfinite(out[h]) && out[h] >= 0 && out[h] <= 1;
	ok(fin && isfinite(f.a) && isfinite(f.b) && isfinite(f.C),
	    "flagged: finite results");
}

/*
 * The Markov correction worked by hand.  x = 10, 9, 10, 11, 10, 11, 10,
 * 9, 10 (n = 9, ratio bounds (0.8187, 1.2214): all pass, c = 0).
 * y(2..9) = 9 10 11 10 11 10 9 10; z(k) = y1(k-1) + y(k)/2 =
 * 14.5 24 34.5 45 55.5 66 75.5 85, mean 50; y mean 10; the centred
 * products (z - 50)(y - 10) are 35.5, 0, -15.5, 0, 5.5, 0, -25.5, 0,
 * summing to 0: a = 0 exactly and b = 10, so yhat(k) = 10 for k >= 2 and
 * r(k) = 1 - 10/y(k): -1/9 for 9, 0 for 10, 1/11 for 11.
 *
 * K = 3 over [-1/9, 1/11]: w = (20/99)/3 = 20/297; boundaries -13/297
 * and 7/297; so 9 -> state 0, 10 -> state 1, 11 -> state 2.  Midpoints
 * -23/297, -3/297 = -1/99, 17/297; factors 1/(1 - mid) = 297/320, 99/100,
 * 297/280.
 * States of r(2..9): 0 1 2 1 2 1 0 1.  Transitions 0->1, 1->2, 2->1,
 * 1->2, 2->1, 1->0, 0->1: counts row 0 = (0 2 0), row 1 = (1 0 2),
 * row 2 = (0 2 0); P = (0 1 0; 1/3 0 2/3; 0 1 0).  Last state 1:
 * p(1) = (1/3, 0, 2/3), p(2) = (0, 1, 0), p(3) = p(1).
 * expect: h=1: 10 (1/3 297/320 + 2/3 297/280) = 10 * 99 * 23/2240 =
 *	   22770/2240 = 10.165178571...; h=2: 10 * 99/100 = 9.9.
 * argmax: h=1: j* = 2, 10 * 297/280 = 10.607142857...; h=2: j* = 1, 9.9.
 * Quality: mre = (2/9 + 2/11)/8 = 5/99; e(1..9) = 0 -1 0 1 0 1 0 -1 0,
 * which are also the deviations of x from its mean 10, so S1 = S2 = 2/3,
 * C = 1, P = 5/9 (the five zeros are below 0.6745 * 2/3): unqualified.
 */
static void
markov_by_hand(void)
{
	static const double x[] = { 10, 9, 10, 11, 10, 11, 10, 9, 10 };
	static const int st[] = { 0, 1, 2, 1, 2, 1, 0, 1 };
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 0);
	struct gmc_fit f;
	struct dl_err e = { 0 };
	double out[3], p[3];
	int states_ok = 1;

	is_int(gmc_fit(x, 9, &o, &f, &e), DL_OK, "markov: fit");
	ok(f.shift == 0 && f.ratio_ok, "markov: unshifted, passes");
	ok(f.a == 0, "markov: a = 0");
	is_near(f.b, 10, 0, "markov: b = 10");
	is_near(f.rmin, -1.0 / 9, 1e-15, "markov: rmin = -1/9");
	is_near(f.rmax, 1.0 / 11, 1e-15, "markov: rmax = 1/11");
	is_near(f.width, 20.0 / 297, 1e-15, "markov: width 20/297");
	is_near(f.mid[0], -23.0 / 297, 1e-15, "markov: mid 0 = -23/297");
	is_near(f.mid[1], -1.0 / 99, 1e-15, "markov: mid 1 = -1/99");
	is_near(f.mid[2], 17.0 / 297, 1e-15, "markov: mid 2 = 17/297");
	for (int k = 2; k <= 9; k++) {
		double r = (x[k - 1] - gmc_fitted(&f, (size_t)k)) / x[k - 1];

		states_ok &= gmc_state(&f, r) == st[k - 2];
	}
	ok(states_ok, "markov: residual states 0 1 2 1 2 1 0 1");
	ok(f.count[0][1] == 2 && f.count[1][0] == 1 && f.count[1][2] == 2 &&
	    f.count[2][1] == 2 && f.count[0][0] + f.count[0][2] +
	    f.count[1][1] + f.count[2][0] + f.count[2][2] == 0,
	    "markov: transition counts");
	is_near(f.trans[1][0], 1.0 / 3, 1e-15, "markov: P(1,0) = 1/3");
	is_near(f.trans[1][2], 2.0 / 3, 1e-15, "markov: P(1,2) = 2/3");
	ok(f.trans[0][1] == 1 && f.trans[2][1] == 1,
	    "markov: P(0,1) = P(2,1) = 1");
	is_int(f.last_state, 1, "markov: last state 1");
	gmc_probs(&f, 1, p);
	ok(fabs(p[0] - 1.0 / 3) < 1e-15 && p[1] == 0 &&
	    fabs(p[2] - 2.0 / 3) < 1e-15, "markov: p(1) = (1/3, 0, 2/3)");
	gmc_probs(&f, 2, p);
	ok(fabs(p[0]) < 1e-15 && fabs(p[1] - 1) < 1e-15 && fabs(p[2]) < 1e-15,
	    "markov: p(2) = (0, 1, 0)");
	gmc_probs(&f, 3, p);
	ok(fabs(p[0] - 1.0 / 3) < 1e-15 && fabs(p[2] - 2.0 / 3) < 1e-15,
	    "markov: p(3) = p(1)");
	gmc_forecast(&f, 3, out);
	is_near(out[0], 22770.0 / 2240, 1e-14, "markov: expect h=1");
	is_near(out[1], 9.9, 1e-14, "markov: expect h=2");
	is_near(out[2], 22770.0 / 2240, 1e-14, "markov: expect h=3");
	is_near(gmc_plain(&f, 1), 10, 0, "markov: plain forecast 10");
	o.correction = GMC_ARGMAX;
	is_int(gmc_fit(x, 9, &o, &f, &e), DL_OK, "markov: argmax fit");
	gmc_forecast(&f, 2, out);
	is_near(out[0], 2970.0 / 280, 1e-14, "markov: argmax h=1");
	is_near(out[1], 9.9, 1e-14, "markov: argmax h=2");
	is_near(f.mre, 5.0 / 99, 1e-14, "markov: mre = 5/99");
	is_near(f.C, 1, 1e-14, "markov: C = 1");
	is_near(f.P, 5.0 / 9, 1e-15, "markov: P = 5/9");
	is_str(gmc_grade_name(f.grade), "unqualified", "markov: grade");
}

/*
 * argmax ties go to the lowest state; a state with mid >= 1 is not
 * corrected.  A fit built by hand: yhat = 10 for every k >= 2.
 */
static void
ties(void)
{
	struct gmc_fit f;
	double out[1];

	memset(&f, 0, sizeof(f));
	f.states = 2;
	f.correction = GMC_ARGMAX;
	f.n = 5;
	f.a = 0;
	f.coef = 10;
	f.mid[0] = -0.25;
	f.mid[1] = 0.5;
	f.trans[0][0] = f.trans[0][1] = 0.5;
	f.trans[1][0] = f.trans[1][1] = 0.5;
	f.last_state = 1;
	gmc_forecast(&f, 1, out);
	is_near(out[0], 8, 1e-15, "ties: argmax takes state 0: 10/1.25");
	f.correction = GMC_EXPECT;
	gmc_forecast(&f, 1, out);
	is_near(out[0], 0.5 * 8 + 0.5 * 20, 1e-15, "ties: expect 14");
	f.mid[1] = 1.5;
	gmc_forecast(&f, 1, out);
	is_near(out[0], 0.5 * 8 + 0.5 * 10, 1e-15,
	    "ties: mid >= 1 leaves yhat uncorrected");
	f.clamp = 1;
	gmc_forecast(&f, 1, out);
	is_near(out[0], 1, 0, "ties: clamp to 1");
}

/* Windows, short series, bad options. */
static void
edges(void)
{
	double x[40];
	struct gmc_opts o = opts(16, 3, GMC_EXPECT, 1);
	struct gmc_fit f, g;
	struct dl_err e = { 0 };

	for (int k = 0; k < 40; k++)
		x[k] = 0.4 + 0.1 * sin(k);
	is_int(gmc_fit(x, 3, &o, &f, &e), DL_EDATA, "3 points: error");
	is_str(e.msg, "3 points are too few for a forecast (at least 4 are "
	    "needed)", "3 points: message");
	is_int(gmc_fit(x, 4, &o, &f, &e), DL_OK, "4 points: fit");
	is_int((long)f.n, 4, "4 points: n = 4");
	is_int(gmc_fit(x, 40, &o, &f, &e), DL_OK, "40 points: fit");
	is_int(gmc_fit(x + 24, 16, &o, &g, &e), DL_OK, "last 16: fit");
	ok(f.a == g.a && f.b == g.b && f.last == x[39],
	    "window: only the last 16 points are used");
	o.window = 3;
	is_int(gmc_fit(x, 40, &o, &f, &e), DL_EUSAGE, "window 3: error");
	o.window = 16;
	o.states = 0;
	is_int(gmc_fit(x, 40, &o, &f, &e), DL_EUSAGE, "0 states: error");
	o.states = 1;
	is_int(gmc_fit(x, 40, &o, &f, &e), DL_OK, "1 state: fit");
	is_near(f.mid[0], (f.rmin + f.rmax) / 2, 1e-15,
	    "1 state: mid = (rmin + rmax)/2");
	o.states = 3;
	x[5] = NAN;
	is_int(gmc_fit(x, 16, &o, &f, &e), DL_EDATA, "NaN: error");
	is_near(gmc_phi(0), 1, 0, "phi(0) = 1");
	is_near(gmc_phi(1e-300), 1, 1e-15, "phi(tiny) = 1");
	is_near(gmc_phi(1), exp(1) - 1, 1e-15, "phi(1) = e - 1");
	is_str(gmc_grade_name(GMC_BARELY), "barely", "grade name barely");
	is_str(gmc_grade_name(GMC_QUALIFIED), "qualified",
	    "grade name qualified");
}

int
main(void)
{
	published_six();
	published_four();
	geometric();
	constant();
	zeros();
	flagged();
	markov_by_hand();
	ties();
	edges();
	return done_testing();
}
