# dlplan_pipe.py - the pipeline schedules dlplan prices, in Python: the
# order of passes on each stage and an event replay of a schedule.  The one
# Python statement of dlplan(1) ALGORITHMS, Cost model (Pipeline time) and
# Interleaved schedule, shared by the reference executor (dlplan_exec.py
# runs order()), tests/cli/oneclock-check.py (eval's T_g against a replay)
# and tests/e2e/trace_check.py (a measured run against the models).  The C
# side is src/pipesched.c; nothing here is taken from it.
#
# Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
#
# A pass is (op, micro_batch, chunk): op "F" or "B", chunk 0 without
# interleaving.  Virtual stage o = chunk * S + s; f, b, xf and xb given to
# replay() are indexed by it (S of them without interleaving): xf[o] the
# transfer from o to o + 1, xb[o] the one back.  An entry is one time for
# every micro-batch, as dlplan prices it, or a list of m, one per
# micro-batch (a measured run's own passes, tests/e2e/trace_check.py).
"""1F1B and interleaved 1F1B orders and their event replay."""

__all__ = ["order", "warmup", "replay", "SEMANTICS"]

# How a pass waits for a transfer into its stage:
#   recv   on the receiving stage's lane: the transfer starts when the lane
#          is free and the producer has ended, the pass after it (dlplan's
#          plain 1F1B, src/pipesched.h)
#   delay  a pure delay: the pass starts at max(lane free, producer end +
#          transfer); the stage computes meanwhile
#   link   under compute, one transfer after the other on the receiving
#          stage's link in the order its passes need them (dlplan's
#          interleaved schedule, Megatron's posted receives)
SEMANTICS = ("recv", "delay", "link")


def warmup(S, s, m, v=1):
    """Forwards stage s of S runs before its first backward: S - s - 1 for
    plain 1F1B; 2 (S - s - 1) + (v - 1) S for v chunks (Megatron-LM's
    get_pp_rank_microbatches()); at most all of them."""
    w = S - s - 1 if v == 1 else 2 * (S - s - 1) + (v - 1) * S
    return min(w, m * v)


def _table(S, m, v):
    """Megatron-LM's get_schedule_table() with groups of S micro-batches:
    (micro_batch, chunk) of each virtual micro-batch in turn."""
    t = []
    for lo in range(0, m, S):
        hi = min(lo + S, m)
        t += [(i, c) for c in range(v) for i in range(lo, hi)]
    return t


def order(S, s, m, v=1):
    """Stage s's passes: its warm-up forwards, then a forward and a
    backward alternately, then its remaining backwards; backward k runs
    the micro-batch of forward k in chunk v - 1 - c."""
    t = _table(S, m, v) if v > 1 else [(i, 0) for i in range(m)]
    n, w = len(t), warmup(S, s, m, v)
    fw = [("F", i, c) for i, c in t]
    bw = [("B", i, v - 1 - c) for i, c in t]
    ops = fw[:w]
    for k in range(n - w):
        ops += [fw[w + k], bw[k]]
    return ops + bw[n - w:]


def _at(t, i):
    """Micro-batch i's time of entry t: t itself, or t[i] of a list."""
    return t[i] if isinstance(t, (list, tuple)) else t


def replay(S, m, f, b, xf, xb, sem="recv", v=1):
    """The makespan of the schedule: every stage runs its passes in
    order(), each as soon as its lane is free and its input is there.
    Returns max over stages of the last pass's end."""
    if sem not in SEMANTICS:
        raise ValueError("replay: semantics %r is not one of %s"
                         % (sem, ", ".join(SEMANTICS)))
    n = S * v
    ops = [order(S, s, m, v) for s in range(S)]
    end, pos = {}, [0] * S
    lane, link = [0.0] * S, [0.0] * S
    left = sum(len(o) for o in ops)
    while left:
        moved = False
        for s in range(S):
            while pos[s] < len(ops[s]):
                op, i, c = ops[s][pos[s]]
                o = c * S + s
                key, x = None, 0.0
                if op == "F" and o > 0:
                    key, x = ("F", o - 1, i), _at(xf[o - 1], i)
                elif op == "B" and o + 1 < n:
                    key, x = ("B", o + 1, i), _at(xb[o], i)
                if key is not None and key not in end:
                    break
                ready = end[key] if key else 0.0
                if sem == "recv":
                    start = max(lane[s], ready) + x
                elif sem == "delay":
                    start = max(lane[s], ready + x)
                elif key is not None:
                    link[s] = max(link[s], ready) + x
                    start = max(lane[s], link[s])
                else:
                    start = lane[s]
                lane[s] = start + _at(f[o] if op == "F" else b[o], i)
                end[(op, o, i)] = lane[s]
                pos[s] += 1
                left -= 1
                moved = True
        if not moved:
            raise RuntimeError("replay: the schedule deadlocked")
    return max(lane)
