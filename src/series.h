/*
 * series.h - load and traffic histories: read, sort, mean series.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dlplan-formats(5), load.csv and traffic.csv.  A load.csv (node,t,util) holds
 * one history per node, a traffic.csv (t,src,dst,util) one per directed link.
 * This is the one reader of both (cluster_load() and "dlplan predict" use it),
 * the one sort by step, and the one mean series (the forecast of the mean link
 * load). It knows nothing of a cluster: the caller maps the names to its nodes
 * and links.
 *
 * Ownership: a struct dl_series owns its t and v arrays (series_free());
 * a struct series_hist owns its series, their names and lines
 * (series_hist_free()); its path is borrowed from the caller.
 */
#ifndef DL_SERIES_H
#define DL_SERIES_H

#include <stddef.h>

#include "csvin.h"
#include "kc.h"
#include "util.h"

/* A history: n points sorted by step t (steps need not be contiguous). */
struct dl_series {
	size_t n;
	long *t;
	double *v;
};

/* The file schemas (dlplan-formats(5)), for readers, tests and man. */
extern const struct csv_schema dl_load_schema, dl_traffic_schema;

/* One named history of a file; its points in file order until sorted. */
struct series_named {
	char *name;		/* node id, or "src>dst" for a link */
	struct dl_series s;
	long *line;		/* input line of each point */
	size_t cap;		/* allocated points */
};

/* A load.csv or a traffic.csv as read. */
struct series_hist {
	const char *path;	/* as given (borrowed) */
	int traffic;		/* 1: traffic.csv, 0: load.csv */
	long header_line;	/* line of the header row */
	size_t nrows;		/* data rows */
	long fcol[4];		/* file column (1-based) of each schema
				   column, 0 when absent */
	struct series_named *s;	/* in order of first appearance */
	size_t ns, cap;
	struct kcache names;	/* name -> index into s */
};

/* The file column (1-based) of h's "t". */
long series_hist_tcol(const struct series_hist *h);

/*
 * Read path as a load.csv (traffic 0), a traffic.csv (1), or either told
 * apart by the header (-1: a "src" or "dst" column means traffic; neither
 * that nor "node" is an error naming the header line).  Rows are checked
 * against the schema (csvin) and grouped into one series per node or
 * directed link, not sorted.  A file without data rows is not an error
 * (h->nrows is 0).  On failure h is left empty.
 */
int series_hist_read(const char *path, int traffic, struct series_hist *h,
    struct dl_err *e);

/*
 * An error at the first line of series k, in schema column col ("node",
 * "src", "dst"), worded like csv_cellerr(): "column 'node': MSG".
 */
int series_hist_err(const struct series_hist *h, size_t k, const char *col,
    struct dl_err *e, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*
 * Sort every series of h by t (series_sort() with what "link" or "node",
 * the error at the file column of t).
 */
int series_hist_sort(struct series_hist *h, struct dl_err *e);

/*
 * Replace the series of h by one, "mean": series_mean() of them.  Its
 * points' lines are 0.
 */
void series_hist_mean(struct series_hist *h);

void series_hist_free(struct series_hist *h);

/*
 * Sort s by t, points of one step in line order; line[i] is the input
 * line of point i and is permuted with it.  A step given twice is
 * DL_EDATA at the later line, column col (0: none): "step t=T of WHAT
 * 'NAME' given twice (also on line L)".
 */
int series_sort(struct dl_series *s, long *line, const char *path,
    long col, const char *what, const char *name, struct dl_err *e);

/*
 * The mean-utilisation series of ns histories: for each distinct step t
 * (ascending) that any of them has, the mean of the values at t over the
 * histories that have one, summed in history order.  out owns new arrays
 * (release with series_free()); it is empty when no history has a point.
 */
void series_mean(const struct dl_series *s, size_t ns,
    struct dl_series *out);

void series_free(struct dl_series *s);

#endif
