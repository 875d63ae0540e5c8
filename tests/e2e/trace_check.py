#!/usr/bin/python3
# tests/e2e/trace_check.py - which transfer semantics a measured 1F1B run
# follows.  Reads the --trace file of plans/dlplan_train.py and, for every
# group and step, takes the measured compute of each pass and the
# measured time of each transfer (from the moment both the receiver had
# posted its receive and the sender had produced the bytes, to the moment
# the receive returned), and replays the step under three models with
# those same times:
#
#   closed   the old closed form: sum (t + c) + (m - 1) max max(t, c)
#   delay    1F1B with each transfer a pure delay between the sender's
#            end and the receiver's start (the receiver computes meanwhile)
#   recv     1F1B with each transfer on the receiver's lane (dlplan's
#            model, src/pipesched.h)
#
# It prints, per group, the median measured pipeline phase and each
# model's median prediction (ratio measured / model), and the median time
# a receive took when its bytes had been ready for a while (the sender
# had finished more than 5 ms before the receive was posted): close to 0
# under "delay", a whole transfer under "recv".
#
#	trace_check.py TRACE.csv [SKIP]   (SKIP: warm-up steps left out, 1)
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "plans"))
from dlplan_pipe import replay  # noqa: E402


def main():
    path = sys.argv[1]
    skip = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    rows = [r for r in csv.DictReader(open(path)) if r["tp_rank"] == "0"]
    steps = sorted({int(r["step"]) for r in rows})[skip:]
    groups = sorted({int(r["group"]) for r in rows})
    for g in groups:
        meas, pred = [], {"closed": [], "delay": [], "recv": []}
        ready_waits = []
        for st in steps:
            ops = {}
            for r in rows:
                if int(r["group"]) == g and int(r["step"]) == st:
                    ops[(r["op"], int(r["stage"]), int(r["micro_batch"]))] = (
                        float(r["wait_s"]), float(r["start_s"]),
                        float(r["end_s"]))
            S = 1 + max(k[1] for k in ops)
            m = 1 + max(k[2] for k in ops)
            f = [statistics.mean(ops[("F", s, i)][2] - ops[("F", s, i)][1]
                                 for i in range(m)) for s in range(S)]
            b = [statistics.mean(ops[("B", s, i)][2] - ops[("B", s, i)][1]
                                 for i in range(m)) for s in range(S)]
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
                xf.append(statistics.mean(tf))
                xb.append(statistics.mean(tb))
            t0 = min(v[0] for v in ops.values())
            meas.append(max(v[2] for v in ops.values()) - t0)
            t = [f[s] + b[s] for s in range(S)]
            c = [xf[s] + xb[s] for s in range(S - 1)] + [0.0]
            pred["closed"].append(sum(t) + sum(c) + (m - 1) *
                                  max(max(t[s], c[s]) for s in range(S)))
            for sem in ("delay", "recv"):
                pred[sem].append(replay(S, m, f, b, xf, xb, sem))
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
        if ready_waits:
            print("group %d  receives whose bytes were ready: %d, median "
                  "%.2f ms" % (g, len(ready_waits),
                               1e3 * statistics.median(ready_waits)))


if __name__ == "__main__":
    main()
