#!/usr/bin/env python3
"""Convert a Gavel job trace (stanford-futuredata/gavel, MIT licence) to a
dlplan JOBS.csv (see dlplan-formats(5) and datasets/README.md).

Input: one job per line, 7 tab-separated fields, the format of Gavel's
scheduler/traces/msr/seed=*/ *.trace files (jobs sampled from the Philly
trace's distribution): job type ("ResNet-50 (batch size 128)"), command,
steps argument, needs-data-dir flag, total steps, arrival time in
seconds, scale factor (GPUs requested).

Output rows: job,arrival_s,model,global_batch,micro_batch,iterations,
min_gpus,max_gpus,weight and x_type (the Gavel job type, ignored by
dlplan).  The conversion, deterministic:
  - the first --count jobs in file order (Gavel's traces are sorted);
  - arrival_s = Gavel arrival / --compress (the bundled trace packs 16
    times more arrivals into the same time, so that jobs meet);
  - model: dlplan has no ResNet-18, CycleGAN, A3C or recommendation
    preset; convolutional and other non-language jobs (ResNet-18,
    ResNet-50, CycleGAN, A3C, Recommendation) become the resnet50 preset,
    language jobs (Transformer, LM) the bert-large preset;
  - global_batch: the batch size in the job type (resnet50: capped at
    256; bert-large: 32, a memory-safe BERT-large batch); micro_batch 4
    when it divides the batch, else 1;
  - iterations = ceil(total steps / --step-div): Gavel's step counts are
    for its own per-GPU batches and run for days; dividing keeps the
    relative job sizes and brings the trace to hours;
  - max_gpus = the scale factor, min_gpus 1 (the jobs are elastic, as
    GADGET assumes), weight 1.
"""
import argparse
import math
import re
import sys


def convert(lines, count, compress, step_div):
    out = ["job,arrival_s,model,global_batch,micro_batch,iterations,"
           "min_gpus,max_gpus,weight,x_type"]
    for i, line in enumerate(lines[:count]):
        f = line.rstrip("\n").split("\t")
        if len(f) != 7:
            sys.exit("line %d: expected 7 tab-separated fields" % (i + 1))
        jtype, steps, arrival, scale = f[0], int(f[4]), float(f[5]), int(f[6])
        m = re.match(r"(.*) \(batch size (\d+)\)", jtype)
        kind, batch = (m.group(1), int(m.group(2))) if m else (jtype, 32)
        if kind in ("Transformer", "LM"):
            model, gb = "bert-large", 32
        else:
            model, gb = "resnet50", min(batch, 256)
        mb = 4 if gb % 4 == 0 else 1
        iters = max(1, math.ceil(steps / step_div))
        out.append("j%04d,%s,%s,%d,%d,%d,1,%d,1,%s" % (
            i + 1, repr(round(arrival / compress, 3)), model, gb, mb, iters,
            scale, kind))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--count", type=int, default=120)
    ap.add_argument("--compress", type=float, default=16)
    ap.add_argument("--step-div", type=float, default=1000)
    a = ap.parse_args()
    with open(a.trace) as fp:
        lines = [l for l in fp if l.strip()]
    sys.stdout.write("# dlplan jobs: the first %d jobs of Gavel's %s, "
                     "converted by datasets/jobs/gavel2jobs.py\n"
                     "# (--compress %g --step-div %g); source and rules: "
                     "datasets/README.md\n" % (a.count, a.trace.split("/")[-1],
                                               a.compress, a.step_div))
    sys.stdout.write("\n".join(convert(lines, a.count, a.compress,
                                       a.step_div)) + "\n")


if __name__ == "__main__":
    main()
