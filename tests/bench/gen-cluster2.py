#!/usr/bin/python3
"""Write a second kind of synthetic cluster for benchmarks.

usage: gen-cluster2.py GPUS SITES OUTDIR [--types N] [--seed S]

Unlike gen-cluster.py, the sites differ: each site has its own mix of
GPU types (site k starts the type cycle at type k, and one node in four
has 4 GPUs instead of 8), the nodes of a site hang off its spine
directly (no leaf switches), and the sites are joined by a full mesh of
slow WAN links whose traffic.csv history (48 steps, both directions)
swings between quiet and busy, so the routing sees several congestion
regimes.  load.csv has 48 steps of load with a per-site level.  Used by
"make bench" with a small batch per GPU (global batch GPUS / 4).
Deterministic for a seed.
"""
import importlib.util
import math
import os
import random
import sys


def load_gen_cluster():
    """gen-cluster.py as a module: both generators share its GPU types."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "gen-cluster.py")
    spec = importlib.util.spec_from_file_location("gen_cluster", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = load_gen_cluster()
TYPES = GEN.TYPES
STEPS = 48


def option(args, name, default):
    if name in args:
        i = args.index(name)
        v = int(args[i + 1])
        del args[i:i + 2]
        return v
    return default


def make_nodes(gpus, sites, ntypes):
    nodes = []
    left, i = gpus, 0
    while left > 0:
        s = i % sites
        g = min(4 if i % 4 == 3 else 8, left)
        t = TYPES[(s + i // sites) % ntypes]
        nodes.append(("m%05d" % i, "dc%d" % s, g, t))
        left -= g
        i += 1
    return nodes


def main():
    args = sys.argv[1:]
    ntypes = option(args, "--types", 3)
    seed = option(args, "--seed", 1)
    gpus, sites, out = int(args[0]), int(args[1]), args[2]
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    nodes = make_nodes(gpus, sites, ntypes)
    GEN.write_nodes(out, nodes)
    wan = []
    with open(os.path.join(out, "links.csv"), "w") as f:
        f.write("src,dst,gbps,latency_ms\n")
        for n, s, g, t in nodes:
            f.write("%s,core-%s,%d,0.004\n" % (n, s, t[4]))
        for a in range(sites):
            for b in range(a + 1, sites):
                f.write("core-dc%d,core-dc%d,%d,%.1f\n" % (
                    a, b, rnd.choice([10, 25, 40]), 10 + 50 * rnd.random()))
                wan.append(("core-dc%d" % a, "core-dc%d" % b))
    with open(os.path.join(out, "traffic.csv"), "w") as f:
        f.write("t,src,dst,util\n")
        for step in range(STEPS):
            busy = 0.55 if (step // 6) % 2 else 0.15
            for a, b in wan:
                for src, dst in ((a, b), (b, a)):
                    u = busy + rnd.gauss(0, 0.08)
                    f.write("%d,%s,%s,%.4f\n" % (step, src, dst,
                                                 min(max(u, 0), 0.95)))
    with open(os.path.join(out, "load.csv"), "w") as f:
        f.write("node,t,util\n")
        level = [0.1 + 0.4 * rnd.random() for _ in range(sites)]
        for n, s, g, t in nodes:
            base = level[int(s[2:])]
            ph = rnd.random() * 2 * math.pi
            for step in range(STEPS):
                u = base + 0.15 * math.sin(2 * math.pi * step / 24 + ph)
                u += rnd.gauss(0, 0.03)
                f.write("%s,%d,%.4f\n" % (n, step, min(max(u, 0), 1)))


if __name__ == "__main__":
    main()
