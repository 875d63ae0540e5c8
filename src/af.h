/*
 * af.h - atomic output files and output sets of them (af_*; mkdir_p()
 * notes the directories it makes in the set).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_AF_H
#define DL_AF_H

#include <stddef.h>
#include <stdio.h>

struct dl_err;

/*
 * Atomic output files (af.c): written to "PATH.tmp-XXXXXX" beside
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
 * Lock output directory dir (which must exist) for this run: the file
 * dir/.dlplan.lock, made under a temporary name, locked with flock() and
 * linked into place, so it appears only locked, and stays locked while
 * this run lives.  A second writer gets DL_ESYS naming the lock file.  A
 * lock file that no process holds (its run was killed, or an older
 * dlplan left it) is stale: it is taken over, and *stale set to 1 for the
 * caller to say so.  af_unlock_dir() and af_cleanup_all() (at exit and on
 * signals) remove it.  One lock per run; a second call is a no-op.
 */
#define AF_LOCK_NAME ".dlplan.lock"
int af_lock_dir(const char *dir, int *stale, struct dl_err *e);
void af_unlock_dir(void);

/*
 * Temporary files: every one dlplan makes is named "NAME.tmp-XXXXXX"
 * (mkstemp(3)'s six letters or digits; a backup of defer_rename(),
 * "NAME.old-XXXXXX") and is created by af_mkstemp(), which returns it
 * open and locked with flock(); the lock lasts until the file has left
 * its temporary name (renamed or removed), or until the set's directory
 * lock covers it (a file of an output set, closed until the set ends).
 * af_mkstemp() is mkstemp() on tmpl (ending in six characters, which it
 * replaces) plus that lock: -1 with errno on failure.
 */
int af_mkstemp(char *tmpl);
/* Is name (one path component) a temporary file's name (above)? */
int af_temp_name(const char *name);
/*
 * Remove from the directory dfd the temporary files (af_temp_name())
 * that no process holds locked: those of runs killed while writing
 * (SIGKILL, a crash).  A file whose writer lives is locked and stays;
 * so does anything not named like dlplan's temporary files, and anything
 * that is not a regular file.  Call it only while holding the lock of
 * the output directory that dfd lies in (af_lock_dir()): a file of an
 * output set is unlocked between its commit and the set's end.
 * Returns how many were removed.
 */
size_t af_sweep(int dfd);

/* Make directory path (and parents) if missing. */
int mkdir_p(const char *path, struct dl_err *e);

/*
 * Output sets: between af_defer_begin() and af_defer_end(), af_commit()
 * (and so af_write_file() and af_write_files()) writes and closes each
 * temporary file but neither syncs nor renames it (the set's files are
 * synced together, syncfs(), before the renames); the directories mkdir_p()
 * makes are noted too.  af_defer_end() with commit set renames them all,
 * with the signals held, and puts back the files already replaced when a
 * rename fails (DL_ESYS): all or none.  Without commit, or on failure, it
 * removes every temporary file and the directories made, as does a
 * signal (af_cleanup_all()).  Calls nest: the outermost end decides.
 * af_deferred() gives the paths of the files committed so far in the set
 * (valid until the next call).
 */
void af_defer_begin(void);
/* Sync the set's files written so far (the renames need them synced;
 * af_defer_end() does it when nobody did). */
int af_defer_sync(struct dl_err *e);
int af_defer_end(int commit, struct dl_err *e);
/*
 * tmps (may be NULL) gets their temporary files, in the same order: each
 * is its path with ".tmp-XXXXXX" appended, complete and synced.  A file
 * replaced is linked first to the backup named like its temporary file
 * with "tmp" turned into "old".
 */
size_t af_deferred(const char ***paths, const char ***tmps);

#endif
