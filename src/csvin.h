/*
 * csvin.h - typed, schema-checked CSV tables.  The only user of <csv.h>.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A schema names the columns a file kind may have, their types and ranges.
 * csvin_read() parses a whole file (one header row; "#" comment lines,
 * blank lines, a UTF-8 byte order mark, CRLF and quoted fields allowed),
 * maps header names to schema columns, and checks every value.  On the
 * first problem it fails with the file, line and column in the error and
 * returns DL_EDATA (or DL_ESYS when the file cannot be read).
 *
 * Rules: a header name that is not in the schema is an error unless it
 * starts with "x_" (such columns are ignored); a header name given twice is
 * an error; a required column missing from the header is an error.  An
 * empty cell in a required column is an error; in an optional column it
 * means "not given" (csv_has() is 0).
 */
#ifndef DL_CSVIN_H
#define DL_CSVIN_H

#include <stddef.h>

#include "util.h"

enum csv_type {
	CSV_STR,	/* free text: any UTF-8 without control characters */
	CSV_ID,		/* [A-Za-z0-9._-]{1,63} */
	CSV_INT,	/* decimal integer in [min, max] */
	CSV_NUM		/* finite decimal number in [min, max] (or open ends) */
};

struct csv_col {
	const char *name;
	enum csv_type type;
	int required;
	double min, max;
	int min_open, max_open;	/* 1: the bound itself is excluded */
	const char *unit;	/* for messages ("Gbps"), or NULL */
};

struct csv_schema {
	const char *kind;		/* "nodes.csv", for messages */
	const struct csv_col *cols;	/* terminated by { NULL } */
};

struct csv_cell {
	char *s;	/* CSV_STR and CSV_ID: the text; NULL otherwise */
	double num;	/* CSV_INT and CSV_NUM: the value */
	int present;
};

struct csv_table {
	char *file;			/* path as given */
	const struct csv_schema *schema;
	size_t ncols;			/* schema columns */
	int *fcol;			/* per schema column: 1-based file
					   column, 0 when absent */
	long header_line;
	/* The first "#" line before the header, without the "#" and the
	 * blanks after it (model.csv's "dlplan model ..." line); NULL when
	 * there is none. */
	char *comment;
	size_t nrows;
	long *line;			/* per row: line where it starts */
	struct csv_cell *cells;		/* nrows * ncols, row-major */
};

/* Read and check path against schema.  On failure t is left empty. */
int csvin_read(const char *path, const struct csv_schema *schema,
    struct csv_table *t, struct dl_err *e);
/* Parse from memory (for tests and fuzzing); name is used in messages. */
int csvin_parse(const char *name, const char *data, size_t len,
    const struct csv_schema *schema, struct csv_table *t, struct dl_err *e);
void csvin_free(struct csv_table *t);

/*
 * Streaming: check like csvin_parse(), but instead of keeping the rows,
 * hand each one to fn as soon as it is read and checked.  row holds the
 * row's cells by schema column (t->ncols of them); its text cells (s)
 * point into csvin's buffers and are valid only during the call (copy
 * what you keep).  line is where the row starts.  fn returns DL_OK to go
 * on, or a DL_* code after filling e, which stops the parse; that code is
 * returned.  t is as after csvin_parse() except that it keeps no rows:
 * cells and line are NULL (so csv_cell(), csv_cellerr() and the other
 * cell accessors must not be used), nrows counts the rows passed to fn.
 * Free it with csvin_free(); on failure t is left empty.
 */
typedef int (*csvin_row_fn)(void *arg, const struct csv_table *t,
    const struct csv_cell *row, long line, struct dl_err *e);
int csvin_parse_each(const char *name, const char *data, size_t len,
    const struct csv_schema *schema, struct csv_table *t, csvin_row_fn fn,
    void *arg, struct dl_err *e);

/*
 * The character that ends the line at s: a LF (also of a CRLF pair) or a
 * CR that no LF follows, so every input takes LF, CRLF and CR line ends
 * alike (one rule for all files); NULL on a last line without one.
 */
const char *csv_line_end(const char *s, const char *end);

/*
 * Columns by name.  A reader never counts columns: it looks up the schema
 * index of each column it reads by the column's name, once, before its
 * loop over the rows, and reads the cells through that index:
 *
 *	size_t ctflops = csv_colidx(&t, "tflops");
 *	...
 *	n->tflops = csv_num(&t, r, ctflops);
 *
 * The file's own column order does not matter: csvin_read() maps each
 * header name to its schema column, and it has already failed, naming the
 * file, the header line and the column, when a required column is missing
 * from the header.  An optional column may be absent from the file
 * (csv_hascol(); its cells are then not present, csv_has()).  A name that
 * is not a column of the schema is a programming error: the lookup
 * abort()s after naming it on stderr.
 */
size_t csv_schema_col(const struct csv_schema *s, const char *name);
size_t csv_colidx(const struct csv_table *t, const char *name);
/* Does the file have this column at all? */
int csv_hascol(const struct csv_table *t, const char *name);

static inline const struct csv_cell *
csv_cell(const struct csv_table *t, size_t row, size_t col)
{
	return &t->cells[row * t->ncols + col];
}

/* Cell accessors by schema column index. */
static inline int
csv_has(const struct csv_table *t, size_t row, size_t col)
{
	return csv_cell(t, row, col)->present;
}
static inline const char *
csv_str(const struct csv_table *t, size_t row, size_t col)
{
	return csv_cell(t, row, col)->s;
}
static inline double
csv_num(const struct csv_table *t, size_t row, size_t col)
{
	return csv_cell(t, row, col)->num;
}
/* The number in an optional column, or dflt when the cell is empty. */
static inline double
csv_num_or(const struct csv_table *t, size_t row, size_t col, double dflt)
{
	return csv_has(t, row, col) ? csv_num(t, row, col) : dflt;
}

/*
 * A plausibility limit of a numeric column: a value above max is still
 * accepted (it is within the column's range) but noted, since it is more
 * likely a slip (a unit, a digit) than a real machine.  why says what the
 * limit means and what the slip may be.
 */
struct csv_limit {
	const char *col;
	double max;
	const char *why;
};
/*
 * Append to w, for every cell of t above its limit (lim ends with a NULL
 * col; columns absent from the file are skipped):
 * "FILE:LINE:COL: column 'NAME': VALUE is implausible (WHY)".
 */
void csv_plausible(const struct csv_table *t, const struct csv_limit *lim,
    struct dl_notes *w);

/*
 * Fill e with a data error located at a cell (row, schema column) of t:
 * "FILE:LINE:COL: column 'name': MESSAGE".
 */
int csv_cellerr(const struct csv_table *t, size_t row, size_t col,
    struct dl_err *e, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
