/*
 * search_int.h - what the files of the plan search share (search_run.c,
 * search_ctx.c, search_structured.c, search_shape.c, search_stripe.c,
 * search_exhaustive.c, search_improve.c, search_batch.c, search_explain.c,
 * search_dump.c, search_runtime.c, search_cuts.c); nothing outside them
 * includes it.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The files call one another downward only:
 *
 *	search_run.c		search_plan(): runs the modes, explains failure
 *	search_structured.c	the structured mode
 *	search_shape.c		one shape of it: partitions, split, rounds
 *	search_stripe.c		the structured mode's striped shapes
 *	search_exhaustive.c	the exhaustive mode (the exact optimum)
 *	search_improve.c	search_improve(): local moves from the best plan
 *	search_explain.c	search_left_out(): what left-out nodes would cost
 *	search_dump.c		search_dump(): a plan's MILPs as LP files
 *	search_runtime.c	the search restricted to one framework
 *	search_cuts.c		the last step: stage boundaries moved while
 *				the exact 1F1B makespan falls
 *	search_ctx.c		the search context, the scoring of candidates,
 *				the priced transfers and the thread pool
 *
 * Every search runs on a struct ctx: the cost model, the options, the
 * best plan so far and the caches of one thread.  A mode builds each
 * candidate in C->work (search_build_plan()) and hands it to
 * search_consider(), which scores it and keeps it when it wins;
 * search_cut() says whether a lower bound already rules a candidate out.
 */
#ifndef DL_SEARCH_INT_H
#define DL_SEARCH_INT_H

#include "kc.h"
#include "search.h"
#include "search_bound_int.h"

/*
 * The improvement phase: from best, a deterministic local search of at
 * most IMPROVE_SHAPES shapes, each solved as the structured mode solves
 * one: swap the units at one stage position of two groups (the members of
 * one sync ring), then any two units; split a unit of k GPUs into two
 * halves whose second joins another group or follows the first as a
 * stage; move a unit to another group; add the left-out nodes' units as
 * one more pipeline, or one of them to a group; merge two consecutive
 * stages on the two halves of one wider unit, then any two of one degree
 * on one node (its units packed again).  The first move that makes T
 * strictly smaller is kept and the moves start again from the new plan,
 * until none helps or the budget is spent (fewer shapes above
 * IMPROVE_LAYERS layers and above IMPROVE_MAX_GPUS GPUs).  best is
 * replaced only by a faster plan.
 */
#define IMPROVE_SHAPES 1000
/* Above this many layers a line may try IMPROVE_SHAPES * this / layers. */
#define IMPROVE_LAYERS 100
/*
 * Above this many GPUs, that many times this / GPUs (at least one), and a
 * shape of more than IMPROVE_CHARGE_GPUS GPUs is charged one for each
 * IMPROVE_CHARGE_GPUS or part of them, since its pricing grows with them.
 */
#define IMPROVE_MAX_GPUS 512
#define IMPROVE_CHARGE_GPUS 256
void search_improve(const struct dl_costctx *x, const struct search_opts *so,
    struct dl_plan *best, struct search_stats *st);

/* A unit: k GPUs of one node, local indices gpu0 .. gpu0 + k - 1. */
struct unit {
	int node, k, gpu0;
	double speed;		/* k * s of its node */
};

/*
 * A structure: G groups; group g is the ordered list of S[g] units
 * u[off[g]] .. u[off[g] + S[g] - 1].  Arrays are owned by the caller.
 */
struct shape {
	int G;
	int *S, *off;
	const struct unit **u;
};

/*
 * Unshared transfer costs already priced, keyed by (a, b, bytes): the
 * same node pairs and activation sizes come back in every shape.
 */
struct tcache {
	struct kcache map;	/* (a, b, bytes) -> index into cost */
	double *cost;
	size_t n, cap;
};

/*
 * Transfer price vectors.  A pipeline boundary from node a to node b costs
 * c(l), the unshared price of layer l's activations each way; the vector
 * over all layers gets an id, the same for every pair with the same
 * prices, so that cache keys hold one int per boundary.
 */
struct cids {
	struct kcache pair;	/* (a, b) -> id */
	struct kcache vec;	/* price vector -> id */
	double **v;		/* id -> price vector (owned) */
	int n;
	size_t cap;
	double *zero;		/* the prices when transfers are left out */
};

struct pool;

/*
 * The context of one search thread.  The caller keeps x, so, st and best;
 * the context owns its caches, its scratch and work, the candidate a mode
 * builds (search_ctx_free() releases them).
 */
struct ctx {
	const struct dl_costctx *x;
	const struct search_opts *so;
	struct search_stats *st;
	struct dl_plan *best;
	struct dl_plan work;
	double best_t;
	int have_best;
	long total;		/* micro-batches per iteration */
	int L;
	struct dl_err infeas;	/* why the best-looking candidate failed */
	int have_infeas;
	double infeas_t;
	struct dl_err err;	/* a hard error (DL_ESYS) stops the search */
	int failed;
	struct tcache tc;
	struct kcache pc;	/* key with m -> struct part_result */
	struct kcache fc;	/* key with min(m, S) -> struct part_front */
	struct cids cid;
	struct dl_sitebound sb;
	/*
	 * The least FLOPs and TP volume of one layer that stage j of S can
	 * hold (layers j .. L - S + j): wmin[(S - 1) L + j] and the same
	 * L x L further on; S's rows filled when wmin_ok[S - 1] is set.
	 */
	double *wmin;
	unsigned char *wmin_ok;
	struct kcache rings;	/* x->rings: see cost.h */
	double bound;		/* search_bound() of the root; 0: not known */

	/*
	 * The structured mode's jobs (search_pool_run()).  With a pool, the
	 * best plan, the infeasibility note and a failure go to the pool's
	 * root, under its lock; each plan's key is (T, job, round), so that
	 * the winner does not depend on which thread got there first.
	 */
	struct pool *pool;
	long job;
	int round;
	long best_job, infeas_job, gerr_job;
	int best_round, infeas_round;
	struct dl_err gerr;	/* the first failure of any thread */
	int gfailed;
	/*
	 * A mode's scratch (the structured mode's units of its last job,
	 * search_structured.c), owned by the context: search_ctx_free()
	 * releases it with scratch_free.
	 */
	void *scratch;
	void (*scratch_free)(void *scratch);
	/*
	 * Progress over several runs of the pool: jobs done in the runs
	 * before, jobs in all of them (0: this run's), and whether a run
	 * follows (its last report is then left out).
	 */
	long rep_done, rep_total;
	int rep_more;
};

/*
 * Transfer cost c of a pipeline boundary: activations forward and
 * gradients back, each priced alone (every n_e = 1).
 */
struct commctx {
	const struct dl_costctx *x;
	const int *node;
	int zero;		/* compute-only bound: transfers cost 0 */
	struct tcache *cache;	/* may be NULL */
};

/*
 * Start context C of a search over x (the caller keeps x, so and st):
 * empty caches, each freeing its own kind of value.  search_ctx_free()
 * frees what it owns apart from the plans it points to.
 */
void search_ctx_init(struct ctx *C, const struct dl_costctx *x,
    const struct search_opts *so, struct search_stats *st);
/*
 * A search of its own from x: *xl becomes a copy of x whose ring orders
 * are cached in C (x's cache is left alone), C a context on xl whose
 * best plan is best.  The caller keeps xl, so, st and best.
 */
void search_ctx_open(struct ctx *C, struct dl_costctx *xl,
    const struct dl_costctx *x, const struct search_opts *so,
    struct search_stats *st, struct dl_plan *best);
void search_ctx_free(struct ctx *C);
/*
 * A context W for another thread of C's search: *xw becomes a copy of
 * C's cost context with caches of W's own and, with own_router set, a
 * clone of its router (which a router's prices need, since they change
 * it); W's counts go to *ws.  search_ctx_thread_free() adds them to *to
 * and frees W and the clone; the caller keeps xw.
 */
void search_ctx_thread(struct ctx *W, struct dl_costctx *xw,
    const struct ctx *C, struct search_stats *ws, int own_router);
void search_ctx_thread_free(struct ctx *W, struct search_stats *to,
    int own_router);

/* The one-way times of a boundary from node a to node b (each way
 * priced alone, cached in cc->cache), *fwd a to b and *bwd back. */
void search_comm_dirs(const struct commctx *cc, int a, int b, double bytes,
    double *fwd, double *bwd);
/* The price c of boundary j of cc's pipeline for a transfer of bytes
 * each way (a part_group comm callback; p is a struct commctx). */
void search_comm(void *p, int j, double bytes, double *fwd, double *bwd);
/*
 * A_g and M_g of a pipeline of S stages on node[j] with TP degree k[j]
 * ending at layer last[j], transfers priced unshared (cache may be NULL):
 * A is one micro-batch's fill (every t and both transfers of every
 * boundary) and M the 1F1B steady period (pipesched.h: the largest
 * stage lane, its compute plus the transfers it receives), so that
 * A + (m - 1) M approximates T_g for the data split.
 */
void search_group_am(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, double *A,
    double *M);

/*
 * A lower bound on T_g of that pipeline with m micro-batches, whatever
 * the transfers share (sharing only slows them): pipe_lower() with each
 * transfer priced alone.
 */
double search_group_lb(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, long m);

/* The exact 1F1B makespan of that pipeline, its transfers priced alone. */
double search_group_span(const struct dl_costctx *x, int S, const int *node,
    const int *k, const int *last, struct tcache *cache, long m);
/*
 * The last step of the search (search_cuts.c): move the stage boundaries
 * of p's pipelines while their exact makespan falls; p changes only when
 * its full T falls.  Returns how many plans were priced in full.
 */
long search_refine_cuts(const struct dl_costctx *x, struct dl_plan *p);

/* Fill p with the plan of shape sh, stage ends last[g], split m[g]; groups
 * with no micro-batches are left out. */
void search_build_plan(const struct ctx *C, struct dl_plan *p,
    const struct shape *sh, int *const *last, const long *m);
/*
 * Whether a plan of C's job and round whose time is at least lb cannot
 * win: it would not come before the best so far.
 */
int search_cut(struct ctx *C, double lb);
/* Score the plan in C->work; keep it when it is the best so far. */
void search_consider(struct ctx *C);
/* Whether the key (T t, job j, round r) of a plan comes before (t2, j2,
 * r2): the order in which the search prefers plans. */
int search_key_before(double t, long j, int r, double t2, long j2, int r2);

/*
 * The improvement phase's shapes solved a batch at a time on nt threads
 * (search_batch.c), with the outcome of solving them one by one on C:
 * the same best plan, the same budget left.  batch_add() takes a shape
 * the caller has charged to *left (ok 0: one it would not solve), copies
 * it, and solves the batch when full; batch_flush() solves what is left.
 * Both return 1 when the batch made C's best strictly faster; the usual
 * mode then stops at the first shape that did and gives the budget of
 * the shapes after it back, and with batch_all() set every shape counts
 * (a run of moves that keeps the best of all).  batch_free() adds the
 * threads' counts to C's.
 */
struct batch;
/* Below this many GPUs the structured mode and the improvement phase run
 * on one thread. */
#define THREADS_MIN_GPUS 256
struct batch *batch_new(struct ctx *C, int nt, long *left);
int batch_add(struct batch *b, const struct shape *sh, int ok, long charge);
int batch_flush(struct batch *b);
void batch_all(struct batch *b, int all);
void batch_free(struct batch *b);

/* Whether G groups of at most maxs stages are a plan of strategy strat,
 * and whether shape sh is. */
int search_strategy_fits(int strat, int G, int maxs);
int search_strategy_allows(int strat, const struct shape *sh);

/* The units with TP degree k (the largest power of two <= the GPUs left)
 * of every node into u[] (room for every GPU); returns their number. */
size_t search_make_units(const struct dl_costctx *x, int k, struct unit *u);
/* The same for node alone (room for its GPUs). */
size_t search_node_units(const struct dl_costctx *x, int node, int k,
    struct unit *u);
/* qsort order of unit pointers: faster first, then node, then GPU. */
int search_cmp_unit(const void *a, const void *b);

/*
 * search_improve.c, also used by search_explain.c.  The units of the
 * nodes best does not use, cut at most wmax GPUs wide (0: no limit), into
 * lo[] (room for every GPU); marks used[] (room for every node) and
 * returns their number.
 */
size_t search_left_units(const struct dl_costctx *x, const struct dl_plan *best,
    char *used, struct unit *lo, int wmax);
/* best's stages as units followed by room for nmore units, their number
 * in *n; NULL when a stage's GPUs are not one contiguous run. */
struct unit *search_plan_units(const struct dl_costctx *x,
    const struct dl_plan *best, size_t nmore, size_t *n);

/*
 * Run jobs 0 .. njobs - 1 as run(C, j, arg) on nt threads (nt <= 1: on C
 * alone, in order); each thread takes the lowest job nobody has taken.
 * run returns 0 when no later job can win, which stops every thread, and
 * a job that sets C->failed stops them too.  C is one of the threads; the
 * others get contexts and routers of their own, their counts are added to
 * C's, and the failure of the lowest job becomes C's.  Returns the number
 * of jobs run.
 */
size_t search_pool_run(struct ctx *C, size_t njobs, int nt,
    int (*run)(struct ctx *C, size_t j, void *arg), void *arg);

/*
 * A striped shape (search_stripe.c): G groups, each of them the same 1/G
 * of the GPUs of the top fastest nodes (of one site or of any) whose GPUs
 * G divides, in units of
 * k GPUs (less where a node's share is smaller); rev reverses the stage
 * order.
 */
struct stripe {
	int G, k, top, rev;
	int site;		/* only the nodes of this site; -1: any */
};
/* The number of nodes (of site, -1: any) whose GPUs G divides into G
 * equal parts. */
size_t search_stripe_count(const struct dl_costctx *x, int G, int site);
/*
 * The shape of stripe sp in sh, over units[] and u[] (room for every GPU)
 * and S[] and off[] (room for sp->G).  Returns 0 when sp names no shape
 * the options allow (too few nodes, more stages than layers or
 * --max-stages, a degree that changes no unit, more groups than
 * micro-batches) or one that a smaller k already gives.
 */
int search_stripe_shape(const struct ctx *C, const struct stripe *sp,
    struct unit *units, const struct unit **u, int *S, int *off,
    struct shape *sh);
/*
 * A floor under the time per micro-batch of group g of sh's slowest
 * stage, whatever the partition (T_g >= m_g times it), and a lower bound
 * on T for every plan of sh; *cut gets a second one, at least as large,
 * that counts those floors too (search_structured.c says how).  Tests
 * check both against every plan of small shapes.
 */
double search_group_floor(struct ctx *C, const struct shape *sh, int g);
double search_shape_bound(struct ctx *C, const struct shape *sh,
    double *cut);
/*
 * The structured mode's inner loop for one shape: partition each group,
 * split the micro-batches, repeat until the split stops changing; every
 * round's plan is scored (search_consider()).
 */
void search_solve_shape(struct ctx *C, const struct shape *sh);

/*
 * The two modes: score their candidates on C.  The structured mode runs
 * SEARCH_PASSES passes of jobs (its pipelines, the stripes over any
 * nodes, the stripes of each site, the mixed shapes from pass MIXED_PASS
 * on); when a pass beats the best so far it copies that best into the
 * next of prev[] (not initialised before; the caller frees them), and
 * it returns how many it copied.  *mixed is set to 1 when a pass of
 * mixed shapes won last (prev[] then ends with the best of the passes
 * before it), else 0.
 */
#define SEARCH_PASSES 5
#define MIXED_PASS 3
/*
 * Above this many GPUs the mixed pass is bounded: it runs at most twice as
 * many structures as the first pass did (the best bounds first), and its
 * line goes through the improvement phase only when it already beats the
 * other passes' plan.  Above IMPROVE_MAX_GPUS it runs only the structures
 * of the first pass's best's node set and stage count, and a fifth pass
 * runs those of the set's other stage counts when the set has at most
 * MIXED_SET_GPUS GPUs (on gen 2's 4,096 GPUs x 80 layers its 584 GPUs
 * gave a plan 6.4% faster); sets of 4,096 GPUs took 5 to 8 s more there
 * for nothing.  A pass of its own, so that its plan, polished, is never
 * slower than the fourth pass's would have been.
 */
#define MIXED_FULL_GPUS 256
#define MIXED_SET_GPUS 1024
int search_structured(struct ctx *C, struct dl_plan prev[SEARCH_PASSES - 1],
    int *mixed);
void search_exhaustive(struct ctx *C);
/* The search for so->runtime other than dlplan (search_runtime.c). */
void search_runtime(struct ctx *C);

#endif
