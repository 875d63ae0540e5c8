/*
 * csvin.c - typed, schema-checked CSV tables on top of libcsv.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The file is read whole and fed to libcsv one physical line at a time, so
 * that every record knows the line it starts on.  Comment and blank lines
 * are dropped only between records (a quoted field may span lines and
 * contain anything).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <csv.h>

#include "csvin.h"
#include "sb.h"
#include "util_io.h"

/*
 * What the parser callbacks collect for one record: the fields one after
 * the other in buf, each NUL-terminated, starting at off[i].  Both buffers
 * are reused from record to record (no allocation per field).
 */
struct rec {
	char *buf;
	size_t len, bufcap;
	size_t *off;
	size_t nf, cap;
	long line;
};

struct ctx {
	const char *name;
	const struct csv_schema *schema;
	struct csv_table *t;
	struct dl_err *e;
	int failed;
	long line;		/* physical line being fed */
	long rec_line;		/* line where the current record began */
	size_t rowcap;
	struct rec rec;
	int have_header;
	size_t nfile;		/* fields in the header */
	int *map;		/* per file column: schema column or -1 */
	csvin_row_fn fn;	/* streaming: called per row, else NULL */
	void *arg;
	struct csv_cell *row;	/* streaming: the cells of the current row */
	int fnrc;		/* what fn returned when it failed */
};

static void
rec_clear(struct rec *r)
{
	r->nf = 0;
	r->len = 0;
}

/* Field i of the current record. */
static char *
rec_field(const struct rec *r, size_t i)
{
	return r->buf + r->off[i];
}

static void
cb_field(void *s, size_t len, void *data)
{
	struct ctx *c = data;
	struct rec *r = &c->rec;

	if (c->failed)
		return;
	if (s == NULL)
		len = 0;
	if (r->nf == r->cap)
		r->off = xgrow(r->off, &r->cap, r->nf + 1, sizeof(size_t));
	if (r->len + len + 1 > r->bufcap)
		r->buf = xgrow(r->buf, &r->bufcap, r->len + len + 1, 1);
	r->off[r->nf++] = r->len;
	if (len)
		memcpy(r->buf + r->len, s, len);
	r->len += len;
	r->buf[r->len++] = '\0';
}

static size_t
ncols_of(const struct csv_schema *s)
{
	size_t n = 0;

	while (s->cols[n].name)
		n++;
	return n;
}

static void
range_text(const struct csv_col *col, char *buf, size_t sz)
{
	char lo[DL_DBL_BUFSZ], hi[DL_DBL_BUFSZ];
	const char *what = col->type == CSV_INT ? "an integer" : "a number";

	if (col->type == CSV_INT) {
		snprintf(buf, sz, "an integer in [%.0f, %.0f]", col->min,
		    col->max);
		return;
	}

	if (isinf(col->max) && col->min == 0 && col->min_open)
		snprintf(buf, sz, "%s > 0", what);
	else if (isinf(col->max))
		snprintf(buf, sz, "%s %s %s", what, col->min_open ? ">" : ">=",
		    fmt_double(lo, col->min));
	else
		snprintf(buf, sz, "%s in %c%s, %s%c", what,
		    col->min_open ? '(' : '[', fmt_double(lo, col->min),
		    fmt_double(hi, col->max), col->max_open ? ')' : ']');
	if (col->unit) {
		size_t n = strlen(buf);

		snprintf(buf + n, sz - n, " (%s)", col->unit);
	}
}

/*
 * Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0.
 */
static size_t
utf8_len(const unsigned char *p)
{
	size_t n;
	unsigned lo = 0x80, hi = 0xbf;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Check one value; return 0 or fill the error. */
static int
check_value(struct ctx *c, const struct csv_col *col, char *v,
    long fcol, struct csv_cell *cell)
{
	char exp[160];
	double d;
	int r;

	switch (col->type) {
	case CSV_STR:
		for (const unsigned char *p = (const unsigned char *)v; *p;) {
			size_t n = utf8_len(p);

			if (*p < 0x20 || *p == 0x7f)
				return dl_seterr(c->e, DL_EDATA, c->name,
				    c->rec_line, fcol, "column '%s': control "
				    "character in text", col->name);
			if (n == 0)
				return dl_seterr(c->e, DL_EDATA, c->name,
				    c->rec_line, fcol, "column '%s': invalid "
				    "UTF-8 in text (byte 0x%02x)", col->name,
				    *p);
			p += n;
		}
		cell->s = c->fn ? v : xstrdup(v);
		break;
	case CSV_ID:
		if (!valid_id(v))
			return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    fcol, "column '%s': '%.80s' is not a valid id "
			    "(expected 1 to 63 of A-Z a-z 0-9 . _ -)",
			    col->name, v);
		cell->s = c->fn ? v : xstrdup(v);
		break;
	case CSV_INT:
	case CSV_NUM:
		r = parse_double(v, -HUGE_VAL, HUGE_VAL, &d);
		if (r == 0 && col->type == CSV_INT && d != floor(d))
			r = -1;
		if (r == 0 && col->type == CSV_INT)
			for (const char *p = v; *p; p++)
				if (*p == '.' || *p == 'e' || *p == 'E')
					r = -1;
		/* The expected range is spelled out only for a message. */
		if (r == -1 || r == -2 || d < col->min || d > col->max ||
		    (col->min_open && d == col->min) ||
		    (col->max_open && d == col->max))
			range_text(col, exp, sizeof(exp));
		if (r == -1)
			return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    fcol, "column '%s': '%.80s' is not %s", col->name,
			    v, exp);
		if (r == -2 || d < col->min || d > col->max ||
		    (col->min_open && d == col->min) ||
		    (col->max_open && d == col->max))
			return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    fcol, "column '%s': '%.80s' is out of range "
			    "(expected %s)", col->name, v, exp);
		cell->num = d;
		break;
	}
	cell->present = 1;
	return 0;
}

static int
do_header(struct ctx *c)
{
	struct csv_table *t = c->t;
	size_t nc = t->ncols;

	c->nfile = c->rec.nf;
	c->map = xcalloc(c->nfile, sizeof(int));
	t->header_line = c->rec_line;
	for (size_t i = 0; i < c->nfile; i++) {
		const char *h = rec_field(&c->rec, i);
		size_t k;

		c->map[i] = -1;
		if (strncmp(h, "x_", 2) == 0)
			continue;
		for (k = 0; k < nc; k++)
			if (strcmp(c->schema->cols[k].name, h) == 0)
				break;
		if (k == nc) {
			struct strbuf sb = STRBUF_INIT;

			for (size_t j = 0; j < nc; j++)
				sb_addf(&sb, "%s%s", j ? ", " : "",
				    c->schema->cols[j].name);
			dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    (long)i + 1, "unknown column '%.80s' in %s header "
			    "(expected %s; prefix extra columns with x_)",
			    h, c->schema->kind, sb.buf);
			sb_free(&sb);
			return -1;
		}
		if (t->fcol[k] != 0)
			return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    (long)i + 1, "column '%s' appears twice in the "
			    "header", h), -1;
		t->fcol[k] = (int)i + 1;
		c->map[i] = (int)k;
	}
	for (size_t k = 0; k < nc; k++)
		if (c->schema->cols[k].required && t->fcol[k] == 0)
			return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
			    0, "missing required column '%s' in %s header",
			    c->schema->cols[k].name, c->schema->kind), -1;
	c->have_header = 1;
	return 0;
}

static int
do_row(struct ctx *c)
{
	struct csv_table *t = c->t;
	size_t nc = t->ncols, row = t->nrows;
	struct csv_cell *cells;

	if (c->rec.nf != c->nfile)
		return dl_seterr(c->e, DL_EDATA, c->name, c->rec_line,
		    c->rec.nf > c->nfile ? (long)c->nfile + 1 :
		    (long)c->rec.nf + 1, "expected %zu fields as in the "
		    "header, found %zu", c->nfile, c->rec.nf), -1;
	if (c->fn) {
		cells = c->row;
	} else {
		if (row == c->rowcap) {
			size_t cap = c->rowcap;

			t->cells = xgrow(t->cells, &cap, row + 1, nc *
			    sizeof(struct csv_cell));
			t->line = xreallocarray(t->line, cap, sizeof(long));
			c->rowcap = cap;
		}
		cells = &t->cells[row * nc];
		t->line[row] = c->rec_line;
	}
	memset(cells, 0, nc * sizeof(*cells));
	t->nrows++;
	for (size_t i = 0; i < c->nfile; i++) {
		const struct csv_col *col;
		char *v = rec_field(&c->rec, i);

		if (c->map[i] < 0)
			continue;
		col = &c->schema->cols[c->map[i]];
		if (*v == '\0') {
			if (col->required)
				return dl_seterr(c->e, DL_EDATA, c->name,
				    c->rec_line, (long)i + 1, "column '%s': "
				    "empty value (a value is required)",
				    col->name), -1;
			continue;
		}
		if (check_value(c, col, v, (long)i + 1, &cells[c->map[i]]))
			return -1;
	}
	if (c->fn && (c->fnrc = c->fn(c->arg, t, cells, c->rec_line,
	    c->e)) != DL_OK)
		return -1;
	return 0;
}

static void
cb_record(int term, void *data)
{
	struct ctx *c = data;

	(void)term;
	if (c->failed) {
		rec_clear(&c->rec);
		return;
	}
	c->rec.line = c->rec_line;
	if (!c->have_header) {
		if (do_header(c) != 0)
			c->failed = 1;
	} else if (do_row(c) != 0) {
		c->failed = 1;
	}
	rec_clear(&c->rec);
}

static int
blank_or_comment(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == end || *p == '#';
}

/* Keep the text of the comment line [p, end) in t->comment. */
static void
keep_comment(struct csv_table *t, const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p != '#')
		return;
	for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	while (end > p && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	t->comment = xstrndup(p, (size_t)(end - p));
}

const char *
csv_line_end(const char *s, const char *end)
{
	for (const char *p = s; p < end; p++) {
		if (*p == '\n')
			return p;
		if (*p == '\r' && (p + 1 == end || p[1] != '\n'))
			return p;
	}
	return NULL;
}

static int
parse(const char *name, const char *data, size_t len,
    const struct csv_schema *schema, struct csv_table *t, csvin_row_fn fn,
    void *arg, struct dl_err *e)
{
	struct csv_parser p;
	struct ctx c;
	const char *s = data, *end = data + len;
	int rc = DL_OK;

	memset(t, 0, sizeof(*t));
	t->file = xstrdup(name);
	t->schema = schema;
	t->ncols = ncols_of(schema);
	t->fcol = xcalloc(t->ncols, sizeof(int));
	memset(&c, 0, sizeof(c));
	c.name = name;
	c.schema = schema;
	c.t = t;
	c.e = e;
	c.fn = fn;
	c.arg = arg;
	if (fn)
		c.row = xcalloc(t->ncols, sizeof(*c.row));

	if (memchr(data, '\0', len) != NULL) {
		const char *z = memchr(data, '\0', len);
		long ln = 1, col = 1;

		for (const char *q = data; q < z; q++) {
			col = *q == '\n' ? 1 : col + 1;
			ln += *q == '\n';
		}
		dl_seterr(e, DL_EDATA, name, ln, col,
		    "NUL byte in file (expected text)");
		free(c.row);
		csvin_free(t);
		return DL_EDATA;
	}
	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
		free(c.row);
		csvin_free(t);
		return dl_seterr(e, DL_ESYS, name, 0, 0, "out of memory");
	}
	/*
	 * libcsv grows its field buffer by a fixed block (128 bytes by
	 * default): a 10 MB field took 78,000 reallocs, quadratic wherever
	 * realloc copies (ASan: minutes).  64 KB blocks keep that to 160.
	 */
	csv_set_blk_size(&p, (size_t)1 << 16);
	while (s < end && !c.failed) {
		const char *nl = csv_line_end(s, end);
		const char *le = nl ? nl + 1 : end;

		c.line++;
		/* pstate 0 is libcsv's "row not begun": between records. */
		if (p.pstate == 0) {
			if (blank_or_comment(s, nl ? nl : end)) {
				if (!c.have_header && t->comment == NULL)
					keep_comment(t, s, nl ? nl : end);
				s = le;
				continue;
			}
			c.rec_line = c.line;
		}
		if (csv_parse(&p, s, (size_t)(le - s), cb_field, cb_record,
		    &c) != (size_t)(le - s)) {
			/* The field libcsv was in: those it finished + 1. */
			dl_seterr(e, DL_EDATA, name, c.line,
			    (long)c.rec.nf + 1, "malformed CSV (%s); check "
			    "the quotes of this field",
			    csv_strerror(csv_error(&p)));
			c.failed = 1;
		}
		s = le;
	}
	if (!c.failed && csv_fini(&p, cb_field, cb_record, &c) != 0) {
		dl_seterr(e, DL_EDATA, name, c.rec_line, (long)c.rec.nf + 1,
		    "malformed CSV (unterminated quoted field)");
		c.failed = 1;
	}
	csv_free(&p);
	free(c.rec.buf);
	free(c.rec.off);
	free(c.map);
	free(c.row);
	if (!c.failed && !c.have_header) {
		dl_seterr(e, DL_EDATA, name, 0, 0, "empty file (expected a "
		    "%s header row)", schema->kind);
		c.failed = 1;
	}
	if (c.failed) {
		rc = c.fnrc ? c.fnrc : e && e->code ? e->code : DL_EDATA;
		csvin_free(t);
	}
	return rc;
}

int
csvin_parse(const char *name, const char *data, size_t len,
    const struct csv_schema *schema, struct csv_table *t, struct dl_err *e)
{
	return parse(name, data, len, schema, t, NULL, NULL, e);
}

int
csvin_parse_each(const char *name, const char *data, size_t len,
    const struct csv_schema *schema, struct csv_table *t, csvin_row_fn fn,
    void *arg, struct dl_err *e)
{
	return parse(name, data, len, schema, t, fn, arg, e);
}

int
csvin_read(const char *path, const struct csv_schema *schema,
    struct csv_table *t, struct dl_err *e)
{
	char *data;
	size_t len;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = read_file(path, &data, &len, e)) != DL_OK)
		return rc;
	rc = csvin_parse(path, data, len, schema, t, e);
	free(data);
	return rc;
}

void
csvin_free(struct csv_table *t)
{
	if (t->cells)
		for (size_t i = 0; i < t->nrows * t->ncols; i++)
			free(t->cells[i].s);
	free(t->cells);
	free(t->line);
	free(t->fcol);
	free(t->file);
	free(t->comment);
	memset(t, 0, sizeof(*t));
}

size_t
csv_schema_col(const struct csv_schema *s, const char *name)
{
	for (size_t k = 0; s->cols[k].name != NULL; k++)
		if (strcmp(s->cols[k].name, name) == 0)
			return k;
	fprintf(stderr, "dlplan: internal error: no column '%s' in the %s "
	    "schema\n", name, s->kind);
	abort();
}

size_t
csv_colidx(const struct csv_table *t, const char *name)
{
	return csv_schema_col(t->schema, name);
}

int
csv_hascol(const struct csv_table *t, const char *name)
{
	return t->fcol[csv_colidx(t, name)] != 0;
}

void
csv_plausible(const struct csv_table *t, const struct csv_limit *lim,
    struct dl_notes *w)
{
	for (; lim->col != NULL; lim++) {
		size_t col;

		if (!csv_hascol(t, lim->col))
			continue;
		col = csv_colidx(t, lim->col);
		for (size_t r = 0; r < t->nrows; r++)
			if (csv_has(t, r, col) && csv_num(t, r, col) > lim->max)
				notes_addf(w, "%s:%ld:%d: column '%s': %.17g is "
				    "implausible (%s)", t->file, t->line[r],
				    t->fcol[col], lim->col, csv_num(t, r, col),
				    lim->why);
	}
}

int
csv_cellerr(const struct csv_table *t, size_t row, size_t col,
    struct dl_err *e, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return dl_seterr(e, DL_EDATA, t->file, t->line[row], t->fcol[col],
	    "column '%s': %s", t->schema->cols[col].name, msg);
}
