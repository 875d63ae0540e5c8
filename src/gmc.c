/*
 * gmc.c - GM(1,1) with a Markov correction of its residuals
 * (dlplan(1) ALGORITHMS, Forecast).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The shifted series y(k) = x(k) + c is never stored: it is recomputed
 * as x[k] + c wherever it is needed, which gives the same double every
 * time and keeps the module free of allocation.
 */
#include <math.h>
#include <string.h>

#include "gmc.h"

void
gmc_opts_default(struct gmc_opts *o)
{
	o->window = GMC_WINDOW_DEFAULT;
	o->states = GMC_STATES_DEFAULT;
	o->correction = GMC_EXPECT;
	o->clamp = 1;
}

double
gmc_phi(double a)
{
	return a == 0 ? 1 : expm1(a) / a;
}

/* The class-ratio test on y(k) = x[k-1] + c, k = 1..n. */
static int
ratio_pass(const double *x, size_t n, double c)
{
	double lo = exp(-2.0 / (double)(n + 1)), hi = exp(2.0 / (double)(n + 1));

	for (size_t k = 0; k < n; k++)
		if (!(x[k] + c > 0))
			return 0;
	for (size_t k = 1; k < n; k++) {
		double q = (x[k - 1] + c) / (x[k] + c);

		if (!(q > lo && q < hi))
			return 0;
	}
	return 1;
}

int
gmc_ratio_test(const double *y, size_t n)
{
	return ratio_pass(y, n, 0);
}

/* Step 2: choose the shift c. */
static void
choose_shift(const double *x, size_t n, struct gmc_fit *f)
{
	double sabs = 0, unit;

	f->shift = 0;
	f->shift_j = 0;
	f->ratio_ok = 1;
	if (ratio_pass(x, n, 0))
		return;
	for (size_t k = 0; k < n; k++)
		sabs += fabs(x[k]);
	unit = fmax(sabs / (double)n, 1e-3);
	for (int j = 1; j <= GMC_SHIFT_STEPS; j++) {
		f->shift_j = j;
		f->shift = j * unit;
		if (ratio_pass(x, n, f->shift))
			return;
	}
	f->ratio_ok = 0;
}

/*
 * Step 3: least squares for y(k) = -a z(k) + b, k = 2..n, in centred
 * form.  The means are taken as offsets from the first term, so that a
 * constant series has exactly zero deviations and a = 0.
 */
static void
fit_ab(const double *x, size_t n, struct gmc_fit *f)
{
	double c = f->shift, m = (double)(n - 1);
	double ago, z, z0 = 0, y0 = x[1] + c, zs = 0, ys = 0, zb, yb;
	double sxx = 0, sxy = 0;

	/* Means of z(k) and y(k). */
	ago = x[0] + c;
	for (size_t k = 1; k < n; k++) {
		double prev = ago, y = x[k] + c;

		ago += y;
		z = (ago + prev) / 2;
		if (k == 1)
			z0 = z;
		zs += z - z0;
		ys += y - y0;
	}
	zb = z0 + zs / m;
	yb = y0 + ys / m;
	/* Centred sums of squares and products. */
	ago = x[0] + c;
	for (size_t k = 1; k < n; k++) {
		double prev = ago, y = x[k] + c;

		ago += y;
		z = (ago + prev) / 2;
		sxx += (z - zb) * (z - zb);
		sxy += (z - zb) * (y - yb);
	}
	f->a = sxy == 0 || sxx == 0 ? 0 : -sxy / sxx;
	f->b = yb + f->a * zb;
	f->y1 = x[0] + c;
	f->coef = (f->b - f->a * f->y1) * gmc_phi(f->a);
}

double
gmc_fitted(const struct gmc_fit *f, size_t k)
{
	if (k <= 1)
		return f->y1;
	return f->coef * exp(-f->a * (double)(k - 1));
}

/* r(k) for k = 2..n (x is the window, 0-based). */
static double
resid(const struct gmc_fit *f, const double *x, size_t k)
{
	double y = x[k - 1] + f->shift;

	return y == 0 ? 0 : (y - gmc_fitted(f, k)) / y;
}

int
gmc_state(const struct gmc_fit *f, double r)
{
	if (f->width == 0)
		return 0;
	for (int j = 0; j < f->states - 1; j++)
		if (r < f->rmin + (j + 1) * f->width)
			return j;
	return f->states - 1;
}

/* Step 4: states, midpoints, transition counts and probabilities. */
static void
markov(const double *x, size_t n, struct gmc_fit *f)
{
	int K = f->states, prev = 0;

	f->rmin = f->rmax = resid(f, x, 2);
	for (size_t k = 3; k <= n; k++) {
		double r = resid(f, x, k);

		f->rmin = fmin(f->rmin, r);
		f->rmax = fmax(f->rmax, r);
	}
	f->width = (f->rmax - f->rmin) / K;
	for (int j = 0; j < K; j++)
		f->mid[j] = f->rmin + (j + 0.5) * f->width;
	memset(f->count, 0, sizeof(f->count));
	memset(f->trans, 0, sizeof(f->trans));
	for (size_t k = 2; k <= n; k++) {
		int s = gmc_state(f, resid(f, x, k));

		if (k > 2)
			f->count[prev][s]++;
		prev = s;
	}
	f->last_state = prev;
	for (int i = 0; i < K; i++) {
		long tot = 0;

		for (int j = 0; j < K; j++)
			tot += f->count[i][j];
		if (tot == 0) {
			f->trans[i][i] = 1;
			continue;
		}
		for (int j = 0; j < K; j++)
			f->trans[i][j] = (double)f->count[i][j] / (double)tot;
	}
}

static enum gmc_grade
grade_of(double C, double P)
{
	enum gmc_grade gc, gp;

	gc = C <= 0.35 ? GMC_GOOD : C <= 0.50 ? GMC_QUALIFIED :
	    C <= 0.65 ? GMC_BARELY : GMC_UNQUALIFIED;
	gp = P >= 0.95 ? GMC_GOOD : P >= 0.80 ? GMC_QUALIFIED :
	    P >= 0.70 ? GMC_BARELY : GMC_UNQUALIFIED;
	return gc > gp ? gc : gp;
}

/* Step 6: mean relative error, C, P and the grade. */
static void
quality(const double *x, size_t n, struct gmc_fit *f)
{
	double nn = (double)n, sr = 0, xs = 0, es = 0, xb, eb;
	double s1 = 0, s2 = 0;
	size_t inside = 0;

	for (size_t k = 2; k <= n; k++)
		sr += fabs(resid(f, x, k));
	f->mre = sr / (double)(n - 1);
	/* Means, again as offsets from the first term (e(1) = 0). */
	for (size_t k = 1; k <= n; k++) {
		xs += x[k - 1] - x[0];
		es += x[k - 1] + f->shift - gmc_fitted(f, k);
	}
	xb = x[0] + xs / nn;
	eb = es / nn;
	for (size_t k = 1; k <= n; k++) {
		double dx = x[k - 1] - xb;
		double de = x[k - 1] + f->shift - gmc_fitted(f, k) - eb;

		s1 += dx * dx;
		s2 += de * de;
	}
	s1 = sqrt(s1 / nn);
	s2 = sqrt(s2 / nn);
	if (s1 == 0) {
		f->C = s2 == 0 ? 0 : 1;
		f->P = s2 == 0 ? 1 : 0;
	} else {
		f->C = s2 / s1;
		for (size_t k = 1; k <= n; k++) {
			double de = x[k - 1] + f->shift - gmc_fitted(f, k) -
			    eb;

			inside += fabs(de) < 0.6745 * s1;
		}
		f->P = (double)inside / nn;
	}
	f->grade = grade_of(f->C, f->P);
}

int
gmc_fit(const double *x, size_t len, const struct gmc_opts *o,
    struct gmc_fit *f, struct dl_err *e)
{
	size_t n;
	double s = 0;

	if (o->window < GMC_MIN_POINTS)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "window %zu is too "
		    "small (at least %d points)", o->window, GMC_MIN_POINTS);
	if (o->states < 1 || o->states > GMC_MAX_STATES)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "%d Markov states "
		    "is out of range [1, %d]", o->states, GMC_MAX_STATES);
	if (o->correction != GMC_EXPECT && o->correction != GMC_ARGMAX)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "unknown correction %d", (int)o->correction);
	if (len < GMC_MIN_POINTS)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "%zu points are too "
		    "few for a forecast (at least %d are needed)", len,
		    GMC_MIN_POINTS);
	n = len < o->window ? len : o->window;
	x += len - n;
	for (size_t k = 0; k < n; k++) {
		if (!isfinite(x[k]))
			return dl_seterr(e, DL_EDATA, NULL, 0, 0,
			    "point %zu of the window is not a finite number",
			    k + 1);
		s += x[k];
	}
	memset(f, 0, sizeof(*f));
	f->states = o->states;
	f->correction = o->correction;
	f->clamp = o->clamp;
	f->n = n;
	f->last = x[n - 1];
	f->mean = s / (double)n;
	choose_shift(x, n, f);
	fit_ab(x, n, f);
	markov(x, n, f);
	quality(x, n, f);
	return DL_OK;
}

/* p <- p P. */
static void
prob_step(const struct gmc_fit *f, double *p)
{
	double q[GMC_MAX_STATES];
	int K = f->states;

	for (int j = 0; j < K; j++) {
		q[j] = 0;
		for (int i = 0; i < K; i++)
			q[j] += p[i] * f->trans[i][j];
	}
	memcpy(p, q, (size_t)K * sizeof(double));
}

void
gmc_probs(const struct gmc_fit *f, int h, double *p)
{
	for (int j = 0; j < f->states; j++)
		p[j] = j == f->last_state;
	for (int s = 0; s < h; s++)
		prob_step(f, p);
}

static double
clamp01(double v)
{
	if (!(v > 0))
		return 0;
	return v > 1 ? 1 : v;
}

/* yhat / (1 - mid(j)), or yhat when mid(j) >= 1. */
static double
corrected(const struct gmc_fit *f, int j, double yhat)
{
	return f->mid[j] < 1 ? yhat / (1 - f->mid[j]) : yhat;
}

void
gmc_forecast(const struct gmc_fit *f, int horizon, double *out)
{
	double p[GMC_MAX_STATES];

	gmc_probs(f, 0, p);
	for (int h = 1; h <= horizon; h++) {
		double yhat = gmc_fitted(f, f->n + (size_t)h), v = 0;
		int best = 0;

		prob_step(f, p);
		if (f->correction == GMC_EXPECT) {
			for (int j = 0; j < f->states; j++)
				v += p[j] * corrected(f, j, yhat);
		} else {
			for (int j = 1; j < f->states; j++)
				if (p[j] > p[best])
					best = j;
			v = corrected(f, best, yhat);
		}
		v -= f->shift;
		out[h - 1] = f->clamp ? clamp01(v) : v;
	}
}

double
gmc_plain(const struct gmc_fit *f, int h)
{
	double v = gmc_fitted(f, f->n + (size_t)h) - f->shift;

	return f->clamp ? clamp01(v) : v;
}

const char *
gmc_grade_name(enum gmc_grade g)
{
	static const char *const names[] = {
		"good", "qualified", "barely", "unqualified"
	};

	return (unsigned)g < ARRAY_SIZE(names) ? names[g] : "unqualified";
}
