/*
 * emit.c - emit_launch(): the launcher table, option checks, and writing
 * the files all or nothing.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The table below names every launcher, the files it writes and what
 * emit_launch() does differently for it; its generator lives in a file of
 * its own: slurm and srun (emit_slurm.c), torchrun (emit_torchrun.c),
 * hostfile (emit_hostfile.c), and the frameworks megatron, deepspeed and
 * torchtitan (emit_megatron.c, emit_deepspeed.c, emit_torchtitan.c, which
 * share emit_framework.c); worker.sh (emit_worker.c) is written for every
 * one of them.  They sit above what they share (emit_common.c, declared in
 * emit_int.h); nothing below calls up.  A new launcher is its file, its
 * generator's declaration in emit_int.h, and a row here with its word in
 * emit_launchers.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af.h"
#include "emit_int.h"
#include "path.h"
#include "sb.h"

#define NODE_SCRIPTS "the node scripts start"

const char emit_launchers[] = "slurm|torchrun|srun|hostfile|megatron|"
    "deepspeed|torchtitan";

const struct emit_launcher emit_launcher_table[] = {
	/* name, files, runtime, fw_sh, fallback, ds_worker, emit */
	{ "slurm", "plan.sbatch slurm-hosts", -1, NULL,
	    "plan.sbatch starts", 0, emit_slurm },
	{ "torchrun", "torchrun-*.sh", -1, NULL, NODE_SCRIPTS, 0,
	    emit_torchrun },
	{ "srun", "plan.sbatch slurm-hosts", -1, NULL, NULL, 0, emit_slurm },
	{ "hostfile", "hostfile", -1, NULL, NULL, 0, emit_hostfile },
	{ "megatron", "torchrun-*.sh megatron.args megatron.sh",
	    RUNTIME_MEGATRON, "megatron.sh", NODE_SCRIPTS, 0, emit_megatron },
	{ "deepspeed", "torchrun-*.sh hostfile ds_config.json deepspeed.sh "
	    "deepspeed-pipeline.json", RUNTIME_DEEPSPEED, NULL, NODE_SCRIPTS,
	    1, emit_deepspeed },
	{ "torchtitan", "torchrun-*.sh dlplan_torchtitan.py torchtitan.sh",
	    RUNTIME_TORCHTITAN, "torchtitan.sh", NODE_SCRIPTS, 0,
	    emit_torchtitan },
	{ NULL, NULL, 0, NULL, NULL, 0, NULL }
};

/* The row of launcher name, or NULL. */
static const struct emit_launcher *
launcher(const char *name)
{
	if (name == NULL)
		return NULL;
	for (const struct emit_launcher *lc = emit_launcher_table; lc->name;
	    lc++)
		if (strcmp(lc->name, name) == 0)
			return lc;
	return NULL;
}

int
emit_launcher_runtime(const char *name)
{
	const struct emit_launcher *lc = launcher(name);

	return lc ? lc->runtime : -1;
}

void
emit_opts_init(struct emit_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->launcher = "slurm";
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

int
emit_check_opts(const struct emit_opts *o, struct dl_err *e)
{
	const struct emit_launcher *lc = launcher(o->launcher);

	if (lc == NULL)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "unknown launcher "
		    "'%s' (expected %s)", o->launcher ? o->launcher : "",
		    emit_launchers);
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
	/* megatron and torchtitan run their own program: the words after
	 * "--" only add to its arguments, and may be none. */
	if (o->script == NULL && o->nargs == 0 && lc->fw_sh == NULL)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no training command given (expected --script FILE or "
		    "-- COMMAND [ARGS...])");
	if (o->script != NULL && o->script[0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--script': empty file name");
	if (o->script == NULL && lc->fw_sh == NULL &&
	    o->args[0][0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "empty training command");
	return emit_check_sbatch(o, e);
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

/* Is name one of the blank-separated fnmatch(3) patterns of pats? */
static int
listed(const char *name, const char *pats)
{
	char pat[128];

	for (const char *p = pats; *p != '\0';) {
		size_t n = strcspn(p, " ");

		if (n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (fnmatch(pat, name, 0) == 0)
				return 1;
		}
		p += n;
		p += strspn(p, " ");
	}
	return 0;
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
	x.lc = launcher(o->launcher);
	if ((rc = emit_layout(&x.l, p, c, e)) != DL_OK)
		return rc;
	/* Links stay as given: the launchers name the files as the user did. */
	if ((outabs = path_abs(o->outdir, 0, e)) == NULL) {
		rc = DL_ESYS;
		goto out;
	}
	x.dir_abs = join(outabs, "launch");
	if (o->plan_text)
		x.plan_abs = join(x.dir_abs, "plan.json");
	else if ((x.plan_abs = path_abs(o->plan_path, 0, e)) == NULL) {
		rc = DL_ESYS;
		goto out;
	}
	x.worker_abs = join(x.dir_abs, "worker.sh");
	x.fw_sh = x.lc->fw_sh;
	if ((rc = emit_worker(&x, e)) != DL_OK ||
	    (rc = x.lc->emit(&x, e)) != DL_OK)
		goto out;
	for (size_t i = 0; i < x.nfiles; i++)
		if (strcmp(x.files[i]->name, "worker.sh") != 0 &&
		    !listed(x.files[i]->name, x.lc->files)) {
			rc = dl_seterr(e, DL_ESYS, NULL, 0, 0, "internal error: "
			    "launcher '%s' wrote '%s', which its row of the "
			    "launcher table does not list", x.lc->name,
			    x.files[i]->name);
			goto out;
		}
	if (o->plan_text)
		sb_adds(emit_add_file(&x, "plan.json", 0), o->plan_text);
	dir = join(o->outdir, "launch");
	if ((rc = mkdir_p(dir, e)) != DL_OK)
		goto out;
	if ((rc = write_files(&x, dir, r, e)) != DL_OK)
		goto out;
	if (r) {
		r->per_rank = x.per_rank;
		if (x.lc->fallback != NULL) {
			r->why = emit_why(&x.l);
			r->instead = x.lc->fallback;
		}
	}
out:
	free(dir);
	free(outabs);
	ctx_free(&x);
	return rc;
}
