#!/usr/bin/python3
"""Sweep "dlplan schedule" over offered loads and seeds; print a table.

usage: sched-sweep.py [--dlplan PATH] [--jobs N] [--loads L,L,...]
                      [--seeds S,S,...] [--cluster DIR] [-v | -q]

For every load and seed, tests/bench/gen-jobs.py writes N jobs (default
300) of Poisson arrivals offering that load to the cluster (default
datasets/clusters/philly-64); every policy's summary comes from one
"dlplan schedule --format csv".  Then the bundled Philly trace
(datasets/jobs/philly-gavel-120.csv).  Per load, the table gives each
policy's mean over the seeds of the average JCT, p95 JCT, makespan,
the worst wait, GPU utilisation and restarts, then two checks per load and seed:
gadget's average JCT at most the best baseline's, and at most 0.9 x
fifo's where fifo keeps the cluster over 50 % busy.  Exit 1 when a check
fails.  Also prints the worst ratios of gadget's average JCT to fifo's
and to the best baseline's.  Nothing here is timed.

Progress.  With -v, or when standard error is a terminal unless -q, a
line on standard error before each run says which run of how many comes
next and the time taken so far, and on a terminal each run's own
progress lines ("dlplan schedule", dlplan(1) -v) show too; the table on
standard output stays the same.

How busy.  The summary's utilisation is GPU-seconds held over GPUs times
the makespan, and the makespan of a generated trace ends with a few long
jobs running alone long after the last arrival (one 200,000-iteration
bert-large job on one P100 runs 944,820 s, longer than the whole arrival
window at loads of 0.6 and more), so it stays far below the offered load.
The busy check therefore uses fifo's schedule (written by the same run,
--policy fifo -o): the GPU-seconds its jobs hold between the first and
the last arrival over the GPUs times that window, the "busy" column.
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
COLS = ["avg_jct_s", "p95_jct_s", "makespan_s", "max_wait_s",
        "gpu_utilisation", "restarts"]


def busy(path):
    """GPU-seconds fifo's jobs hold between the first and the last
    arrival, over the GPUs times that window (schedule.json)."""
    d = json.load(open(path))
    S, R = d["slot_s"], d["restart_s"]
    arr = [j["arrival_s"] for j in d["jobs"] if j["unschedulable"] is None]
    w0, w1 = min(arr), max(arr)
    if w1 <= w0:
        return 0.0
    held = 0.0
    hold = {}                   # job -> (since, GPUs)

    def end(name, b):
        nonlocal held
        a, g = hold.pop(name)
        if min(b, w1) > max(a, w0):
            held += g * (min(b, w1) - max(a, w0))
    for ev in d["events"]:
        t0 = ev["start_s"]
        for name in ev["stop"]:
            end(name, t0)
        for e in ev["jobs"]:
            lost = min(R, S) if e["launch"] else 0
            if e["launch"]:
                if e["job"] in hold:
                    end(e["job"], t0)
                hold[e["job"]] = (t0, e["gpus"])
            if e["finished"]:
                end(e["job"], t0 + lost + e["run_s"])
    return held / (sum(n["gpus"] for n in d["nodes"]) * (w1 - w0))


# Progress lines wanted (main()), and when the sweep started.
PROGRESS = {"on": False, "t0": 0.0, "done": 0, "runs": 0}


def progress(what):
    """One line on stderr: the run that comes next, of how many."""
    if not PROGRESS["on"]:
        return
    PROGRESS["done"] += 1
    sys.stderr.write("sched-sweep: run %d of %d (%s), %.1f s\n" % (
        PROGRESS["done"], PROGRESS["runs"], what,
        time.monotonic() - PROGRESS["t0"]))
    sys.stderr.flush()


def summary(dlplan, cluster, jobs_text, path):
    with open(path, "w") as fp:
        fp.write(jobs_text)
    outdir = path[:-len(".csv")]
    shutil.rmtree(outdir, ignore_errors=True)
    # On a terminal, dlplan's own progress lines show through.
    shown = PROGRESS["on"] and sys.stderr.isatty()
    out = subprocess.run([dlplan, "schedule", "-c", cluster, "--jobs", path,
                          "--format", "csv", "--policy", "fifo", "-o",
                          outdir], check=True, stdout=subprocess.PIPE,
                         stderr=None if shown else subprocess.PIPE,
                         text=True).stdout
    s = {r["policy"]: {c: float(r[c]) for c in COLS}
         for r in csv.DictReader(io.StringIO(out))}
    s["fifo"]["busy"] = busy(os.path.join(outdir, "schedule.json"))
    shutil.rmtree(outdir)
    return s


def checks(s):
    """(gadget <= best baseline, gadget <= 0.9 fifo or fifo <= 50 % busy)"""
    g = s["gadget"]["avg_jct_s"]
    best = min(v["avg_jct_s"] for p, v in s.items() if p != "gadget")
    return g <= best, (s["fifo"]["busy"] <= 0.5 or
                       g <= 0.9 * s["fifo"]["avg_jct_s"])


RATIOS = []
BUSY = []


def row(label, runs, failed):
    pols = list(runs[0].keys())
    for p in pols:
        m = {c: sum(r[p][c] for r in runs) / len(runs) for c in COLS}
        b = ("%.1f %%" % (100 * sum(r[p]["busy"] for r in runs) /
                          len(runs)) if p == "fifo" else "")
        print("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.1f %% | %s | %.1f |"
              % (label, p, m["avg_jct_s"], m["p95_jct_s"], m["makespan_s"],
                 m["max_wait_s"], 100 * m["gpu_utilisation"], b,
                 m["restarts"]))
        label = ""
    for r in runs:
        a, b = checks(r)
        BUSY.append(r["fifo"]["busy"] > 0.5)
        failed += (not a) + (not b)
        g = r["gadget"]["avg_jct_s"]
        RATIOS.append((g / r["fifo"]["avg_jct_s"], g / min(
            v["avg_jct_s"] for p, v in r.items() if p != "gadget")))
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlplan", default=os.path.join(ROOT, "dlplan"))
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--loads", default="0.3,0.6,0.9,1.2,1.5")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--cluster", default=os.path.join(
        ROOT, "datasets/clusters/philly-64"))
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="progress lines even when stderr is no terminal")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="no progress lines")
    a = ap.parse_args()
    dlplan, njobs, cluster = a.dlplan, a.jobs, a.cluster
    loads, seeds = a.loads.split(","), a.seeds.split(",")
    PROGRESS["on"] = a.verbose or (not a.quiet and sys.stderr.isatty())
    PROGRESS["t0"] = time.monotonic()
    PROGRESS["runs"] = len(loads) * len(seeds) + 1
    tmp = os.path.join(ROOT, "tests/bench/out")
    os.makedirs(tmp, exist_ok=True)
    gen = os.path.join(ROOT, "tests/bench/gen-jobs.py")
    print("| load | policy | avg JCT s | p95 JCT s | makespan s | "
          "max wait s | util | busy | restarts |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for load in loads:
        runs = []
        for seed in seeds:
            text = subprocess.run([sys.executable, gen, str(njobs), "--load",
                                   load, "--seed", seed], check=True,
                                  capture_output=True, text=True).stdout
            progress("load %s, seed %s" % (load, seed))
            runs.append(summary(dlplan, cluster, text, os.path.join(
                tmp, "sweep-%s-%s.csv" % (load, seed))))
        failed = row(load, runs, failed)
    with open(os.path.join(ROOT, "datasets/jobs/philly-gavel-120.csv")) as fp:
        philly = fp.read()
    progress("philly-gavel-120")
    failed = row("philly-gavel-120", [summary(dlplan, cluster, philly,
                 os.path.join(tmp, "sweep-philly.csv"))], failed)
    print("\nworst gadget / fifo %.3f, worst gadget / best baseline %.3f" % (
        max(x[0] for x in RATIOS), max(x[1] for x in RATIOS)))
    print("fifo over 50 %% busy while jobs arrive in %d of %d runs" % (
        sum(BUSY), len(BUSY)))
    print("%d of %d checks failed" % (failed,
                                         2 * (len(loads) * len(seeds) + 1)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
