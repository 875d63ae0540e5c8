#!/bin/sh
# tests/bench/gen-series.sh - write a synthetic load.csv for timing
# "dlplan predict": NSERIES nodes x NPOINTS steps of daily-cycle load with
# noise and a few idle (zero) steps, on stdout.
#
#	sh tests/bench/gen-series.sh [NSERIES [NPOINTS [SEED]]] >load.csv
#
# Defaults: 10000 series of 288 points (24 h of 5-minute samples), seed 1.
# The values depend only on the arguments (and the awk in use).

n=${1:-10000}
p=${2:-288}
seed=${3:-1}
awk -v n="$n" -v p="$p" -v seed="$seed" 'BEGIN {
	srand(seed)
	print "node,t,util"
	for (i = 0; i < n; i++) {
		base = 0.1 + 0.6 * rand()
		amp = 0.25 * rand()
		phase = 6.2832 * rand()
		noise = 0.02 + 0.08 * rand()
		idle = rand() < 0.1
		for (t = 0; t < p; t++) {
			u = base + amp * sin(6.2832 * t / p + phase) + \
			    noise * (rand() - 0.5)
			if (idle && rand() < 0.2)
				u = 0
			if (u < 0)
				u = 0
			if (u > 1)
				u = 1
			printf "vm%05d,%d,%.4f\n", i, t, u
		}
	}
}'
