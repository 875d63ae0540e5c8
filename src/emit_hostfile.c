/*
 * emit_hostfile.c - a DeepSpeed/MPI hostfile: "host slots=N" per node.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * DeepSpeed and MPI (by-slot mapping) number ranks host by host in file
 * order, so lines follow the node-rank order and only a plan whose nodes'
 * ranks are consecutive can be written.  Start the ranks through
 * worker.sh: "deepspeed --hostfile hostfile --no_python --no_local_rank
 * worker.sh" (without --no_local_rank DeepSpeed appends --local_rank=N,
 * which worker.sh would take for its mode; launcher deepspeed writes that
 * line as deepspeed.sh) or
 * "mpirun --hostfile hostfile -np N worker.sh mpi".
 */
#include <string.h>

#include "emit_int.h"
#include "sb.h"

int
emit_hostfile(struct emit_ctx *x, struct dl_err *e)
{
	const struct emit_layout *l = &x->l;
	struct strbuf *sb;

	if (!l->contiguous) {
		for (int i = 0; i < l->nnodes; i++) {
			struct strbuf ranks = STRBUF_INIT;

			emit_node_ranks(x, &ranks, i);
			if (strchr(ranks.buf, ' ') == NULL) {
				sb_free(&ranks);
				continue;
			}
			dl_seterr(e, DL_EINFEAS, NULL, 0, 0, "a hostfile cannot "
			    "place the plan's ranks: node '%s' runs ranks %s, "
			    "which are not consecutive (use --launcher slurm, "
			    "srun or torchrun)", x->c->nodes[l->nodes[i]].id,
			    ranks.buf);
			sb_free(&ranks);
			return DL_EINFEAS;
		}
	}
	sb = emit_add_file(x, "hostfile", 0);
	for (int i = 0; i < l->nnodes; i++)
		sb_addf(sb, "%s slots=%d\n", emit_node_host(x, i), l->count[i]);
	return DL_OK;
}
