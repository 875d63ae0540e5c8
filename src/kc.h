/*
 * kc.h - kcache, the hash map of the project (kc_*).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef DL_KC_H
#define DL_KC_H

#include <stddef.h>

/*
 * The hash map of the project, from byte strings to values: one kind of
 * value per map, either owned pointers or indices.  Zero-initialise it;
 * for pointers set vfree (called on every value by kc_free; NULL when the
 * map does not own them), then kc_put() keys that are not present yet
 * (the key is copied) and kc_find() them: NULL when absent.  For indices
 * (into an array the caller keeps) use kc_puti() and kc_findi() instead.
 * kc_free() releases everything and leaves an empty map.
 */
union kval {
	void *p;
	size_t i;
};

struct kcache {
	char **key;
	size_t *klen;
	unsigned long long *hash;
	union kval *val;
	size_t cap, n;
	void (*vfree)(void *);
};

void *kc_find(const struct kcache *kc, const char *k, size_t n);
void kc_put(struct kcache *kc, const char *k, size_t n, void *v);
/* kc_findi: 1 and the index in *i when k is present, else 0. */
int kc_findi(const struct kcache *kc, const char *k, size_t n, size_t *i);
void kc_puti(struct kcache *kc, const char *k, size_t n, size_t i);
void kc_free(struct kcache *kc);

#endif
