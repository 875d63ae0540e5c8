/*
 * fmethod.c - the forecast methods of "predict --method" and --forecast.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fmethod.h"

static const char *const names[FM_NMETHODS] = {
	"gmc", "gm", "last", "mean", "median", "wmed", "ensemble", "auto"
};

/*
 * The ensemble's weights per step h (rows) for gmc, last, mean, median
 * and wmed (columns), fitted by tests/bench/fit-ensemble.py: pooled-MAPE
 * IRLS on the even-index series of the Google VM CPU traces (window 16),
 * held out on the odd ones; see tests/bench/ensemble-spec.md.  Printed
 * with 17 significant digits, so these are the fitted doubles exactly.
 */
static const double weights[FM_WEIGHT_STEPS][5] = {
	{ 0.2477557058918036, 0.19942933326386411, -0.12843207043406624,
	  0.1657210713046727, 0.5134127670189389 },
	{ 0.095605153943396637, 0.13121427360442062, -0.089282101907968967,
	  0.10128113256862883, 0.75947493476928818 },
	{ 0.16585506701854585, 0.010706351649028676, -0.078251591990257885,
	  0.18018501111646801, 0.71990152153179221 },
	{ 0.062245053202466837, 0.091963144427954696, -0.07752209058140852,
	  0.10884866789347719, 0.81363776634998286 },
	{ 0.084968038675908047, 0.055637771605306321, -0.065942819988493953,
	  0.14610834661709129, 0.77785339014812627 },
	{ 0.018770182922811688, 0.16265618321296973, -0.061508990731214505,
	  0.075858403502567118, 0.80273612334030697 },
};

/* auto's candidates, in the order that breaks ties. */
static const int auto_cands[] = {
	FM_ENSEMBLE, FM_GMC, FM_GM, FM_LAST, FM_MEAN, FM_MEDIAN
};
#define NCANDS (sizeof(auto_cands) / sizeof(auto_cands[0]))

#define WMED_DECAY	0.8
#define WMED_FLOOR	1e-3

const char *
fm_name(int m)
{
	return m >= 0 && m < FM_NMETHODS ? names[m] : NULL;
}

int
fm_parse(const char *s)
{
	for (int m = 0; m < FM_NMETHODS; m++)
		if (strcmp(s, names[m]) == 0)
			return m;
	return -1;
}

static double
clamp01(double v)
{
	return !(v > 0) ? 0 : v > 1 ? 1 : v;
}

static double
median(const double *x, size_t n, double *tmp)
{
	memcpy(tmp, x, n * sizeof(double));
	qsort(tmp, n, sizeof(double), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/* A point of the window with its weight, sorted by (value, age). */
struct wpoint {
	double x, g;
	size_t k;
};

static int
cmp_wpoint(const void *a, const void *b)
{
	const struct wpoint *p = a, *q = b;

	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return (p->k > q->k) - (p->k < q->k);
}

static double
wmed(const double *x, size_t n)
{
	struct wpoint *w = xcalloc(n, sizeof(*w));
	double u = 1, tot = 0, acc = 0, v = x[n - 1];

	for (size_t k = n; k-- > 0;) {
		w[k].x = x[k];
		w[k].k = k;
		w[k].g = u / (x[k] > WMED_FLOOR ? x[k] : WMED_FLOOR);
		u *= WMED_DECAY;
	}
	for (size_t k = 0; k < n; k++)
		tot += w[k].g;
	qsort(w, n, sizeof(*w), cmp_wpoint);
	for (size_t i = 0; i < n; i++) {
		acc += w[i].g;
		if (acc >= tot / 2) {
			v = w[i].x;
			break;
		}
	}
	free(w);
	return v;
}

void
fm_window(const struct gmc_fit *f, const double *x, size_t n, int horizon,
    double *out, double *tmp)
{
	double last = x[n - 1], sum = 0, mean, med, wm;
	size_t H = (size_t)horizon;

	for (size_t k = 0; k < n; k++)
		sum += x[k];
	mean = sum / (double)n;
	med = median(x, n, tmp);
	wm = wmed(x, n);
	gmc_forecast(f, horizon, out + FM_GMC * H);
	for (size_t h = 0; h < H; h++) {
		const double *w = weights[h < FM_WEIGHT_STEPS ? h :
		    FM_WEIGHT_STEPS - 1];
		double gmc = out[FM_GMC * H + h], s = 0;

		out[FM_GM * H + h] = gmc_plain(f, (int)h + 1);
		out[FM_LAST * H + h] = last;
		out[FM_MEAN * H + h] = mean;
		out[FM_MEDIAN * H + h] = med;
		out[FM_WMED * H + h] = wm;
		s += w[0] * gmc;
		s += w[1] * last;
		s += w[2] * mean;
		s += w[3] * med;
		s += w[4] * wm;
		out[FM_ENSEMBLE * H + h] = clamp01(s);
	}
}

/* The window forecasts of the W points before origin o of x. */
static int
window_at(const double *x, size_t o, size_t W, const struct gmc_opts *go,
    int horizon, double *out, double *tmp, struct dl_err *e)
{
	struct gmc_fit f;
	int rc;

	if ((rc = gmc_fit(x + (o - W), W, go, &f, e)) != DL_OK)
		return rc;
	fm_window(&f, x + (o - W), W, horizon, out, tmp);
	return DL_OK;
}

/* The candidate with the smallest total; ties go to the earliest. */
static int
best_cand(const double *tot)
{
	size_t b = 0;

	for (size_t c = 1; c < NCANDS; c++)
		if (tot[c] < tot[b])
			b = c;
	return auto_cands[b];
}

/* tot[c] += |f_c - y| / |y| for the window forecasts f at step h. */
static void
add_ape(double *tot, const double *f, int horizon, int h, double y)
{
	if (y == 0)
		return;
	for (size_t c = 0; c < NCANDS; c++)
		tot[c] += fabs(f[(size_t)auto_cands[c] * (size_t)horizon +
		    (size_t)h - 1] - y) / fabs(y);
}

int
fm_forecast(const double *x, size_t len, int m, const struct gmc_opts *o,
    int horizon, double *out, int *picks, struct dl_err *e)
{
	size_t W = o->window, n = len < W ? len : W, H = (size_t)horizon;
	size_t per = FM_NWINDOW * H;
	double *cur = xcalloc(per, sizeof(double));
	double *tmp = xcalloc(2 * (W > n ? W : n), sizeof(double));
	double *past = NULL, *tot = NULL;
	struct gmc_fit f;
	int rc;

	if ((rc = gmc_fit(x, len, o, &f, e)) != DL_OK)
		goto out;
	if (m == FM_GMC) {
		/* The planner's default: no other member is needed. */
		gmc_forecast(&f, horizon, out);
		for (size_t h = 0; picks && h < H; h++)
			picks[h] = m;
		goto out;
	}
	fm_window(&f, x + (len - n), n, horizon, cur, tmp);
	if (m != FM_AUTO) {
		memcpy(out, cur + (size_t)m * H, H * sizeof(double));
		for (size_t h = 0; picks && h < H; h++)
			picks[h] = m;
		goto out;
	}
	/* auto: the APE sums of the origins W..len-1, for every h. */
	past = xcalloc(per, sizeof(double));
	tot = xcalloc(H * NCANDS, sizeof(double));
	for (size_t org = W; org < len; org++) {
		if ((rc = window_at(x, org, W, o, horizon, past, tmp, e)) !=
		    DL_OK)
			goto out;
		for (size_t h = 1; h <= H && org + h <= len; h++)
			add_ape(tot + (h - 1) * NCANDS, past, horizon, (int)h,
			    x[org + h - 1]);
	}
	for (size_t h = 0; h < H; h++) {
		int b = best_cand(tot + h * NCANDS);

		out[h] = cur[(size_t)b * H + h];
		if (picks)
			picks[h] = b;
	}
out:
	free(cur);
	free(tmp);
	free(past);
	free(tot);
	return rc;
}

void
fm_auto_backtest(const double *x, size_t len, size_t W, int horizon,
    const double *f, double *out, int *picks)
{
	size_t H = (size_t)horizon, per = FM_NWINDOW * H;
	double tot[NCANDS];

	for (size_t h = 1; h <= H; h++) {
		size_t k = W;

		memset(tot, 0, sizeof(tot));
		for (size_t o = W; o < len && o + h <= len; o++) {
			int b;

			/* Origins whose target k + h - 1 is before o. */
			for (; k + h <= o; k++)
				add_ape(tot, f + (k - W) * per, horizon,
				    (int)h, x[k + h - 1]);
			b = best_cand(tot);
			out[(o - W) * H + h - 1] = f[(o - W) * per +
			    (size_t)b * H + h - 1];
			picks[(o - W) * H + h - 1] = b;
		}
	}
}

void
fm_autobt_init(struct fm_autobt *a, int horizon)
{
	a->horizon = horizon;
	a->tot = xcalloc((size_t)horizon * NCANDS + 1, sizeof(double));
}

void
fm_autobt_score(struct fm_autobt *a, int h, const double *fk, double y)
{
	add_ape(a->tot + (size_t)(h - 1) * NCANDS, fk, a->horizon, h, y);
}

int
fm_autobt_pick(const struct fm_autobt *a, int h)
{
	return best_cand(a->tot + (size_t)(h - 1) * NCANDS);
}

void
fm_autobt_free(struct fm_autobt *a)
{
	free(a->tot);
	a->tot = NULL;
}
