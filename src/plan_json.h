/*
 * plan_json.h - the members of the plan JSON that other data rides in:
 * the budget schedule and the replan lineage, as jansson values.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every plan JSON and CSV read and write lives in two files: plan_json.c
 * writes (plan_json_string(), plan_write_json(), plan_write_csv(),
 * plan_write_files()) and plan_json_read.c reads (plan_read_json(),
 * plan_read_inputs()); those are declared in plan.h, which needs no
 * <jansson.h>.  This header is for the pieces that work on a jansson
 * value of a plan's root object: the two files above and the unit tests
 * use them.  The schema is documented at the top of plan_json.c and in
 * dlplan-formats(5).
 */
#ifndef DL_PLAN_JSON_H
#define DL_PLAN_JSON_H

#include <jansson.h>

#include "cluster.h"
#include "plan.h"

#define DL_PLAN_SCHEMA "dlplan.plan/1"

/*
 * The plan JSON's "schedule" member (dlplan-formats(5)):
 *	{ "budget_per_hour", "tradeoff", "slot_steps",
 *	  "average_cost_per_hour", "cost_bound_per_hour" (null when the
 *	  bound does not apply), "average_throughput",
 *	  "unconstrained_throughput",
 *	  "slots": [ { "slot" (1-based), "forecast_steps": [first, last],
 *	    "queue", "queue_after", "nodes" (ids the plan uses),
 *	    "iteration_s", "throughput", "cost_per_hour", "score",
 *	    "unconstrained_s", "unconstrained_cost_per_hour",
 *	    "plan" (file name, when written),
 *	    "candidates": [ { "prefix", "nodes", "iteration_s",
 *	      "cost_per_hour", "score" } ] } ] }
 * plan_schedule_read() reads it back from a plan's root object (*out is
 * NULL when the plan has none; release it with plan_schedule_free());
 * errors are DL_EDATA naming path and the member.
 */
json_t *plan_schedule_json(const struct dl_schedule *s,
    const struct dl_cluster *c, long global_batch);
int plan_schedule_read(json_t *root, const struct dl_cluster *c,
    const char *path, struct dl_schedule **out, struct dl_err *e);

/*
 * The "replan" member (its layout is at struct dl_lineage in plan.h).
 * plan_lineage_read() reads it from a plan's root object (*out NULL when
 * absent; release it with plan_lineage_free()); DL_EDATA naming path and
 * the member.
 */
json_t *plan_lineage_json(const struct dl_lineage *l,
    const struct dl_cluster *c);
int plan_lineage_read(json_t *root, const struct dl_cluster *c,
    const char *path, struct dl_lineage **out, struct dl_err *e);

#endif
