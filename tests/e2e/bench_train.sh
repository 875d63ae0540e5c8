#!/bin/sh
# tests/e2e/bench_train.sh - how far dlplan's cost model is from a real run:
# the iteration time "dlplan eval" predicts against the step time
# plans/dlplan_train.py measures on this machine's CPU ranks, for a model
# profiled here with --profile.  Not a test: it prints one table.
#
#	sh tests/e2e/bench_train.sh [OUTDIR]
#
# Environment: DLPLAN (the binary, default ./dlplan), PY (/usr/bin/python3),
# STEPS (12; the first 2 are left out as warm-up), and the model: LAYERS (4),
# HIDDEN (128), HEADS (4), SEQ (64), VOCAB (1024).  Every rank is one CPU
# process with one thread; nodes.csv gives each "GPU" the profile's speed
# (tflops 1, mfu 1) and 20 Gbps inside and between nodes.  Plans with more
# ranks than this machine has cores run oversubscribed: the table says so.

set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$(mktemp -d "${TMPDIR:-/tmp}/dlplan-bench-train.XXXXXX")}
DLPLAN=${DLPLAN:-$SRC/dlplan}
PY=${PY:-/usr/bin/python3}
STEPS=${STEPS:-12}
TRAIN=$SRC/plans/dlplan_train.py
mkdir -p "$OUT/c"

"$PY" "$TRAIN" --profile "$OUT/model.csv" --layers "${LAYERS:-4}" \
    --hidden "${HIDDEN:-128}" --heads "${HEADS:-4}" --seq "${SEQ:-64}" \
    --vocab "${VOCAB:-1024}" --micro-batch 2 --profile-reps 20
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\n' \
    >"$OUT/c/nodes.csv"
for n in n1 n2; do
	printf '%s,lab,2,cpu,1,16,20,20,1\n' "$n" >>"$OUT/c/nodes.csv"
done
L=$(($(grep -c '^[a-z]' "$OUT/model.csv") - 2))	# last layer index
H=$((L / 2))

# plan NAME GROUPS: a plan of global batch 16 in micro-batches of 2.
plan() {
	printf '{"schema": "dlplan.plan/1", "inputs": [{"kind": "nodes", "path": "c/nodes.csv"}, {"kind": "model", "path": "model.csv"}], "options": {"global_batch": 16, "micro_batch": 2}, "groups": [%s]}\n' \
	    "$2" >"$OUT/$1.json"
}
st() {	# st NODE GPUS FIRST LAST
	printf '{"node": "%s", "gpus": [%s], "layers": [%d, %d]}' "$1" "$2" "$3" "$4"
}
plan one "{\"micro_batches\": 8, \"stages\": [$(st n1 0 0 "$L")]}"
plan dp2 "{\"micro_batches\": 4, \"stages\": [$(st n1 0 0 "$L")]}, {\"micro_batches\": 4, \"stages\": [$(st n2 0 0 "$L")]}"
plan pp2 "{\"micro_batches\": 8, \"stages\": [$(st n1 0 0 "$H"), $(st n1 1 $((H + 1)) "$L")]}"
plan tp2 "{\"micro_batches\": 8, \"stages\": [$(st n1 0,1 0 "$L")]}"
plan hyb4 "{\"micro_batches\": 4, \"stages\": [$(st n1 0 0 "$H"), $(st n1 1 $((H + 1)) "$L")]}, {\"micro_batches\": 4, \"stages\": [$(st n2 0,1 0 "$L")]}"

cores=$(nproc)
printf '%-6s %5s %12s %12s %12s %8s  %s\n' plan ranks predicted_s \
    measured_s pipeline_s ratio note
for p in one dp2 pp2 tp2 hyb4; do
	w=$("$PY" -c "import sys; sys.path.insert(0, '$SRC/plans')
import dlplan_plan; print(dlplan_plan.load('$OUT/$p.json').world_size)")
	pred=$("$DLPLAN" eval "$OUT/$p.json" --format json | "$PY" -c \
	    'import json, sys; print(json.load(sys.stdin)["estimate"]["iteration_s"])')
	rm -f "$OUT/$p.csv"
	torchrun --redirects 1 --tee 1 --nnodes 1 --nproc_per_node "$w" \
	    --rdzv_backend c10d --rdzv_endpoint localhost:0 \
	    --monitor_interval 0.2 "$TRAIN" --plan "$OUT/$p.json" \
	    --steps "$STEPS" --log "$OUT/$p.csv" >"$OUT/$p.log" 2>&1
	"$PY" - "$OUT/$p.csv" "$pred" "$p" "$w" "$cores" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = sorted({int(r["step"]) for r in rows})[2:]
step = {}
pipe = {}
for r in rows:
    s = int(r["step"])
    if s in steps:
        step[s] = max(step.get(s, 0), float(r["x_step_seconds"]))
        pipe[s] = max(pipe.get(s, 0), float(r["seconds"]))
m = statistics.median(step.values())
pp = statistics.median(pipe.values())
pred = float(sys.argv[2])
w, cores = int(sys.argv[4]), int(sys.argv[5])
note = "oversubscribed (%d ranks, %d cores)" % (w, cores) if w > cores else ""
print("%-6s %5d %12.5f %12.5f %12.5f %8.2f  %s" % (sys.argv[3], w, pred, m,
                                                   pp, m / pred, note))
EOF
done
echo "# files in $OUT; ratio = measured / predicted (median step, steps 2..)"
