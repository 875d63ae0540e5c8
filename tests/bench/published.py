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
H100 = os.path.join(ROOT, "tests", "cli", "data",
                    "megatron-h100-table.csv")


def kendall(x, y):
    n, s = len(x), 0
    for i in range(n):
        for j in range(i + 1, n):
            d = (x[i] - x[j]) * (y[i] - y[j])
            s += (d > 0) - (d < 0)
    return s / (n * (n - 1) / 2)


def cluster(d, gpus, row="A100-SXM4-80GB,312,80,2400,1600"):
    """DGX nodes: DGX A100 (NVLink 3: 300 GB/s a direction; 8 x 200
    Gb/s HDR) or DGX H100 (NVLink 4: 450 GB/s; 8 x 400 Gb/s NDR)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nodes.csv"), "w") as f:
        f.write("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,"
                "nic_gbps\n")
        for i in range(gpus // 8):
            f.write("dgx-%d,dc,8,%s\n" % (i, row))


def rows_of(path):
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def h100_time(o, tmp, r, mfu, overlap, vp=1):
    """T of one row of Megatron-LM's H100 table, imported as published:
    micro-batch 1, bf16, fused attention, the distributed optimizer,
    DP overlap (--overlap-grad-reduce, --overlap-param-gather)."""
    h, l, tp, pp, gpus, gb = (int(r[k]) for k in (
        "hidden", "layers", "tp", "pp", "gpus", "global_batch"))
    cl = os.path.join(tmp, "h100-%d" % gpus)
    if not os.path.isdir(cl):
        cluster(cl, gpus, "H100-SXM5-80GB,989,80,3600,3200")
    model = os.path.join(tmp, "h100-" + r["model"] + ".csv")
    if not os.path.exists(model):
        subprocess.run([o.dlplan, "model", "gpt", "--layers", str(l),
                        "--hidden", str(h), "--heads", r["heads"],
                        "--seq", "4096", "--vocab", "131072", "--tied",
                        "no", "-o", model], check=True)
    args = ["--tensor-model-parallel-size", str(tp),
            "--pipeline-model-parallel-size", str(pp),
            "--micro-batch-size", "1", "--global-batch-size", str(gb),
            "--num-layers", str(l), "--hidden-size", str(h),
            "--num-attention-heads", r["heads"], "--seq-length", "4096",
            "--max-position-embeddings", "4096", "--vocab-size", "131072",
            "--untie-embeddings-and-output-weights", "--bf16",
            "--use-distributed-optimizer"]
    if overlap:
        args += ["--overlap-grad-reduce", "--overlap-param-gather", "--grad-reduce-in-bf16"]
    if tp > 1:
        args.insert(2, "--sequence-parallel")
        if overlap:
            args.append("--tp-comm-overlap")
    if vp > 1:
        args += ["--num-virtual-stages-per-pipeline-rank", str(vp)]
    p = subprocess.run([o.dlplan, "import", "megatron", "-q", "-c", cl,
                        "-m", model, "--format", "json", "--mfu",
                        repr(mfu), "--"] + args, capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout)["estimate"]["iteration_s"], None


def h100_tflops(r, t):
    """Megatron-LM's count before causal halving (2025-03), which the
    table's figures predate: 72 B s l h^2 (1 + s/6h + V/12lh)."""
    h, l, gb, gpus = (int(r[k]) for k in ("hidden", "layers",
                                          "global_batch", "gpus"))
    s, v = 4096, 131072
    f = 72 * gb * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h))
    return f / t / gpus / 1e12


def h100(o, tmp, lines):
    """The H100 table with one efficiency fitted on its first row
    (bisection on --mfu until that row's prediction equals its figure),
    the others judged."""
    rows = rows_of(H100)
    first = rows[0]
    lo, hi = 0.05, 1.0
    for _ in range(30):
        mid = (lo + hi) / 2
        t, err = h100_time(o, tmp, first, mid, True)
        if t is None:
            lines.append("H100 %s does not import: %s" % (first["model"],
                                                          err))
            return
        if h100_tflops(first, t) < float(first["tflops_per_gpu"]):
            lo = mid
        else:
            hi = mid
    e = (lo + hi) / 2
    lines.append("")
    lines.append("Megatron-LM's H100 table (README at d98e8a64), mfu %.4f "
                 "fitted on the %s row:" % (e, first["model"]))
    lines.append("%-8s %4s %4s %4s %6s %6s %10s %9s %9s %7s" % (
        "model", "tp", "pp", "dp", "gpus", "batch", "T_s", "pred_TF",
        "publ_TF", "ratio"))
    sizes, ratios = [], []
    for i, r in enumerate(rows):
        t, err = h100_time(o, tmp, r, e, True)
        if t is None:
            lines.append("%-8s does not import: %s" % (r["model"], err))
            continue
        pred = h100_tflops(r, t)
        publ = float(r["tflops_per_gpu"])
        if i > 0:
            sizes.append(float(r["gpus"]))
            ratios.append(pred / publ)
        lines.append("%-8s %4s %4s %4s %6s %6s %10.3f %9.1f %9.1f %7.3f" % (
            r["model"], r["tp"], r["pp"], r["dp"], r["gpus"],
            r["global_batch"], t, pred, publ, pred / publ))
    if ratios:
        lines.append("ratio predicted/published (rows not fitted): min "
                     "%.3f, max %.3f; Kendall tau against model size %.2f"
                     % (min(ratios), max(ratios), kendall(sizes, ratios)))
    # The table does not say which rows ran the interleaved schedule.
    # Priced with it, at each number of chunks Megatron accepts for the
    # row (its stages' layers a multiple, micro-batches a multiple of
    # PP), the fastest, as "dlplan plan --runtime megatron" would choose.
    lines.append("")
    lines.append("The same, the rows with a pipeline interleaved (v chunks "
                 "a stage, the fastest v; not published):")
    lines.append("%-8s %4s %4s %4s %10s %9s %9s %7s" % (
        "model", "pp", "v", "m", "T_s", "pred_TF", "publ_TF", "ratio"))
    for i, r in enumerate(rows):
        pp, l = int(r["pp"]), int(r["layers"])
        m = int(r["global_batch"]) // int(r["dp"])
        best = (h100_time(o, tmp, r, e, True)[0], 1)
        for v in range(2, l // pp + 1) if pp > 1 and m % pp == 0 else []:
            if (l // pp) % v or l % pp:
                continue
            t, _ = h100_time(o, tmp, r, e, True, v)
            if t is not None and t < best[0]:
                best = (t, v)
        t, v = best
        if t is None:
            continue
        pred = h100_tflops(r, t)
        publ = float(r["tflops_per_gpu"])
        if i > 0:
            ratios[i - 1] = pred / publ
        lines.append("%-8s %4s %4d %4d %10.3f %9.1f %9.1f %7.3f" % (
            r["model"], r["pp"], v, m, t, pred, publ, pred / publ))
    if ratios:
        lines.append("ratio predicted/published (rows not fitted): min "
                     "%.3f, max %.3f; Kendall tau against model size %.2f"
                     % (min(ratios), max(ratios), kendall(sizes, ratios)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlplan", default=os.path.join(ROOT, "dlplan"))
    ap.add_argument("--mfu", type=float)
    ap.add_argument("--micro-batch", type=int,
                    help="every row's micro-batch (default: the row's, "
                    "from run_table_1.sh)")
    ap.add_argument("--out")
    o = ap.parse_args()
    rows = rows_of(TABLE)
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
                "--micro-batch-size", str(o.micro_batch or r["micro_batch"]),
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
    h100(o, tmp, lines)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if o.out:
        with open(o.out, "w") as f:
            f.write(text)


main()
