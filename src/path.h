/*
 * path.h - path names made absolute and cut to their directory (path_*).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_PATH_H
#define DL_PATH_H

struct dl_err;

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

#endif
