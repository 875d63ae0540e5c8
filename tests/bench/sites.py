#!/usr/bin/python3
"""Plans that use more sites than the planner's, built by hand and priced.

usage: sites.py [OUTDIR] [--gpus N] [--sites K] [--types T]
                [--chain dcA,dcB,...] [--copy dcX,...]

On a gen-cluster2.py cluster (default 4,096 GPUs, 8 sites, 5 GPU types,
seed 1) with llama2-70b, global batch GPUS / 4 in micro-batches of 1
(the bench's gen 2 case), "dlplan plan" keeps to a few hundred GPUs of
one site.  This script asks whether more of the cluster would help,
under the same cost model, with two kinds of plan it writes itself and
prices with "dlplan eval":

 - site chains: G pipelines that each run through the sites of --chain
   in order, one node per site and pipeline (the least loaded H100
   nodes of each site), the layers cut evenly; every gradient ring then
   stays inside one site, and each pipeline crosses every WAN link of
   the chain once per micro-batch each way.  The default chain is a
   path of 40 Gbit/s links of the seed-1 cluster.
 - copies: the planner's groups again on the nodes of the same GPU
   types in another site (--copy), so that each ring spans two sites.

The micro-batches of each are split again in proportion to each group's
rate (micro-batches over T_g) for four rounds, the best kept.  Prints T
of each against the planner's plan; nothing is timed.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DLPLAN = os.environ.get("DLPLAN", os.path.join(ROOT, "dlplan"))
MODEL = os.path.join(ROOT, "datasets", "models", "llama2-70b.csv")


def option(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return v
    return default


def run(*argv):
    p = subprocess.run([DLPLAN] + list(argv), capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), None


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def price(path, plan, cluster):
    """T of plan after up to four re-splits by rate; (T, None) or
    (None, why)."""
    batch = plan["options"]["global_batch"]
    best = None
    for _ in range(4):
        with open(path, "w") as f:
            json.dump(plan, f)
        d, err = run("eval", path, "-c", cluster, "-m", MODEL,
                     "--format", "json")
        if d is None:
            return best, err
        t = d["estimate"]["iteration_s"]
        best = t if best is None or t < best else best
        rate = [g["micro_batches"] / g["time_s"] for g in d["groups"]]
        total = sum(rate)
        m = [max(1, int(batch * r / total)) for r in rate]
        while sum(m) < batch:
            m[m.index(min(m))] += 1
        while sum(m) > batch:
            m[m.index(max(m))] -= 1
        for g, mg in zip(plan["groups"], m):
            g["micro_batches"] = mg
    return best, None


def even(batch, G):
    return [batch // G + (1 if g < batch % G else 0) for g in range(G)]


def chain_plan(nodes, load, chain, G, per, batch, layers):
    by_site = {}
    for s in chain:
        c = [n for n in nodes if n["site"] == s and
             n["gpu_model"].startswith("H100")]
        c.sort(key=lambda n: (load.get(n["node"], 0.0), n["node"]))
        if len(c) < G * per:
            return None
        by_site[s] = c
    S = len(chain) * per
    cut = [round(layers * i / S) for i in range(S + 1)]
    groups = []
    for g, m in enumerate(even(batch, G)):
        st = []
        un = [by_site[chain[j // per]][g * per + j % per] for j in range(S)]
        for j in range(S):
            n = un[j]
            st.append({"node": n["node"],
                       "gpus": list(range(int(n["gpus"]))),
                       "layers": [cut[j], cut[j + 1] - 1]})
        groups.append({"micro_batches": m, "stages": st})
    return groups


def copy_plan(nodes, load, base, site):
    """base's groups, then the same groups on site's nodes of each stage's
    GPU type (a group whose nodes site lacks is left out)."""
    byname = {n["node"]: n for n in nodes}
    free = sorted((n for n in nodes if n["site"] == site),
                  key=lambda n: (load.get(n["node"], 0.0), n["node"]))
    used = set()
    groups = [{"micro_batches": g["micro_batches"],
               "stages": [{"node": s["node"], "gpus": s["gpus"],
                           "layers": s["layers"]} for s in g["stages"]]}
              for g in base["groups"]]
    added = 0
    for g in base["groups"]:
        st = []
        for s in g["stages"]:
            want = byname[s["node"]]["gpu_model"]
            c = [n for n in free if n["node"] not in used and
                 n["gpu_model"] == want and
                 int(n["gpus"]) > max(s["gpus"])]
            if not c:
                break
            used.add(c[0]["node"])
            st.append({"node": c[0]["node"], "gpus": s["gpus"],
                       "layers": s["layers"]})
        if len(st) == len(g["stages"]):
            groups.append({"micro_batches": g["micro_batches"],
                           "stages": st})
            added += 1
    if added == 0:
        return None
    batch = base["options"]["global_batch"]
    for g, m in zip(groups, even(batch, len(groups))):
        g["micro_batches"] = m
    return groups


def main():
    args = sys.argv[1:]
    gpus = int(option(args, "--gpus", "4096"))
    sites = int(option(args, "--sites", "8"))
    types = option(args, "--types", "5")
    chain = option(args, "--chain", "dc4,dc6,dc5,dc2,dc7,dc3").split(",")
    copies = option(args, "--copy", "dc2,dc6,dc0").split(",")
    out = args[0] if args else tempfile.mkdtemp(prefix="dlplan-sites-")
    cluster = os.path.join(out, "cluster")
    batch = max(1, gpus // 4)
    if not os.path.exists(os.path.join(cluster, "nodes.csv")):
        subprocess.run([sys.executable, os.path.join(
            ROOT, "tests", "bench", "gen-cluster2.py"), str(gpus),
            str(sites), cluster, "--types", types], check=True)
    plan, err = run("plan", "-c", cluster, "-m", MODEL, "--global-batch",
                    str(batch), "--micro-batch", "1", "--format", "json")
    if plan is None:
        sys.exit("sites.py: plan failed: %s" % err)
    nodes = read_csv(os.path.join(cluster, "nodes.csv"))
    load = plan.get("forecast", {})
    layers = sum(1 for _ in read_csv(MODEL))
    t0 = plan["estimate"]["iteration_s"]
    ranks = len(plan["ranks"])
    print("cluster %s: %d GPUs, %d sites; llama2-70b, batch %d" %
          (cluster, gpus, sites, batch))
    print("%-46s %6s %10s %8s" % ("plan (chain: pipelines x nodes per site)", "GPUs", "T_s", "vs plan"))
    print("%-46s %6d %10.4f %8s" % ("dlplan plan", ranks, t0, "-"))
    path = os.path.join(out, "hand.json")
    rows = []
    for G, per in ((4, 1), (8, 1), (14, 1), (7, 2), (4, 3), (3, 4)):
        groups = chain_plan(nodes, load, chain, G, per, batch, layers)
        if groups is not None:
            rows.append(("chain %s, %d x %d" % ("-".join(chain), G, per),
                         groups))
    for site in copies:
        groups = copy_plan(nodes, load, plan, site)
        if groups is not None:
            rows.append(("the plan's groups again in %s" % site, groups))
    for name, groups in rows:
        hand = {"schema": "dlplan.plan/1",
                "options": {"global_batch": batch, "micro_batch": 1},
                "groups": groups}
        n = sum(len(s["gpus"]) for g in groups for s in g["stages"])
        t, err = price(path, hand, cluster)
        if t is None:
            print("%-46s %6d %10s %8s  (%s)" % (name, n, "-", "-", err))
        else:
            print("%-46s %6d %10.4f %7.2fx" % (name, n, t, t / t0))


main()
