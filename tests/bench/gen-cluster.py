#!/usr/bin/python3
"""Write a synthetic heterogeneous cluster for benchmarks.

usage: gen-cluster.py GPUS SITES OUTDIR [--types N] [--seed S]

Nodes of 8 GPUs (the last may have fewer) cycle through N GPU types
(H100, A100, L4, V100, T4 figures from their data sheets), spread over
SITES sites; links.csv has a switch per site, 8 nodes per leaf switch
under it (fat-tree-like), and a ring of WAN links between sites plus a
chord for every other site.  load.csv has 32 steps of daily-cycle load.
Deterministic for a seed.
"""
import math
import os
import random
import sys

TYPES = [
    # model, tflops (dense bf16), mem_gb, intra_gbps, nic_gbps, $/h
    ("H100-SXM5-80GB", 989, 80, 3600, 3200, 98.32),
    ("A100-SXM4-80GB", 312, 80, 2400, 400, 40.97),
    ("L4-24GB", 121, 24, 256, 100, 13.35),
    ("V100-SXM2-32GB", 125, 32, 1200, 100, 31.22),
    ("T4-16GB", 65, 16, 256, 50, 7.82),
]


def write_nodes(out, nodes):
    """Write nodes.csv of (node, site, gpus, type) tuples."""
    with open(os.path.join(out, "nodes.csv"), "w") as f:
        f.write("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
                "nic_gbps,cost_per_hour\n")
        for n, s, g, t in nodes:
            f.write("%s,%s,%d,%s,%d,%d,%d,%d,%.2f\n" % (
                n, s, g, t[0], t[1], t[2], t[3], t[4], t[5] * g / 8))


def main():
    args = sys.argv[1:]
    ntypes, seed = 3, 1
    if "--types" in args:
        i = args.index("--types")
        ntypes = int(args[i + 1])
        del args[i:i + 2]
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    gpus, sites, out = int(args[0]), int(args[1]), args[2]
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    nodes = []
    left, i = gpus, 0
    while left > 0:
        g = min(8, left)
        t = TYPES[i % ntypes]
        nodes.append(("n%05d" % i, "site%d" % (i % sites), g, t))
        left -= g
        i += 1
    write_nodes(out, nodes)
    with open(os.path.join(out, "links.csv"), "w") as f:
        f.write("src,dst,gbps,latency_ms\n")
        per_site = {}
        for n, s, g, t in nodes:
            per_site.setdefault(s, []).append((n, t))
        for s, members in sorted(per_site.items()):
            for j, (n, t) in enumerate(members):
                leaf = "leaf-%s-%d" % (s, j // 8)
                f.write("%s,%s,%d,0.002\n" % (n, leaf, t[4]))
            for j in range((len(members) + 7) // 8):
                f.write("leaf-%s-%d,spine-%s,%d,0.003\n" % (s, j, s, 3200))
        for k in range(sites):
            if sites < 2:
                break
            a, b = "spine-site%d" % k, "spine-site%d" % ((k + 1) % sites)
            if sites == 2 and k == 1:
                break
            f.write("%s,%s,%d,%.1f\n" % (a, b, rnd.choice([25, 50, 100]),
                                          5 + 40 * rnd.random()))
        for k in range(0, sites - 2, 2):
            f.write("spine-site%d,spine-site%d,%d,%.1f\n" % (
                k, k + 2, 25, 20 + 60 * rnd.random()))
    with open(os.path.join(out, "load.csv"), "w") as f:
        f.write("node,t,util\n")
        for idx, (n, s, g, t) in enumerate(nodes):
            ph = rnd.random() * 2 * math.pi
            for step in range(32):
                u = 0.25 + 0.2 * math.sin(2 * math.pi * step / 32 + ph)
                u += rnd.gauss(0, 0.04)
                f.write("%s,%d,%.4f\n" % (n, step, min(max(u, 0), 1)))


if __name__ == "__main__":
    main()
