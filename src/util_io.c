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
	long long size;		/* expected size in bytes, or -1 */
	char *root, *rel;	/* open rel below root, or NULL */
};
struct seen {
	char *path;
	char sha[65];
	long long size;
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
read_pin(const char *path, const char *sha256, long long size,
    const char *root, const char *rel)
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
	p->size = size;
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
remember(const char *path, const char *sha, long long size)
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
	io.seen[i].size = size;
	pthread_mutex_unlock(&io.mu);
}

int
read_digest(const char *path, char out[65], long long *size)
{
	int found = 0;

	pthread_mutex_lock(&io.mu);
	for (size_t i = 0; i < io.nseen && !found; i++)
		if (strcmp(io.seen[i].path, path) == 0) {
			memcpy(out, io.seen[i].sha, 65);
			if (size)
				*size = io.seen[i].size;
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

/* Move *line and *col (1-based) past the n bytes at buf. */
static void
count_lines(const char *buf, size_t n, long *line, long *col)
{
	const char *p = buf, *end = buf + n, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		(*line)++;
		*col = 1;
		p = nl + 1;
	}
	*col += (long)(end - p);
}

/* The error for a NUL byte at line and col. */
static int
nul_error(const char *path, long line, long col, struct dl_err *e)
{
	return dl_seterr(e, DL_EDATA, path, line, col, "NUL byte in file "
	    "(expected text)");
}

/*
 * The error for a pinned input of the wrong size: have bytes (or, when
 * more is set, more than want) where the plan records want.
 */
static int
size_error(const char *path, long long have, long long want, int more,
    struct dl_err *e)
{
	if (more)
		return dl_seterr(e, DL_EDATA, path, 0, 0, "grew past the %lld "
		    "bytes the plan records for it, so it is not read (it "
		    "changed since the plan was made; give it on the command "
		    "line, or --ignore-digests)", want);
	return dl_seterr(e, DL_EDATA, path, 0, 0, "is %lld bytes, not the "
	    "%lld bytes the plan records for it, so it is not read (it "
	    "changed since the plan was made; give it on the command line, "
	    "or --ignore-digests)", have, want);
}

/*
 * Read fd (opened as path, st its status) to its end, or to max + 1
 * bytes, into *data, NUL terminated, and close it.
 */
static int
read_fd(int fd, const char *path, const struct stat *st, size_t max,
    char **data, size_t *len, struct dl_err *e)
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
	while (n <= max) {
		ssize_t r;
		const char *z;

		if (n == cap)
			buf = xgrow(buf, &cap, n + 65536, 1);
		r = read(fd, buf + n, cap - n > max - n + 1 ? max - n + 1 :
		    cap - n);
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
			long line = 1, col = 1;

			count_lines(buf, (size_t)(z - buf), &line, &col);
			rc = nul_error(path, line, col, e);
			close(fd);
			free(buf);
			return rc;
		}
		n += (size_t)r;
	}
	close(fd);
	if (n == cap)	/* stopped at max + 1 bytes, with no room left */
		buf = xgrow(buf, &cap, n + 1, 1);
	buf[n] = '\0';
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
			(void)read_fd(fd, "-", &st, SIZE_MAX - 1,
			    &in_cache.data, &in_cache.len, &in_cache.err);
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

/*
 * The SHA-256 of the bytes of fd (opened as path) from where it stands
 * to its end, read through a fixed buffer and never held, and their
 * number; a NUL byte is refused as read_fd() refuses it.  fd stays open.
 */
static int
hash_fd(int fd, const char *path, char out[65], long long *n,
    struct dl_err *e)
{
	struct dl_sha256 *c = sha256_begin();
	char *buf = xmalloc(65536);
	long line = 1, col = 1;
	int rc = DL_OK;

	*n = 0;
	for (;;) {
		ssize_t r = read(fd, buf, 65536);
		const char *z;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = dl_seterr(e, DL_ESYS, path, 0, 0, "cannot read "
			    "file: %s", strerror(errno ? errno : EIO));
			break;
		}
		if (r == 0)
			break;
		if ((z = memchr(buf, '\0', (size_t)r)) != NULL) {
			count_lines(buf, (size_t)(z - buf), &line, &col);
			rc = nul_error(path, line, col, e);
			break;
		}
		count_lines(buf, (size_t)r, &line, &col);
		sha256_add(c, buf, (size_t)r);
		*n += r;
	}
	free(buf);
	sha256_end(c, out);
	return rc;
}

/* The error for a pinned input whose bytes do not have its digest. */
static int
digest_error(const char *path, struct dl_err *e)
{
	return dl_seterr(e, DL_EDATA, path, 0, 0, "does not match the "
	    "digest the plan records for it, so it is not read (it changed "
	    "since the plan was made; give it on the command line, or "
	    "--ignore-digests)");
}

/*
 * Check the file fd (opened as path, st its status) against its pin
 * before its bytes are held: a recorded size first, from the file's
 * status (a regular file of another size is refused before a byte is
 * read); without one (a plan of an older dlplan), the digest of its
 * bytes read through a fixed buffer, and fd rewound.  fd is closed on
 * failure.
 */
static int
check_pin(int fd, const char *path, const struct stat *st,
    const struct pin *pin, struct dl_err *e)
{
	char sha[65];
	long long n;
	int rc;

	if (pin->size >= 0 && S_ISREG(st->st_mode) &&
	    (long long)st->st_size != pin->size) {
		close(fd);
		return size_error(path, (long long)st->st_size, pin->size, 0,
		    e);
	}
	if (pin->size >= 0 || pin->sha[0] == '\0' || !S_ISREG(st->st_mode))
		return DL_OK;
	if ((rc = hash_fd(fd, path, sha, &n, e)) == DL_OK &&
	    strcmp(sha, pin->sha) != 0)
		rc = digest_error(path, e);
	if (rc == DL_OK && lseek(fd, 0, SEEK_SET) != 0)
		rc = dl_seterr(e, DL_ESYS, path, 0, 0, "cannot read file: %s",
		    strerror(errno));
	if (rc != DL_OK)
		close(fd);
	return rc;
}

int
read_file(const char *path, char **data, size_t *len, struct dl_err *e)
{
	struct stat st;
	struct pin pin;
	char sha[65];
	int fd = -1, rc, pinned = find_pin(path, &pin);
	int sized = pinned && pin.size >= 0;

	if (strcmp(path, DL_STDIN_PATH) == 0)
		rc = read_stdin(data, len, e);
	else if ((rc = open_input(path, pinned ? &pin : NULL, &fd, &st, e)) ==
	    DL_OK) {
		struct stat lst;

		note_input(&st);
		if (lstat(path, &lst) == 0)
			note_input(&lst);	/* a link to it, too */
		if (!pinned || (rc = check_pin(fd, path, &st, &pin, e)) ==
		    DL_OK)
			rc = read_fd(fd, path, &st, sized ? (size_t)pin.size :
			    SIZE_MAX - 1, data, len, e);
	}
	if (rc != DL_OK)
		return rc;
	/* A file that changed while it was read: more bytes, or fewer. */
	if (sized && (long long)*len != pin.size) {
		rc = size_error(path, (long long)*len, pin.size,
		    (long long)*len > pin.size, e);
		free(*data);
		*data = NULL;
		return rc;
	}
	/* The digest of these bytes, the ones the caller parses. */
	sha256_hex(*data, *len, sha);
	if (pinned && pin.sha[0] && strcmp(sha, pin.sha) != 0) {
		free(*data);
		*data = NULL;
		return digest_error(path, e);
	}
	remember(path, sha, (long long)*len);
	return DL_OK;
}

int
sha256_file(const char *path, long long want, char out[65],
    long long *size, struct dl_err *e)
{
	struct stat st, lst;
	struct pin pin;
	int fd = -1, rc, pinned = find_pin(path, &pin);

	if (strcmp(path, DL_STDIN_PATH) == 0) {
		char *data;
		size_t len;

		if ((rc = read_stdin(&data, &len, e)) != DL_OK)
			return rc;
		sha256_hex(data, len, out);
		free(data);
		*size = (long long)len;
		remember(path, out, *size);
		return DL_OK;
	}
	if ((rc = open_input(path, pinned ? &pin : NULL, &fd, &st, e)) !=
	    DL_OK)
		return rc;
	note_input(&st);
	if (lstat(path, &lst) == 0)
		note_input(&lst);
	if (pinned && pin.size >= 0 && S_ISREG(st.st_mode) &&
	    (long long)st.st_size != pin.size) {
		close(fd);
		return size_error(path, (long long)st.st_size, pin.size, 0, e);
	}
	if (want >= 0 && S_ISREG(st.st_mode) &&
	    (long long)st.st_size != want) {
		close(fd);
		out[0] = '\0';
		*size = (long long)st.st_size;
		return DL_OK;
	}
	rc = hash_fd(fd, path, out, size, e);
	close(fd);
	if (rc != DL_OK)
		return rc;
	if (pinned && pin.size >= 0 && *size != pin.size)
		return size_error(path, *size, pin.size, *size > pin.size, e);
	if (pinned && pin.sha[0] && strcmp(out, pin.sha) != 0)
		return digest_error(path, e);
	remember(path, out, *size);
	return DL_OK;
}
