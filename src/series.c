/*
 * series.c - load and traffic histories: read, sort, mean series.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "series.h"
#include "util_io.h"

static const struct csv_col load_cols[] = {
	{ "node", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "t", CSV_INT, 1, 0, 1e15, 0, 0, NULL },
	{ "util", CSV_NUM, 1, 0, 1, 0, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_load_schema = { "load.csv", load_cols };

static const struct csv_col traffic_cols[] = {
	{ "t", CSV_INT, 1, 0, 1e15, 0, 0, NULL },
	{ "src", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "dst", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "util", CSV_NUM, 1, 0, 1, 0, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_traffic_schema = { "traffic.csv", traffic_cols };

void
series_free(struct dl_series *s)
{
	free(s->t);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* The one sort: points by step, then by a tie key */

/* A point of a series; key orders the points of one step (an input
 * line, or the index of the series the point came from). */
struct point {
	long t;
	long key;
	double v;
};

static int
cmp_point(const void *a, const void *b)
{
	const struct point *p = a, *q = b;

	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	return p->key < q->key ? -1 : p->key > q->key;
}

int
series_sort(struct dl_series *s, long *line, const char *path, long col,
    const char *what, const char *name, struct dl_err *e)
{
	struct point *p;
	int sorted = 1;

	for (size_t i = 1; i < s->n && sorted; i++)
		sorted = s->t[i] > s->t[i - 1];
	if (sorted)
		return DL_OK;
	p = xcalloc(s->n, sizeof(*p));
	for (size_t i = 0; i < s->n; i++) {
		p[i].t = s->t[i];
		p[i].v = s->v[i];
		p[i].key = line[i];
	}
	qsort(p, s->n, sizeof(*p), cmp_point);
	for (size_t i = 0; i < s->n; i++) {
		if (i > 0 && p[i].t == p[i - 1].t) {
			dl_seterr(e, DL_EDATA, path, p[i].key, col,
			    "step t=%ld of %s '%s' given twice (also on line "
			    "%ld)", p[i].t, what, name, p[i - 1].key);
			free(p);
			return DL_EDATA;
		}
		s->t[i] = p[i].t;
		s->v[i] = p[i].v;
		line[i] = p[i].key;
	}
	free(p);
	return DL_OK;
}

void
series_mean(const struct dl_series *s, size_t ns, struct dl_series *out)
{
	struct point *pt;
	size_t np = 0, k = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < ns; i++)
		np += s[i].n;
	if (np == 0)
		return;
	pt = xcalloc(np, sizeof(*pt));
	for (size_t i = 0; i < ns; i++)
		for (size_t j = 0; j < s[i].n; j++) {
			pt[k].t = s[i].t[j];
			pt[k].key = (long)i;
			pt[k].v = s[i].v[j];
			k++;
		}
	qsort(pt, np, sizeof(*pt), cmp_point);
	out->t = xcalloc(np, sizeof(long));
	out->v = xcalloc(np, sizeof(double));
	for (size_t i = 0; i < np;) {
		double sum = 0;
		size_t j;

		for (j = i; j < np && pt[j].t == pt[i].t; j++)
			sum += pt[j].v;
		out->t[out->n] = pt[i].t;
		out->v[out->n] = sum / (double)(j - i);
		out->n++;
		i = j;
	}
	free(pt);
}

/* ------------------------------------------------------------------ */
/* Reading */

/* Make room for c points (at least n). */
static void
named_reserve(struct series_named *s, size_t c)
{
	s->s.t = xreallocarray(s->s.t, c, sizeof(long));
	s->s.v = xreallocarray(s->s.v, c, sizeof(double));
	s->line = xreallocarray(s->line, c, sizeof(long));
	s->cap = c;
}

static void
named_push(struct series_named *s, long t, double v, long line)
{
	if (s->s.n == s->cap)
		named_reserve(s, s->cap < 8 ? 8 : 2 * s->cap);
	s->s.t[s->s.n] = t;
	s->s.v[s->s.n] = v;
	s->line[s->s.n] = line;
	s->s.n++;
}

/* The index of the series called name, created at the end when new. */
static size_t
hist_get(struct series_hist *h, const char *name)
{
	size_t len = strlen(name), k;

	if (kc_findi(&h->names, name, len, &k))
		return k;
	h->s = xgrow(h->s, &h->cap, h->ns + 1, sizeof(*h->s));
	memset(&h->s[h->ns], 0, sizeof(*h->s));
	h->s[h->ns].name = xstrdup(name);
	kc_puti(&h->names, name, len, h->ns);
	return h->ns++;
}

void
series_hist_free(struct series_hist *h)
{
	for (size_t k = 0; k < h->ns; k++) {
		free(h->s[k].name);
		series_free(&h->s[k].s);
		free(h->s[k].line);
	}
	free(h->s);
	kc_free(&h->names);
	memset(h, 0, sizeof(*h));
}

/*
 * Tell a load.csv from a traffic.csv by the names in the header row (the
 * first line that is not blank or a comment).
 */
static int
detect_kind(const char *path, const char *data, size_t len, int *traffic,
    struct dl_err *e)
{
	const char *p = data, *end = data + len;
	int has_node = 0, has_src = 0;
	long line = 0;

	if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end) {
		const char *nl = csv_line_end(p, end);
		const char *le = nl ? nl : end, *q = p;

		line++;
		while (q < le && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q == le || *q == '#') {
			p = nl ? nl + 1 : end;
			continue;
		}
		while (q <= le) {
			const char *f = q, *fe;

			while (q < le && *q != ',')
				q++;
			fe = q++;
			while (f < fe && (*f == '"' || *f == ' '))
				f++;
			while (fe > f && (fe[-1] == '"' || fe[-1] == ' ' ||
			    fe[-1] == '\r'))
				fe--;
			if (fe - f == 4 && memcmp(f, "node", 4) == 0)
				has_node = 1;
			if ((fe - f == 3 && memcmp(f, "src", 3) == 0) ||
			    (fe - f == 3 && memcmp(f, "dst", 3) == 0))
				has_src = 1;
		}
		if (!has_node && !has_src)
			return dl_seterr(e, DL_EDATA, path, line, 0, "header "
			    "names no 'node' column (load.csv: node,t,util) "
			    "and no 'src' or 'dst' column (traffic.csv: "
			    "t,src,dst,util)");
		*traffic = has_src;
		return DL_OK;
	}
	*traffic = 0;	/* csvin reports the empty file */
	return DL_OK;
}

long
series_hist_tcol(const struct series_hist *h)
{
	return h->fcol[csv_schema_col(h->traffic ? &dl_traffic_schema :
	    &dl_load_schema, "t")];
}

/* Where hist_row finds its columns (schema column indices). */
struct hist_cols {
	struct series_hist *h;
	size_t ct, cv, cn, cs, cd;
	size_t last;		/* series of the previous row */
};

/* csvin_parse_each callback: add one row to its series. */
static int
hist_row(void *arg, const struct csv_table *t, const struct csv_cell *row,
    long line, struct dl_err *e)
{
	struct hist_cols *hc = arg;
	struct series_hist *h = hc->h;
	const char *name = row[hc->cn].s;
	char link[2 * 64 + 2];

	(void)t;
	(void)e;
	if (h->traffic) {
		const char *a = row[hc->cs].s, *b = row[hc->cd].s;
		size_t na = strlen(a), nb = strlen(b);

		/* Ids are at most 63 characters (csvin checks). */
		memcpy(link, a, na);
		link[na] = '>';
		memcpy(link + na + 1, b, nb + 1);
		name = link;
	}
	/* Rows of one series often follow each other. */
	if (h->ns == 0 || strcmp(h->s[hc->last].name, name) != 0) {
		size_t ns = h->ns, prev = h->ns ? h->s[hc->last].s.n : 0;

		hc->last = hist_get(h, name);
		/*
		 * A new series after a run of another: histories are mostly
		 * equally long, so make room for as many points at once
		 * (no regrowing, no slack from doubling).
		 */
		if (h->ns > ns && prev > 0)
			named_reserve(&h->s[hc->last], prev);
	}
	named_push(&h->s[hc->last], (long)row[hc->ct].num, row[hc->cv].num,
	    line);
	return DL_OK;
}

int
series_hist_read(const char *path, int traffic, struct series_hist *h,
    struct dl_err *e)
{
	const struct csv_schema *sc;
	struct hist_cols hc;
	struct csv_table t;
	char *data;
	size_t len;
	int rc;

	memset(h, 0, sizeof(*h));
	h->path = path;
	if ((rc = read_file(path, &data, &len, e)) != DL_OK)
		return rc;
	if (traffic < 0)
		rc = detect_kind(path, data, len, &h->traffic, e);
	else
		h->traffic = traffic;
	sc = h->traffic ? &dl_traffic_schema : &dl_load_schema;
	memset(&hc, 0, sizeof(hc));
	hc.h = h;
	hc.ct = csv_schema_col(sc, "t");
	hc.cv = csv_schema_col(sc, "util");
	if (h->traffic) {
		hc.cs = csv_schema_col(sc, "src");
		hc.cd = csv_schema_col(sc, "dst");
	} else {
		hc.cn = csv_schema_col(sc, "node");
	}
	if (rc == DL_OK)
		rc = csvin_parse_each(path, data, len, sc, &t, hist_row,
		    &hc, e);
	free(data);
	if (rc != DL_OK) {
		series_hist_free(h);
		return rc;
	}
	h->header_line = t.header_line;
	h->nrows = t.nrows;
	for (size_t k = 0; k < t.ncols && k < ARRAY_SIZE(h->fcol); k++)
		h->fcol[k] = t.fcol[k];
	csvin_free(&t);
	return DL_OK;
}

int
series_hist_err(const struct series_hist *h, size_t k, const char *col,
    struct dl_err *e, const char *fmt, ...)
{
	const struct csv_schema *sc = h->traffic ? &dl_traffic_schema :
	    &dl_load_schema;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dl_seterr(e, DL_EDATA, h->path, h->s[k].line[0],
	    h->fcol[csv_schema_col(sc, col)], "column '%s': %s", col, msg);
}

int
series_hist_sort(struct series_hist *h, struct dl_err *e)
{
	const struct csv_schema *sc = h->traffic ? &dl_traffic_schema :
	    &dl_load_schema;
	long tcol = h->fcol[csv_schema_col(sc, "t")];
	int rc;

	for (size_t k = 0; k < h->ns; k++)
		if ((rc = series_sort(&h->s[k].s, h->s[k].line, h->path, tcol,
		    h->traffic ? "link" : "node", h->s[k].name, e)) != DL_OK)
			return rc;
	return DL_OK;
}

void
series_hist_mean(struct series_hist *h)
{
	struct dl_series *ds = xcalloc(h->ns ? h->ns : 1, sizeof(*ds)), m;
	struct series_named *s;

	for (size_t k = 0; k < h->ns; k++)
		ds[k] = h->s[k].s;
	series_mean(ds, h->ns, &m);
	free(ds);
	for (size_t k = 0; k < h->ns; k++) {
		free(h->s[k].name);
		series_free(&h->s[k].s);
		free(h->s[k].line);
	}
	kc_free(&h->names);
	h->ns = 0;
	h->s = xgrow(h->s, &h->cap, 1, sizeof(*h->s));
	s = &h->s[h->ns++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup("mean");
	kc_puti(&h->names, s->name, strlen(s->name), 0);
	s->s = m;
	s->cap = m.n;
	s->line = xcalloc(m.n ? m.n : 1, sizeof(long));
}
