/*
 * test_route.c - MDP routing (dlplan(1) ALGORITHMS, Routing) against
 * hand-derived costs and a brute force over simple paths, and ring order
 * against an exhaustive search.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forecast.h"
#include "ring.h"
#include "route.h"
#include "sb.h"
#include "tap.h"

#define NODEH "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"

static void
put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fp = fopen(path, "w")) == NULL) {
		perror(path);
		exit(2);
	}
	fputs(text, fp);
	fclose(fp);
}

/* Write a cluster directory and load it; links and traffic may be NULL. */
static void
load(struct dl_cluster *c, const char *nodes, const char *links,
    const char *traffic)
{
	char dir[] = "/tmp/dlplan-test-route.XXXXXX", path[600];
	struct dl_cluster_paths p = { 0 };
	struct dl_err e = { 0 };
	static const char *files[] = { "nodes.csv", "links.csv",
	    "traffic.csv" };

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(2);
	}
	put(dir, "nodes.csv", nodes);
	if (links)
		put(dir, "links.csv", links);
	if (traffic)
		put(dir, "traffic.csv", traffic);
	p.dir = dir;
	if (cluster_load(c, &p, &e) != DL_OK) {
		printf("# cluster: %s\n", e.msg);
		exit(2);
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static struct dl_router *
router(const struct dl_cluster *c, int states)
{
	struct dl_route_opts o = { states, 1, 0 };
	struct dl_router *r;
	struct dl_err e = { 0 };

	if (router_new(&r, c, &o, &e) != DL_OK) {
		printf("# router: %s\n", e.msg);
		exit(2);
	}
	return r;
}

static int
V(const struct dl_cluster *c, const char *id)
{
	int v = cluster_vertex(c, id);

	if (v < 0) {
		printf("# no vertex %s\n", id);
		exit(2);
	}
	return v;
}

/* The path of a route as "a>b>c". */
static const char *
path_str(const struct dl_cluster *c, const struct dl_route *rt)
{
	static char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rt->npath && n < sizeof(buf) - 80; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s",
		    i ? ">" : "", c->verts[rt->path[i]].id);
	return buf;
}

/*
 * The hand-checked graph: nodes a (site s1) and b (s2), relays x and r
 * (vertex order a, b, x, r), duplex links
 *	a-x 100 Gbps 1 ms, x-b 100 Gbps 1 ms, a-r 50 Gbps 2 ms, r-b 50 Gbps 2 ms.
 * traffic.csv has three steps on x->b only: 0.1, 0.9, 0.1.  With K = 2
 * the mean series is that one: regimes 0, 1, 0; transitions 0->1 and
 * 1->0, so Q = [[0, 1], [1, 0]]: the regime flips at every hop.  Three
 * steps (< 4) give the start regime of the last step, 0.  u(x->b) = 0.1
 * in regime 0 and 0.9 in regime 1; every other edge has no history (0).
 *
 * S = 1e9 bytes (8e9 bits):
 *	a->x  0.001 + 8e9/1e11            = 0.081
 *	x->b  0.001 + 8e9/(1e11 * 0.9)    = 0.0898888...  (regime 0)
 *	      0.001 + 8e9/(1e11 * 0.1)    = 0.801         (regime 1)
 *	a->r, r->b  0.002 + 8e9/5e10      = 0.162
 * D*: b 0, x 0.0898888, r 0.162, a min(0.081 + 0.0898888, 0.324) =
 * 0.1708888; so from a both x (0.0899 < 0.1709) and r (0.162 < 0.1709)
 * are admissible.  C(x, l) = cost(x->b, l), C(r, l) = 0.162.
 *	C(a, 0) = min(0.081 + C(x, 1), 0.162 + C(r, 1))
 *	        = min(0.882, 0.324) = 0.324          via r (the detour)
 *	C(a, 1) = min(0.081 + C(x, 0), 0.324)
 *	        = 0.081 + 0.0898888... = 0.1708888   via x (direct)
 * Starting in regime 0 the transfer meets x->b congested (regime 1) one
 * hop later, so it takes the detour; starting in regime 1 it does not.
 */
static void
hand_four(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_route rt;
	struct dl_regime_info ri;
	struct dl_err e = { 0 };
	double cxb0 = 0.001 + 8e9 / (1e11 * (1 - 0.1));
	int a, b, x, rr;

	load(&c, NODEH "a,s1,1,G,1,1,1,100\nb,s2,1,G,1,1,1,100\n",
	    "src,dst,gbps,latency_ms\na,x,100,1\nx,b,100,1\na,r,50,2\n"
	    "r,b,50,2\n",
	    "t,src,dst,util\n0,x,b,0.1\n1,x,b,0.9\n2,x,b,0.1\n");
	a = V(&c, "a"), b = V(&c, "b"), x = V(&c, "x"), rr = V(&c, "r");
	is_int(x, 2, "hand: x is vertex 2 (first in links.csv)");
	r = router(&c, 2);
	router_info(r, &ri);
	is_int(ri.nregimes, 2, "hand: K = 2");
	is_int(ri.start, 0, "hand: start regime = regime of the last step");
	ok(ri.q[0] == 0 && ri.q[1] == 1 && ri.q[2] == 1 && ri.q[3] == 0,
	    "hand: Q = [[0, 1], [1, 0]]");
	ok(ri.count[1] == 1 && ri.count[2] == 1 && ri.steps[0] == 2 &&
	    ri.steps[1] == 1, "hand: transition counts and steps per regime");
	{
		int exb = cluster_edge(&c, x, b), ebx = cluster_edge(&c, b, x);

		is_near(ri.ubar[exb * 2 + 0], 0.1, 1e-15, "hand: u(x->b, 0)");
		is_near(ri.ubar[exb * 2 + 1], 0.9, 1e-15, "hand: u(x->b, 1)");
		ok(ri.ubar[ebx * 2] == 0 && ri.ubar[ebx * 2 + 1] == 0,
		    "hand: no history: u = 0");
		is_near(router_hop_cost(r, exb, 1, 1e9), 0.801, 1e-14,
		    "hand: hop cost of x->b in regime 1");
	}

	is_int(router_flow(r, a, b, 1e9, 0, &rt, &e), DL_OK, "hand: a->b");
	is_near(rt.expected_s, 0.324, 1e-14, "hand: C(a, 0) = 0.324");
	is_near(rt.regime_s[0], 0.324, 1e-14, "hand: regime 0 value");
	is_near(rt.regime_s[1], 0.081 + cxb0, 1e-14,
	    "hand: C(a, 1) = 0.081 + 0.001 + 8e9/9e10");
	is_int(rt.first_hop[0], rr, "hand: regime 0 takes the detour via r");
	is_int(rt.first_hop[1], x, "hand: regime 1 goes direct via x");
	is_str(path_str(&c, &rt), "a>r>b", "hand: path at the start regime");
	is_int(rt.regime, 0, "hand: route reports the start regime");
	route_clear(&rt);

	/* The reverse direction has no traffic: 0.081 + 0.081 via x. */
	is_int(router_flow(r, b, a, 1e9, 0, &rt, &e), DL_OK, "hand: b->a");
	is_near(rt.expected_s, 0.162, 1e-14, "hand: b->a = 0.162");
	is_str(path_str(&c, &rt), "b>x>a", "hand: b->a direct");
	route_clear(&rt);
	router_free(r);
	cluster_free(&c);
}

/*
 * Ties: two identical relays p and q between a and b, one regime.  The
 * policy takes the first in listing order, i.e. the relay that appears
 * first in links.csv.
 */
static void
ties(void)
{
	for (int swap = 0; swap < 2; swap++) {
		struct dl_cluster c;
		struct dl_router *r;
		struct dl_route rt;
		struct dl_err e = { 0 };

		load(&c, NODEH "a,s1,1,G,1,1,1,100\nb,s2,1,G,1,1,1,100\n",
		    swap ? "src,dst,gbps,latency_ms\na,q,10,1\nq,b,10,1\n"
		    "a,p,10,1\np,b,10,1\n" :
		    "src,dst,gbps,latency_ms\na,p,10,1\np,b,10,1\n"
		    "a,q,10,1\nq,b,10,1\n", NULL);
		r = router(&c, 3);
		is_int(router_nregimes(r), 1, "ties: one regime without "
		    "traffic.csv");
		router_flow(r, V(&c, "a"), V(&c, "b"), 1e6, 0, &rt, &e);
		is_str(path_str(&c, &rt), swap ? "a>q>b" : "a>p>b", swap ?
		    "ties: q listed first wins" : "ties: p listed first wins");
		route_clear(&rt);
		router_free(r);
		cluster_free(&c);
	}
}

/*
 * n_e: two equal flows over one link n1 -> n2 (100 Gbps, 1 ms).  The
 * first pays 0.001 + 8e9/1e11 = 0.081, the second sees n_e = 2 and pays
 * 0.001 + 0.16 = 0.161.  The reverse edge is untouched; a query without
 * commit changes nothing; router_reset() clears n_e.
 */
static void
sharing(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_route rt;
	struct dl_err e = { 0 };
	int n1, n2, e12;

	load(&c, NODEH "n1,s1,1,G,1,1,1,100\nn2,s2,1,G,1,1,1,100\n",
	    "src,dst,gbps,latency_ms\nn1,n2,100,1\n", NULL);
	n1 = V(&c, "n1"), n2 = V(&c, "n2"), e12 = cluster_edge(&c, n1, n2);
	r = router(&c, 3);
	router_flow(r, n1, n2, 1e9, 0, &rt, &e);
	is_near(rt.expected_s, 0.081, 1e-15, "sharing: query alone");
	route_clear(&rt);
	is_int(router_ne(r, e12), 1, "sharing: a query does not commit");
	router_flow(r, n1, n2, 1e9, 1, &rt, &e);
	is_near(rt.expected_s, 0.081, 1e-15, "sharing: first flow 0.081");
	route_clear(&rt);
	is_int(router_ne(r, e12), 2, "sharing: n_e = 2 after one commit");
	router_flow(r, n1, n2, 1e9, 1, &rt, &e);
	is_near(rt.expected_s, 0.161, 1e-15,
	    "sharing: second flow pays double transfer time");
	route_clear(&rt);
	router_flow(r, n2, n1, 1e9, 1, &rt, &e);
	is_near(rt.expected_s, 0.081, 1e-15, "sharing: reverse edge free");
	route_clear(&rt);
	router_reset(r);
	is_int(router_ne(r, e12), 1, "sharing: reset clears n_e");
	router_flow(r, n1, n2, 1e9, 0, &rt, &e);
	is_near(rt.expected_s, 0.081, 1e-15, "sharing: after reset");
	route_clear(&rt);
	router_free(r);
	cluster_free(&c);
}

/*
 * The implicit switch: n1 (nic 100 Gbps) and n2 (nic 25 Gbps) in one
 * site without links.csv.  n1 -> n2 costs 2 * 0.005 ms + 8 S / 100e9,
 * n2 -> n1 costs 2 * 0.005 ms + 8 S / 25e9: the sender's NIC, and only
 * the latency out of the switch.  With traffic on the node->switch edges
 * (K = 3) the fast path (no value iteration) must give the same bits as
 * the full MDP.
 */
static void
implicit_switch(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_route rt, rf;
	struct dl_router_stats st;
	struct dl_err e = { 0 };
	const double S = 3e8;
	int n1, n2, n3, sw, same = 1;

	load(&c, NODEH "n1,lab,1,G,1,1,1,100\nn2,lab,1,G,1,1,1,25\n", NULL,
	    NULL);
	n1 = V(&c, "n1"), n2 = V(&c, "n2"), sw = V(&c, "sw.lab");
	r = router(&c, 3);
	router_flow(r, n1, n2, S, 0, &rt, &e);
	is_near(rt.expected_s, 2 * 0.005e-3 + 8 * S / 100e9, 1e-15,
	    "implicit: 2 x 0.005 ms + 8 S / nic of n1");
	is_str(path_str(&c, &rt), "n1>sw.lab>n2", "implicit: via sw.lab");
	is_int(rt.first_hop[0], sw, "implicit: first hop the switch");
	route_clear(&rt);
	router_flow(r, n2, n1, S, 0, &rt, &e);
	is_near(rt.expected_s, 2 * 0.005e-3 + 8 * S / 25e9, 1e-15,
	    "implicit: 2 x 0.005 ms + 8 S / nic of n2");
	route_clear(&rt);
	router_stats(r, &st);
	ok(st.fast == 2 && st.solves == 0, "implicit: fast path, no value "
	    "iteration (%ld fast, %ld solves)", st.fast, st.solves);
	router_free(r);
	cluster_free(&c);

	load(&c, NODEH "n1,lab,1,G,1,1,1,100\nn2,lab,1,G,1,1,1,25\n"
	    "n3,lab,1,G,1,1,1,40\n", NULL,
	    "t,src,dst,util\n0,n1,sw.lab,0.1\n1,n1,sw.lab,0.5\n"
	    "2,n1,sw.lab,0.8\n3,n1,sw.lab,0.4\n4,n1,sw.lab,0.2\n"
	    "5,n1,sw.lab,0.7\n0,n2,sw.lab,0.3\n2,n2,sw.lab,0.9\n"
	    "5,n3,sw.lab,0.35\n");
	n1 = V(&c, "n1"), n2 = V(&c, "n2"), n3 = V(&c, "n3");
	r = router(&c, 3);
	for (int rep = 0; rep < 2; rep++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++) {
				int vi = i == 0 ? n1 : i == 1 ? n2 : n3;
				int vj = j == 0 ? n1 : j == 1 ? n2 : n3;

				if (i == j)
					continue;
				router_fast_paths(r, 1);
				router_flow(r, vi, vj, S, 0, &rf, &e);
				router_fast_paths(r, 0);
				router_flow(r, vi, vj, S, rep, &rt, &e);
				for (int l = 0; l < 3; l++)
					if (rf.regime_s[l] != rt.regime_s[l] ||
					    rf.first_hop[l] != rt.first_hop[l])
						same = 0;
				if (strcmp(path_str(&c, &rf),
				    path_str(&c, &rt)) != 0)
					same = 0;
				route_clear(&rf);
				route_clear(&rt);
			}
	ok(same, "implicit: fast path equals the MDP bit for bit (K = 3, "
	    "with and without n_e)");
	router_free(r);
	cluster_free(&c);
}

/*
 * The regime model, K = 3, four edges with history over six steps
 * (edge order a->b, b->a, a->g, g->a):
 *	a->b  t0 0.1  t1 0.5  t2 0.2  t3 0.95  t4 1.0
 *	b->a  t0 0.2  t1 0.4  t2 0.2           t4 0.8  t5 0.5
 *	a->g  t0 1
 *	g->a  t0 0.3
 * Means: t0 (0.1 + 0.2 + 1 + 0.3)/4 = 0.4 -> 1, t1 0.45 -> 1, t2 0.2 -> 0,
 * t3 0.95 -> 2, t4 0.9 -> 2, t5 0.5 -> 1.  Transitions 1->1, 1->0, 0->2,
 * 2->2, 2->1: Q rows (0, 0, 1), (1/2, 1/2, 0), (0, 1/2, 1/2).
 *	u(a->b) = 0.2, (0.1 + 0.5)/2, (0.95 + 1.0)/2 = 0.975
 *	u(b->a) = 0.2, (0.2 + 0.4 + 0.5)/3, 0.8
 *	u(a->g) = 1 clamped to 0.99, in regime 1 and (overall mean) elsewhere
 *	u(g->a) = 0.3 in regime 1 and (overall mean) elsewhere
 * Six steps (>= 4): the start regime is that of the GMC forecast of the
 * mean series.
 */
static void
regimes(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_regime_info ri;
	struct dl_series ms;
	struct dl_err e = { 0 };
	double f;
	int e1, e2, e3, e4;

	load(&c, NODEH "a,s1,1,G,1,1,1,100\nb,s2,1,G,1,1,1,100\n",
	    "src,dst,gbps,latency_ms\na,b,100,1\na,g,10,1\n",
	    "t,src,dst,util\n0,a,b,0.1\n1,a,b,0.5\n2,a,b,0.2\n3,a,b,0.95\n"
	    "4,a,b,1.0\n0,b,a,0.2\n1,b,a,0.4\n2,b,a,0.2\n4,b,a,0.8\n"
	    "5,b,a,0.5\n0,a,g,1\n0,g,a,0.3\n");
	e1 = cluster_edge(&c, V(&c, "a"), V(&c, "b"));
	e2 = cluster_edge(&c, V(&c, "b"), V(&c, "a"));
	e3 = cluster_edge(&c, V(&c, "a"), V(&c, "g"));
	e4 = cluster_edge(&c, V(&c, "g"), V(&c, "a"));
	r = router(&c, 3);
	router_info(r, &ri);
	is_int((long)ri.nsteps, 6, "regimes: six steps");
	ok(ri.steps[0] == 1 && ri.steps[1] == 3 && ri.steps[2] == 2,
	    "regimes: steps per regime 1, 3, 2");
	ok(ri.count[1 * 3 + 1] == 1 && ri.count[1 * 3 + 0] == 1 &&
	    ri.count[0 * 3 + 2] == 1 && ri.count[2 * 3 + 2] == 1 &&
	    ri.count[2 * 3 + 1] == 1 && ri.count[0] == 0 &&
	    ri.count[1] == 0 && ri.count[5] == 0 && ri.count[6] == 0,
	    "regimes: transition counts 1->1, 1->0, 0->2, 2->2, 2->1");
	ok(ri.q[0] == 0 && ri.q[1] == 0 && ri.q[2] == 1 &&
	    ri.q[3] == 0.5 && ri.q[4] == 0.5 && ri.q[5] == 0 &&
	    ri.q[6] == 0 && ri.q[7] == 0.5 && ri.q[8] == 0.5,
	    "regimes: Q row-normalised");
	is_near(ri.ubar[e1 * 3 + 0], 0.2, 1e-15, "regimes: u(a->b, 0)");
	is_near(ri.ubar[e1 * 3 + 1], (0.1 + 0.5) / 2, 1e-15,
	    "regimes: u(a->b, 1)");
	is_near(ri.ubar[e1 * 3 + 2], 0.975, 1e-15, "regimes: u(a->b, 2)");
	is_near(ri.ubar[e2 * 3 + 0], 0.2, 1e-15, "regimes: u(b->a, 0)");
	is_near(ri.ubar[e2 * 3 + 1], (0.2 + 0.4 + 0.5) / 3, 1e-15,
	    "regimes: u(b->a, 1)");
	is_near(ri.ubar[e2 * 3 + 2], 0.8, 1e-15, "regimes: u(b->a, 2)");
	ok(ri.ubar[e3 * 3 + 0] == 0.99 && ri.ubar[e3 * 3 + 1] == 0.99 &&
	    ri.ubar[e3 * 3 + 2] == 0.99,
	    "regimes: util 1 clamped to 0.99, overall mean in empty regimes");
	ok(ri.ubar[e4 * 3 + 0] == 0.3 && ri.ubar[e4 * 3 + 1] == 0.3 &&
	    ri.ubar[e4 * 3 + 2] == 0.3,
	    "regimes: data only in regime 1: overall mean elsewhere");
	forecast_mean_link_series(&c, &ms);
	forecast_mean(&ms, 0, 1, &f, &e);
	forecast_series_free(&ms);
	is_int(ri.start, f >= 1 ? 2 : (int)floor(f * 3),
	    "regimes: start regime = floor(GMC forecast * K)");
	ok(ri.forecast == f, "regimes: forecast reported (%g)", f);
	router_free(r);
	cluster_free(&c);
}

/* No route: g reaches n2 one way only, so nothing reaches g. */
static void
no_route(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_route rt;
	struct dl_err e = { 0 };

	load(&c, NODEH "n1,s1,1,G,1,1,1,100\nn2,s2,1,G,1,1,1,100\n",
	    "src,dst,gbps,latency_ms,duplex\nn1,n2,100,1,1\ng,n2,10,1,0\n",
	    NULL);
	r = router(&c, 3);
	is_int(router_flow(r, V(&c, "n1"), V(&c, "g"), 1e6, 1, &rt, &e),
	    DL_EINFEAS, "no route: DL_EINFEAS");
	is_str(e.msg, "no route from 'n1' to 'g' in the network",
	    "no route: message names both ends");
	ok(rt.path == NULL, "no route: nothing returned");
	is_int(router_flow(r, V(&c, "g"), V(&c, "n1"), 1e6, 1, &rt, &e),
	    DL_OK, "no route: the other way works");
	is_str(path_str(&c, &rt), "g>n2>n1", "no route: g>n2>n1");
	route_clear(&rt);
	router_free(r);
	cluster_free(&c);
}

/* The cache: one solve serves every source toward the same b and S. */
static void
cache(void)
{
	struct dl_cluster c;
	struct dl_router *r;
	struct dl_router_stats st;
	struct dl_route rt;
	struct dl_err e = { 0 };
	double first, again;

	load(&c, NODEH "a,s1,1,G,1,1,1,100\nb,s2,1,G,1,1,1,100\n"
	    "d,s3,1,G,1,1,1,100\n",
	    "src,dst,gbps,latency_ms\na,b,100,1\nb,d,100,1\nd,a,100,1\n",
	    NULL);
	r = router(&c, 3);
	router_flow(r, V(&c, "a"), V(&c, "b"), 1e9, 0, &rt, &e);
	first = rt.expected_s;
	route_clear(&rt);
	router_flow(r, V(&c, "d"), V(&c, "b"), 1e9, 0, &rt, &e);
	route_clear(&rt);
	router_flow(r, V(&c, "a"), V(&c, "b"), 1e9, 0, &rt, &e);
	again = rt.expected_s;
	route_clear(&rt);
	router_stats(r, &st);
	ok(st.solves == 1 && st.cache_hits == 2, "cache: same b and S share "
	    "one solve (%ld solves, %ld hits)", st.solves, st.cache_hits);
	ok(first == again, "cache: same answer");
	router_flow(r, V(&c, "a"), V(&c, "b"), 2e9, 0, &rt, &e);
	route_clear(&rt);
	router_flow(r, V(&c, "a"), V(&c, "b"), 1e9, 1, &rt, &e);
	route_clear(&rt);
	router_flow(r, V(&c, "a"), V(&c, "b"), 1e9, 0, &rt, &e);
	ok(rt.expected_s > first, "cache: a commit invalidates");
	route_clear(&rt);
	router_reset(r);
	router_stats(r, &st);
	ok(st.solves == 3, "cache: other size and changed n_e solve again "
	    "(%ld solves)", st.solves);
	/*
	 * A reset brings back the idle network (every n_e = 1), so the
	 * solves made on it before the commit serve again, and the solve made
	 * under the committed n_e does not.
	 */
	router_flow(r, V(&c, "a"), V(&c, "b"), 2e9, 0, &rt, &e);
	route_clear(&rt);
	router_flow(r, V(&c, "a"), V(&c, "b"), 1e9, 0, &rt, &e);
	again = rt.expected_s;
	route_clear(&rt);
	router_stats(r, &st);
	ok(st.solves == 3 && again == first, "cache: reset after a commit "
	    "returns to the idle network's solves (%ld solves)", st.solves);
	router_flow(r, V(&c, "a"), V(&c, "b"), 4e9, 0, &rt, &e);
	route_clear(&rt);
	router_reset(r);
	router_flow(r, V(&c, "a"), V(&c, "b"), 4e9, 0, &rt, &e);
	route_clear(&rt);
	router_stats(r, &st);
	ok(st.solves == 4, "cache: reset without a commit keeps the cache");
	router_free(r);
	cluster_free(&c);
}

/* A small deterministic generator (64-bit LCG). */
static unsigned long long rng;

static double
rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* Brute force: every simple path from a to b, cost summed along it. */
struct brute {
	const struct dl_cluster *c;
	const struct dl_router *r;
	double S, best;
	int b, n, bn;
	int cur[32], bestp[32];
	unsigned char on[32];
};

static void
brute_rec(struct brute *x, int v, double cost)
{
	const struct dl_cluster *c = x->c;

	if (v == x->b) {
		if (cost < x->best) {
			x->best = cost;
			x->bn = x->n;
			memcpy(x->bestp, x->cur, (size_t)x->n * sizeof(int));
		}
		return;
	}
	for (size_t k = c->out_off[v]; k < c->out_off[v + 1]; k++) {
		int ed = c->out_edge[k], u = c->edges[ed].dst;

		if (x->on[u])
			continue;
		x->on[u] = 1;
		x->cur[x->n++] = u;
		brute_rec(x, u, cost + router_hop_cost(x->r, ed, 0, x->S));
		x->n--;
		x->on[u] = 0;
	}
}

/*
 * Random small graphs (2 nodes, 5 relays, random one-way links with
 * random bandwidth and latency, background traffic on some links) under
 * a fixed regime: every step's mean is below 1/2, so with K = 2 every
 * step is regime 0, Q = identity, and u_e(1) = u_e(0).  The MDP must
 * then find the cheapest simple path: compare value and path with the
 * brute force for every ordered pair of vertices.
 */
static void
brute_force(void)
{
	for (int seed = 1; seed <= 30; seed++) {
		struct strbuf links = STRBUF_INIT, tr = STRBUF_INIT;
		struct dl_cluster c;
		struct dl_router *r;
		const char *names[] = { "n0", "n1", "r0", "r1", "r2", "r3",
		    "r4" };
		int nv = 7, pairs = 0, cost_ok = 1, path_ok = 1, infeas_ok = 1;
		int nroutes = 0;
		double worst = 0;

		rng = (unsigned long long)seed * 7919;
		sb_adds(&links, "src,dst,gbps,latency_ms,duplex\n");
		sb_adds(&tr, "t,src,dst,util\n");
		/* A duplex backbone keeps the nodes connected. */
		sb_addf(&links, "n0,r0,%.3f,%.3f,1\nr0,n1,%.3f,%.3f,1\n",
		    10 + 390 * rnd(), 5 * rnd(), 10 + 390 * rnd(), 5 * rnd());
		for (int i = 0; i < nv; i++)
			for (int j = 0; j < nv; j++) {
				double g, lat;

				if (i == j || (i < 3 && j < 3 &&
				    (i == 2 || j == 2) && (i < 2 || j < 2)))
					continue;
				if (rnd() >= 0.35)
					continue;
				g = 10 + 390 * rnd();
				lat = rnd() < 0.2 ? 0 : 5 * rnd();
				sb_addf(&links, "%s,%s,%.3f,%.3f,0\n", names[i],
				    names[j], g, lat);
				if (rnd() < 0.5)
					for (int t = 0; t < 3; t++)
						sb_addf(&tr, "%d,%s,%s,%.4f\n", t,
						    names[i], names[j],
						    0.45 * rnd());
			}
		load(&c, NODEH "n0,s0,1,G,1,1,1,100\nn1,s1,1,G,1,1,1,100\n",
		    links.buf, tr.buf);
		r = router(&c, 2);
		if (router_regime(r) != 0 || router_nregimes(r) != 2)
			cost_ok = 0;
		for (int a = 0; a < (int)c.nverts; a++)
			for (int b = 0; b < (int)c.nverts; b++) {
				struct brute x;
				struct dl_route rt;
				struct dl_err e = { 0 };
				int rc;

				if (a == b)
					continue;
				memset(&x, 0, sizeof(x));
				x.c = &c;
				x.r = r;
				x.S = 1e6 * (1 + 999 * rnd());
				x.b = b;
				x.best = HUGE_VAL;
				x.on[a] = 1;
				x.cur[x.n++] = a;
				brute_rec(&x, a, 0);
				pairs++;
				rc = router_flow(r, a, b, x.S, 0, &rt, &e);
				if (!isfinite(x.best)) {
					if (rc != DL_EINFEAS)
						infeas_ok = 0;
					continue;
				}
				nroutes++;
				if (rc != DL_OK) {
					cost_ok = path_ok = 0;
					continue;
				}
				{
					double d = fabs(rt.expected_s - x.best) /
					    x.best;

					if (d > worst)
						worst = d;
					if (d > 1e-12 ||
					    rt.regime_s[1] != rt.regime_s[0])
						cost_ok = 0;
				}
				if (rt.npath != (size_t)x.bn)
					path_ok = 0;
				else
					for (int k = 0; k < x.bn; k++)
						if (rt.path[k] != x.bestp[k])
							path_ok = 0;
				route_clear(&rt);
			}
		ok(cost_ok, "brute force seed %d: %d of %d pairs routable, "
		    "cost = cheapest simple path (worst rel. diff %.2g)", seed,
		    nroutes, pairs, worst);
		ok(path_ok, "brute force seed %d: same path", seed);
		ok(infeas_ok, "brute force seed %d: unreachable pairs are "
		    "DL_EINFEAS", seed);
		router_free(r);
		cluster_free(&c);
		sb_free(&links);
		sb_free(&tr);
	}
}

/* Ring order. */
struct mat {
	int n;
	double w[16 * 16];
};

static double
hop(void *ctx, int i, int j)
{
	struct mat *m = ctx;

	return m->w[i * m->n + j];
}

static double
bottleneck(const struct mat *m, const int *o)
{
	double b = -HUGE_VAL;

	for (int k = 0; k < m->n; k++) {
		double x = m->w[o[k] * m->n + o[(k + 1) % m->n]];

		if (x > b)
			b = x;
	}
	return b;
}

/* Next permutation of p[0..n-1] in lexicographic order; 0 at the end. */
static int
next_perm(int *p, int n)
{
	int i = n - 2, j = n - 1;

	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return 0;
	while (p[j] <= p[i])
		j--;
	{
		int t = p[i];

		p[i] = p[j];
		p[j] = t;
	}
	for (int a = i + 1, b = n - 1; a < b; a++, b--) {
		int t = p[a];

		p[a] = p[b];
		p[b] = t;
	}
	return 1;
}

static int
is_ring(int n, const int *o)
{
	int seen[64] = { 0 };

	if (o[0] != 0)
		return 0;
	for (int k = 0; k < n; k++) {
		if (o[k] < 0 || o[k] >= n || seen[o[k]])
			return 0;
		seen[o[k]] = 1;
	}
	return 1;
}

static void
ring_exact(void)
{
	struct mat m;

	rng = 2024;
	for (int trial = 0; trial < 60; trial++) {
		int n = 1 + trial % 8, o[8], p[8], best[8];
		double bv = HUGE_VAL;
		/* Every third trial has small integer costs: many ties. */
		int ints = trial % 3 == 2;

		m.n = n;
		for (int i = 0; i < n * n; i++)
			m.w[i] = ints ? (double)(1 + (int)(4 * rnd())) : rnd();
		ring_order_hops(n, NULL, hop, &m, o);
		for (int i = 0; i < n; i++)
			p[i] = i;
		/* Permutations of 1..n-1 in lexicographic order; the first
		 * strictly best wins. */
		do {
			double v = bottleneck(&m, p);

			if (v < bv) {
				bv = v;
				memcpy(best, p, sizeof(p));
			}
		} while (n > 1 && next_perm(p + 1, n - 1));
		ok(is_ring(n, o) && bottleneck(&m, o) == bv &&
		    memcmp(o, best, (size_t)n * sizeof(int)) == 0,
		    "ring exact n=%d trial %d%s: optimal, lexicographically "
		    "first", n, trial, ints ? " (ties)" : "");
	}
}

/*
 * n = 12: three sites of four members.  Hops inside a site cost 1..2;
 * from site s to site s+1 (mod 3) they cost 10, any other cross-site hop
 * costs 50.  The best ring visits the sites in the order 0, 1, 2 and has
 * its slowest hop at 10; the heuristic must find it, keep each site
 * together, and beat the identity order on random matrices.
 */
static void
ring_twelve(void)
{
	struct mat m;
	int o[12], site[12], ok1, ok2, changes;

	rng = 99;
	m.n = 12;
	for (int i = 0; i < 12; i++)
		site[i] = (i * 5) % 3;	/* sites interleaved by index */
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < 12; j++)
			m.w[i * 12 + j] = i == j ? 0 :
			    site[i] == site[j] ? 1 + rnd() :
			    site[j] == (site[i] + 1) % 3 ? 10 : 50;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			ring_order_hops(12, NULL, hop, &m, o);
		else
			ring_order_hops(12, site, hop, &m, o);
		ok1 = is_ring(12, o) && bottleneck(&m, o) == 10;
		changes = 0;
		for (int k = 0; k < 12; k++)
			changes += site[o[k]] != site[o[(k + 1) % 12]];
		ok2 = changes == 3;
		ok(ok1, "ring n=12 %s: slowest hop 10 (got %g)", pass ?
		    "with sites" : "without sites", bottleneck(&m, o));
		ok(ok2, "ring n=12 %s: every site kept together (%d site "
		    "changes)", pass ? "with sites" : "without sites", changes);
	}
	for (int trial = 0; trial < 10; trial++) {
		int id[12];

		for (int i = 0; i < 144; i++)
			m.w[i] = rnd();
		for (int i = 0; i < 12; i++)
			id[i] = i;
		ring_order_hops(12, NULL, hop, &m, o);
		ok(is_ring(12, o) && bottleneck(&m, o) <= bottleneck(&m, id),
		    "ring n=12 random %d: a ring from member 0, no worse than "
		    "the identity (%g <= %g)", trial, bottleneck(&m, o),
		    bottleneck(&m, id));
	}
}

/* The same route, to the bit: path, times per regime and first hops. */
static int
same_route(const struct dl_route *x, const struct dl_route *y, int K)
{
	return x->npath == y->npath && memcmp(x->path, y->path, x->npath *
	    sizeof(int)) == 0 && memcmp(x->regime_s, y->regime_s, (size_t)K *
	    sizeof(double)) == 0 && memcmp(x->first_hop, y->first_hop,
	    (size_t)K * sizeof(int)) == 0;
}

/*
 * On networks above 512 vertices a flow prices only what it can reach, in
 * one pass in ascending D*; the values and paths must equal those of full
 * value iteration (fast paths off) to the last bit.
 */
static void
local_equals_full(void)
{
	struct strbuf nodes = STRBUF_INIT, links = STRBUF_INIT,
	    traffic = STRBUF_INIT;
	struct dl_cluster c;
	struct dl_router *fast, *full;
	struct dl_err e = { 0 };
	int same = 1, routed = 0, priced = 0;
	unsigned long long x = 12345;

	sb_adds(&nodes, NODEH);
	sb_adds(&links, "src,dst,gbps,latency_ms\n");
	sb_adds(&traffic, "t,src,dst,util\n");
	/* 40 leaves of 12 nodes each, a spine of 4, a ring of leaves. */
	for (int l = 0; l < 40; l++) {
		for (int i = 0; i < 12; i++) {
			sb_addf(&nodes, "n%d_%d,s%d,1,G,1,1,1,100\n", l, i,
			    l % 4);
			sb_addf(&links, "n%d_%d,leaf%d,%d,0.01\n", l, i, l,
			    50 + (int)((x = x * 6364136223846793005ULL + 1) >>
			    59));
		}
		for (int sp = 0; sp < 4; sp++)
			sb_addf(&links, "leaf%d,spine%d,%d,0.02\n", l, sp,
			    100 + 20 * sp);
		sb_addf(&links, "leaf%d,leaf%d,25,%d\n", l, (l + 1) % 40,
		    1 + l % 3);
	}
	for (int t = 0; t < 12; t++)
		for (int l = 0; l < 40; l += 3) {
			sb_addf(&traffic, "%d,leaf%d,spine%d,%.3f\n", t, l,
			    l % 4, 0.1 + 0.07 * ((t * 7 + l) % 11));
			sb_addf(&traffic, "%d,n%d_0,leaf%d,%.3f\n", t, l, l,
			    0.05 * ((t + l) % 9));
		}
	load(&c, nodes.buf, links.buf, traffic.buf);
	fast = router(&c, 3);
	full = router(&c, 3);
	router_fast_paths(full, 0);
	ok(c.nverts > 512, "big network: %zu vertices", c.nverts);
	for (int i = 0; i < 200; i++) {
		struct dl_route r1, r2;
		int a = (int)(((x = x * 6364136223846793005ULL + 1) >> 33) %
		    480), b = (int)(((x = x * 6364136223846793005ULL + 1) >> 33)
		    % 480);
		double bytes = 1e6 * (1 + i % 5);

		if (a == b)
			continue;
		if (router_flow(fast, a, b, bytes, i % 2, &r1, &e) != DL_OK ||
		    router_flow(full, a, b, bytes, i % 2, &r2, &e) != DL_OK) {
			same = 0;
			break;
		}
		routed++;
		if (!same_route(&r1, &r2, 3))
			same = 0;
		route_clear(&r1);
		route_clear(&r2);
		/*
		 * Other sources toward the same b: the fast router prices a
		 * node (a stub) from a cached solve that skipped it.
		 */
		for (int k = 0; k < 4; k++) {
			int a2 = (int)(((x = x * 6364136223846793005ULL + 1) >>
			    33) % 480);
			double t1, t2;

			if (a2 == b)
				continue;
			if (router_price(fast, a2, b, bytes, &t1, &e) !=
			    router_price(full, a2, b, bytes, &t2, &e) ||
			    memcmp(&t1, &t2, sizeof(t1)) != 0)
				same = 0;
			priced++;
		}
		if (i % 10 == 9) {
			router_reset(fast);
			router_reset(full);
		}
	}
	ok(same && routed > 150 && priced > 600, "one-pass pricing equals "
	    "value iteration bit for bit (%d flows, with sharing; %d prices)",
	    routed, priced);
	router_free(fast);
	router_free(full);
	cluster_free(&c);
	sb_free(&nodes);
	sb_free(&links);
	sb_free(&traffic);
}

/*
 * A full mesh of 24 nodes in 3 sites, traffic on a third of the links in
 * 8 regimes (a sparse Q), and a sequence of committed flows routed four
 * times from an idle network: once, again (each route is then a kept
 * one), with its first half reversed (states the memo has not seen), and
 * so again.  Each route must equal, bit for bit, that of a router that
 * solves every flow by value iteration without keeping anything.
 */
static void
memo(void)
{
	struct strbuf nodes = STRBUF_INIT, links = STRBUF_INIT,
	    traffic = STRBUF_INIT;
	struct dl_cluster c;
	struct dl_router *fast, *full;
	struct dl_router_stats s0, s1;
	struct dl_err e = { 0 };
	int n = 24, nf = 40, K = 8, same = 1, fa[40], fb[40], hits[4];
	double fs[40];
	unsigned long long x = 777;

	sb_adds(&nodes, NODEH);
	sb_adds(&links, "src,dst,gbps,latency_ms\n");
	sb_adds(&traffic, "t,src,dst,util\n");
	for (int i = 0; i < n; i++)
		sb_addf(&nodes, "m%d,s%d,1,G,1,1,1,100\n", i, i % 3);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			int far = i % 3 != j % 3;

			sb_addf(&links, "m%d,m%d,%d,%.3f\n", i, j, far ? 10 +
			    (i * 7 + j) % 40 : 100, far ? 5 + (i * j) % 23 :
			    0.01);
			if ((i + j) % 3 == 0)
				for (int t = 0; t < 16; t++)
					sb_addf(&traffic, "%d,m%d,m%d,%.3f\n",
					    t, i, j, 0.06 * ((t * 5 + i + j) %
					    16));
		}
	load(&c, nodes.buf, links.buf, traffic.buf);
	fast = router(&c, K);
	full = router(&c, K);
	router_fast_paths(full, 0);
	for (int f = 0; f < nf; f++) {
		fa[f] = (int)((x = x * 6364136223846793005ULL + 1) >> 33) % n;
		fb[f] = (fa[f] + 1 + (int)((x = x * 6364136223846793005ULL +
		    1) >> 33) % (n - 1)) % n;
		fs[f] = 1e8 * (1 + f % 4);
	}
	for (int pass = 0; pass < 4; pass++) {
		router_stats(fast, &s0);
		for (int k = 0; k < nf; k++) {
			int f = pass >= 2 && k < nf / 2 ? nf / 2 - 1 - k : k;
			struct dl_route r1, r2;

			if (router_flow(fast, fa[f], fb[f], fs[f], 1, &r1,
			    &e) != DL_OK ||
			    router_flow(full, fa[f], fb[f], fs[f], 1, &r2,
			    &e) != DL_OK) {
				same = 0;
				break;
			}
			if (!same_route(&r1, &r2, K))
				same = 0;
			route_clear(&r1);
			route_clear(&r2);
		}
		router_stats(fast, &s1);
		hits[pass] = (int)(s1.cache_hits - s0.cache_hits);
		router_reset(fast);
		router_reset(full);
	}
	ok(same, "memo: kept routes of committed flows equal value "
	    "iteration bit for bit (mesh of %d, %d regimes, %d flows x 4)",
	    n, K, nf);
	ok(hits[0] == 0 && hits[1] == nf && hits[2] < nf && hits[3] == nf,
	    "memo: a repeated sequence is answered from kept routes (%d, %d, "
	    "%d, %d of %d)", hits[0], hits[1], hits[2], hits[3], nf);
	router_free(fast);
	router_free(full);
	cluster_free(&c);
	sb_free(&nodes);
	sb_free(&links);
	sb_free(&traffic);
}

int
main(void)
{
	hand_four();
	ties();
	sharing();
	implicit_switch();
	regimes();
	no_route();
	cache();
	local_equals_full();
	memo();
	brute_force();
	ring_exact();
	ring_twelve();
	return done_testing();
}
