/*
 * test_emit.c - the launch-file emitters: hostlist compression, option
 * checks, the rank layout, and the files written for plans built here.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit.h"
#include "emit_int.h"
#include "fixture.h"
#include "plan.h"
#include "sb.h"
#include "tap.h"

static void
hostlist_is(const char *want, size_t n, ...)
{
	const char *hosts[16];
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		hosts[i] = va_arg(ap, const char *);
	va_end(ap);
	sb_adds(&sb, "");
	emit_hostlist(&sb, hosts, n);
	is_str(sb.buf, want, want);
	sb_free(&sb);
}

static void
test_hostlist(void)
{
	hostlist_is("n[1-4]", 4, "n1", "n2", "n3", "n4");
	hostlist_is("n[1-4]", 4, "n3", "n1", "n4", "n2");
	hostlist_is("n[1-4],gpu[01-03]", 7, "n1", "n2", "n3", "n4", "gpu01",
	    "gpu02", "gpu03");
	hostlist_is("n[9-11]", 3, "n9", "n10", "n11");
	hostlist_is("n[09-10]", 2, "n09", "n10");
	hostlist_is("n[1,3-4,7]", 4, "n7", "n4", "n1", "n3");
	hostlist_is("login", 1, "login");
	hostlist_is("n5", 1, "n5");
	hostlist_is("n1", 2, "n1", "n1");
	hostlist_is("a.b,c_d-[1-2]", 3, "a.b", "c_d-1", "c_d-2");
	hostlist_is("n[9,010-011]", 3, "n9", "n010", "n011");
	hostlist_is("n[001-002,010]", 3, "n010", "n001", "n002");
	hostlist_is("n[1-2,01]", 3, "n1", "n01", "n2");
	hostlist_is("n[1-3,01-02]", 5, "n02", "n1", "n01", "n2", "n3");
	hostlist_is("123,124", 2, "123", "124");
	hostlist_is("rack1-n[1-2],rack2-n1", 3, "rack1-n1", "rack1-n2",
	    "rack2-n1");
	hostlist_is("x,n[1-2],y", 4, "x", "n2", "y", "n1");
	hostlist_is("gpu[0-1]", 2, "gpu0", "gpu1");
	hostlist_is("h1234567890123456789", 1, "h1234567890123456789");
	hostlist_is("", 0);
}

/* s with newlines shown as "\\n", for test names. */
static const char *
vis(const char *s)
{
	static char buf[4][64];
	static int k;
	char *b = buf[k++ % 4];
	size_t n = 0;

	for (; *s && n + 3 < sizeof(buf[0]); s++) {
		if (*s == '\n') {
			b[n++] = '\\';
			b[n++] = 'n';
		} else {
			b[n++] = *s;
		}
	}
	b[n] = '\0';
	return b;
}

static void
test_valid(void)
{
	static const char *const good_time[] = { "30", "30:00", "1:00:00",
	    "2-0", "2-12:00", "2-12:00:00", "UNLIMITED", "infinite" };
	static const char *const bad_time[] = { "", "1:2:3:4", "1-", "-1",
	    "a", "1;ls", "1\n2", "$(x)", "1 2", "1:", ":1", "2-1:2:3:4",
	    "1234567890", "`id`" };
	static const char *const good_part[] = { "gpu", "gpu,debug",
	    "a.b-c_d" };
	static const char *const bad_part[] = { "", "gpu,", ",gpu",
	    "gpu debug", "g;x", "g\nx", "`x`", "$(x)", "'q'", "a\"b",
	    "g|x", "g&x", "g>x" };

	for (size_t i = 0; i < ARRAY_SIZE(good_time); i++)
		ok(emit_valid_time(good_time[i]), "time '%s' is valid",
		    good_time[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad_time); i++)
		ok(!emit_valid_time(bad_time[i]), "time '%s' is refused",
		    vis(bad_time[i]));
	for (size_t i = 0; i < ARRAY_SIZE(good_part); i++)
		ok(emit_valid_partition(good_part[i]), "partition '%s' is valid",
		    good_part[i]);
	for (size_t i = 0; i < ARRAY_SIZE(bad_part); i++)
		ok(!emit_valid_partition(bad_part[i]),
		    "partition '%s' is refused", vis(bad_part[i]));
	ok(emit_valid_host("node-1.example.org"), "a host name is valid");
	ok(!emit_valid_host("n 1") && !emit_valid_host("") &&
	    !emit_valid_host("n;1") && !emit_valid_host("n\n1"),
	    "hosts with blanks, ';', newlines or nothing are refused");
}

static void
test_opts(void)
{
	char *args[] = { "python3", "train.py", NULL };
	struct emit_opts o;
	struct dl_err e = { 0 };

	emit_opts_init(&o);
	o.outdir = "out";
	o.plan_path = "plan.json";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "no command is refused");
	is_str(e.msg, "no training command given (expected --script FILE or "
	    "-- COMMAND [ARGS...])", "no command message");
	o.args = args;
	o.nargs = 2;
	is_int(emit_check_opts(&o, &e), DL_OK, "a command is enough");
	o.master_port = 0;
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "port 0 is refused");
	o.master_port = 65536;
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "port 65536 is refused");
	o.master_port = 29500;
	o.partition = "gpu;reboot";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "a hostile partition is "
	    "refused");
	is_str(e.msg, "option '--partition': 'gpu;reboot' is not a partition "
	    "name (expected letters, digits, '.', '_', '-', names separated "
	    "by ',')", "partition message");
	o.partition = NULL;
	o.time = "1:00\n#SBATCH --uid=0";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "a time with a newline is "
	    "refused");
	o.time = NULL;
	o.job_name = "a b";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "a job name with a blank "
	    "is refused");
}

/* The #SBATCH pass-through options: what is accepted and refused. */
static void
test_sbatch_opts(void)
{
	const char *good[] = { "--mail-type=END", "--comment=a 'b' $(c)",
	    "--x" };
	const char *bad[] = { "-N2", "--", "x", "--x\n#SBATCH --uid=0",
	    "--x=a\\b", "" };
	struct emit_opts o;
	struct dl_err e = { 0 };

	emit_opts_init(&o);
	is_int(emit_check_sbatch(&o, &e), DL_OK, "no pass-through options");
	o.account = "proj-1.a";
	o.qos = "high_prio";
	o.output = "logs/%x-%j it's #1.out";
	o.error = "/var/log/run.err";
	o.sbatch_args = good;
	o.nsbatch_args = 3;
	is_int(emit_check_sbatch(&o, &e), DL_OK, "good values are accepted");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.sbatch_args = &bad[i];
		o.nsbatch_args = 1;
		ok(emit_check_sbatch(&o, &e) == DL_EUSAGE,
		    "--sbatch-arg '%s' is refused", bad[i]);
	}
	is_str(e.msg, "option '--sbatch-arg': '' is not an sbatch option "
	    "(expected '--NAME' or '--NAME=VALUE' without newline or "
	    "backslash)", "sbatch-arg message");
	o.nsbatch_args = 0;
	o.account = "a b";
	is_int(emit_check_sbatch(&o, &e), DL_EUSAGE, "an account with a "
	    "blank is refused");
	o.account = NULL;
	o.qos = "";
	is_int(emit_check_sbatch(&o, &e), DL_EUSAGE, "an empty QOS is "
	    "refused");
	o.qos = NULL;
	o.output = "a\nb";
	is_int(emit_check_sbatch(&o, &e), DL_EUSAGE, "an output path with a "
	    "newline is refused");
	o.output = NULL;
	o.error = "a\\b";
	is_int(emit_check_sbatch(&o, &e), DL_EUSAGE, "an error path with a "
	    "backslash is refused");
	is_str(e.msg, "option '--error': 'a\\b' is not a log path (expected "
	    "a non-empty path without newline or backslash)",
	    "error message");
}

/* Plans built by hand. */
static struct dl_group *
add_group(struct dl_plan *p, long mb)
{
	struct dl_group *g;

	p->groups = xreallocarray(p->groups, (size_t)p->ngroups + 1,
	    sizeof(*p->groups));
	g = &p->groups[p->ngroups++];
	memset(g, 0, sizeof(*g));
	g->micro_batches = mb;
	return g;
}

static void
add_stage(struct dl_group *g, int node, int first, int last, int k, ...)
{
	struct dl_stage *st;
	va_list ap;

	g->stages = xreallocarray(g->stages, (size_t)g->nstages + 1,
	    sizeof(*g->stages));
	st = &g->stages[g->nstages++];
	memset(st, 0, sizeof(*st));
	st->node = node;
	st->ngpus = k;
	st->first = first;
	st->last = last;
	va_start(ap, k);
	for (int j = 0; j < k; j++) {
		st->gpus[j] = va_arg(ap, int);
		st->tp_share[j] = 1.0 / k;
	}
	va_end(ap);
}

static const char nodes_csv[] =
    "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,host\n"
    "a,s,4,A100,312,80,2400,200,gpu01\n"
    "b,s,4,A100,312,80,2400,200,gpu02\n"
    "c,s,2,T4,65,16,64,25,cpu9\n";

/*
 * Two groups of two TP-2 stages; row i of units is stage i % 2 of group
 * i / 2: its node and its two GPUs.
 */
static void
plan_2x2(struct dl_plan *p, const int units[4][3])
{
	static const int layers[4][2] = { { 0, 1 }, { 2, 3 }, { 0, 2 },
	    { 3, 3 } };
	struct dl_group *g = NULL;

	plan_init(p);
	for (int i = 0; i < 4; i++) {
		if (i % 2 == 0)
			g = add_group(p, i == 0 ? 3 : 1);
		add_stage(g, units[i][0], layers[i][0], layers[i][1], 2,
		    units[i][1], units[i][2]);
	}
}

/* Group 0 on a, group 1 on b: uniform. */
static void
plan_uniform(struct dl_plan *p)
{
	static const int u[4][3] = { { 0, 0, 1 }, { 0, 2, 3 }, { 1, 1, 0 },
	    { 1, 2, 3 } };

	plan_2x2(p, u);
}

/* Each group across a and b: a runs ranks 0-1 and 4-5. */
static void
plan_interleaved(struct dl_plan *p)
{
	static const int u[4][3] = { { 0, 0, 1 }, { 1, 0, 1 }, { 0, 2, 3 },
	    { 1, 2, 3 } };

	plan_2x2(p, u);
}

/* c runs rank 0, a ranks 1-4: consecutive but uneven. */
static void
plan_uneven(struct dl_plan *p)
{
	struct dl_group *g;

	plan_init(p);
	g = add_group(p, 4);
	add_stage(g, 2, 0, 0, 1, 1);
	add_stage(g, 0, 1, 3, 4, 3, 2, 1, 0);
}

static void
test_layout(struct dl_cluster *c)
{
	struct emit_layout l;
	struct dl_plan p;
	struct dl_err e = { 0 };

	plan_uniform(&p);
	is_int(emit_layout(&l, &p, c, &e), DL_OK, "uniform layout");
	is_int(l.nranks, 8, "uniform: 8 ranks");
	is_int(l.nnodes, 2, "uniform: 2 nodes");
	ok(l.uniform && l.contiguous, "uniform: uniform and contiguous");
	is_int(l.max_gpus, 4, "uniform: GPUs 0 to 3 used");
	ok(l.ranks[4].node == 1 && l.ranks[4].gpu == 1 &&
	    l.ranks[4].local_rank == 0 && l.ranks[4].group == 1 &&
	    l.ranks[4].node_rank == 1 && l.ranks[4].tp_rank == 0,
	    "uniform: rank 4 is b's first rank, GPU 1, group 1");
	emit_layout_free(&l);
	plan_free(&p);

	plan_interleaved(&p);
	is_int(emit_layout(&l, &p, c, &e), DL_OK, "interleaved layout");
	ok(!l.uniform && !l.contiguous, "interleaved: not contiguous");
	ok(l.ranks[4].node == 0 && l.ranks[4].local_rank == 2 &&
	    l.ranks[4].node_rank == 0, "interleaved: rank 4 is a's third");
	is_int(l.count[0], 4, "interleaved: a runs 4 ranks");
	emit_layout_free(&l);
	plan_free(&p);

	plan_uneven(&p);
	is_int(emit_layout(&l, &p, c, &e), DL_OK, "uneven layout");
	ok(!l.uniform && l.contiguous, "uneven: contiguous, not uniform");
	ok(l.nodes[0] == 2 && l.nodes[1] == 0 && l.count[0] == 1 &&
	    l.count[1] == 4 && l.first[1] == 1,
	    "uneven: node order c, a with 1 and 4 ranks");
	emit_layout_free(&l);

	p.groups[0].stages[1].gpus[2] = 3;
	is_int(emit_layout(&l, &p, c, &e), DL_EDATA, "a GPU used twice");
	is_str(e.msg, "GPU 3 of node 'a' is used twice", "GPU used twice "
	    "message");
	p.groups[0].stages[0].gpus[0] = 2;
	is_int(emit_layout(&l, &p, c, &e), DL_EDATA, "a GPU out of range");
	is_str(e.msg, "group 0 stage 0 uses GPU 2 of node 'c', which has 2 "
	    "GPUs", "GPU out of range message");
	p.groups[0].stages[0].node = 3;
	is_int(emit_layout(&l, &p, c, &e), DL_EDATA, "a node out of range");
	is_str(e.msg, "group 0 stage 0 is on node index 3, but the cluster "
	    "has 3 nodes", "node out of range message");
	plan_free(&p);
}

static char *
slurp(const char *dir, const char *name)
{
	char path[600], *data;
	size_t len = 0, got;
	FILE *f;

	/*
	 * Not read_file(): a file it reads is an input of the run, which
	 * the next emit into the same directory may not replace.
	 */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "r")) == NULL)
		return NULL;
	data = xmalloc(1 << 20);
	while ((got = fread(data + len, 1, (1 << 20) - 1 - len, f)) > 0)
		len += got;
	fclose(f);
	data[len] = '\0';
	return data;
}

static int
is_exec(const char *dir, const char *name)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 && (st.st_mode & S_IXUSR);
}

static int
contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}

static void
test_files(struct fixture *f, struct dl_cluster *c)
{
	char *args[] = { "--lr", "0.1", "it's $(rm -rf /)", NULL };
	char out[300], launch[320], *s;
	struct emit_result r;
	struct emit_opts o;
	struct dl_plan p;
	struct dl_err e = { 0 };

	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(launch, sizeof(launch), "%s/launch", out);
	emit_opts_init(&o);
	o.outdir = out;
	o.plan_path = "/plans/p.json";
	o.script = "train.py";
	o.args = args;
	o.nargs = 3;
	o.partition = "gpu";
	o.time = "1-00:00";
	plan_uniform(&p);

	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "slurm: written");
	is_int((long)r.nfiles, 2, "slurm: two files");
	ok(r.nfiles == 2 && strcmp(r.files[0] + strlen(out),
	    "/launch/worker.sh") == 0 && strcmp(r.files[1] + strlen(out),
	    "/launch/plan.sbatch") == 0, "slurm: worker.sh and plan.sbatch");
	ok(!r.per_rank, "slurm: torchrun form");
	emit_result_free(&r);
	s = slurp(launch, "plan.sbatch");
	ok(contains(s, "#!/bin/sh\n#SBATCH --job-name=dlplan\n"
	    "#SBATCH --nodes=2\n#SBATCH --nodelist=gpu[01-02]\n"
	    "#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:4\n"
	    "#SBATCH --exclusive\n#SBATCH --time=1-00:00\n"
	    "#SBATCH --partition=gpu\n#\n"), "slurm: #SBATCH lines first");
	ok(contains(s, "DLPLAN_NODES='gpu01 gpu02'\n"),
	    "slurm: node-rank order by host");
	ok(contains(s, "--nnodes=2 \\\n\t--nproc_per_node=4 \\\n"
	    "\t--master_addr='gpu01' \\\n\t--master_port=29500 \\\n"
	    "\t--no_python '"), "slurm: torchrun options");
	ok(is_exec(launch, "plan.sbatch"), "slurm: plan.sbatch is executable");
	free(s);
	s = slurp(launch, "worker.sh");
	ok(contains(s, "plan='/plans/p.json'\n"), "worker: plan path");
	ok(contains(s, "4)\tnode='b' host='gpu02' gpu=1 local_rank=0 "
	    "local_world_size=4\n\tgroup=1 stage=0 layers='0:2' "
	    "micro_batches=1\n\ttp_rank=0 tp_size=2 tp_share='0.5' ;;\n"),
	    "worker: rank 4's row");
	ok(contains(s, "exec ${DLPLAN_PYTHON:-python3} 'train.py' '--lr' "
	    "'0.1' 'it'\\''s $(rm -rf /)'\n"), "worker: command quoted");
	ok(is_exec(launch, "worker.sh"), "worker: executable");
	free(s);

	o.launcher = "srun";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "srun: written");
	ok(r.per_rank && r.nfiles == 3, "srun: per-rank, three files");
	emit_result_free(&r);
	s = slurp(launch, "slurm-hosts");
	is_str(s, "gpu01\ngpu01\ngpu01\ngpu01\ngpu02\ngpu02\ngpu02\ngpu02\n",
	    "srun: slurm-hosts has one line per rank");
	free(s);
	s = slurp(launch, "plan.sbatch");
	ok(contains(s, "#SBATCH --ntasks=8\n") &&
	    contains(s, "srun --ntasks=8 --distribution=arbitrary "
	    "--kill-on-bad-exit=1 '") && contains(s, "/worker.sh' srun\n"),
	    "srun: one task per rank through worker.sh srun");
	free(s);

	o.launcher = "hostfile";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "hostfile: written");
	emit_result_free(&r);
	s = slurp(launch, "hostfile");
	is_str(s, "gpu01 slots=4\ngpu02 slots=4\n", "hostfile: slots");
	free(s);

	o.launcher = "torchrun";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "torchrun: written");
	ok(r.nfiles == 3, "torchrun: worker.sh and two node scripts");
	emit_result_free(&r);
	s = slurp(launch, "torchrun-b.sh");
	ok(contains(s, "exec ${DLPLAN_TORCHRUN:-torchrun} --node_rank=1 "
	    "\\\n\t--nnodes=2"), "torchrun: b is node rank 1");
	free(s);
	plan_free(&p);

	plan_interleaved(&p);
	o.launcher = "hostfile";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_EINFEAS,
	    "hostfile: interleaved ranks refused");
	is_str(e.msg, "a hostfile cannot place the plan's ranks: node 'a' "
	    "runs ranks 0-1 4-5, which are not consecutive (use --launcher "
	    "slurm, srun or torchrun)", "hostfile: refusal message");
	o.launcher = "slurm";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "slurm: interleaved");
	ok(r.per_rank, "slurm: interleaved plan runs one task per rank");
	emit_result_free(&r);
	s = slurp(launch, "slurm-hosts");
	is_str(s, "gpu01\ngpu01\ngpu02\ngpu02\ngpu01\ngpu01\ngpu02\ngpu02\n",
	    "slurm: slurm-hosts follows the ranks");
	free(s);
	o.launcher = "torchrun";
	is_int(emit_launch(&p, c, &o, &r, &e), DL_OK, "torchrun: interleaved");
	emit_result_free(&r);
	s = slurp(launch, "torchrun-a.sh");
	ok(contains(s, "RANK=4 LOCAL_RANK=2 '") &&
	    !contains(s, "${DLPLAN_TORCHRUN"),
	    "torchrun: interleaved plan starts ranks directly");
	free(s);
	plan_free(&p);

	/* Nothing is replaced when one file cannot be written. */
	plan_uneven(&p);
	o.launcher = "slurm";
	snprintf(out, sizeof(out), "%s/out2", f->dir);
	o.outdir = out;
	mkdir(out, 0777);
	snprintf(launch, sizeof(launch), "%s/launch", out);
	mkdir(launch, 0777);
	snprintf(launch, sizeof(launch), "%s/launch/plan.sbatch", out);
	mkdir(launch, 0777);
	is_int(emit_launch(&p, c, &o, &r, &e), DL_ESYS,
	    "a directory in the way is an I/O error");
	ok(contains(e.msg, "Is a directory"), "its message");
	snprintf(launch, sizeof(launch), "%s/launch/worker.sh", out);
	ok(access(launch, F_OK) != 0, "and no file was written");
	snprintf(launch, sizeof(launch), "%s/launch/plan.sbatch", out);
	rmdir(launch);
	snprintf(launch, sizeof(launch), "%s/launch", out);
	rmdir(launch);
	rmdir(out);
	plan_free(&p);

	/* Leave the fixture directory empty for fx_end. */
	snprintf(launch, sizeof(launch), "rm -rf '%s/out'", f->dir);
	ok(system(launch) == 0, "clean up");
}

/*
 * The launcher table: one row per --launcher word, in its order, and
 * nothing else; each row complete; a name that is no row refused.
 */
static void
test_table(void)
{
	char *args[] = { "python3", "train.py", NULL };
	const struct emit_launcher *lc = emit_launcher_table;
	struct strbuf words = STRBUF_INIT;
	struct emit_opts o;
	struct dl_err e = { 0 };
	int whole = 1;

	for (; lc->name != NULL; lc++) {
		sb_addf(&words, "%s%s", words.len ? "|" : "", lc->name);
		whole &= lc->emit != NULL && lc->files != NULL &&
		    lc->files[0] != '\0' && lc->runtime >= -1 &&
		    lc->runtime < DL_NRUNTIMES;
	}
	is_str(words.buf, emit_launchers, "emit_launchers names the table's "
	    "rows in order");
	ok(whole, "every row has its generator, files and runtime");
	sb_free(&words);
	is_int(emit_launcher_runtime("megatron"), RUNTIME_MEGATRON,
	    "megatron takes megatron plans");
	is_int(emit_launcher_runtime("torchtitan"), RUNTIME_TORCHTITAN,
	    "torchtitan takes torchtitan plans");
	is_int(emit_launcher_runtime("slurm"), -1, "slurm takes any plan");
	is_int(emit_launcher_runtime("pbs"), -1, "no launcher: -1");
	emit_opts_init(&o);
	o.outdir = "out";
	o.plan_path = "plan.json";
	o.args = args;
	o.nargs = 2;
	is_str(o.launcher, "slurm", "the default launcher is slurm");
	o.launcher = "pbs";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "an unknown launcher is "
	    "refused");
	is_str(e.msg, "unknown launcher 'pbs' (expected slurm|torchrun|srun|"
	    "hostfile|megatron|deepspeed|torchtitan)", "its message");
	o.launcher = "megatron";
	o.nargs = 0;
	is_int(emit_check_opts(&o, &e), DL_OK, "a framework launcher runs "
	    "its own program: no command needed");
	o.launcher = "deepspeed";
	is_int(emit_check_opts(&o, &e), DL_EUSAGE, "deepspeed needs one");
}

int
main(void)
{
	struct fixture f;
	struct dl_cluster c;

	test_hostlist();
	test_valid();
	test_opts();
	test_table();
	test_sbatch_opts();
	fx_begin(&f);
	fx_file(&f, "nodes.csv", nodes_csv);
	if (fx_load(&f, &c, NULL) != 0)
		return 2;
	test_layout(&c);
	test_files(&f, &c);
	cluster_free(&c);
	fx_end(&f);
	return done_testing();
}
