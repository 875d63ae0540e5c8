/*
 * timeline_svg.c - the SVG timeline of "dlplan eval --svg" (timeline.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sb.h"
#include "timeline.h"

#define SVG_W		1200
#define SVG_LEFT	230
#define SVG_RIGHT	30
#define SVG_TOP		56
#define LANE_H		26
#define LANE_GAP	10
#define GROUP_GAP	14

/* A drawing in progress: the document and its time scale. */
struct svg {
	struct strbuf sb;
	const struct dl_plan *p;
	struct tl_sim *sm;	/* per group */
	double tend;		/* time at the right end of the plot */
	double plot;		/* plot width in pixels */
	double sync0;		/* where the sync phase starts */
	int lanes, H;
};

/* The x coordinate of time t. */
static double
X(const struct svg *d, double t)
{
	return SVG_LEFT + t / d->tend * d->plot;
}

static const char *
fmt_s(char *buf, double v)
{
	snprintf(buf, 32, "%.6g", v);
	return buf;
}

static void
svg_text(struct strbuf *sb, double x, double y, const char *cls,
    const char *anchor, const char *text)
{
	sb_addf(sb, "<text x=\"%.2f\" y=\"%.2f\" class=\"%s\"%s%s%s>", x, y,
	    cls, anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
	    anchor ? "\"" : "");
	for (const char *t = text; *t; t++) {
		switch (*t) {
		case '&':
			sb_adds(sb, "&amp;");
			break;
		case '<':
			sb_adds(sb, "&lt;");
			break;
		case '>':
			sb_adds(sb, "&gt;");
			break;
		case '"':
			sb_adds(sb, "&quot;");
			break;
		default:
			sb_addc(sb, *t);
		}
	}
	sb_adds(sb, "</text>\n");
}

static void
svg_block(struct strbuf *sb, double x0, double x1, double y, double h,
    const char *cls, const char *label)
{
	double w = x1 - x0;

	if (w < 0.5)
		w = 0.5;
	sb_addf(sb, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
	    "height=\"%.2f\" class=\"%s\"/>\n", x0, y, w, h, cls);
	if (label && w >= 7.0 * strlen(label) + 4)
		svg_text(sb, x0 + w / 2, y + h / 2 + 4, "lbl", "middle",
		    label);
}

/* A tick step of 1, 2 or 5 times a power of ten giving 5 to 10 ticks. */
static double
tick_step(double span)
{
	double p = pow(10, floor(log10(span / 5)));

	if (span / p <= 10)
		return p;
	if (span / (2 * p) <= 10)
		return 2 * p;
	return 5 * p;
}

/* The XML header, the style sheet and the two heading lines. */
static void
svg_head(struct svg *d, const char *title)
{
	const struct dl_plan *p = d->p;
	char buf[600], a[32], b[32], c[32];

	sb_addf(&d->sb, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" viewBox=\"0 0 %d %d\">\n", SVG_W, d->H, SVG_W,
	    d->H);
	sb_adds(&d->sb, "<title>dlplan eval timeline</title>\n<style>\n"
	    "text { font-family: sans-serif; font-size: 11px; fill: #222; }\n"
	    ".title { font-size: 14px; font-weight: bold; }\n"
	    ".lbl { font-size: 9px; fill: #fff; }\n"
	    ".small { font-size: 10px; fill: #555; }\n"
	    ".fwd { fill: #3b78c2; } .bwd { fill: #2e9a5a; }\n"
	    ".xfer { fill: #e08a1e; } .sync { fill: #8a4fb8; }\n"
	    ".lane { fill: #f3f3f3; } .axis { stroke: #444; }\n"
	    ".grid { stroke: #ddd; } .tg { stroke: #c0392b; "
	    "stroke-dasharray: 4 3; } .tend { stroke: #000; }\n"
	    "</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n");
	snprintf(buf, sizeof(buf), "%s: T = %s s (pipeline %s s + sync %s s), "
	    "efficiency %.1f %%", title, fmt_s(a, p->est.iteration_s),
	    fmt_s(b, p->est.pipeline_s), fmt_s(c, p->est.sync_s),
	    100 * p->est.efficiency);
	svg_text(&d->sb, 12, 22, "title", NULL, buf);
	snprintf(buf, sizeof(buf), "1F1B simulated with the model's stage "
	    "and transfer times (the receiver waits for each transfer) ends "
	    "at %s s; the model's pipeline phase: %s s (dashed red: each "
	    "group's T_g); the sync phase follows; black: the model's T",
	    fmt_s(a, d->sync0), fmt_s(b, p->est.pipeline_s));
	svg_text(&d->sb, 12, 40, "small", NULL, buf);
}

/* Grid and time axis. */
static void
svg_axis(struct svg *d)
{
	double step = tick_step(d->tend), y = d->H - 70;
	char buf[64];

	for (double t = 0; t <= d->tend * (1 + 1e-9); t += step) {
		sb_addf(&d->sb, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" "
		    "y2=\"%.2f\" class=\"grid\"/>\n", X(d, t), SVG_TOP - 6,
		    X(d, t), y);
		snprintf(buf, sizeof(buf), "%g", t);
		svg_text(&d->sb, X(d, t), y + 16, "small", "middle", buf);
	}
	sb_addf(&d->sb, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
	    "class=\"axis\"/>\n", SVG_LEFT, y, X(d, d->tend), y);
	svg_text(&d->sb, SVG_LEFT + d->plot / 2, y + 32, "small", "middle",
	    "time (s)");
}

/* The lane of stage s of group g at height y: its label and blocks. */
static void
svg_lane(struct svg *d, const struct dl_cluster *c, int g, int s, double y)
{
	const struct dl_group *gr = &d->p->groups[g];
	const struct dl_stage *st = &gr->stages[s];
	const struct tl_sim *sm = &d->sm[g];
	long m = gr->micro_batches;
	char buf[600];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "g%d s%d  %s:", g, s,
	    c->nodes[st->node].id);

	for (int k = 0; k < st->ngpus && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d",
		    k ? "," : "", st->gpus[k]);
	if (n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, "  layers %d-%d",
		    st->first, st->last);
	svg_text(&d->sb, 12, y + LANE_H / 2 + 4, "", NULL, buf);
	sb_addf(&d->sb, "<rect x=\"%d\" y=\"%.2f\" width=\"%.2f\" "
	    "height=\"%d\" class=\"lane\"/>\n", SVG_LEFT, y, d->plot, LANE_H);
	for (long i = 0; i < m && sm->F; i++) {
		const struct tl_blk *F = &sm->F[s * m + i];
		const struct tl_blk *B = &sm->B[s * m + i];

		snprintf(buf, sizeof(buf), "F%ld", i);
		svg_block(&d->sb, X(d, F->start), X(d, F->end), y + 2,
		    LANE_H - 9, "fwd", buf);
		snprintf(buf, sizeof(buf), "B%ld", i);
		svg_block(&d->sb, X(d, B->start), X(d, B->end), y + 2,
		    LANE_H - 9, "bwd", buf);
		/* Receives, on the receiving lane: the activations
		 * before a forward, the gradients before a backward. */
		if (F->start > F->recv)
			svg_block(&d->sb, X(d, F->recv), X(d, F->start),
			    y + LANE_H - 6, 5, "xfer", NULL);
		if (B->start > B->recv)
			svg_block(&d->sb, X(d, B->recv), X(d, B->start),
			    y + LANE_H - 6, 5, "xfer", NULL);
	}
}

/* Every group's lanes and its T_g; returns the y below the last group. */
static double
svg_groups(struct svg *d, const struct dl_cluster *c)
{
	const struct dl_plan *p = d->p;
	double y = SVG_TOP;
	char buf[32];

	for (int g = 0; g < p->ngroups; g++) {
		const struct dl_group *gr = &p->groups[g];
		double y0 = y;

		for (int s = 0; s < gr->nstages; s++) {
			svg_lane(d, c, g, s, y);
			y += LANE_H + LANE_GAP;
		}
		sb_addf(&d->sb, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
		    "y2=\"%.2f\" class=\"tg\"/>\n", X(d, gr->time_s), y0 - 4,
		    X(d, gr->time_s), y - LANE_GAP + 4);
		snprintf(buf, sizeof(buf), "T_%d", g);
		svg_text(&d->sb, X(d, gr->time_s) + 3, y - LANE_GAP + 2,
		    "small", NULL, buf);
		y += GROUP_GAP;
	}
	return y;
}

/* The sync phase: each unit reduces its segments one by one. */
static void
svg_sync(struct svg *d)
{
	const struct dl_plan *p = d->p;
	double *acc = xcalloc((size_t)d->lanes + 1, sizeof(double));
	char buf[32];

	for (int q = 0; q < p->nrings; q++) {
		const struct dl_ring *r = &p->rings[q];

		for (int i = 0; i < r->nmembers; i++) {
			int g = r->group[i], s = r->stage[i], lane = s, yy;
			double t0;

			for (int k = 0; k < g; k++)
				lane += p->groups[k].nstages;
			yy = SVG_TOP + lane * (LANE_H + LANE_GAP) + g *
			    GROUP_GAP;
			t0 = d->sync0 + acc[lane];
			snprintf(buf, sizeof(buf), "q%d", q);
			svg_block(&d->sb, X(d, t0), X(d, t0 + r->time_s),
			    yy + 2, LANE_H - 9, "sync", buf);
			acc[lane] += r->time_s;
		}
	}
	free(acc);
}

static void
svg_legend(struct svg *d)
{
	static const char *const cls[] = { "fwd", "bwd", "xfer", "sync" };
	static const char *const txt[] = { "forward", "backward",
	    "transfer (receiver's lane)", "sync (ring all-reduce)" };
	double x = SVG_LEFT, y = d->H - 22;

	for (int i = 0; i < 4; i++) {
		sb_addf(&d->sb, "<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" "
		    "height=\"12\" class=\"%s\"/>\n", x, y - 10, cls[i]);
		svg_text(&d->sb, x + 16, y, "", NULL, txt[i]);
		x += 40 + 7 * strlen(txt[i]);
	}
}

char *
timeline_svg(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *title)
{
	struct svg d;
	double y;

	memset(&d, 0, sizeof(d));
	sb_init(&d.sb);
	d.p = p;
	d.sm = xcalloc(p->ngroups, sizeof(*d.sm));
	d.plot = SVG_W - SVG_LEFT - SVG_RIGHT;
	d.sync0 = p->est.pipeline_s;
	for (int g = 0; g < p->ngroups; g++) {
		timeline_simulate(p, m, g, &d.sm[g]);
		d.sync0 = fmax(d.sync0, d.sm[g].end);
		d.lanes += p->groups[g].nstages;
	}
	d.tend = d.sync0 + p->est.sync_s;
	if (!(d.tend > 0))
		d.tend = 1;
	d.H = SVG_TOP + d.lanes * (LANE_H + LANE_GAP) + p->ngroups *
	    GROUP_GAP + 90;
	svg_head(&d, title);
	svg_axis(&d);
	y = svg_groups(&d, c);
	svg_sync(&d);
	sb_addf(&d.sb, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" "
	    "class=\"tend\"/>\n", X(&d, p->est.iteration_s), SVG_TOP - 6,
	    X(&d, p->est.iteration_s), y - GROUP_GAP);
	svg_text(&d.sb, X(&d, p->est.iteration_s) - 3, SVG_TOP - 9, "small",
	    "end", "T");
	svg_legend(&d);
	sb_adds(&d.sb, "</svg>\n");
	for (int g = 0; g < p->ngroups; g++)
		timeline_sim_free(&d.sm[g]);
	free(d.sm);
	return sb_detach(&d.sb);
}
