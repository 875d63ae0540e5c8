/*
 * cmd_check.c - "dlplan check": validate a cluster (and a model) and
 * summarise it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "model.h"
#include "route.h"

enum { O_MODEL = 1, O_FORMAT };

static const struct optspec check_opts[] = {
	DL_OPT_CLUSTER,
	{ "format", 0, O_FORMAT, "FMT", "table|json", "output format" },
	{ "model", 'm', O_MODEL, "FILE", "csv", "model.csv to check too" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_check(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_check = {
	"check", cmd_check,
	"-c DIR [-m MODEL.csv] [--format table|json] [cluster options]",
	"validate a cluster and a model and summarise them",
	check_opts, 0
};

/* GPU models in order of first appearance, with their GPU counts. */
struct gpukind {
	const char *model;
	long gpus;
	double tflops, mem_gb;
};

static size_t
gpu_kinds(const struct dl_cluster *c, struct gpukind *k)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nnodes; i++) {
		const struct dl_node *nd = &c->nodes[i];
		size_t j;

		for (j = 0; j < n; j++)
			if (strcmp(k[j].model, nd->gpu_model) == 0)
				break;
		if (j == n) {
			k[n].model = nd->gpu_model;
			k[n].gpus = 0;
			k[n].tflops = k[n].mem_gb = 0;
			n++;
		}
		k[j].gpus += nd->gpus;
		k[j].tflops += nd->gpus * nd->tflops;
		k[j].mem_gb += nd->gpus * nd->mem_gb;
	}
	return n;
}

/* Length of the longest history and number of series that have one. */
static void
history_len(const struct dl_series *s, size_t n, size_t *longest,
    size_t *with)
{
	*longest = *with = 0;
	for (size_t i = 0; s && i < n; i++) {
		if (s[i].n > *longest)
			*longest = s[i].n;
		*with += s[i].n > 0;
	}
}

static double
mem_total(const struct dl_cluster *c)
{
	double m = 0;

	for (size_t i = 0; i < c->nnodes; i++)
		m += c->nodes[i].gpus * c->nodes[i].mem_gb;
	return m;
}

/* The implausible values noted while loading, as a JSON array. */
static json_t *
warnings_json(const struct dl_cluster *c, const struct dl_model *m)
{
	json_t *w = json_array();

	for (size_t i = 0; i < c->warnings.n; i++)
		json_array_append_new(w, json_string(c->warnings.msg[i]));
	for (size_t i = 0; m != NULL && i < m->warnings.n; i++)
		json_array_append_new(w, json_string(m->warnings.msg[i]));
	return w;
}

static int
print_json(const struct dl_cluster *c, const struct dl_model *m,
    const struct gpukind *k, size_t nk, int diam)
{
	json_t *o = json_object(), *a = json_array(), *ga = json_array();
	size_t ll, lw, tl, tw;
	int rc;

	history_len(c->load, c->nnodes, &ll, &lw);
	history_len(c->traffic, c->nedges, &tl, &tw);
	for (size_t s = 0; s < c->nsites; s++)
		json_array_append_new(a, json_string(c->sites[s]));
	for (size_t j = 0; j < nk; j++) {
		json_t *g = json_object();

		json_object_set_new(g, "model", json_string(k[j].model));
		json_object_set_new(g, "gpus", json_integer(k[j].gpus));
		json_object_set_new(g, "tflops", cmd_json_real(k[j].tflops));
		json_object_set_new(g, "mem_gb", cmd_json_real(k[j].mem_gb));
		json_array_append_new(ga, g);
	}
	json_object_set_new(o, "schema", json_string("dlplan.check/1"));
	json_object_set_new(o, "sites", json_integer((json_int_t)c->nsites));
	json_object_set_new(o, "site_names", a);
	json_object_set_new(o, "nodes", json_integer((json_int_t)c->nnodes));
	json_object_set_new(o, "gpus", json_integer(cluster_gpus(c)));
	json_object_set_new(o, "gpu_models", ga);
	json_object_set_new(o, "tflops_total",
	    cmd_json_real(cluster_tflops(c)));
	json_object_set_new(o, "mem_total_gb", cmd_json_real(mem_total(c)));
	json_object_set_new(o, "vertices", json_integer((json_int_t)c->nverts));
	json_object_set_new(o, "links", json_integer((json_int_t)c->nedges));
	json_object_set_new(o, "diameter_hops", json_integer(diam));
	json_object_set_new(o, "load_steps", json_integer((json_int_t)ll));
	json_object_set_new(o, "load_series", json_integer((json_int_t)lw));
	json_object_set_new(o, "traffic_steps", json_integer((json_int_t)tl));
	json_object_set_new(o, "traffic_series",
	    json_integer((json_int_t)tw));
	if (m) {
		json_object_set_new(o, "layers",
		    json_integer((json_int_t)m->nlayers));
		json_object_set_new(o, "params_total",
		    cmd_json_real(model_params(m)));
		json_object_set_new(o, "flops_per_sample",
		    cmd_json_real(model_flops(m)));
	} else {
		json_object_set_new(o, "layers", json_integer(0));
		json_object_set_new(o, "params_total", json_integer(0));
	}
	json_object_set_new(o, "warnings", warnings_json(c, m));
	rc = cmd_print_json(o);
	json_decref(o);
	return rc;
}

static void
print_table(const struct dl_cluster *c, const struct dl_model *m,
    const struct gpukind *k, size_t nk, int diam)
{
	size_t ll, lw, tl, tw;

	history_len(c->load, c->nnodes, &ll, &lw);
	history_len(c->traffic, c->nedges, &tl, &tw);
	printf("cluster   %s\n", c->path_nodes);
	printf("sites     %zu:", c->nsites);
	for (size_t s = 0; s < c->nsites; s++)
		printf(" %s", c->sites[s]);
	printf("\nnodes     %zu\n", c->nnodes);
	printf("gpus      %ld\n", cluster_gpus(c));
	for (size_t j = 0; j < nk; j++)
		printf("  %-22s %5ld GPUs %10.1f TFLOPS %9.0f GB\n",
		    k[j].model, k[j].gpus, k[j].tflops, k[j].mem_gb);
	printf("peak      %.1f TFLOPS\n", cluster_tflops(c));
	printf("memory    %.0f GB\n", mem_total(c));
	printf("network   %zu vertices, %zu directed links, diameter %d "
	    "hops%s\n", c->nverts, c->nedges, diam, c->has_links ? "" :
	    " (implicit site switches)");
	if (c->has_load)
		printf("load      %zu of %zu nodes have history, up to %zu "
		    "steps\n", lw, c->nnodes, ll);
	else
		printf("load      no history (nodes taken as idle)\n");
	if (c->has_traffic)
		printf("traffic   %zu of %zu links have history, up to %zu "
		    "steps\n", tw, c->nedges, tl);
	else
		printf("traffic   no history (links taken as idle)\n");
	if (m) {
		printf("model     %s\n", m->path);
		printf("layers    %zu\n", m->nlayers);
		printf("params    %.6g M\n", model_params(m) / 1e6);
		printf("work      %.6g GFLOP per sample (fwd+bwd)\n",
		    model_flops(m) / 1e9);
	}
	if (c->warnings.n + (m ? m->warnings.n : 0) > 0)
		printf("warnings  %zu implausible value%s (see stderr)\n",
		    c->warnings.n + (m ? m->warnings.n : 0),
		    c->warnings.n + (m ? m->warnings.n : 0) == 1 ? "" : "s");
}

static int
cmd_check(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct dl_cluster_paths paths = { 0 };
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	struct dl_cluster c;
	struct dl_model m;
	struct gpukind *kinds;
	const char *model = NULL;
	int id, fmt = 0, rc, diam;
	size_t nk;

	opt_init(&st, argc, argv);
	while ((id = opt_next(&st, cmd, &e)) != 0) {
		if (id < 0 || cmd_dash_opt(&st, &in, NULL, &e) != DL_OK)
			goto usage;
		if (cmd_cluster_opt(id, st.arg, &paths))
			continue;
		switch (id) {
		case OPT_HELP:
			opt_help(cmd, stdout);
			opt_free(&st);
			return DL_OK;
		case O_MODEL:
			model = st.arg;
			break;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		}
	}
	if (st.npos > 0) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "unexpected argument '%s'",
		    st.pos[0]);
		goto usage;
	}
	if (paths.dir == NULL && paths.nodes == NULL) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no cluster given "
		    "(expected -c DIR or --nodes FILE)");
		goto usage;
	}
	opt_free(&st);
	if ((rc = cluster_load(&c, &paths, &e)) != DL_OK)
		return cmd_fail(&e);
	/* check reads any network; the searching commands refuse some. */
	if (router_check_size(&c, &e) != DL_OK && dl_verbose >= 0)
		dl_warn("warning: %s: plan and schedule refuse this network: "
		    "%s", e.file, e.msg);
	if (model && (rc = model_load(&m, model, &e)) != DL_OK) {
		cluster_free(&c);
		return cmd_fail(&e);
	}
	(void)cmd_warn_inputs(&c, model ? &m : NULL);
	kinds = xcalloc(c.nnodes, sizeof(*kinds));
	nk = gpu_kinds(&c, kinds);
	diam = cluster_diameter(&c);
	if (fmt == 1) {
		rc = print_json(&c, model ? &m : NULL, kinds, nk, diam);
	} else {
		print_table(&c, model ? &m : NULL, kinds, nk, diam);
		rc = DL_OK;
	}
	free(kinds);
	if (model)
		model_free(&m);
	cluster_free(&c);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
