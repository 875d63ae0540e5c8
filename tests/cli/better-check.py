#!/usr/bin/python3
"""better-check.py CASE TMPDIR: a plan of a shape the structured search
does not build, written by hand and priced with "dlplan eval", against
"dlplan plan --exact no" on the same inputs.  Exit 0 when the
planner's T is at most the hand-built plan's.

Each case names the kind of shape, the cluster, the job and the hand-built
groups as [micro_batches, [[node, [local GPUs], [first, last]], ...]].
The planner before the move or shape that a case checks found T_old (each
case says which commit); the hand-built plans are faster, so these cases
fail on it.  A case's model is a bundled one or one that "dlplan model"
writes from the arguments in "gen".
"""
import json
import os
import shlex
import subprocess
import sys

SRC = os.environ.get("SRCDIR", ".")
NODES = "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"
CASES = {
    # One node's GPUs as two TP2 units, one in each of two pipelines, so
    # that every ring of the last stages stays inside the node.
    # T_old 2.5254 s (all of n0 in one pipeline, rings across nodes).
    "split-node": {
        "nodes": NODES + "n0,s0,4,V100,125,32,1200,400\n"
        "n1,s1,2,L4,121,24,256,25\nn2,s0,8,V100,125,32,1200,400\n",
        "links": "src,dst,gbps,latency_ms\nn0,sw0,400,0.005\n"
        "n1,sw1,25,0.005\nn2,sw0,400,0.005\nsw0,sw1,25,20\n",
        "model": "gpt2-xl", "batch": 128, "micro": 1,
        "groups": [
            [64, [["n2", [0, 1], [0, 17]], ["n2", [6, 7], [18, 34]],
                  ["n0", [0, 1], [35, 49]]]],
            [64, [["n2", [2, 3], [0, 17]], ["n2", [4, 5], [18, 34]],
                  ["n0", [2, 3], [35, 49]]]]],
    },
    # TP degrees by GPU type: the H100 pair as two TP1 stages holding most
    # layers, the T4s at TP2 and TP4.  T_old 1.705 s.
    "tp-per-type": {
        "nodes": NODES + "n0,s0,4,T4,65,16,128,100\n"
        "n1,s0,2,H100,989,80,3600,400\nn2,s0,2,T4,65,16,128,100\n",
        "model": "gpt2-xl", "batch": 128, "micro": 2,
        "groups": [
            [64, [["n2", [0, 1], [0, 2]], ["n1", [0], [3, 24]],
                  ["n1", [1], [25, 46]], ["n0", [0, 1, 2, 3], [47, 49]]]]],
    },
    # Every node used: the two T4 pairs as last stages behind the H100s,
    # which the old planner used alone.  T_old 0.1801 s.
    "all-nodes": {
        "nodes": NODES + "n0,s0,2,T4,65,16,128,200\n"
        "n1,s0,2,T4,65,16,128,25\nn2,s0,2,H100,989,80,3600,25\n",
        "model": "bert-large", "batch": 128, "micro": 1,
        "groups": [
            [64, [["n2", [0], [0, 24]], ["n1", [0, 1], [25, 25]]]],
            [64, [["n2", [1], [0, 24]], ["n0", [0, 1], [25, 25]]]]],
    },
    # Pipelines that cross the slow WAN so that the sync rings do not:
    # each ring's members share a node.  T_old 1.1427 s (one pipeline per
    # site, every ring across the WAN).
    "rings": {
        "nodes": NODES + "n0,s0,2,T4,65,16,128,400\n"
        "n1,s1,2,T4,65,16,128,25\n",
        "links": "src,dst,gbps,latency_ms\nn0,sw0,400,0.005\n"
        "n1,sw1,25,0.005\nsw0,sw1,25,20\n",
        "model": "bert-large", "batch": 64, "micro": 2,
        "groups": [
            [16, [["n1", [1], [0, 13]], ["n0", [1], [14, 25]]]],
            [16, [["n1", [0], [0, 13]], ["n0", [0], [14, 25]]]]],
    },
    # Stripes: each of two groups takes half of every node it uses, so
    # that the rings of the V100 stage stay inside its node, behind a
    # 10 Gbit/s link.  T_old 0.07471 s (eight A100s as data parallelism;
    # this case fails on 393fa89, before the stripes).
    "stripe": {
        "nodes": NODES + "a0,lab,8,A100,312,80,2400,400\n"
        "v0,lab,4,V100,125,16,1200,10\nt0,lab,4,T4,65,16,128,50\n",
        "model": "bert-large", "batch": 64, "micro": 1,
        "groups": [
            [32, [["a0", [4 * i, 4 * i + 1], [0, 11]],
                  ["a0", [4 * i + 2, 4 * i + 3], [12, 22]],
                  ["v0", [2 * i, 2 * i + 1], [23, 25]]]]
            for i in range(2)],
    },
    # Two TP2 stages on one node that are not side by side (GPUs 6,7 and
    # 0,1) merged into one TP4 unit, the node's units packed again.  On
    # the bundled hetero-lab with its load history.  T_old 0.69256 s (on
    # 30c3837, before the move).
    "pack": {
        "cluster": "datasets/clusters/hetero-lab",
        "model": "gpt2-xl", "batch": 64, "micro": 1,
        "groups": [
            [64, [["lab-v100-1", [0, 1], [0, 3]],
                  ["lab-a100-0", [0, 1, 2, 3], [4, 21]],
                  ["lab-a100-0", [4, 5, 6, 7], [22, 39]],
                  ["lab-v100-0", [2, 3], [40, 43]],
                  ["lab-v100-0", [0, 1], [44, 47]],
                  ["lab-t4-0", [0, 1, 2, 3], [48, 49]]]]],
    },
    # philly-64's slow P100 nodes, three to each pipeline of V100s as
    # stages of one block each; one alone makes a pipeline slower (its
    # stage adds to the fill), so single moves never add them.  T_old
    # 0.539918 s (on 49293b2, before the move that inserts runs).
    "insert": {
        "cluster": "datasets/clusters/philly-64",
        "model": "gpt2-xl", "batch": 64, "micro": 1,
        "groups": [
            [32, [["dgx1-v100-2", gpus, [0, 11]],
                  ["dgx1-v100-0", gpus, [12, 23]],
                  ["p100-%d" % (4 * i), [0, 1, 2, 3], [24, 24]],
                  ["p100-%d" % (4 * i + 1), [0, 1, 2, 3], [25, 25]],
                  ["p100-%d" % (4 * i + 2), [0, 1, 2, 3], [26, 26]],
                  ["dgx1-v100-3", gpus, [27, 38]],
                  ["dgx1-v100-1", gpus, [39, 49]]]]
            for i, gpus in enumerate(([4, 5, 6, 7], [0, 1, 2, 3]))],
    },
    # Every hetero-lab node in one pipeline, the A100s as four TP2 units
    # and the slow V100 and T4 nodes ahead of them: the improvement phase
    # reaches it only when the left-out nodes join as units of at most
    # two GPUs.  T_old 0.684318 s (on 343c91b, before its second line).
    "narrow": {
        "cluster": "datasets/clusters/hetero-lab",
        "model": "gpt2-xl", "batch": 64, "micro": 1,
        "groups": [
            [64, [["lab-v100-2", [0], [0, 2]],
                  ["lab-t4-0", [0, 1, 2, 3], [3, 4]],
                  ["lab-t4-1", [0], [5, 5]],
                  ["lab-v100-1", [0, 1], [6, 8]],
                  ["lab-a100-0", [2, 3], [9, 17]],
                  ["lab-a100-0", [4, 5], [18, 26]],
                  ["lab-a100-0", [6, 7], [27, 35]],
                  ["lab-a100-0", [0, 1], [36, 44]],
                  ["lab-v100-0", [0, 1, 2, 3], [45, 49]]]]],
    },
    # TP degrees by GPU type and half nodes in the structured search: two
    # pipelines, each with one TP4 half of both A100 nodes and a V100
    # node as one TP8 stage at the end, so that the rings of the A100
    # stages stay inside their nodes.  A small version of Metis's 64-GPU
    # case.  T_old 1.40344 s (on 38d3c67, before the mixed shapes).
    "tp-per-type-dealt": {
        "nodes": NODES + "a0,s0,8,A100,312,80,2400,200\n"
        "a1,s0,8,A100,312,80,2400,200\nv0,s0,8,V100,125,32,1200,100\n"
        "v1,s0,8,V100,125,32,1200,100\n",
        "gen": ["gpt", "--layers", "16", "--hidden", "4096", "--heads",
                "32", "--seq", "1024", "--vocab", "51200"],
        "batch": 128, "micro": 1,
        "groups": [
            [64, [["a0", [4 * i + j for j in range(4)], [0, 6]],
                  ["a1", [4 * i + j for j in range(4)], [7, 12]],
                  ["v%d" % i, list(range(8)), [13, 17]]]]
            for i in range(2)],
    },
    # Half nodes dealt to pipelines: each DGX-1 gives one half to each of
    # two pipelines, each a P100 node feeding a V100 half (the shape an
    # older planner, 7dceb0b, found).  T_old 1.99406 s (on 38d3c67).
    "half-node-dealt": {
        "cluster": "datasets/clusters/philly-64",
        "model": "gpt2-xl", "batch": 256, "micro": 2,
        "groups": [
            [16, [["p100-%d" % i, [0, 1, 2, 3], [0, 6]],
                  ["dgx1-v100-%d" % (i // 2),
                   [4 * (i % 2) + j for j in range(4)], [7, 49]]]]
            for i in range(8)],
    },
    # Whole and half nodes in one pipeline: three DGX-1s as TP8 stages
    # and the fourth as two TP4 stages (the pipeline 7dceb0b found for
    # --strategy pp).  T_old 2.22369 s (on 38d3c67, and on this branch
    # before split halves could add stages beyond the units).
    "half-node-pp": {
        "cluster": "datasets/clusters/philly-64",
        "model": "gpt2-xl", "batch": 256, "micro": 2, "strategy": "pp",
        "groups": [
            [128, [["dgx1-v100-1", list(range(8)), [0, 12]],
                   ["dgx1-v100-0", list(range(8)), [13, 24]],
                   ["dgx1-v100-2", [0, 1, 2, 3], [25, 31]],
                   ["dgx1-v100-2", [4, 5, 6, 7], [32, 38]],
                   ["dgx1-v100-3", list(range(8)), [39, 49]]]]],
    },
}


def dlplan(*args):
    cmd = shlex.split(os.environ.get("DLPLAN_WRAP", "")) + \
        [os.environ.get("DLPLAN", "dlplan")] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(args), p.returncode,
                                      p.stderr.strip()))
    return json.loads(p.stdout) if p.stdout else None


def main():
    name, tmp = sys.argv[1], sys.argv[2]
    c = CASES[name]
    d = os.path.join(tmp, "better-" + name)
    os.makedirs(d, exist_ok=True)
    if "cluster" in c:
        cl = os.path.join(SRC, c["cluster"])
    else:
        cl = d
        with open(os.path.join(d, "nodes.csv"), "w") as f:
            f.write(c["nodes"])
    if "links" in c:
        with open(os.path.join(d, "links.csv"), "w") as f:
            f.write(c["links"])
    if "gen" in c:
        model = os.path.join(d, "model.csv")
        dlplan("model", *c["gen"], "-o", model)
    else:
        model = os.path.join(SRC, "datasets/models/%s.csv" % c["model"])
    job = ["--global-batch", str(c["batch"]), "--micro-batch",
           str(c["micro"]), "--strategy", c.get("strategy", "auto")]
    hand = {"schema": "dlplan.plan/1",
            "options": {"global_batch": c["batch"], "micro_batch": c["micro"]},
            "groups": [{"micro_batches": m,
                        "stages": [{"node": n, "gpus": g, "layers": ly}
                                   for n, g, ly in st]}
                       for m, st in c["groups"]]}
    hp = os.path.join(d, "hand.json")
    with open(hp, "w") as f:
        json.dump(hand, f)
    th = dlplan("eval", hp, "-c", cl, "-m", model, "--format",
                "json")["estimate"]["iteration_s"]
    tp = dlplan("plan", "-c", cl, "-m", model, *job, "--exact", "no",
                "--format", "json")["estimate"]["iteration_s"]
    print("# %s: plan %.6g s, hand-built %.6g s" % (name, tp, th))
    sys.exit(0 if tp <= th * (1 + 1e-9) else 1)


main()
