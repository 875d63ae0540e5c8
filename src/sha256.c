/*
 * sha256.c - SHA-256 digests (see sha256.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdint.h>
#include <stdlib.h>

#include <nettle/sha2.h>

#include "sha256.h"
#include "util.h"

/*
 * SHA-256 of the input files recorded in plans: the digest decides whether
 * a plan's input is read, so it comes from Nettle, not from code of ours.
 */
struct dl_sha256 {
	struct sha256_ctx ctx;
};

struct dl_sha256 *
sha256_begin(void)
{
	struct dl_sha256 *c = xmalloc(sizeof(*c));

	sha256_init(&c->ctx);
	return c;
}

void
sha256_add(struct dl_sha256 *c, const void *data, size_t len)
{
	sha256_update(&c->ctx, len, data);
}

void
sha256_end(struct dl_sha256 *c, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_digest(&c->ctx, sizeof(d), d);
	free(c);
	for (size_t i = 0; i < sizeof(d); i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[64] = '\0';
}

void
sha256_hex(const void *data, size_t len, char out[65])
{
	struct dl_sha256 *c = sha256_begin();

	sha256_add(c, data, len);
	sha256_end(c, out);
}
