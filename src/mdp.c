/*
 * mdp.c - value iteration and policy extraction for finite MDPs.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mdp.h"
#include "util.h"

double
mdp_action_value(const struct mdp *m, const double *V, int a)
{
	double sum = 0;

	for (int k = m->tr_off[a]; k < m->tr_off[a + 1]; k++) {
		double p = m->tr_p[k];

		if (p == 0)
			continue;
		sum += p * V[m->tr_to[k]];
	}
	return m->cost[a] + m->discount * sum;
}

static int
is_terminal(const struct mdp *m, int s)
{
	return m->terminal != NULL && m->terminal[s];
}

/* The best action value of s under V (s has at least one action). */
static double
best_value(const struct mdp *m, const double *V, int s)
{
	double best = HUGE_VAL;

	for (int a = m->act_off[s]; a < m->act_off[s + 1]; a++) {
		double q = mdp_action_value(m, V, a);

		if (q < best)
			best = q;
	}
	return best;
}

int
mdp_solve(const struct mdp *m, const struct mdp_opts *o, double *V,
    struct mdp_result *res)
{
	double *old, *cur;
	int n = m->nstates;

	res->iterations = 0;
	res->residual = 0;
	res->converged = 0;
	old = xcalloc(n > 0 ? (size_t)n : 1, sizeof(double));
	cur = V;
	for (int s = 0; s < n; s++) {
		old[s] = 0;
		if (!is_terminal(m, s) && m->act_off[s] == m->act_off[s + 1])
			old[s] = HUGE_VAL;
		cur[s] = old[s];
	}
	while (res->iterations < o->max_iter) {
		int done = 1;
		double resid = 0;

		for (int s = 0; s < n; s++) {
			double v, d;

			if (is_terminal(m, s) ||
			    m->act_off[s] == m->act_off[s + 1]) {
				cur[s] = old[s];
				continue;
			}
			v = best_value(m, old, s);
			cur[s] = v;
			/* Both infinite: no change (inf - inf is NaN). */
			d = v == old[s] ? 0 : fabs(v - old[s]);
			if (d > resid)
				resid = d;
			if (!(d <= o->abs_tol + o->rel_tol * fabs(v)))
				done = 0;
		}
		res->iterations++;
		res->residual = resid;
		if (done) {
			res->converged = 1;
			break;
		}
		/* The sweep just made is the input of the next one. */
		memcpy(old, cur, (size_t)n * sizeof(double));
	}
	free(old);
	return res->converged;
}

void
mdp_policy(const struct mdp *m, const struct mdp_opts *o, const double *V,
    int *pol, double *best)
{
	for (int s = 0; s < m->nstates; s++) {
		int first = m->act_off[s], last = m->act_off[s + 1];
		double b;

		pol[s] = -1;
		if (best)
			best[s] = is_terminal(m, s) ? 0 : HUGE_VAL;
		if (is_terminal(m, s) || first == last)
			continue;
		b = best_value(m, V, s);
		if (best)
			best[s] = b;
		if (!isfinite(b))
			continue;
		for (int a = first; a < last; a++)
			if (mdp_action_value(m, V, a) - b <=
			    o->tie_abs + o->tie_rel * fabs(b)) {
				pol[s] = a - first;
				break;
			}
	}
}
