/*
 * emit_torchrun.c - torchrun-<node>.sh, one script per node, for clusters
 * without Slurm.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * On a uniform plan (emit.h) each script runs torchrun with static
 * rendezvous and its node's --node_rank.  torchrun starts the same number
 * of processes on every node and numbers them node by node, so on any
 * other plan the script starts its node's ranks itself, each with RANK,
 * LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT
 * set for env://, and waits for them.
 */
#include "emit_int.h"
#include "sb.h"

static void
all_nodes(struct emit_ctx *x, struct strbuf *sb)
{
	for (int i = 0; i < x->l.nnodes; i++)
		sb_addf(sb, "%s%s", i > 0 ? " " : "", x->c->nodes[x->l.nodes[i]].id);
}

static void
torchrun_node(struct emit_ctx *x, struct strbuf *sb, int i)
{
	sb_adds(sb, "#\n# Run torchrun-<node>.sh on each node of the plan at about "
	    "the same time\n# (");
	all_nodes(x, sb);
	sb_addf(sb, "); they meet at %s port %ld (static rendezvous).\n",
	    emit_node_host(x, 0), x->o->master_port);
	emit_env_comment(sb, 1);
	if (x->o->script)
		emit_env_comment(sb, 0);
	sb_addf(sb, "set -f\n\nexec ${DLPLAN_TORCHRUN:-torchrun} "
	    "--node_rank=%d \\\n\t", i);
	emit_torchrun_args(x, sb, " \\\n\t");
	sb_addc(sb, '\n');
}

static void
direct_node(struct emit_ctx *x, struct strbuf *sb, int i)
{
	const struct emit_layout *l = &x->l;

	sb_addf(sb, "#\n# torchrun cannot start this plan: %s.\n"
	    "# So this script starts the node's ranks itself, with the env:// "
	    "variables\n# set.  Run torchrun-<node>.sh on each node of the "
	    "plan at about the same\n# time (", emit_why(l));
	all_nodes(x, sb);
	sb_addf(sb, "); rank 0 listens at %s port %ld.\n",
	    emit_node_host(x, 0), x->o->master_port);
	if (x->o->script)
		emit_env_comment(sb, 0);
	sb_adds(sb, "set -f\n\nMASTER_ADDR=");
	sb_addshq(sb, emit_node_host(x, 0));
	sb_addf(sb, " MASTER_PORT=%ld WORLD_SIZE=%d LOCAL_WORLD_SIZE=%d\n",
	    x->o->master_port, l->nranks, l->count[i]);
	sb_adds(sb, "export MASTER_ADDR MASTER_PORT WORLD_SIZE "
	    "LOCAL_WORLD_SIZE\n"
	    "pids=\n"
	    "trap 'kill $pids 2>/dev/null' HUP INT TERM\n");
	for (int r = 0; r < l->nranks; r++) {
		if (l->ranks[r].node_rank != i)
			continue;
		sb_addf(sb, "RANK=%d LOCAL_RANK=%d ", r, l->ranks[r].local_rank);
		sb_addshq(sb, x->worker_abs);
		sb_adds(sb, " &\npids=\"$pids $!\"\n");
	}
	sb_adds(sb,
	    "status=0\n"
	    "for pid in $pids; do\n"
	    "\twait \"$pid\" || status=$?\n"
	    "done\n"
	    "exit \"$status\"\n");
}

int
emit_torchrun(struct emit_ctx *x, struct dl_err *e)
{
	struct strbuf name = STRBUF_INIT, what = STRBUF_INIT;

	(void)e;
	x->per_rank = !x->l.uniform;
	for (int i = 0; i < x->l.nnodes; i++) {
		struct strbuf *sb;

		sb_reset(&name);
		sb_reset(&what);
		sb_addf(&name, "torchrun-%s.sh", x->c->nodes[x->l.nodes[i]].id);
		sb_addf(&what, "start node %s of a dlplan plan: ranks ",
		    x->c->nodes[x->l.nodes[i]].id);
		emit_node_ranks(x, &what, i);
		sb_addf(&what, " (node rank %d of %d)", i, x->l.nnodes);
		sb = emit_add_file(x, name.buf, 1);
		sb_adds(sb, "#!/bin/sh\n");
		emit_script_head(sb, name.buf, what.buf);
		if (x->per_rank)
			direct_node(x, sb, i);
		else
			torchrun_node(x, sb, i);
	}
	sb_free(&name);
	sb_free(&what);
	return DL_OK;
}
