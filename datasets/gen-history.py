#!/usr/bin/env python3
"""Generate the synthetic load and traffic histories of the bundled clusters.

Writes, for the clusters listed in CLUSTERS below:
    datasets/clusters/<cluster>/load.csv      header  node,t,util
    datasets/clusters/<cluster>/traffic.csv   header  t,src,dst,util
                                              (only for clusters with links.csv)

Run from anywhere as
    /usr/bin/python3 datasets/gen-history.py
Python 3 standard library only.  The output is deterministic: every series
draws from its own random.Random seeded with a string built from SEED, the
cluster, the series kind and the series name (random.seed(str) hashes the
string with SHA-512, independent of PYTHONHASHSEED), so running the script
twice gives byte-identical files, and adding a node does not change the
histories of the other nodes.

The model (see datasets/README.md, "How the histories were generated"):
  * step t = 0 is 00:00 UTC of day 1; a cluster has a fixed step length;
  * daily cycle: 0.5 * (1 + sin(2*pi*(h - 9)/24)) with h the local hour of
    the site (UTC offset per site below), i.e. lowest at 03:00 and highest
    at 15:00 local time;
  * per-series AR(1) noise  e(t) = phi * e(t-1) + N(0, sigma);
  * bursts: a job arrives with a per-hour rate and holds the node (or
    link) at 60-90 % (links: +25-45 %) for a few steps;
  * node idle periods at night: utilisation exactly 0 for 1-3 hours;
  * links: nightly bulk replication out of the sending site at 01:00-03:00
    local time, and a few congestion incidents shared by all WAN links;
  * values clipped to [0, 1] and printed with at most 4 decimals.
"""

import csv
import math
import os
import random
import sys

SEED = 20240521

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_DIR = os.path.join(HERE, "clusters")

# UTC offset (hours, standard time, no DST) of every site.
SITE_UTC_OFFSET = {
    "lab": 1.0,            # a university lab in Central Europe (CET)
    "us-east": -5.0,       # N. Virginia
    "us-west": -8.0,       # Oregon
    "eu-west": 0.0,        # Ireland
    "eu-central": 1.0,     # Frankfurt
    "ap-northeast": 9.0,   # Tokyo
    "ap-southeast": 8.0,   # Singapore
    "sa-east": -3.0,       # Sao Paulo
    "ap-south": 5.5,       # Mumbai
}

# steps: number of samples; step_min: sampling period in minutes.
CLUSTERS = [
    ("hetero-lab", {"steps": 192, "step_min": 15}),   # 2 days, 15-minute steps
    ("two-dc", {"steps": 288, "step_min": 5}),        # 1 day, 5-minute steps
    ("geo-8", {"steps": 192, "step_min": 15}),        # 2 days, 15-minute steps
]

# Monitoring gaps (missing samples), allowed by dlplan-formats(5), load.csv.
GAPS = {
    ("hetero-lab", "lab-t4-1"): range(100, 103),   # agent restart: 45 minutes lost
}


# ---------------------------------------------------------------- input files

def read_csv_rows(path):
    """Rows of a dlplan CSV as dicts: '#' comment lines and a BOM skipped."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        lines = [ln for ln in f if not ln.lstrip().startswith("#") and ln.strip()]
    return list(csv.DictReader(lines))


def read_cluster(name):
    cdir = os.path.join(CLUSTER_DIR, name)
    nodes = read_csv_rows(os.path.join(cdir, "nodes.csv"))
    links_path = os.path.join(cdir, "links.csv")
    links = read_csv_rows(links_path) if os.path.exists(links_path) else None
    return cdir, nodes, links


def vertex_sites(nodes, links):
    """Site of every vertex: nodes from nodes.csv, other vertices (switches,
    gateways) by breadth-first search from the nodes, so a switch takes the
    site of its nodes and a gateway that of its switch."""
    site = {n["node"]: n["site"] for n in nodes}
    adj = {}
    for ln in links:
        adj.setdefault(ln["src"], []).append(ln["dst"])
        adj.setdefault(ln["dst"], []).append(ln["src"])
    frontier = [n["node"] for n in nodes]
    while frontier:
        nxt = []
        for v in frontier:
            for u in adj.get(v, []):
                if u not in site:
                    site[u] = site[v]
                    nxt.append(u)
        frontier = nxt
    return site


def traffic_edges(nodes, links):
    """Directed edges with a traffic history: both directions of every link
    whose two ends are not GPU nodes (switch-gateway and WAN links)."""
    node_ids = {n["node"] for n in nodes}
    edges = []
    for ln in links:
        if ln["src"] in node_ids or ln["dst"] in node_ids:
            continue
        gbps = float(ln["gbps"])
        edges.append((ln["src"], ln["dst"], gbps))
        edges.append((ln["dst"], ln["src"], gbps))
    return edges


# ---------------------------------------------------------------- model

def daily(local_hour):
    """Daily cycle in [0, 1]: minimum at 03:00, maximum at 15:00 local time."""
    return 0.5 * (1.0 + math.sin(2.0 * math.pi * (local_hour - 9.0) / 24.0))


def local_hour(t, step_min, offset):
    return (t * step_min / 60.0 + offset) % 24.0


def clip01(x):
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def fmt(x):
    """At most 4 decimals, no trailing zeros, never '-0'."""
    s = "%.4f" % round(clip01(x), 4)
    s = s.rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def rng_for(cluster, kind, name):
    return random.Random("%d/%s/%s/%s" % (SEED, cluster, kind, name))


def node_load(cluster, node, steps, step_min):
    """One node's utilisation series (fraction of GPU time used by others)."""
    r = rng_for(cluster, "load", node["node"])
    offset = SITE_UTC_OFFSET[node["site"]] + r.uniform(-1.0, 1.0)
    model = node["gpu_model"]
    # Big training GPUs are in higher demand than inference-class GPUs.
    busy = 0.12 if model.startswith(("H100", "A100")) else 0.0
    base = r.uniform(0.04, 0.18) + busy
    amp = r.uniform(0.18, 0.38)
    phi = r.uniform(0.75, 0.9)
    sigma = r.uniform(0.025, 0.05)
    burst_per_hour = r.uniform(0.08, 0.25)
    idle_per_night_hour = r.uniform(0.03, 0.25)
    per_step = step_min / 60.0

    out = []
    e = 0.0
    burst_left, burst_level = 0, 0.0
    idle_left = 0
    for t in range(steps):
        h = local_hour(t, step_min, offset)
        e = phi * e + r.gauss(0.0, sigma)
        if burst_left == 0 and r.random() < burst_per_hour * per_step:
            burst_left = max(2, int(round(r.uniform(0.4, 2.0) * 60.0 / step_min)))
            burst_level = r.uniform(0.6, 0.9)
        if idle_left == 0 and h < 6.0 and r.random() < idle_per_night_hour * per_step:
            idle_left = max(2, int(round(r.uniform(1.0, 3.0) * 60.0 / step_min)))
        u = base + amp * daily(h) + e
        if burst_left > 0:
            u = max(u, burst_level + r.gauss(0.0, 0.02))
            burst_left -= 1
            idle_left = 0            # a job arrived: the node is not idle
        elif idle_left > 0:
            u = 0.0
            idle_left -= 1
        out.append(clip01(u))
    return out


def incidents(cluster, steps, step_min):
    """Congestion incidents shared by all WAN links: extra utilisation per step."""
    r = rng_for(cluster, "incidents", "wan")
    extra = [0.0] * steps
    days = steps * step_min / 1440.0
    for _ in range(max(1, int(round(2 * days)))):
        start = r.randrange(steps)
        length = max(2, int(round(r.uniform(0.5, 1.5) * 60.0 / step_min)))
        level = r.uniform(0.3, 0.45)
        for t in range(start, min(steps, start + length)):
            extra[t] = max(extra[t], level)
    return extra


def edge_traffic(cluster, src, dst, gbps, sites, steps, step_min, shared):
    """Background utilisation of the directed edge src -> dst."""
    r = rng_for(cluster, "traffic", src + ">" + dst)
    off_src = SITE_UTC_OFFSET[sites[src]]
    off_dst = SITE_UTC_OFFSET[sites[dst]]
    # Fat intra-site links (switch <-> gateway) are relatively less loaded.
    scale = 1.0 if gbps <= 100 else 0.5
    base = r.uniform(0.08, 0.2) * scale
    amp = r.uniform(0.2, 0.35) * scale
    backup = r.uniform(0.15, 0.3) * scale
    phi = r.uniform(0.8, 0.92)
    sigma = r.uniform(0.02, 0.04)
    burst_per_hour = r.uniform(0.05, 0.15)
    per_step = step_min / 60.0

    out = []
    e = 0.0
    burst_left, burst_add = 0, 0.0
    for t in range(steps):
        hs = local_hour(t, step_min, off_src)
        hd = local_hour(t, step_min, off_dst)
        e = phi * e + r.gauss(0.0, sigma)
        u = base + amp * (0.6 * daily(hs) + 0.4 * daily(hd)) + e
        if 1.0 <= hs < 3.0:                      # nightly replication out of src
            u += backup
        if burst_left == 0 and r.random() < burst_per_hour * per_step:
            burst_left = max(1, int(round(r.uniform(0.25, 1.0) * 60.0 / step_min)))
            burst_add = r.uniform(0.25, 0.45)
        if burst_left > 0:
            u += burst_add * scale
            burst_left -= 1
        u += shared[t] * scale
        out.append(clip01(u))
    return out


# ---------------------------------------------------------------- output

def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def generate(cluster, cfg):
    cdir, nodes, links = read_cluster(cluster)
    steps, step_min = cfg["steps"], cfg["step_min"]
    days = steps * step_min / 1440.0
    period = "%d-minute steps, %d steps (%g day%s), t = 0 is 00:00 UTC" % (
        step_min, steps, days, "" if days == 1 else "s")

    lines = [
        "# dlplan load history of cluster %s: synthetic, written by datasets/gen-history.py (do not edit)" % cluster,
        "# %s; util = fraction of the node's GPU time taken by other work" % period.replace(",", ";"),
        "node,t,util",
    ]
    for n in nodes:
        series = node_load(cluster, n, steps, step_min)
        gap = GAPS.get((cluster, n["node"]), ())
        for t, u in enumerate(series):
            if t not in gap:
                lines.append("%s,%d,%s" % (n["node"], t, fmt(u)))
    write_lines(os.path.join(cdir, "load.csv"), lines)
    written = ["load.csv"]

    if links is not None:
        sites = vertex_sites(nodes, links)
        edges = traffic_edges(nodes, links)
        shared = incidents(cluster, steps, step_min)
        series = [edge_traffic(cluster, s, d, g, sites, steps, step_min, shared)
                  for (s, d, g) in edges]
        lines = [
            "# dlplan traffic history of cluster %s: synthetic, written by datasets/gen-history.py (do not edit)" % cluster,
            "# %s; util = fraction of the directed link src->dst used by background traffic" % period.replace(",", ";"),
            "t,src,dst,util",
        ]
        for t in range(steps):
            for (s, d, _), ser in zip(edges, series):
                lines.append("%d,%s,%s,%s" % (t, s, d, fmt(ser[t])))
        write_lines(os.path.join(cdir, "traffic.csv"), lines)
        written.append("traffic.csv")
    return written


def main(argv):
    if len(argv) > 1:
        sys.stderr.write("usage: %s   (no arguments)\n" % argv[0])
        return 1
    for cluster, cfg in CLUSTERS:
        written = generate(cluster, cfg)
        print("%s: %s" % (cluster, ", ".join(written)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
