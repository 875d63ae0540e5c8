#!/usr/bin/python3
# tests/e2e/trace_check.py - which transfer semantics a measured 1F1B run
# follows, and whether its whole step is what dlplan's makespan model
# says.  Reads the --trace file of plans/dlplan_train.py and, for every
# group and step, takes the measured compute of each pass and the
# measured time of each transfer (from the moment both the receiver had
# posted its receive and the sender had produced the bytes, to the moment
# the receive returned), and replays the step under three models with
# those same times:
#
#   closed   the old closed form: sum (t + c) + (m - 1) max max(t, c)
#   delay    1F1B with each transfer a pure delay between the sender's
#            end and the receiver's start (the receiver computes meanwhile)
#   recv     1F1B with each transfer on the receiving lane (dlplan's
#            model, src/pipesched.h)
#
# It prints, per group, the median measured pipeline phase (from the
# moment the group's last rank entered the step, step_start(), to its last
# pass's end) and each model's median prediction (ratio measured / model);
# the "recv" replay again with each pass's and each transfer's own time
# instead of its stage's mean (what is left between that and the
# measured phase is time between the passes, which no model holds);
# how much longer a stage's passes took when they ran beside another
# rank's pass than alone (beside(): the ranks share this machine's cores,
# which the GPUs dlplan prices do not, so a stage's mean pass time
# over-prices a short pipeline whose fill and drain run alone); and the
# median time a receive took when its bytes had been ready for a while
# (the sender had finished more than 5 ms before the receive was posted):
# close to 0 under "delay", a whole transfer under "recv".
#
# With two or more groups the trace also has the data-parallel sync (op
# R, one row per bucket) and the optimizer step (op O).  For plans whose
# groups have the same stages it then prices the whole step as dlplan(1)
# ALGORITHMS, Overlap does, with the run's own times: T_g the recv replay
# above, R_u the unit's reduction (the sum over its buckets of the time
# from the moment every holder had started the bucket, and the bucket
# before it had ended, to its end), n_u its buckets, T_opt the slowest
# optimizer step, and
#
#   none   T = max_g T_g + max_u R_u + T_opt
#   dp     T = max(max_g T_g, max_u (T_g - sum_{j<s} (b_j + xb_j)
#                  + max(R_u / n_u, R_u - b_s))) + T_opt
#
# against the measured step (the first rank's first wait to the last
# rank's optimizer end).  It prints both models' medians and ratios, the
# one that OVERLAP names marked with "*", and the exposed sync measured
# (the last bucket's end less the last backward's end, both the latest of
# any rank) and modelled (T - T_opt - max_g T_g).
#
#	trace_check.py TRACE.csv [SKIP [OVERLAP]]
#	(SKIP: warm-up steps left out, 1; OVERLAP: none or dp, the run's)
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "plans"))
from dlplan_pipe import replay  # noqa: E402


def passes(ops, ready_waits):
    """The measured passes of one group's step: S, m and, per stage, the
    list of its passes' times f, b (one per micro-batch) and of the
    transfers xf, xb out of it."""
    S = 1 + max(k[1] for k in ops)
    m = 1 + max(k[2] for k in ops)
    f = [[ops[("F", s, i)][2] - ops[("F", s, i)][1] for i in range(m)]
         for s in range(S)]
    b = [[ops[("B", s, i)][2] - ops[("B", s, i)][1] for i in range(m)]
         for s in range(S)]
    xf, xb = [], []
    for s in range(S - 1):
        tf, tb = [], []
        for i in range(m):
            w, a, _ = ops[("F", s + 1, i)]
            prod = ops[("F", s, i)][2]
            tf.append(a - max(w, prod))
            if prod < w - 0.005:
                ready_waits.append(a - w)
            w, a, _ = ops[("B", s, i)]
            prod = ops[("B", s + 1, i)][2]
            tb.append(a - max(w, prod))
            if prod < w - 0.005:
                ready_waits.append(a - w)
        xf.append(tf)
        xb.append(tb)
    return S, m, f, b, xf, xb


def pipeline(ops, ready_waits):
    """The measured inputs of one group's step as dlplan prices it: S, m,
    and each stage's mean f, b, xf, xb."""
    S, m, *per = passes(ops, ready_waits)
    return (S, m) + tuple([statistics.mean(t) for t in v] for v in per)


def step_start(ops):
    """When the last of the group's ranks entered the step (its first
    wait): the moment dlplan's schedule starts every stage.  A later stage
    ends its part of a step before the first stage does (1F1B ends with
    the first stage's backward), runs its optimizer and posts its first
    receive of the next step while the first stage still works on the
    last: that wait belongs to no step's pipeline."""
    first = {}
    for (_, s, _), v in ops.items():
        first[s] = min(first.get(s, v[0]), v[0])
    return max(first.values())


def beside(rows, steps, g, ratios):
    """Append to ratios, for each stage and op of group g, the mean time
    of its passes that ran beside another rank's pass (for more than half
    of their time) over the mean of those that ran alone: the passes of a
    stage do the same work, so anything but 1 is the ranks' sharing of
    the machine (cores, memory bandwidth), which dlplan, pricing
    independent GPUs, does not model."""
    by = {}
    for r in rows:
        if r["op"] in ("F", "B") and int(r["step"]) in steps:
            by.setdefault(int(r["step"]), []).append(
                (int(r["rank"]), int(r["group"]), int(r["stage"]), r["op"],
                 float(r["start_s"]), float(r["end_s"])))
    t = {}
    for ps in by.values():
        for rk, gg, s, op, a, b in ps:
            if gg != g or b <= a:
                continue
            ov = sum(max(0.0, min(b, b2) - max(a, a2))
                     for rk2, _, _, _, a2, b2 in ps if rk2 != rk)
            t.setdefault((s, op), ([], []))[ov > 0.5 * (b - a)].append(
                b - a)
    for s, op in sorted(t):
        alone, both = t[(s, op)]
        if alone and both:
            ratios.append((s, op, statistics.mean(both) /
                           statistics.mean(alone), len(both), len(alone)))


def reduction(rows, peers):
    """R_u and n_u of a unit from its ranks' bucket rows of one step
    (rows[rank] = [(k, start, end)] in bucket order, every peer holding
    the same buckets): each bucket's time runs from when every holder
    had started it and the bucket before it had ended."""
    R, prev = 0.0, None
    n = len(rows[peers[0]])
    for k in range(n):
        begin = max(rows[r][k][1] for r in peers)
        if prev is not None:
            begin = max(begin, prev)
        end = max(rows[r][k][2] for r in peers)
        R += max(0.0, end - begin)
        prev = end
    return R, n


def sync_model(rows, steps, per_group, overlap):
    by = {}
    for r in rows:
        by.setdefault(int(r["step"]), []).append(r)
    shapes = {g: v[0][0] for g, v in per_group.items()}
    if len(set(shapes.values())) != 1:
        print("sync: the groups differ in stages, not priced here")
        return
    S = next(iter(shapes.values()))
    meas, pred = [], {"none": [], "dp": []}
    exp_m, exp_p, Rs, ns = [], [], [], []
    for k, st in enumerate(steps):
        rs = by[st]
        if not any(r["op"] == "O" for r in rs):
            return
        t0 = min(float(r["wait_s"]) for r in rs if r["op"] in "FB")
        t1 = max(float(r["end_s"]) for r in rs if r["op"] == "O")
        meas.append(t1 - t0)
        topt = max(float(r["end_s"]) - float(r["start_s"])
                   for r in rs if r["op"] == "O")
        Tg = {g: v[k][1] for g, v in per_group.items()}
        buckets, lastb, rank_of = {}, {}, {}
        for r in rs:
            rk = int(r["rank"])
            rank_of[(int(r["group"]), int(r["stage"]))] = rk
            if r["op"] == "R":
                buckets.setdefault(rk, []).append(
                    (int(r["micro_batch"]), float(r["start_s"]),
                     float(r["end_s"])))
            elif r["op"] == "B":
                lastb[rk] = max(lastb.get(rk, 0.0), float(r["end_s"]))
        for v in buckets.values():
            v.sort()
        worst_none, worst_dp = 0.0, 0.0
        for s in range(S):
            peers = [rank_of[(g, s)] for g in per_group]
            if any(p not in buckets for p in peers):
                continue
            R, n = reduction(buckets, peers)
            Rs.append(R)
            ns.append(n)
            for g in per_group:
                _, _, f, b, xf, xb = per_group[g][k][2]
                cool = sum(b[j] + xb[j] for j in range(s))
                hide = max(R / n, R - b[s])
                worst_none = max(worst_none, R)
                worst_dp = max(worst_dp, Tg[g] - cool + hide)
        top = max(Tg.values())
        pred["none"].append(top + worst_none + topt)
        pred["dp"].append(max(top, worst_dp) + topt)
        exp_m.append(max(v[-1][2] for v in buckets.values()) -
                     max(lastb.values()))
        exp_p.append(pred[overlap or "none"][-1] - topt - top)
    if not meas:
        return
    M = statistics.median(meas)
    line = "sync  measured step %.4f s" % M
    for o in ("none", "dp"):
        P = statistics.median(pred[o])
        line += "  %s%s %.4f (%.3f)" % (o, "*" if o == overlap else "", P,
                                         M / P)
    print(line)
    em, ep = statistics.median(exp_m), statistics.median(exp_p)
    print("sync  R %.4f s in %s bucket(s); exposed after the last backward: "
          "measured %.4f s, modelled (%s) %.4f s" % (
              statistics.median(Rs), "/".join(str(n) for n in sorted(set(ns))),
              em, overlap or "?", ep))


def main():
    path = sys.argv[1]
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    overlap = sys.argv[3] if len(sys.argv) > 3 else None
    if overlap not in (None, "none", "dp"):
        sys.exit("trace_check.py: OVERLAP %s: expected none or dp" % overlap)
    rows = [r for r in csv.DictReader(open(path)) if r["tp_rank"] == "0"]
    steps = sorted({int(r["step"]) for r in rows})[skip:]
    groups = sorted({int(r["group"]) for r in rows})
    per_group = {}
    for g in groups:
        meas, own, pred = [], [], {"closed": [], "delay": [], "recv": []}
        ready_waits, per_group[g] = [], []
        for st in steps:
            ops = {}
            for r in rows:
                if int(r["group"]) == g and int(r["step"]) == st and \
                        r["op"] in ("F", "B"):
                    ops[(r["op"], int(r["stage"]), int(r["micro_batch"]))] = (
                        float(r["wait_s"]), float(r["start_s"]),
                        float(r["end_s"]))
            S, m, f, b, xf, xb = inp = pipeline(ops, ready_waits)
            t0 = step_start(ops)
            meas.append(max(v[2] for v in ops.values()) - t0)
            own.append(replay(S, m, *passes(ops, [])[2:]))
            t = [f[s] + b[s] for s in range(S)]
            c = [xf[s] + xb[s] for s in range(S - 1)] + [0.0]
            pred["closed"].append(sum(t) + sum(c) + (m - 1) *
                                  max(max(t[s], c[s]) for s in range(S)))
            for sem in ("delay", "recv"):
                pred[sem].append(replay(S, m, f, b, xf, xb, sem))
            per_group[g].append((S, pred["recv"][-1], inp))
        M = statistics.median(meas)
        line = "group %d  S=%d m=%d  measured %.4f s" % (g, S, m, M)
        for k in ("closed", "delay", "recv"):
            P = statistics.median(pred[k])
            line += "  %s %.4f (%.3f)" % (k, P, M / P)
        print(line)
        print("group %d  transfer means: %s  compute f+b: %s" % (
            g, " ".join("%.2f/%.2f ms" % (1e3 * a, 1e3 * b2)
                        for a, b2 in zip(xf, xb)),
            " ".join("%.2f ms" % (1e3 * x) for x in t)))
        P = statistics.median(own)
        print("group %d  recv with each pass's and transfer's own time "
              "(not their stage's mean): %.4f (%.3f)" % (g, P, M / P))
        ratios = []
        beside(rows, set(steps), g, ratios)
        if ratios:
            print("group %d  passes beside another rank's / alone: %s" % (
                g, "  ".join("%s%d x%.2f (%d/%d)" % (op, s, r, nb, na)
                             for s, op, r, nb, na in ratios)))
        if ready_waits:
            print("group %d  receives whose bytes were ready: %d, median "
                  "%.2f ms" % (g, len(ready_waits),
                               1e3 * statistics.median(ready_waits)))
    if any(r["op"] == "R" for r in rows):
        sync_model(rows, steps, per_group, overlap)


if __name__ == "__main__":
    main()
