/*
 * test_util.c - util.c: parse_double reads every plain decimal to exactly
 * the double strtod gives (its fast path for short decimals must not
 * change a single bit) and keeps rejecting what it rejected before;
 * read_file reads regular files, pipes and procfs files whole.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kc.h"
#include "sha256.h"
#include "tap.h"
#include "util_io.h"
#include "util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned
below(unsigned n)
{
	return (unsigned)(next() % n);
}

/* Is parse_double(s) the very double strtod(s) reads (bit for bit)? */
static int
same_as_strtod(const char *s)
{
	double got = 12345, want;
	char *end;

	if (parse_double(s, -HUGE_VAL, HUGE_VAL, &got) != 0)
		return 0;
	want = strtod(s, &end);
	return *end == '\0' && memcmp(&got, &want, sizeof(got)) == 0;
}

static void
exact(const char *s)
{
	double got = 12345, want = strtod(s, NULL);

	if (!ok(same_as_strtod(s), "'%s' reads as strtod does", s)) {
		parse_double(s, -HUGE_VAL, HUGE_VAL, &got);
		printf("#   got %a\n#  want %a\n", got, want);
	}
}

/* A random decimal: sign, leading zeros, 1..ndig digits, a point. */
static void
random_decimal(char *buf, unsigned maxdig)
{
	char *p = buf;
	unsigned nd = 1 + below(maxdig), lead = below(4) ? 0 : below(4);
	unsigned pt = below(nd + 2);	/* nd + 1: no point */

	if (below(3) == 0)
		*p++ = '-';
	while (lead--)
		*p++ = '0';
	for (unsigned i = 0; i < nd; i++) {
		if (i == pt)
			*p++ = '.';
		/* Runs of 9s and 0s probe the rounding boundaries. */
		switch (below(4)) {
		case 0:
			*p++ = '9';
			break;
		case 1:
			*p++ = '0';
			break;
		default:
			*p++ = (char)('0' + below(10));
		}
	}
	if (pt == nd)
		*p++ = '.';
	*p = '\0';
}

static void
test_random(void)
{
	char buf[64], bad[64] = "";
	long n = 0, fails = 0;

	for (unsigned maxdig = 1; maxdig <= 17; maxdig++)
		for (int i = 0; i < 20000; i++, n++) {
			random_decimal(buf, maxdig);
			if (!same_as_strtod(buf) && fails++ == 0)
				strcpy(bad, buf);
		}
	if (!ok(fails == 0, "%ld random decimals of 1..17 digits read as "
	    "strtod does", n))
		printf("#   %ld differ, the first '%s'\n", fails, bad);

	/* Doubles printed with 1..17 significant digits, all magnitudes. */
	fails = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t bits = next();
		double d;
		int e;

		memcpy(&d, &bits, sizeof(d));
		if (!isfinite(d))
			continue;
		d = ldexp(frexp(d, &e), (int)below(120) - 60);
		snprintf(buf, sizeof(buf), "%.*f", (int)below(23), d);
		if (!same_as_strtod(buf) && fails++ == 0)
			strcpy(bad, buf);
	}
	if (!ok(fails == 0, "100000 printed doubles read as strtod does"))
		printf("#   %ld differ, the first '%s'\n", fails, bad);
}

static void
test_edges(void)
{
	static const char *const s[] = {
		/* the fast path */
		"0", "-0", "0.0", "-0.0", "00", "0.", ".5", "-.5", "5.",
		"0.1", "0.2", "0.3", "1.1", "0.7", "3.14159", "0.0001",
		"-123.456", "1", "10", "1000000000000000000000",
		"10000000000000000000000", "0.0000000000000000000001",
		"0.1234567890123456", "123456789012345.6", "999999999999999",
		"9007199254740992", "9007199254740991", "900719925474099.2",
		"0.9007199254740992", "4503599627370497", "1.7976931348623157",
		"000000000000000000000000000000001.5", "0.30000000000000004",
		"8.5", "0.05", "0.95", "1.0000", "0.5000",
		/* the long way: more digits, exponents, '+', tiny, huge */
		"9007199254740993", "9007199254740993.0", "9007199254740995",
		"90071992547409930", "0.9007199254740993", "18014398509481985",
		"12345678901234567890", "1.2345678901234567890",
		"100000000000000000000000", "0.00000000000000000000001",
		"0.000000000000000000000000000001", "1e22", "1e23", "1E22",
		"1e-22", "-1e22", "+1", "+0.5", "+.5", "1.e5",
		"2.2250738585072014e-308",
		"1.7976931348623157e308", "0.1e1", "123e-2",
		"2.5e-1", "0.500000000000000000000000000000000000000001",
		"1.00000000000000011102230246251565404236316680908203125",
		"1.00000000000000011102230246251565404236316680908203124",
		"1.00000000000000011102230246251565404236316680908203126",
		"7.2057594037927933e16", "72057594037927933",
	};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++)
		exact(s[i]);
	{
		double d = 1;

		ok(parse_double("-0", -1, 1, &d) == 0 && d == 0 && signbit(d),
		    "'-0' reads as negative zero");
		ok(parse_double("-0.0", 0, 1, &d) == 0,
		    "'-0.0' is in [0, 1] (negative zero equals zero)");
		/* Underflow is not "out of range". */
		ok(parse_double("1e-320", 0, 1, &d) == 0 && d > 0 &&
		    d < DBL_MIN, "'1e-320' (subnormal) is in [0, 1]");
		ok(parse_double("1e-310", 0, 1, &d) == 0 && d > 0,
		    "'1e-310' (subnormal) is in [0, 1]");
		ok(parse_double("1e-400", 0, 1, &d) == 0 && d == 0,
		    "'1e-400' (rounds to zero) is in [0, 1]");
		ok(parse_double("1e-320", 1e-9, 1, &d) == -2,
		    "'1e-320' is below [1e-9, 1]");
		ok(parse_double("1e400", 0, HUGE_VAL, &d) == -2,
		    "'1e400' (overflow) is out of range");
	}
}

static void
rejects(const char *s, int want)
{
	double d = 12345;
	int r = parse_double(s, -HUGE_VAL, HUGE_VAL, &d);

	if (!ok(r == want && d == 12345, "'%s' gives %d", s, want))
		printf("#   got %d (value %g)\n", r, d);
}

static void
test_rejects(void)
{
	static const char *const syntax[] = {
		"", " ", " 1", "1 ", "\t1", "-", "+", ".", "-.", "..",
		"1..2", "1.2.3", "--1", "-+1", "+-1", "1-", "1-2", "0x10",
		"0X1p3", "inf", "-inf", "INF", "infinity", "nan", "NaN",
		"nan(1)", "1e", "1e+", "e5", ".e5", "1,5", "1_000", "1f",
		"\xd9\xa1", "0.5%", "5e2.0",
	};

	for (size_t i = 0; i < ARRAY_SIZE(syntax); i++)
		rejects(syntax[i], -1);
	rejects("1e400", -2);
	rejects("-1e400", -2);
	/* "1e-400" underflows to zero: a number in range. */
	{
		double d = 7;

		ok(parse_double(NULL, 0, 1, &d) == -1 && d == 7,
		    "NULL is a syntax error");
		ok(parse_double("1.5", 0, 1, &d) == -2 && d == 7,
		    "1.5 is out of [0, 1]");
		ok(parse_double("-0.25", 0, 1, &d) == -2 && d == 7,
		    "-0.25 is out of [0, 1]");
		ok(parse_double("1", 0, 1, &d) == 0 && d == 1,
		    "1 is in [0, 1]");
		ok(parse_double("1.0000000000000002", 0, 1, &d) == -2,
		    "1.0000000000000002 is out of [0, 1]");
		ok(parse_double("1e0", 0, 1, &d) == 0 && d == 1,
		    "1e0 is in [0, 1]");
		ok(parse_double("0.99999999999999999", 0, 1, &d) == 0 &&
		    d == 1, "0.99999999999999999 rounds to 1, in [0, 1]");
	}
}

/* Write len bytes of a pattern to path; return the bytes. */
static char *
pattern_file(const char *path, size_t len)
{
	char *want = malloc(len + 1);
	FILE *fp = fopen(path, "wb");

	for (size_t i = 0; i < len; i++)
		want[i] = (char)('a' + i % 23);
	want[len] = '\0';
	if (fp) {
		fwrite(want, 1, len, fp);
		fclose(fp);
	}
	return want;
}

static void
test_read_file(void)
{
	char dir[] = "/tmp/dlplan-test-util-XXXXXX", path[64], fifo[64];
	static const size_t sizes[] = { 0, 1, 65535, 65536, 65537, 300001 };
	struct dl_err e;
	char *data, *want;
	size_t len;
	int rc, pfd[2];
	FILE *fp;

	if (!ok(mkdtemp(dir) != NULL, "temporary directory"))
		return;
	snprintf(path, sizeof(path), "%s/f", dir);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		want = pattern_file(path, sizes[i]);
		data = NULL;
		rc = read_file(path, &data, &len, &e);
		ok(rc == DL_OK && len == sizes[i] && data[len] == '\0' &&
		    memcmp(data, want, len) == 0, "read_file of %zu bytes",
		    sizes[i]);
		free(data);
		free(want);
	}

	/*
	 * A FIFO is refused without waiting for a writer; standard input,
	 * a pipe here, has no size: read until the end, growing as it
	 * comes.
	 */
	snprintf(fifo, sizeof(fifo), "%s/p", dir);
	if (mkfifo(fifo, 0600) == 0) {
		rc = read_file(fifo, &data, &len, &e);
		ok(rc == DL_EDATA && strncmp(e.msg, "not a regular file", 18)
		    == 0 && strcmp(e.file, fifo) == 0, "read_file of a FIFO: "
		    "%s", e.msg);
		unlink(fifo);
	}
	rc = read_file("/dev/zero", &data, &len, &e);
	ok(rc == DL_EDATA && strncmp(e.msg, "not a regular file", 18) == 0,
	    "read_file of /dev/zero: %s", e.msg);
	if (pipe(pfd) == 0) {
		pid_t pid;
		int in = dup(0);

		want = pattern_file(path, 200000);
		fflush(stdout);
		if ((pid = fork()) == 0) {
			close(pfd[0]);
			if (write(pfd[1], want, 200000) != 200000)
				_exit(1);
			_exit(0);
		}
		close(pfd[1]);
		dup2(pfd[0], 0);
		close(pfd[0]);
		data = NULL;
		rc = read_file("/dev/stdin", &data, &len, &e);
		ok(rc == DL_OK && len == 200000 && data[len] == '\0' &&
		    memcmp(data, want, len) == 0, "read_file of a pipe on "
		    "standard input");
		waitpid(pid, NULL, 0);
		dup2(in, 0);
		close(in);
		free(data);
		free(want);
	}

	/* Reading stops at the first NUL byte, named by line and column. */
	fp = fopen(path, "wb");
	fputs("ab\ncd", fp);
	fputc('\0', fp);
	fputs("ef\n", fp);
	fclose(fp);
	rc = read_file(path, &data, &len, &e);
	ok(rc == DL_EDATA && e.line == 2 && e.col == 3 && strcmp(e.msg,
	    "NUL byte in file (expected text)") == 0, "read_file stops at a "
	    "NUL byte: %ld:%ld: %s", e.line, e.col, e.msg);

	/* procfs says 0 bytes for files that are not empty. */
	data = NULL;
	rc = read_file("/proc/self/status", &data, &len, &e);
	ok(rc == DL_OK && len > 0 && strlen(data) == len,
	    "read_file of a file whose size stat does not know");
	free(data);

	rc = read_file(dir, &data, &len, &e);
	ok(rc == DL_EDATA && strcmp(e.msg, "is a directory (expected a file)")
	    == 0, "read_file of a directory: %s", e.msg);
	unlink(path);
	rc = read_file(path, &data, &len, &e);
	ok(rc == DL_EDATA && strcmp(e.msg, "cannot open file: No such file "
	    "or directory") == 0 && strcmp(e.file, path) == 0,
	    "read_file of a missing file: %s", e.msg);
	rmdir(dir);
}

/*
 * Pinned reads: a size and a digest decide whether the bytes are
 * returned; a root confines the open; the digest of what was returned
 * is kept.
 */
static void
test_pins(void)
{
	char dir[] = "/tmp/dlplan-pin.XXXXXX", sub[600], f[600], out[600];
	char ln[600], sha[65], got[65];
	struct dl_err e = { 0 };
	char *data = NULL;
	long long size;
	size_t len;
	FILE *fp;
	int rc;

	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(sub, sizeof(sub), "%s/in", dir);
	snprintf(f, sizeof(f), "%s/in/a.csv", dir);
	snprintf(out, sizeof(out), "%s/out.csv", dir);
	snprintf(ln, sizeof(ln), "%s/in/up", dir);
	mkdir(sub, 0700);
	fp = fopen(f, "w");
	fputs("x\n1\n", fp);
	fclose(fp);
	fp = fopen(out, "w");
	fputs("secret\n", fp);
	fclose(fp);
	if (symlink("..", ln) != 0)
		ok(0, "symlink");
	sha256_hex("x\n1\n", 4, sha);

	read_pin(f, sha, 4, NULL, NULL);
	rc = read_file(f, &data, &len, &e);
	ok(rc == DL_OK && len == 4, "pinned, right digest and size: read");
	free(data);
	ok(read_digest(f, got, &size) && strcmp(got, sha) == 0 && size == 4,
	    "read_digest: the digest and size of the bytes read");
	read_unpin();
	read_pin(out, sha, -1, NULL, NULL);
	data = NULL;
	rc = read_file(out, &data, &len, &e);
	ok(rc == DL_EDATA && data == NULL && strstr(e.msg, "secret") == NULL &&
	    strncmp(e.msg, "does not match the digest", 25) == 0,
	    "pinned, wrong digest, no size: refused unread: %s", e.msg);
	read_unpin();
	read_pin(out, sha, 4, NULL, NULL);
	data = NULL;
	rc = read_file(out, &data, &len, &e);
	ok(rc == DL_EDATA && data == NULL && strcmp(e.msg, "is 7 bytes, not "
	    "the 4 bytes the plan records for it, so it is not read (it "
	    "changed since the plan was made; give it on the command line, "
	    "or --ignore-digests)") == 0,
	    "pinned, wrong size: refused with both sizes: %s", e.msg);
	rc = sha256_file(out, -1, got, &size, &e);
	ok(rc == DL_EDATA && strncmp(e.msg, "is 7 bytes, not the 4", 21) == 0,
	    "sha256_file: a pinned size is checked too: %s", e.msg);
	read_unpin();
	rc = sha256_file(f, -1, got, &size, &e);
	ok(rc == DL_OK && strcmp(got, sha) == 0 && size == 4,
	    "sha256_file: digest and size, read in pieces");
	rc = sha256_file(out, 4, got, &size, &e);
	ok(rc == DL_OK && got[0] == '\0' && size == 7,
	    "sha256_file: another size than wanted: not read, its size");

	read_pin("p1", NULL, -1, sub, "a.csv");
	rc = read_file("p1", &data, &len, &e);
	ok(rc == DL_OK && len == 4, "below root: read");
	free(data);
	read_pin("p2", NULL, -1, sub, "../out.csv");
	rc = read_file("p2", &data, &len, &e);
	ok(rc == DL_EDATA && strncmp(e.msg, "leads outside", 13) == 0,
	    "'..' out of root: refused: %s", e.msg);
	read_pin("p3", NULL, -1, sub, "up/out.csv");
	rc = read_file("p3", &data, &len, &e);
	ok(rc == DL_EDATA && strncmp(e.msg, "leads outside", 13) == 0,
	    "a symbolic link out of root: refused: %s", e.msg);
	read_pin("p4", NULL, -1, sub, out);
	rc = read_file("p4", &data, &len, &e);
	ok(rc == DL_EDATA && strncmp(e.msg, "leads outside", 13) == 0,
	    "an absolute path: refused: %s", e.msg);
	read_unpin();
	rc = read_file(out, &data, &len, &e);
	ok(rc == DL_OK, "unpinned: read as before");
	free(data);
	unlink(ln);
	unlink(f);
	unlink(out);
	rmdir(sub);
	rmdir(dir);
}

/* The one hash map: pointer values and index values, through growth. */
static void
test_kcache(void)
{
	struct kcache pm = { 0 }, im = { 0 };
	char key[32];
	size_t i, bad = 0, v;

	pm.vfree = free;
	for (i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		kc_put(&pm, key, strlen(key), xmemdup(&i, 1, sizeof(i)));
		kc_puti(&im, key, strlen(key), 7 * i);
	}
	for (i = 0; i < 2000; i++) {
		size_t *p;

		snprintf(key, sizeof(key), "k%zu", i);
		p = kc_find(&pm, key, strlen(key));
		if (p == NULL || *p != i || !kc_findi(&im, key, strlen(key),
		    &v) || v != 7 * i)
			bad++;
	}
	ok(bad == 0 && pm.n == 2000 && im.n == 2000,
	    "kcache finds 2000 pointer and index values after growing");
	ok(kc_find(&pm, "k2000", 5) == NULL &&
	    !kc_findi(&im, "k2000", 5, &v), "kcache: an absent key");
	ok(kc_find(&pm, "k1", 1) == NULL, "kcache: a prefix is another key");
	kc_puti(&im, "", 0, 42);
	ok(kc_findi(&im, "", 0, &v) && v == 42, "kcache: the empty key");
	kc_free(&pm);
	kc_free(&im);
	ok(pm.n == 0 && pm.cap == 0 && kc_find(&pm, "k1", 2) == NULL,
	    "kc_free leaves an empty map");
}

int
main(void)
{
	test_pins();
	test_kcache();
	test_edges();
	test_random();
	test_rejects();
	test_read_file();
	return done_testing();
}
