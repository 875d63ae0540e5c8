/*
 * emit_worker.c - worker.sh, the wrapper every launcher starts the
 * training command through (emit.h).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <string.h>

#include "emit_int.h"
#include "sb.h"

/*
 * The mode "deepspeed" of worker.sh (part 0: its comment, part 1: its
 * environment).  DeepSpeed's launch.py gives rank r the local rank r mod
 * the host's count (deepspeed/launcher/launch.py:238-240), its place on
 * the host only when every host before it runs a multiple of that count;
 * its GPUs are the first LOCAL_SIZE of the host (launcher/runner.py:396,
 * launch.py:182), as emit_deepspeed.c's local_gpus() checks.
 */
static void
ds_mode(struct strbuf *sb, int part)
{
	if (part == 0) {
		sb_adds(sb, "#\n"
		    "# deepspeed.sh starts it as \"worker.sh deepspeed\": "
		    "DeepSpeed's launcher sets\n"
		    "# RANK, WORLD_SIZE and LOCAL_SIZE, and LOCAL_RANK to RANK "
		    "modulo LOCAL_SIZE,\n"
		    "# which is not the rank's place on its host when hosts "
		    "run different counts;\n"
		    "# this script sets LOCAL_RANK and LOCAL_WORLD_SIZE from "
		    "the plan.\n");
		return;
	}
	sb_adds(sb,
	    "if [ \"$mode\" = deepspeed ]; then\n"
	    "\tif [ \"${WORLD_SIZE-}\" != \"$world_size\" ] || "
	    "[ \"${LOCAL_SIZE-}\" != \"$local_world_size\" ]; then\n"
	    "\t\techo \"worker.sh: rank $rank was started with "
	    "WORLD_SIZE '${WORLD_SIZE-}' and LOCAL_SIZE "
	    "'${LOCAL_SIZE-}'; the plan has $world_size and "
	    "$local_world_size\" >&2\n"
	    "\t\texit 2\n"
	    "\tfi\n"
	    "\tLOCAL_RANK=$local_rank "
	    "LOCAL_WORLD_SIZE=$local_world_size\n"
	    "\texport LOCAL_RANK LOCAL_WORLD_SIZE\n"
	    "el");
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
	if (x->lc->ds_worker)
		ds_mode(sb, 0);
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
	    "mpi)\trank=${OMPI_COMM_WORLD_RANK-${PMI_RANK-}} ;;\n");
	if (x->lc->ds_worker)
		sb_adds(sb, "deepspeed)\trank=${RANK-} ;;\n"
		    "*)\techo \"worker.sh: unknown mode '$mode' (expected "
		    "srun, mpi or deepspeed)\" >&2\n");
	else
		sb_adds(sb, "*)\techo \"worker.sh: unknown mode '$mode' "
		    "(expected srun or mpi)\" >&2\n");
	sb_adds(sb, "\texit 2 ;;\n"
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
	    "fi\n");
	if (x->lc->ds_worker)
		ds_mode(sb, 1);
	sb_adds(sb,
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
	if (x->fw_sh) {
		struct strbuf path = STRBUF_INIT;

		/* The framework's script beside worker.sh; --script is its
		 * program, the words its extra arguments. */
		sb_addf(&path, "%s/%s", x->dir_abs, x->fw_sh);
		sb_addshq(sb, path.buf);
		sb_free(&path);
	} else if (x->o->script) {
		sb_adds(sb, "${DLPLAN_PYTHON:-python3} ");
		sb_addshq(sb, x->o->script);
	}
	for (int i = 0; i < x->o->nargs; i++) {
		if (i > 0 || x->o->script || x->fw_sh)
			sb_addc(sb, ' ');
		sb_addshq(sb, x->o->args[i]);
	}
	if (x->lc->ds_worker) {
		struct strbuf path = STRBUF_INIT;

		/* deepspeed.initialize() reads args.deepspeed_config. */
		sb_addf(&path, "%s/ds_config.json", x->dir_abs);
		sb_adds(sb, " '--deepspeed_config' ");
		sb_addshq(sb, path.buf);
		sb_free(&path);
	}
	sb_addc(sb, '\n');
	return DL_OK;
}
