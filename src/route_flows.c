/*
 * route_flows.c - FLOWS.csv, the flows "dlplan route" prices
 * (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "csvin.h"
#include "kc.h"
#include "route.h"
#include "sb.h"

/* FLOWS.csv (dlplan-formats(5), flows.csv): flow,src,dst,mb; flow optional. */
static const struct csv_col flows_cols[] = {
	{ "flow", CSV_ID, 0, 0, 0, 0, 0, NULL },
	{ "src", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "dst", CSV_ID, 1, 0, 0, 0, 0, NULL },
	{ "mb", CSV_NUM, 1, 0, 1e12, 1, 0, "MB" },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL }
};
const struct csv_schema dl_flows_schema = { "flows.csv", flows_cols };

/* The first row (in file order) whose id an earlier row has, or -1;
 * one pass with a hash map, so many equal ids stay linear. */
static long
first_duplicate(const struct dl_flowset *fs, size_t *earlier)
{
	struct kcache seen = { 0 };
	long dup = -1;

	for (size_t i = 0; i < fs->n && dup < 0; i++) {
		const char *id = fs->flows[i].id;

		if (kc_findi(&seen, id, strlen(id), earlier))
			dup = (long)i;
		else
			kc_puti(&seen, id, strlen(id), i);
	}
	kc_free(&seen);
	return dup;
}

int
flows_load(struct dl_flowset *fs, const char *path,
    const struct dl_cluster *c, struct dl_err *e)
{
	struct csv_table t;
	size_t earlier = 0, cid, cend[2], cmb;
	long dup;
	int rc;

	memset(fs, 0, sizeof(*fs));
	if ((rc = csvin_read(path, &dl_flows_schema, &t, e)) != DL_OK)
		return rc;
	cid = csv_colidx(&t, "flow");
	cend[0] = csv_colidx(&t, "src");
	cend[1] = csv_colidx(&t, "dst");
	cmb = csv_colidx(&t, "mb");
	if (t.nrows == 0) {
		dl_seterr(e, DL_EDATA, path, t.header_line, 0, "no flows "
		    "(expected at least one row after the header)");
		csvin_free(&t);
		return DL_EDATA;
	}
	fs->path = xstrdup(path);
	fs->flows = xcalloc(t.nrows, sizeof(*fs->flows));
	for (size_t r = 0; r < t.nrows; r++) {
		struct dl_flowreq *f = &fs->flows[fs->n];
		int v[2];

		for (int k = 0; k < 2; k++) {
			v[k] = cluster_vertex(c, csv_str(&t, r, cend[k]));
			if (v[k] < 0) {
				rc = csv_cellerr(&t, r, cend[k], e, "unknown "
				    "vertex '%s' (not a node or a links.csv "
				    "endpoint)", csv_str(&t, r, cend[k]));
				goto fail;
			}
		}
		if (v[0] == v[1]) {
			rc = csv_cellerr(&t, r, cend[1], e, "flow from '%s' "
			    "to itself", csv_str(&t, r, cend[0]));
			goto fail;
		}
		if (csv_has(&t, r, cid)) {
			f->id = xstrdup(csv_str(&t, r, cid));
		} else {
			struct strbuf sb = STRBUF_INIT;

			/* Numbered from 1 in file order. */
			sb_addf(&sb, "%zu", r + 1);
			f->id = sb_detach(&sb);
		}
		f->src = v[0];
		f->dst = v[1];
		f->mb = csv_num(&t, r, cmb);
		f->line = t.line[r];
		fs->n++;
	}
	if ((dup = first_duplicate(fs, &earlier)) >= 0) {
		size_t r = (size_t)dup;

		if (csv_has(&t, r, cid))
			rc = csv_cellerr(&t, r, cid, e, "duplicate flow '%s' "
			    "(first on line %ld)", fs->flows[r].id,
			    fs->flows[earlier].line);
		else
			rc = dl_seterr(e, DL_EDATA, path, t.line[r], 0,
			    "flow without id numbered '%s' clashes with "
			    "line %ld", fs->flows[r].id,
			    fs->flows[earlier].line);
		goto fail;
	}
	csvin_free(&t);
	return DL_OK;
fail:
	csvin_free(&t);
	flows_free(fs);
	return rc;
}

void
flows_free(struct dl_flowset *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->flows[i].id);
	free(fs->flows);
	free(fs->path);
	memset(fs, 0, sizeof(*fs));
}
