/*
 * test_csvin.c - the streaming reader csvin_parse_each() sees the same
 * rows as csvin_parse() and fails on the same inputs with the same
 * errors; a callback's error stops the parse; columns are found by name.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "tap.h"

static const struct csv_col cols[] = {
	{ "name", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "n", CSV_INT, 1, 0, 1000, 0, 0, NULL },
	{ "x", CSV_NUM, 0, 0, HUGE_VAL, 1, 0, "Gbps" },
	{ "note", CSV_STR, 0, 0, 0, 0, 0, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
static const struct csv_schema schema = { "test.csv", cols };

/* What the callback saw, compared with the table row by row. */
struct seen {
	const struct csv_table *ref;
	size_t row;
	int same;
	size_t stop_at;		/* fail on this row (1-based), 0 never */
};

static int
same_cell(const struct csv_cell *a, const struct csv_cell *b)
{
	if (a->present != b->present)
		return 0;
	if (!a->present)
		return 1;
	if ((a->s == NULL) != (b->s == NULL))
		return 0;
	if (a->s)
		return strcmp(a->s, b->s) == 0;
	return memcmp(&a->num, &b->num, sizeof(a->num)) == 0;
}

static int
row_cb(void *arg, const struct csv_table *t, const struct csv_cell *row,
    long line, struct dl_err *e)
{
	struct seen *s = arg;

	if (s->stop_at && s->row + 1 == s->stop_at) {
		s->row++;
		return dl_seterr(e, DL_EINFEAS, t->file, line, 0, "stop at "
		    "row %zu", s->row);
	}
	if (s->ref == NULL || s->row >= s->ref->nrows ||
	    line != s->ref->line[s->row] || t->ncols != s->ref->ncols)
		s->same = 0;
	else
		for (size_t k = 0; k < t->ncols; k++)
			if (!same_cell(&row[k], csv_cell(s->ref, s->row, k)))
				s->same = 0;
	s->row++;
	return DL_OK;
}

static void
both(const char *what, const char *data)
{
	struct csv_table ta, tb;
	struct dl_err ea, eb;
	struct seen s = { NULL, 0, 1, 0 };
	int ra, rb;

	memset(&ea, 0, sizeof(ea));
	memset(&eb, 0, sizeof(eb));
	ra = csvin_parse("in.csv", data, strlen(data), &schema, &ta, &ea);
	s.ref = ra == DL_OK ? &ta : NULL;
	rb = csvin_parse_each("in.csv", data, strlen(data), &schema, &tb,
	    row_cb, &s, &eb);
	if (ra == DL_OK) {
		ok(rb == DL_OK && s.same && s.row == ta.nrows &&
		    tb.nrows == ta.nrows && tb.header_line == ta.header_line &&
		    tb.cells == NULL && tb.line == NULL &&
		    memcmp(tb.fcol, ta.fcol, ta.ncols * sizeof(int)) == 0,
		    "%s: the same %zu rows", what, ta.nrows);
		csvin_free(&ta);
		csvin_free(&tb);
	} else {
		if (!ok(rb == ra && ea.code == eb.code && ea.line == eb.line &&
		    ea.col == eb.col && strcmp(ea.msg, eb.msg) == 0 &&
		    strcmp(ea.file, eb.file) == 0 && tb.fcol == NULL,
		    "%s: the same error", what))
			printf("#   table: %d %ld:%ld %s\n#  stream: %d "
			    "%ld:%ld %s\n", ra, ea.line, ea.col, ea.msg, rb,
			    eb.line, eb.col, eb.msg);
	}
}

static void
test_same(void)
{
	both("plain", "name,n,x,note\na,1,2.5,hello\nb,2,,\n"
	    "c,3,1e3,\"q,\"\"x\"\"\"\n");
	both("columns reordered, x_ ignored, CRLF",
	    "note,x_z,n,name\r\nhi,zz,7,a.b\r\n,,8,c-d\r\n");
	both("comments, blank lines, BOM, quoted id",
	    "\xef\xbb\xbf# c\n\nname,n\n# c\na,1\n\n\"b\",2\n");
	both("a newline in a quoted text field", "name,n,note\na,1,\"x\ny\"\nb,2,z\n");
	both("header only", "name,n\n");
	both("no final newline", "name,n,x\na,1,0.25");
	both("empty file", "");
	both("unknown column", "name,n,y\na,1,2\n");
	both("twice", "name,n,n\na,1,2\n");
	both("missing required", "name,x\na,1\n");
	both("bad id", "name,n\na b,1\n");
	both("bad int", "name,n\na,1.5\n");
	both("int out of range", "name,n\na,1001\n");
	both("bad number", "name,n,x\na,1,abc\n");
	both("number at an open bound", "name,n,x\na,1,0\n");
	both("number too big", "name,n,x\na,1,1e999\n");
	both("empty required", "name,n\na,\n");
	both("too many fields", "name,n\na,1,2\n");
	both("too few fields", "name,n,x\na,1\n");
	both("control character", "name,n,note\na,1,\"x\ty\"\n");
	both("bad quote", "name,n\n\"a\"x,1\n");
	both("unterminated quote", "name,n\na,1\n\"b,2\n");
	both("error after good rows", "name,n\na,1\nb,2\nc,x\n");
}

static void
test_stop(void)
{
	const char *data = "name,n\na,1\nb,2\nc,3\nd,4\n";
	struct seen s = { NULL, 0, 1, 2 };
	struct csv_table t;
	struct dl_err e;
	int rc;

	rc = csvin_parse_each("in.csv", data, strlen(data), &schema, &t,
	    row_cb, &s, &e);
	ok(rc == DL_EINFEAS && s.row == 2 && e.line == 3 &&
	    strcmp(e.msg, "stop at row 2") == 0 && t.fcol == NULL &&
	    t.nrows == 0, "a callback's error stops the parse and is "
	    "returned");
	s.row = 0;
	rc = csvin_parse_each("in.csv", data, strlen(data), &schema, &t,
	    row_cb, &s, NULL);
	ok(rc == DL_EINFEAS, "... also without an error struct");
}

/* Text is UTF-8, and LF, CRLF and lone CR end lines alike. */
static void
test_text(void)
{
	static const char *bad[] = {
		"name,n,note\na,1,\xff\xfe\n",	/* not a lead byte */
		"name,n,note\na,1,\xc0\xaf\n",	/* overlong '/' */
		"name,n,note\na,1,\xed\xa0\x80\n",	/* a surrogate */
		"name,n,note\na,1,\xf4\x90\x80\x80\n",	/* > U+10FFFF */
		"name,n,note\na,1,x\xe2\x82\n",	/* cut short */
	};
	const char *cr = "# c\rname,n\r# d\ra,1\rb,2\r";
	struct csv_table t;
	struct dl_err e;
	int rc;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = csvin_parse("in.csv", bad[i], strlen(bad[i]), &schema,
		    &t, &e);
		ok(rc == DL_EDATA && e.line == 2 && e.col == 3 &&
		    strstr(e.msg, "invalid UTF-8") != NULL, "invalid UTF-8 %zu "
		    "at 2:3: %s", i, e.msg);
	}
	both("valid UTF-8 text", "name,n,note\na,1,\xc3\xa9\xe2\x82\xac"
	    "\xf0\x9f\x98\x80\n");
	rc = csvin_parse("in.csv", cr, strlen(cr), &schema, &t, &e);
	ok(rc == DL_OK && t.nrows == 2 && t.header_line == 2 &&
	    t.line[1] == 5, "CR line ends, starting with a comment");
	if (rc == DL_OK)
		csvin_free(&t);
	both("CR line ends", cr);
}

/*
 * Columns by name: the same file with its columns in another order (and an
 * x_ column among them) gives the same cells through csv_colidx(), the
 * file column of each is where it stands in the file, and a missing
 * required column is named at the header line.
 */
static void
test_names(void)
{
	const char *a = "# c\nname,n,x,note\nr1,5,2.5,hi\nr2,7,,\n";
	const char *b = "# c\nnote,x_why,x,n,name\nhi,w,2.5,5,r1\n,w,,7,r2\n";
	const char *miss = "note,x,name\nhi,1,r1\n";
	struct csv_table ta, tb;
	struct dl_err e;
	size_t cn, cx, cname;
	int ra, rb, same = 1;

	cname = csv_schema_col(&schema, "name");
	cn = csv_schema_col(&schema, "n");
	cx = csv_schema_col(&schema, "x");
	ok(cname == 0 && cn == 1 && cx == 2 && csv_schema_col(&schema,
	    "note") == 3, "csv_schema_col() finds each column by name");
	ra = csvin_parse("a.csv", a, strlen(a), &schema, &ta, &e);
	rb = csvin_parse("b.csv", b, strlen(b), &schema, &tb, &e);
	ok(ra == DL_OK && rb == DL_OK && ta.nrows == 2 && tb.nrows == 2,
	    "both orders read");
	if (ra != DL_OK || rb != DL_OK)
		return;
	ok(csv_colidx(&tb, "x") == cx && tb.fcol[cx] == 3 &&
	    tb.fcol[cname] == 5 && ta.fcol[cname] == 1,
	    "csv_colidx() is the schema index; fcol the place in the file");
	for (size_t r = 0; r < 2; r++) {
		same &= strcmp(csv_str(&ta, r, cname),
		    csv_str(&tb, r, cname)) == 0;
		same &= csv_num(&ta, r, cn) == csv_num(&tb, r, cn);
		same &= csv_num_or(&ta, r, cx, -1) == csv_num_or(&tb, r, cx,
		    -1);
	}
	ok(same, "the same cells whatever the order of the columns");
	ok(csv_num_or(&tb, 0, cx, -1) == 2.5 && csv_num_or(&tb, 1, cx, -1) ==
	    -1, "csv_num_or(): the value, or the default for an empty cell");
	csvin_free(&ta);
	csvin_free(&tb);
	ra = csvin_parse("m.csv", miss, strlen(miss), &schema, &ta, &e);
	ok(ra == DL_EDATA && e.line == 1 && e.col == 0 && strcmp(e.msg,
	    "missing required column 'n' in test.csv header") == 0,
	    "a missing required column is named at the header: %s", e.msg);
}

int
main(void)
{
	test_same();
	test_stop();
	test_text();
	test_names();
	return done_testing();
}
