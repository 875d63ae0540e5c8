/*
 * cmd_route.c - "dlplan route": MDP routes for a list of flows, or the
 * congestion regime model of a cluster (dlplan(1) ALGORITHMS, Routing).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Flows are routed largest first (ties in file order), each seeing n_e of
 * those before it, and printed in file order.  Formats: csv is the stable
 * format of dlplan-formats(5), route csv; json ("dlplan.route/1",
 * "dlplan.regimes/1") and the tables are described in dlplan(1).
 */
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "cmdutil.h"
#include "fmethod.h"
#include "gmc.h"
#include "route.h"
#include "sb.h"

enum { O_FLOWS = 1, O_HORIZON, O_STATES, O_FORMAT, O_REGIMES, O_FORECAST };
enum { F_TABLE, F_CSV, F_JSON };

#define HORIZON_MAX	10000

static const struct optspec route_opts[] = {
	DL_OPT_CLUSTER,
	{ "flows", 0, O_FLOWS, "FILE", "csv",
	    "flows to route (flow,src,dst,mb)" },
	{ "forecast", 0, O_FORECAST, "METHOD", FM_NAMES,
	    "forecast method of the start regime (gmc; see predict --method)" },
	{ "horizon", 0, O_HORIZON, "N", NULL,
	    "forecast steps for the start regime (default 1)" },
	{ "states", 0, O_STATES, "K", NULL,
	    "congestion regimes, 1..32 (default 3; 1 without traffic.csv)" },
	{ "format", 0, O_FORMAT, "FMT", "table|csv|json",
	    "output format (default table)" },
	{ "regimes", 0, O_REGIMES, NULL, NULL,
	    "print the regime model (levels, transitions, start regime, "
	    "link utilisation per regime) instead of routes" },
	DL_OPT_COMMON,
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static int cmd_route(const struct dl_cmd *, int, char **);

const struct dl_cmd dl_cmd_route = {
	"route", cmd_route,
	"-c DIR (--flows FILE | --regimes) [--horizon N] [--states K] "
	"[--forecast METHOD] "
	"[--format table|csv|json] [cluster options]",
	"choose network routes for flows with a congestion-aware MDP",
	route_opts, 0
};

/* One routed flow. */
struct routed {
	struct dl_route rt;
	int order;		/* position in the routing order, 0-based */
};

static const struct dl_flowset *sort_fs;

/* Largest first, ties in file order. */
static int
by_size(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = sort_fs->flows[i].mb, y = sort_fs->flows[j].mb;

	if (x != y)
		return x > y ? -1 : 1;
	return (i > j) - (i < j);
}

static int
route_all(struct dl_router *r, const struct dl_flowset *fs, struct routed *out, struct dl_err *e)
{
	size_t *idx = xcalloc(fs->n, sizeof(size_t));
	int rc = DL_OK;

	for (size_t i = 0; i < fs->n; i++)
		idx[i] = i;
	sort_fs = fs;
	qsort(idx, fs->n, sizeof(size_t), by_size);
	for (size_t k = 0; k < fs->n; k++) {
		const struct dl_flowreq *f = &fs->flows[idx[k]];

		rc = router_flow(r, f->src, f->dst, f->mb * 1e6, 1,
		    &out[idx[k]].rt, e);
		if (rc != DL_OK) {
			char msg[sizeof(e->msg)];

			snprintf(msg, sizeof(msg), "%s", e->msg);
			dl_seterr(e, rc, fs->path, f->line, 0, "flow '%s': %s",
			    f->id, msg);
			break;
		}
		out[idx[k]].order = (int)k;
	}
	free(idx);
	return rc;
}

static void
path_text(struct strbuf *sb, const struct dl_cluster *c,
    const struct dl_route *rt, const char *sep)
{
	for (size_t i = 0; i < rt->npath; i++) {
		if (i)
			sb_adds(sb, sep);
		sb_adds(sb, c->verts[rt->path[i]].id);
	}
}

static void
print_csv(const struct dl_cluster *c, const struct dl_flowset *fs,
    const struct routed *ro)
{
	struct strbuf sb = STRBUF_INIT;
	char b1[DL_DBL_BUFSZ], b2[DL_DBL_BUFSZ];

	printf("flow,src,dst,mb,regime,expected_s,path\n");
	for (size_t i = 0; i < fs->n; i++) {
		const struct dl_flowreq *f = &fs->flows[i];

		sb_reset(&sb);
		path_text(&sb, c, &ro[i].rt, ">");
		printf("%s,%s,%s,%s,%d,%s,%s\n", f->id, c->verts[f->src].id,
		    c->verts[f->dst].id, fmt_double(b1, f->mb),
		    ro[i].rt.regime, fmt_double(b2, ro[i].rt.expected_s),
		    sb.buf);
	}
	sb_free(&sb);
}

static int
print_json(const struct dl_cluster *c, const struct dl_router *r,
    const struct dl_flowset *fs, const struct routed *ro)
{
	struct dl_regime_info ri;
	json_t *o = json_object(), *fa = json_array();
	int rc;

	router_info(r, &ri);
	json_object_set_new(o, "schema", json_string("dlplan.route/1"));
	json_object_set_new(o, "regimes", json_integer(ri.nregimes));
	json_object_set_new(o, "start_regime", json_integer(ri.start));
	json_object_set_new(o, "forecast_util", cmd_json_real(ri.forecast));
	for (size_t i = 0; i < fs->n; i++) {
		const struct dl_flowreq *f = &fs->flows[i];
		const struct dl_route *rt = &ro[i].rt;
		json_t *fo = json_object(), *pa = json_array();
		json_t *po = json_array();

		for (size_t k = 0; k < rt->npath; k++)
			json_array_append_new(pa,
			    json_string(c->verts[rt->path[k]].id));
		for (int l = 0; l < rt->nregimes; l++) {
			json_t *p = json_object();
			int h = rt->first_hop[l];

			json_object_set_new(p, "regime", json_integer(l));
			json_object_set_new(p, "first_hop", h < 0 ?
			    json_null() : json_string(c->verts[h].id));
			json_object_set_new(p, "expected_s",
			    cmd_json_real(rt->regime_s[l]));
			json_array_append_new(po, p);
		}
		json_object_set_new(fo, "flow", json_string(f->id));
		json_object_set_new(fo, "src", json_string(c->verts[f->src].id));
		json_object_set_new(fo, "dst", json_string(c->verts[f->dst].id));
		json_object_set_new(fo, "mb", cmd_json_real(f->mb));
		json_object_set_new(fo, "bytes", cmd_json_real(f->mb * 1e6));
		json_object_set_new(fo, "order", json_integer(ro[i].order));
		json_object_set_new(fo, "regime", json_integer(rt->regime));
		json_object_set_new(fo, "expected_s",
		    cmd_json_real(rt->expected_s));
		json_object_set_new(fo, "path", pa);
		json_object_set_new(fo, "policy", po);
		json_array_append_new(fa, fo);
	}
	json_object_set_new(o, "flows", fa);
	rc = cmd_print_json(o);
	json_decref(o);
	return rc;
}

/* Print a table row without its trailing blanks, then reset it. */
static void
emit(struct strbuf *sb)
{
	while (sb->len > 0 && sb->buf[sb->len - 1] == ' ')
		sb->buf[--sb->len] = '\0';
	printf("%s\n", sb->len ? sb->buf : "");
	sb_reset(sb);
}

static int
width(int w, const char *s)
{
	int n = (int)strlen(s);

	return n > w ? n : w;
}

static void
print_table(const struct dl_cluster *c, const struct dl_router *r,
    const struct dl_flowset *fs, const struct routed *ro)
{
	struct dl_regime_info ri;
	struct strbuf sb = STRBUF_INIT;
	int wf = 4, ws = 3, wd = 3, K;
	char buf[64];

	router_info(r, &ri);
	K = ri.nregimes;
	for (size_t i = 0; i < fs->n; i++) {
		wf = width(wf, fs->flows[i].id);
		ws = width(ws, c->verts[fs->flows[i].src].id);
		wd = width(wd, c->verts[fs->flows[i].dst].id);
	}
	if (K == 1)
		printf("regimes  1 (no traffic history: links idle)\n");
	else
		printf("regimes  %d, start regime %d (forecast mean link "
		    "utilisation %.4f)\n", K, ri.start, ri.forecast);
	printf("\n%-*s  %-*s  %-*s  %10s  %12s  %s\n", wf, "flow", ws, "src",
	    wd, "dst", "MB", "expected_s", "path");
	for (size_t i = 0; i < fs->n; i++) {
		const struct dl_flowreq *f = &fs->flows[i];

		sb_reset(&sb);
		path_text(&sb, c, &ro[i].rt, " > ");
		printf("%-*s  %-*s  %-*s  %10.6g  %12.6g  %s\n", wf, f->id,
		    ws, c->verts[f->src].id, wd, c->verts[f->dst].id, f->mb,
		    ro[i].rt.expected_s, sb.buf);
	}

	/* The policy at the source in every regime. */
	{
		int wh = 9;

		for (size_t i = 0; i < fs->n; i++)
			for (int l = 0; l < K; l++) {
				int h = ro[i].rt.first_hop[l];

				wh = width(wh, h < 0 ? "-" : c->verts[h].id);
			}
		printf("\npolicy per regime (first hop, expected_s)\n");
		sb_reset(&sb);
		sb_addf(&sb, "%-*s", wf, "flow");
		for (int l = 0; l < K; l++) {
			snprintf(buf, sizeof(buf), "regime %d%s", l,
			    l == ri.start ? " (start)" : "");
			sb_addf(&sb, "  %-*s", wh + 14, buf);
		}
		emit(&sb);
		for (size_t i = 0; i < fs->n; i++) {
			sb_addf(&sb, "%-*s", wf, fs->flows[i].id);
			for (int l = 0; l < K; l++) {
				int h = ro[i].rt.first_hop[l];

				sb_addf(&sb, "  %-*s %-13.6g", wh, h < 0 ?
				    "-" : c->verts[h].id, ro[i].rt.regime_s[l]);
			}
			emit(&sb);
		}
	}
	sb_free(&sb);
}

/* --regimes. */
static int
print_regimes(const struct dl_cluster *c, const struct dl_router *r,
    int horizon, int method, int fmt)
{
	struct dl_regime_info ri;
	struct strbuf sb = STRBUF_INIT;
	char b1[DL_DBL_BUFSZ];
	int K;

	router_info(r, &ri);
	K = ri.nregimes;
	if (fmt == F_CSV) {
		printf("src,dst,regime,util\n");
		for (size_t k = 0; k < c->nedges; k++)
			for (int l = 0; l < K; l++)
				printf("%s,%s,%d,%s\n",
				    c->verts[c->edges[k].src].id,
				    c->verts[c->edges[k].dst].id, l,
				    fmt_double(b1, ri.ubar[k * K + l]));
		return DL_OK;
	}
	if (fmt == F_JSON) {
		json_t *o = json_object(), *lv = json_array();
		json_t *sp = json_array(), *cn = json_array(), *q = json_array();
		json_t *links = json_array();
		int rc;

		for (int l = 0; l < K; l++) {
			json_t *pair = json_array(), *crow = json_array();
			json_t *qrow = json_array();

			json_array_append_new(pair, cmd_json_real((double)l / K));
			json_array_append_new(pair,
			    cmd_json_real((double)(l + 1) / K));
			json_array_append_new(lv, pair);
			json_array_append_new(sp,
			    json_integer((json_int_t)ri.steps[l]));
			for (int m = 0; m < K; m++) {
				json_array_append_new(crow,
				    json_integer(ri.count[l * K + m]));
				json_array_append_new(qrow,
				    cmd_json_real(ri.q[l * K + m]));
			}
			json_array_append_new(cn, crow);
			json_array_append_new(q, qrow);
		}
		for (size_t k = 0; k < c->nedges; k++) {
			json_t *lo = json_object(), *u = json_array();

			for (int l = 0; l < K; l++)
				json_array_append_new(u,
				    cmd_json_real(ri.ubar[k * K + l]));
			json_object_set_new(lo, "src",
			    json_string(c->verts[c->edges[k].src].id));
			json_object_set_new(lo, "dst",
			    json_string(c->verts[c->edges[k].dst].id));
			json_object_set_new(lo, "history_steps", json_integer(
			    c->traffic ? (json_int_t)c->traffic[k].n : 0));
			json_object_set_new(lo, "util", u);
			json_array_append_new(links, lo);
		}
		json_object_set_new(o, "schema", json_string("dlplan.regimes/1"));
		json_object_set_new(o, "regimes", json_integer(K));
		json_object_set_new(o, "levels", lv);
		json_object_set_new(o, "steps", json_integer((json_int_t)ri.nsteps));
		json_object_set_new(o, "steps_per_regime", sp);
		json_object_set_new(o, "horizon", json_integer(horizon));
		json_object_set_new(o, "forecast_util", cmd_json_real(ri.forecast));
		if (method != FM_GMC)
			json_object_set_new(o, "forecast_method",
			    json_string(fm_name(method)));
		json_object_set_new(o, "start_regime", json_integer(ri.start));
		json_object_set_new(o, "transition_counts", cn);
		json_object_set_new(o, "transitions", q);
		json_object_set_new(o, "links", links);
		rc = cmd_print_json(o);
		json_decref(o);
		return rc;
	}

	if (!c->has_traffic)
		printf("no traffic history: one regime, every link idle\n");
	printf("regimes  %d, by mean link utilisation:", K);
	for (int l = 0; l < K; l++)
		printf(" %d [%.4g, %.4g%c", l, (double)l / K,
		    (double)(l + 1) / K, l == K - 1 ? ']' : ')');
	printf("\nsteps    %zu (per regime:", ri.nsteps);
	for (int l = 0; l < K; l++)
		printf(" %zu", ri.steps[l]);
	printf(")\nstart    regime %d (%s forecast of the mean utilisation, "
	    "mean over %d step%s: %.6g)\n", ri.start, method == FM_GMC ?
	    "GMC" : fm_name(method), horizon, horizon == 1 ? "" : "s",
	    ri.forecast);
	printf("\ntransitions (row: from, column: to; probability "
	    "(count))\n");
	sb_addf(&sb, "%6s", "");
	for (int m = 0; m < K; m++)
		sb_addf(&sb, "  %-16d", m);
	emit(&sb);
	for (int l = 0; l < K; l++) {
		sb_addf(&sb, "%6d", l);
		for (int m = 0; m < K; m++) {
			char cell[64];

			snprintf(cell, sizeof(cell), "%.6f (%ld)",
			    ri.q[l * K + m], ri.count[l * K + m]);
			sb_addf(&sb, "  %-16s", cell);
		}
		emit(&sb);
	}
	{
		int ws = 3, wd = 3;

		for (size_t k = 0; k < c->nedges; k++) {
			ws = width(ws, c->verts[c->edges[k].src].id);
			wd = width(wd, c->verts[c->edges[k].dst].id);
		}
		printf("\nlink utilisation per regime (mean over the steps in "
		    "the regime, clamped to [0, 0.99])\n%-*s  %-*s  %7s",
		    ws, "src", wd, "dst", "steps");
		for (int l = 0; l < K; l++)
			printf("  %8d", l);
		printf("\n");
		for (size_t k = 0; k < c->nedges; k++) {
			printf("%-*s  %-*s  %7zu", ws,
			    c->verts[c->edges[k].src].id, wd,
			    c->verts[c->edges[k].dst].id,
			    c->traffic ? c->traffic[k].n : 0);
			for (int l = 0; l < K; l++)
				printf("  %8.4f", ri.ubar[k * K + l]);
			printf("\n");
		}
	}
	sb_free(&sb);
	return DL_OK;
}

static int
cmd_route(const struct dl_cmd *cmd, int argc, char **argv)
{
	struct dl_cluster_paths paths = { 0 };
	struct dl_route_opts ro = { 3, 1, FM_GMC };
	struct optstate st;
	struct cmd_stdin in = { "" };
	struct dl_err e = { 0 };
	struct dl_cluster c;
	struct dl_router *r = NULL;
	struct dl_flowset fs;
	struct routed *out = NULL;
	const char *flows = NULL;
	int id, fmt = F_TABLE, regimes = 0, rc;
	long v;

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
		case O_FLOWS:
			flows = st.arg;
			break;
		case O_FORECAST:
			if ((ro.forecast = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_HORIZON:
			if (opt_long(&st, 1, HORIZON_MAX, &v, &e) != DL_OK)
				goto usage;
			ro.horizon = (int)v;
			break;
		case O_STATES:
			if (opt_long(&st, 1, GMC_MAX_STATES, &v, &e) != DL_OK)
				goto usage;
			ro.states = (int)v;
			break;
		case O_FORMAT:
			if ((fmt = opt_choice(&st, &e)) < 0)
				goto usage;
			break;
		case O_REGIMES:
			regimes = 1;
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
	if (flows == NULL && !regimes) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "no flows given "
		    "(expected --flows FILE, or --regimes)");
		goto usage;
	}
	if (flows != NULL && regimes) {
		dl_seterr(&e, DL_EUSAGE, NULL, 0, 0, "options '--flows' and "
		    "'--regimes' cannot be used together");
		goto usage;
	}
	opt_free(&st);

	if ((rc = cluster_load(&c, &paths, &e)) != DL_OK)
		return cmd_fail(&e);
	if ((rc = router_new(&r, &c, &ro, &e)) != DL_OK) {
		cluster_free(&c);
		return cmd_fail(&e);
	}
	if (regimes) {
		rc = print_regimes(&c, r, ro.horizon, ro.forecast, fmt);
		goto done;
	}
	if ((rc = flows_load(&fs, flows, &c, &e)) != DL_OK) {
		rc = cmd_fail(&e);
		goto done;
	}
	out = xcalloc(fs.n, sizeof(*out));
	if ((rc = route_all(r, &fs, out, &e)) != DL_OK) {
		rc = cmd_fail(&e);
	} else {
		if (dl_verbose > 0) {
			struct dl_router_stats rs;

			router_stats(r, &rs);
			dl_warn("routed %ld flows: %ld solves, %ld cache hits, "
			    "%ld implicit-switch fast paths, %ld value-iteration "
			    "sweeps", rs.flows, rs.solves, rs.cache_hits,
			    rs.fast, rs.sweeps);
		}
		if (fmt == F_CSV) {
			print_csv(&c, &fs, out);
		} else if (fmt == F_JSON) {
			rc = print_json(&c, r, &fs, out);
		} else {
			print_table(&c, r, &fs, out);
		}
	}
	for (size_t i = 0; i < fs.n; i++)
		route_clear(&out[i].rt);
	free(out);
	flows_free(&fs);
done:
	router_free(r);
	cluster_free(&c);
	return rc;
usage:
	opt_free(&st);
	return opt_usage_error(cmd, &e);
}
