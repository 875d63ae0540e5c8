/*
 * cmdutil.c - pieces shared by the cmd_*.c files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "cmdutil.h"

int
cmd_cluster_opt(int id, const char *arg, struct dl_cluster_paths *p)
{
	switch (id) {
	case OPT_CLUSTER:
		p->dir = arg;
		return 1;
	case OPT_NODES:
		p->nodes = arg;
		return 1;
	case OPT_LINKS:
		p->links = arg;
		return 1;
	case OPT_LOAD:
		p->load = arg;
		return 1;
	case OPT_TRAFFIC:
		p->traffic = arg;
		return 1;
	}
	return 0;
}

json_t *
cmd_json_real(double v)
{
	return jreal(v);
}

int
cmd_print_json(json_t *v)
{
	int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));

	if (rc != 0 || putchar('\n') == EOF)
		return DL_ESYS;
	return DL_OK;
}

int
cmd_load_plan(const char *path, const struct dl_cluster_paths *user,
    const char *model, int check_digests, struct dl_plan *p,
    struct dl_cluster *c, struct dl_model *m, const char **missing,
    struct dl_err *e)
{
	struct dl_cluster_paths cp = { 0 };
	struct dl_plan in;
	int rc;

	if (missing)
		*missing = NULL;
	if ((rc = plan_read_inputs(&in, path, e)) != DL_OK)
		return rc;
	if (user->dir == NULL) {
		cp.nodes = plan_input_path(&in, "nodes");
		cp.links = plan_input_path(&in, "links");
		cp.load = plan_input_path(&in, "load");
		cp.traffic = plan_input_path(&in, "traffic");
	} else {
		cp.dir = user->dir;
	}
	if (user->nodes)
		cp.nodes = user->nodes;
	if (user->links)
		cp.links = user->links;
	if (user->load)
		cp.load = user->load;
	if (user->traffic)
		cp.traffic = user->traffic;
	if (model == NULL)
		model = plan_input_path(&in, "model");
	if (cp.dir == NULL && cp.nodes == NULL) {
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "plan names no "
		    "nodes.csv (give the cluster with -c DIR)");
		if (missing)
			*missing = "nodes";
	} else if (model == NULL) {
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "plan names no "
		    "model.csv (give it with -m FILE)");
		if (missing)
			*missing = "model";
	} else if ((rc = cluster_load(c, &cp, e)) == DL_OK &&
	    (rc = model_load(m, model, e)) != DL_OK) {
		cluster_free(c);
	}
	plan_free(&in);
	if (rc != DL_OK)
		return rc;
	if ((rc = plan_read_json(p, path, c, m, check_digests, e)) != DL_OK) {
		model_free(m);
		cluster_free(c);
		return rc;
	}
	cmd_warn_inputs(c, m);
	return rc;
}

size_t
cmd_warn_inputs(const struct dl_cluster *c, const struct dl_model *m)
{
	const struct dl_notes *w[2] = { c ? &c->warnings : NULL,
	    m ? &m->warnings : NULL };
	size_t n = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; w[k] != NULL && i < w[k]->n; i++, n++)
			if (dl_verbose >= 0)
				dl_warn("warning: %s", w[k]->msg[i]);
	return n;
}

int
cmd_write_plan(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *outdir, struct dl_err *e)
{
	struct strbuf j = STRBUF_INIT, v = STRBUF_INIT;
	const char *jpath;
	int rc;

	if ((rc = mkdir_p(outdir, e)) != DL_OK)
		return rc;
	sb_addf(&j, "%s/plan.json", outdir);
	sb_addf(&v, "%s/plan.csv", outdir);
	jpath = j.buf;
	rc = plan_write_files(1, &p, &jpath, p, v.buf, c, m, e);
	sb_free(&j);
	sb_free(&v);
	return rc;
}

int
cmd_lock_outdir(const char *outdir, struct dl_err *e)
{
	int rc;

	if ((rc = mkdir_p(outdir, e)) != DL_OK)
		return rc;
	return af_lock_dir(outdir, e);
}

int
cmd_fail(const struct dl_err *e)
{
	dl_perr(e);
	return e->code ? e->code : DL_ESYS;
}
