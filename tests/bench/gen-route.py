#!/usr/bin/env python3
"""tests/bench/gen-route.py - write a large synthetic cluster and flows
for timing "dlplan route".

    python3 tests/bench/gen-route.py OUTDIR [--flows N ...] [--seed S]

OUTDIR receives nodes.csv, links.csv, traffic.csv and one flows-N.csv per
--flows value (default 250 500 1000 2000).  The network has 1,000
vertices: 8 sites, each a two-level fat tree (100 nodes on 20 leaf
switches of 5, every leaf wired to all 4 spines, every spine to the
site's gateway), and a WAN between the gateways (a ring plus chords, so
that several inter-site paths compete).  traffic.csv holds 96 steps of
background utilisation on every WAN, gateway and spine link (both
directions): a daily cycle per site plus noise and bursts, so that the
mean utilisation visits all three regimes of K = 3.  Flows are random
node pairs, a third of them inside one site, sizes from a few fixed
values (ties exercise the largest-first order).  The output depends only
on the arguments.
"""
import argparse
import math
import os
import random

SITES = 8
NODES = 100          # per site
LEAVES = 20          # per site, 5 nodes each
SPINES = 4           # per site
STEPS = 96


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--flows", type=int, nargs="+",
                    default=[250, 500, 1000, 2000])
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.outdir, exist_ok=True)

    nodes = []
    with open(os.path.join(a.outdir, "nodes.csv"), "w") as f:
        f.write("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
                "nic_gbps\n")
        for s in range(SITES):
            for i in range(NODES):
                n = "s%d-n%03d" % (s, i)
                nodes.append((s, n))
                f.write("%s,site%d,8,H100-SXM5-80GB,989,80,3600,400\n"
                        % (n, s))

    links = []      # (src, dst, gbps, latency_ms); duplex
    for s in range(SITES):
        gw = "s%d-gw" % s
        for i in range(NODES):
            links.append(("s%d-n%03d" % (s, i), "s%d-leaf%02d" % (s, i // 5),
                          400, 0.002))
        for l in range(LEAVES):
            for p in range(SPINES):
                links.append(("s%d-leaf%02d" % (s, l), "s%d-spine%d" % (s, p),
                              800, 0.002))
        for p in range(SPINES):
            links.append(("s%d-spine%d" % (s, p), gw, 1600, 0.01))
    wan = set()
    for s in range(SITES):
        for d in (1, 2, 4):
            t = (s + d) % SITES
            if (t, s) not in wan and s != t:
                wan.add((s, t))
    for s, t in sorted(wan):
        links.append(("s%d-gw" % s, "s%d-gw" % t, rnd.choice([100, 200, 400]),
                      round(5 + 35 * rnd.random(), 3)))
    with open(os.path.join(a.outdir, "links.csv"), "w") as f:
        f.write("src,dst,gbps,latency_ms\n")
        for l in links:
            f.write("%s,%s,%g,%g\n" % l)

    # Background traffic on the WAN, gateway and spine links.
    busy = [l for l in links if "gw" in l[0] or "gw" in l[1]
            or "spine" in l[1]]
    with open(os.path.join(a.outdir, "traffic.csv"), "w") as f:
        f.write("t,src,dst,util\n")
        edges = []
        for src, dst, _, _ in busy:
            edges.append((src, dst))
            edges.append((dst, src))
        prof = {}
        for e in edges:
            prof[e] = (0.15 + 0.3 * rnd.random(), 0.3 * rnd.random(),
                       2 * math.pi * rnd.random())
        for t in range(STEPS):
            # Surges in the middle third move the mean up a regime or two.
            surge = 0.0
            if STEPS // 3 <= t < STEPS // 2:
                surge = 0.25
            elif STEPS // 2 <= t < 2 * STEPS // 3:
                surge = 0.5
            for e in edges:
                base, amp, ph = prof[e]
                u = base + surge + amp * math.sin(2 * math.pi * t / STEPS
                                                  + ph)
                u += 0.05 * (rnd.random() - 0.5)
                if rnd.random() < 0.02:
                    u += 0.3
                u = min(max(u, 0.0), 1.0)
                f.write("%d,%s,%s,%.4f\n" % (t, e[0], e[1], u))

    sizes = [10, 50, 100, 250, 500, 1000]
    for nf in a.flows:
        r2 = random.Random(a.seed * 1000 + nf)
        with open(os.path.join(a.outdir, "flows-%d.csv" % nf), "w") as f:
            f.write("flow,src,dst,mb\n")
            for i in range(nf):
                s, src = r2.choice(nodes)
                while True:
                    if r2.random() < 1 / 3:
                        dst = "s%d-n%03d" % (s, r2.randrange(NODES))
                    else:
                        dst = r2.choice(nodes)[1]
                    if dst != src:
                        break
                f.write("f%d,%s,%s,%g\n" % (i + 1, src, dst,
                                            r2.choice(sizes)))


if __name__ == "__main__":
    main()
