/*
 * sha256.c - SHA-256 digests (see sha256.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>

#include <nettle/sha2.h>

#include "sha256.h"

/*
 * SHA-256 of the input files recorded in plans: the digest decides whether
 * a plan's input is read, so it comes from Nettle, not from code of ours.
 */
void
sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	struct sha256_ctx s;
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_init(&s);
	sha256_update(&s, len, data);
	sha256_digest(&s, sizeof(d), d);
	for (size_t i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}
