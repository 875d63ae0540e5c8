/*
 * kc.c - the hash map (see kc.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "kc.h"
#include "util.h"

static unsigned long long
kc_hash(const char *k, size_t n)
{
	unsigned long long h = 1469598103934665603ULL;
	size_t i = 0;

	/* FNV-1a over 8-byte words, then the tail byte by byte. */
	for (; i + 8 <= n; i += 8) {
		unsigned long long w;

		memcpy(&w, k + i, 8);
		h = (h ^ w) * 1099511628211ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
	return h ^ (h >> 32);
}

/* The slot of key k (hash h): where it is, or the empty slot to put it. */
static size_t
kc_slot(const struct kcache *kc, const char *k, size_t n,
    unsigned long long h)
{
	size_t i;

	for (i = h & (kc->cap - 1); kc->key[i]; i = (i + 1) & (kc->cap - 1))
		if (kc->hash[i] == h && kc->klen[i] == n &&
		    memcmp(kc->key[i], k, n) == 0)
			break;
	return i;
}

/* The value of k, or NULL when k is absent. */
static const union kval *
kc_lookup(const struct kcache *kc, const char *k, size_t n)
{
	size_t i;

	if (kc->cap == 0)
		return NULL;
	i = kc_slot(kc, k, n, kc_hash(k, n));
	return kc->key[i] ? &kc->val[i] : NULL;
}

void *
kc_find(const struct kcache *kc, const char *k, size_t n)
{
	const union kval *v = kc_lookup(kc, k, n);

	return v ? v->p : NULL;
}

int
kc_findi(const struct kcache *kc, const char *k, size_t n, size_t *i)
{
	const union kval *v = kc_lookup(kc, k, n);

	if (v == NULL)
		return 0;
	*i = v->i;
	return 1;
}

/* Insert k (not present yet) with value v, growing at half full. */
static void
kc_insert(struct kcache *kc, const char *k, size_t n, union kval v)
{
	unsigned long long h;
	size_t i;

	if (2 * (kc->n + 1) > kc->cap) {
		struct kcache o = *kc;

		kc->cap = o.cap ? 2 * o.cap : 256;
		kc->key = xcalloc(kc->cap, sizeof(char *));
		kc->klen = xcalloc(kc->cap, sizeof(size_t));
		kc->hash = xcalloc(kc->cap, sizeof(*kc->hash));
		kc->val = xcalloc(kc->cap, sizeof(*kc->val));
		for (size_t j = 0; j < o.cap; j++) {
			if (o.key[j] == NULL)
				continue;
			for (i = o.hash[j] & (kc->cap - 1); kc->key[i];
			    i = (i + 1) & (kc->cap - 1))
				;
			kc->key[i] = o.key[j];
			kc->klen[i] = o.klen[j];
			kc->hash[i] = o.hash[j];
			kc->val[i] = o.val[j];
		}
		free(o.key);
		free(o.klen);
		free(o.hash);
		free(o.val);
	}
	h = kc_hash(k, n);
	i = kc_slot(kc, k, n, h);
	kc->hash[i] = h;
	kc->key[i] = xmemdup(k, n, 1);
	kc->klen[i] = n;
	kc->val[i] = v;
	kc->n++;
}

void
kc_put(struct kcache *kc, const char *k, size_t n, void *v)
{
	union kval x;

	x.p = v;
	kc_insert(kc, k, n, x);
}

void
kc_puti(struct kcache *kc, const char *k, size_t n, size_t i)
{
	union kval x;

	x.i = i;
	kc_insert(kc, k, n, x);
}

void
kc_free(struct kcache *kc)
{
	for (size_t i = 0; i < kc->cap; i++)
		if (kc->key[i]) {
			free(kc->key[i]);
			if (kc->vfree)
				kc->vfree(kc->val[i].p);
		}
	free(kc->key);
	free(kc->klen);
	free(kc->hash);
	free(kc->val);
	kc->key = NULL;
	kc->klen = NULL;
	kc->hash = NULL;
	kc->val = NULL;
	kc->cap = kc->n = 0;
}
