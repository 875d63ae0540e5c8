/*
 * plan_json_read.c - reading the plan's JSON form (plan_json.c writes it
 * and documents it).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fmethod.h"
#include "path.h"
#include "plan.h"
#include "plan_json.h"
#include "sb.h"
#include "util_io.h"

/*
 * path, relative to the directory of the plan file planfile; "-"
 * (standard input when the plan was made) stays as it is.
 */
static char *
resolve(const char *planfile, const char *path)
{
	char *dir, *r;
	size_t n;

	if (path[0] == '/' || strchr(planfile, '/') == NULL ||
	    strcmp(path, DL_STDIN_PATH) == 0)
		return xstrdup(path);
	dir = path_dir(planfile);
	n = strlen(dir) + strlen(path) + 2;
	r = xmalloc(n);
	snprintf(r, n, "%s/%s", dir, path);
	free(dir);
	return r;
}

/*
 * Reading.  Errors name the JSON path of the value ("groups[1].stages[0].
 * gpus[2]"); jansson gives no positions for values, only for syntax.
 */

struct rd {
	const char *file;
	struct dl_err *e;
};

static int
rerr(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
rerr(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dl_vseterr(r->e, DL_EDATA, r->file, 0, 0, fmt, ap);
	va_end(ap);
	return DL_EDATA;
}

static const char *
jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	default:
		return "null";
	}
}

/* "where.key", or "key" at the top. */
static const char *
jpath(char *buf, size_t n, const char *where, const char *key)
{
	snprintf(buf, n, "%s%s%s", where, *where ? "." : "", key);
	return buf;
}

/* What member() expects a value to be. */
enum { J_INT, J_NUM, J_STR, J_OBJ, J_ARR };

/*
 * Look up key in object o.  *v is NULL when it is absent (an error when
 * required); otherwise it must be of kind type.  want describes the value
 * expected, for messages; p receives the value's JSON path.
 */
static int
member(struct rd *r, json_t *o, const char *where, const char *key,
    int required, int type, const char *want, json_t **v, char *p,
    size_t np)
{
	static const json_type types[] = {
		JSON_INTEGER, JSON_REAL, JSON_STRING, JSON_OBJECT, JSON_ARRAY
	};
	int good;

	jpath(p, np, where, key);
	if ((*v = json_object_get(o, key)) == NULL)
		return required ? rerr(r, "%s: missing (expected %s)", p, want) :
		    DL_OK;
	good = type == J_NUM ? json_is_number(*v) :
	    json_typeof(*v) == types[type];
	if (!good) {
		rerr(r, "%s: expected %s, found %s", p, want, jtype(*v));
		*v = NULL;
		return DL_EDATA;
	}
	return DL_OK;
}

static int
get_long(struct rd *r, json_t *o, const char *where, const char *key,
    int required, long min, long max, long *out)
{
	char p[256], want[96];
	json_t *v;
	int rc;

	snprintf(want, sizeof(want), "an integer in [%ld, %ld]", min, max);
	rc = member(r, o, where, key, required, J_INT, want, &v, p, sizeof(p));
	if (v == NULL)
		return rc;
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return rerr(r, "%s: %lld is out of range (expected %s)", p,
		    (long long)json_integer_value(v), want);
	*out = (long)json_integer_value(v);
	return DL_OK;
}

static int
get_int(struct rd *r, json_t *o, const char *where, const char *key,
    int required, long min, long max, int *out)
{
	long v = *out;
	int rc = get_long(r, o, where, key, required, min, max, &v);

	*out = (int)v;
	return rc;
}

static int
get_num(struct rd *r, json_t *o, const char *where, const char *key,
    int required, double min, double max, double *out)
{
	char p[256], want[96], a[DL_DBL_BUFSZ], b[DL_DBL_BUFSZ];
	json_t *v;
	int rc;

	snprintf(want, sizeof(want), "a number in [%s, %s]",
	    fmt_double(a, min), isinf(max) ? "inf" : fmt_double(b, max));
	rc = member(r, o, where, key, required, J_NUM, want, &v, p, sizeof(p));
	if (v == NULL)
		return rc;
	if (!(json_number_value(v) >= min && json_number_value(v) <= max))
		return rerr(r, "%s: %s is out of range (expected %s)", p,
		    fmt_double(a, json_number_value(v)), want);
	*out = json_number_value(v);
	return DL_OK;
}

static int
get_str(struct rd *r, json_t *o, const char *where, const char *key,
    int required, const char **out)
{
	char p[256];
	json_t *v;
	int rc;

	rc = member(r, o, where, key, required, J_STR, "a string", &v, p,
	    sizeof(p));
	if (v)
		*out = json_string_value(v);
	return rc;
}

/* An object or array member (J_OBJ, J_ARR); *out is NULL when absent. */
static int
get_typed(struct rd *r, json_t *o, const char *where, const char *key,
    int required, int type, json_t **out)
{
	char p[256];

	return member(r, o, where, key, required, type, type == J_OBJ ?
	    "an object" : "an array", out, p, sizeof(p));
}

/* Unknown keys are errors unless they start with "x_". */
static int
check_keys(struct rd *r, json_t *o, const char *where,
    const char *const *known)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		int ok = strncmp(key, "x_", 2) == 0;
		struct strbuf sb = STRBUF_INIT;

		for (const char *const *k = known; *k && !ok; k++)
			ok = strcmp(*k, key) == 0;
		if (ok)
			continue;
		for (const char *const *k = known; *k; k++)
			sb_addf(&sb, "%s%s", k == known ? "" : ", ", *k);
		rerr(r, "%s: unknown key '%s' (expected %s; prefix other keys "
		    "with x_)", *where ? where : "plan", key, sb.buf);
		sb_free(&sb);
		return DL_EDATA;
	}
	return DL_OK;
}

static int
load_json(struct rd *r, const char *path, json_t **root)
{
	json_error_t je;
	json_t *v;
	const char *schema = NULL;
	char *data;
	size_t len;
	int rc;

	if ((rc = read_file(path, &data, &len, r->e)) != DL_OK)
		return rc;
	v = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	free(data);
	if (v == NULL)
		return dl_seterr(r->e, DL_EDATA, path, je.line > 0 ? je.line : 0,
		    je.column > 0 ? je.column : 0, "invalid JSON: %s", je.text);
	if (!json_is_object(v)) {
		rc = rerr(r, "not a plan (expected a JSON object with "
		    "\"schema\": \"" DL_PLAN_SCHEMA "\", found %s)", jtype(v));
	} else if ((rc = get_str(r, v, "", "schema", 0, &schema)) == DL_OK) {
		if (schema == NULL)
			rc = rerr(r, "schema: missing (expected \"" DL_PLAN_SCHEMA
			    "\")");
		else if (strcmp(schema, DL_PLAN_SCHEMA) != 0)
			rc = rerr(r, "schema: '%s' is not a supported schema "
			    "(expected \"" DL_PLAN_SCHEMA "\")", schema);
	}
	if (rc != DL_OK) {
		json_decref(v);
		return rc;
	}
	*root = v;
	return DL_OK;
}

static int
read_inputs(struct rd *r, json_t *root, struct dl_plan *p)
{
	static const char *const keys[] = {
		"kind", "path", "sha256", "size", NULL
	};
	json_t *a, *v;
	size_t i;
	int rc;

	if ((rc = get_typed(r, root, "", "inputs", 0, J_ARR, &a)) != DL_OK
	    || a == NULL)
		return rc;
	p->inputs = xcalloc(json_array_size(a) + 1, sizeof(*p->inputs));
	json_array_foreach(a, i, v) {
		struct dl_input *in = &p->inputs[p->ninputs];
		const char *kind = NULL, *path = NULL, *sha = NULL;
		long size = -1;
		char w[64];
		size_t k;

		snprintf(w, sizeof(w), "inputs[%zu]", i);
		if (!json_is_object(v))
			return rerr(r, "%s: expected an object, found %s", w,
			    jtype(v));
		if ((rc = check_keys(r, v, w, keys)) != DL_OK ||
		    (rc = get_str(r, v, w, "kind", 1, &kind)) != DL_OK ||
		    (rc = get_str(r, v, w, "path", 1, &path)) != DL_OK ||
		    (rc = get_str(r, v, w, "sha256", 0, &sha)) != DL_OK ||
		    (rc = get_long(r, v, w, "size", 0, 0, 1L << 53, &size)) !=
		    DL_OK)
			return rc;
		for (k = 0; k < DL_NINPUT_KINDS; k++)
			if (strcmp(kind, plan_input_kinds[k]) == 0)
				break;
		if (k == DL_NINPUT_KINDS)
			return rerr(r, "%s.kind: '%s' is not an input kind "
			    "(expected nodes, links, load, traffic or model)",
			    w, kind);
		if (plan_input_path(p, kind))
			return rerr(r, "%s.kind: input '%s' is given twice", w,
			    kind);
		if (*path == '\0')
			return rerr(r, "%s.path: empty path", w);
		if (sha && (strlen(sha) != 64 ||
		    strspn(sha, "0123456789abcdef") != 64))
			return rerr(r, "%s.sha256: '%s' is not a SHA-256 digest "
			    "(expected 64 lower-case hex digits)", w, sha);
		in->kind = xstrdup(kind);
		in->path = resolve(r->file, path);
		if (sha)
			memcpy(in->sha256, sha, 65);
		in->size = size;
		p->ninputs++;
	}
	return DL_OK;
}

/*
 * Initialise p, load the plan file r->file into *root and read its inputs;
 * on failure p is left empty and there is no *root to release.
 */
static int
load_with_inputs(struct rd *r, struct dl_plan *p, json_t **root)
{
	int rc;

	plan_init(p);
	if ((rc = load_json(r, r->file, root)) == DL_OK &&
	    (rc = read_inputs(r, *root, p)) != DL_OK)
		json_decref(*root);
	if (rc != DL_OK)
		plan_free(p);
	return rc;
}

int
plan_read_inputs(struct dl_plan *p, const char *path, struct dl_err *e)
{
	struct rd r = { path, e };
	json_t *root;
	int rc;

	if ((rc = load_with_inputs(&r, p, &root)) == DL_OK)
		json_decref(root);
	return rc;
}

/* Refuse a plan whose recorded inputs differ from the files loaded. */
static int
check_digests(struct rd *r, const struct dl_plan *p,
    const struct dl_cluster *c, const struct dl_model *m)
{
	static const char *const names[] = {
		"nodes.csv", "links.csv", "load.csv", "traffic.csv", "model.csv"
	};
	int any = 0;

	for (size_t i = 0; i < p->ninputs; i++)
		any |= p->inputs[i].sha256[0] != '\0';
	if (!any)
		return DL_OK;
	for (size_t k = 0; k < DL_NINPUT_KINDS; k++) {
		const char *cur = plan_input_file(c, m, (int)k);
		const struct dl_input *in = NULL;
		long long size = -1;
		char sha[65];
		int rc;

		for (size_t i = 0; i < p->ninputs; i++)
			if (strcmp(p->inputs[i].kind, plan_input_kinds[k]) == 0)
				in = &p->inputs[i];
		if (in == NULL && cur == NULL)
			continue;
		if (k == 4 && (in == NULL || m == NULL))
			continue;
		if (in == NULL)
			return dl_seterr(r->e, DL_EDATA, cur, 0, 0, "plan was "
			    "made without a %s; re-run dlplan plan", names[k]);
		if (cur == NULL)
			return dl_seterr(r->e, DL_EDATA, r->file, 0, 0, "plan "
			    "was made with a %s ('%s') but the cluster has "
			    "none; re-run dlplan plan", names[k], in->path);
		if (in->sha256[0] == '\0')
			continue;
		/* The size first: a file of another size is not read. */
		if (!read_digest(cur, sha, &size) &&
		    (rc = sha256_file(cur, in->size, sha, &size, r->e)) !=
		    DL_OK)
			return rc;
		if (in->size >= 0 && size != in->size)
			return dl_seterr(r->e, DL_EDATA, cur, 0, 0, "plan was "
			    "made for a different %s (%lld bytes, the plan "
			    "records %lld); re-run dlplan plan", names[k], size,
			    in->size);
		if (strcmp(sha, in->sha256) != 0)
			return dl_seterr(r->e, DL_EDATA, cur, 0, 0, "plan was "
			    "made for a different %s (digest mismatch); re-run "
			    "dlplan plan", names[k]);
	}
	return DL_OK;
}

static int
read_options(struct rd *r, json_t *root, struct dl_opts *o)
{
	static const char *const keys[] = {
		"global_batch", "micro_batch", "mfu", "param_bytes",
		"grad_bytes", "optimizer_bytes", "mem_reserve", "horizon",
		"states", "forecast", "max_stages", "max_tp", "time_limit",
		"attention", "recompute", "optimizer", "overlap", NULL
	};
	const char *w = "options", *fm = NULL, *at = NULL, *rc_ = NULL;
	const char *op = NULL, *ov = NULL;
	json_t *j;
	int rc;

	if ((rc = get_typed(r, root, "", "options", 1, J_OBJ, &j)) !=
	    DL_OK)
		return rc;
	if ((rc = check_keys(r, j, w, keys)) != DL_OK ||
	    (rc = get_long(r, j, w, "global_batch", 1, 1, 1000000000000L,
	    &o->global_batch)) != DL_OK ||
	    (rc = get_long(r, j, w, "micro_batch", 1, 1, 1000000000L,
	    &o->micro_batch)) != DL_OK ||
	    (rc = get_num(r, j, w, "mfu", 0, 1e-9, 1, &o->mfu)) != DL_OK ||
	    (rc = get_num(r, j, w, "param_bytes", 0, 0, 64, &o->param_bytes))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "grad_bytes", 0, 0, 64, &o->grad_bytes))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "optimizer_bytes", 0, 0, 256,
	    &o->optimizer_bytes)) != DL_OK ||
	    (rc = get_num(r, j, w, "mem_reserve", 0, 0, 0.99,
	    &o->mem_reserve)) != DL_OK ||
	    (rc = get_int(r, j, w, "horizon", 0, 1, 1000000, &o->horizon))
	    != DL_OK ||
	    (rc = get_int(r, j, w, "states", 0, 1, 32, &o->states)) != DL_OK ||
	    (rc = get_int(r, j, w, "max_stages", 0, 0, 1000000,
	    &o->max_stages)) != DL_OK ||
	    (rc = get_int(r, j, w, "max_tp", 0, 1, DL_MAX_TP, &o->max_tp))
	    != DL_OK ||
	    (rc = get_num(r, j, w, "time_limit", 0, 0, 1e9, &o->time_limit))
	    != DL_OK ||
	    (rc = get_str(r, j, w, "forecast", 0, &fm)) != DL_OK ||
	    (rc = get_str(r, j, w, "attention", 0, &at)) != DL_OK ||
	    (rc = get_str(r, j, w, "recompute", 0, &rc_)) != DL_OK ||
	    (rc = get_str(r, j, w, "optimizer", 0, &op)) != DL_OK ||
	    (rc = get_str(r, j, w, "overlap", 0, &ov)) != DL_OK)
		return rc;
	/* A plan records the savers it was priced with; one without them
	 * (made before they existed) used none of them. */
	o->attention = ATTN_UNFUSED;
	o->recompute = RC_NONE;
	o->optimizer = OPTIM_REPLICATED;
	o->overlap = OVL_NONE;
	if (ov != NULL && ((o->overlap = plan_name_find(plan_overlap_names,
	    DL_NOVERLAP, ov)) < 0 || o->overlap == OVL_AUTO))
		return rerr(r, "options.overlap: '%s' is not a plan's overlap "
		    "(expected none, dp or dp+tp)", ov);
	if (at != NULL && (o->attention = plan_name_find(plan_attention_names,
	    DL_NATTENTION, at)) < 0)
		return rerr(r, "options.attention: unknown kernel '%s' "
		    "(expected %s)", at, PLAN_ATTENTIONS);
	if (rc_ != NULL && ((o->recompute = plan_name_find(
	    plan_recompute_names, DL_NRECOMPUTE, rc_)) < 0 ||
	    o->recompute == RC_AUTO))
		return rerr(r, "options.recompute: '%s' is not a plan's "
		    "recomputation (expected none, selective or full)", rc_);
	if (op != NULL && (o->optimizer = plan_name_find(plan_optimizer_names,
	    DL_NOPTIMIZER, op)) < 0)
		return rerr(r, "options.optimizer: unknown placement '%s' "
		    "(expected %s)", op, PLAN_OPTIMIZERS);
	if (fm != NULL && (o->forecast = fm_parse(fm)) < 0)
		return rerr(r, "options.forecast: unknown method '%s' "
		    "(expected %s)", fm, FM_NAMES);
	return DL_OK;
}

static int
read_forecast(struct rd *r, json_t *root, struct dl_plan *p,
    const struct dl_cluster *c)
{
	const char *id;
	json_t *f, *v;
	int rc;

	if ((rc = get_typed(r, root, "", "forecast", 0, J_OBJ, &f)) !=
	    DL_OK || f == NULL)
		return rc;
	p->nnodes = c->nnodes;
	p->uhat = xcalloc(c->nnodes + 1, sizeof(double));
	json_object_foreach(f, id, v) {
		int n = cluster_node(c, id);
		char w[128];

		snprintf(w, sizeof(w), "forecast.%s", id);
		if (n < 0)
			return rerr(r, "%s: unknown node '%s' (not in "
			    "nodes.csv)", w, id);
		if (!json_is_number(v))
			return rerr(r, "%s: expected a number in [0, 1], found "
			    "%s", w, jtype(v));
		if (!(json_number_value(v) >= 0 && json_number_value(v) <= 1))
			return rerr(r, "%s: %.17g is out of range (expected a "
			    "number in [0, 1])", w, json_number_value(v));
		p->uhat[n] = json_number_value(v);
	}
	return DL_OK;
}

/* "gpus" and "tp_shares" of a stage. */
static int
read_gpus(struct rd *r, json_t *j, const char *w, struct dl_stage *st,
    const struct dl_node *nd)
{
	json_t *a, *sh, *v;
	size_t i, k;
	int rc;

	if ((rc = get_typed(r, j, w, "gpus", 1, J_ARR, &a)) != DL_OK ||
	    (rc = get_typed(r, j, w, "tp_shares", 0, J_ARR, &sh)) !=
	    DL_OK)
		return rc;
	k = json_array_size(a);
	if (k < 1 || k > DL_MAX_TP || k == 3 || (k > 4 && k < 8))
		return rerr(r, "%s.gpus: %zu GPUs (expected a TP degree of 1, "
		    "2, 4 or 8)", w, k);
	st->ngpus = (int)k;
	json_array_foreach(a, i, v) {
		if (!json_is_integer(v))
			return rerr(r, "%s.gpus[%zu]: expected a local GPU "
			    "index, found %s", w, i, jtype(v));
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) >= nd->gpus)
			return rerr(r, "%s.gpus[%zu]: GPU %lld does not exist "
			    "on node '%s' (it has %d: 0 to %d)", w, i,
			    (long long)json_integer_value(v), nd->id, nd->gpus,
			    nd->gpus - 1);
		st->gpus[i] = (int)json_integer_value(v);
		st->tp_share[i] = 1.0 / (double)k;
	}
	if (sh == NULL)
		return DL_OK;
	if (json_array_size(sh) != k)
		return rerr(r, "%s.tp_shares: %zu shares for %zu GPUs", w,
		    json_array_size(sh), k);
	json_array_foreach(sh, i, v) {
		if (!json_is_number(v))
			return rerr(r, "%s.tp_shares[%zu]: expected a number in "
			    "(0, 1], found %s", w, i, jtype(v));
		st->tp_share[i] = json_number_value(v);
	}
	return DL_OK;
}

static int
read_stage(struct rd *r, json_t *j, const char *w, struct dl_stage *st,
    const struct dl_cluster *c)
{
	static const char *const keys[] = {
		"node", "gpus", "tp_shares", "layers", "layer_names", "ranks",
		"micro_batches", "compute_s", "p2p_s", "mem_bytes",
		"recompute_layers", NULL
	};
	const char *id = NULL;
	json_t *ly;
	int rc, n;

	if (!json_is_object(j))
		return rerr(r, "%s: expected an object, found %s", w, jtype(j));
	if ((rc = check_keys(r, j, w, keys)) != DL_OK ||
	    (rc = get_str(r, j, w, "node", 1, &id)) != DL_OK)
		return rc;
	if ((n = cluster_node(c, id)) < 0)
		return rerr(r, "%s.node: unknown node '%s' (not in nodes.csv)",
		    w, id);
	st->node = n;
	if ((rc = read_gpus(r, j, w, st, &c->nodes[n])) != DL_OK ||
	    (rc = get_typed(r, j, w, "layers", 1, J_ARR, &ly)) != DL_OK)
		return rc;
	if (json_array_size(ly) != 2 ||
	    !json_is_integer(json_array_get(ly, 0)) ||
	    !json_is_integer(json_array_get(ly, 1)))
		return rerr(r, "%s.layers: expected [first, last] (two layer "
		    "indices, 0-based)", w);
	if (json_integer_value(json_array_get(ly, 0)) < 0 ||
	    json_integer_value(json_array_get(ly, 1)) > INT_MAX ||
	    json_integer_value(json_array_get(ly, 0)) >
	    json_integer_value(json_array_get(ly, 1)))
		return rerr(r, "%s.layers: [%lld, %lld] is not a layer range "
		    "(expected 0 <= first <= last)", w,
		    (long long)json_integer_value(json_array_get(ly, 0)),
		    (long long)json_integer_value(json_array_get(ly, 1)));
	st->first = (int)json_integer_value(json_array_get(ly, 0));
	st->last = (int)json_integer_value(json_array_get(ly, 1));
	if ((rc = get_num(r, j, w, "compute_s", 0, 0, HUGE_VAL,
	    &st->compute_s)) != DL_OK ||
	    (rc = get_num(r, j, w, "p2p_s", 0, 0, HUGE_VAL, &st->p2p_s)) !=
	    DL_OK ||
	    (rc = get_num(r, j, w, "mem_bytes", 0, 0, HUGE_VAL,
	    &st->mem_bytes)) != DL_OK ||
	    (rc = get_int(r, j, w, "recompute_layers", 0, 0, INT_MAX,
	    &st->recompute)) != DL_OK)
		return rc;
	st->rc_set = 1;
	return DL_OK;
}

static int
read_groups(struct rd *r, json_t *root, struct dl_plan *p,
    const struct dl_cluster *c)
{
	static const char *const keys[] = {
		"micro_batches", "samples", "virtual_stages", "time_s",
		"stages", NULL
	};
	json_t *a, *g, *sa, *s;
	size_t i, k;
	int rc;

	if ((rc = get_typed(r, root, "", "groups", 1, J_ARR, &a)) != DL_OK)
		return rc;
	if (json_array_size(a) == 0)
		return rerr(r, "groups: no groups (expected at least one)");
	if (json_array_size(a) > INT_MAX / 2)
		return rerr(r, "groups: too many groups");
	p->groups = xcalloc(json_array_size(a), sizeof(*p->groups));
	json_array_foreach(a, i, g) {
		struct dl_group *gr = &p->groups[i];
		char w[64], ws[96];

		snprintf(w, sizeof(w), "groups[%zu]", i);
		p->ngroups++;
		if (!json_is_object(g))
			return rerr(r, "%s: expected an object, found %s", w,
			    jtype(g));
		if ((rc = check_keys(r, g, w, keys)) != DL_OK ||
		    (rc = get_long(r, g, w, "micro_batches", 1, 1,
		    1000000000000L, &gr->micro_batches)) != DL_OK ||
		    (rc = get_int(r, g, w, "virtual_stages", 0, 1, 4096,
		    &gr->vstages)) != DL_OK ||
		    (rc = get_num(r, g, w, "time_s", 0, 0, HUGE_VAL,
		    &gr->time_s)) != DL_OK ||
		    (rc = get_typed(r, g, w, "stages", 1, J_ARR, &sa)) !=
		    DL_OK)
			return rc;
		if (json_array_size(sa) == 0)
			return rerr(r, "%s.stages: no stages (expected at least "
			    "one)", w);
		if (json_array_size(sa) > INT_MAX / 2)
			return rerr(r, "%s.stages: too many stages", w);
		gr->stages = xcalloc(json_array_size(sa), sizeof(*gr->stages));
		json_array_foreach(sa, k, s) {
			snprintf(ws, sizeof(ws), "%s.stages[%zu]", w, k);
			gr->nstages++;
			if ((rc = read_stage(r, s, ws, &gr->stages[k], c)) !=
			    DL_OK)
				return rc;
		}
	}
	return DL_OK;
}

/* The estimate and the solver status, leniently: eval recomputes them. */
static void
read_results(json_t *root, struct dl_plan *p)
{
	json_t *est = json_object_get(root, "estimate");
	json_t *sv = json_object_get(root, "solver"), *v, *b;
	int k;
	struct {
		const char *key;
		double *dst;
	} nums[] = {
		{ "iteration_s", &p->est.iteration_s },
		{ "lower_bound_s", &p->est.lower_bound_s },
		{ "efficiency", &p->est.efficiency },
		{ "throughput", &p->est.throughput },
		{ "pipeline_s", &p->est.pipeline_s },
		{ "sync_s", &p->est.sync_s },
		{ "optimizer_s", &p->est.optimizer_s },
		{ "compute_s", &p->est.compute_s },
		{ "p2p_s", &p->est.p2p_s },
		/* The old name first, so that steady_s wins. */
		{ "bubble_s", &p->est.steady_s },
		{ "steady_s", &p->est.steady_s },
	};

	if (json_is_object(est)) {
		for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
			if (json_is_number(v = json_object_get(est,
			    nums[i].key)))
				*nums[i].dst = json_number_value(v);
		if (json_is_integer(v = json_object_get(est, "slowest_group")))
			p->est.slowest_group = (int)json_integer_value(v);
		p->est.feasible = json_is_true(json_object_get(est,
		    "fits_memory"));
		b = json_object_get(est, "baselines");
		if (json_is_number(v = json_object_get(b, "even_dp_s")))
			p->even_s = json_number_value(v);
		if (json_is_number(v = json_object_get(b, "proportional_dp_s")))
			p->proportional_s = json_number_value(v);
		p->even_fits = json_is_true(json_object_get(b,
		    "even_dp_fits_memory"));
		p->proportional_fits = json_is_true(json_object_get(b,
		    "proportional_dp_fits_memory"));
	}
	/* The framework of plan --runtime; a name dlplan does not know is
	 * left out, so that emit refuses the framework launchers. */
	if (json_is_string(v = json_object_get(root, "runtime")) &&
	    (k = plan_name_find(plan_runtime_names, DL_NRUNTIMES,
	    json_string_value(v))) >= 0)
		p->runtime = (enum dl_runtime)k;
	p->opts.runtime = p->runtime;
	if (!json_is_object(sv))
		return;
	if (json_is_string(v = json_object_get(sv, "status")) &&
	    (k = plan_name_find(plan_status_names, DL_NSTATUSES,
	    json_string_value(v))) >= 0)
		p->status = (enum dl_status)k;
	if (json_is_number(v = json_object_get(sv, "gap")))
		p->gap = json_number_value(v);
	if (json_is_number(v = json_object_get(sv, "bound_s")))
		p->bound_s = json_number_value(v);
	if (json_is_string(v = json_object_get(sv, "bound_method")) &&
	    (k = plan_name_find(plan_bound_names, DL_NBOUNDS,
	    json_string_value(v))) > BOUND_NONE)
		p->bound_method = (enum dl_bound)k;
	if (json_is_number(v = json_object_get(sv, "time_s")))
		p->solve_s = json_number_value(v);
	/* A strategy dlplan does not know is left out, like a runtime. */
	if (json_is_string(v = json_object_get(sv, "strategy")) &&
	    (k = plan_name_find(plan_strategy_names, DL_NSTRATEGIES,
	    json_string_value(v))) >= 0)
		p->strategy = (enum dl_strategy)k;
	if (json_is_string(v = json_object_get(root, "parent")))
		p->parent = xstrdup(json_string_value(v));
}

int
plan_read_json(struct dl_plan *p, const char *path,
    const struct dl_cluster *c, const struct dl_model *m,
    int check_digest, struct dl_err *e)
{
	struct rd r = { path, e };
	json_t *root;
	int rc;

	if ((rc = load_with_inputs(&r, p, &root)) != DL_OK)
		return rc;
	if (check_digest)
		rc = check_digests(&r, p, c, m);
	if (rc == DL_OK)
		rc = read_options(&r, root, &p->opts);
	if (rc == DL_OK)
		rc = read_forecast(&r, root, p, c);
	if (rc == DL_OK)
		rc = read_groups(&r, root, p, c);
	if (rc == DL_OK) {
		read_results(root, p);
		rc = plan_validate(p, c, m, path, e);
	}
	if (rc == DL_OK)
		rc = plan_schedule_read(root, c, path, &p->schedule, e);
	if (rc == DL_OK)
		rc = plan_lineage_read(root, c, path, &p->lineage, e);
	json_decref(root);
	if (rc != DL_OK)
		plan_free(p);
	return rc;
}

/*
 * The budget schedule and the replan lineage.
 */

/* Reading: the member where of object o as a number (null: -1 when
 * nullable). */
struct jr {
	const char *path;
	struct dl_err *e;
};

static int
jr_num(const struct jr *r, json_t *o, const char *where, const char *key,
    int nullable, double *out)
{
	json_t *v = json_object_get(o, key);

	if (nullable && json_is_null(v)) {
		*out = -1;
		return DL_OK;
	}
	if (!json_is_number(v))
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s.%s: "
		    "expected a number", where, key);
	*out = json_number_value(v);
	return DL_OK;
}

static int
jr_int(const struct jr *r, json_t *o, const char *where, const char *key,
    long min, long max, long *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s.%s: "
		    "expected an integer in [%ld, %ld]", where, key, min, max);
	*out = (long)json_integer_value(v);
	return DL_OK;
}

static int
jr_nodes(const struct jr *r, json_t *o, const char *where,
    const struct dl_cluster *c, struct dl_budget_cand *cd)
{
	json_t *a = json_object_get(o, "nodes"), *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) > c->nnodes)
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s.nodes: "
		    "expected an array of at most %zu node ids", where,
		    c->nnodes);
	cd->used = xcalloc(json_array_size(a) + 1, sizeof(int));
	json_array_foreach(a, i, v) {
		int nd = json_is_string(v) ? cluster_node(c,
		    json_string_value(v)) : -1;

		if (nd < 0)
			return dl_seterr(r->e, DL_EDATA, r->path, 0, 0,
			    "%s.nodes[%zu]: expected the id of a node of "
			    "nodes.csv", where, i);
		cd->used[cd->nused++] = nd;
	}
	return DL_OK;
}

static int
read_cand(const struct jr *r, json_t *x, const char *w,
    const struct dl_cluster *c, struct dl_budget_cand *cd)
{
	long v;
	int rc;

	if (!json_is_object(x))
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s: expected "
		    "an object", w);
	if ((rc = jr_int(r, x, w, "prefix", 1, (long)c->nnodes, &v)) !=
	    DL_OK)
		return rc;
	cd->prefix = (int)v;
	if ((rc = jr_nodes(r, x, w, c, cd)) != DL_OK ||
	    (rc = jr_num(r, x, w, "iteration_s", 0, &cd->iteration_s)) !=
	    DL_OK ||
	    (rc = jr_num(r, x, w, "cost_per_hour", 0, &cd->cost)) != DL_OK ||
	    (rc = jr_num(r, x, w, "score", 0, &cd->score)) != DL_OK)
		return rc;
	return DL_OK;
}

static int
read_slot(const struct jr *r, json_t *so, const char *w,
    const struct dl_cluster *c, struct dl_budget_slot *sl)
{
	json_t *ca = json_object_get(so, "candidates"), *x, *pl;
	char wc[160];
	size_t i;
	long v;
	int rc;

	if (!json_is_object(so))
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s: expected "
		    "an object", w);
	if (!json_is_array(ca) || json_array_size(ca) == 0 ||
	    json_array_size(ca) > c->nnodes)
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s.candidates: "
		    "expected an array of 1 to %zu candidates", w, c->nnodes);
	sl->cand = xcalloc(json_array_size(ca), sizeof(*sl->cand));
	json_array_foreach(ca, i, x) {
		snprintf(wc, sizeof(wc), "%s.candidates[%zu]", w, i);
		sl->ncand++;
		if ((rc = read_cand(r, x, wc, c, &sl->cand[i])) != DL_OK)
			return rc;
	}
	if ((rc = jr_int(r, so, w, "chosen", 0, sl->ncand - 1, &v)) != DL_OK ||
	    (rc = jr_num(r, so, w, "queue", 0, &sl->queue)) != DL_OK ||
	    (rc = jr_num(r, so, w, "queue_after", 0, &sl->queue_after)) !=
	    DL_OK ||
	    (rc = jr_num(r, so, w, "unconstrained_s", 0, &sl->best_s)) !=
	    DL_OK ||
	    (rc = jr_num(r, so, w, "unconstrained_cost_per_hour", 0,
	    &sl->best_cost)) != DL_OK)
		return rc;
	sl->chosen = (int)v;
	pl = json_object_get(so, "plan");
	if (pl != NULL && !json_is_string(pl))
		return dl_seterr(r->e, DL_EDATA, r->path, 0, 0, "%s.plan: "
		    "expected a file name", w);
	sl->plan = pl ? xstrdup(json_string_value(pl)) : NULL;
	return DL_OK;
}

int
plan_schedule_read(json_t *root, const struct dl_cluster *c,
    const char *path, struct dl_schedule **out, struct dl_err *e)
{
	json_t *o = json_object_get(root, "schedule"), *sa, *x;
	struct jr r = { path, e };
	struct dl_schedule *s;
	const char *w = "schedule";
	char ws[64];
	size_t i;
	long v;
	int rc;

	*out = NULL;
	if (o == NULL)
		return DL_OK;
	if (!json_is_object(o))
		return dl_seterr(e, DL_EDATA, path, 0, 0, "schedule: expected "
		    "an object");
	s = xcalloc(1, sizeof(*s));
	sa = json_object_get(o, "slots");
	rc = jr_num(&r, o, w, "budget_per_hour", 0, &s->budget);
	if (rc == DL_OK)
		rc = jr_num(&r, o, w, "tradeoff", 0, &s->tradeoff);
	if (rc == DL_OK && (rc = jr_int(&r, o, w, "slot_steps", 1, 1000000,
	    &v)) == DL_OK)
		s->slot_steps = (int)v;
	if (rc == DL_OK)
		rc = jr_num(&r, o, w, "average_cost_per_hour", 0, &s->avg_cost);
	if (rc == DL_OK)
		rc = jr_num(&r, o, w, "cost_bound_per_hour", 1, &s->bound);
	if (rc == DL_OK)
		rc = jr_num(&r, o, w, "average_throughput", 0,
		    &s->avg_throughput);
	if (rc == DL_OK)
		rc = jr_num(&r, o, w, "unconstrained_throughput", 0,
		    &s->best_throughput);
	if (rc == DL_OK && (!json_is_array(sa) || json_array_size(sa) == 0 ||
	    json_array_size(sa) > 1000000))
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "schedule.slots: "
		    "expected an array of at least one slot");
	if (rc == DL_OK) {
		s->slots = xcalloc(json_array_size(sa), sizeof(*s->slots));
		json_array_foreach(sa, i, x) {
			snprintf(ws, sizeof(ws), "schedule.slots[%zu]", i);
			s->nslots++;
			if ((rc = read_slot(&r, x, ws, c, &s->slots[i])) !=
			    DL_OK)
				break;
		}
	}
	if (rc != DL_OK) {
		plan_schedule_free(s);
		return rc;
	}
	*out = s;
	return DL_OK;
}
static int
read_units(json_t *o, struct dl_lineage *l, const char *path,
    struct dl_err *e)
{
	json_t *ua = json_object_get(o, "units"), *x;
	struct jr r = { path, e };
	char w[64];
	size_t i;
	int rc = DL_OK;

	if (!json_is_array(ua) || json_array_size(ua) > INT_MAX / 2)
		return dl_seterr(e, DL_EDATA, path, 0, 0, "replan.units: "
		    "expected an array");
	l->unit = xcalloc(json_array_size(ua) + 1, sizeof(*l->unit));
	json_array_foreach(ua, i, x) {
		struct replan_unit *u = &l->unit[i];
		double g = 0, st = 0, steps = 0;

		snprintf(w, sizeof(w), "replan.units[%zu]", i);
		l->nunits++;
		if ((rc = jr_num(&r, x, w, "group", 0, &g)) ||
		    (rc = jr_num(&r, x, w, "stage", 0, &st)) ||
		    (rc = jr_num(&r, x, w, "predicted_s", 0, &u->predicted_s)) ||
		    (rc = jr_num(&r, x, w, "observed_s", 0, &u->observed_s)) ||
		    (rc = jr_num(&r, x, w, "noise", 0, &u->noise)) ||
		    (rc = jr_num(&r, x, w, "band", 0, &u->band)) ||
		    (rc = jr_num(&r, x, w, "factor", 0, &u->factor)) ||
		    (rc = jr_num(&r, x, w, "steps", 0, &steps)))
			break;
		u->group = (int)g;
		u->stage = (int)st;
		u->steps = (long)steps;
		u->clamped = json_is_true(json_object_get(x, "clamped"));
	}
	return rc;
}

int
plan_lineage_read(json_t *root, const struct dl_cluster *c,
    const char *path, struct dl_lineage **out, struct dl_err *e)
{
	json_t *o = json_object_get(root, "replan"), *f, *v;
	const char *w = "replan", *id;
	struct jr r = { path, e };
	struct dl_lineage *l;
	double win = 0;
	int rc;

	*out = NULL;
	if (o == NULL)
		return DL_OK;
	if (!json_is_object(o))
		return dl_seterr(e, DL_EDATA, path, 0, 0, "replan: expected an "
		    "object");
	l = xcalloc(1, sizeof(*l));
	l->nnodes = c->nnodes;
	l->factor = xcalloc(c->nnodes + 1, sizeof(double));
	l->used = xcalloc(c->nnodes + 1, 1);
	for (size_t i = 0; i < c->nnodes; i++)
		l->factor[i] = 1;
	if (json_is_string(v = json_object_get(o, "parent_file")))
		l->parent_file = xstrdup(json_string_value(v));
	if (json_is_string(v = json_object_get(o, "observed")))
		l->observed = xstrdup(json_string_value(v));
	l->repartition = json_is_true(json_object_get(o, "repartition"));
	l->compute = json_is_string(v = json_object_get(o, "estimator")) &&
	    strcmp(json_string_value(v), "compute") == 0;
	l->adopted = json_is_true(json_object_get(o, "adopted"));
	if ((rc = jr_num(&r, o, w, "window", 0, &win)) ||
	    (rc = jr_num(&r, o, w, "min_gain", 0, &l->min_gain)) ||
	    (rc = jr_num(&r, o, w, "planned_s", 0, &l->planned_s)) ||
	    (rc = jr_num(&r, o, w, "measured_s", 0, &l->measured_s)) ||
	    (rc = jr_num(&r, o, w, "iteration_s", 0, &l->iteration_s)) ||
	    (rc = jr_num(&r, o, w, "gain", 0, &l->gain)))
		goto fail;
	l->window = (int)win;
	if (!json_is_object(f = json_object_get(o, "speed_factors"))) {
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "replan.speed_factors: "
		    "expected an object");
		goto fail;
	}
	json_object_foreach(f, id, v) {
		int n = cluster_node(c, id);

		if (n < 0 || !json_is_number(v)) {
			rc = dl_seterr(e, DL_EDATA, path, 0, 0, "replan."
			    "speed_factors.%s: expected a number for a node "
			    "of nodes.csv", id);
			goto fail;
		}
		l->factor[n] = json_number_value(v);
		l->used[n] = 1;
	}
	if ((rc = read_units(o, l, path, e)) != DL_OK)
		goto fail;
	*out = l;
	return DL_OK;
fail:
	plan_lineage_free(l);
	return rc;
}
