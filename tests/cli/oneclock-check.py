#!/usr/bin/python3
# tests/cli/oneclock-check.py EVAL.json MODEL.csv - one clock: the pipeline
# time dlplan eval reports must be the 1F1B makespan of the plan, as an
# independent replay here computes it from the evaluated plan's stage
# times and pipeline transfers, and as eval's own simulation (timeline.c)
# found it.  Exit 1 naming the group when either differs by more than
# 0.5 %; print the worst ratios.
#
# The replay is plans/dlplan_pipe.py's, written from the semantics alone
# (dlplan(1), "Pipeline time"): stage s of S runs min(S - s - 1, m)
# forwards, then a forward and a backward alternately, then its
# backwards; a pass that needs a neighbour's output waits until its own
# lane is free and the neighbour's pass has ended, then receives for the
# transfer's expected_s, then computes.  Forward and backward split a
# stage's compute_s in the ratio of its layers' fwd_gflop and bwd_gflop
# (bwd 2 fwd when the column is absent; 1/3 forward when the layers have
# no FLOPs).  An interleaved group (virtual_stages) is replayed in
# Megatron-LM's order with its transfers on the receiving stage's link
# (dlplan(1), "Interleaved schedule"), each chunk's compute its share of
# the stage's by FLOPs.
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "plans"))
from dlplan_pipe import replay  # noqa: E402


def layers(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = [ln for ln in f if not ln.startswith("#")]
    for r in csv.DictReader(lines):
        fw = float(r["fwd_gflop"])
        bw = float(r["bwd_gflop"]) if r.get("bwd_gflop") not in (None, "") \
            else 2 * fw
        rows.append((fw, bw, r["layer"].startswith("block")))
    return rows


def chunks(st, lay, v):
    """The chunks of an interleaved group (dlplan(1), Interleaved
    schedule): stage s's n_s blocks in v chunks, chunk c of stage s from
    block c N + sum_{j<s} n_j / v on; the rows before the first block with
    the first chunk, those after the last block with the last."""
    S = len(st)
    blk = [i for i, r in enumerate(lay) if r[2]]
    n = [sum(1 for i in range(s["layers"][0], s["layers"][1] + 1)
             if lay[i][2]) // v for s in st]
    N = sum(n)
    out = []
    for o in range(S * v):
        c, s = divmod(o, S)
        a = c * N + sum(n[:s])
        first = 0 if o == 0 else blk[a]
        last = len(lay) - 1 if o == S * v - 1 else blk[a + n[s] - 1]
        out.append((first, last))
    return out


def fb(lay, first, last, t):
    """Split time t of layers [first, last] into forward and backward by
    their FLOPs (a third forward without FLOPs)."""
    fw = sum(lay[i][0] for i in range(first, last + 1))
    al = fw + sum(lay[i][1] for i in range(first, last + 1))
    share = fw / al if al > 0 else 1.0 / 3
    return t * share, t - t * share


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
    interleaved = False
    for g, gr in enumerate(plan["groups"]):
        st = gr["stages"]
        S, m, v = len(st), gr["micro_batches"], gr.get("virtual_stages", 1)
        f, b = [], []
        if v == 1:
            for s in st:
                a, z = s["layers"]
                fs, bs = fb(lay, a, z, s["compute_s"])
                f.append(fs)
                b.append(bs)
            t = replay(S, m, f, b, [xf.get((g, s), 0.0) for s in range(S)],
                       [xb.get((g, s), 0.0) for s in range(S)])
        else:
            # A chunk's compute is its share of its stage's by FLOPs
            # (alike blocks; the embedding and the head ride with the
            # first and last chunk), transfers those of the stage's
            # boundary (the last stage's is its send to the first).
            interleaved = True
            ch = chunks(st, lay, v)
            work = [sum(lay[i][0] + lay[i][1] for i in range(a, z + 1))
                    for a, z in ch]
            tot = [sum(work[c * S + s] for c in range(v)) for s in range(S)]
            for o, (a, z) in enumerate(ch):
                fs, bs = fb(lay, a, z, st[o % S]["compute_s"] * work[o] /
                            tot[o % S])
                f.append(fs)
                b.append(bs)
            t = replay(S, m, f, b,
                       [xf.get((g, o % S), 0.0) for o in range(S * v)],
                       [xb.get((g, o % S), 0.0) for o in range(S * v)],
                       "link", v)
        r = t / gr["time_s"] - 1
        worst = max(worst, abs(r))
        pipe = max(pipe, t)
        if abs(r) > 0.005:
            sys.exit("group %d: replayed 1F1B %.9g s, dlplan's T_g %.9g s"
                     % (g, t, gr["time_s"]))
    est = plan["estimate"]
    sim = est.get("pipeline_simulated_s")
    if interleaved:
        # eval's replay (timeline.c) is of plain 1F1B only.
        if sim is not None:
            sys.exit("eval simulated an interleaved plan as plain 1F1B")
        sim = est["pipeline_s"]
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
