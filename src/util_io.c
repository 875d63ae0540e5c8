/*
 * util_io.c - reading input files whole (see util_io.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "util_io.h"

/* Is st the file open on standard input? */
static int
is_stdin(const struct stat *st)
{
	struct stat in;

	return fstat(0, &in) == 0 && in.st_dev == st->st_dev &&
	    in.st_ino == st->st_ino;
}

/*
 * Open path for reading without blocking on a FIFO, and refuse what is
 * not a regular file, a directory (whose read fails below, as before) or
 * standard input.  *reg says whether st_size can be trusted.
 */
static int
open_input(const char *path, int *fdp, struct stat *st, struct dl_err *e)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	int fl;

	if (fd < 0)
		return dl_seterr(e, errno == ENOENT ? DL_EDATA : DL_ESYS, path,
		    0, 0, "cannot open file: %s", strerror(errno));
	if (fstat(fd, st) != 0) {
		int err = errno;

		close(fd);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot read file: %s",
		    strerror(err));
	}
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) &&
	    !is_stdin(st)) {
		close(fd);
		return dl_seterr(e, DL_EDATA, path, 0, 0, "not a regular file "
		    "(a FIFO, socket or device cannot be an input; use a "
		    "file or standard input)");
	}
	/* Standard input may be a pipe: wait for its data as usual. */
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fdp = fd;
	return DL_OK;
}

/* The error for a NUL byte at buf + at (line and column are 1-based). */
static int
nul_error(const char *path, const char *buf, size_t at, struct dl_err *e)
{
	long line = 1, col = 1;

	for (size_t i = 0; i < at; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	return dl_seterr(e, DL_EDATA, path, line, col, "NUL byte in file "
	    "(expected text)");
}

/*
 * Read fd (opened as path, st its status) to its end into *data, NUL
 * terminated, and close it.
 */
static int
read_fd(int fd, const char *path, const struct stat *st, char **data,
    size_t *len, struct dl_err *e)
{
	size_t cap = 65536, n = 0;
	char *buf;
	int rc;

	/*
	 * A regular file goes straight into a buffer of its size plus one
	 * byte (for the NUL, and to see the end without regrowing): no
	 * copy through stdio, no reallocs.  Others grow as they come.  A
	 * sparse file reads as NUL bytes, so reading stops at its first
	 * hole; the buffer is sized for at most 64 MB before any data.
	 */
	if (S_ISREG(st->st_mode) && st->st_size > 0 &&
	    (uintmax_t)st->st_size < ((size_t)1 << 26))
		cap = (size_t)st->st_size + 1;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t r;
		const char *z;

		if (n == cap)
			buf = xgrow(buf, &cap, n + 65536, 1);
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			close(fd);
			free(buf);
			return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot read "
			    "file: %s", strerror(err ? err : EIO));
		}
		if (r == 0)
			break;
		if ((z = memchr(buf + n, '\0', (size_t)r)) != NULL) {
			rc = nul_error(path, buf, (size_t)(z - buf), e);
			close(fd);
			free(buf);
			return rc;
		}
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';	/* n < cap: the last read had room and saw the end */
	*len = n;
	*data = buf;
	return DL_OK;
}

/*
 * Standard input as the path "-": read once, on the first call, and kept
 * for the rest of the run, so the data parsed and the digest recorded
 * are the same bytes.  The outcome of that one read (the data or the
 * error) is what every call returns.
 */
static struct {
	int done;
	char *data;
	size_t len;
	struct dl_err err;
} in_cache;

static int
read_stdin(char **data, size_t *len, struct dl_err *e)
{
	struct stat st;
	int fd;

	if (!in_cache.done) {
		in_cache.done = 1;
		if ((fd = dup(0)) < 0 || fstat(fd, &st) != 0) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			dl_seterr(&in_cache.err, DL_ESYS, "-", 0, 0, "cannot "
			    "read standard input: %s", strerror(err));
		} else if (S_ISDIR(st.st_mode)) {
			close(fd);
			dl_seterr(&in_cache.err, DL_EDATA, "-", 0, 0,
			    "standard input is a directory");
		} else {
			(void)read_fd(fd, "-", &st, &in_cache.data,
			    &in_cache.len, &in_cache.err);
		}
	}
	if (in_cache.data == NULL) {
		if (e)
			*e = in_cache.err;
		return in_cache.err.code;
	}
	*data = xmalloc(in_cache.len + 1);
	memcpy(*data, in_cache.data, in_cache.len + 1);
	*len = in_cache.len;
	return DL_OK;
}

int
read_file(const char *path, char **data, size_t *len, struct dl_err *e)
{
	struct stat st;
	int fd = -1, rc;

	if (strcmp(path, DL_STDIN_PATH) == 0)
		return read_stdin(data, len, e);
	if ((rc = open_input(path, &fd, &st, e)) != DL_OK)
		return rc;
	return read_fd(fd, path, &st, data, len, e);
}

int
sha256_file(const char *path, char out[65], struct dl_err *e)
{
	char *data;
	size_t len;
	int rc = read_file(path, &data, &len, e);

	if (rc != DL_OK)
		return rc;
	sha256_hex(data, len, out);
	free(data);
	return DL_OK;
}
