/*
 * emit_slurm.c - plan.sbatch for the slurm and srun launchers.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two forms (emit.h).  torchrun form: one srun task per node, each
 * running torchrun with static rendezvous; the node rank comes from the
 * node's name, looked up in DLPLAN_NODES, because $SLURM_NODEID numbers a
 * job's nodes in Slurm's order, not the plan's.  Per-rank form: one srun
 * task per rank, placed rank by rank with SLURM_HOSTFILE and
 * --distribution=arbitrary, each running "worker.sh srun".
 */
#include <stdlib.h>
#include <string.h>

#include "emit_int.h"

/* The #SBATCH lines; hosts and options were validated before. */
static void
sbatch_lines(struct emit_ctx *x, struct strbuf *sb)
{
	const struct emit_layout *l = &x->l;
	const char **hosts = xcalloc((size_t)l->nnodes + 1, sizeof(*hosts));

	for (int i = 0; i < l->nnodes; i++)
		hosts[i] = emit_node_host(x, i);
	sb_addf(sb, "#SBATCH --job-name=%s\n", x->o->job_name);
	sb_addf(sb, "#SBATCH --nodes=%d\n", l->nnodes);
	sb_adds(sb, "#SBATCH --nodelist=");
	emit_hostlist(sb, hosts, (size_t)l->nnodes);
	sb_addc(sb, '\n');
	if (x->per_rank)
		sb_addf(sb, "#SBATCH --ntasks=%d\n", l->nranks);
	else
		sb_adds(sb, "#SBATCH --ntasks-per-node=1\n");
	sb_addf(sb, "#SBATCH --gres=gpu:%d\n", l->max_gpus);
	sb_adds(sb, "#SBATCH --exclusive\n");
	if (x->o->time)
		sb_addf(sb, "#SBATCH --time=%s\n", x->o->time);
	if (x->o->partition)
		sb_addf(sb, "#SBATCH --partition=%s\n", x->o->partition);
	free(hosts);
}

/* "#   n1  node rank 0  ranks 0-1" for every node. */
static void
node_table(struct emit_ctx *x, struct strbuf *sb)
{
	for (int i = 0; i < x->l.nnodes; i++) {
		sb_addf(sb, "#   %s  node rank %d  ranks ", emit_node_host(x, i),
		    i);
		emit_node_ranks(x, sb, i);
		sb_addc(sb, '\n');
	}
}

static void
torchrun_form(struct emit_ctx *x, struct strbuf *sb)
{
	const struct emit_layout *l = &x->l;

	sb_addf(sb, "#\n# %d node%s run%s %d rank%s each (world size %d), "
	    "one torchrun per\n# node, with static rendezvous at %s port "
	    "%ld.  A node's --node_rank is\n# its position in DLPLAN_NODES, "
	    "the plan's node order ($SLURM_NODEID\n# follows Slurm's own "
	    "order), so every rank runs where the plan put it:\n",
	    l->nnodes, l->nnodes == 1 ? "" : "s", l->nnodes == 1 ? "s" : "",
	    l->count[0], l->count[0] == 1 ? "" : "s", l->nranks,
	    emit_node_host(x, 0), x->o->master_port);
	node_table(x, sb);
	emit_env_comment(sb, 1);
	if (x->o->script)
		emit_env_comment(sb, 0);
	sb_adds(sb, "set -f\n\nDLPLAN_NODES=");
	{
		struct strbuf nodes = STRBUF_INIT;

		for (int i = 0; i < l->nnodes; i++) {
			if (i > 0)
				sb_addc(&nodes, ' ');
			sb_adds(&nodes, emit_node_host(x, i));
		}
		sb_addshq(sb, nodes.buf);
		sb_free(&nodes);
	}
	sb_adds(sb, "\nexport DLPLAN_NODES\n\n");
	sb_addf(sb, "srun --nodes=%d --ntasks=%d --ntasks-per-node=1 "
	    "--kill-on-bad-exit=1 sh -c '\n", l->nnodes, l->nnodes);
	/* A constant program: every value reaches it as an argument. */
	sb_adds(sb,
	    "set -f\n"
	    "node_rank=0\n"
	    "for host in $DLPLAN_NODES; do\n"
	    "\tif [ \"$host\" = \"$SLURMD_NODENAME\" ]; then\n"
	    "\t\texec ${DLPLAN_TORCHRUN:-torchrun} "
	    "--node_rank=\"$node_rank\" \"$@\"\n"
	    "\tfi\n"
	    "\tnode_rank=$((node_rank + 1))\n"
	    "done\n"
	    "echo \"plan.sbatch: node $SLURMD_NODENAME is not in the plan\" "
	    ">&2\n"
	    "exit 2' plan.sbatch \\\n\t");
	emit_torchrun_args(x, sb, " \\\n\t");
	sb_addc(sb, '\n');
}

static void
per_rank_form(struct emit_ctx *x, struct strbuf *sb)
{
	const struct emit_layout *l = &x->l;
	struct strbuf *hosts;
	char *path;

	sb_adds(sb, "#\n");
	if (x->o->launcher == EMIT_SLURM)
		sb_addf(sb, "# torchrun cannot start this plan: %s.\n# So ",
		    emit_why(l));
	else
		sb_adds(sb, "# ");
	sb_addf(sb, "srun starts one task per rank (world size %d) on the "
	    "planned node:\n# SLURM_HOSTFILE (slurm-hosts) names the host of "
	    "rank r on line r+1, and\n# --distribution=arbitrary follows it; "
	    "worker.sh takes the rank from\n# SLURM_PROCID and sets RANK, "
	    "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and\n# MASTER_PORT for "
	    "env://.\n", l->nranks);
	node_table(x, sb);
	if (x->o->script)
		emit_env_comment(sb, 0);
	sb_adds(sb, "set -f\n\nSLURM_HOSTFILE=");
	path = xmalloc(strlen(x->dir_abs) + sizeof("/slurm-hosts"));
	strcpy(path, x->dir_abs);
	strcat(path, "/slurm-hosts");
	sb_addshq(sb, path);
	free(path);
	sb_adds(sb, "\nexport SLURM_HOSTFILE\n\n");
	sb_addf(sb, "srun --ntasks=%d --distribution=arbitrary "
	    "--kill-on-bad-exit=1 ", l->nranks);
	sb_addshq(sb, x->worker_abs);
	sb_adds(sb, " srun\n");

	hosts = emit_add_file(x, "slurm-hosts", 0);
	for (int r = 0; r < l->nranks; r++)
		sb_addf(hosts, "%s\n", emit_rank_host(x, r));
}

int
emit_slurm(struct emit_ctx *x, struct dl_err *e)
{
	struct strbuf *sb = emit_add_file(x, "plan.sbatch", 1);

	(void)e;
	x->per_rank = x->o->launcher == EMIT_SRUN || !x->l.uniform;
	sb_adds(sb, "#!/bin/sh\n");
	sbatch_lines(x, sb);
	sb_adds(sb, "#\n");
	emit_script_head(sb, "plan.sbatch", x->per_rank ?
	    "run a dlplan plan under Slurm, one srun task per rank" :
	    "run a dlplan plan under Slurm with torchrun");
	sb_adds(sb, "# Submit it with: sbatch plan.sbatch\n");
	if (x->per_rank)
		per_rank_form(x, sb);
	else
		torchrun_form(x, sb);
	return DL_OK;
}
