/*
 * sched_policy.c - the table of policies (sched_int.h struct
 * sched_policy): a policy is its own file, which defines its row, and
 * one line here; the table's order numbers them (sched.h), and
 * sched_policy_words lists their names in that order.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "sched_int.h"

/* The rows, each defined in the file of its name. */
extern const struct sched_policy sched_gadget, sched_fifo, sched_random,
    sched_tiresias, sched_srtf;

static const struct sched_policy *const policies[] = {
	&sched_gadget,		/* the default: policy 0 */
	&sched_fifo,
	&sched_random,
	&sched_tiresias,
	&sched_srtf,
};
const char sched_policy_words[] = "gadget|fifo|random|tiresias|srtf";

int
sched_npolicy(void)
{
	return (int)(sizeof(policies) / sizeof(policies[0]));
}

const struct sched_policy *
sched_policy(int policy)
{
	return policy >= 0 && policy < sched_npolicy() ? policies[policy] :
	    NULL;
}

const char *
sched_policy_name(int policy)
{
	const struct sched_policy *p = sched_policy(policy);

	return p != NULL ? p->name : "?";
}
