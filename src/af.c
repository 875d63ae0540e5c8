/*
 * af.c - atomic output files and output sets (see af.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifdef __linux__
#define _GNU_SOURCE	/* syncfs() */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af.h"
#include "sb.h"
#include "util.h"
#include "util_io.h"

/*
 * Temporary files and directories in flight, for the signal handlers:
 * af_cleanup_all() only reads these tables and calls unlink() and rmdir(),
 * so it stays async-signal-safe.  The file table grows (a schedule writes
 * a file per job); a grown table is published only once filled, and the
 * old ones stay reachable in af_old until exit.
 */
static char **volatile af_live;
static volatile size_t af_nlive;	/* slots in use: [0, af_nlive) */
static size_t af_cap;
static char **af_old[64];
static int af_nold;
/* Made by mkdir_p() in a set; grown like af_live, the old arrays kept. */
static char **volatile af_dirs;
static volatile int af_ndirs;
static int af_capdirs;

/* The output directory lock of this run (af_lock_dir()), or NULL. */
static char *af_lockfile;
static int af_lockfd = -1;	/* open and flock()ed while held */

/* Track tmp; the slot to untrack it with. */
static size_t
af_track(char *tmp)
{
	size_t slot = af_nlive;

	if (slot == af_cap && af_nold < 64) {
		size_t cap = af_cap ? 2 * af_cap : 256;
		char **t = xcalloc(cap, sizeof(*t));

		if (af_nlive)
			memcpy(t, af_live, af_nlive * sizeof(*t));
		if (af_live)
			af_old[af_nold++] = af_live;
		af_live = t;
		af_cap = cap;
	}
	if (slot == af_cap)
		return (size_t)-1;
	af_live[slot] = tmp;
	af_nlive = slot + 1;
	return slot;
}

static void
af_untrack(size_t slot)
{
	if (slot >= af_nlive)
		return;
	af_live[slot] = NULL;
	while (af_nlive > 0 && af_live[af_nlive - 1] == NULL)
		af_nlive--;
}

int
af_mkstemp(char *tmpl)
{
	size_t n = strlen(tmpl);

	for (int tries = 0; tries < 64; tries++) {
		struct stat st;
		int fd;

		memcpy(tmpl + n - 6, "XXXXXX", 6);
		if ((fd = mkstemp(tmpl)) < 0)
			return -1;
		/*
		 * A sweeper (af_sweep()) may have removed the file between
		 * its creation and the lock: then its name is gone (no link
		 * left), and a new one is made.  A file system without
		 * flock() leaves the file unlocked, and no sweeper can lock
		 * it either.
		 */
		if (flock(fd, LOCK_EX) != 0 || (fstat(fd, &st) == 0 &&
		    st.st_nlink > 0))
			return fd;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

int
af_temp_name(const char *name)
{
	size_t n = strlen(name);

	if (n < 12 || strchr(name, '/') != NULL ||
	    (strncmp(name + n - 11, ".tmp-", 5) != 0 &&
	    strncmp(name + n - 11, ".old-", 5) != 0))
		return 0;
	for (size_t i = n - 6; i < n; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return 0;
	return 1;
}

size_t
af_sweep(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t gone = 0;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat a, b;
		int tfd;

		if (!af_temp_name(de->d_name))
			continue;
		tfd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (tfd < 0)
			continue;
		/*
		 * Its writer holds the lock while the file exists under this
		 * name (af_mkstemp()); a file no one holds was left by a run
		 * that is gone.  Removed while locked, and only when the
		 * name still names the file locked.
		 */
		if (fstat(tfd, &a) == 0 && S_ISREG(a.st_mode) &&
		    flock(tfd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dfd, de->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
		    unlinkat(dfd, de->d_name, 0) == 0)
			gone++;
		close(tfd);
	}
	closedir(d);
	return gone;
}

void
af_cleanup_all(void)
{
	for (size_t i = 0; i < af_nlive; i++)
		if (af_live[i] != NULL)
			unlink(af_live[i]);
	for (int i = af_ndirs; i-- > 0;)
		rmdir(af_dirs[i]);
	if (af_lockfile != NULL)
		unlink(af_lockfile);
}

/*
 * Output sets (af_defer_begin()): the files committed while a set is open,
 * renamed into place when it ends.
 */
struct deferred {
	char *path, *tmp, *bak;
	size_t slot;
};
static struct deferred *af_dfr;
static size_t af_ndfr, af_capdfr;
static int af_ndefer;		/* depth of af_defer_begin() */
static int af_unsynced;		/* a deferred file is not synced yet */

/* Take over the closed temporary file of af (committed in a set). */
static void
defer_add(struct afile *af)
{
	struct deferred *d;

	if (af_ndfr == af_capdfr)
		af_dfr = xgrow(af_dfr, &af_capdfr, af_ndfr + 1,
		    sizeof(*af_dfr));
	d = &af_dfr[af_ndfr++];
	d->path = af->path;
	d->tmp = af->tmp;
	d->bak = NULL;
	d->slot = af->slot;
	af->path = af->tmp = NULL;
}

int
af_open(struct afile *af, const char *path, struct dl_err *e)
{
	size_t n = strlen(path);
	struct stat st;
	int fd = -1;

	af->fp = NULL;
	af->path = NULL;
	af->tmp = NULL;
	/* An output never destroys an input of the same run. */
	if (read_is_input(path))
		return dl_seterr(e, DL_EUSAGE, path, 0, 0, "is an input of "
		    "this run and would be overwritten (choose another "
		    "output)");
	af->path = xstrdup(path);
	/*
	 * A device, FIFO or socket at path (not a link to one) is written
	 * through: renaming a regular file over it would replace, say,
	 * /dev/null for everyone (as root), and a partial "file" does not
	 * apply to it.
	 */
	if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) ||
	    S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) ||
	    S_ISSOCK(st.st_mode))) {
		if ((fd = open(path, O_WRONLY | O_TRUNC)) < 0 ||
		    (af->fp = fdopen(fd, "w")) == NULL) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			free(af->path);
			af->path = NULL;
			return dl_seterr(e, DL_ESYS, path, 0, 0,
			    "cannot open file: %s", strerror(err));
		}
		return DL_OK;
	}
	af->tmp = xmalloc(n + 16);
	snprintf(af->tmp, n + 16, "%s.tmp-XXXXXX", path);
	/* No signal between creating the file and tracking it. */
	af_hold_signals(1);
	fd = af_mkstemp(af->tmp);
	if (fd >= 0)
		af->slot = af_track(af->tmp);
	af_hold_signals(0);
	if (fd < 0) {
		dl_seterr(e, DL_ESYS, path, 0, 0, "cannot create file: %s",
		    strerror(errno));
		free(af->path);
		free(af->tmp);
		af->path = af->tmp = NULL;
		return DL_ESYS;
	}
	/* mkstemp makes 0600; output files are ordinary files. */
	{
		mode_t um = umask(0);

		umask(um);
		fchmod(fd, 0666 & ~um);
	}
	af->fp = fdopen(fd, "w");
	if (af->fp == NULL) {
		close(fd);
		af_abort(af);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot open file: %s",
		    strerror(errno));
	}
	return DL_OK;
}

int
af_commit(struct afile *af, struct dl_err *e)
{
	int bad = 0, err = 0, lk = -1;

	if (fflush(af->fp) != 0 || ferror(af->fp)) {
		bad = 1;
		err = errno;
	}
	/* A set's files are synced together before its renames. */
	if (!bad && !(af->tmp && af_ndefer > 0) && fsync(fileno(af->fp)) !=
	    0 && errno != EINVAL && errno != EROFS) {
		bad = 1;
		err = errno;
	}
	/*
	 * A file renamed now stays locked (af_mkstemp()) until it no
	 * longer has its temporary name: a sweeper never takes it for one
	 * left by a dead run.
	 */
	if (!bad && af->tmp && af_ndefer == 0)
		lk = dup(fileno(af->fp));
	if (fclose(af->fp) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	af->fp = NULL;
	if (!bad && af->tmp && af_ndefer > 0) {
		af_unsynced = 1;
		defer_add(af);
		return DL_OK;
	}
	if (!bad && af->tmp && rename(af->tmp, af->path) != 0) {
		bad = 1;
		err = errno;
	}
	if (lk >= 0)
		close(lk);
	if (bad) {
		dl_seterr(e, DL_ESYS, af->path, 0, 0, "cannot write file: %s",
		    strerror(err ? err : EIO));
		af_abort(af);
		return DL_ESYS;
	}
	if (af->tmp)
		af_untrack(af->slot);
	free(af->path);
	free(af->tmp);
	af->path = af->tmp = NULL;
	return DL_OK;
}

void
af_abort(struct afile *af)
{
	if (af->fp)
		fclose(af->fp);
	af->fp = NULL;
	if (af->tmp) {
		unlink(af->tmp);
		af_untrack(af->slot);
	}
	free(af->path);
	free(af->tmp);
	af->path = af->tmp = NULL;
}

void
af_hold_signals(int on)
{
	static sigset_t old;
	static int depth;
	sigset_t set;

	if (on) {
		if (depth++ > 0)
			return;
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigaddset(&set, SIGHUP);
		sigprocmask(SIG_BLOCK, &set, &old);
	} else if (depth > 0 && --depth == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
}


/*
 * A new lock file beside path, locked with flock() and linked to path
 * (EEXIST when path exists): a lock file is never visible unlocked while
 * its holder lives.  The descriptor stays open, and so locked, until
 * the run ends.  -1 with errno set on failure.
 */
static int
lock_create(const char *path, int replace)
{
	size_t n = strlen(path);
	char *tmp = xmalloc(n + 16);
	int fd, err = 0;

	snprintf(tmp, n + 16, "%s.tmp-XXXXXX", path);
	if ((fd = af_mkstemp(tmp)) < 0) {	/* locked */
		free(tmp);
		return -1;
	}
	fchmod(fd, 0644);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if ((replace ? rename(tmp, path) : link(tmp, path)) != 0)
		err = errno;
	if (!replace || err)
		unlink(tmp);
	free(tmp);
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * The lock file at path exists: 1 when it is stale (its holder is gone,
 * or it is the empty file of an older dlplan, which no one holds) and
 * this run took it over, 0 when a live dlplan holds it, -1 with errno on
 * failure.  Taking over holds the stale file's lock while checking that
 * the name still names it, so two runs never both take one over.
 */
static int
lock_takeover(const char *path, int *fdp)
{
	struct stat a, b;
	int old = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), fd;

	if (old < 0)
		return errno == ENOENT ? 2 : -1;	/* gone: try again */
	if (flock(old, LOCK_EX | LOCK_NB) != 0) {
		int err = errno;

		close(old);
		if (err == EWOULDBLOCK)
			return 0;
		errno = err;
		return -1;
	}
	if (fstat(old, &a) != 0 || lstat(path, &b) != 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(old);
		return 2;	/* replaced meanwhile: try again */
	}
	fd = lock_create(path, 1);
	close(old);
	if (fd < 0)
		return -1;
	*fdp = fd;
	return 1;
}

int
af_lock_dir(const char *dir, int *stale, struct dl_err *e)
{
	struct strbuf sb = STRBUF_INIT;
	int fd = -1, r = 2, err = 0;

	*stale = 0;
	if (af_lockfile != NULL)
		return DL_OK;
	sb_addf(&sb, "%s/" AF_LOCK_NAME, dir);
	/*
	 * A signal delivered as the lock appears would find af_lockfile
	 * not yet set, and the lock would outlive the run: held until the
	 * name is recorded, it is delivered then and af_cleanup_all()
	 * removes the lock.
	 */
	af_hold_signals(1);
	for (int tries = 0; r == 2 && tries < 16; tries++) {
		if ((fd = lock_create(sb.buf, 0)) >= 0)
			r = 1;
		else if (errno != EEXIST)
			r = -1;
		else if ((r = lock_takeover(sb.buf, &fd)) == 1)
			*stale = 1;
		err = errno;
	}
	if (r != 1) {
		af_hold_signals(0);
		if (r == 0 || r == 2)
			dl_seterr(e, DL_ESYS, sb.buf, 0, 0, "another dlplan is "
			    "writing to '%s'", dir);
		else
			dl_seterr(e, DL_ESYS, sb.buf, 0, 0, "cannot create "
			    "lock file: %s", strerror(err));
		sb_free(&sb);
		return DL_ESYS;
	}
	af_lockfd = fd;
	af_lockfile = sb_detach(&sb);
	af_hold_signals(0);
	return DL_OK;
}

void
af_unlock_dir(void)
{
	/* A signal's cleanup must not read the name once it is freed. */
	af_hold_signals(1);
	if (af_lockfile != NULL) {
		/* Removed while still locked: see lock_takeover(). */
		unlink(af_lockfile);
		free(af_lockfile);
		af_lockfile = NULL;
		close(af_lockfd);
		af_lockfd = -1;
	}
	af_hold_signals(0);
}

int
af_write_files(size_t n, const char *const *paths, const char *const *data,
    const size_t *lens, struct dl_err *e)
{
	int rc = DL_OK;

	/* rename() fails on a directory: refuse before anything is
	 * written, not after the first files were replaced. */
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode))
			return dl_seterr(e, DL_ESYS, paths[i], 0, 0,
			    "cannot write file: %s", strerror(EISDIR));
	}
	/*
	 * Every temporary file complete, on disk and closed first (one
	 * descriptor at a time, however many files), then the renames.
	 */
	af_defer_begin();
	for (size_t i = 0; i < n && rc == DL_OK; i++)
		rc = af_write_file(paths[i], data[i], lens[i], e);
	return af_defer_end(rc == DL_OK, e) == DL_OK ? rc : DL_ESYS;
}

int
af_write_file(const char *path, const char *data, size_t len,
    struct dl_err *e)
{
	struct afile af;
	int rc;

	if ((rc = af_open(&af, path, e)) != DL_OK)
		return rc;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		int err = errno;

		af_abort(&af);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot write file: %s",
		    strerror(err ? err : EIO));
	}
	return af_commit(&af, e);
}

void
af_defer_begin(void)
{
	af_ndefer++;
}

/* Drop every deferred file and the directories made for the set. */
static void
defer_drop(void)
{
	for (size_t i = 0; i < af_ndfr; i++) {
		struct deferred *d = &af_dfr[i];

		if (d->tmp)
			unlink(d->tmp);
		if (d->bak)
			unlink(d->bak);
		af_untrack(d->slot);
		free(d->path);
		free(d->tmp);
		free(d->bak);
	}
	af_ndfr = 0;
	while (af_ndirs > 0) {
		af_ndirs--;
		rmdir(af_dirs[af_ndirs]);
		free(af_dirs[af_ndirs]);
	}
}

/*
 * Rename every deferred file into place.  A file replaced is first linked
 * to a backup beside it, so that a failing rename() can put back those
 * already renamed: the set replaces all of its files or none.
 */
static int
defer_rename(struct dl_err *e)
{
	size_t i, k;
	int err;

	for (i = 0; i < af_ndfr; i++) {
		struct deferred *d = &af_dfr[i];
		size_t n = strlen(d->tmp);

		d->bak = xstrdup(d->tmp);
		memcpy(d->bak + n - 10, "old", 3);	/* .tmp-XXXXXX */
		if (link(d->path, d->bak) != 0) {
			free(d->bak);
			d->bak = NULL;
		}
	}
	for (i = 0; i < af_ndfr; i++)
		if (rename(af_dfr[i].tmp, af_dfr[i].path) != 0)
			break;
	if (i == af_ndfr) {
		for (k = 0; k < af_ndfr; k++) {
			free(af_dfr[k].tmp);
			af_dfr[k].tmp = NULL;
		}
		return DL_OK;
	}
	err = errno;
	dl_seterr(e, DL_ESYS, af_dfr[i].path, 0, 0, "cannot write file: %s",
	    strerror(err));
	for (k = 0; k < i; k++) {
		struct deferred *d = &af_dfr[k];

		if (d->bak != NULL && rename(d->bak, d->path) == 0) {
			free(d->bak);
			d->bak = NULL;
		} else if (d->bak == NULL) {
			unlink(d->path);
		}
		free(d->tmp);
		d->tmp = NULL;
	}
	return DL_ESYS;
}

/*
 * Sync the set's files, written but not synced by af_commit(), with one
 * call (once; af_defer_end() calls it before renaming): one fsync() each cost more than writing them when a set holds
 * many (a schedule's plans).  syncfs() the file system of the first (on
 * Linux; elsewhere sync(), which waits there too).
 */
int
af_defer_sync(struct dl_err *e)
{
	int fd, rc = 0;

	if (af_ndfr == 0 || !af_unsynced)
		return DL_OK;
	if ((fd = open(af_dfr[0].tmp, O_RDONLY)) < 0)
		return dl_seterr(e, DL_ESYS, af_dfr[0].path, 0, 0, "cannot "
		    "sync file: %s", strerror(errno));
#ifdef __linux__
	rc = syncfs(fd);
#else
	sync();
#endif
	if (rc != 0) {
		int err = errno;

		close(fd);
		return dl_seterr(e, DL_ESYS, af_dfr[0].path, 0, 0, "cannot "
		    "sync file: %s", strerror(err));
	}
	close(fd);
	af_unsynced = 0;
	return DL_OK;
}

int
af_defer_end(int commit, struct dl_err *e)
{
	int rc = DL_OK;

	if (af_ndefer == 0 || --af_ndefer > 0)
		return DL_OK;
	if (commit) {
		af_hold_signals(1);
		rc = af_defer_sync(e);
		if (rc == DL_OK)
			rc = defer_rename(e);
		if (rc == DL_OK)
			for (int i = 0; i < af_ndirs; i++)
				free(af_dirs[i]);
		if (rc == DL_OK)
			af_ndirs = 0;	/* the set's now */
		defer_drop();
		af_hold_signals(0);
	} else {
		defer_drop();
	}
	return rc;
}

size_t
af_deferred(const char ***paths, const char ***tmps)
{
	static const char **p, **t;
	static size_t cap, capt;

	if (af_ndfr + 1 > cap)
		p = xgrow(p, &cap, af_ndfr + 1, sizeof(*p));
	if (af_ndfr + 1 > capt)
		t = xgrow(t, &capt, af_ndfr + 1, sizeof(*t));
	for (size_t i = 0; i < af_ndfr; i++) {
		p[i] = af_dfr[i].path;
		t[i] = af_dfr[i].tmp;
	}
	*paths = p;
	if (tmps != NULL)
		*tmps = t;
	return af_ndfr;
}

int
mkdir_p(const char *path, struct dl_err *e)
{
	char *p = xstrdup(path);
	struct stat st;
	int made, err;

	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;

		*s = '\0';
		/* No signal between making a directory and noting it. */
		af_hold_signals(1);
		made = mkdir(p, 0777) == 0;
		err = errno;
		if (made && af_ndefer > 0) {
			if (af_ndirs == af_capdirs) {
				int cap = af_capdirs ? 2 * af_capdirs : 64;
				char **t = xcalloc((size_t)cap, sizeof(*t));

				/* The signal handlers may read the old
				 * array: it is never freed. */
				if (af_ndirs)
					memcpy(t, af_dirs, (size_t)af_ndirs *
					    sizeof(*t));
				af_dirs = t;
				af_capdirs = cap;
			}
			af_dirs[af_ndirs] = xstrdup(p);
			af_ndirs++;
		}
		af_hold_signals(0);
		if (!made && err != EEXIST) {
			dl_seterr(e, DL_ESYS, p, 0, 0,
			    "cannot create directory: %s", strerror(err));
			free(p);
			return DL_ESYS;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(p);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "not a directory");
	}
	free(p);
	return DL_OK;
}
