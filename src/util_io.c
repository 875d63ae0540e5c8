/*
 * util_io.c - reading input files whole (see util_io.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* syscall(2), for openat2() where the C library has no wrapper. */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "sha256.h"
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
 * Check the file fd (opened as path, without blocking on a FIFO): refuse
 * what is not a regular file or standard input, closing fd, and put back
 * the blocking mode.  st gets its status (whether st_size can be trusted).
 */
static int
check_input(int fd, const char *path, struct stat *st, struct dl_err *e)
{
	int fl;

	if (fstat(fd, st) != 0) {
		int err = errno;

		close(fd);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot read file: %s",
		    strerror(err));
	}
	if (S_ISDIR(st->st_mode)) {
		close(fd);
		return dl_seterr(e, DL_EDATA, path, 0, 0, "is a directory "
		    "(expected a file)");
	}
	if (!S_ISREG(st->st_mode) && !is_stdin(st)) {
		close(fd);
		return dl_seterr(e, DL_EDATA, path, 0, 0, "not a regular file "
		    "(a FIFO, socket or device cannot be an input; use a "
		    "file or standard input)");
	}
	/* Standard input may be a pipe: wait for its data as usual. */
	if ((fl = fcntl(fd, F_GETFL)) != -1)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return DL_OK;
}

/*
 * Open rel below the directory root the way the kernel resolves it at
 * the moment of opening, so that nothing swapped in between a check and
 * the open can lead out: openat2() with RESOLVE_BENEATH where the kernel
 * has it, else one component at a time with O_NOFOLLOW (no '..', no
 * symbolic link at all).  -1 with errno EXDEV when rel leads out of root.
 */
static int
open_beneath(const char *root, const char *rel)
{
	int dfd, fd, err, walked = 0;
	char *copy, *comp, *next;

	if ((dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
#ifdef SYS_openat2
	{
		struct open_how how;

		memset(&how, 0, sizeof(how));
		how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
		how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
		if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) {
			err = errno;
			close(dfd);
			errno = err;
			return fd;
		}
	}
#endif
	if (rel[0] == '/') {
		close(dfd);
		errno = EXDEV;
		return -1;
	}
	copy = xstrdup(rel);
	fd = dfd;
	for (comp = copy; fd >= 0 && comp != NULL; comp = next) {
		int nfd;

		if ((next = strchr(comp, '/')) != NULL)
			*next++ = '\0';
		if (*comp == '\0' || strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			close(fd);
			fd = -1;
			errno = EXDEV;
			break;
		}
		nfd = openat(fd, comp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    (next ? O_DIRECTORY : O_NONBLOCK));
		err = errno;
		close(fd);
		if (nfd < 0 && (err == ELOOP || (next && err == ENOTDIR)))
			err = EXDEV;	/* a symbolic link: not followed */
		errno = err;
		fd = nfd;
		walked = 1;
	}
	free(copy);
	if (fd >= 0 && !walked) {	/* rel named root itself */
		close(fd);
		errno = EISDIR;
		return -1;
	}
	return fd;
}

/*
 * The pins of read_pin() and the digests of the files read (util_io.h).
 */
struct pin {
	char *path;
	char sha[65];		/* expected digest, or "" */
	char *root, *rel;	/* open rel below root, or NULL */
};
struct seen {
	char *path;
	char sha[65];
};
struct inode {
	dev_t dev;
	ino_t ino;
};
static struct {
	pthread_mutex_t mu;
	struct pin *pin;
	size_t npin, cappin;
	struct seen *seen;
	size_t nseen, capseen;
	struct inode *in;	/* the files read (read_is_input()) */
	size_t nin, capin;
} io = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, NULL, 0, 0, NULL, 0, 0 };

/* Note the file st (a regular file read) as an input of this run. */
static void
note_input(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return;
	pthread_mutex_lock(&io.mu);
	if (io.nin == io.capin)
		io.in = xgrow(io.in, &io.capin, io.nin + 1, sizeof(*io.in));
	io.in[io.nin].dev = st->st_dev;
	io.in[io.nin++].ino = st->st_ino;
	pthread_mutex_unlock(&io.mu);
}

int
read_is_input(const char *path)
{
	struct stat st;
	int found = 0;

	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	pthread_mutex_lock(&io.mu);
	for (size_t i = 0; i < io.nin && !found; i++)
		found = io.in[i].dev == st.st_dev && io.in[i].ino == st.st_ino;
	pthread_mutex_unlock(&io.mu);
	return found;
}

void
read_pin(const char *path, const char *sha256, const char *root,
    const char *rel)
{
	struct pin *p;

	pthread_mutex_lock(&io.mu);
	if (io.npin == io.cappin)
		io.pin = xgrow(io.pin, &io.cappin, io.npin + 1,
		    sizeof(*io.pin));
	p = &io.pin[io.npin++];
	memset(p, 0, sizeof(*p));
	p->path = xstrdup(path);
	if (sha256)
		snprintf(p->sha, sizeof(p->sha), "%s", sha256);
	if (root) {
		p->root = xstrdup(root);
		p->rel = xstrdup(rel);
	}
	pthread_mutex_unlock(&io.mu);
}

void
read_unpin(void)
{
	pthread_mutex_lock(&io.mu);
	for (size_t i = 0; i < io.npin; i++) {
		free(io.pin[i].path);
		free(io.pin[i].root);
		free(io.pin[i].rel);
	}
	io.npin = 0;
	pthread_mutex_unlock(&io.mu);
}

/* Copy the pin of path into *p (strings borrowed until unpinned). */
static int
find_pin(const char *path, struct pin *p)
{
	int found = 0;

	pthread_mutex_lock(&io.mu);
	for (size_t i = io.npin; i-- > 0 && !found;)
		if (strcmp(io.pin[i].path, path) == 0) {
			*p = io.pin[i];
			found = 1;
		}
	pthread_mutex_unlock(&io.mu);
	return found;
}

static void
remember(const char *path, const char *sha)
{
	size_t i;

	pthread_mutex_lock(&io.mu);
	for (i = 0; i < io.nseen; i++)
		if (strcmp(io.seen[i].path, path) == 0)
			break;
	if (i == io.nseen) {
		if (io.nseen == io.capseen)
			io.seen = xgrow(io.seen, &io.capseen, io.nseen + 1,
			    sizeof(*io.seen));
		io.seen[io.nseen++].path = xstrdup(path);
	}
	memcpy(io.seen[i].sha, sha, 65);
	pthread_mutex_unlock(&io.mu);
}

int
read_digest(const char *path, char out[65])
{
	int found = 0;

	pthread_mutex_lock(&io.mu);
	for (size_t i = 0; i < io.nseen && !found; i++)
		if (strcmp(io.seen[i].path, path) == 0) {
			memcpy(out, io.seen[i].sha, 65);
			found = 1;
		}
	pthread_mutex_unlock(&io.mu);
	return found;
}

/*
 * Open path for reading without blocking on a FIFO, below its pin's root
 * when it has one, and refuse what is not a regular file or standard
 * input.
 */
static int
open_input(const char *path, const struct pin *pin, int *fdp,
    struct stat *st, struct dl_err *e)
{
	int fd, rc;

	if (pin && pin->root)
		fd = open_beneath(pin->root, pin->rel);
	else
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == EXDEV)
		return dl_seterr(e, DL_EDATA, path, 0, 0, "leads outside the "
		    "plan's directory ('..', an absolute path or a symbolic "
		    "link; give the file on the command line, or --trust-paths "
		    "to allow it)");
	if (fd < 0 && errno == EISDIR)
		return dl_seterr(e, DL_EDATA, path, 0, 0, "is a directory "
		    "(expected a file)");
	if (fd < 0)
		return dl_seterr(e, errno == ENOENT ? DL_EDATA : DL_ESYS, path,
		    0, 0, "cannot open file: %s", strerror(errno));
	if ((rc = check_input(fd, path, st, e)) != DL_OK)
		return rc;
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
			note_input(&st);
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
	struct pin pin;
	char sha[65];
	int fd = -1, rc, pinned = find_pin(path, &pin);

	if (strcmp(path, DL_STDIN_PATH) == 0)
		rc = read_stdin(data, len, e);
	else if ((rc = open_input(path, pinned ? &pin : NULL, &fd, &st, e)) ==
	    DL_OK) {
		struct stat lst;

		note_input(&st);
		if (lstat(path, &lst) == 0)
			note_input(&lst);	/* a link to it, too */
		rc = read_fd(fd, path, &st, data, len, e);
	}
	if (rc != DL_OK)
		return rc;
	/* The digest of these bytes, the ones the caller parses. */
	sha256_hex(*data, *len, sha);
	if (pinned && pin.sha[0] && strcmp(sha, pin.sha) != 0) {
		free(*data);
		*data = NULL;
		return dl_seterr(e, DL_EDATA, path, 0, 0, "does not match the "
		    "digest the plan records for it, so it is not read (it "
		    "changed since the plan was made; give it on the command "
		    "line, or --ignore-digests)");
	}
	remember(path, sha);
	return DL_OK;
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
