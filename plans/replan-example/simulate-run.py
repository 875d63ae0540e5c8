#!/usr/bin/env python3
"""simulate-run.py - the step log a training job would write for a plan.

    simulate-run.py PLAN.json [--slow NODE=F ...] [--steps N] [--noise F]
                    [--spike-prob P] [--spike F] [--seed S] [--compute]
                    > steps.csv

Writes the log "dlplan replan --observed" reads (rank,step,seconds,samples
and, with --compute, compute_seconds)
for a run of PLAN.json in which the GPUs of each NODE named by --slow run
F times slower than the plan predicted (F = 2: half speed).  It stands in
for a real job, so that the plan -> run -> replan loop can be tried and
tested on any machine.

The model of a step, per group g of the plan (dlplan's cost model,
dlplan(1) ALGORITHMS, Cost model): every stage's compute time is the plan's
compute_s times F of its node (the transfers p2p_s stay as planned), and the
group's pipeline time is T_g = sum(t + c) + (m_g - 1) * max(max(t, c)).  Every
rank of the group logs T_g for the step (the time until its pipeline is
done, before the gradient all-reduce: the "seconds" of dlplan-replan),
times 1 + u with u uniform in [-noise, +noise], and, with probability
spike-prob, times spike (a stall).  Each rank draws its own noise, from
Python's Mersenne Twister seeded with --seed, so a log is reproducible.
With --compute each rank also logs its busy time, m_g times its stage's
compute time, with its own noise and spikes drawn the same way.
"""
import argparse
import json
import random
import sys


def group_time(group, slow):
    total, worst = 0.0, 0.0
    for s in group["stages"]:
        t = s["compute_s"] * slow.get(s["node"], 1.0)
        c = s.get("p2p_s", 0.0)
        total += t + c
        worst = max(worst, t, c)
    return total + (group["micro_batches"] - 1) * worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--slow", action="append", default=[],
                    metavar="NODE=F", help="NODE runs F times slower")
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--noise", type=float, default=0.0)
    ap.add_argument("--spike-prob", type=float, default=0.0)
    ap.add_argument("--spike", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--compute", action="store_true",
                    help="also log compute_seconds")
    a = ap.parse_args()

    with open(a.plan) as f:
        plan = json.load(f)
    slow = {}
    for item in a.slow:
        node, _, factor = item.partition("=")
        slow[node] = float(factor)
    rng = random.Random(a.seed)
    mb = plan["options"]["micro_batch"]
    out = sys.stdout
    def noisy(t):
        t *= 1 + rng.uniform(-a.noise, a.noise)
        if rng.random() < a.spike_prob:
            t *= a.spike
        return t

    out.write("rank,step,seconds,samples%s\n" %
              (",compute_seconds" if a.compute else ""))
    for step in range(a.steps):
        for g in plan["groups"]:
            tg = group_time(g, slow)
            m = g["micro_batches"]
            for s in g["stages"]:
                busy = m * s["compute_s"] * slow.get(s["node"], 1.0)
                for r in s["ranks"]:
                    out.write("%d,%d,%.9g,%d" % (r, step, noisy(tg), m * mb))
                    if a.compute:
                        out.write(",%.9g" % noisy(busy))
                    out.write("\n")


if __name__ == "__main__":
    main()
