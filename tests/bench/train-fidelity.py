#!/usr/bin/python3
"""tests/bench/train-fidelity.py - does a run take the time dlplan predicts?

    make bench-train            (or: /usr/bin/python3 tests/bench/train-fidelity.py [OUTDIR])

Profiles this machine (dlplan_train.py --profile-cluster: layers,
point-to-point, all-reduce; one node with one "GPU" per core), writes eight
plans by hand on that cluster, asks "dlplan eval" for each one's predicted
iteration time, runs it (every rank a process with one thread pinned to its
own core with taskset, gloo) and prints predicted against measured: the
median over STEPS steps after WARM warm-up steps of the slowest rank's whole
iteration (pipeline, gradient sync, optimizer step).

  one        one rank
  dp-even    two groups, 4 + 4 micro-batches
  dp-uneven  two groups, 5 + 3 micro-batches
  pp2        two stages, uneven boundaries
  pp3        three stages, uneven boundaries
  tp2-even   one stage of TP 2, shares 0.5 / 0.5
  tp2-uneven one stage of TP 2, shares 0.75 / 0.25
  hybrid     a two-stage pipeline beside a TP 2 stage (4 ranks)

Repeatable first: the whole series (profile, then every shape) is taken
twice, the profile re-taken before each series.  A shape whose two
measured times, or two predicted times, differ by more than 3 % is
reported as "too noisy" instead of a ratio.  A shape needing more ranks
than the cores this process may use is skipped and said so.

It refuses to measure (exit 3, says why) when the 1-minute load average
is above LOAD_MAX (default 0.3: nothing else may run) before it starts,
or when, before a run, other processes keep more than BUSY_MAX (default
0.05) of the CPUs busy over one second (/proc/stat; its own runs have
ended by then, and the load average they leave behind decays too slowly
to tell them from other work); FORCE=1 runs anyway, to test the benchmark itself, and then
every line says the numbers do not count.  Exit 0: every shape that ran
was repeatable; 4: some were too noisy.

Environment: DLPLAN (./dlplan), STEPS (12), WARM (3), LOAD_MAX (0.3),
BUSY_MAX (0.05),
FORCE, TOL (0.03), and the model: LAYERS (4), HIDDEN (128), HEADS (4),
SEQ (64), VOCAB (1024); global batch 16 in micro-batches of 2, float32.
Files (plans, profiles, step logs, table.txt) go to OUTDIR (default a new
directory under $TMPDIR).
"""

import csv
import hashlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PY = "/usr/bin/python3"
TRAIN = os.path.join(SRC, "plans", "dlplan_train.py")
DLPLAN = os.environ.get("DLPLAN", os.path.join(SRC, "dlplan"))
STEPS = int(os.environ.get("STEPS", "12"))
WARM = int(os.environ.get("WARM", "3"))
LOAD_MAX = float(os.environ.get("LOAD_MAX", "0.3"))
BUSY_MAX = float(os.environ.get("BUSY_MAX", "0.05"))
FORCE = os.environ.get("FORCE", "") not in ("", "0")
TOL = float(os.environ.get("TOL", "0.03"))
MODEL = {k: int(os.environ.get(k.upper(), v)) for k, v in (
    ("layers", 4), ("hidden", 128), ("heads", 4), ("seq", 64),
    ("vocab", 1024))}
GB, MU = 16, 2


class Refused(Exception):
    pass


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def busy(seconds=1.0):
    """The fraction of all CPUs' time spent busy over the next seconds."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    t0, i0 = snap()
    time.sleep(seconds)
    t1, i1 = snap()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def check_load(when, first=False):
    ld = load1()
    msg = None
    if first and ld > LOAD_MAX:
        msg = ("1-minute load average %.2f > LOAD_MAX %.2f %s: other work "
               "is running" % (ld, LOAD_MAX, when))
    elif not first:
        b = busy()
        if b > BUSY_MAX:
            msg = ("other processes kept %.0f %% of the CPUs busy %s "
                   "(BUSY_MAX %.0f %%): other work is running" %
                   (100 * b, when, 100 * BUSY_MAX))
    if msg:
        if not FORCE:
            raise Refused(msg)
        if not FORCED:
            say("# FORCE: %s; the numbers below do not count (the load "
                "column has it before each run)" % msg)
        FORCED.append(msg)
    return ld


OUT_LINES = []
FORCED = []


def say(line):
    print(line, flush=True)
    OUT_LINES.append(line)


def shapes(last):
    """name -> (groups); a group is (micro_batches, [(gpus, first, last,
    shares)]); GPUs are numbered over the whole plan."""
    h = last // 2
    return {
        "one": [(8, [([0], 0, last, None)])],
        "dp-even": [(4, [([0], 0, last, None)]),
                    (4, [([1], 0, last, None)])],
        "dp-uneven": [(5, [([0], 0, last, None)]),
                      (3, [([1], 0, last, None)])],
        "pp2": [(8, [([0], 0, 1, None), ([1], 2, last, None)])],
        "pp3": [(8, [([0], 0, h, None), ([1], h + 1, last - 1, None),
                     ([2], last, last, None)])],
        "tp2-even": [(8, [([0, 1], 0, last, [0.5, 0.5])])],
        "tp2-uneven": [(8, [([0, 1], 0, last, [0.75, 0.25])])],
        "hybrid": [(4, [([0], 0, h, None), ([1], h + 1, last, None)]),
                   (4, [([2, 3], 0, last, [0.5, 0.5])])],
    }


def write_plan(path, groups):
    gs = []
    for mb, stages in groups:
        st = []
        for gpus, a, b, shares in stages:
            s = {"node": "n1", "gpus": gpus, "layers": [a, b]}
            if shares:
                s["tp_shares"] = shares
            st.append(s)
        gs.append({"micro_batches": mb, "stages": st})
    d = os.path.dirname(path)
    plan = {"schema": "dlplan.plan/1",
            "inputs": [{"kind": k, "path": "c/%s.csv" % k,
                        "sha256": sha256(os.path.join(d, "c", k + ".csv"))}
                       for k in ("nodes", "model")],
            "options": {"global_batch": GB, "micro_batch": MU,
                        "param_bytes": 4, "grad_bytes": 4},
            "groups": gs}
    with open(path, "w") as f:
        json.dump(plan, f)
    return sum(len(s[0]) for _, stages in groups for s in stages)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def model_opts():
    out = []
    for k, v in MODEL.items():
        out += ["--" + k, str(v)]
    return out


def profile(d, cores):
    subprocess.run([PY, TRAIN, "--profile-cluster", os.path.join(d, "c"),
                    "--micro-batch", str(MU), "--profile-reps", "20",
                    "--profile-ranks", str(min(8, len(cores))),
                    "--threads", "1"] + model_opts(), check=True)


def predict(plan):
    r = subprocess.run([DLPLAN, "eval", plan, "--format", "json"],
                       check=True, capture_output=True, text=True)
    e = json.loads(r.stdout)["estimate"]
    return e["iteration_s"], e["pipeline_s"], e["sync_s"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(plan, world, cores, log):
    port = str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r),
                   WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port, OMP_NUM_THREADS="1")
        cmd = ["taskset", "-c", str(cores[r]), PY, TRAIN, "--plan", plan,
               "--steps", str(STEPS + WARM), "--threads", "1",
               "--log", log]
        procs.append(subprocess.Popen(cmd, env=env,
                                      stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True))
    errs = [(p.wait(), p.stderr.read()) for p in procs]
    bad = [e for rc, e in errs if rc]
    if bad:
        raise RuntimeError("%s: a rank failed: %s" % (plan, bad[0][-800:]))
    step, pipe = {}, {}
    with open(log) as f:
        for row in csv.DictReader(f):
            s = int(row["step"])
            if s < WARM:
                continue
            step[s] = max(step.get(s, 0), float(row["x_step_seconds"]))
            pipe[s] = max(pipe.get(s, 0), float(row["seconds"]))
    return statistics.median(step.values()), statistics.median(pipe.values())


def series(d, cores, names, last):
    """One profile, then every shape: name -> (pred, pred_pipe,
    pred_sync, measured, measured_pipe, load)."""
    os.makedirs(d, exist_ok=True)
    check_load("before the profile", first=d.endswith("1"))
    profile(d, cores)
    with open(os.path.join(d, "c", "comm.csv")) as f:
        for line in f:
            if line.startswith("# ") and "fit" in line:
                say("# %s: %s" % (os.path.basename(d), line[2:].strip()))
    out = {}
    for name in names:
        plan = os.path.join(d, name + ".json")
        world = write_plan(plan, shapes(last)[name])
        pred = predict(plan)
        ld = check_load("before %s" % name)
        log = os.path.join(d, name + ".csv")
        if os.path.exists(log):
            os.remove(log)
        out[name] = pred + run(plan, world, cores, log) + (ld,)
    return out


def main(argv):
    out = argv[0] if argv else tempfile.mkdtemp(prefix="dlplan-fidelity.")
    os.makedirs(out, exist_ok=True)
    cores = sorted(os.sched_getaffinity(0))
    last = MODEL["layers"] + 1
    all_shapes = shapes(last)
    names, skipped = [], []
    for n, g in all_shapes.items():
        w = sum(len(s[0]) for _, st in g for s in st)
        (names if w <= len(cores) else skipped).append((n, w))
    say("# dlplan train fidelity on %s: %d cores usable, model %s, global "
        "batch %d, micro-batch %d, %d steps after %d warm-up" % (
            socket.gethostname(), len(cores), " ".join(
                "%s=%d" % kv for kv in MODEL.items()), GB, MU, STEPS,
            WARM))
    try:
        a = series(os.path.join(out, "run1"), cores, [n for n, _ in names],
                   last)
        b = series(os.path.join(out, "run2"), cores, [n for n, _ in names],
                   last)
    except Refused as e:
        say("refused: %s; nothing measured (wait until the machine is "
            "quiet, or FORCE=1 to test the benchmark)" % e)
        return 3
    say("%-11s %5s %10s %10s %10s %10s %7s %7s  %s" % (
        "shape", "ranks", "pred_s", "meas_s", "pred_pipe", "meas_pipe",
        "ratio", "load", "note"))
    noisy = 0
    good = {}
    for n, w in names:
        pa, pb = a[n], b[n]
        pred = (pa[0] + pb[0]) / 2
        meas = (pa[3] + pb[3]) / 2
        dm = abs(pa[3] / pb[3] - 1)
        dp = abs(pa[0] / pb[0] - 1)
        if dm > TOL or dp > TOL:
            noisy += 1
            ratio = "-"
            note = ("too noisy: the two runs differ by %.1f %% measured, "
                    "%.1f %% predicted (> %.0f %%)" % (100 * dm, 100 * dp,
                                                      100 * TOL))
        else:
            ratio = "%.3f" % (meas / pred)
            good[n] = (pred, meas)
            note = "runs within %.1f %%" % (100 * max(dm, dp))
        say("%-11s %5d %10.5f %10.5f %10.5f %10.5f %7s %7.2f  %s" % (
            n, w, pred, meas, (pa[1] + pb[1]) / 2, (pa[4] + pb[4]) / 2,
            ratio, max(pa[5], pb[5]), note))
    for n, w in skipped:
        say("%-11s %5d %10s %10s %10s %10s %7s %7s  skipped: needs %d "
            "cores, %d usable" % (n, w, "-", "-", "-", "-", "-", "-", w,
                                  len(cores)))
    wrong = []
    for x in good:
        for y in good:
            px, mx = good[x]
            py, my = good[y]
            if px > 1.1 * py and not mx > my:
                wrong.append("%s predicted slower than %s, measured not" %
                             (x, y))
    if good:
        say("# order: %s" % ("; ".join(wrong) if wrong else
                             "predicted order holds wherever two "
                             "predictions differ by more than 10 %"))
    if FORCE:
        say("# FORCE was set: not a quiet-machine measurement")
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write("\n".join(OUT_LINES) + "\n")
    say("# files in %s" % out)
    return 4 if noisy else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
