#!/usr/bin/python3
"""Write a synthetic JOBS.csv for "dlplan schedule" benchmarks.

usage: gen-jobs.py NJOBS [--seed S] [--gap SECONDS | --load L [--gpus G]]

Poisson arrivals (mean gap --gap, default 60 s; or the gap that offers
the load --load L to a cluster of --gpus G GPUs, default 64: mean work
per job over G times L, the work being iterations times the one-GPU
iteration time averaged over philly-64's V100 and P100 halves, measured
with "dlplan schedule --policy fifo" on one GPU: resnet50 0.1256 s and
0.8397 s, bert-large 0.7067 s and 4.7241 s; perfect scaling assumed, so
the busy fraction a policy reaches differs); the GPU request follows
the Philly mix (mostly 1-8 GPUs, a few 16-64): 1 (40%), 2 (10%), 4 (20%),
8 (20%), 16 (6%), 32 (3%), 64 (1%); models resnet50 (batch 256) and
bert-large (batch 32, so at most 8 replicas) half each; iterations
log-uniform in [2000, 200000].  Deterministic for a seed.

The load is offered while jobs arrive (seed 1 at --load 0.9: the jobs'
one-GPU seconds are 1.02 times the GPUs over the arrival window); the
long jobs that run on after the last arrival keep a schedule's
utilisation over its whole makespan far lower (tests/bench/sched-sweep.py
measures how busy fifo keeps the cluster while jobs arrive).
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


def main():
    args = sys.argv[1:]
    seed = take(args, "--seed", int, 1)
    gap = take(args, "--gap", float, 60.0)
    gpus = take(args, "--gpus", int, 64)
    load = take(args, "--load", float, None)
    if load is not None:
        if not load > 0 or gpus < 1:
            sys.exit("gen-jobs: --load must be > 0 and --gpus >= 1")
        # one-GPU seconds per iteration, mean of the V100 and P100 halves
        t1 = 0.5 * ((0.1256 + 0.8397) / 2 + (0.7067 + 4.7241) / 2)
        mean_iters = (200000 - 2000) / math.log(200000 / 2000)
        gap = mean_iters * t1 / (load * gpus)
    n = int(args[0])
    rnd = random.Random(seed)
    sizes = [(1, .40), (2, .10), (4, .20), (8, .20), (16, .06), (32, .03),
             (64, .01)]
    print("job,arrival_s,model,global_batch,micro_batch,iterations,"
          "min_gpus,max_gpus,weight")
    t = 0.0
    for j in range(n):
        r, g = rnd.random(), 1
        for size, p in sizes:
            if r < p:
                g = size
                break
            r -= p
        if rnd.random() < 0.5:
            model, gb, mb = "resnet50", 256, 4
        else:
            model, gb, mb, g = "bert-large", 32, 4, min(g, 8)
        iters = int(math.exp(rnd.uniform(math.log(2000), math.log(200000))))
        print("s%05d,%.3f,%s,%d,%d,%d,1,%d,1" % (j + 1, t, model, gb, mb,
                                               iters, g))
        t += rnd.expovariate(1 / gap)


if __name__ == "__main__":
    main()
