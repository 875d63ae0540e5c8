/*
 * emit.c - emit_launch(): option checks, the choice of launcher (a
 * switch on enum emit_launcher), and writing the files all or nothing.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The dispatcher sits above the seven launchers: slurm and srun
 * (emit_slurm.c), torchrun (emit_torchrun.c), hostfile (emit_hostfile.c),
 * and the frameworks megatron, deepspeed and torchtitan (emit_megatron.c,
 * emit_deepspeed.c, emit_torchtitan.c, which share emit_framework.c);
 * worker.sh (emit_worker.c) is written for every one of them.  They sit
 * above what they share (emit_common.c, declared in emit_int.h); nothing
 * below calls up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af.h"
#include "emit_int.h"
#include "path.h"
#include "sb.h"

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

/* Whether the launcher starts the framework's own program (fw_sh). */
static int
fw_start(int launcher)
{
	return launcher == EMIT_MEGATRON || launcher == EMIT_TORCHTITAN;
}

int
emit_check_opts(const struct emit_opts *o, struct dl_err *e)
{
	if (o->launcher < EMIT_SLURM || o->launcher > EMIT_TORCHTITAN)
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
	/* megatron and torchtitan run their own program: the words after
	 * "--" only add to its arguments, and may be none. */
	if (o->script == NULL && o->nargs == 0 && !fw_start(o->launcher))
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "no training command given (expected --script FILE or "
		    "-- COMMAND [ARGS...])");
	if (o->script != NULL && o->script[0] == '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0,
		    "option '--script': empty file name");
	if (o->script == NULL && !fw_start(o->launcher) &&
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
	if (fw_start(o->launcher))
		x.fw_sh = o->launcher == EMIT_MEGATRON ? "megatron.sh" :
		    "torchtitan.sh";
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
	case EMIT_MEGATRON:
		rc = emit_megatron(&x, e);
		break;
	case EMIT_DEEPSPEED:
		rc = emit_deepspeed(&x, e);
		break;
	case EMIT_TORCHTITAN:
		rc = emit_torchtitan(&x, e);
		break;
	default:
		rc = emit_hostfile(&x, e);
		break;
	}
	if (rc != DL_OK)
		goto out;
	if (o->plan_text)
		sb_adds(emit_add_file(&x, "plan.json", 0), o->plan_text);
	dir = join(o->outdir, "launch");
	if ((rc = mkdir_p(dir, e)) != DL_OK)
		goto out;
	if ((rc = write_files(&x, dir, r, e)) != DL_OK)
		goto out;
	if (r) {
		r->per_rank = x.per_rank;
		if (o->launcher == EMIT_SLURM || o->launcher == EMIT_TORCHRUN ||
		    o->launcher >= EMIT_MEGATRON)
			r->why = emit_why(&x.l);
	}
out:
	free(dir);
	free(outabs);
	ctx_free(&x);
	return rc;
}
