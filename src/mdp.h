/*
 * mdp.h - a generic finite Markov decision process and its value
 * iteration (dlplan(1) ALGORITHMS, Routing, uses it).
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Costs are minimised.  The process is held in compressed rows that the
 * caller owns and fills:
 *
 *	actions of state s:	a = act_off[s] .. act_off[s + 1] - 1,
 *				in listing order (ties go to the first)
 *	cost of action a:	cost[a]
 *	successors of a:	k = tr_off[a] .. tr_off[a + 1] - 1,
 *				state tr_to[k] with probability tr_p[k]
 *
 * A terminal state has value 0 and no decision.  A state that is neither
 * terminal nor has an action is a dead end: its value is +infinity, and
 * so is the value of every action that reaches it with a probability
 * above 0.  Transitions with probability 0 are ignored (they may be left
 * out).
 *
 * The value of action a under values V is
 *
 *	Q(a) = cost[a] + gamma * sum_k tr_p[k] V(tr_to[k]),
 *
 * the sum taken from 0 in transition order, multiplied by gamma (exact
 * for gamma = 1, the stochastic shortest path) and added to the cost
 * last.  Value iteration makes synchronous
 * sweeps V'(s) = min_a Q(a) from V = 0 until no state changes by more
 * than abs_tol + rel_tol * |V'(s)|, or max_iter sweeps.  On an acyclic
 * process it reaches the exact fixed point: after the last sweep that
 * changed anything, each value is the expression above evaluated on the
 * final values of its successors, bit for bit.
 *
 * The module allocates only scratch memory inside mdp_solve() and never
 * keeps pointers to the caller's arrays after a call returns.
 */
#ifndef DL_MDP_H
#define DL_MDP_H

#include <stddef.h>

struct mdp {
	int nstates;
	const int *act_off;		/* nstates + 1 */
	const double *cost;		/* per action */
	const int *tr_off;		/* nactions + 1 */
	const int *tr_to;		/* per transition: next state */
	const double *tr_p;		/* per transition: probability */
	const unsigned char *terminal;	/* per state, 1: terminal; or NULL */
	double discount;		/* gamma in (0, 1]; 1: undiscounted */
};

struct mdp_opts {
	double abs_tol, rel_tol;	/* convergence: |V' - V| <= abs + rel |V'| */
	int max_iter;			/* at most this many sweeps (>= 1) */
	double tie_abs, tie_rel;	/* policy: Q(a) - best <= abs + rel |best| */
};

struct mdp_result {
	int iterations;		/* sweeps made */
	double residual;	/* max |V' - V| of the last sweep */
	int converged;		/* 1: the last sweep passed the test */
};

/*
 * Value iteration.  V (nstates values) receives the values of the last
 * sweep.  Returns res->converged.
 */
int mdp_solve(const struct mdp *m, const struct mdp_opts *o, double *V,
    struct mdp_result *res);

/* Q(a) under V, as defined above. */
double mdp_action_value(const struct mdp *m, const double *V, int a);

/*
 * Greedy policy under V: pol[s] receives the offset within s's action
 * list (0-based) of the first action whose value is within
 * tie_abs + tie_rel * |best| of the best value, or -1 for a terminal
 * state, a dead end, or a state whose every action is infinite.  best
 * (may be NULL) receives the best action value per state (0 for terminal
 * states, +infinity for the others without a policy).
 */
void mdp_policy(const struct mdp *m, const struct mdp_opts *o,
    const double *V, int *pol, double *best);

#endif
