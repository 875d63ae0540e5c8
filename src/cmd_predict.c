/*
 * cmd_predict.c - "dlplan predict": GMC forecasts of load histories, and
 * a rolling-origin backtest of them against simple baselines.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * -H takes a load.csv (node,t,util: one series per node) or a traffic.csv
 * (t,src,dst,util: one series per directed link, named "src>dst"), told
 * apart by the header.  With --mean-link a traffic.csv gives the single
 * series "mean", the mean utilisation over the links with data at each
 * step, which is what the router forecasts.  Series keep the order in
 * which they first appear and are sorted by t.
 *
 * A series needs at least 4 points (exit 2 naming it otherwise); only its
 * last --window points are fitted.  Forecasts are clamped to [0, 1].
 *
 * Forecast output: csv is the stable format of dlplan-formats(5),
 * predict csv
 * (node,h,forecast,a,b,shift,ratio_ok,mre,C,P,grade; ratio_ok is 0 when
 * no shift passed the class-ratio test).  json is an object with schema
 * "dlplan.predict/1", the options, and series[] holding node, points,
 * fitted (points used), a, b, shift, ratio_ok, mre, C, P, grade, mean (of
 * the forecast over the horizon) and forecast[] (h = 1..horizon).
 *
 * --backtest: for every origin o = W..n-1 of a series with n points, fit
 * the W points ending at o and forecast h = 1..horizon (as far as o + h <=
 * n).  Methods: gmc (the corrected forecast), gm11 (plain GM(1,1) with the
 * same shift), last (x(o)) and mean (of the W points).  MAPE is the mean
 * of |error|/|actual| over the points whose actual is not 0 (the others
 * are counted apart); MAE is over all points.  Overall figures pool the
 * points of every series.  csv: node,h,method,points,mape_points,mape,mae
 * with node "*" for the overall rows, mape as a fraction and an empty
 * field when there is nothing to average; json: schema
 * "dlplan.backtest/1", overall[] and series[].steps[] per h, with
 * methods.{gmc,gm11,last,mean}.{mape,mae} (null when undefined).  The
 * table shows MAPE in percent.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "fmethod.h"
#include "forecast.h"
#include "gmc.h"
#include "series.h"

enum {
	O_HISTORY = 1, O_HORIZON, O_WINDOW, O_STATES, O_CORRECTION, O_FORMAT,
	O_BACKTEST, O_MEANLINK, O_METHOD, O_EVERY
};
enum { F_TABLE, F_CSV, F_JSON };

#define HORIZON_MAX	10000
#define WINDOW_MAX	1000000

static const struct optspec predict_opts[] = {
	{ "history", 'H', O_HISTORY, "FILE", "csv",
	    "load.csv (node,t,util) or traffic.csv (t,src,dst,util)" },
	{ "horizon", 0, O_HORIZON, "N", NULL,
	    "forecast steps 1..N (default 1)" },
	{ "window", 0, O_WINDOW, "W", NULL,
	    "fit the last W points (default 16, at least 4)" },
	{ "states", 0, O_STATES, "K", NULL,
	    "Markov residual states, 1..32 (default 3)" },
	{ "correction", 0, O_CORRECTION, "HOW", "expect|argmax",
	    "Markov correction (default expect)" },
	{ "method", 0, O_METHOD, "M", FM_NAMES,
	    "forecast method (default gmc)" },
	{ "format", 0, O_FORMAT, "FMT", "table|csv|json",
	    "output format (default table)" },
	{ "backtest", 0, O_BACKTEST, NULL, NULL,
	    "rolling-origin MAPE and MAE of every method side by side" },
	{ "every", 0, O_EVERY, "N", NULL,
	    "with --backtest: score every Nth origin only (default 1)" },
	{ "mean-link", 0, O_MEANLINK, NULL, NULL,
	    "with a traffic.csv: forecast only the mean link load" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_predict(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_predict = {
	"predict", cmd_predict,
	"-H FILE [--horizon N] [--window W] [--states K] "
	"[--correction expect|argmax] [--method M] [--format table|csv|json] "
	"[--backtest [--every N]] "
	"[--mean-link]",
	"forecast node and link load with a Grey Markov Chain",
	predict_opts, 0
};

struct params {
	const char *path;
	int horizon, format, backtest, meanlink, method;
	size_t every;
	struct gmc_opts o;
};

static const char *const corr_names[] = { "expect", "argmax" };

/* --- forecasts ----------------------------------------------------- */

/* The method that made r's forecast at step h: auto's pick, or --method. */
static const char *
step_method(const struct params *pa, const struct forecast_result *r, int h)
{
	return fm_name(r->picks ? r->picks[h - 1] : pa->method);
}

/* Upper-case name of the method for titles ("GMC", "ENSEMBLE"). */
static const char *
method_title(int m)
{
	static const char *const t[FM_NMETHODS] = {
		"GMC", "GM(1,1)", "last-value", "window-mean", "window-median",
		"weighted-median", "ensemble", "auto"
	};

	return t[m];
}

static int
fit_all(const struct params *pa, const struct series_hist *hs,
    struct forecast_result *res, struct dl_err *e)
{
	for (size_t k = 0; k < hs->ns; k++) {
		int rc = forecast_run(&hs->s[k].s, &pa->o, pa->method,
		    pa->horizon, &res[k], e);

		if (rc != DL_OK) {
			char msg[sizeof(e->msg)];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			return dl_seterr(e, rc, pa->path, 0, 0, "%s '%s': %s",
			    hs->traffic && !pa->meanlink ? "link" : "series",
			    hs->s[k].name, msg);
		}
	}
	return DL_OK;
}

static void
print_csv(const struct params *pa, const struct series_hist *hs,
    const struct forecast_result *res)
{
	char b1[DL_DBL_BUFSZ], b2[DL_DBL_BUFSZ], b3[DL_DBL_BUFSZ];
	char b4[DL_DBL_BUFSZ], b5[DL_DBL_BUFSZ], b6[DL_DBL_BUFSZ];
	char b7[DL_DBL_BUFSZ];

	printf("node,h,forecast,a,b,shift,ratio_ok,mre,C,P,grade%s\n",
	    pa->method == FM_GMC ? "" : ",method");
	for (size_t k = 0; k < hs->ns; k++) {
		const struct forecast_summary *f = &res[k].f;

		fmt_double(b2, f->a);
		fmt_double(b3, f->b);
		fmt_double(b4, f->shift);
		fmt_double(b5, f->mre);
		fmt_double(b6, f->C);
		fmt_double(b7, f->P);
		for (int h = 1; h <= pa->horizon; h++) {
			printf("%s,%d,%s,%s,%s,%s,%d,%s,%s,%s,%s",
			    hs->s[k].name, h, fmt_double(b1, res[k].fc[h - 1]),
			    b2, b3, b4, f->ratio_ok, b5, b6, b7,
			    gmc_grade_name(f->grade));
			if (pa->method != FM_GMC)
				printf(",%s", step_method(pa, &res[k], h));
			putchar('\n');
		}
	}
}

/* --- aligned tables ------------------------------------------------ */

struct table {
	size_t ncols, nrows;
	char **cell;		/* nrows * ncols */
	size_t cap;
};

static void
tbl_row(struct table *tb)
{
	tb->cell = xgrow(tb->cell, &tb->cap, (tb->nrows + 1) * tb->ncols,
	    sizeof(char *));
	memset(&tb->cell[tb->nrows * tb->ncols], 0, tb->ncols *
	    sizeof(char *));
	tb->nrows++;
}

static void __attribute__((format(printf, 3, 4)))
tbl_set(struct table *tb, size_t col, const char *fmt, ...)
{
	char **c = &tb->cell[(tb->nrows - 1) * tb->ncols + col];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	free(*c);
	*c = xmalloc((size_t)(n < 0 ? 0 : n) + 1);
	**c = '\0';
	va_start(ap, fmt);
	vsnprintf(*c, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	va_end(ap);
}

/* Print with the first column left-aligned and the others right. */
static void
tbl_print(struct table *tb, const char *indent)
{
	size_t *w = xcalloc(tb->ncols, sizeof(size_t));

	for (size_t r = 0; r < tb->nrows; r++)
		for (size_t c = 0; c < tb->ncols; c++) {
			const char *s = tb->cell[r * tb->ncols + c];
			size_t n = s ? strlen(s) : 0;

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < tb->nrows; r++) {
		fputs(indent, stdout);
		for (size_t c = 0; c < tb->ncols; c++) {
			const char *s = tb->cell[r * tb->ncols + c];

			if (c == 0)
				printf("%-*s", (int)w[c], s ? s : "");
			else
				printf("  %*s", (int)w[c], s ? s : "");
		}
		putchar('\n');
	}
	for (size_t i = 0; i < tb->nrows * tb->ncols; i++)
		free(tb->cell[i]);
	free(tb->cell);
	free(w);
	memset(tb, 0, sizeof(*tb));
}

/*
 * The methods of r's steps: one name, or auto's picks joined by commas
 * (a static buffer, cut after 200 characters).
 */
static const char *
method_list(const struct params *pa, const struct forecast_result *r)
{
	static char buf[256];
	size_t len = 0;

	if (r->picks == NULL)
		return fm_name(pa->method);
	buf[0] = '\0';
	for (int h = 1; h <= pa->horizon && len < 200; h++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
		    h > 1 ? "," : "", step_method(pa, r, h));
	return buf;
}

/* Forecast columns shown in the table; csv and json show them all. */
#define TABLE_STEPS 8

static void
print_table(const struct params *pa, const struct series_hist *hs,
    const struct forecast_result *res)
{
	int steps = pa->horizon <= TABLE_STEPS ? pa->horizon : 0;
	size_t extra = pa->method == FM_GMC ? 0 : 1;
	struct table tb = { 11 + (size_t)steps + extra, 0, NULL, 0 };
	size_t flagged = 0;

	printf("%s forecast of %zu series from %s (window %zu, %d states, "
	    "%s correction, horizon %d)\n", method_title(pa->method), hs->ns,
	    pa->path, pa->o.window, pa->o.states, corr_names[pa->o.correction],
	    pa->horizon);
	if (extra)
		printf("(a, b, shift, ratio, mre, C, P and grade describe the "
		    "GMC fit of the window; method: what made each step's "
		    "forecast)\n");
	if (steps == 0)
		printf("(the horizon is too long for a column per step: use "
		    "--format csv or json for each step)\n");
	tbl_row(&tb);
	tbl_set(&tb, 0, "%s", hs->traffic && !pa->meanlink ? "link" :
	    pa->meanlink ? "series" : "node");
	tbl_set(&tb, 1, "points");
	tbl_set(&tb, 2, "a");
	tbl_set(&tb, 3, "b");
	tbl_set(&tb, 4, "shift");
	tbl_set(&tb, 5, "ratio");
	tbl_set(&tb, 6, "mre");
	tbl_set(&tb, 7, "C");
	tbl_set(&tb, 8, "P");
	tbl_set(&tb, 9, "grade");
	tbl_set(&tb, 10, "mean");
	for (int h = 1; h <= steps; h++)
		tbl_set(&tb, 10 + (size_t)h, "h=%d", h);
	if (extra)
		tbl_set(&tb, 11 + (size_t)steps, "method");
	for (size_t k = 0; k < hs->ns; k++) {
		const struct forecast_summary *f = &res[k].f;

		tbl_row(&tb);
		tbl_set(&tb, 0, "%s", hs->s[k].name);
		tbl_set(&tb, 1, "%zu", hs->s[k].s.n);
		tbl_set(&tb, 2, "%.6g", f->a);
		tbl_set(&tb, 3, "%.6g", f->b);
		tbl_set(&tb, 4, "%.4g", f->shift);
		tbl_set(&tb, 5, "%s", f->ratio_ok ? "ok" : "FAIL");
		tbl_set(&tb, 6, "%.4f", f->mre);
		tbl_set(&tb, 7, "%.4f", f->C);
		tbl_set(&tb, 8, "%.4f", f->P);
		tbl_set(&tb, 9, "%s", gmc_grade_name(f->grade));
		tbl_set(&tb, 10, "%.4f", res[k].mean);
		for (int h = 1; h <= steps; h++)
			tbl_set(&tb, 10 + (size_t)h, "%.4f", res[k].fc[h - 1]);
		if (extra)
			tbl_set(&tb, 11 + (size_t)steps, "%s",
			    method_list(pa, &res[k]));
		flagged += !f->ratio_ok;
	}
	tbl_print(&tb, "");
	if (flagged)
		printf("%zu series failed the class-ratio test at every "
		    "shift (ratio FAIL): treat their forecasts with care\n",
		    flagged);
}

/* The keys that open both json documents. */
static void
json_head(json_t *o, const char *schema, const struct params *pa,
    const struct series_hist *hs)
{
	json_object_set_new(o, "schema", json_string(schema));
	json_object_set_new(o, "history", json_string(pa->path));
	json_object_set_new(o, "kind", json_string(!hs->traffic ? "load" :
	    pa->meanlink ? "mean-link" : "traffic"));
	json_object_set_new(o, "horizon", json_integer(pa->horizon));
	json_object_set_new(o, "window",
	    json_integer((json_int_t)pa->o.window));
	json_object_set_new(o, "states", json_integer(pa->o.states));
	json_object_set_new(o, "correction",
	    json_string(corr_names[pa->o.correction]));
}

static int
print_json(const struct params *pa, const struct series_hist *hs,
    const struct forecast_result *res)
{
	json_t *o = json_object(), *arr = json_array();
	int rc;

	json_head(o, "dlplan.predict/1", pa, hs);
	if (pa->method != FM_GMC)
		json_object_set_new(o, "method",
		    json_string(fm_name(pa->method)));
	for (size_t k = 0; k < hs->ns; k++) {
		const struct forecast_summary *f = &res[k].f;
		json_t *s = json_object(), *fa = json_array();

		json_object_set_new(s, "node", json_string(hs->s[k].name));
		json_object_set_new(s, "points",
		    json_integer((json_int_t)hs->s[k].s.n));
		json_object_set_new(s, "fitted", json_integer((json_int_t)f->n));
		json_object_set_new(s, "a", cmd_json_real(f->a));
		json_object_set_new(s, "b", cmd_json_real(f->b));
		json_object_set_new(s, "shift", cmd_json_real(f->shift));
		json_object_set_new(s, "ratio_ok", json_boolean(f->ratio_ok));
		json_object_set_new(s, "mre", cmd_json_real(f->mre));
		json_object_set_new(s, "C", cmd_json_real(f->C));
		json_object_set_new(s, "P", cmd_json_real(f->P));
		json_object_set_new(s, "grade",
		    json_string(gmc_grade_name(f->grade)));
		json_object_set_new(s, "mean", cmd_json_real(res[k].mean));
		for (int h = 0; h < pa->horizon; h++)
			json_array_append_new(fa, cmd_json_real(res[k].fc[h]));
		json_object_set_new(s, "forecast", fa);
		if (res[k].picks) {
			json_t *pk = json_array();

			for (int h = 1; h <= pa->horizon; h++)
				json_array_append_new(pk, json_string(
				    step_method(pa, &res[k], h)));
			json_object_set_new(s, "methods", pk);
		}
		json_array_append_new(arr, s);
	}
	json_object_set_new(o, "series", arr);
	rc = cmd_print_json(o);
	json_decref(o);
	return rc;
}

/* --- backtest ------------------------------------------------------ */

#define NM FM_NMETHODS

/* The method with the lowest MAPE among a[0..NM-1] (the first on ties), or
 * -1 when no method has one. */
static int
bt_best(const struct forecast_acc *a)
{
	int b = -1;

	for (int m = 0; m < NM; m++)
		if (a[m].nape > 0 && (b < 0 || a[m].ape / (double)a[m].nape <
		    a[b].ape / (double)a[b].nape))
			b = m;
	return b;
}

/* One table row per step h: name, h, points, MAPE % and MAE per method. */
static void
bt_table_rows(struct table *tb, const char *name,
    const struct forecast_acc *acc, int horizon)
{
	for (int h = 1; h <= horizon; h++) {
		const struct forecast_acc *a = &acc[(size_t)(h - 1) * NM];
		int best = bt_best(a);

		tbl_row(tb);
		tbl_set(tb, 0, "%s", name);
		tbl_set(tb, 1, "%d", h);
		tbl_set(tb, 2, "%ld", a[0].n);
		for (int m = 0; m < NM; m++) {
			if (a[m].nape > 0)
				tbl_set(tb, 3 + (size_t)m, "%.2f%s",
				    100 * a[m].ape / (double)a[m].nape,
				    m == best ? "*" : " ");
			else
				tbl_set(tb, 3 + (size_t)m, "- ");
			if (a[m].n > 0)
				tbl_set(tb, 3 + NM + (size_t)m, "%.4f",
				    a[m].ae / (double)a[m].n);
			else
				tbl_set(tb, 3 + NM + (size_t)m, "-");
		}
	}
}

static void
bt_table_head(struct table *tb, const char *first)
{
	tbl_row(tb);
	tbl_set(tb, 0, "%s", first);
	tbl_set(tb, 1, "h");
	tbl_set(tb, 2, "points");
	for (int m = 0; m < NM; m++) {
		tbl_set(tb, 3 + (size_t)m, "%s ", fm_name(m));
		tbl_set(tb, 3 + NM + (size_t)m, "%s", fm_name(m));
	}
}

static void
bt_print_table(const struct params *pa, const struct series_hist *hs,
    const struct forecast_acc *acc, const struct forecast_acc *all)
{
	struct table tb = { 3 + 2 * NM, 0, NULL, 0 };
	size_t nh = (size_t)pa->horizon * NM;
	long zeros = 0, n = 0;

	for (int h = 0; h < pa->horizon; h++) {
		n += all[(size_t)h * NM].n;
		zeros += all[(size_t)h * NM].n - all[(size_t)h * NM].nape;
	}
	printf("forecast backtest of %zu series from %s (window %zu, %d "
	    "states, %s correction): rolling origin, each fit on the %zu "
	    "points before it\n", hs->ns, pa->path, pa->o.window,
	    pa->o.states, corr_names[pa->o.correction], pa->o.window);
	printf("methods: gmc = GM(1,1) + Markov correction, gm = plain "
	    "GM(1,1), last = last value, mean = window mean, median = window "
	    "median, wmed = weighted median, ensemble = their fixed "
	    "combination, auto = the best on the series' earlier origins\n");
	if (pa->every > 1)
		printf("scored: every %zu-th origin (auto learns from all of "
		    "them)\n", pa->every);
	printf("MAPE %% per method, then MAE per method; * marks the lowest "
	    "MAPE of a row\n");
	printf("MAPE leaves out the %ld of %ld forecast points whose actual "
	    "value is 0; MAE counts them all\n\noverall\n", zeros, n);
	bt_table_head(&tb, "series");
	bt_table_rows(&tb, "all", all, pa->horizon);
	tbl_print(&tb, "  ");
	printf("\nper series\n");
	tb.ncols = 3 + 2 * NM;
	bt_table_head(&tb, "series");
	for (size_t k = 0; k < hs->ns; k++)
		bt_table_rows(&tb, hs->s[k].name, acc + k * nh, pa->horizon);
	tbl_print(&tb, "  ");
}

static void
bt_csv_rows(const char *name, const struct forecast_acc *acc, int horizon)
{
	char b1[DL_DBL_BUFSZ], b2[DL_DBL_BUFSZ];

	for (int h = 1; h <= horizon; h++) {
		int best = bt_best(&acc[(size_t)(h - 1) * NM]);

		for (int m = 0; m < NM; m++) {
			const struct forecast_acc *a = &acc[(size_t)(h - 1) *
			    NM + (size_t)m];

			if (a->nape > 0)
				fmt_double(b1, a->ape / (double)a->nape);
			else
				b1[0] = '\0';
			if (a->n > 0)
				fmt_double(b2, a->ae / (double)a->n);
			else
				b2[0] = '\0';
			printf("%s,%d,%s,%ld,%ld,%s,%s,%d\n", name, h,
			    fm_name(m), a->n, a->nape, b1, b2, m == best);
		}
	}
}

static void
bt_print_csv(const struct params *pa, const struct series_hist *hs,
    const struct forecast_acc *acc, const struct forecast_acc *all)
{
	size_t nh = (size_t)pa->horizon * NM;

	printf("node,h,method,points,mape_points,mape,mae,best\n");
	bt_csv_rows("*", all, pa->horizon);
	for (size_t k = 0; k < hs->ns; k++)
		bt_csv_rows(hs->s[k].name, acc + k * nh, pa->horizon);
}

static json_t *
bt_json_steps(const struct forecast_acc *acc, int horizon)
{
	json_t *arr = json_array();

	for (int h = 1; h <= horizon; h++) {
		const struct forecast_acc *a = &acc[(size_t)(h - 1) * NM];
		json_t *o = json_object(), *ms = json_object();
		int best = bt_best(a);

		json_object_set_new(o, "h", json_integer(h));
		json_object_set_new(o, "points", json_integer(a[0].n));
		json_object_set_new(o, "mape_points", json_integer(a[0].nape));
		for (int m = 0; m < NM; m++) {
			json_t *x = json_object();

			json_object_set_new(x, "mape", a[m].nape > 0 ?
			    cmd_json_real(a[m].ape / (double)a[m].nape) :
			    json_null());
			json_object_set_new(x, "mae", a[m].n > 0 ?
			    cmd_json_real(a[m].ae / (double)a[m].n) :
			    json_null());
			json_object_set_new(ms, fm_name(m), x);
		}
		json_object_set_new(o, "methods", ms);
		json_object_set_new(o, "best", best < 0 ? json_null() :
		    json_string(fm_name(best)));
		json_array_append_new(arr, o);
	}
	return arr;
}

static int
bt_print_json(const struct params *pa, const struct series_hist *hs,
    const struct forecast_acc *acc, const struct forecast_acc *all)
{
	size_t nh = (size_t)pa->horizon * NM;
	json_t *o = json_object(), *arr = json_array();
	int rc;

	json_head(o, "dlplan.backtest/2", pa, hs);
	json_object_set_new(o, "every", json_integer((json_int_t)pa->every));
	json_object_set_new(o, "overall", bt_json_steps(all, pa->horizon));
	for (size_t k = 0; k < hs->ns; k++) {
		json_t *s = json_object();

		json_object_set_new(s, "node", json_string(hs->s[k].name));
		json_object_set_new(s, "points",
		    json_integer((json_int_t)hs->s[k].s.n));
		json_object_set_new(s, "steps",
		    bt_json_steps(acc + k * nh, pa->horizon));
		json_array_append_new(arr, s);
	}
	json_object_set_new(o, "series", arr);
	rc = cmd_print_json(o);
	json_decref(o);
	return rc;
}

static int
backtest(const struct params *pa, const struct series_hist *hs,
    struct dl_err *e)
{
	size_t nh = (size_t)pa->horizon * NM;
	struct forecast_acc *acc = xcalloc(hs->ns * nh, sizeof(*acc));
	struct forecast_acc *all = xcalloc(nh, sizeof(*acc));
	size_t idle = 0;
	int rc = DL_OK;

	for (size_t k = 0; k < hs->ns && rc == DL_OK; k++) {
		rc = forecast_backtest(&hs->s[k].s, &pa->o, pa->horizon,
		    pa->every, acc + k * nh, e);
		forecast_acc_merge(all, acc + k * nh, nh);
		idle += hs->s[k].s.n <= pa->o.window;
	}
	if (idle > 0 && dl_verbose >= 0)
		dl_warn("%zu of %zu series have no more points than the window "
		    "(%zu) and give the backtest nothing to test; try a smaller "
		    "--window", idle, hs->ns, pa->o.window);
	if (rc == DL_OK) {
		if (pa->format == F_CSV)
			bt_print_csv(pa, hs, acc, all);
		else if (pa->format == F_JSON)
			rc = bt_print_json(pa, hs, acc, all);
		else
			bt_print_table(pa, hs, acc, all);
	}
	free(acc);
	free(all);
	return rc;
}

/* --- command ------------------------------------------------------- */

static int
run(const struct params *pa, struct dl_err *e)
{
	struct series_hist hs;
	struct forecast_result *res = NULL;
	int rc;

	if ((rc = series_hist_read(pa->path, -1, &hs, e)) != DL_OK)
		goto out;
	if (hs.nrows == 0) {
		rc = dl_seterr(e, DL_EDATA, pa->path, hs.header_line, 0, "no "
		    "history rows (expected at least one row after the "
		    "header)");
		goto out;
	}
	if ((rc = series_hist_sort(&hs, e)) != DL_OK)
		goto out;
	if (pa->meanlink && !hs.traffic) {
		rc = dl_seterr(e, DL_EDATA, pa->path, 0, 0, "option "
		    "'--mean-link' needs a traffic.csv history (t,src,dst,util), "
		    "not a load.csv");
		goto out;
	}
	if (pa->meanlink)
		series_hist_mean(&hs);
	for (size_t k = 0; k < hs.ns; k++)
		if (hs.s[k].s.n < GMC_MIN_POINTS && pa->meanlink) {
			/* The mean of every link: no row of its own. */
			rc = dl_seterr(e, DL_EDATA, pa->path, 0, 0, "series "
			    "'%s' has %zu points (a forecast needs at least %d)",
			    hs.s[k].name, hs.s[k].s.n, GMC_MIN_POINTS);
			goto out;
		} else if (hs.s[k].s.n < GMC_MIN_POINTS) {
			/* At the series' first row, in its name column. */
			rc = series_hist_err(&hs, k, hs.traffic ? "src" :
			    "node", e, "%s '%s' has %zu points (a forecast "
			    "needs at least %d)", hs.traffic ? "link" : "node",
			    hs.s[k].name, hs.s[k].s.n, GMC_MIN_POINTS);
			goto out;
		}
	if (pa->backtest) {
		rc = backtest(pa, &hs, e);
		goto out;
	}
	res = xcalloc(hs.ns, sizeof(*res));
	if ((rc = fit_all(pa, &hs, res, e)) != DL_OK)
		goto out;
	if (pa->format == F_CSV)
		print_csv(pa, &hs, res);
	else if (pa->format == F_JSON)
		rc = print_json(pa, &hs, res);
	else
		print_table(pa, &hs, res);
out:
	if (res)
		for (size_t k = 0; k < hs.ns; k++) {
			free(res[k].fc);
			free(res[k].picks);
		}
	free(res);
	series_hist_free(&hs);
	return rc;
}

static int
cmd_predict(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct params pa;
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	long v;
	int id, rc;

	memset(&pa, 0, sizeof(pa));
	gmc_opts_default(&pa.o);
	pa.horizon = 1;
	pa.every = 1;
	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, NULL, &e) != DL_OK)
			goto usage;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		case O_HISTORY:
			pa.path = st.arg;
			break;
		case O_HORIZON:
			if (opt_long(&st, 1, HORIZON_MAX, &v, &e) != DL_OK)
				goto usage;
			pa.horizon = (int)v;
			break;
		case O_WINDOW:
			if (opt_long(&st, GMC_MIN_POINTS, WINDOW_MAX, &v,
			    &e) != DL_OK)
				goto usage;
			pa.o.window = (size_t)v;
			break;
		case O_STATES:
			if (opt_long(&st, 1, GMC_MAX_STATES, &v, &e) != DL_OK)
				goto usage;
			pa.o.states = (int)v;
			break;
		case O_CORRECTION:
			if ((id = opt_choice(&st, &e)) < 0)
				goto usage;
			pa.o.correction = id == 1 ? GMC_ARGMAX : GMC_EXPECT;
			break;
		case O_FORMAT:
			if ((pa.format = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_BACKTEST:
			pa.backtest = 1;
			break;
		case O_EVERY:
			if (opt_long(&st, 1, WINDOW_MAX, &v, &e) != DL_OK)
				goto usage;
			pa.every = (size_t)v;
			break;
		case O_METHOD:
			if ((pa.method = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_MEANLINK:
			pa.meanlink = 1;
			break;
		}
	}
	if (st.npos > 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    st.pos[0]);
		goto usage;
	}
	if (pa.every > 1 && !pa.backtest) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "option '--every' needs "
		    "--backtest");
		goto usage;
	}
	if (pa.path == NULL) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no history given "
		    "(expected -H FILE)");
		goto usage;
	}
	opt_free(&st);
	if ((rc = run(&pa, &e)) != DL_OK && e.code != 0)
		return cmd_fail(&e);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
