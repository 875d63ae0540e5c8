#!/bin/sh
# tests/e2e/overlap_trace.sh - the reference executor's --trace timelines
# on CPU (2 ranks) against dlplan's makespan model, with the data-parallel
# sync after the pipeline (options.overlap none) and bucket by bucket
# under the last backward (dp).  Not a test: it prints one block per run
# (tests/e2e/trace_check.py explains the lines) and a table of measured /
# model per run.
#
#	sh tests/e2e/overlap_trace.sh [OUTDIR]
#
# Runs plans/dlplan_train.py (gloo, one thread per rank) on two ranks:
#   pp2   one group of two stages: no sync, so none and dp price alike
#   dp2   two groups of one stage each, the whole model on each rank
# on a GPT of LAYERS (4) blocks of HIDDEN (256), sequence 32, vocabulary
# 512, micro-batches of 2, MB (2) per group, with each of RATES ("none
# 100mbit"): the ranks' loopback at full speed (the sync is short
# against the last backward and hides but for its last bucket) or, in a
# network namespace of their own, limited by a token bucket to that rate
# (the sync takes longer than the last backward and mostly shows).  The
# model (3.4 million parameters) fills one bucket of Megatron-LM's 40
# million elements, as dlplan counts n_u; every overlapped dp2 run is
# made again with buckets of BUCKET (1,000,000) elements
# (tests/e2e/bucket_run.py), so that the sync has four: ranks of 40
# million parameters train too slowly for this check on a CPU.  Needs
# torchrun, and root, ip(8) and tc(8) for a slowed link.  Environment:
# DLPLAN, PY, STEPS (6, the first left out), LAYERS, HIDDEN, MB, BUCKET,
# RATES.

set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/dlplan-overlap-trace.XXXXXX")}
PY=${PY:-/usr/bin/python3}
DLPLAN=${DLPLAN:-$SRC/dlplan}
STEPS=${STEPS:-6}
MB=${MB:-2}
BUCKET=${BUCKET:-1000000}
RATES=${RATES:-none 100mbit}
TRAIN=$SRC/plans/dlplan_train.py
NS=dlplan-ovl-$$
mkdir -p "$OUT"
cd "$OUT"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\n' \
    >nodes.csv
printf 'n1,lab,2,cpu,1,16,20,20,1\n' >>nodes.csv
"$DLPLAN" model gpt --layers "${LAYERS:-4}" --hidden "${HIDDEN:-256}" \
    --heads 4 --vocab 512 --seq 32 --tied no -o model.csv
L=$(($(grep -c '^[a-z]' model.csv) - 2))	# the head's layer index

plan() {	# plan NAME OVERLAP GROUPS
	_g=$(printf '%s' "$3" | grep -o micro_batches | wc -l)
	printf '{"schema": "dlplan.plan/1", "inputs": [{"kind": "nodes", "path": "nodes.csv", "sha256": "%s"}, {"kind": "model", "path": "model.csv", "sha256": "%s"}], "options": {"global_batch": %d, "micro_batch": 2, "overlap": "%s"}, "groups": [%s]}\n' \
	    "$(sha256sum nodes.csv | cut -d' ' -f1)" \
	    "$(sha256sum model.csv | cut -d' ' -f1)" $((2 * MB * _g)) \
	    "$2" "$3" >"$1.json"
	"$DLPLAN" eval "$1.json" >"$1.eval" ||
	    { echo "dlplan eval refuses $1.json" >&2; exit 1; }
}
st() {	# st GPU FIRST LAST
	printf '{"node": "n1", "gpus": [%d], "layers": [%d, %d]}' "$1" "$2" "$3"
}
grp() {	# grp STAGES
	printf '{"micro_batches": %d, "stages": [%s]}' "$MB" "$1"
}
for ov in none dp; do
	plan "pp2-$ov" $ov "$(grp "$(st 0 0 2), $(st 1 3 $L)")"
	plan "dp2-$ov" $ov "$(grp "$(st 0 0 $L)"), $(grp "$(st 1 0 $L)")"
done

# The buckets dlplan counts: n_u = ceil(P_u / max(4e7, 1e6 G)).
nu=$("$PY" -c 'import csv, math, sys
p = sum(float(r["params_m"]) for r in csv.DictReader(
    l for l in open(sys.argv[1]) if not l.startswith("#"))) * 1e6
print("%d (%.0f parameters)" % (math.ceil(p / 4e7), p))' model.csv)
echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg);" \
    "dlplan's n_u for dp2: $nu"

run_in=
cleanup() { ip netns del "$NS" 2>/dev/null || :; }
trap cleanup EXIT INT TERM
run() {	# run NAME PLAN OVERLAP [BUCKET]
	rm -f "$1.trace.csv"
	if [ $# -gt 3 ]; then
		set -- "$1" "$2" "$3" "$SRC/tests/e2e/bucket_run.py" "$4"
	else
		set -- "$1" "$2" "$3" "$TRAIN"
	fi
	_n=$1 _p=$2 _o=$3
	shift 3
	PYTHONPATH=$SRC/plans $run_in torchrun --redirects 1 --tee 1 \
	    --nnodes 1 --nproc_per_node 2 --rdzv_backend c10d \
	    --rdzv_endpoint localhost:0 --monitor_interval 0.2 "$@" \
	    --plan "$_p.json" --steps "$STEPS" --trace "$_n.trace.csv" \
	    >"$_n.log" 2>&1 || { echo "$_n failed: $OUT/$_n.log" >&2; exit 1; }
	echo "== $_n"
	"$PY" "$SRC/tests/e2e/trace_check.py" "$_n.trace.csv" 1 "$_o" |
	    tee "$_n.check"
}
for rate in $RATES; do
	cleanup
	run_in=
	if [ "$rate" != none ]; then
		ip netns add "$NS"
		ip -n "$NS" link set lo mtu 1500 up
		ip netns exec "$NS" tc qdisc add dev lo root tbf rate "$rate" \
		    burst 256kbit latency 5s
		run_in="ip netns exec $NS"
	fi
	for ov in none dp; do
		run "pp2-$ov-$rate" "pp2-$ov" $ov
		run "dp2-$ov-$rate" "dp2-$ov" $ov
	done
	run "dp2-dp-$rate-b$BUCKET" dp2-dp dp "$BUCKET"
done

echo "# measured / model: run, buckets, measured s, model s, ratio;" \
    "exposed sync measured, modelled (dp2); the replay with each pass's" \
    "own time, ratio (pp2)"
for f in *.check; do
	"$PY" -c 'import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"^sync  measured step (\S+) s.*? \w+\* (\S+) \((\S+)\)", t,
              re.M)
n = re.search(r"in (\S+) bucket.*measured (\S+) s, modelled \(\w+\) (\S+) s",
              t)
o = None
if m is None:
    m = re.search(r"^group 0 .*measured (\S+) s.* recv (\S+) \((\S+)\)", t,
                  re.M)
    o = re.search(r"^group 0  recv with each .*: (\S+) \((\S+)\)", t, re.M)
print("%-26s %-3s %8s %8s %s  %s" % (
    sys.argv[1][:-6], n.group(1) if n else "-", m.group(1), m.group(2),
    m.group(3), "%s %s" % (n.group(2), n.group(3)) if n else
    "%s %s" % (o.group(1), o.group(2)) if o else ""))' "$f"
done
echo "# files in $OUT"
