/*
 * emit_common.c - what every launcher shares: option value checks, the
 * rank layout, the hostlist compressor, and the pieces of scripts that
 * several launchers write.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Below the launchers: it calls nothing of emit.c or of the emit_*.c
 * launchers.
 */
#include <stdlib.h>
#include <string.h>

#include "emit_int.h"
#include "sb.h"

static int
isdig(int c)
{
	return c >= '0' && c <= '9';
}

/* Is s one or more digits (at most 9, so it fits an int)? */
static int
digits(const char *s, size_t n)
{
	if (n == 0 || n > 9)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isdig((unsigned char)s[i]))
			return 0;
	return 1;
}

int
emit_valid_time(const char *s)
{
	const char *p = s, *dash;
	int parts = 0;

	if (strcmp(s, "UNLIMITED") == 0 || strcmp(s, "INFINITE") == 0 ||
	    strcmp(s, "unlimited") == 0 || strcmp(s, "infinite") == 0)
		return 1;
	/* [DAYS-]N[:N[:N]] */
	if ((dash = strchr(s, '-')) != NULL) {
		if (!digits(s, (size_t)(dash - s)))
			return 0;
		p = dash + 1;
	}
	for (;;) {
		size_t n = strcspn(p, ":");

		if (!digits(p, n) || ++parts > 3)
			return 0;
		if (p[n] == '\0')
			return 1;
		p += n + 1;
	}
}

int
emit_valid_partition(const char *s)
{
	char buf[64];

	for (;;) {
		size_t n = strcspn(s, ",");

		if (n == 0 || n >= sizeof(buf))
			return 0;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (!valid_id(buf))
			return 0;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
	}
}

int
emit_valid_host(const char *s)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
	size_t n = strlen(s);

	/* A leading '-' or '.' would read as an option or a path. */
	return n >= 1 && n <= 253 && strspn(s, ok) == n && s[0] != '-' &&
	    s[0] != '.';
}

/* ------------------------------------------------------------------ */
/* Layout */

void
emit_layout_free(struct emit_layout *l)
{
	free(l->ranks);
	free(l->nodes);
	free(l->count);
	free(l->first);
	memset(l, 0, sizeof(*l));
}

int
emit_layout(struct emit_layout *l, const struct dl_plan *p,
    const struct dl_cluster *c, struct dl_err *e)
{
	struct dl_rank *rt;
	size_t *off, total = 0;
	int *node_rank;
	unsigned char *used;
	long n;
	int prev = -1, rc = DL_OK;

	memset(l, 0, sizeof(*l));
	if (p->ngroups < 1)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0, "plan has no groups");
	for (size_t i = 0; i < c->nnodes; i++) {
		/* Named by its row of nodes.csv, where it can be fixed. */
		const char *f = c->path_nodes;
		long ln = c->path_nodes ? c->nodes[i].line : 0;

		if (!valid_id(c->nodes[i].id))
			return dl_seterr(e, DL_EDATA, f, ln, 0,
			    "node %zu has an invalid id", i + 1);
		if (!emit_valid_host(c->nodes[i].host))
			return dl_seterr(e, DL_EDATA, f, ln, 0,
			    "node '%s' has no valid host name for the launch "
			    "files (without a 'host' column the id is the "
			    "host: letters, digits, '.', '-', '_', not first "
			    "'-' or '.'; give a 'host' column)",
			    c->nodes[i].id);
	}
	for (int g = 0; g < p->ngroups; g++) {
		if (p->groups[g].nstages < 1)
			return dl_seterr(e, DL_EDATA, NULL, 0, 0,
			    "group %d has no stages", g);
		for (int s = 0; s < p->groups[g].nstages; s++) {
			const struct dl_stage *st = &p->groups[g].stages[s];

			if (st->ngpus < 1 || st->ngpus > DL_MAX_TP)
				return dl_seterr(e, DL_EDATA, NULL, 0, 0,
				    "group %d stage %d has %d GPUs (expected "
				    "1 to %d)", g, s, st->ngpus, DL_MAX_TP);
			if (st->node < 0 || (size_t)st->node >= c->nnodes)
				return dl_seterr(e, DL_EDATA, NULL, 0, 0,
				    "group %d stage %d is on node index %d, "
				    "but the cluster has %zu nodes", g, s,
				    st->node, c->nnodes);
		}
	}
	n = plan_ranks(p);
	if (n > 1000000)
		return dl_seterr(e, DL_EDATA, NULL, 0, 0,
		    "plan has %ld ranks, more than a launcher can take", n);
	rt = plan_rank_table(p);
	/* One flag per GPU of the cluster, to find a GPU used twice. */
	off = xcalloc(c->nnodes + 1, sizeof(*off));
	for (size_t i = 0; i < c->nnodes; i++) {
		off[i] = total;
		total += (size_t)(c->nodes[i].gpus > 0 ? c->nodes[i].gpus : 0);
	}
	used = xcalloc(total + 1, 1);
	node_rank = xmalloc((c->nnodes + 1) * sizeof(*node_rank));
	for (size_t i = 0; i < c->nnodes; i++)
		node_rank[i] = -1;
	l->ranks = xcalloc((size_t)n + 1, sizeof(*l->ranks));
	l->nodes = xcalloc(c->nnodes + 1, sizeof(*l->nodes));
	l->count = xcalloc(c->nnodes + 1, sizeof(*l->count));
	l->first = xcalloc(c->nnodes + 1, sizeof(*l->first));
	l->contiguous = 1;
	for (long r = 0; r < n; r++) {
		const struct dl_node *nd = &c->nodes[rt[r].node];
		struct emit_rank *rk = &l->ranks[r];
		int gpu = rt[r].gpu;

		if (gpu < 0 || gpu >= nd->gpus) {
			rc = dl_seterr(e, DL_EDATA, NULL, 0, 0, "group %d stage "
			    "%d uses GPU %d of node '%s', which has %d GPUs",
			    rt[r].group, rt[r].stage, gpu, nd->id, nd->gpus);
			break;
		}
		if (used[off[rt[r].node] + (size_t)gpu]) {
			rc = dl_seterr(e, DL_EDATA, NULL, 0, 0, "GPU %d of node "
			    "'%s' is used twice", gpu, nd->id);
			break;
		}
		used[off[rt[r].node] + (size_t)gpu] = 1;
		if (node_rank[rt[r].node] < 0) {
			node_rank[rt[r].node] = l->nnodes;
			l->nodes[l->nnodes] = rt[r].node;
			l->first[l->nnodes] = (int)r;
			l->nnodes++;
		}
		rk->node = rt[r].node;
		rk->gpu = gpu;
		rk->group = rt[r].group;
		rk->stage = rt[r].stage;
		rk->tp_rank = rt[r].tp_rank;
		rk->tp_size = p->groups[rk->group].stages[rk->stage].ngpus;
		rk->node_rank = node_rank[rk->node];
		rk->local_rank = l->count[rk->node_rank]++;
		if (rk->node_rank < prev)
			l->contiguous = 0;
		prev = rk->node_rank;
		if (gpu + 1 > l->max_gpus)
			l->max_gpus = gpu + 1;
		l->nranks++;
	}
	l->uniform = l->contiguous;
	for (int i = 1; i < l->nnodes; i++)
		if (l->count[i] != l->count[0])
			l->uniform = 0;
	free(rt);
	free(off);
	free(used);
	free(node_rank);
	if (rc != DL_OK)
		emit_layout_free(l);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Hostlist compression */

struct hl_ent {
	const char *host;
	size_t plen;		/* prefix length; the whole name if no number */
	int ndig;		/* digits of the number, 0: no number */
	unsigned long long num;
	size_t item;		/* index of the prefix in appearance order */
};

static int
hl_cmp(const void *a, const void *b)
{
	const struct hl_ent *x = a, *y = b;

	if (x->item != y->item)
		return x->item < y->item ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	if (x->ndig != y->ndig)
		return x->ndig < y->ndig ? -1 : 1;
	return 0;
}

/* Does num printed with zero padding to width w give the host's digits? */
static int
hl_fits(const struct hl_ent *h, unsigned long long num, int w)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%0*llu", w, num);
	return (int)strlen(buf) == h->ndig &&
	    memcmp(buf, h->host + h->plen, (size_t)h->ndig) == 0;
}

void
emit_hostlist(struct strbuf *sb, const char *const *hosts, size_t n)
{
	struct hl_ent *h = xcalloc(n + 1, sizeof(*h));
	unsigned char *done = xcalloc(n + 1, 1);
	size_t nh = 0, nitems = 0, start = sb->len;

	for (size_t i = 0; i < n; i++) {
		const char *s = hosts[i];
		size_t len = strlen(s), d = 0, k;
		int dup = 0;

		for (k = 0; k < nh; k++)
			if (strcmp(h[k].host, s) == 0)
				dup = 1;
		if (dup)
			continue;
		while (d < len && isdig((unsigned char)s[len - 1 - d]))
			d++;
		h[nh].host = s;
		/* A name that is all digits, or a number too long for an
		 * unsigned long long, is left as it is. */
		if (d == 0 || d == len || d > 18) {
			h[nh].plen = len;
			h[nh].ndig = 0;
		} else {
			h[nh].plen = len - d;
			h[nh].ndig = (int)d;
			h[nh].num = strtoull(s + len - d, NULL, 10);
		}
		/* Items: one per prefix of numbered names, one per other. */
		for (k = 0; k < nh; k++)
			if (h[k].ndig > 0 && h[nh].ndig > 0 &&
			    h[k].plen == h[nh].plen &&
			    memcmp(h[k].host, s, h[k].plen) == 0)
				break;
		h[nh].item = k < nh ? h[k].item : nitems++;
		nh++;
	}
	qsort(h, nh, sizeof(*h), hl_cmp);
	/*
	 * One bracket per prefix.  A range extends while a name with the
	 * next number prints with the width of the range's first number:
	 * Slurm pads every number of a range to the width of its first, so
	 * n9,n10 is n[9-10] and n09,n10 is n[09-10], but n9,n010 are two.
	 */
	for (size_t k = 0; k < nh; k++) {
		size_t end = k, nr = 0;
		int single = 1;

		if (done[k])
			continue;
		if (sb->len > start)
			sb_addc(sb, ',');
		if (h[k].ndig == 0) {
			sb_adds(sb, h[k].host);
			done[k] = 1;
			continue;
		}
		while (end < nh && h[end].item == h[k].item)
			end++;
		sb_add(sb, h[k].host, h[k].plen);
		sb_addc(sb, '[');
		for (size_t i = k; i < end; i++) {
			unsigned long long hi = h[i].num;
			int w = h[i].ndig;

			if (done[i])
				continue;
			done[i] = 1;
			for (size_t j = i + 1; j < end &&
			    h[j].num <= hi + 1; j++) {
				if (!done[j] && h[j].num == hi + 1 &&
				    hl_fits(&h[j], hi + 1, w)) {
					done[j] = 1;
					hi++;
				}
			}
			if (nr++ > 0)
				sb_addc(sb, ',');
			sb_addf(sb, "%0*llu", w, h[i].num);
			if (hi != h[i].num) {
				sb_addf(sb, "-%0*llu", w, hi);
				single = 0;
			}
		}
		if (nr == 1 && single) {
			/* One name alone needs no brackets. */
			sb->len -= h[k].plen + 1 + (size_t)h[k].ndig;
			sb->buf[sb->len] = '\0';
			sb_add(sb, h[k].host, h[k].plen + (size_t)h[k].ndig);
		} else {
			sb_addc(sb, ']');
		}
	}
	free(done);
	free(h);
}

/* ------------------------------------------------------------------ */
/* Files */

struct strbuf *
emit_add_file(struct emit_ctx *x, const char *name, int exec)
{
	struct emit_file *f;

	x->files = xgrow(x->files, &x->cap, x->nfiles + 1, sizeof(*x->files));
	f = x->files[x->nfiles++] = xcalloc(1, sizeof(*f));
	f->name = xstrdup(name);
	sb_init(&f->body);
	f->exec = exec;
	return &f->body;
}

const char *
emit_rank_host(const struct emit_ctx *x, int r)
{
	return x->c->nodes[x->l.ranks[r].node].host;
}

const char *
emit_node_host(const struct emit_ctx *x, int i)
{
	return x->c->nodes[x->l.nodes[i]].host;
}

void
emit_script_head(struct strbuf *sb, const char *name, const char *what)
{
	sb_addf(sb, "# %s - %s\n", name, what);
	sb_adds(sb, "# Generated by dlplan " DLPLAN_VERSION "; run \"dlplan "
	    "emit\" again rather than editing it.\n");
}

void
emit_env_comment(struct strbuf *sb, int torchrun)
{
	if (torchrun)
		sb_adds(sb, "# DLPLAN_TORCHRUN (default \"torchrun\") is split "
		    "into words, so it may\n# carry options: "
		    "DLPLAN_TORCHRUN=\"torchrun --redirects 1 --tee 1\".\n");
	else
		sb_adds(sb, "# DLPLAN_PYTHON (default \"python3\") is split into "
		    "words, so it may carry\n# options: "
		    "DLPLAN_PYTHON=\"python3 -u\".\n");
}

const char *
emit_why(const struct emit_layout *l)
{
	if (l->uniform)
		return NULL;
	return l->contiguous ? "its nodes run different numbers of ranks" :
	    "a node's ranks are not consecutive";
}

/* "lo" or "lo-hi" for a range of ranks. */
static void
add_range(struct strbuf *sb, int lo, int hi)
{
	if (lo == hi)
		sb_addf(sb, "%d", lo);
	else
		sb_addf(sb, "%d-%d", lo, hi);
}

void
emit_torchrun_args(struct emit_ctx *x, struct strbuf *sb, const char *sep)
{
	/* Static rendezvous (torchrun's default) at the first host. */
	sb_addf(sb, "--nnodes=%d%s--nproc_per_node=%d%s--master_addr=",
	    x->l.nnodes, sep, x->l.count[0], sep);
	sb_addshq(sb, emit_node_host(x, 0));
	sb_addf(sb, "%s--master_port=%ld%s--no_python ", sep,
	    x->o->master_port, sep);
	sb_addshq(sb, x->worker_abs);
}

void
emit_node_ranks(struct emit_ctx *x, struct strbuf *sb, int i)
{
	int lo = -1, hi = -1, any = 0;

	for (int r = 0; r < x->l.nranks; r++) {
		if (x->l.ranks[r].node_rank != i)
			continue;
		if (lo >= 0 && r == hi + 1) {
			hi = r;
			continue;
		}
		if (lo >= 0) {
			if (any++)
				sb_addc(sb, ' ');
			add_range(sb, lo, hi);
		}
		lo = hi = r;
	}
	if (lo >= 0) {
		if (any)
			sb_addc(sb, ' ');
		add_range(sb, lo, hi);
	}
}
