#!/usr/bin/python3
"""Re-simulate a dlplan schedule.json independently of dlplan's code.

usage: schedule-check.py SCHEDULE.json NODES.csv

Checks every slot: no GPU given to two jobs, every GPU exists, no job
over its max_gpus or under its min_gpus, a job runs only after it
arrived; that a launch is flagged exactly when the GPUs differ from the
job's previous slot and costs restart_s; that a slot standing for several
(repeat > 1) has neither launch nor finish and comes before the next
record; that run_s * rate = iterations
(up to rounding) and run_s + restart fits in the slot; that every job
finishes, with its iterations adding up to the trace's, except the
unschedulable ones, which never run; and that the
summary's average JCT agrees with the slots.  Prints the number of slots
and jobs checked; exits 1 with a message on the first violation.
"""
import csv
import json
import sys


def fail(msg):
    sys.exit("schedule-check: " + msg)


def main():
    d = json.load(open(sys.argv[1]))
    gpus = {}
    with open(sys.argv[2]) as fp:
        rows = csv.DictReader(l for l in fp if not l.startswith("#"))
        for r in rows:
            gpus[r["node"]] = int(r["gpus"])
    S, R = d["slot_s"], d["restart_s"]
    jobs = {j["job"]: j for j in d["jobs"]}
    done = {j: 0.0 for j in jobs}
    prev = {j: None for j in jobs}
    finish = {}
    if d["schema"] != "dlplan.schedule/2":
        fail("schema %s" % d["schema"])
    next_slot = 0
    for sl in d["slots"]:
        k, t0, rep = sl["slot"], sl["start_s"], sl["repeat"]
        if k < next_slot or abs(t0 - k * S) > 1e-6 * max(1, t0) or rep < 1:
            fail("slot %d out of order or misplaced" % k)
        seen = set()
        ran = set()
        for e in sl["jobs"]:
            j = jobs[e["job"]]
            name = e["job"]
            if name in finish:
                fail("slot %d: %s runs after it finished" % (k, name))
            if j["arrival_s"] > t0:
                fail("slot %d: %s runs before it arrives" % (k, name))
            g = [(n["node"], x) for n in e["nodes"] for x in n["gpus"]]
            if len(g) != e["gpus"]:
                fail("slot %d: %s gpus count" % (k, name))
            if not j["min_gpus"] <= len(g) <= j["max_gpus"]:
                fail("slot %d: %s has %d GPUs outside [%d, %d]" % (
                    k, name, len(g), j["min_gpus"], j["max_gpus"]))
            for node, x in g:
                if node not in gpus or not 0 <= x < gpus[node]:
                    fail("slot %d: %s on a GPU that does not exist" % (k, name))
                if (node, x) in seen:
                    fail("slot %d: GPU %s:%d given twice" % (k, node, x))
                seen.add((node, x))
            launch = prev[name] != sorted(g)
            if launch != e["launch"]:
                fail("slot %d: %s launch flag is wrong" % (k, name))
            if rep > 1 and (launch or e["finished"]):
                fail("slot %d: %s launches or ends in a repeated slot" % (
                    k, name))
            lost = min(R, S) if launch else 0
            if e["run_s"] + lost > S * (1 + 1e-9):
                fail("slot %d: %s runs longer than the slot" % (k, name))
            it = e["run_s"] / e["iteration_s"]
            if abs(it - e["iterations"]) > 1e-6 * max(1, it):
                fail("slot %d: %s iterations %g, run_s / T %g" % (
                    k, name, e["iterations"], it))
            done[name] += e["iterations"] * rep
            if e["finished"]:
                finish[name] = t0 + lost + e["run_s"]
            elif abs(e["run_s"] + lost - S) > 1e-6 * S:
                fail("slot %d: %s stops before the slot ends" % (k, name))
            prev[name] = sorted(g)
            ran.add(name)
        for name in jobs:
            if name not in ran:
                prev[name] = None
        next_slot = k + rep
    never = {n for n, j in jobs.items() if j["unschedulable"] is not None}
    if never & set(finish) or never & {n for n in done if done[n] > 0}:
        fail("an unschedulable job runs")
    for n in never:
        del jobs[n]
    for name, j in jobs.items():
        if name not in finish:
            fail("%s never finishes" % name)
        if abs(done[name] - j["iterations"]) > 1e-6 * j["iterations"]:
            fail("%s did %g of %g iterations" % (name, done[name],
                                                j["iterations"]))
    jct = sum(finish[n] - jobs[n]["arrival_s"] for n in jobs) / len(jobs)
    want = d["summary"][d["policy"]]["avg_jct_s"]
    if abs(jct - want) > 1e-6 * want:
        fail("average JCT %g, summary says %g" % (jct, want))
    print("%d slots, %d jobs checked" % (len(d["slots"]), len(jobs)))


if __name__ == "__main__":
    main()
