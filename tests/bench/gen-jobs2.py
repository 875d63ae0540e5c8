#!/usr/bin/python3
"""A second JOBS.csv generator for "dlplan schedule", unlike gen-jobs.py.

usage: gen-jobs2.py NJOBS [--seed S] [--llm F] [--gpus G] [--gap SECONDS]

Durations are heavy-tailed: lognormal, with a median of 20 minutes for
the small data-parallel jobs (resnet50 or bert-large) and 6 hours for
the LLM jobs, sigma 1.5, turned into iterations with a rough iteration
time per model (resnet50 0.2 s, bert-large 0.5 s, llama2-7b 10 s,
llama2-13b 15 s, llama2-70b 60 s; the schedule's own times differ, so
the durations are only their shape).  Arrivals follow a daily cycle (a
Poisson rate of mean 1 / --gap, default 600 s, swinging 60 % around its
mean over 24 h), and 15 % of them are bursts of 2 to 8 copies of one
job within a minute.  A fraction --llm (default 0.1) of the jobs are
llama2-7b, -13b or -70b at micro-batch 1, which need pipeline or tensor
parallelism, with max_gpus G (--gpus, default 64: the cluster's); a
fifth of those ask for the whole cluster (min_gpus = max_gpus = G).  The others request 1 to 32 GPUs in a
Philly-like mix: 1 (45 %), 2 (10 %), 4 (20 %), 8 (17 %), 16 (5 %),
32 (3 %).  Deterministic for a seed.
"""
import math
import random
import sys


def take(args, name, conv, default):
    """Remove "NAME VALUE" from args; the value converted, or default."""
    if name not in args:
        return default
    i = args.index(name)
    value = conv(args[i + 1])
    del args[i:i + 2]
    return value


SMALL = [("resnet50", 256, 32, 0.2), ("bert-large", 32, 4, 0.5)]
LLM = [("llama2-7b", 64, 1, 10.0), ("llama2-13b", 64, 1, 15.0),
       ("llama2-70b", 64, 1, 60.0)]
SIZES = [(1, .45), (2, .10), (4, .20), (8, .17), (16, .05), (32, .03)]


def pick(rng, table):
    x, acc = rng.random(), 0.0
    for v, p in table:
        acc += p
        if x < acc:
            return v
    return table[-1][0]


def one(rng, llm, gpus):
    """(model, global_batch, micro_batch, iterations, min, max)"""
    if rng.random() < llm:
        m, gb, mb, t = rng.choice(LLM)
        dur = 6 * 3600 * math.exp(rng.gauss(0, 1.5))
        # min_gpus is raised to what a plan needs; max_gpus is capped.
        lo, hi = (gpus, gpus) if rng.random() < 0.2 else (1, gpus)
    else:
        m, gb, mb, t = rng.choice(SMALL)
        dur = 20 * 60 * math.exp(rng.gauss(0, 1.5))
        lo, hi = 1, pick(rng, SIZES)
    return m, gb, mb, max(10, round(dur / t)), lo, hi


def main():
    args = sys.argv[1:]
    seed = take(args, "--seed", int, 1)
    llm = take(args, "--llm", float, 0.1)
    gpus = take(args, "--gpus", int, 64)
    gap = take(args, "--gap", float, 600.0)
    if len(args) != 1:
        sys.exit(__doc__)
    n = int(args[0])
    rng = random.Random(seed)
    t = 0.0
    rows = []
    while len(rows) < n:
        # Thinning: the daily cycle's rate is at most 1.6 / gap.
        t += rng.expovariate(1.6 / gap)
        if rng.random() > (1 + 0.6 * math.sin(2 * math.pi * t / 86400)) / 1.6:
            continue
        job = one(rng, llm, gpus)
        copies = rng.randint(2, 8) if rng.random() < 0.15 else 1
        for _ in range(min(copies, n - len(rows))):
            rows.append((t + rng.uniform(0, 60),) + job)
    rows.sort()
    print("job,arrival_s,model,global_batch,micro_batch,iterations,"
          "min_gpus,max_gpus,weight")
    for i, (a, m, gb, mb, it, lo, hi) in enumerate(rows):
        print("h%05d,%.3f,%s,%d,%d,%d,%d,%d,1" % (i + 1, a, m, gb, mb, it,
                                                lo, hi))


if __name__ == "__main__":
    main()
