#!/usr/bin/python3
"""Write a synthetic JOBS.csv for "dlplan schedule" benchmarks.

usage: gen-jobs.py NJOBS [--seed S] [--gap SECONDS]

Poisson arrivals (mean gap --gap, default 60 s); the GPU request follows
the Philly mix (mostly 1-8 GPUs, a few 16-64): 1 (40%), 2 (10%), 4 (20%),
8 (20%), 16 (6%), 32 (3%), 64 (1%); models resnet50 (batch 256) and
bert-large (batch 32, so at most 8 replicas) half each; iterations
log-uniform in [2000, 200000].  Deterministic for a seed.
"""
import math
import random
import sys


def main():
    args = sys.argv[1:]
    seed, gap = 1, 60.0
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    if "--gap" in args:
        i = args.index("--gap")
        gap = float(args[i + 1])
        del args[i:i + 2]
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
