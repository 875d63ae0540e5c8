/*
 * cmdutil.c - pieces shared by the cmd_*.c files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Whether file, an input path of the plan plan (resolved against the
 * plan's directory), lies inside the plan's directory tree once both are
 * made absolute by realpath(), so that neither '..' nor a symbolic link
 * leads out.  A file that does not exist passes: opening it fails later
 * and reads nothing.
 */
static int
inside_plan_dir(const char *plan, const char *file)
{
	char *dir = path_dir(plan), *rd, *rf;
	int in = 0;
	size_t n;

	rd = realpath(dir, NULL);
	rf = realpath(file, NULL);
	if (rf == NULL && errno == ENOENT)
		in = 1;
	else if (rd != NULL && rf != NULL) {
		n = strlen(rd);
		in = strcmp(rd, "/") == 0 || (strncmp(rf, rd, n) == 0 &&
		    rf[n] == '/');
	}
	free(dir);
	free(rd);
	free(rf);
	return in;
}

/*
 * The inputs of plan in that the command line does not replace must lie
 * in the plan's directory tree unless trusted: a plan from elsewhere must
 * not make dlplan open any file it names.
 */
static int
confine_inputs(const char *path, const struct dl_plan *in,
    const struct dl_cluster_paths *user, const char *model, int trust,
    struct dl_err *e)
{
	for (size_t i = 0; i < in->ninputs && !trust; i++) {
		const char *k = in->inputs[i].kind;
		int used;

		if (strcmp(k, "model") == 0)
			used = model == NULL;
		else
			used = user->dir == NULL && !(strcmp(k, "nodes") == 0 ?
			    user->nodes : strcmp(k, "links") == 0 ? user->links
			    : strcmp(k, "load") == 0 ? user->load :
			    user->traffic);
		if (used && !inside_plan_dir(path, in->inputs[i].path))
			return dl_seterr(e, DL_EDATA, path, 0, 0, "inputs[%zu]."
			    "path: '%s' lies outside the plan's directory (give "
			    "the %s with %s, or --trust-paths to allow it)", i,
			    in->inputs[i].path, strcmp(k, "model") == 0 ?
			    "model" : "cluster", strcmp(k, "model") == 0 ?
			    "-m FILE" : "-c DIR");
	}
	return DL_OK;
}

int
cmd_load_plan(const char *path, const struct dl_cluster_paths *user,
    const char *model, int check_digests, int trust, struct dl_plan *p,
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
	if ((rc = confine_inputs(path, &in, user, model, trust, e)) !=
	    DL_OK) {
		plan_free(&in);
		return rc;
	}
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
