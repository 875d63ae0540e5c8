#!/bin/sh
# tests/bench/predict.sh - how good and how fast "dlplan predict" is.
#
#	sh tests/bench/predict.sh [DLPLAN]
#
# 1. Backtest on the real Google cluster VM CPU traces
#    (../shared/data/google-vm-cpu.csv beside the repository): MAPE and MAE
#    of every predict --method at h = 1 and h = 6, with the forecast's
#    defaults (window 16, 3 states, expect), and the run time; then, with
#    origins every 8 steps, every method per half of the series (the
#    ensemble was fitted on the even ones) with its ratio to the best of
#    last value, window mean and window median.
# 2. Forecast of 10,000 synthetic series x 288 points (written by
#    gen-series.sh into tests/bench/out/, which git ignores): the run time,
#    best of three, against the 0.5 s goal.

set -eu
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
dlplan=${1:-$root/dlplan}
trace=$root/../shared/data/google-vm-cpu.csv
out=$root/tests/bench/out
mkdir -p "$out"

now() {
	date +%s.%N
}

# secs START END
secs() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

if [ -f "$trace" ]; then
	echo "backtest: $trace"
	t0=$(now)
	"$dlplan" predict -H "$trace" --backtest --horizon 6 --format csv \
	    >"$out/backtest.csv"
	t1=$(now)
	awk -F, '$1 == "*" { p[$2] = $4; z[$2] = $4 - $5 }
	    END { printf "  %s series points: %d at h=1, %d at h=6 (%d and %d with actual 0, left out of MAPE)\n",
		"all", p[1], p[6], z[1], z[6] }' "$out/backtest.csv"
	printf '  %-8s %10s %10s %10s %10s\n' method "MAPE h=1" "MAPE h=6" \
	    "MAE h=1" "MAE h=6"
	for m in gmc gm last mean median wmed ensemble auto; do
		awk -F, -v m="$m" '$1 == "*" && $3 == m { mape[$2] = $6; mae[$2] = $7 }
		    END { printf "  %-8s %9.2f%% %9.2f%% %10.4f %10.4f\n", m,
			100 * mape[1], 100 * mape[6], mae[1], mae[6] }' \
		    "$out/backtest.csv"
	done
	echo "  time: $(secs "$t0" "$t1") s (400 series x 288 points, h = 1..6, every origin, 8 methods)"
	# The ensemble's check: origins every 8 steps, the ensemble's fit half
	# (even series) and the held-out half (odd) apart.
	echo "backtest, origins every 8 steps, by half (ratios: to the best of last, mean, median):"
	"$dlplan" predict -H "$trace" --backtest --horizon 6 --every 8 \
	    --format csv >"$out/backtest-every8.csv"
	awk -v H=6 -f "$root/tests/bench/backtest-halves.awk" \
	    "$out/backtest-every8.csv" | sed 's/^/  /'
else
	echo "backtest: skipped, no $trace (the Google VM CPU traces are not" \
	    "in the repository but beside it, in ../shared/data)"
fi

series=$out/series-10000x288.csv
[ -f "$series" ] || sh "$root/tests/bench/gen-series.sh" 10000 288 1 >"$series"
best=""
for i in 1 2 3; do
	t0=$(now)
	"$dlplan" predict -H "$series" --format csv >/dev/null
	t1=$(now)
	s=$(secs "$t0" "$t1")
	best=$(awk -v a="$s" -v b="${best:-$s}" 'BEGIN { print (a < b ? a : b) }')
done
echo "forecast: 10000 series x 288 points ($(wc -c <"$series") bytes): best of 3 $best s (goal < 0.5 s)"
