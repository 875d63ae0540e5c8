/*
 * emit_framework.c - what the framework launchers (emit_megatron.c,
 * emit_deepspeed.c, emit_torchtitan.c) need of a plan: the one shape
 * every group shares, checked again on the plan as read.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A framework starts one TP degree, one PP degree, one DP degree and one
 * layer split; plan --runtime makes such plans and names the framework in
 * plan.json.  A plan made for another runtime, or edited since into
 * groups of different shapes, is refused here (DL_EINFEAS, exit status
 * 3), so that a launcher never writes a configuration that would run a
 * different plan from the one priced.
 */
#include <stdlib.h>
#include <string.h>

#include "emit_int.h"
#include "sb.h"
#include "runtime.h"

/* Whether group g has group 0's shape: stages, units, layers, batches. */
static int
same_shape(const struct dl_plan *p, int g, int k)
{
	const struct dl_group *a = &p->groups[0], *b = &p->groups[g];

	if (b->nstages != a->nstages || b->micro_batches != a->micro_batches ||
	    PLAN_VSTAGES(b) != PLAN_VSTAGES(a))
		return 0;
	for (int j = 0; j < b->nstages; j++)
		if (b->stages[j].ngpus != k || b->stages[j].first !=
		    a->stages[j].first || b->stages[j].last !=
		    a->stages[j].last)
			return 0;
	return 1;
}

int
emit_fw_shape(const struct emit_ctx *x, enum dl_runtime rt,
    struct emit_fw *f, struct dl_err *e)
{
	const struct dl_plan *p = x->p;
	const char *runtime = plan_runtime_names[rt];

	if (p->runtime != rt)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the plan was made "
		    "for runtime %s, not %s: %s cannot run groups of "
		    "different shapes or uneven micro-batches (make the plan "
		    "with 'dlplan plan --runtime %s')",
		    plan_runtime_names[p->runtime], runtime, runtime, runtime);
	if (p->ngroups < 1 || p->groups[0].nstages < 1)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the plan has no "
		    "stages to give %s", runtime);
	memset(f, 0, sizeof(*f));
	f->k = p->groups[0].stages[0].ngpus;
	f->S = p->groups[0].nstages;
	f->G = p->ngroups;
	f->m = p->groups[0].micro_batches;
	f->stages = p->groups[0].stages;
	f->v = PLAN_VSTAGES(&p->groups[0]);
	f->layers = p->groups[0].stages[f->S - 1].last + 1;
	for (int g = 0; g < p->ngroups; g++)
		if (!same_shape(p, g, f->k))
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "group %d "
			    "of the plan differs from group 0 (stages, TP "
			    "degree, layers, micro-batches or virtual stages): "
			    "%s runs one "
			    "shape", g, runtime);
	if (p->opts.micro_batch * f->m * f->G != p->opts.global_batch)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "micro-batch %ld x "
		    "%ld micro-batches x %d groups is not the global batch "
		    "%ld", p->opts.micro_batch, f->m, f->G,
		    p->opts.global_batch);
	if (x->o->model && model_is_transformer(x->o->model) &&
	    x->o->model->nlayers == (size_t)f->layers) {
		f->blocks = xcalloc((size_t)f->S, sizeof(int));
		for (int j = 0; j < f->S; j++)
			f->blocks[j] = model_blocks(x->o->model,
			    f->stages[j].first, f->stages[j].last);
	}
	return DL_OK;
}

void
emit_fw_free(struct emit_fw *f)
{
	free(f->blocks);
	f->blocks = NULL;
}

int
emit_fw_model(const struct emit_ctx *x, int runtime,
    const struct emit_fw *f, struct dl_err *e)
{
	const struct dl_model *m = x->o->model;
	char why[256];
	int rc;

	if (m == NULL)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the plan names "
		    "no model: %s builds the model from its sizes (give "
		    "--model)", plan_runtime_names[x->p->runtime]);
	if ((rc = runtime_model(m, runtime, e)) != DL_OK)
		return rc;
	if (f->blocks == NULL)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "model '%s' has "
		    "%zu layers, the plan %d", m->path, m->nlayers, f->layers);
	if (!runtime_fits(m, runtime, f->k, f->S, why, sizeof(why)))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "TP %d, %d "
		    "stages: %s", f->k, f->S, why);
	return DL_OK;
}

int
emit_fw_savers(const struct emit_ctx *x, int runtime, struct emit_fw *f,
    struct dl_err *e)
{
	const char *rt = plan_runtime_names[runtime];
	const char *why1 = runtime_saver_refused(runtime, &x->p->opts);
	char why[256];

	if (why1 != NULL)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "%s", why1);
	f->rc = 0;
	for (int j = 0; j < f->S; j++)
		f->rc = f->rc || f->stages[j].recompute > 0;
	if (f->rc && f->blocks == NULL)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the plan "
		    "recomputes blocks and names no model that has them: %s "
		    "recomputes every block of every stage or none (give "
		    "--model)", rt);
	for (int j = 0; j < f->S && f->rc; j++)
		if (f->stages[j].recompute != f->blocks[j])
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "stage %d "
			    "recomputes %d of its %d transformer blocks: %s "
			    "recomputes every block of every stage or none",
			    j, f->stages[j].recompute, f->blocks[j], rt);
	if (!runtime_saver_fits(runtime, &x->p->opts, f->S, f->m,
	    f->G, f->rc, why, sizeof(why)))
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "%d stages, %ld "
		    "micro-batches, %d replicas: %s", f->S, f->m, f->G, why);
	return DL_OK;
}

void
emit_start_script(struct emit_ctx *x, const char *name, const char *what,
    const char *comment, const char *env, const char *prog,
    const char *words)
{
	struct strbuf *sb = emit_add_file(x, name, 1);
	const char *w = words, *nl;
	size_t len;

	sb_adds(sb, "#!/bin/sh\n");
	emit_script_head(sb, name, what);
	sb_addf(sb, "#\n%s", comment);
	sb_adds(sb, "set -f\n");
	if (env)
		sb_adds(sb, env);
	sb_addf(sb, "exec %s", prog);
	for (; *w != '\0'; w += len + (nl != NULL)) {
		char *one;

		nl = strchr(w, '\n');
		len = nl ? (size_t)(nl - w) : strlen(w);
		one = xstrndup(w, len);
		/* A flag's value on the flag's line. */
		sb_adds(sb, one[0] == '-' && one[1] == '-' ? " \\\n\t" :
		    " ");
		sb_addshq(sb, one);
		free(one);
	}
	sb_adds(sb, " \\\n\t\"$@\"\n");
}
