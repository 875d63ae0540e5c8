/*
 * util.h - errors, allocation, number parsing, strings and atomic files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Modules never print and never exit (except on memory exhaustion, where
 * xmalloc and friends print and exit with DL_ESYS).  They return one of the
 * DL_* status codes and describe the failure in a struct dl_err, which only
 * main() and the cmd_*.c files print.
 */
#ifndef DL_UTIL_H
#define DL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Exit status and module return codes (dlplan(1), EXIT STATUS). */
enum {
	DL_OK = 0,
	DL_EUSAGE = 1,	/* bad command line */
	DL_EDATA = 2,	/* bad input data */
	DL_EINFEAS = 3,	/* no plan fits / no route */
	DL_ESYS = 4	/* system or I/O error */
};

/*
 * An error with its location.  file may be empty (no file involved); line
 * and col are 0 when unknown.  Printed as "dlplan: FILE:LINE:COLUMN: msg"
 * with the missing parts left out.  The file "-" (standard input) is kept
 * as "<stdin>".
 */
struct dl_err {
	int code;
	long line, col;
	char file[512];
	char msg[1536];
};

/* Fill e (if not NULL) and return code.  Later calls overwrite. */
int dl_seterr(struct dl_err *e, int code, const char *file, long line,
    long col, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int dl_vseterr(struct dl_err *e, int code, const char *file, long line,
    long col, const char *fmt, va_list ap);
/* Print e to stderr in the "dlplan: FILE:LINE:COLUMN: msg" form. */
void dl_perr(const struct dl_err *e);
/*
 * Write s to f with its control characters (C0, DEL and the C1 controls
 * of UTF-8) as \xNN, so that a message quoting an input cannot move the
 * cursor, set the terminal's title or clear the screen.  dl_perr() and
 * dl_warn() write everything through it.
 */
void dl_fputs_esc(const char *s, FILE *f);

/* Program name used as the message prefix ("dlplan"). */
extern const char *dl_progname;
/* Verbosity: 0 normal, -1 quiet (-q), >0 verbose (-v). */
extern int dl_verbose;

/*
 * Messages a module collects for its caller to print (modules never
 * print): warnings about input that is accepted but looks wrong.  A
 * zeroed struct is empty; notes_free() empties it.
 */
struct dl_notes {
	char **msg;
	size_t n, cap;
};
void notes_addf(struct dl_notes *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void notes_free(struct dl_notes *w);

/* Print "dlplan: msg" to stderr. */
void dl_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that never returns NULL: on failure prints and exits DL_ESYS. */
/*
 * Called before exiting on an allocation failure (main.c sets it to
 * af_cleanup_all(), so that no temporary output file is left behind).
 */
extern void (*dl_cleanup)(void);
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *p, size_t nmemb, size_t size);
char *xstrdup(const char *s);
/* xstrdup(s), or NULL when s is NULL. */
char *xstrdup_or_null(const char *s);
/* A new copy of the nmemb elements of size bytes at p (p may be NULL when
 * nmemb is 0). */
void *xmemdup(const void *p, size_t nmemb, size_t size);
char *xstrndup(const char *s, size_t n);
/* Grow *p (holding *cap elements of size sz) to hold at least need. */
void *xgrow(void *p, size_t *cap, size_t need, size_t sz);

/* Seconds on the monotonic clock, for the time a step took (the one
 * clock of the program's timings). */
double mono_now(void);

/* qsort() comparators of doubles: ascending, and descending. */
int cmp_double(const void *a, const void *b);
int cmp_double_desc(const void *a, const void *b);

/*
 * Strict number parsing: the whole string must be the number, with no
 * leading or trailing junk (surrounding blanks are not accepted either).
 * Return 0 on success, -1 on syntax error, -2 when out of [min, max] or,
 * for doubles, not finite.
 */
int parse_double(const char *s, double min, double max, double *out);
int parse_long(const char *s, long min, long max, long *out);

/*
 * Format a double locale-independently with the fewest significant digits
 * (15, 16 or 17) that read back to the same value.  buf must hold
 * DL_DBL_BUFSZ bytes.  NaN and infinities are written as "0" (callers
 * must not pass them; JSON writers assert it).
 */
#define DL_DBL_BUFSZ 32
char *fmt_double(char *buf, double v);

/* Is s a valid id: [A-Za-z0-9._-]{1,63}? */
int valid_id(const char *s);

/*
 * A JSON real, or JSON null when v is NaN or infinite (JSON has neither).
 * Declared without <jansson.h>, whose json_t is struct json_t.
 */
struct json_t;
struct json_t *jreal(double v);

/* Check and close stdout (fflush, ferror, fclose).  Returns DL_OK or
 * DL_ESYS with a message printed. */
int close_stdout(void);

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))


#endif
