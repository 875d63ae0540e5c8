#!/bin/sh
# tests/e2e/pipe_trace.sh - measure how a real 1F1B run waits on its
# transfers, and which pipeline model predicts it.  Not a test: it prints
# one block per plan (tests/e2e/trace_check.py explains the columns).
#
#	sh tests/e2e/pipe_trace.sh [OUTDIR]
#
# Runs plans/dlplan_train.py (gloo on CPU, one thread per rank) with
# --trace on two uneven pipelines: two stages (the embedding and one
# block | three blocks and the head) and three stages, 8 micro-batches of
# 4 samples.  The activations cross a slowed link: the ranks run in a
# network namespace of their own whose loopback is limited by a token
# bucket to RATE (default 50mbit; "none" leaves it at full speed), so a
# transfer takes about as long as a stage computes.  Needs root, ip(8) and
# tc(8) for the slowed link, and torchrun.  Environment: DLPLAN, PY,
# STEPS (6, the first left out), LAYERS (4), HIDDEN (128), HEADS (4),
# SEQ (128), RATE.

set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/dlplan-pipe-trace.XXXXXX")}
PY=${PY:-/usr/bin/python3}
STEPS=${STEPS:-6}
RATE=${RATE:-50mbit}
TRAIN=$SRC/plans/dlplan_train.py
NS=dlplan-trace-$$
mkdir -p "$OUT"

"$PY" "$TRAIN" --profile "$OUT/model.csv" --layers "${LAYERS:-4}" \
    --hidden "${HIDDEN:-128}" --heads "${HEADS:-4}" --seq "${SEQ:-128}" \
    --vocab 512 --micro-batch 4 --profile-reps 5 >/dev/null
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\n' \
    >"$OUT/nodes.csv"
printf 'n1,lab,3,cpu,1,16,20,20,1\n' >>"$OUT/nodes.csv"
L=$(($(grep -c '^[a-z]' "$OUT/model.csv") - 2))	# last layer index

# The inputs carry their digests: the executor reads a plan's model.csv
# only when its bytes have them (dlplan-formats(5), inputs).
plan() {	# plan NAME STAGES
	printf '{"schema": "dlplan.plan/1", "inputs": [{"kind": "nodes", "path": "nodes.csv", "sha256": "%s"}, {"kind": "model", "path": "model.csv", "sha256": "%s"}], "options": {"global_batch": 32, "micro_batch": 4}, "groups": [{"micro_batches": 8, "stages": [%s]}]}\n' \
	    "$(sha256sum "$OUT/nodes.csv" | cut -d' ' -f1)" \
	    "$(sha256sum "$OUT/model.csv" | cut -d' ' -f1)" "$2" >"$OUT/$1.json"
}
st() {	# st GPU FIRST LAST
	printf '{"node": "n1", "gpus": [%d], "layers": [%d, %d]}' "$1" "$2" "$3"
}
plan pp2 "$(st 0 0 1), $(st 1 2 "$L")"
plan pp3 "$(st 0 0 1), $(st 1 2 3), $(st 2 4 "$L")"

cleanup() { ip netns del "$NS" 2>/dev/null || :; }
run_in=""
if [ "$RATE" != none ]; then
	trap cleanup EXIT INT TERM
	ip netns add "$NS"
	ip -n "$NS" link set lo mtu 1500 up
	ip netns exec "$NS" tc qdisc add dev lo root tbf rate "$RATE" \
	    burst 256kbit latency 5s
	run_in="ip netns exec $NS"
fi
echo "# load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); link: $RATE"
for p in pp2 pp3; do
	w=$(grep -o '"gpus"' "$OUT/$p.json" | wc -l)
	rm -f "$OUT/$p.trace.csv"
	$run_in torchrun --redirects 1 --tee 1 --nnodes 1 --nproc_per_node "$w" \
	    --rdzv_backend c10d --rdzv_endpoint localhost:0 \
	    --monitor_interval 0.2 "$TRAIN" --plan "$OUT/$p.json" \
	    --steps "$STEPS" --trace "$OUT/$p.trace.csv" >"$OUT/$p.log" 2>&1
	echo "== $p ($w ranks)"
	"$PY" "$SRC/tests/e2e/trace_check.py" "$OUT/$p.trace.csv" 1
done
echo "# files in $OUT"
