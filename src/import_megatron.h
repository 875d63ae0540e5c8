/*
 * import_megatron.h - a Megatron-LM command line as a dlplan plan.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * import_megatron() reads the arguments of Megatron-LM's pretrain_gpt.py
 * (at commit d98e8a64ddf3, the one emit_megatron.c writes for) and builds
 * the plan that command line runs on the hosts given: TP x PP x DP over
 * their GPUs, Megatron rank r on the r-th GPU in host order (host by host,
 * local GPU 0 first), which is where torchrun puts rank r when the hosts
 * are given node ranks in that order.  The plan is structure only
 * (groups, stages, options, runtime megatron, status given); the caller
 * prices it with cost_eval().
 *
 * Every argument is known: those that fix the plan are read and checked
 * against the model's "dlplan model" line; those that change neither
 * memory nor time (data, tokenizer, learning rate, logging, checkpoints)
 * are skipped; those that change time in a way the cost model does not
 * price (communication overlap, kernel fusions, a batch ramp-up) are
 * accepted with a warning; those that change the plan in a way dlplan
 * cannot express (interleaved stages, context or expert parallelism,
 * FP8, FSDP) and any argument not in the table are errors naming it.
 */
#ifndef DL_IMPORT_MEGATRON_H
#define DL_IMPORT_MEGATRON_H

#include "cluster.h"
#include "model.h"
#include "plan.h"

/* A host of the run: node index and the GPUs used, 0 .. gpus - 1. */
struct import_host {
	int node;
	int gpus;
};

/*
 * The hosts of the comma-separated list "NODE[:GPUS],..." (node ids of
 * nodes.csv, each once; GPUS defaults to all of the node's), or every
 * node with all its GPUs in nodes.csv order when list is NULL.  A new
 * array of *n hosts, or NULL with e set (DL_EUSAGE).
 */
struct import_host *import_hosts(const struct dl_cluster *c,
    const char *list, int *n, struct dl_err *e);

/*
 * Fill *p (plan_init()ed here) from the n words args[].  On failure *p is
 * freed and e names the argument: DL_EUSAGE for an argument Megatron
 * itself would reject or dlplan does not know, DL_EINFEAS for a
 * configuration dlplan cannot express, DL_EDATA when the arguments and
 * the model disagree.  Warnings (arguments accepted but not priced) go to
 * dl_warn() unless dl_verbose < 0.
 */
int import_megatron(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const struct import_host *hosts, int nhosts,
    char *const *args, int n, struct dl_err *e);

#endif
