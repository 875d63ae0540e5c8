/*
 * cmdutil.c - pieces shared by the cmd_*.c files.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
/* realpath(3) is an X/Open function. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "af.h"
#include "cmdutil.h"
#include "route.h"
#include "forecast.h"
#include "cost.h"
#include "path.h"
#include "sb.h"
#include "util_io.h"

int
cmd_stdin_take(struct cmd_stdin *s, const char *what, const char *arg,
    struct dl_err *e)
{
	if (arg == NULL || strcmp(arg, DL_STDIN_PATH) != 0)
		return DL_OK;
	if (s->by[0] != '\0')
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "standard input "
		    "given to both %s and %s ('-' can feed only one input "
		    "per run)", s->by, what);
	snprintf(s->by, sizeof(s->by), "%s", what);
	return DL_OK;
}

int
cmd_dash_opt(const struct optstate *st, struct cmd_stdin *s,
    const char *hint, struct dl_err *e)
{
	const char *c = st->opt ? st->opt->complete : NULL;

	if (c == NULL || st->arg == NULL)
		return DL_OK;
	if (strcmp(c, "csv") == 0)
		return cmd_stdin_take(s, opt_name(st), st->arg, e);
	if (strcmp(c, "dir") != 0 || strcmp(st->arg, DL_STDIN_PATH) != 0)
		return DL_OK;
	if (st->opt->id == OPT_CLUSTER)
		return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '%s' names "
		    "a directory: '-' (standard input) cannot be one (give "
		    "one file from it with --nodes -, --links -, --load - "
		    "or --traffic -)", opt_name(st));
	return dl_seterr(e, DL_EUSAGE, NULL, 0, 0, "option '%s' writes a "
	    "directory: '-' (standard output) cannot be one%s%s",
	    opt_name(st), hint ? "; " : "", hint ? hint : "");
}

int
cmd_write_output(const char *path, const char *data, size_t len,
    struct dl_err *e)
{
	if (strcmp(path, DL_STDIN_PATH) != 0)
		return af_write_file(path, data, len, e);
	/*
	 * Like every result on standard output: main's close_stdout()
	 * flushes, checks ferror and fclose, names a failed write (exit 4)
	 * and stays quiet for a reader that closed the pipe.
	 */
	fwrite(data, 1, len, stdout);
	return DL_OK;
}

int
cmd_cluster_opt(int id, const char *arg, struct dl_cluster_paths *p)
{
	switch (id) {
	case OPT_CLUSTER:
		p->dir = arg;
		return 1;
	case OPT_NODES:
		p->nodes = arg;
		return 1;
	case OPT_LINKS:
		p->links = arg;
		return 1;
	case OPT_LOAD:
		p->load = arg;
		return 1;
	case OPT_TRAFFIC:
		p->traffic = arg;
		return 1;
	}
	return 0;
}

json_t *
cmd_json_real(double v)
{
	return jreal(v);
}

int
cmd_print_json(json_t *v)
{
	int rc = json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
	    JSON_REAL_PRECISION(17));

	if (rc != 0 || putchar('\n') == EOF)
		return DL_ESYS;
	return DL_OK;
}

/* Is the plan's input i replaced by the command line? */
static int
replaced(const struct dl_input *in, const struct dl_cluster_paths *user,
    const char *model)
{
	const char *k = in->kind;

	if (strcmp(k, "model") == 0)
		return model != NULL;
	return user->dir != NULL || (strcmp(k, "nodes") == 0 ? user->nodes :
	    strcmp(k, "links") == 0 ? user->links : strcmp(k, "load") == 0 ?
	    user->load : user->traffic) != NULL;
}

/*
 * Pin the inputs of plan in that the command line does not replace
 * (read_pin()): each is read only when its bytes have the digest the
 * plan records, wherever it lies, since reading it then tells the plan's
 * author nothing new.  An input without a digest is refused before it is
 * opened.  With CMD_IGNORE_DIGESTS the digests are not asked for, and
 * the inputs must lie below the plan's directory instead, unless
 * CMD_TRUST_PATHS.
 */
static int
pin_inputs(const char *path, const struct dl_plan *in,
    const struct dl_cluster_paths *user, const char *model, int flags,
    struct dl_err *e)
{
	char *dir = path_dir(path);
	size_t n = strlen(dir);

	for (size_t i = 0; i < in->ninputs; i++) {
		const struct dl_input *x = &in->inputs[i];
		const char *rel = x->path;
		int mdl = strcmp(x->kind, "model") == 0;

		if (replaced(x, user, model) ||
		    strcmp(x->path, DL_STDIN_PATH) == 0)
			continue;
		if (!(flags & CMD_IGNORE_DIGESTS)) {
			if (x->sha256[0] != '\0') {
				read_pin(x->path, x->sha256, x->size, NULL,
				    NULL);
				continue;
			}
			free(dir);
			read_unpin();
			return dl_seterr(e, DL_EDATA, path, 0, 0, "inputs[%zu]."
			    "sha256: missing, so '%s' is not read (give the %s "
			    "with %s, or --ignore-digests to read it inside the "
			    "plan's directory)", i, x->path, mdl ? "model" :
			    "cluster", mdl ? "-m FILE" : "-c DIR");
		}
		if (flags & CMD_TRUST_PATHS)
			continue;
		/* resolve() put the plan's directory before a relative path. */
		if (strchr(path, '/') != NULL && strncmp(rel, dir, n) == 0 &&
		    rel[n] == '/')
			rel += n + 1;
		read_pin(x->path, NULL, -1, dir, rel);
	}
	free(dir);
	return DL_OK;
}

/*
 * Refuse the plan's inputs that were read from standard input and that
 * the command line does not give again: their bytes are gone.
 */
static int
stdin_inputs(const struct dl_plan *in, const char *path,
    const struct dl_cluster_paths *user, const char *model,
    struct dl_err *e)
{
	static const char *const kinds[] = {
		"nodes", "links", "load", "traffic", "model"
	};
	static const char *const opts[] = {
		"--nodes FILE", "--links FILE", "--load FILE", "--traffic FILE",
		"-m FILE"
	};
	const char *given[] = {
		user->nodes, user->links, user->load, user->traffic, model
	};

	for (size_t k = 0; k < 5; k++) {
		const char *p = plan_input_path(in, kinds[k]);

		if (given[k] || (k < 4 && user->dir) || p == NULL ||
		    strcmp(p, DL_STDIN_PATH) != 0)
			continue;
		return dl_seterr(e, DL_EDATA, path, 0, 0, "the plan's %s.csv "
		    "came from standard input: give it again with %s%s",
		    kinds[k], opts[k], k < 4 ? " or -c DIR" : "");
	}
	return DL_OK;
}

int
cmd_load_plan(const char *path, const struct dl_cluster_paths *user,
    const char *model, int flags, struct dl_plan *p, struct dl_cluster *c,
    struct dl_model *m, const char **missing, struct dl_err *e)
{
	struct dl_cluster_paths cp = { 0 };
	struct dl_plan in;
	int rc;

	if (missing)
		*missing = NULL;
	if ((rc = plan_read_inputs(&in, path, e)) != DL_OK)
		return rc;
	if ((rc = stdin_inputs(&in, path, user, model, e)) != DL_OK ||
	    (rc = pin_inputs(path, &in, user, model, flags, e)) != DL_OK) {
		plan_free(&in);
		return rc;
	}
	if (user->dir == NULL) {
		cp.nodes = plan_input_path(&in, "nodes");
		cp.links = plan_input_path(&in, "links");
		cp.load = plan_input_path(&in, "load");
		cp.traffic = plan_input_path(&in, "traffic");
	} else {
		cp.dir = user->dir;
	}
	if (user->nodes)
		cp.nodes = user->nodes;
	if (user->links)
		cp.links = user->links;
	if (user->load)
		cp.load = user->load;
	if (user->traffic)
		cp.traffic = user->traffic;
	if (model == NULL)
		model = plan_input_path(&in, "model");
	if (cp.dir == NULL && cp.nodes == NULL) {
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "plan names no "
		    "nodes.csv (give the cluster with -c DIR)");
		if (missing)
			*missing = "nodes";
	} else if (model == NULL) {
		rc = dl_seterr(e, DL_EDATA, path, 0, 0, "plan names no "
		    "model.csv (give it with -m FILE)");
		if (missing)
			*missing = "model";
	} else if ((rc = cluster_load(c, &cp, e)) == DL_OK &&
	    (rc = model_load(m, model, e)) != DL_OK) {
		cluster_free(c);
	}
	read_unpin();
	plan_free(&in);
	if (rc != DL_OK)
		return rc;
	if ((rc = plan_read_json(p, path, c, m, (flags & CMD_CHECK_DIGESTS) &&
	    !(flags & CMD_IGNORE_DIGESTS), e)) != DL_OK) {
		model_free(m);
		cluster_free(c);
		return rc;
	}
	cmd_warn_inputs(c, m);
	return rc;
}

size_t
cmd_warn_inputs(const struct dl_cluster *c, const struct dl_model *m)
{
	const struct dl_notes *w[2] = { c ? &c->warnings : NULL,
	    m ? &m->warnings : NULL };
	size_t n = 0;

	for (int k = 0; k < 2; k++)
		for (size_t i = 0; w[k] != NULL && i < w[k]->n; i++, n++)
			if (dl_verbose >= 0)
				dl_warn("warning: %s", w[k]->msg[i]);
	return n;
}

int
cmd_price_plan(struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, struct dl_router **router,
    struct dl_costctx *x, struct dl_err *e)
{
	struct dl_route_opts ro = { p->opts.states, p->opts.horizon,
	    p->opts.forecast };
	char **used;
	int rc;

	if (p->uhat == NULL) {
		p->nnodes = c->nnodes;
		p->uhat = xcalloc(c->nnodes + 1, sizeof(double));
		if ((rc = forecast_node_loads(c, p->opts.horizon,
		    p->opts.forecast, p->uhat, e)) != DL_OK)
			return rc;
	}
	/* What a forecast from load.csv uses (plan.json's
	 * forecast_methods). */
	used = forecast_node_used(c, p->opts.horizon, p->opts.forecast);
	plan_set_uhat_used(p, used, c->nnodes);
	forecast_used_free(used, c->nnodes);
	if ((rc = router_new(router, c, &ro, e)) != DL_OK ||
	    (rc = cost_init(x, c, m, &p->opts, p->uhat, *router, e)) != DL_OK)
		return rc;
	return cost_eval(x, p, e);
}

int
cmd_write_plan(const struct dl_plan *p, const struct dl_cluster *c,
    const struct dl_model *m, const char *outdir, char **plain,
    struct dl_err *e)
{
	struct strbuf j = STRBUF_INIT, v = STRBUF_INIT;
	const char *jpath;
	int rc;

	if (plain != NULL)
		*plain = NULL;
	if ((rc = mkdir_p(outdir, e)) != DL_OK)
		return rc;
	sb_addf(&j, "%s/plan.json", outdir);
	sb_addf(&v, "%s/plan.csv", outdir);
	jpath = j.buf;
	rc = plan_write_files(1, &p, &jpath, p, v.buf, c, m, plain, e);
	sb_free(&j);
	sb_free(&v);
	return rc;
}

static int journal_finish(const char *dir);

int
cmd_lock_outdir(const char *outdir, struct dl_err *e)
{
	int rc;

	int stale;

	if ((rc = mkdir_p(outdir, e)) != DL_OK)
		return rc;
	if ((rc = af_lock_dir(outdir, &stale, e)) == DL_OK && stale &&
	    dl_verbose >= 0)
		dl_warn("warning: %s/" AF_LOCK_NAME ": took over a stale lock "
		    "(the dlplan that left it is gone)", outdir);
	if (rc == DL_OK && journal_finish(outdir) && dl_verbose >= 0)
		dl_warn("warning: %s/" CMD_JOURNAL ": finished renaming the "
		    "output set of a run that was killed", outdir);
	return rc;
}

int
cmd_fail(const struct dl_err *e)
{
	dl_perr(e);
	return e->code ? e->code : DL_ESYS;
}

/*
 * Output sets (cmd_set_begin()).  The manifest lists, one per line, the
 * files relative to the output directory that dlplan wrote there.
 */
#define MANIFEST_HEAD "# files dlplan wrote here; a later run that " \
	"writes this directory removes those it no longer writes\n"

void
cmd_set_begin(void)
{
	af_defer_begin();
}

/* path relative to dir, or NULL when it does not lie there. */
static const char *
rel_to(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(path, dir, n) == 0 && path[n] == '/')
		path += n + 1;
	else if (strcmp(dir, ".") != 0 || path[0] == '/')
		return NULL;
	while (strncmp(path, "./", 2) == 0)
		path += 2;
	return path;
}

/* Is rel a plain relative path (no '..', '.', empty part, newline)? */
static int
plain_rel(const char *rel)
{
	const char *p = rel;

	if (*rel == '\0' || *rel == '/' || strchr(rel, '\n') != NULL)
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return p[-1] != '/';
}

/*
 * The directory holding rel below dir, opened without following a
 * symbolic link on the way (a list in a directory from elsewhere must
 * not reach files outside it); *leaf points into copy at rel's last
 * part.  -1 when it cannot be opened.
 */
static int
open_parent_below(const char *dir, char *copy, char **leaf)
{
	char *comp = copy, *sl;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	while (fd >= 0 && (sl = strchr(comp, '/')) != NULL) {
		int nfd;

		*sl = '\0';
		nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		fd = nfd;
		comp = sl + 1;
	}
	*leaf = comp;
	return fd;
}

/* Is leaf a regular file (not followed) in the directory fd? */
static int
regular_at(int fd, const char *leaf)
{
	struct stat st;

	return fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode);
}

/* Remove the regular file rel below dir (open_parent_below()). */
static void
remove_below(const char *dir, const char *rel)
{
	char *copy = xstrdup(rel), *leaf;
	int fd = open_parent_below(dir, copy, &leaf);

	if (fd >= 0 && regular_at(fd, leaf))
		(void)unlinkat(fd, leaf, 0);
	if (fd >= 0)
		close(fd);
	free(copy);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Is s in the sorted array v of n strings? */
static int
in_sorted(const char *const *v, size_t n, const char *s)
{
	return n > 0 && bsearch(&s, v, n, sizeof(*v), cmp_str) != NULL;
}

/*
 * The whole file dir/name (the manifest, the journal), or NULL when there
 * is none.  Read
 * here rather than by read_file(): dlplan's own bookkeeping is not an
 * input of the run (read_is_input()), so the new manifest may replace it.
 */
static char *
slurp_below(const char *dir, const char *name)
{
	struct strbuf p = STRBUF_INIT, b = STRBUF_INIT;
	char chunk[65536];
	ssize_t r;
	int fd;

	sb_addf(&p, "%s/%s", dir, name);
	fd = open(p.buf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	sb_free(&p);
	if (fd < 0)
		return NULL;
	{
		struct stat st;

		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return NULL;
		}
	}
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		sb_add(&b, chunk, (size_t)r);
	}
	close(fd);
	return sb_detach(&b);
}

/*
 * The lines of the manifest of dir (none when there is none); free with
 * free(*buf) and free(the array).
 */
static char **
read_manifest(const char *dir, char **buf, size_t *n)
{
	char **v = NULL, *line, *save = NULL;
	size_t cap = 0;

	*n = 0;
	if ((*buf = slurp_below(dir, CMD_MANIFEST)) != NULL) {
		for (line = strtok_r(*buf, "\n", &save); line != NULL;
		    line = strtok_r(NULL, "\n", &save)) {
			if (line[0] == '#' || !plain_rel(line))
				continue;
			if (*n == cap)
				v = xgrow(v, &cap, *n + 1, sizeof(*v));
			v[(*n)++] = line;
		}
	}
	return v;
}

/*
 * The journal of a set being renamed (CMD_JOURNAL): the temporary files
 * of the set, relative to dir, every one complete and synced, and
 * ("rm FILE") the files of the old set to remove.  Written
 * before the first rename and removed after the last, so that a run
 * killed in between (SIGKILL, a crash) leaves it for the next run to
 * finish the renames (journal_finish()): the new set, never half of it.
 */
#define JOURNAL_HEAD "# dlplan is renaming these files into place; the " \
	"next run into this directory finishes it\n"

static int
journal_write(const char *dir, char *const *gone, size_t ngone,
    struct strbuf *jp, struct dl_err *e)
{
	const char **paths, **tmps;
	size_t n = af_deferred(&paths, &tmps);
	struct strbuf b = STRBUF_INIT, t = STRBUF_INIT;
	int fd, bad;

	/* The journal names files that must be complete on the disk. */
	if (af_defer_sync(e) != DL_OK)
		return DL_ESYS;

	sb_adds(&b, JOURNAL_HEAD);
	for (size_t i = 0; i < n; i++) {
		const char *r = tmps[i] ? rel_to(dir, tmps[i]) : NULL;

		if (r != NULL && plain_rel(r))
			sb_addf(&b, "%s\n", r);
	}
	for (size_t i = 0; i < ngone; i++)
		sb_addf(&b, "rm %s\n", gone[i]);
	sb_addf(jp, "%s/" CMD_JOURNAL, dir);
	sb_addf(&t, "%s.tmp-XXXXXX", jp->buf);
	if ((fd = af_mkstemp(t.buf)) < 0) {
		sb_free(&b);
		sb_free(&t);
		return dl_seterr(e, DL_ESYS, jp->buf, 0, 0, "cannot create "
		    "file: %s", strerror(errno));
	}
	/* Renamed before it is closed: locked while named so. */
	bad = write(fd, b.buf, b.len) != (ssize_t)b.len || fsync(fd) != 0;
	bad = bad || rename(t.buf, jp->buf) != 0;
	if (close(fd) != 0 && !bad) {
		int err = errno;

		unlink(jp->buf);
		errno = err;
		bad = 1;
	}
	if (bad) {
		int err = errno;

		unlink(t.buf);
		sb_free(&b);
		sb_free(&t);
		return dl_seterr(e, DL_ESYS, jp->buf, 0, 0, "cannot write "
		    "file: %s", strerror(err ? err : EIO));
	}
	sb_free(&b);
	sb_free(&t);
	return DL_OK;
}

/* Is rel the name of a temporary file: NAME.tmp-XXXXXX? */
static int
tmp_name(const char *rel)
{
	size_t n = strlen(rel);

	return n > 11 && plain_rel(rel) && strncmp(rel + n - 11, ".tmp-", 5)
	    == 0 && strchr(rel + n - 6, '/') == NULL;
}

/*
 * Finish the renames of a set that a killed run left in its journal:
 * the old set's files it lists go, each temporary file still there is
 * renamed over its file, and the backups of the replaced files go.  1
 * when there was a journal.
 */
static int
journal_finish(const char *dir)
{
	char *buf = slurp_below(dir, CMD_JOURNAL), *line, *save = NULL;
	struct strbuf jp = STRBUF_INIT;

	if (buf == NULL)
		return 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *copy, *leaf, *to;
		size_t n;
		int fd;

		if (strncmp(line, "rm ", 3) == 0 && plain_rel(line + 3))
			remove_below(dir, line + 3);
		if (line[0] == '#' || !tmp_name(line))
			continue;
		copy = xstrdup(line);
		if ((fd = open_parent_below(dir, copy, &leaf)) >= 0) {
			n = strlen(leaf);
			to = xstrdup(leaf);
			to[n - 11] = '\0';
			if (regular_at(fd, leaf))
				(void)renameat(fd, leaf, fd, to);
			memcpy(leaf + n - 10, "old", 3);
			if (regular_at(fd, leaf))
				(void)unlinkat(fd, leaf, 0);
			free(to);
			close(fd);
		}
		free(copy);
	}
	free(buf);
	sb_addf(&jp, "%s/" CMD_JOURNAL, dir);
	unlink(jp.buf);
	sb_free(&jp);
	return 1;
}

/* The directory part of rel ("" for none), appended to sb. */
static void
parent_of(struct strbuf *sb, const char *rel)
{
	const char *sl = strrchr(rel, '/');

	sb_reset(sb);
	if (sl != NULL)
		sb_add(sb, rel, (size_t)(sl - rel));
}

/*
 * Remove the temporary files that runs killed while writing this output
 * set left (af_sweep()): in dir itself and in each directory below it
 * that holds a file of the new set or of the old manifest (launch/,
 * plans/, ...), opened without following a symbolic link.  A directory
 * below with its own lock file belongs to another dlplan's set and is
 * left alone.  Called with dir's lock held, after the set is in place.
 */
static void
sweep_set(const char *dir, const char *const *now, size_t nnow,
    char *const *old, size_t nold)
{
	char **sub = xcalloc(nnow + nold + 1, sizeof(*sub));
	struct strbuf p = STRBUF_INIT;
	struct stat st;
	size_t nsub = 0;
	int fd;

	for (size_t i = 0; i < nnow + nold; i++) {
		parent_of(&p, i < nnow ? now[i] : old[i - nnow]);
		if (p.len > 0)
			sub[nsub++] = xstrdup(p.buf);
	}
	qsort(sub, nsub, sizeof(*sub), cmp_str);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		af_sweep(fd);
		close(fd);
	}
	for (size_t i = 0; i < nsub; i++) {
		char *copy, *leaf;

		if (i > 0 && strcmp(sub[i], sub[i - 1]) == 0)
			continue;
		sb_reset(&p);
		sb_addf(&p, "%s/x", sub[i]);
		copy = xstrdup(p.buf);
		fd = open_parent_below(dir, copy, &leaf);
		if (fd >= 0 && fstatat(fd, AF_LOCK_NAME, &st,
		    AT_SYMLINK_NOFOLLOW) != 0)
			af_sweep(fd);
		if (fd >= 0)
			close(fd);
		free(copy);
	}
	for (size_t i = 0; i < nsub; i++)
		free(sub[i]);
	free(sub);
	sb_free(&p);
}

/* The manifest's text: the new set, then the lines of keep[0..nkeep). */
static void
manifest_text(struct strbuf *m, const char *const *now, size_t nnow,
    char *const *keep, size_t nkeep)
{
	sb_reset(m);
	sb_adds(m, MANIFEST_HEAD);
	for (size_t i = 0; i < nnow; i++)
		sb_addf(m, "%s\n", now[i]);
	for (size_t i = 0; i < nkeep; i++)
		if (keep[i] != NULL)
			sb_addf(m, "%s\n", keep[i]);
}

int
cmd_set_end(const char *dir, const char *owned, int ok, struct dl_err *e)
{
	const char **paths, **now;
	char **old, *oldbuf, **keep, **gone;
	size_t n, nold, nnow = 0, nkeep = 0, ngone = 0, olen = strlen(owned);
	struct strbuf m = STRBUF_INIT, mp = STRBUF_INIT, f = STRBUF_INIT;
	struct strbuf jp = STRBUF_INIT;
	int rc;

	if (!ok) {
		af_unlock_dir();	/* before the new directories go */
		return af_defer_end(0, e) == DL_OK ? DL_OK : DL_ESYS;
	}
	n = af_deferred(&paths, NULL);
	now = xcalloc(n + 1, sizeof(*now));
	for (size_t i = 0; i < n; i++) {
		const char *r = rel_to(dir, paths[i]);

		if (r != NULL && plain_rel(r))
			now[nnow++] = xstrdup(r);
	}
	qsort(now, nnow, sizeof(*now), cmp_str);
	old = read_manifest(dir, &oldbuf, &nold);
	keep = xcalloc(nold + 1, sizeof(*keep));
	gone = xcalloc(nold + 1, sizeof(*gone));
	/*
	 * The files of other runs that the new set does not own stay listed;
	 * the old set's own files that the new one lacks go, except an
	 * input of this run (read_is_input()), which is the user's now.
	 */
	for (size_t i = 0; i < nold; i++) {
		if (in_sorted(now, nnow, old[i]))
			continue;
		if (strncmp(old[i], owned, olen) != 0) {
			keep[nkeep++] = old[i];
			continue;
		}
		sb_reset(&f);
		sb_addf(&f, "%s/%s", dir, old[i]);
		if (!read_is_input(f.buf))
			gone[ngone++] = old[i];
	}
	/*
	 * The manifest that comes with the new set still lists the files
	 * about to go, so that a run killed before they are removed leaves
	 * them listed and the next run removes them; once they are gone it
	 * is written again without them.
	 */
	manifest_text(&m, now, nnow, keep, nkeep);
	for (size_t i = 0; i < ngone; i++)
		sb_addf(&m, "%s\n", gone[i]);
	sb_addf(&mp, "%s/" CMD_MANIFEST, dir);
	af_hold_signals(1);
	rc = af_write_file(mp.buf, m.buf, m.len, e);
	if (rc == DL_OK)
		rc = journal_write(dir, gone, ngone, &jp, e);
	if (af_defer_end(rc == DL_OK, e) != DL_OK)
		rc = DL_ESYS;
	for (size_t i = 0; i < ngone && rc == DL_OK; i++)
		remove_below(dir, gone[i]);
	if (rc == DL_OK && ngone > 0) {
		manifest_text(&m, now, nnow, keep, nkeep);
		rc = af_write_file(mp.buf, m.buf, m.len, e);
	}
	/* The set is whole, or was put back: nothing left to finish. */
	if (jp.len > 0)
		unlink(jp.buf);
	if (rc == DL_OK)
		sweep_set(dir, now, nnow, old, nold);
	af_unlock_dir();
	af_hold_signals(0);
	for (size_t i = 0; i < nnow; i++)
		free((char *)now[i]);
	free(now);
	free(old);
	free(keep);
	free(gone);
	free(oldbuf);
	sb_free(&m);
	sb_free(&mp);
	sb_free(&f);
	sb_free(&jp);
	return rc;
}

int
cmd_progress_begin(struct cmd_progress *pg)
{
	pg->t0 = pg->last = mono_now();
	pg->lines = 0;
	return dl_verbose > 0 || (dl_verbose == 0 && isatty(STDERR_FILENO));
}

int
cmd_progress_due(struct cmd_progress *pg, int final, double *elapsed)
{
	double now = mono_now();

	if (final ? pg->lines == 0 && dl_verbose <= 0 : now - pg->last < 0.5)
		return 0;
	pg->last = now;
	pg->lines++;
	*elapsed = now - pg->t0;
	return 1;
}
