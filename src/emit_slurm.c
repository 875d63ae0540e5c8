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
#include "sb.h"

/* Is s free of the characters #SBATCH values may not hold? */
static int
sbatch_safe(const char *s)
{
	return s[0] != '\0' && strpbrk(s, "\n\r\\") == NULL;
}

int
emit_check_sbatch(const struct emit_opts *o, struct dl_err *e)
{
	static const char *const what = "(expected 1 to 63 letters, digits, "
	    "'.', '_', '-')";
	static const char *const path = "(expected a non-empty path without "
	    "newline or backslash)";

	if (o->account && !valid_id(o->account))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
		    "'--account': '%s' is not an account name %s", o->account,
		    what);
	if (o->qos && !valid_id(o->qos))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '--qos': "
		    "'%s' is not a QOS name %s", o->qos, what);
	if (o->output && !sbatch_safe(o->output))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
		    "'--output': '%s' is not a log path %s", o->output, path);
	if (o->error && !sbatch_safe(o->error))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
		    "'--error': '%s' is not a log path %s", o->error, path);
	for (int i = 0; i < o->nsbatch_args; i++)
		if (strncmp(o->sbatch_args[i], "--", 2) != 0 ||
		    o->sbatch_args[i][2] == '\0' ||
		    !sbatch_safe(o->sbatch_args[i]))
			return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option "
			    "'--sbatch-arg': '%s' is not an sbatch option "
			    "(expected '--NAME' or '--NAME=VALUE' without "
			    "newline or backslash)", o->sbatch_args[i]);
	return DL_OK;
}

/*
 * The GPUs the plan uses on each node, by node rank: its largest local
 * GPU index + 1, the count "--gres=gpu:N" must ask for.  Returns whether
 * the count differs between nodes.
 */
static int
node_gpus(const struct emit_ctx *x, int *gpus)
{
	int mixed = 0;

	for (int i = 0; i < x->l.nnodes; i++)
		gpus[i] = 0;
	for (int r = 0; r < x->l.nranks; r++) {
		const struct emit_rank *k = &x->l.ranks[r];

		if (k->gpu + 1 > gpus[k->node_rank])
			gpus[k->node_rank] = k->gpu + 1;
	}
	for (int i = 1; i < x->l.nnodes; i++)
		mixed |= gpus[i] != gpus[0];
	return mixed;
}

/* The #SBATCH lines every component has after its gres. */
static void
sbatch_tail(struct emit_ctx *x, struct strbuf *sb)
{
	const struct emit_opts *o = x->o;

	sb_adds(sb, "#SBATCH --exclusive\n");
	if (o->time)
		sb_addf(sb, "#SBATCH --time=%s\n", o->time);
	if (o->partition)
		sb_addf(sb, "#SBATCH --partition=%s\n", o->partition);
	if (o->account)
		sb_addf(sb, "#SBATCH --account=%s\n", o->account);
	if (o->qos)
		sb_addf(sb, "#SBATCH --qos=%s\n", o->qos);
	if (o->output) {
		sb_adds(sb, "#SBATCH --output=");
		sb_addshq(sb, o->output);
		sb_addc(sb, '\n');
	}
	if (o->error) {
		sb_adds(sb, "#SBATCH --error=");
		sb_addshq(sb, o->error);
		sb_addc(sb, '\n');
	}
	for (int i = 0; i < o->nsbatch_args; i++) {
		sb_adds(sb, "#SBATCH ");
		sb_addshq(sb, o->sbatch_args[i]);
		sb_addc(sb, '\n');
	}
}

/*
 * The #SBATCH lines; hosts and options were validated before.  When the
 * plan uses the same GPU count on every node, one job asks every node
 * for it.  Otherwise Slurm's heterogeneous job: one component per GPU
 * count (in order of first appearance), separated by "#SBATCH hetjob",
 * each with its nodes and its own --gres; x->het is the number of
 * components (0 for one plain job).
 */
static void
sbatch_lines(struct emit_ctx *x, struct strbuf *sb, const int *gpus)
{
	const struct emit_layout *l = &x->l;
	const char **hosts = xcalloc((size_t)l->nnodes + 1, sizeof(*hosts));
	int *done = xcalloc((size_t)l->nnodes + 1, sizeof(*done));

	for (int i = 0; i < l->nnodes; i++) {
		size_t n = 0;

		if (done[i])
			continue;
		for (int j = i; j < l->nnodes; j++)
			if (!done[j] && (!x->het || gpus[j] == gpus[i])) {
				done[j] = 1;
				hosts[n++] = emit_node_host(x, j);
			}
		if (i > 0)
			sb_adds(sb, "#SBATCH hetjob\n");
		sb_addf(sb, "#SBATCH --job-name=%s\n", x->o->job_name);
		sb_addf(sb, "#SBATCH --nodes=%zu\n", n);
		sb_adds(sb, "#SBATCH --nodelist=");
		emit_hostlist(sb, hosts, n);
		sb_addc(sb, '\n');
		if (x->per_rank && !x->het)
			sb_addf(sb, "#SBATCH --ntasks=%d\n", l->nranks);
		else
			sb_adds(sb, "#SBATCH --ntasks-per-node=1\n");
		sb_addf(sb, "#SBATCH --gres=gpu:%d\n", x->het ? gpus[i] :
		    l->max_gpus);
		sbatch_tail(x, sb);
	}
	free(done);
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
	if (x->het)
		sb_addf(sb, "srun --het-group=0-%d --ntasks-per-node=1 "
		    "--kill-on-bad-exit=1 sh -c '\n", x->het - 1);
	else
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
	if (x->lc->fallback != NULL)	/* slurm, not srun */
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

/*
 * Heterogeneous job, ranks not startable by torchrun: one srun task per
 * node across all components (Slurm does not place a heterogeneous step
 * with --distribution=arbitrary), each starting its node's ranks with
 * the env:// variables set, as torchrun-<node>.sh does.  DLPLAN_LAYOUT
 * holds "host=rank,rank,..." per node; LOCAL_RANK is a rank's position
 * in its node's list.
 */
static void
per_node_form(struct emit_ctx *x, struct strbuf *sb)
{
	const struct emit_layout *l = &x->l;
	struct strbuf lay = STRBUF_INIT;

	sb_addf(sb, "#\n# The nodes use different GPU counts, so this is "
	    "a heterogeneous job of\n# %d components, one per count.  srun "
	    "starts one task per node; it starts\n# the node's ranks (world "
	    "size %d) with RANK, LOCAL_RANK, WORLD_SIZE,\n# LOCAL_WORLD_SIZE, "
	    "MASTER_ADDR and MASTER_PORT set for env://:\n", x->het,
	    l->nranks);
	node_table(x, sb);
	if (x->o->script)
		emit_env_comment(sb, 0);
	for (int i = 0; i < l->nnodes; i++) {
		const char *sep = "=";

		sb_addf(&lay, "%s%s", i > 0 ? " " : "", emit_node_host(x, i));
		for (int r = 0; r < l->nranks; r++)
			if (l->ranks[r].node_rank == i) {
				sb_addf(&lay, "%s%d", sep, r);
				sep = ",";
			}
	}
	sb_adds(sb, "set -f\n\nDLPLAN_LAYOUT=");
	sb_addshq(sb, lay.buf);
	sb_free(&lay);
	sb_adds(sb, " MASTER_ADDR=");
	sb_addshq(sb, emit_node_host(x, 0));
	sb_addf(sb, " MASTER_PORT=%ld WORLD_SIZE=%d\n"
	    "export DLPLAN_LAYOUT MASTER_ADDR MASTER_PORT WORLD_SIZE\n\n",
	    x->o->master_port, l->nranks);
	sb_addf(sb, "srun --het-group=0-%d --ntasks-per-node=1 "
	    "--kill-on-bad-exit=1 sh -c '\n", x->het - 1);
	/* A constant program: every value reaches it from the environment
	 * or as an argument. */
	sb_adds(sb,
	    "set -f\n"
	    "for entry in $DLPLAN_LAYOUT; do\n"
	    "\t[ \"${entry%%=*}\" = \"$SLURMD_NODENAME\" ] || continue\n"
	    "\tranks=${entry#*=}\n"
	    "\tIFS=,\n"
	    "\tLOCAL_WORLD_SIZE=0\n"
	    "\tfor r in $ranks; do LOCAL_WORLD_SIZE=$((LOCAL_WORLD_SIZE + 1)); "
	    "done\n"
	    "\texport LOCAL_WORLD_SIZE\n"
	    "\tpids= local_rank=0\n"
	    "\ttrap \"kill \\$pids 2>/dev/null\" HUP INT TERM\n"
	    "\tfor r in $ranks; do\n"
	    "\t\tRANK=$r LOCAL_RANK=$local_rank \"$1\" &\n"
	    "\t\tpids=\"$pids $!\"\n"
	    "\t\tlocal_rank=$((local_rank + 1))\n"
	    "\tdone\n"
	    "\tunset IFS\n"
	    "\tstatus=0\n"
	    "\tfor pid in $pids; do wait \"$pid\" || status=$?; done\n"
	    "\texit \"$status\"\n"
	    "done\n"
	    "echo \"plan.sbatch: node $SLURMD_NODENAME is not in the plan\" "
	    ">&2\n"
	    "exit 2' plan.sbatch ");
	sb_addshq(sb, x->worker_abs);
	sb_addc(sb, '\n');
}

int
emit_slurm(struct emit_ctx *x, struct dl_err *e)
{
	struct strbuf *sb = emit_add_file(x, "plan.sbatch", 1);
	int *gpus = xcalloc((size_t)x->l.nnodes + 1, sizeof(*gpus));

	(void)e;
	/* srun never starts torchrun; slurm does when it can. */
	x->per_rank = x->lc->fallback == NULL || !x->l.uniform;
	x->het = 0;
	if (node_gpus(x, gpus))
		for (int i = 0; i < x->l.nnodes; i++) {
			int first = 1;

			for (int j = 0; j < i; j++)
				first &= gpus[j] != gpus[i];
			x->het += first;
		}
	sb_adds(sb, "#!/bin/sh\n");
	sbatch_lines(x, sb, gpus);
	free(gpus);
	sb_adds(sb, "#\n");
	emit_script_head(sb, "plan.sbatch", x->per_rank && x->het ?
	    "run a dlplan plan under Slurm, one srun task per node" :
	    x->per_rank ?
	    "run a dlplan plan under Slurm, one srun task per rank" :
	    "run a dlplan plan under Slurm with torchrun");
	sb_adds(sb, "# Submit it with: sbatch plan.sbatch\n");
	if (x->per_rank && x->het)
		per_node_form(x, sb);
	else if (x->per_rank)
		per_rank_form(x, sb);
	else
		torchrun_form(x, sb);
	return DL_OK;
}
