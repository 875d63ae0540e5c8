#!/bin/sh
# tests/bench/route.sh - how fast "dlplan route" is on a large network.
#
#	sh tests/bench/route.sh [DLPLAN]
#
# gen-route.py writes a 1,000-vertex cluster (8 sites of fat trees, a WAN
# mesh, 96 steps of traffic on 1,384 directed links) and flow lists of
# 250, 500, 1,000 and 2,000 flows into tests/bench/out/route/ (git
# ignores it).  Each list is routed with K = 3 (the default), csv output;
# the time is the best of three whole runs (loading the cluster and its
# 3.9 MB traffic.csv included), against the goal of 1 s for 1,000 flows.
# The -v counters show the work: one MDP solve per flow (every flow
# commits, so no solve can be shared) and the value-iteration sweeps.

set -eu
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
dlplan=${1:-$root/dlplan}
out=$root/tests/bench/out/route
mkdir -p "$out"

now() {
	date +%s.%N
}

# secs START END
secs() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

[ -f "$out/flows-2000.csv" ] || python3 "$root/tests/bench/gen-route.py" "$out"
"$dlplan" check -c "$out" | sed -n 's/^network */network: /p'

t0=$(now)
"$dlplan" route -c "$out" --regimes >/dev/null
t1=$(now)
echo "load cluster and build the regime model: $(secs "$t0" "$t1") s"

for n in 250 500 1000 2000; do
	best=""
	for i in 1 2 3; do
		t0=$(now)
		"$dlplan" route -c "$out" --flows "$out/flows-$n.csv" \
		    --format csv -v >"$out/routes-$n.csv" 2>"$out/stats-$n.txt"
		t1=$(now)
		s=$(secs "$t0" "$t1")
		best=$(awk -v a="$s" -v b="${best:-$s}" \
		    'BEGIN { print (a < b ? a : b) }')
	done
	goal=""
	[ "$n" = 1000 ] && goal=" (goal <= 1 s)"
	printf '%5d flows: best of 3 %s s%s; %s\n' "$n" "$best" "$goal" \
	    "$(sed 's/^dlplan: //' "$out/stats-$n.txt")"
done
