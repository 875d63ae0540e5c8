#!/usr/bin/env python3
"""tests/bench/published.py - dlplan's step time against published,
measured Megatron-LM runs: each row of the SC'21 Table 1
(tests/cli/data/megatron-sc21-table1.csv) imported with
"dlplan import megatron" (its TP, PP, global batch and micro-batch, full
recomputation as published, fp16, unfused attention as Megatron ran it
in 2021) on a single-site cluster of DGX A100 80GB nodes with exactly
the row's GPUs, priced, and turned into teraFLOP/s per GPU with the
paper's own count (equation 3, recomputation included):

    96 B s l h^2 (1 + s / 6h + V / 16 l h) / (T x GPUs)

    published.py [--dlplan PATH] [--mfu F] [--out FILE]

Prints one line per row (predicted, published, their ratio) and the
Kendall tau of the ratio against model size; no fitting, nothing per
row.  Standard library only.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "tests", "cli", "data",
                     "megatron-sc21-table1.csv")


def kendall(x, y):
    n, s = len(x), 0
    for i in range(n):
        for j in range(i + 1, n):
            d = (x[i] - x[j]) * (y[i] - y[j])
            s += (d > 0) - (d < 0)
    return s / (n * (n - 1) / 2)


def cluster(d, gpus):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nodes.csv"), "w") as f:
        f.write("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
                "nic_gbps\n")
        for i in range(gpus // 8):
            f.write("dgx-%d,dc,8,A100-SXM4-80GB,312,80,2400,1600\n" % i)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlplan", default=os.path.join(ROOT, "dlplan"))
    ap.add_argument("--mfu", type=float)
    ap.add_argument("--out")
    o = ap.parse_args()
    with open(TABLE) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    tmp = tempfile.mkdtemp(prefix="dlplan-published-")
    lines, sizes, ratios = [], [], []
    lines.append("%-8s %4s %4s %4s %6s %6s %10s %9s %9s %7s" % (
        "model", "tp", "pp", "dp", "gpus", "batch", "T_s", "pred_TF",
        "publ_TF", "ratio"))
    for r in rows:
        h, l, s, v = (int(r[k]) for k in ("hidden", "layers", "seq",
                                            "vocab"))
        tp, pp, gpus, gb = (int(r[k]) for k in ("tp", "pp", "gpus",
                                                "global_batch"))
        cl = os.path.join(tmp, "a100-%d" % gpus)
        if not os.path.isdir(cl):
            cluster(cl, gpus)
        model = os.path.join(tmp, r["model"] + ".csv")
        subprocess.run([o.dlplan, "model", "gpt", "--layers", str(l),
                        "--hidden", str(h), "--heads", r["heads"],
                        "--seq", str(s), "--vocab", str(v), "-o", model],
                       check=True)
        args = ["--tensor-model-parallel-size", str(tp),
                "--pipeline-model-parallel-size", str(pp),
                "--micro-batch-size", r["micro_batch"],
                "--global-batch-size", str(gb), "--num-layers", str(l),
                "--hidden-size", str(h), "--num-attention-heads",
                r["heads"], "--seq-length", str(s),
                "--max-position-embeddings", str(s), "--vocab-size", str(v),
                "--fp16", "--attention-backend", "unfused",
                "--recompute-granularity", "full", "--recompute-method",
                "uniform", "--recompute-num-layers", "1"]
        if tp > 1:
            args.insert(2, "--sequence-parallel")
        cmd = [o.dlplan, "import", "megatron", "-q", "-c", cl, "-m", model,
               "--format", "json"]
        if o.mfu:
            cmd += ["--mfu", str(o.mfu)]
        p = subprocess.run(cmd + ["--"] + args, capture_output=True,
                           text=True)
        if p.returncode != 0:
            lines.append("%-8s does not import: %s" % (r["model"],
                                                       p.stderr.strip()))
            continue
        t = json.loads(p.stdout)["estimate"]["iteration_s"]
        flops = 96 * gb * s * l * h * h * (1 + s / (6 * h) +
                                           v / (16 * l * h))
        pred = flops / t / gpus / 1e12
        publ = float(r["achieved_tflops_per_gpu"])
        sizes.append(float(r["params_b"]))
        ratios.append(pred / publ)
        lines.append("%-8s %4d %4d %4s %6d %6d %10.3f %9.1f %9.1f %7.3f" % (
            r["model"], tp, pp, r["dp"], gpus, gb, t, pred, publ,
            pred / publ))
    if ratios:
        lines.append("ratio predicted/published: min %.3f, max %.3f; "
                     "Kendall tau against model size %.2f" % (
                         min(ratios), max(ratios), kendall(sizes, ratios)))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if o.out:
        with open(o.out, "w") as f:
            f.write(text)


main()
