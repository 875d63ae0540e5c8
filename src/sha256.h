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

#endif
