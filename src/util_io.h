/*
 * util_io.h - reading input files whole.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every input file of dlplan (CSV, plan.json, histories) is read here, so
 * one set of rules holds for all of them:
 *   - a regular file is read whole; so is standard input when the path
 *     names it (/dev/stdin, /proc/self/fd/0): the caller's pipe;
 *   - any other file that is not a directory (a FIFO, a socket, a
 *     character or block device such as /dev/zero) is refused with
 *     DL_EDATA before a byte is read, so a FIFO without a writer cannot
 *     block dlplan and a device cannot feed it forever;
 *   - reading stops at the first NUL byte (text files hold none), with
 *     DL_EDATA at FILE:LINE:COLUMN of that byte, so a huge sparse file is
 *     not read whole first;
 *   - a file that does not exist is DL_EDATA (the input named is wrong),
 *     one that exists but cannot be read is DL_ESYS;
 *   - the path "-" (DL_STDIN_PATH) is standard input, whatever it is (a
 *     pipe, a file, a terminal).  It is read once per run, on the first
 *     call; every later call gets a copy of the same bytes (or the same
 *     error), so a digest taken after parsing matches what was parsed.
 *     Errors name it "-", which dl_perr() prints as "<stdin>";
 *   - a directory is DL_EDATA ("is a directory").
 *
 * The inputs a plan names are read under pins (read_pin()) set by the
 * command before loading them: read_file() opens a pinned path once and
 *   - with a size, refuses a regular file of another size (DL_EDATA,
 *     naming both sizes) before a byte is read, and reads no more than
 *     one byte past that size (a file that grows meanwhile);
 *   - with a digest, refuses the bytes read (DL_EDATA, without parsing
 *     or quoting them) unless their SHA-256 is that digest; without a
 *     size (a plan of an older dlplan) the digest is checked first,
 *     through a fixed buffer, before the file is held;
 *   - with a root directory, opens it as rel below root and refuses it
 *     (DL_EDATA, "leads outside the plan's directory") when resolving rel
 *     leaves root by '..', an absolute path or a symbolic link.  The
 *     kernel decides at the moment of opening (openat2() RESOLVE_BENEATH,
 *     else one component at a time without following links), so a
 *     directory swapped for a link after any check cannot lead out.
 * Every file read_file() reads leaves the SHA-256 of its bytes, the ones
 * the caller parses, for read_digest(): a plan records the digest of what
 * was parsed, never of a second read by name.
 */
#ifndef DL_UTIL_IO_H
#define DL_UTIL_IO_H

#include <stddef.h>

struct dl_err;

/* The path that names standard input (and, for outputs, standard output). */
#define DL_STDIN_PATH "-"

/* Read a whole file into a NUL-terminated buffer (rules above). */
int read_file(const char *path, char **data, size_t *len, struct dl_err *e);
/*
 * SHA-256 of a file as 64 hex digits in out[65] and its size in bytes
 * in *size, under read_file()'s rules and pins but read through a fixed
 * buffer, never held whole.  With want >= 0, a regular file of another
 * size is not read: out gets "" and *size its size.
 */
int sha256_file(const char *path, long long want, char out[65],
    long long *size, struct dl_err *e);
/*
 * Pin path (the string later given to read_file()): sha256 (NULL or ""
 * for none) is the digest its bytes must have, size (-1 for none) their
 * number; root (NULL for none) the directory it must be opened below,
 * as rel.  Pins last until read_unpin(), which drops them all.
 */
void read_pin(const char *path, const char *sha256, long long size,
    const char *root, const char *rel);
void read_unpin(void);
/*
 * The digest of the bytes the last read_file() (or sha256_file()) of
 * path returned, into out[65], and their number into *size (when not
 * NULL): 1, or 0 when path was not read.
 */
int read_digest(const char *path, char out[65], long long *size);
/*
 * 1 when path (not followed when it is a symbolic link) is a regular
 * file that read_file() read in this run, by name or through a link, or
 * that standard input was; else 0.  The output files (af_open()) and
 * output sets (cmd_set_end()) never replace or remove an input.
 */
int read_is_input(const char *path);

#endif
