/*
 * util.c - errors, allocation, the clock, number parsing and printing,
 * ids, JSON reals, closing stdout.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <nettle/sha2.h>

#include "util.h"

const char *dl_progname = "dlplan";
int dl_verbose;

int
dl_vseterr(struct dl_err *e, int code, const char *file, long line, long col,
    const char *fmt, va_list ap)
{
	if (e == NULL)
		return code;
	e->code = code;
	e->line = line;
	e->col = col;
	/* "-" is standard input (util_io.h): name it as such. */
	if (file && strcmp(file, "-") == 0)
		file = "<stdin>";
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return code;
}

int
dl_seterr(struct dl_err *e, int code, const char *file, long line, long col,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vseterr(e, code, file, line, col, fmt, ap);
	va_end(ap);
	return code;
}

void
dl_fputs_esc(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		/* C0 controls, DEL, and C1 controls in UTF-8 (C2 80-9F). */
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\x%02x", *p);
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fprintf(f, "\\xc2\\x%02x", p[1]);
			p++;
		} else {
			putc(*p, f);
		}
	}
}

void
dl_perr(const struct dl_err *e)
{
	fprintf(stderr, "%s: ", dl_progname);
	if (e->file[0] != '\0') {
		dl_fputs_esc(e->file, stderr);
		fputc(':', stderr);
		if (e->line > 0) {
			fprintf(stderr, "%ld:", e->line);
			if (e->col > 0)
				fprintf(stderr, "%ld:", e->col);
		}
		fputc(' ', stderr);
	}
	dl_fputs_esc(e->msg, stderr);
	fputc('\n', stderr);
}

void
dl_warn(const char *fmt, ...)
{
	va_list ap;
	char buf[2048];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: ", dl_progname);
	dl_fputs_esc(buf, stderr);
	fputc('\n', stderr);
}

void
notes_addf(struct dl_notes *w, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	w->msg = xgrow(w->msg, &w->cap, w->n + 1, sizeof(*w->msg));
	w->msg[w->n++] = xstrdup(buf);
}

void
notes_free(struct dl_notes *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->msg[i]);
	free(w->msg);
	memset(w, 0, sizeof(*w));
}

void (*dl_cleanup)(void);

static void
oom(void)
{
	fprintf(stderr, "%s: out of memory\n", dl_progname);
	if (dl_cleanup != NULL)
		dl_cleanup();
	exit(DL_ESYS);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xreallocarray(void *p, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		oom();
	p = realloc(p, nmemb * size != 0 ? nmemb * size : 1);
	if (p == NULL)
		oom();
	return p;
}

void *
xmemdup(const void *p, size_t nmemb, size_t size)
{
	void *q = xcalloc(nmemb, size);

	if (nmemb > 0)
		memcpy(q, p, nmemb * size);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void *
xgrow(void *p, size_t *cap, size_t need, size_t sz)
{
	size_t c = *cap;

	if (need <= c)
		return p;
	if (c < 8)
		c = 8;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			oom();
		c *= 2;
	}
	p = xreallocarray(p, c, sz);
	*cap = c;
	return p;
}

double
mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
cmp_double_desc(const void *a, const void *b)
{
	return cmp_double(b, a);
}

/*
 * Plain decimals the easy way: "-?D*.?D*" with at least one digit, whose
 * digits (leading zeros dropped) make an integer m <= 2^53 and with at
 * most 22 of them after the point.  Then m and 10^k are exact doubles and
 * m / 10^k is one correctly rounded IEEE division: the double strtod
 * returns too (Clinger's fast path).  Returns 0 with *out set, or -1 for
 * anything else (which strtod then reads).  Only where double arithmetic
 * is done in double precision (not x87 extended).
 */
static int
parse_decimal_fast(const char *s, double *out)
{
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
		1e21, 1e22
	};
	const char *p = s;
	uint64_t m = 0;
	int neg = 0, point = 0, digits = 0, sig = 0, k = 0;
	double v;

	if (*p == '-') {
		neg = 1;
		p++;
	}
	for (;; p++) {
		if (*p >= '0' && *p <= '9') {
			digits = 1;
			k += point;
			if (m == 0 && *p == '0')
				continue;	/* a leading zero */
			if (++sig > 16)
				return -1;	/* > 2^53 */
			m = 10 * m + (uint64_t)(*p - '0');
		} else if (*p == '.' && !point) {
			point = 1;
		} else {
			break;
		}
	}
	if (*p != '\0' || !digits || m > (uint64_t)1 << 53 || k > 22)
		return -1;
	v = k ? (double)m / p10[k] : (double)m;	/* no division for integers */
	*out = neg ? -v : v;
	return 0;
#else
	(void)s;
	(void)out;
	return -1;
#endif
}

int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0' || *s == ' ' || *s == '\t')
		return -1;
	if (parse_decimal_fast(s, &v) == 0) {
		if (v < min || v > max)
			return -2;
		*out = v;
		return 0;
	}
	/* strtod accepts "nan", "inf" and hex floats; only plain decimals here. */
	for (const char *p = s; *p; p++)
		if (strchr("0123456789+-.eE", *p) == NULL)
			return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -1;
	/*
	 * ERANGE is also underflow: a value that rounds to a subnormal or
	 * to zero is still a number, in range when [min, max] holds it.
	 */
	if ((errno == ERANGE && fabs(v) >= DBL_MIN) || !isfinite(v))
		return -2;
	if (v < min || v > max)
		return -2;
	*out = v;
	return 0;
}

int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	if (!(*s == '-' || *s == '+' || (*s >= '0' && *s <= '9')))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0')
		return -1;
	if (errno == ERANGE || v < min || v > max)
		return -2;
	*out = v;
	return 0;
}

char *
fmt_double(char *buf, double v)
{
	if (!isfinite(v)) {
		strcpy(buf, "0");
		return buf;
	}
	if (v == 0) {
		strcpy(buf, "0");
		return buf;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, DL_DBL_BUFSZ, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* The C locale is never changed from "C", but be safe anyway. */
	for (char *p = buf; *p; p++)
		if (*p == ',')
			*p = '.';
	return buf;
}

int
valid_id(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return n >= 1 && n <= 63;
}

json_t *
jreal(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

int
close_stdout(void)
{
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int err = errno;

	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	/* A closed pipe with SIGPIPE ignored: the reader has all it wanted. */
	if (bad && err == EPIPE)
		return DL_OK;
	if (bad) {
		fprintf(stderr, "%s: cannot write standard output: %s\n",
		    dl_progname, strerror(err ? err : EIO));
		return DL_ESYS;
	}
	return DL_OK;
}
