/*
 * test_forecast.c - the planner's and router's forecast hooks.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "forecast.h"
#include "gmc.h"
#include "tap.h"

static long steps[20] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19 };

static void
node_loads(void)
{
	static const double two[] = { 0.3, 0.7 };
	double busy[10], wave[20], want[3], u[4];
	struct dl_node nodes[4];
	struct dl_series load[4];
	struct dl_cluster c;
	struct dl_err e = { 0 };
	struct gmc_opts o;
	struct gmc_fit f;

	for (int k = 0; k < 10; k++)
		busy[k] = 0.99;
	for (int k = 0; k < 20; k++)
		wave[k] = 0.5 + 0.2 * sin(0.7 * k);
	memset(&c, 0, sizeof(c));
	memset(nodes, 0, sizeof(nodes));
	memset(load, 0, sizeof(load));
	nodes[0].id = "idle";
	nodes[1].id = "short";
	nodes[2].id = "busy";
	nodes[3].id = "wave";
	load[1].n = 2;
	load[1].t = steps;
	load[1].v = (double *)two;
	load[2].n = 10;
	load[2].t = steps;
	load[2].v = busy;
	load[3].n = 20;
	load[3].t = steps;
	load[3].v = wave;
	c.nodes = nodes;
	c.nnodes = 4;

	is_int(forecast_node_loads(&c, 3, 0, u, &e), DL_OK, "no load history");
	ok(u[0] == 0 && u[1] == 0 && u[2] == 0 && u[3] == 0,
	    "no load history: every node idle");
	c.load = load;
	c.has_load = 1;
	is_int(forecast_node_loads(&c, 3, 0, u, &e), DL_OK, "node loads");
	is_near(u[0], 0, 0, "node without history: 0");
	is_near(u[1], 0.7, 0, "node with 2 points: its last value");
	is_near(u[2], FORECAST_LOAD_MAX, 0, "busy node clamped to 0.95");
	gmc_opts_default(&o);
	gmc_fit(wave, 20, &o, &f, &e);
	gmc_forecast(&f, 3, want);
	is_near(u[3], (want[0] + want[1] + want[2]) / 3, 1e-15,
	    "node with 20 points: mean GMC forecast over 3 steps, window 16");
	ok(f.n == 16 && f.states == 3 && f.correction == GMC_EXPECT,
	    "defaults: window 16, 3 states, expect");
}

static void
mean_series(void)
{
	static long ta[] = { 0, 1, 2 }, tb[] = { 1, 3 };
	static double va[] = { 0.2, 0.4, 0.6 }, vb[] = { 0.8, 0.1 };
	struct dl_series s[3], m;
	struct dl_cluster c;
	double u;
	struct dl_err e = { 0 };

	memset(s, 0, sizeof(s));
	s[0].n = 3;
	s[0].t = ta;
	s[0].v = va;
	s[2].n = 2;
	s[2].t = tb;
	s[2].v = vb;
	series_mean(s, 3, &m);
	is_int((long)m.n, 4, "mean series: 4 distinct steps");
	ok(m.t[0] == 0 && m.t[1] == 1 && m.t[2] == 2 && m.t[3] == 3,
	    "mean series: steps ascending");
	is_near(m.v[0], 0.2, 0, "mean series t=0: one history");
	is_near(m.v[1], (0.4 + 0.8) / 2, 0, "mean series t=1: two");
	is_near(m.v[2], 0.6, 0, "mean series t=2");
	is_near(m.v[3], 0.1, 0, "mean series t=3");
	is_int(forecast_mean(&m, 0, 2, &u, &e), DL_OK, "mean of 4 points");
	ok(u >= 0 && u <= 1, "forecast of the mean series in [0, 1]");
	series_free(&m);

	memset(&c, 0, sizeof(c));
	forecast_mean_link_series(&c, &m);
	is_int((long)m.n, 0, "no traffic: empty mean series");
	is_int(forecast_mean(&m, 0, 1, &u, &e), DL_OK, "empty series forecast");
	is_near(u, 0, 0, "empty series forecasts 0");
	c.traffic = s;
	c.nedges = 3;
	forecast_mean_link_series(&c, &m);
	is_int((long)m.n, 4, "cluster traffic: mean series");
	series_free(&m);
}

static void
run_and_backtest(void)
{
	double v[8] = { 0.30, 0.32, 0.35, 0.33, 0.36, 0.38, 0.37, 0.40 };
	struct dl_series s = { 8, steps, v };
	struct forecast_result r;
	struct forecast_acc acc[2 * FM_NMETHODS], all[2 * FM_NMETHODS];
	struct gmc_opts o;
	struct dl_err e = { 0 };

	gmc_opts_default(&o);
	is_int(forecast_run(&s, &o, 0, 2, &r, &e), DL_OK, "run: fits");
	is_int((long)r.f.n, 8, "run: all points fitted");
	is_near(r.mean, (r.fc[0] + r.fc[1]) / 2, 1e-15, "run: mean of fc");
	free(r.fc);
	o.window = 4;
	memset(acc, 0, sizeof(acc));
	memset(all, 0, sizeof(all));
	is_int(forecast_backtest(&s, &o, 2, 1, acc, &e), DL_OK, "backtest");
	is_int(acc[FM_GMC].n, 4, "backtest: h=1 from origins 4..7");
	is_int(acc[FM_NMETHODS + FM_LAST].n, 3, "backtest: h=2 from 4..6");
	is_near(acc[FM_LAST].ae, 0.03 + 0.02 + 0.01 + 0.03, 1e-12,
	    "backtest: last value's absolute errors at h=1");
	forecast_acc_merge(all, acc, 2 * FM_NMETHODS);
	forecast_acc_merge(all, acc, 2 * FM_NMETHODS);
	is_int(all[FM_MEAN].n, 8, "merge: sums add up");
}

int
main(void)
{
	node_loads();
	mean_series();
	run_and_backtest();
	return done_testing();
}
