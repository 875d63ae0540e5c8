/*
 * emit.h - launch files for a plan: a Slurm batch script (slurm, srun),
 * per-node torchrun scripts, a DeepSpeed/MPI hostfile, and the frameworks'
 * own configurations (megatron, deepspeed, torchtitan); the launchers are
 * the rows of the table in emit.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * dlplan(1), dlplan emit.  emit_launch() writes every file of one launcher
 * into OUTDIR/launch/ (the directory "dlplan plan -o OUTDIR" writes the
 * plan into), all or nothing: each file is first written to a temporary
 * file beside its target and only renamed into place when all of them
 * were written.  Inside an output set (cmd_set_begin(), as plan and
 * emit call it) the files of an earlier run that this one does not write
 * are removed, torchrun-<node>.sh scripts of nodes the new plan no longer
 * uses and other launchers' files included.
 *
 * Hosts.  A node's launcher host (nodes.csv "host", default its id) is
 * what the files name it by: Slurm's node name in --nodelist, slurm-hosts
 * and the SLURMD_NODENAME checks, the hostfile's host, and, for the first
 * node of the plan, the rendezvous address MASTER_ADDR, so it must also
 * resolve from every node.
 *
 * Rank numbering is plan.h's (plan_rank_table(): groups in plan order,
 * stages in pipeline order, a stage's GPUs in gpus[] order), the order of
 * plan.csv's rows and of plan.json's "ranks"; launchers start exactly
 * these ranks: global rank r of torch.distributed is plan rank r, on the
 * planned node and GPU.  A node's
 * "node rank" is its position in the order of first appearance in that
 * rank list; its ranks' LOCAL_RANK is their position among the node's
 * ranks in rank order.
 *
 * Files (all scripts are POSIX sh, every value in them single-quoted or a
 * number dlplan formatted, comments hold only validated ids):
 *
 *	worker.sh	Every launcher starts the training command through it.
 *			It maps the rank to the plan (a table generated from
 *			the plan), exports DLPLAN_PLAN, DLPLAN_RANK,
 *			DLPLAN_NODE, DLPLAN_GPU, DLPLAN_GROUP, DLPLAN_STAGE,
 *			DLPLAN_LAYERS ("first:last"), DLPLAN_MICROBATCHES,
 *			DLPLAN_TP_SHARE, DLPLAN_TP_RANK and DLPLAN_TP_SIZE,
 *			and execs the command.  "worker.sh" takes the rank
 *			from RANK (set by torchrun, DeepSpeed or the
 *			torchrun-<node>.sh scripts); "worker.sh srun" from
 *			SLURM_PROCID and "worker.sh mpi" from
 *			OMPI_COMM_WORLD_RANK or PMI_RANK, and these two also
 *			set RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
 *			MASTER_ADDR and MASTER_PORT for env:// themselves.
 *			Under Slurm it refuses to run a rank on another node
 *			than planned (SLURMD_NODENAME is compared with the
 *			node's host).
 *	plan.sbatch	(slurm, srun) #SBATCH lines for the job (name, nodes,
 *			nodelist as a compact hostlist, tasks, gres, exclusive,
 *			time, partition), then one srun step.  Launcher slurm
 *			on a "uniform" plan (every node runs the same number of
 *			ranks and each node's ranks are consecutive) starts one
 *			torchrun per node with static rendezvous at the first
 *			host of the plan, --node_rank chosen by the node's
 *			name (Slurm numbers the nodes of a job in its own
 *			order, so $SLURM_NODEID would not follow the plan).
 *			Otherwise, and always for launcher srun, one task per
 *			rank placed by SLURM_HOSTFILE=slurm-hosts with
 *			--distribution=arbitrary, each running "worker.sh
 *			srun".  When the plan uses different GPU counts
 *			on different nodes (largest local index + 1), a
 *			Slurm heterogeneous job instead: one component per
 *			count with its own --gres, one srun task per node
 *			across all components (--het-group), running
 *			torchrun as above or, instead of the per-rank form,
 *			starting the node's ranks itself with the env://
 *			variables set.  Optional account, QOS, log paths
 *			and pass-through #SBATCH lines go into every
 *			component.
 *	slurm-hosts	(per-rank form only) the host of rank r on line r+1.
 *	torchrun-<node>.sh  (torchrun) one per node, to be run on that node:
 *			torchrun with static rendezvous on a uniform plan;
 *			otherwise the node's ranks are started directly with
 *			the env:// variables set.
 *	hostfile	(hostfile) "host slots=N" per node in node-rank order.
 *			Only a plan whose nodes' ranks are consecutive can be
 *			expressed so; others are refused (DL_EINFEAS).
 *
 * Run-time overrides: DLPLAN_TORCHRUN (default "torchrun") and
 * DLPLAN_PYTHON (default "python3", used with a --script) are expanded
 * unquoted, so they split into words at blanks (with pathname expansion
 * off) and may carry options, e.g. DLPLAN_TORCHRUN="torchrun --redirects
 * 1 --tee 1" or DLPLAN_PYTHON="python3 -u".  Nothing else in the scripts
 * is expanded as words.
 */
#ifndef DL_EMIT_H
#define DL_EMIT_H

#include <stddef.h>

#include "cluster.h"
#include "model.h"
#include "plan.h"
#include "sb.h"
#include "util.h"

/*
 * The launchers' names, "slurm|torchrun|...", one per row of the launcher
 * table (emit.c) in its order: the words of --launcher (opt_choice()).
 */
extern const char emit_launchers[];
/*
 * The runtime (enum dl_runtime) that the plans of launcher name must be
 * made for (a framework launcher's own), or -1 when it takes any plan or
 * is no launcher.
 */
int emit_launcher_runtime(const char *name);
#define EMIT_DEFAULT_PORT 29500
#define EMIT_DEFAULT_JOB_NAME "dlplan"
#define EMIT_MAX_SBATCH_ARGS 32	/* --sbatch-arg given at most so often */

struct emit_opts {
	const char *launcher;	/* a word of emit_launchers */
	const char *outdir;	/* files go to OUTDIR/launch/ */
	const char *plan_path;	/* the plan the workers read (DLPLAN_PLAN);
				   made absolute, need not exist yet */
	/*
	 * The plan's JSON when it has no file the workers can read (it came
	 * from standard input), else NULL: written as launch/plan.json with
	 * the other files, and DLPLAN_PLAN names that copy.
	 */
	const char *plan_text;
	/*
	 * The training command: with script set, each rank runs
	 * "$DLPLAN_PYTHON SCRIPT ARGS..."; without, ARGS is the whole
	 * command (args[0] is the program).  At least one must be given.
	 * A relative script is found from the job's working directory.
	 */
	const char *script;
	char *const *args;
	int nargs;
	/*
	 * The plan's model (NULL: not known).  The framework launchers
	 * megatron and torchtitan need it (its "dlplan model" line: the
	 * sizes they build the model from; which rows are transformer
	 * blocks) and refuse a plan without it (DL_EINFEAS).
	 */
	const struct dl_model *model;
	long master_port;	/* 1..65535 */
	const char *job_name;	/* Slurm job name */
	const char *partition;	/* NULL: the cluster's default */
	const char *time;	/* Slurm time limit, NULL: the default */
	/*
	 * More #SBATCH lines (NULL/0: none): --account, --qos, --output,
	 * --error, and each of sbatch_args as given (emit_check_sbatch()).
	 */
	const char *account, *qos, *output, *error;
	const char *const *sbatch_args;
	int nsbatch_args;
};

/* Defaults: launcher slurm, port EMIT_DEFAULT_PORT, job name "dlplan". */
void emit_opts_init(struct emit_opts *o);

/*
 * Check the options that end up in scripts: partition (a comma-separated
 * list of [A-Za-z0-9._-] names), time (Slurm's MM, MM:SS, HH:MM:SS,
 * D-HH, D-HH:MM, D-HH:MM:SS, or UNLIMITED), job name (an id), port, and
 * that a training command is given.  DL_EUSAGE with a message naming the
 * option ("--partition").  emit_launch() calls it too.
 */
int emit_check_opts(const struct emit_opts *o, struct dl_err *e);

/*
 * Check the #SBATCH pass-through options (emit_check_opts() calls it):
 * account and qos are names ([A-Za-z0-9._-]{1,63}); output and error are
 * non-empty paths (sbatch's filename patterns such as %j allowed) without
 * a newline or backslash; each sbatch_args entry starts with "--" and has
 * no newline or backslash.  DL_EUSAGE naming the option and the value.
 */
int emit_check_sbatch(const struct emit_opts *o, struct dl_err *e);

/*
 * What emit_launch() wrote, for the caller to report: the paths of the
 * files (as OUTDIR/launch/NAME, OUTDIR as given) and whether the ranks
 * are started one process per rank instead of through torchrun (always
 * for srun; for slurm and torchrun when the plan is not uniform, and why).
 */
struct emit_result {
	size_t nfiles;
	char **files;
	int per_rank;
	const char *why;	/* why torchrun could not start the plan
				   (static), NULL when it does */
	const char *instead;	/* with why: what starts one process per
				   rank instead ("plan.sbatch starts") */
};
void emit_result_free(struct emit_result *r);

/*
 * Write the launch files of o->launcher for plan p, made for cluster c
 * (node indices of p refer to c).  r may be NULL.  Errors: DL_EUSAGE (bad
 * options), DL_EDATA (the plan does not fit the cluster: a node index or
 * GPU out of range, a GPU used twice, an invalid host), DL_EINFEAS (the
 * launcher cannot place the ranks as planned: hostfile on a plan whose
 * nodes' ranks are not consecutive), DL_ESYS (cannot create the directory
 * or write a file; nothing was replaced then).
 *
 * The planner calls it after writing plan.json:
 *
 *	struct emit_opts eo;
 *
 *	emit_opts_init(&eo);
 *	eo.launcher = "slurm";
 *	eo.outdir = outdir;
 *	eo.plan_path = "OUTDIR/plan.json";
 *	eo.args = argv_after_dashdash; eo.nargs = n;
 *	rc = emit_launch(&plan, &cluster, &eo, NULL, &e);
 */
int emit_launch(const struct dl_plan *p, const struct dl_cluster *c,
    const struct emit_opts *o, struct emit_result *r, struct dl_err *e);

/*
 * The ranks of a plan as launchers see them (rank numbering above), with
 * the checks a hand-made plan needs: node indices and GPUs in range, no
 * GPU used twice, valid ids and hosts (DL_EDATA).
 */
struct emit_rank {
	int node;		/* node index in the cluster */
	int gpu;		/* local GPU index */
	int group, stage;
	int tp_rank, tp_size;	/* index in the stage's gpus[], ngpus */
	int node_rank;		/* position of node in layout.nodes */
	int local_rank;		/* position among the node's ranks */
};
struct emit_layout {
	int nranks;
	struct emit_rank *ranks;
	int nnodes;
	int *nodes;		/* node indices in node-rank order */
	int *count;		/* ranks per node, by node rank */
	int *first;		/* lowest rank of each node, by node rank */
	int contiguous;		/* every node's ranks are consecutive */
	int uniform;		/* contiguous, and the same count everywhere:
				   torchrun with --node_rank can start it */
	int max_gpus;		/* largest local GPU index used + 1 */
};
int emit_layout(struct emit_layout *l, const struct dl_plan *p,
    const struct dl_cluster *c, struct dl_err *e);
void emit_layout_free(struct emit_layout *l);

/*
 * Append a Slurm hostlist expression for hosts (n of them, any order,
 * duplicates ignored) to sb: hosts that end in a number and share the
 * prefix and zero-padding are folded into ranges, n1,n2,n3,gpu01,gpu02
 * -> "n[1-3],gpu[01-02]".  Prefixes keep the order of first appearance,
 * numbers ascend.  Hosts must be [A-Za-z0-9._-] (not checked here).
 */
void emit_hostlist(struct strbuf *sb, const char *const *hosts, size_t n);

/*
 * Is s safe and valid as a Slurm time limit, a partition list, a
 * launcher hostname ([A-Za-z0-9._-]{1,253})?
 */
int emit_valid_time(const char *s);
int emit_valid_partition(const char *s);
int emit_valid_host(const char *s);

#endif
