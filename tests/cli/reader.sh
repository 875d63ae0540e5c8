# plans/dlplan_plan.py, the reader training scripts import: a rank's
# assignment, pipeline peers and data-parallel rings on hand-written plans
# (golden JSON), agreement with plan.csv on a plan from the planner, and
# its errors.

PY=${PYTHON:-python3}
READER=$SRCDIR/plans/dlplan_plan.py
if ! "$PY" -c 'import json, sys; sys.exit(sys.version_info < (3, 6))' \
    2>/dev/null; then
	skip "reader" "no python3 (3.6 or newer)"
	return 0 2>/dev/null || exit 0
fi

# Two groups with different stage boundaries: segments 0-1, 2, 3.
expect_run "rank 0 of e2e-plan" 0 reader-e2e-0.json - -- \
    "$PY" "$READER" "$DATA/e2e-plan.json" 0
expect_run "rank 5 of e2e-plan" 0 reader-e2e-5.json - -- \
    "$PY" "$READER" "$DATA/e2e-plan.json" 5
# TP 2 feeding TP 1 and back: peers wrap by TP rank.
expect_run "rank 4 of e2e-plan-uneven" 0 reader-uneven-4.json - -- \
    "$PY" "$READER" "$DATA/e2e-plan-uneven.json" 4
expect_run "rank from DLPLAN_PLAN and DLPLAN_RANK" 0 reader-e2e-5.json - -- \
    env DLPLAN_PLAN="$DATA/e2e-plan.json" DLPLAN_RANK=5 RANK=0 \
    "$PY" -c "import sys, json; sys.path.insert(0, '$SRCDIR/plans');
import dlplan_plan; json.dump(dlplan_plan.assignment().as_dict(), sys.stdout, indent=2); print()"
expect_run "rank from RANK" 0 reader-e2e-5.json - -- \
    env -u DLPLAN_RANK DLPLAN_PLAN="$DATA/e2e-plan.json" RANK=5 \
    "$PY" -c "import sys, json; sys.path.insert(0, '$SRCDIR/plans');
import dlplan_plan; json.dump(dlplan_plan.assignment().as_dict(), sys.stdout, indent=2); print()"

# The plan's ring order wins over group order.
sed 's/^  "groups": \[/  "rings": [{"layers": [3, 3], "members": [{"group": 1, "stage": 1}, {"group": 0, "stage": 1}]}],\n  "groups": [/' \
    "$DATA/e2e-plan.json" >"$TMP/rings.json"
"$PY" "$READER" "$TMP/rings.json" 2 >"$TMP/r2.json"
check "ring of layer 3 listed as the plan orders it" "$PY" -c "
import json, sys
d = json.load(open('$TMP/r2.json'))
rings = {tuple(r['layers']): r['ranks'] for r in d['dp_rings']}
sys.exit(rings != {(2, 2): [2, 4], (3, 3): [6, 2]})"

# A plan from the planner: every rank as plan.csv has it.
mkdir -p "$TMP/p"
cp -R "$DATA/e2e-cluster" "$DATA/e2e-model.csv" "$TMP/p/"
(cd "$TMP/p" && dlplan plan -c e2e-cluster -m e2e-model.csv \
    --global-batch 16 -o out) >/dev/null 2>&1
"$PY" - "$TMP/p/out/plan.json" "$TMP/p/out/plan.csv" >"$TMP/pc.txt" 2>&1 <<PYEOF
import csv, sys
sys.path.insert(0, "$SRCDIR/plans")
import dlplan_plan
plan = dlplan_plan.load(sys.argv[1])
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == plan.world_size, (len(rows), plan.world_size)
for row in rows:
    a = plan.rank(int(row["rank"]))
    got = (a.node, a.gpu, a.group, a.stage, a.first, a.last,
           a.micro_batches, a.tp_share)
    want = (row["node"], int(row["local_gpu"]), int(row["group"]),
            int(row["stage"]), int(row["first_layer"]),
            int(row["last_layer"]), int(row["micro_batches"]),
            float(row["tp_share"]))
    assert got == want, (row["rank"], got, want)
print("ok", plan.world_size)
PYEOF
check "planner's plan: every rank as in plan.csv" grep -q '^ok ' "$TMP/pc.txt"

# Errors: exit 2 and one line.
expect_err "no DLPLAN_PLAN" 1 "dlplan_plan: DLPLAN_PLAN is not set (start the script through dlplan's launch files, or pass path)" -- \
    env -u DLPLAN_PLAN "$PY" -c "import sys; sys.path.insert(0, '$SRCDIR/plans')
import dlplan_plan
try:
    dlplan_plan.assignment()
except dlplan_plan.PlanError as e:
    sys.exit('dlplan_plan: %s' % e)"
expect_err "rank out of range" 2 \
    "dlplan_plan: rank 8 is not in the plan (world size 8)" -- \
    "$PY" "$READER" "$DATA/e2e-plan.json" 8
expect_err "missing plan" 2 \
    "dlplan_plan: $TMP/none.json: No such file or directory" -- \
    "$PY" "$READER" "$TMP/none.json" 0
printf '{"schema": "other"}\n' >"$TMP/other.json"
expect_err "not a plan" 2 \
    "dlplan_plan: $TMP/other.json: not a dlplan plan (expected \"schema\": \"dlplan.plan/1\")" -- \
    "$PY" "$READER" "$TMP/other.json" 0
expect_err "usage" 1 "usage: dlplan_plan.py PLAN.json [RANK]" -- \
    "$PY" "$READER"
