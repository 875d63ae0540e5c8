#!/usr/bin/python3
# tests/cli/oneclock-check.py EVAL.json MODEL.csv - one clock: the pipeline
# time dlplan eval reports must be the 1F1B makespan of the plan, as an
# independent replay here computes it from the evaluated plan's stage
# times and pipeline transfers, and as eval's own simulation (timeline.c)
# found it.  Exit 1 naming the group when either differs by more than
# 0.5 %; print the worst ratios.
#
# The replay is written from the semantics alone (dlplan(1), "Pipeline
# time"): stage s of S runs min(S - s - 1, m) forwards, then a forward
# and a backward alternately, then its backwards; a pass that needs a
# neighbour's output waits until its own lane is free and the neighbour's
# pass has ended, then receives for the transfer's expected_s, then
# computes.  Forward and backward split a stage's compute_s in the ratio
# of its layers' fwd_gflop and bwd_gflop (bwd 2 fwd when the column is
# absent; 1/3 forward when the layers have no FLOPs).
import csv
import json
import sys


def layers(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    for r in csv.DictReader(lines):
        fw = float(r["fwd_gflop"])
        bw = float(r["bwd_gflop"]) if r.get("bwd_gflop") not in (None, "") \
            else 2 * fw
        rows.append((fw, bw))
    return rows


def replay(S, m, f, b, xf, xb):
    end, lane, pos = {}, [0.0] * S, [0] * S
    ops = []
    for s in range(S):
        w = min(S - s - 1, m)
        o = [("F", i) for i in range(w)]
        for j in range(m - w):
            o += [("F", w + j), ("B", j)]
        ops.append(o + [("B", j) for j in range(m - w, m)])
    left = 2 * S * m
    while left:
        moved = 0
        for s in range(S):
            while pos[s] < 2 * m:
                op, i = ops[s][pos[s]]
                key, x = None, 0.0
                if op == "F" and s > 0:
                    key, x = ("F", s - 1, i), xf[s - 1]
                elif op == "B" and s + 1 < S:
                    key, x = ("B", s + 1, i), xb[s]
                if key is not None and key not in end:
                    break
                ready = end[key] if key else 0.0
                lane[s] = max(lane[s], ready) + x + (f[s] if op == "F"
                                                     else b[s])
                end[(op, s, i)] = lane[s]
                pos[s] += 1
                left -= 1
                moved = 1
        if not moved:
            sys.exit("oneclock-check: 1F1B deadlocked")
    return max(lane)


def main():
    plan = json.load(open(sys.argv[1]))
    lay = layers(sys.argv[2])
    xf, xb = {}, {}
    for r in plan.get("routes", []):
        if r["phase"] == "pipeline":
            d = xf if r["direction"] == "forward" else xb
            d[(r["group"], r["stage"])] = r["expected_s"]
    worst = 0.0
    pipe = 0.0
    for g, gr in enumerate(plan["groups"]):
        st = gr["stages"]
        S, m = len(st), gr["micro_batches"]
        f, b = [], []
        for s in st:
            a, z = s["layers"]
            fw = sum(lay[i][0] for i in range(a, z + 1))
            al = fw + sum(lay[i][1] for i in range(a, z + 1))
            share = fw / al if al > 0 else 1.0 / 3
            f.append(s["compute_s"] * share)
            b.append(s["compute_s"] - s["compute_s"] * share)
        t = replay(S, m, f, b, [xf.get((g, s), 0.0) for s in range(S)],
                   [xb.get((g, s), 0.0) for s in range(S)])
        r = t / gr["time_s"] - 1
        worst = max(worst, abs(r))
        pipe = max(pipe, t)
        if abs(r) > 0.005:
            sys.exit("group %d: replayed 1F1B %.9g s, dlplan's T_g %.9g s"
                     % (g, t, gr["time_s"]))
    est = plan["estimate"]
    sim = est.get("pipeline_simulated_s")
    if sim is None:
        sys.exit("no estimate.pipeline_simulated_s in the eval output")
    r2 = sim / est["pipeline_s"] - 1
    if abs(r2) > 0.005:
        sys.exit("eval's simulation %.9g s, its pipeline phase %.9g s" %
                 (sim, est["pipeline_s"]))
    if abs(pipe / est["pipeline_s"] - 1) > 0.005:
        sys.exit("replayed pipeline phase %.9g s, dlplan's %.9g s" %
                 (pipe, est["pipeline_s"]))
    print("replay %.3g, simulation %.3g" % (worst, abs(r2)))


if __name__ == "__main__":
    main()
