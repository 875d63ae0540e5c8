/*
 * emit.c - what every launcher shares: the rank layout, the hostlist
 * compressor, option checks, the worker wrapper, and writing the files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"

void
emit_opts_init(struct emit_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->launcher = EMIT_SLURM;
	o->master_port = EMIT_DEFAULT_PORT;
	o->job_name = EMIT_DEFAULT_JOB_NAME;
}

void
emit_result_free(struct emit_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++)
		free(r->files[i]);
	free(r->files);
	r->files = NULL;
	r->nfiles = 0;
}

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

	return n >= 1 && n <= 253 && strspn(s, ok) == n;
}

int
emit_check_opts(const struct emit_opts *o, struct dl_err *e)
{
	if (o->launcher < EMIT_SLURM || o->launcher > EMIT_HOSTFILE)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "unknown launcher %d", o->launcher);
	if (o->outdir == NULL || o->outdir[0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no output directory given");
	if (o->plan_path == NULL || o->plan_path[0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no plan path given");
	if (o->partition && !emit_valid_partition(o->partition))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--partition': '%s' is not a partition name "
		    "(expected letters, digits, '.', '_', '-', names "
		    "separated by ',')", o->partition);
	if (o->time && !emit_valid_time(o->time))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--time': '%s' is not a Slurm time limit "
		    "(expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, "
		    "D-HH:MM:SS or UNLIMITED)", o->time);
	if (o->job_name == NULL || !valid_id(o->job_name))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--job-name': '%s' is not a job name (expected "
		    "1 to 63 letters, digits, '.', '_', '-')",
		    o->job_name ? o->job_name : "");
	if (o->master_port < 1 || o->master_port > 65535)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--master-port': %ld is out of range [1, 65535]",
		    o->master_port);
	if (o->script == NULL && o->nargs == 0)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no training command given (expected --script FILE or "
		    "-- COMMAND [ARGS...])");
	if (o->script != NULL && o->script[0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--script': empty file name");
	if (o->script == NULL && o->args[0][0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "empty training command");
	return DL_OK;
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
		if (!valid_id(c->nodes[i].id))
			return dl_seterr(e, DL_EDATA, NULL, 0, 0,
			    "node %zu has an invalid id", i + 1);
		if (!emit_valid_host(c->nodes[i].host))
			return dl_seterr(e, DL_EDATA, NULL, 0, 0,
			    "node '%s' has an invalid host name",
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

/*
 * worker.sh: the rank table and the command.  Comments say what the
 * file does; the table holds the plan.
 */
int
emit_worker(struct emit_ctx *x, struct dl_err *e)
{
	struct strbuf *sb = emit_add_file(x, "worker.sh", 1);
	const struct emit_layout *l = &x->l;

	(void)e;
	sb_adds(sb, "#!/bin/sh\n");
	emit_script_head(sb, "worker.sh", "start one rank of a dlplan plan");
	sb_adds(sb,
	    "#\n"
	    "# Usage: worker.sh [srun|mpi]\n"
	    "#   (no argument)  the launcher set RANK, LOCAL_RANK and "
	    "WORLD_SIZE (torchrun,\n"
	    "#                  DeepSpeed, the torchrun-<node>.sh scripts); "
	    "they must match\n"
	    "#                  the plan\n"
	    "#   srun           the rank is SLURM_PROCID\n"
	    "#   mpi            the rank is OMPI_COMM_WORLD_RANK or PMI_RANK\n"
	    "# With srun or mpi this script sets RANK, LOCAL_RANK, WORLD_SIZE,\n"
	    "# LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT for env:// "
	    "itself.\n"
	    "#\n"
	    "# Every rank gets DLPLAN_PLAN, DLPLAN_RANK, DLPLAN_NODE, "
	    "DLPLAN_GPU (local GPU\n"
	    "# index), DLPLAN_GROUP, DLPLAN_STAGE, DLPLAN_LAYERS "
	    "(first:last, 0-based,\n"
	    "# inclusive), DLPLAN_MICROBATCHES, DLPLAN_TP_RANK, "
	    "DLPLAN_TP_SIZE and\n"
	    "# DLPLAN_TP_SHARE.  Under Slurm a rank started on another node "
	    "than planned\n"
	    "# stops with an error.\n");
	if (x->o->script)
		emit_env_comment(sb, 0);
	sb_adds(sb, "set -f\n\nplan=");
	sb_addshq(sb, x->plan_abs);
	sb_addf(sb, "\nworld_size=%d\nmaster_addr=", l->nranks);
	sb_addshq(sb, emit_node_host(x, 0));
	sb_addf(sb, "\nmaster_port=%ld\n\n", x->o->master_port);
	sb_adds(sb,
	    "mode=${1-}\n"
	    "case $mode in\n"
	    "'')\trank=${RANK-} ;;\n"
	    "srun)\trank=${SLURM_PROCID-} ;;\n"
	    "mpi)\trank=${OMPI_COMM_WORLD_RANK-${PMI_RANK-}} ;;\n"
	    "*)\techo \"worker.sh: unknown mode '$mode' (expected srun or "
	    "mpi)\" >&2\n"
	    "\texit 2 ;;\n"
	    "esac\n\n"
	    "case $rank in\n");
	for (int r = 0; r < l->nranks; r++) {
		const struct emit_rank *rk = &l->ranks[r];
		const struct dl_group *g = &x->p->groups[rk->group];
		const struct dl_stage *st = &g->stages[rk->stage];
		char num[DL_DBL_BUFSZ];

		sb_addf(sb, "%d)\tnode=", r);
		sb_addshq(sb, x->c->nodes[rk->node].id);
		sb_adds(sb, " host=");
		sb_addshq(sb, x->c->nodes[rk->node].host);
		sb_addf(sb, " gpu=%d local_rank=%d local_world_size=%d\n",
		    rk->gpu, rk->local_rank, l->count[rk->node_rank]);
		sb_addf(sb, "\tgroup=%d stage=%d layers='%d:%d' "
		    "micro_batches=%ld\n", rk->group, rk->stage, st->first,
		    st->last, g->micro_batches);
		sb_addf(sb, "\ttp_rank=%d tp_size=%d tp_share=", rk->tp_rank,
		    rk->tp_size);
		sb_addshq(sb, fmt_double(num, st->tp_share[rk->tp_rank]));
		sb_adds(sb, " ;;\n");
	}
	sb_adds(sb,
	    "*)\techo \"worker.sh: rank '$rank' is not in the plan (world "
	    "size $world_size)\" >&2\n"
	    "\texit 2 ;;\n"
	    "esac\n\n"
	    "if [ -n \"${SLURMD_NODENAME-}\" ] && "
	    "[ \"$SLURMD_NODENAME\" != \"$host\" ]; then\n"
	    "\techo \"worker.sh: rank $rank is planned for '$host' but runs "
	    "on '$SLURMD_NODENAME'\" >&2\n"
	    "\texit 2\n"
	    "fi\n"
	    "if [ -n \"$mode\" ]; then\n"
	    "\tRANK=$rank LOCAL_RANK=$local_rank WORLD_SIZE=$world_size\n"
	    "\tLOCAL_WORLD_SIZE=$local_world_size MASTER_ADDR=$master_addr "
	    "MASTER_PORT=$master_port\n"
	    "\texport RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE "
	    "MASTER_ADDR MASTER_PORT\n"
	    "elif [ \"${WORLD_SIZE-}\" != \"$world_size\" ] || "
	    "[ \"${LOCAL_RANK-}\" != \"$local_rank\" ]; then\n"
	    "\techo \"worker.sh: rank $rank was started with WORLD_SIZE "
	    "'${WORLD_SIZE-}' and LOCAL_RANK '${LOCAL_RANK-}'; the plan "
	    "has $world_size and $local_rank\" >&2\n"
	    "\texit 2\n"
	    "fi\n\n"
	    "DLPLAN_PLAN=$plan DLPLAN_RANK=$rank DLPLAN_NODE=$node "
	    "DLPLAN_GPU=$gpu\n"
	    "DLPLAN_GROUP=$group DLPLAN_STAGE=$stage DLPLAN_LAYERS=$layers\n"
	    "DLPLAN_MICROBATCHES=$micro_batches DLPLAN_TP_RANK=$tp_rank "
	    "DLPLAN_TP_SIZE=$tp_size\n"
	    "DLPLAN_TP_SHARE=$tp_share\n"
	    "export DLPLAN_PLAN DLPLAN_RANK DLPLAN_NODE DLPLAN_GPU "
	    "DLPLAN_GROUP DLPLAN_STAGE\n"
	    "export DLPLAN_LAYERS DLPLAN_MICROBATCHES DLPLAN_TP_RANK "
	    "DLPLAN_TP_SIZE DLPLAN_TP_SHARE\n"
	    "exec ");
	if (x->o->script) {
		sb_adds(sb, "${DLPLAN_PYTHON:-python3} ");
		sb_addshq(sb, x->o->script);
	}
	for (int i = 0; i < x->o->nargs; i++) {
		if (i > 0 || x->o->script)
			sb_addc(sb, ' ');
		sb_addshq(sb, x->o->args[i]);
	}
	sb_addc(sb, '\n');
	return DL_OK;
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

/* ------------------------------------------------------------------ */
/* Writing */

static char *
join(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	if (strcmp(dir, ".") == 0)
		return xstrdup(name);
	sb_adds(&sb, dir);
	if (sb.len > 0 && sb.buf[sb.len - 1] != '/')
		sb_addc(&sb, '/');
	sb_adds(&sb, name);
	return sb_detach(&sb);
}

/* Write every file of x into dir, all or nothing. */
static int
write_files(struct emit_ctx *x, const char *dir, struct emit_result *r,
    struct dl_err *e)
{
	struct afile *af = xcalloc(x->nfiles + 1, sizeof(*af));
	char **paths = xcalloc(x->nfiles + 1, sizeof(*paths));
	size_t opened = 0, i;
	mode_t um = umask(0);
	int rc = DL_OK;

	umask(um);
	for (i = 0; i < x->nfiles; i++) {
		struct stat sbuf;

		paths[i] = join(dir, x->files[i]->name);
		/* rename() would fail on a directory, after other files
		 * were already replaced: refuse first. */
		if (stat(paths[i], &sbuf) == 0 && S_ISDIR(sbuf.st_mode)) {
			rc = dl_seterr(e, DL_ESYS, paths[i], 0, 0,
			    "cannot write file: Is a directory");
			goto fail;
		}
	}
	for (i = 0; i < x->nfiles; i++) {
		struct emit_file *f = x->files[i];

		if ((rc = af_open(&af[i], paths[i], e)) != DL_OK)
			goto fail;
		opened++;
		/* (Not the mode of a device written through.) */
		if (f->exec && af[i].tmp &&
		    fchmod(fileno(af[i].fp), 0777 & ~um) != 0) {
			rc = dl_seterr(e, DL_ESYS, paths[i], 0, 0,
			    "cannot make file executable: %s",
			    strerror(errno));
			goto fail;
		}
		if (f->body.len > 0 && fwrite(f->body.buf, 1, f->body.len,
		    af[i].fp) != f->body.len) {
			rc = dl_seterr(e, DL_ESYS, paths[i], 0, 0,
			    "cannot write file: %s", strerror(errno));
			goto fail;
		}
		/* On disk before any file is renamed (a full disk may only
		 * tell at fsync). */
		errno = 0;
		if (fflush(af[i].fp) != 0 || (fsync(fileno(af[i].fp)) != 0 &&
		    errno != EINVAL && errno != EROFS)) {
			rc = dl_seterr(e, DL_ESYS, paths[i], 0, 0,
			    "cannot write file: %s", strerror(errno));
			goto fail;
		}
	}
	af_hold_signals(1);
	for (i = 0; i < x->nfiles; i++) {
		rc = af_commit(&af[i], e);
		opened--;
		if (rc != DL_OK) {
			/* Later files are still temporary: drop them. */
			for (size_t k = i + 1; k < x->nfiles; k++)
				af_abort(&af[k]);
			opened = 0;
			af_hold_signals(0);
			goto out;
		}
	}
	af_hold_signals(0);
	if (r) {
		r->files = paths;
		r->nfiles = x->nfiles;
		paths = NULL;
	}
	goto out;
fail:
	for (i = 0; i < opened; i++)
		af_abort(&af[i]);
out:
	if (paths) {
		for (i = 0; i < x->nfiles; i++)
			free(paths[i]);
		free(paths);
	}
	free(af);
	return rc;
}

static void
ctx_free(struct emit_ctx *x)
{
	for (size_t i = 0; i < x->nfiles; i++) {
		free(x->files[i]->name);
		sb_free(&x->files[i]->body);
		free(x->files[i]);
	}
	free(x->files);
	free(x->plan_abs);
	free(x->dir_abs);
	free(x->worker_abs);
	emit_layout_free(&x->l);
}

int
emit_launch(const struct dl_plan *p, const struct dl_cluster *c,
    const struct emit_opts *o, struct emit_result *r, struct dl_err *e)
{
	struct emit_ctx x;
	char *dir = NULL, *outabs = NULL;
	int rc;

	if (r)
		memset(r, 0, sizeof(*r));
	if ((rc = emit_check_opts(o, e)) != DL_OK)
		return rc;
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.c = c;
	x.o = o;
	if ((rc = emit_layout(&x.l, p, c, e)) != DL_OK)
		return rc;
	/* Links stay as given: the launchers name the files as the user did. */
	if ((x.plan_abs = path_abs(o->plan_path, 0, e)) == NULL ||
	    (outabs = path_abs(o->outdir, 0, e)) == NULL) {
		rc = DL_ESYS;
		goto out;
	}
	x.dir_abs = join(outabs, "launch");
	x.worker_abs = join(x.dir_abs, "worker.sh");
	if ((rc = emit_worker(&x, e)) != DL_OK)
		goto out;
	switch (o->launcher) {
	case EMIT_SLURM:
	case EMIT_SRUN:
		rc = emit_slurm(&x, e);
		break;
	case EMIT_TORCHRUN:
		rc = emit_torchrun(&x, e);
		break;
	default:
		rc = emit_hostfile(&x, e);
		break;
	}
	if (rc != DL_OK)
		goto out;
	dir = join(o->outdir, "launch");
	if ((rc = mkdir_p(dir, e)) != DL_OK)
		goto out;
	if ((rc = write_files(&x, dir, r, e)) != DL_OK)
		goto out;
	if (r) {
		r->per_rank = x.per_rank;
		if (o->launcher == EMIT_SLURM || o->launcher == EMIT_TORCHRUN)
			r->why = emit_why(&x.l);
	}
out:
	free(dir);
	free(outabs);
	ctx_free(&x);
	return rc;
}
