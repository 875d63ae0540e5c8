/*
 * lp.c - the GLPK wrapper.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>
#include <pthread.h>

#include "af.h"
#include "lp.h"

struct col {
	char *name;
	int kind;
	double lb, ub, obj;
};

struct row {
	char *name;
	int type;
	double rhs;
	int n;
	int *cols;
	double *vals;
};

struct dl_lp {
	char *name;
	int minimize;
	struct col *cols;
	size_t ncols, colcap;
	struct row *rows;
	size_t nrows, rowcap;
	double *start;
	int has_int;
};

/*
 * GLPK keeps its state (memory accounting, hooks) in one environment per
 * process unless built with thread-local storage, and lp_jmp is shared
 * too: every call into GLPK holds this lock.
 */
static pthread_mutex_t glpk_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where a GLPK error jumps back to, and what the callback tracks. */
static jmp_buf lp_jmp;
static int lp_in_glpk;

struct cbinfo {
	const double *start;	/* 1-based incumbent, or NULL */
	int given;
	double bound;
	int have_bound;
};

static int
term_hook(void *info, const char *s)
{
	(void)info;
	if (dl_verbose > 1)
		fputs(s, stderr);
	return 1;		/* never let GLPK write to stdout */
}

static void
error_hook(void *info)
{
	(void)info;
	if (lp_in_glpk)
		longjmp(lp_jmp, 1);
}

struct dl_lp *
lp_new(const char *name, int minimize)
{
	struct dl_lp *lp = xcalloc(1, sizeof(*lp));

	lp->name = xstrdup(name);
	lp->minimize = minimize;
	return lp;
}

void
lp_free(struct dl_lp *lp)
{
	if (lp == NULL)
		return;
	for (size_t i = 0; i < lp->ncols; i++)
		free(lp->cols[i].name);
	for (size_t i = 0; i < lp->nrows; i++) {
		free(lp->rows[i].name);
		free(lp->rows[i].cols);
		free(lp->rows[i].vals);
	}
	free(lp->cols);
	free(lp->rows);
	free(lp->start);
	free(lp->name);
	free(lp);
}

int
lp_add_col(struct dl_lp *lp, const char *name, int kind, double lb,
    double ub, double obj)
{
	struct col *c;

	lp->cols = xgrow(lp->cols, &lp->colcap, lp->ncols + 1, sizeof(*c));
	c = &lp->cols[lp->ncols];
	c->name = xstrdup(name);
	c->kind = kind;
	c->lb = kind == LP_BIN ? 0 : lb;
	c->ub = kind == LP_BIN ? 1 : ub;
	c->obj = obj;
	if (kind != LP_CONT)
		lp->has_int = 1;
	return (int)lp->ncols++;
}

int
lp_add_row(struct dl_lp *lp, const char *name, int type, double rhs, int n,
    const int *cols, const double *vals)
{
	struct row *r;

	lp->rows = xgrow(lp->rows, &lp->rowcap, lp->nrows + 1, sizeof(*r));
	r = &lp->rows[lp->nrows];
	r->name = xstrdup(name);
	r->type = type;
	r->rhs = rhs;
	r->n = n;
	r->cols = xcalloc((size_t)n, sizeof(int));
	r->vals = xcalloc((size_t)n, sizeof(double));
	memcpy(r->cols, cols, (size_t)n * sizeof(int));
	memcpy(r->vals, vals, (size_t)n * sizeof(double));
	return (int)lp->nrows++;
}

int
lp_ncols(const struct dl_lp *lp)
{
	return (int)lp->ncols;
}

void
lp_set_start(struct dl_lp *lp, const double *x)
{
	free(lp->start);
	lp->start = xcalloc(lp->ncols, sizeof(double));
	memcpy(lp->start, x, lp->ncols * sizeof(double));
}

const char *
lp_status_name(int status)
{
	static const char *names[] = {
		"optimal", "feasible", "infeasible", "no solution", "unbounded"
	};

	return status >= 0 && status <= LP_UNBOUNDED ? names[status] : "?";
}

/*
 * Build the GLPK problem.  Names are sanitised for the LP format (GLPK
 * accepts letters, digits and !"#$%&()/,.;?@_`'{}|~ in CPLEX LP names).
 */
static int
build(struct dl_lp *lp, glp_prob **out, struct dl_err *e)
{
	glp_prob *P;
	size_t ne = 0, k = 0;
	int *ia, *ja;
	double *ar;

	for (size_t i = 0; i < lp->nrows; i++)
		ne += (size_t)lp->rows[i].n;
	ia = xcalloc(ne + 1, sizeof(int));
	ja = xcalloc(ne + 1, sizeof(int));
	ar = xcalloc(ne + 1, sizeof(double));
	for (size_t i = 0; i < lp->nrows; i++)
		for (int j = 0; j < lp->rows[i].n; j++) {
			k++;
			ia[k] = (int)i + 1;
			ja[k] = lp->rows[i].cols[j] + 1;
			ar[k] = lp->rows[i].vals[j];
			if (ja[k] < 1 || (size_t)ja[k] > lp->ncols ||
			    !isfinite(ar[k])) {
				free(ia);
				free(ja);
				free(ar);
				return dl_seterr(e, DL_ESYS, NULL, 0, 0,
				    "internal error: bad coefficient in row "
				    "'%s' of program '%s'", lp->rows[i].name,
				    lp->name);
			}
		}
	if (ne > 0 && glp_check_dup((int)lp->nrows, (int)lp->ncols, (int)ne,
	    ia, ja) != 0) {
		free(ia);
		free(ja);
		free(ar);
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "internal error: "
		    "duplicate or out-of-range element in program '%s'",
		    lp->name);
	}
	P = glp_create_prob();
	glp_set_prob_name(P, lp->name);
	glp_set_obj_dir(P, lp->minimize ? GLP_MIN : GLP_MAX);
	if (lp->ncols)
		glp_add_cols(P, (int)lp->ncols);
	if (lp->nrows)
		glp_add_rows(P, (int)lp->nrows);
	for (size_t j = 0; j < lp->ncols; j++) {
		const struct col *c = &lp->cols[j];
		int type = isinf(c->ub) ? (isinf(c->lb) ? GLP_FR : GLP_LO) :
		    (c->lb == c->ub ? GLP_FX : GLP_DB);

		glp_set_col_name(P, (int)j + 1, c->name);
		glp_set_col_bnds(P, (int)j + 1, type, isinf(c->lb) ? 0 : c->lb,
		    isinf(c->ub) ? 0 : c->ub);
		glp_set_obj_coef(P, (int)j + 1, c->obj);
		if (c->kind == LP_BIN)
			glp_set_col_kind(P, (int)j + 1, GLP_BV);
		else if (c->kind == LP_INT)
			glp_set_col_kind(P, (int)j + 1, GLP_IV);
	}
	for (size_t i = 0; i < lp->nrows; i++) {
		const struct row *r = &lp->rows[i];
		int type = r->type == LP_LE ? GLP_UP : r->type == LP_GE ?
		    GLP_LO : GLP_FX;

		glp_set_row_name(P, (int)i + 1, r->name);
		glp_set_row_bnds(P, (int)i + 1, type, r->rhs, r->rhs);
	}
	if (ne > 0)
		glp_load_matrix(P, (int)ne, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	*out = P;
	return DL_OK;
}

static void
callback(glp_tree *T, void *info)
{
	struct cbinfo *cb = info;
	int node;

	switch (glp_ios_reason(T)) {
	case GLP_IHEUR:
		if (cb->start && !cb->given) {
			cb->given = 1;
			glp_ios_heur_sol(T, cb->start);
		}
		break;
	case GLP_ISELECT:
	case GLP_IBINGO:
		node = glp_ios_best_node(T);
		if (node != 0) {
			cb->bound = glp_ios_node_bound(T, node);
			cb->have_bound = 1;
		}
		break;
	default:
		break;
	}
}

static int
solve_locked(struct dl_lp *lp, const struct lp_params *prm,
    struct lp_result *res, struct dl_err *e)
{
	glp_prob *volatile P = NULL;
	double *volatile start1 = NULL;
	struct cbinfo cb;
	double t0 = mono_now();
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&cb, 0, sizeof(cb));
	glp_term_hook(term_hook, NULL);
	glp_error_hook(error_hook, NULL);
	if ((rc = build(lp, (glp_prob **)&P, e)) != DL_OK)
		return rc;
	if (lp->start) {
		start1 = xcalloc(lp->ncols + 1, sizeof(double));
		memcpy(start1 + 1, lp->start, lp->ncols * sizeof(double));
	}
	lp_in_glpk = 1;
	if (setjmp(lp_jmp) != 0) {
		lp_in_glpk = 0;
		/* After a GLPK error the environment must be freed whole. */
		glp_free_env();
		free(start1);
		free(res->x);
		res->x = NULL;
		return dl_seterr(e, DL_ESYS, NULL, 0, 0, "GLPK failed while "
		    "solving program '%s'", lp->name);
	}
	res->x = xcalloc(lp->ncols ? lp->ncols : 1, sizeof(double));
	if (!lp->has_int) {
		glp_smcp sp;

		glp_init_smcp(&sp);
		sp.msg_lev = dl_verbose > 1 ? GLP_MSG_ON : GLP_MSG_OFF;
		sp.presolve = GLP_ON;
		if (prm->time_limit > 0)
			sp.tm_lim = (int)(prm->time_limit * 1000);
		rc = glp_simplex(P, &sp);
		if (rc == GLP_ENOPFS || glp_get_status(P) == GLP_NOFEAS)
			res->status = LP_INFEASIBLE;
		else if (rc == GLP_ENODFS || glp_get_status(P) == GLP_UNBND)
			res->status = LP_UNBOUNDED;
		else if (rc == 0 && glp_get_status(P) == GLP_OPT)
			res->status = LP_OPTIMAL;
		else
			res->status = LP_NOSOLUTION;
		res->obj = glp_get_obj_val(P);
		res->bound = res->obj;
		for (size_t j = 0; j < lp->ncols; j++)
			res->x[j] = glp_get_col_prim(P, (int)j + 1);
	} else {
		glp_iocp ip;
		int ms;

		glp_init_iocp(&ip);
		ip.msg_lev = dl_verbose > 1 ? GLP_MSG_ON : GLP_MSG_OFF;
		ip.mip_gap = prm->mip_gap;
		if (prm->time_limit > 0)
			ip.tm_lim = (int)(prm->time_limit * 1000);
		ip.cb_func = callback;
		ip.cb_info = &cb;
		cb.start = start1;
		if (start1 == NULL) {
			/* The MIP presolver also solves the relaxation. */
			ip.presolve = GLP_ON;
			rc = glp_intopt(P, &ip);
		} else {
			/*
			 * With a starting solution the callback must see the
			 * original columns, so solve the relaxation first and
			 * leave the MIP presolver off.
			 */
			glp_smcp sp;

			glp_init_smcp(&sp);
			sp.msg_lev = ip.msg_lev;
			sp.presolve = GLP_ON;
			sp.tm_lim = ip.tm_lim;
			rc = glp_simplex(P, &sp);
			/* The MIP gets what the relaxation left of the limit. */
			if (ip.tm_lim < INT_MAX)
				ip.tm_lim = (int)fmax(1, ip.tm_lim -
				    (mono_now() - t0) * 1000);
			if (rc == 0 && glp_get_status(P) == GLP_OPT)
				rc = glp_intopt(P, &ip);
			else if (rc == 0 && glp_get_status(P) == GLP_NOFEAS)
				rc = GLP_ENOPFS;
			else if (rc == 0 && glp_get_status(P) == GLP_UNBND)
				rc = GLP_ENODFS;
		}
		ms = glp_mip_status(P);
		if (rc == GLP_ENOPFS || ms == GLP_NOFEAS)
			res->status = LP_INFEASIBLE;
		else if (rc == GLP_ENODFS)
			res->status = LP_UNBOUNDED;
		else if (ms == GLP_OPT)
			res->status = LP_OPTIMAL;
		else if (ms == GLP_FEAS)
			res->status = rc == GLP_EMIPGAP ? LP_OPTIMAL :
			    LP_FEASIBLE;
		else
			res->status = LP_NOSOLUTION;
		if (res->status == LP_OPTIMAL || res->status == LP_FEASIBLE) {
			res->obj = glp_mip_obj_val(P);
			for (size_t j = 0; j < lp->ncols; j++)
				res->x[j] = glp_mip_col_val(P, (int)j + 1);
		}
		res->bound = res->status == LP_OPTIMAL || !cb.have_bound ?
		    res->obj : cb.bound;
		if (res->status == LP_FEASIBLE && !cb.have_bound)
			res->bound = glp_get_obj_val(P);	/* root LP */
	}
	lp_in_glpk = 0;
	glp_delete_prob(P);
	free(start1);
	res->gap = res->status == LP_FEASIBLE ? fabs(res->obj - res->bound) /
	    fmax(fabs(res->obj), 1e-12) : 0;
	res->time_s = mono_now() - t0;
	return DL_OK;
}

void
lp_result_free(struct lp_result *res)
{
	free(res->x);
	res->x = NULL;
}

static int
write_locked(struct dl_lp *lp, const char *path, struct dl_err *e)
{
	glp_prob *volatile P = NULL;
	struct afile af;
	int rc;

	glp_term_hook(term_hook, NULL);
	glp_error_hook(error_hook, NULL);
	if ((rc = build(lp, (glp_prob **)&P, e)) != DL_OK)
		return rc;
	/* glp_write_lp writes the path itself: write a temp file, rename. */
	if ((rc = af_open(&af, path, e)) != DL_OK) {
		glp_delete_prob(P);
		return rc;
	}
	lp_in_glpk = 1;
	if (setjmp(lp_jmp) != 0) {
		lp_in_glpk = 0;
		glp_free_env();
		af_abort(&af);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "GLPK failed while "
		    "writing program '%s'", lp->name);
	}
	rc = glp_write_lp(P, NULL, af.tmp);
	lp_in_glpk = 0;
	glp_delete_prob(P);
	if (rc != 0) {
		af_abort(&af);
		return dl_seterr(e, DL_ESYS, path, 0, 0, "cannot write LP file");
	}
	return af_commit(&af, e);
}

int
lp_solve(struct dl_lp *lp, const struct lp_params *prm, struct lp_result *res,
    struct dl_err *e)
{
	int rc;

	pthread_mutex_lock(&glpk_lock);
	rc = solve_locked(lp, prm, res, e);
	pthread_mutex_unlock(&glpk_lock);
	return rc;
}

int
lp_write(struct dl_lp *lp, const char *path, struct dl_err *e)
{
	int rc;

	pthread_mutex_lock(&glpk_lock);
	rc = write_locked(lp, path, e);
	pthread_mutex_unlock(&glpk_lock);
	return rc;
}

void
lp_thread_exit(void)
{
	pthread_mutex_lock(&glpk_lock);
	glp_free_env();
	pthread_mutex_unlock(&glpk_lock);
}
