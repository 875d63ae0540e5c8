/*
 * util_af.h - output sets of atomic files (util_af.c; the atomic files
 * themselves are declared in util.h, which every file includes).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_UTIL_AF_H
#define DL_UTIL_AF_H

#include <stddef.h>

struct dl_err;

/*
 * Output sets: between af_defer_begin() and af_defer_end(), af_commit()
 * (and so af_write_file() and af_write_files()) writes, syncs and closes
 * each temporary file but does not rename it; the directories mkdir_p()
 * makes are noted too.  af_defer_end() with commit set renames them all,
 * with the signals held, and puts back the files already replaced when a
 * rename fails (DL_ESYS): all or none.  Without commit, or on failure, it
 * removes every temporary file and the directories made, as does a
 * signal (af_cleanup_all()).  Calls nest: the outermost end decides.
 * af_deferred() gives the paths of the files committed so far in the set
 * (valid until the next call).
 */
void af_defer_begin(void);
int af_defer_end(int commit, struct dl_err *e);
size_t af_deferred(const char ***paths);

#endif
