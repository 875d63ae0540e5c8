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

/* A growable string buffer; buf is always NUL-terminated. */
struct strbuf {
	char *buf;
	size_t len, cap;
};
#define STRBUF_INIT { NULL, 0, 0 }
void sb_init(struct strbuf *sb);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addc(struct strbuf *sb, int c);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append a double via fmt_double. */
void sb_adddbl(struct strbuf *sb, double v);
/* Append s as one POSIX shell word in single quotes. */
void sb_addshq(struct strbuf *sb, const char *s);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);
/* Give up ownership of the buffer (never NULL). */
char *sb_detach(struct strbuf *sb);

/*
 * Atomic output files (util_af.c): written to "PATH.tmp-XXXXXX" beside
 * PATH and renamed over PATH on commit, so a reader never sees a partial
 * file.  Temporary files still open are removed by af_cleanup_all(),
 * which the signal handlers in main.c call.  A symbolic link at PATH is
 * replaced, not written through; a device, FIFO or socket at PATH
 * (-o /dev/null) is written directly (tmp is NULL) instead of being
 * replaced.
 */
struct afile {
	FILE *fp;
	char *path, *tmp;
	size_t slot;		/* of tmp in the signal handlers' table */
};
int af_open(struct afile *af, const char *path, struct dl_err *e);
/* Flush, check for write errors, fsync, close, rename.  Removes the
 * temporary file on any failure. */
int af_commit(struct afile *af, struct dl_err *e);
/* Close and remove the temporary file. */
void af_abort(struct afile *af);
void af_cleanup_all(void);
/* Write a whole buffer to path atomically. */
int af_write_file(const char *path, const char *data, size_t len,
    struct dl_err *e);
/*
 * Write n buffers to n paths as one output: no path is replaced unless
 * every temporary file was written and synced (a full disk, a file size
 * limit or a path that is a directory replaces none).  Only a failing
 * rename() itself can leave the first files replaced and the rest not.
 */
int af_write_files(size_t n, const char *const *paths,
    const char *const *data, const size_t *lens, struct dl_err *e);
/*
 * Hold (on = 1) or release (0) SIGINT, SIGTERM and SIGHUP, so that a set
 * of renames is not cut in two: an interrupted run replaces all of its
 * files or none.  Calls nest: the signals come through when the outermost
 * hold is released.
 */
void af_hold_signals(int on);

/*
 * Lock output directory dir (which must exist) for this run, git-lockfile
 * style: create the empty file dir/.dlplan.lock with O_EXCL.  A second
 * writer gets DL_ESYS naming the lock file.  af_unlock_dir() and
 * af_cleanup_all() (at exit and on signals) remove it.  One lock per run;
 * a second call is a no-op.
 */
#define AF_LOCK_NAME ".dlplan.lock"
int af_lock_dir(const char *dir, struct dl_err *e);
void af_unlock_dir(void);

/* Make directory path (and parents) if missing. */
int mkdir_p(const char *path, struct dl_err *e);

/* SHA-256 of a buffer as 64 hex digits in out[65]. */
void sha256_hex(const void *data, size_t len, char out[65]);

/*
 * Path helpers.  path_abs() makes path absolute.  With resolve_links set
 * and path naming an existing file, that is realpath(3): every symbolic
 * link, "." and ".." resolved (the plan JSON relies on it to write input
 * paths relative to the plan's directory).  Otherwise the current
 * directory is put in front of a relative path, "./" components at its
 * front and a trailing "/" or "/." are dropped, and links stay as given
 * (the launchers of emit name the files as the user did); an absolute
 * path is returned as it is.  NULL with DL_ESYS when the current
 * directory is unknown.  path_dir() is the directory part of path (".",
 * when there is none; "/" for a file in the root).  Both return new
 * strings.
 */
char *path_abs(const char *path, int resolve_links, struct dl_err *e);
char *path_dir(const char *path);

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

/*
 * The hash map of the project, from byte strings to values: one kind of
 * value per map, either owned pointers or indices.  Zero-initialise it;
 * for pointers set vfree (called on every value by kc_free; NULL when the
 * map does not own them), then kc_put() keys that are not present yet
 * (the key is copied) and kc_find() them: NULL when absent.  For indices
 * (into an array the caller keeps) use kc_puti() and kc_findi() instead.
 * kc_free() releases everything and leaves an empty map.
 */
union kval {
	void *p;
	size_t i;
};

struct kcache {
	char **key;
	size_t *klen;
	unsigned long long *hash;
	union kval *val;
	size_t cap, n;
	void (*vfree)(void *);
};

void *kc_find(const struct kcache *kc, const char *k, size_t n);
void kc_put(struct kcache *kc, const char *k, size_t n, void *v);
/* kc_findi: 1 and the index in *i when k is present, else 0. */
int kc_findi(const struct kcache *kc, const char *k, size_t n, size_t *i);
void kc_puti(struct kcache *kc, const char *k, size_t n, size_t i);
void kc_free(struct kcache *kc);

#endif
