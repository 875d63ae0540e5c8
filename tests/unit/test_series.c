/*
 * test_series.c - reading, sorting and averaging load and traffic
 * histories.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "series.h"
#include "tap.h"

/* Write text to a new temporary file; the caller unlinks it. */
static char *
write_tmp(const char *text)
{
	char *path = strdup("/tmp/test_series.XXXXXX");
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");

	fputs(text, fp);
	fclose(fp);
	return path;
}

static void
sort_one(void)
{
	long t[] = { 3, 1, 2, 1 }, line[] = { 2, 3, 4, 5 };
	double v[] = { 0.3, 0.1, 0.2, 0.4 };
	long t2[] = { 5, 1, 3 }, line2[] = { 7, 8, 9 };
	double v2[] = { 0.5, 0.1, 0.3 };
	struct dl_series s = { 4, t, v }, s2 = { 3, t2, v2 };
	struct dl_err e = { 0 };

	is_int(series_sort(&s, line, "x.csv", 2, "node", "n1", &e), DL_EDATA,
	    "sort: a step given twice is an error");
	is_int(e.line, 5, "sort: the error names the later line");
	is_int(e.col, 2, "sort: and the given column");
	is_str(e.msg, "step t=1 of node 'n1' given twice (also on line 3)",
	    "sort: the message names both lines");
	is_int(series_sort(&s2, line2, "x.csv", 0, "node", "n2", &e), DL_OK,
	    "sort: distinct steps");
	ok(t2[0] == 1 && t2[1] == 3 && t2[2] == 5, "sort: steps ascend");
	ok(v2[0] == 0.1 && v2[1] == 0.3 && v2[2] == 0.5,
	    "sort: values follow their steps");
	ok(line2[0] == 8 && line2[1] == 9 && line2[2] == 7,
	    "sort: lines follow their steps");
}

static void
mean(void)
{
	long ta[] = { 0, 1 }, tb[] = { 1, 2 };
	double va[] = { 0.2, 0.4 }, vb[] = { 0.8, 0.6 };
	struct dl_series s[2] = { { 2, ta, va }, { 2, tb, vb } }, m;

	series_mean(s, 2, &m);
	is_int((long)m.n, 3, "mean: one point per distinct step");
	ok(m.t[0] == 0 && m.t[1] == 1 && m.t[2] == 2, "mean: steps ascend");
	is_near(m.v[1], (0.4 + 0.8) / 2, 0, "mean: averaged where both have");
	is_near(m.v[2], 0.6, 0, "mean: one history alone");
	series_free(&m);
	is_int((long)m.n, 0, "free leaves an empty series");
	series_mean(s, 0, &m);
	ok(m.n == 0 && m.t == NULL, "mean of no histories is empty");
}

static void
read_load(void)
{
	char *p = write_tmp("# comment\nnode,t,util\nb,2,0.5\nb,1,0.25\n"
	    "a,7,0.1\nb,3,0.75\n");
	struct series_hist h;
	struct dl_err e = { 0 };

	is_int(series_hist_read(p, -1, &h, &e), DL_OK, "load: read");
	is_int(h.traffic, 0, "load: told apart by its header");
	is_int(h.header_line, 2, "load: header line");
	is_int((long)h.nrows, 4, "load: rows");
	is_int((long)h.ns, 2, "load: one series per node");
	is_str(h.s[0].name, "b", "load: in order of first appearance");
	is_int((long)h.s[0].s.n, 3, "load: points of b");
	is_int(series_hist_err(&h, 1, "node", &e, "unknown node '%s'",
	    h.s[1].name), DL_EDATA, "hist_err: DL_EDATA");
	is_int(e.line, 5, "hist_err: first line of the series");
	is_int(e.col, 1, "hist_err: file column of 'node'");
	is_str(e.msg, "column 'node': unknown node 'a'", "hist_err: message");
	is_int(series_hist_sort(&h, &e), DL_OK, "load: sort");
	ok(h.s[0].s.t[0] == 1 && h.s[0].s.v[0] == 0.25 &&
	    h.s[0].line[0] == 4, "load: sorted by step with its line");
	series_hist_free(&h);
	unlink(p);
	free(p);
}

static void
read_traffic(void)
{
	char *p = write_tmp("t,src,dst,util\n1,x,y,0.5\n1,y,x,0.25\n"
	    "2,x,y,0.75\n");
	char *q = write_tmp("t,host,util\n1,x,0.5\n");
	struct series_hist h;
	struct dl_err e = { 0 };

	is_int(series_hist_read(p, -1, &h, &e), DL_OK, "traffic: read");
	is_int(h.traffic, 1, "traffic: told apart by its header");
	is_int((long)h.ns, 2, "traffic: one series per directed link");
	is_str(h.s[1].name, "y>x", "traffic: named src>dst");
	series_hist_mean(&h);
	is_int((long)h.ns, 1, "mean: one series left");
	is_str(h.s[0].name, "mean", "mean: called mean");
	is_int((long)h.s[0].s.n, 2, "mean: two steps");
	is_near(h.s[0].s.v[0], (0.5 + 0.25) / 2, 0, "mean: t=1");
	series_hist_free(&h);
	is_int(series_hist_read(p, 0, &h, &e), DL_EDATA,
	    "traffic read as a load.csv: csvin rejects the header");
	is_int((long)h.ns, 0, "failure leaves h empty");
	is_int(series_hist_read(q, -1, &h, &e), DL_EDATA,
	    "neither node nor src/dst: error");
	is_int(e.line, 1, "the error names the header line");
	unlink(p);
	unlink(q);
	free(p);
	free(q);
}

int
main(void)
{
	sort_one();
	mean();
	read_load();
	read_traffic();
	return done_testing();
}
