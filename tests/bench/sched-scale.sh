#!/bin/sh
# tests/bench/sched-scale.sh - "dlplan schedule" on many jobs, with and
# without -o: the wall time, CPU time and peak RSS of one run each.
#
#	sh tests/bench/sched-scale.sh DLPLAN OUTDIR [NJOBS]
#
# NJOBS (default 100000, BENCH_SCHED_JOBS in run.sh) jobs from
# gen-jobs.py (--seed 1 --load 0.9) on philly-64, all five policies,
# gadget's schedule written.  The output directory (OUTDIR/sched-out)
# is removed before the run with -o, so every file is new.  One line per
# run on stdout, which report.py reads:
#
#	schedule NJOBS jobs MODE: wall W s, user U s, system S s, max RSS R KB[, F plan files, B MB written]
#
# MODE is "-o" or "no -o".  /usr/bin/time (GNU time) gives the figures;
# without it the script says so and exits 1.

set -eu
LC_ALL=C
export LC_ALL
root=$(cd "$(dirname "$0")/../.." && pwd)
dlplan=$1
out=$2
n=${3:-100000}
timer=/usr/bin/time
[ -x "$timer" ] || { echo "sched-scale: no /usr/bin/time" >&2; exit 1; }
jobs=$out/jobs-$n.csv
[ -s "$jobs" ] ||
    python3 "$root/tests/bench/gen-jobs.py" "$n" --seed 1 --load 0.9 >"$jobs"
cl=$root/datasets/clusters/philly-64

# run MODE ARGS...: one timed run, its line on stdout.
run() {
	_mode=$1
	shift
	$timer -f '%e %U %S %M' -o "$out/sched-time.txt" "$dlplan" schedule \
	    -c "$cl" --jobs "$jobs" -q "$@" >/dev/null
	set -- $(tail -n 1 "$out/sched-time.txt")
	printf 'schedule %s jobs %s: wall %s s, user %s s, system %s s, max RSS %s KB' \
	    "$n" "$_mode" "$1" "$2" "$3" "$4"
}

run "no -o"
echo
rm -rf "$out/sched-out"
run "-o" -o "$out/sched-out"
printf ', %s plan files, %s MB written\n' \
    "$(ls "$out/sched-out/plans" | wc -l | tr -d ' ')" \
    "$(du -sm "$out/sched-out" | cut -f 1)"
rm -rf "$out/sched-out" "$out/sched-time.txt"
