/*
 * sha256.h - SHA-256 digests as hex (sha256_*; of a file: util_io.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_SHA256_H
#define DL_SHA256_H

#include <stddef.h>

/* SHA-256 of a buffer as 64 hex digits in out[65]. */
void sha256_hex(const void *data, size_t len, char out[65]);

/*
 * SHA-256 of bytes given in pieces: sha256_begin() makes a context,
 * sha256_add() takes each piece in order, sha256_end() writes the 64 hex
 * digits into out[65] and frees the context.  The context is opaque, so
 * that no other file includes Nettle.
 */
struct dl_sha256;
struct dl_sha256 *sha256_begin(void);
void sha256_add(struct dl_sha256 *c, const void *data, size_t len);
void sha256_end(struct dl_sha256 *c, char out[65]);

#endif
