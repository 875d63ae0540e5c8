/*
 * fixture.h - build small clusters and models on disk for unit tests.
 *
 *	struct fixture f;
 *	fx_begin(&f);                        a fresh temporary directory
 *	fx_file(&f, "nodes.csv", "node,site,...\n...");
 *	fx_load(&f, &cluster, &model);       loads f.dir and f.dir/model.csv
 *	fx_end(&f);                          removes the directory
 *
 * A tiny deterministic generator (xorshift) gives reproducible random
 * instances: fx_seed(&f, 42); fx_rand(&f) in [0, 1).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "model.h"

struct fixture {
	char dir[256];
	uint64_t rng;
};

static void __attribute__((unused))
fx_begin(struct fixture *f)
{
	snprintf(f->dir, sizeof(f->dir), "%s/dlplan-unit.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(f->dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	f->rng = 88172645463325252ULL;
}

static void __attribute__((unused))
fx_file(const struct fixture *f, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

static void __attribute__((unused))
fx_rm(const struct fixture *f, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	unlink(path);
}

static int __attribute__((unused))
fx_load(const struct fixture *f, struct dl_cluster *c, struct dl_model *m)
{
	struct dl_cluster_paths p = { f->dir, NULL, NULL, NULL, NULL };
	struct dl_err e = { 0 };
	char path[512];

	if (cluster_load(c, &p, &e) != DL_OK) {
		dl_perr(&e);
		return -1;
	}
	if (m == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/model.csv", f->dir);
	if (model_load(m, path, &e) != DL_OK) {
		dl_perr(&e);
		cluster_free(c);
		return -1;
	}
	return 0;
}

static void __attribute__((unused))
fx_end(const struct fixture *f)
{
	const char *names[] = { "nodes.csv", "links.csv", "load.csv",
	    "traffic.csv", "model.csv" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fx_rm(f, names[i]);
	rmdir(f->dir);
}

static void __attribute__((unused))
fx_seed(struct fixture *f, uint64_t s)
{
	f->rng = s * 2654435761ULL + 88172645463325252ULL;
}

static double __attribute__((unused))
fx_rand(struct fixture *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return (double)(f->rng >> 11) / 9007199254740992.0;
}

/* An integer in [lo, hi]. */
static int __attribute__((unused))
fx_int(struct fixture *f, int lo, int hi)
{
	return lo + (int)(fx_rand(f) * (hi - lo + 1));
}

#endif
