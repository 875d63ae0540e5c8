#!/usr/bin/python3
"""gadget against the best other policy on traces of gen-jobs2.py.

usage: sched-compare2.py [--dlplan PATH] [--jobs N] [--seeds S,S,...]
                         [--llm F,F,...] [--clusters C:G,C:G,...]

For every cluster (directory name under datasets/clusters and its GPUs),
LLM share and seed, tests/bench/gen-jobs2.py writes N jobs (default 60,
mean gap 900 s) and one "dlplan schedule --format csv" simulates every
policy.  Prints one row per trace: gadget's average and p95 JCT and
worst wait, the best other policy's (by average JCT; by p95 JCT) and the
ratios, then how many traces gadget's average is at most the best
other's and its p95 at most 1.1 x the best other's.  Nothing is timed.
"""
import argparse
import csv
import io
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlplan", default=os.path.join(ROOT, "dlplan"))
    ap.add_argument("--jobs", type=int, default=60)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--llm", default="0.1,0.3")
    ap.add_argument("--clusters", default="philly-64:64,geo-8:98,two-dc:48")
    a = ap.parse_args()
    out = os.path.join(ROOT, "tests/bench/out")
    os.makedirs(out, exist_ok=True)
    gen = os.path.join(ROOT, "tests/bench/gen-jobs2.py")
    print("| cluster | LLM | seed | gadget avg | best other avg | ratio | "
          "gadget p95 | best other p95 | ratio | gadget max wait | "
          "fifo max wait | stalled |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    n = avg_ok = p95_ok = 0
    for cg in a.clusters.split(","):
        c, g = cg.split(":")
        for llm in a.llm.split(","):
            for seed in a.seeds.split(","):
                path = os.path.join(out, "%s-%s-%s.csv" % (c, llm, seed))
                with open(path, "w") as fp:
                    subprocess.run(["python3", gen, str(a.jobs), "--seed",
                                    seed, "--llm", llm, "--gpus", g,
                                    "--gap", "900"], stdout=fp, check=True)
                r = subprocess.run([a.dlplan, "schedule", "-c", os.path.join(
                    ROOT, "datasets/clusters", c), "--jobs", path, "--format",
                    "csv", "-q"], capture_output=True, text=True)
                if r.returncode != 0:
                    print("| %s | %s | %s | exit %d: %s |" % (
                        c, llm, seed, r.returncode, r.stderr.strip()))
                    continue
                rows = {x["policy"]: x for x in
                        csv.DictReader(io.StringIO(r.stdout))}
                gd = rows.pop("gadget")
                ok = {p: x for p, x in rows.items() if not x["stalled"]}
                ba = min(float(x["avg_jct_s"]) for x in ok.values())
                bp = min(float(x["p95_jct_s"]) for x in ok.values())
                ga, gp = float(gd["avg_jct_s"]), float(gd["p95_jct_s"])
                n += 1
                avg_ok += ga <= ba
                p95_ok += gp <= 1.1 * bp
                print("| %s | %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f | "
                      "%.2f | %.0f | %.0f | %s |" % (
                          c, llm, seed, ga, ba, ga / ba, gp, bp, gp / bp,
                          float(gd["max_wait_s"]),
                          float(rows["fifo"]["max_wait_s"]),
                          " ".join(p for p, x in rows.items()
                                   if x["stalled"]) or "-"))
    print("\ngadget's average JCT <= the best other's in %d of %d traces; "
          "its p95 <= 1.1 x the best other's in %d of %d" % (
              avg_ok, n, p95_ok, n))


if __name__ == "__main__":
    main()
