# plans/dlplan_train.py --profile-cluster: the machine profile parses back
# as a cluster and a model (dlplan plan and dlplan eval read the files as
# written), and the plan dlplan makes from it runs exactly: its parameters
# after 2 steps equal those of --reference within 1e-9 relative.  Not
# timed: only that the numbers are there, in range, and usable.  Two
# nodes of one rank each, so the profile also writes links.csv.
#
# Needs /usr/bin/python3 with torch and torchrun; skipped under
# DLPLAN_WRAP=valgrind (it runs Python, not dlplan).
# tests/run: serial
# (torch ranks with a c10d rendezvous port; not beside e2e_slurm or train.)

CA_PY=/usr/bin/python3
TRAIN=$SRCDIR/plans/dlplan_train.py
if no_torch_ranks "calibrate"; then
	return 0 2>/dev/null || exit 0
fi

C=$TMP/cal
MODEL="--layers 4 --hidden 16 --heads 2 --seq 8 --vocab 32"
# shellcheck disable=SC2086
check "--profile-cluster writes a cluster" "$CA_PY" "$TRAIN" \
    --profile-cluster "$C" $MODEL --micro-batch 1 --dtype float64 \
    --profile-reps 3 --profile-ranks 2 --profile-nodes 2
for f in nodes.csv links.csv model.csv comm.csv; do
	check "profile wrote $f" test -s "$C/$f"
done
# Every measured number is a positive finite one, for every kind.
check "comm.csv: p2p, 2-member all-reduce and optimizer times, all > 0" "$CA_PY" -c '
import csv, math, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if l[0] != "#"))
kinds = {(r["kind"], r["members"]) for r in rows}
assert kinds == {("p2p", "2"), ("allreduce", "2"), ("optimizer", "1")}, kinds
for r in rows:
    t = float(r["seconds"])
    assert math.isfinite(t) and t > 0 and int(r["bytes"]) > 0, r
' "$C/comm.csv"
check "model.csv carries the architecture line" grep -q \
    '^# dlplan model gpt --layers 4 --hidden 16 --heads 2' "$C/model.csv"

dlplan plan -c "$C" -m "$C/model.csv" --global-batch 6 --micro-batch 1 \
    --param-bytes 8 --grad-bytes 8 -o "$TMP/p" >"$TMP/plan.out" 2>&1
_rc=$?
if [ "$_rc" -eq 0 ] && [ -s "$TMP/p/plan.json" ]; then
	t_ok "dlplan plan reads the profile"
else
	t_notok "dlplan plan reads the profile" "exit $_rc" \
	    "$(head -5 "$TMP/plan.out")"
fi
check "dlplan eval reads the plan" dlplan eval "$TMP/p/plan.json"
W=$("$CA_PY" "$SRCDIR/plans/dlplan_plan.py" "$TMP/p/plan.json" 0 |
    "$CA_PY" -c 'import json, sys; print(json.load(sys.stdin)["world_size"])')
OPTS="--dtype float64 --steps 2 --optimizer adamw"
# shellcheck disable=SC2086
torchrun --redirects 1 --tee 1 --nnodes 1 --nproc_per_node "$W" \
    --rdzv_backend c10d --rdzv_endpoint localhost:0 --rdzv_id calibrate \
    --monitor_interval 0.2 "$TRAIN" --plan "$TMP/p/plan.json" $OPTS \
    --dump-params "$TMP/run.pt" >"$TMP/run.log" 2>&1
_rc=$?
# shellcheck disable=SC2086
"$CA_PY" "$TRAIN" --reference --plan "$TMP/p/plan.json" $OPTS \
    --dump-params "$TMP/ref.pt" >"$TMP/ref.log" 2>&1
if [ "$_rc" -ne 0 ]; then
	t_notok "the plan runs ($W ranks)" "torchrun exit $_rc" \
	    "$(grep -v '^\*\|^WARNING' "$TMP/run.log" | tail -6)"
elif "$CA_PY" "$TRAIN" --compare "$TMP/ref.pt" "$TMP/run.pt" \
    >"$TMP/cmp.txt" 2>&1; then
	t_ok "the plan ($W ranks) equals the reference: $(sed 's/^[^:]*: //' "$TMP/cmp.txt")"
else
	t_notok "the plan ($W ranks) equals the reference" "$(cat "$TMP/cmp.txt")"
fi

# shellcheck disable=SC2086
expect_err "ranks not a multiple of the nodes" 2 \
    "dlplan_train: --profile-ranks 3: expected a multiple of --profile-nodes 2" -- \
    "$CA_PY" "$TRAIN" --profile-cluster "$TMP/bad" $MODEL \
    --profile-ranks 3 --profile-nodes 2
check "a refused profile writes nothing" test ! -e "$TMP/bad"
