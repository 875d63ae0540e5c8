/*
 * cost_vp.c - a stage's compute time, and the interleaved schedule's part
 * of the cost model (cost_vp.h; dlplan(1) ALGORITHMS, Interleaved
 * schedule): the chunks' layout, their times and transfers for
 * pipe_vmakespan(), and the data-parallel overlap of an interleaved stage.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>

#include "cost_vp.h"
#include "pipesched.h"

/*
 * A stage's compute under its own TP shares.  The GPUs of a unit run in
 * step, so the one with the largest share of the layers' FLOPs sets the
 * pace: its share times the unit's work over one GPU's speed.  With even
 * shares (every plan the search makes: one speed per node) that is
 * cost_stage_compute(); uneven shares in a plan written by hand are
 * priced by their largest, as the executor runs them.
 */
double
cost_stage_time(const struct dl_costctx *x, const struct dl_stage *st)
{
	double fl = cost_stage_flops_rc(x, st->first, st->last,
	    cost_stage_rc(x, st), NULL), most = 0;
	double t = cost_unit_time(x, st->node, st->ngpus, fl,
	    cost_range_tp(x, st->first, st->last));

	for (int i = 0; i < st->ngpus; i++)
		most = fmax(most, st->tp_share[i]);
	if (st->ngpus > 1 && most * st->ngpus > 1 + 1e-12)
		t += (most * st->ngpus - 1) * (double)x->o->micro_batch *
		    fl / (st->ngpus * x->speed[st->node]);
	return t;
}

/* Whether layers k and l cost the same in every column the model prices. */
static int
alike(const struct dl_costctx *x, int k, int l)
{
	return x->lay_flops[k] == x->lay_flops[l] &&
	    x->lay_mem[k] == x->lay_mem[l] &&
	    x->lay_keep[k] == x->lay_keep[l] &&
	    x->lay_rcf[k] == x->lay_rcf[l] &&
	    cost_range_params(x, k, k) == cost_range_params(x, l, l) &&
	    cost_range_tp(x, k, k) == cost_range_tp(x, l, l) &&
	    cost_range_fwd(x, k, k) == cost_range_fwd(x, l, l) &&
	    x->m->layers[k].act_mb == x->m->layers[l].act_mb;
}

int
cost_vp_layout(const struct dl_costctx *x, const struct dl_group *gr,
    int v, int *cf, int *cl, struct dl_err *e)
{
	int S = gr->nstages, L = (int)x->m->nlayers, b0 = -1, N = 0;
	int *bl;
	long m = gr->micro_batches;

	if (S < 2)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the interleaved "
		    "schedule (%d virtual stages) needs a pipeline of 2 "
		    "stages or more; the group has %d", v, S);
	if (m < S || m % S != 0)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the interleaved "
		    "schedule runs micro-batches in groups of the %d stages "
		    "(Megatron-LM's microbatch_group_size_per_vp_stage); %ld "
		    "micro-batches a replica is not a multiple of %d", S, m,
		    S);
	if ((double)S * v * (double)m > PIPE_VMAX)
		return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the interleaved "
		    "schedule of %d stages, %d chunks and %ld micro-batches "
		    "has more than %.0f operations to simulate", S, v, m,
		    PIPE_VMAX);
	for (int l = 0; l < L; l++) {
		if (!x->blk[l])
			continue;
		if (b0 < 0)
			b0 = l;
		else if (!x->blk[l - 1])
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the "
			    "interleaved schedule needs the model's "
			    "transformer blocks in consecutive rows; row %d "
			    "is not one", l - 1);
		else if (!alike(x, b0, l))
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the "
			    "interleaved schedule needs transformer blocks "
			    "that are alike; layer %d ('%s') differs from "
			    "layer %d ('%s')", l, x->m->layers[l].name, b0,
			    x->m->layers[b0].name);
	}
	bl = xcalloc((size_t)S + 1, sizeof(int));
	for (int s = 0; s < S; s++) {
		const struct dl_stage *st = &gr->stages[s];
		int n = model_blocks(x->m, st->first, st->last);

		if (n < v || n % v != 0) {
			free(bl);
			return dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "the "
			    "interleaved schedule splits each stage's blocks "
			    "into %d chunks; stage %d holds %d block%s", v, s,
			    n, n == 1 ? "" : "s");
		}
		bl[s + 1] = bl[s] + n / v;
	}
	N = bl[S];
	for (int c = 0; c < v && cf != NULL; c++)
		for (int s = 0; s < S; s++) {
			int o = c * S + s, a = b0 + c * N + bl[s];

			cf[o] = o == 0 ? 0 : a;
			cl[o] = o == S * v - 1 ? L - 1 : a + bl[s + 1] - bl[s] - 1;
		}
	free(bl);
	return DL_OK;
}

/*
 * A chunk's own stage: layers [first, last] of stage st, its share of
 * st's recomputed blocks (cost_stage_rc() over v chunks).
 */
struct dl_stage
cost_vp_chunk(const struct dl_costctx *x, const struct dl_stage *st, int v,
    int first, int last)
{
	struct dl_stage c = *st;

	c.first = first;
	c.last = last;
	c.recompute = cost_stage_rc(x, st) / v;
	c.rc_set = 1;
	return c;
}

void
cost_vp_free(struct cost_vp *vp, int n)
{
	for (int g = 0; g < n && vp != NULL; g++) {
		free(vp[g].cf);
		free(vp[g].cl);
		free(vp[g].f);
	}
	free(vp);
}

int
cost_vp_init(const struct dl_costctx *x, const struct dl_plan *p,
    struct cost_vp *vp, struct dl_err *e)
{
	int rc = DL_OK;

	for (int g = 0; g < p->ngroups && rc == DL_OK; g++) {
		const struct dl_group *gr = &p->groups[g];
		size_t nc = (size_t)gr->nstages * (size_t)PLAN_VSTAGES(gr);

		vp[g].v = PLAN_VSTAGES(gr);
		if (vp[g].v == 1)
			continue;
		vp[g].cf = xcalloc(nc, sizeof(int));
		vp[g].cl = xcalloc(nc, sizeof(int));
		vp[g].f = xcalloc(5 * nc, sizeof(double));
		vp[g].b = vp[g].f + nc;
		vp[g].xf = vp[g].b + nc;
		vp[g].xb = vp[g].xf + nc;
		vp[g].bend = vp[g].xb + nc;
		rc = cost_vp_layout(x, gr, vp[g].v, vp[g].cf, vp[g].cl, e);
	}
	return rc;
}

double
cost_vp_stage_time(const struct dl_costctx *x, const struct dl_group *gr,
    struct cost_vp *w, int s)
{
	const struct dl_stage *st = &gr->stages[s];
	double t = 0;

	if (w->v == 1)
		return cost_stage_time(x, st);
	for (int o = s; o < w->v * gr->nstages; o += gr->nstages) {
		struct dl_stage ch = cost_vp_chunk(x, st, w->v, w->cf[o],
		    w->cl[o]);
		double tc = cost_stage_time(x, &ch), share;

		cost_stage_flops_rc(x, ch.first, ch.last, ch.recompute, &share);
		w->f[o] = tc * share;
		w->b[o] = tc - w->f[o];
		t += tc;
	}
	return t;
}

/*
 * The transfers of interleaved group g (its chunks' compute set by
 * cost_vp_stage_time()), from the plain inputs (in: f, b, xf, xb of
 * cost_pipe_inputs(), n stages each): every chunk crosses boundary s the
 * same way, and the last stage's own slot, s = S - 1, holds its send to
 * the first stage.
 */
void
cost_vp_transfers(const struct dl_plan *p, int g, const int *base,
    const double *in, struct cost_vp *vp)
{
	int S = p->groups[g].nstages, n = base[p->ngroups];
	const double *xf = in + 2 * n, *xb = in + 3 * n;

	for (int o = 0; o + 1 < S * vp->v; o++) {
		vp->xf[o] = xf[base[g] + o % S];
		vp->xb[o] = xb[base[g] + o % S];
	}
}

/*
 * The overlap of an interleaved rank s (vp->v chunks of one size): its
 * reduction rs is the chunks' in equal parts, and chunk c's starts when
 * its last backward ends (vp->bend, from the simulation); one after the
 * other on the rank's link, from the last chunk, which finishes first,
 * to chunk 0, whose part hides bucket by bucket under its own last
 * backward as a plain stage's does.  When the reduction ends.
 */
double
cost_vp_reduced(const struct cost_vp *vp, int S, int s, double rs, double nb)
{
	double part = rs / vp->v, t = 0, e0 = vp->bend[s];

	for (int c = vp->v - 1; c >= 1; c--)
		t = fmax(t, vp->bend[c * S + s]) + part;
	return fmax(e0 + fmax(part / nb, part - vp->b[s]), t + part);
}

/*
 * Its all-gather ag of the updated parameters before the next
 * iteration: chunk 0's part hides under its first forward less the way
 * down to rank s (as a plain stage's), the other chunks' under the
 * forwards of chunk 0 before them, S micro-batches of the warm-up at
 * least.  What does not hide delays T.
 */
double
cost_vp_gathered(const struct cost_vp *vp, int S, int s, double ag, double nb)
{
	double part = ag / vp->v, fill = 0;

	for (int j = 0; j < s; j++)
		fill += vp->f[j] + vp->xf[j];
	return fmax(fmax(part / nb, part - vp->f[s]),
	    ag - S * vp->f[s]) - fill;
}

