# dlplan plan --budget: the schedule worked out by hand in
# tests/unit/test_budget.c (its queue values are derived there), the files
# it writes, a budget that never binds, a bundled cluster against the
# documented bound, and every error path with its exit status.

B=tests/cli/data/budget
HAND="-c $B/hand -m $B/model.csv --global-batch 8"

# jcheck NAME FILE EXPR: the Python expression EXPR on the JSON j of FILE
# must be true (skipped without python3).
jcheck() {
	if ! command -v python3 >/dev/null 2>&1; then
		skip "$1" "no python3"
		return
	fi
	check "$1" python3 -c "import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(0 if ($3) else 1)" "$2"
}

# The summary without the search's wall time and the scratch directory.
summary() {
	sed -e 's/MILPs, [0-9.e+-]* s$/MILPs, @TIME@ s/' -e "s|$TMP/|@TMP@/|g"
}

# --- the hand example ---------------------------------------------------
# Candidates {b} (T 0.096 s, 2 per hour) and {b, a} (T 0.036 s, 12 per
# hour); budget 5, V 1000.  Queues before each slot: 0, 7, 4; choices
# {b,a}, {b}, {b,a}; queue after slot 3: 11.  Average cost 26/3; bound
# 5 + (1000 x 0.06 / 10 + 7) / 3 = 5 + 13/3.
dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 -o "$TMP/h" \
    >"$TMP/h.raw" 2>"$TMP/h.err"
check "hand: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$TMP/h.err"
summary <"$TMP/h.raw" >"$TMP/out"
if _d=$(_golden budget-hand.txt out); then
	t_ok "hand: summary"
else
	t_notok "hand: summary" "$_d"
fi
# Progress (on a terminal unless -q, always with -v): a last line with
# the slots and the searches the summary counts.
dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 -v \
    >"$TMP/hv.out" 2>"$TMP/hv.err"
_s=$(sed -n 's/^searches  *\([0-9]*\) node subsets searched, \([0-9]*\) reused.*/\1 searches (\2 reused)/p' \
    "$TMP/hv.out")
check "hand: -v ends its progress with the slots and searches" grep -qF \
    "dlplan: budget: done, 3 of 3 slots, ${_s:-x}, " "$TMP/hv.err"
for f in plan.json plan.csv plan-slot1.json plan-slot2.json plan-slot3.json; do
	check "hand: wrote $f" test -s "$TMP/h/$f"
done
check "hand: no temporary file left" sh -c "! ls -A '$TMP/h' | grep -q tmp-"
jcheck "hand: queues 0, 7, 4 and 11 after" "$TMP/h/plan.json" \
    '[s["queue"] for s in j["schedule"]["slots"]] == [0, 7, 4] and
     j["schedule"]["slots"][2]["queue_after"] == 11'
jcheck "hand: slot 2 takes b alone, slots 1 and 3 both nodes" \
    "$TMP/h/plan.json" '[s["nodes"] for s in j["schedule"]["slots"]] ==
     [["a", "b"], ["b"], ["a", "b"]]'
jcheck "hand: scores 1000 T + Q cost" "$TMP/h/plan.json" \
    'abs(j["schedule"]["slots"][1]["candidates"][0]["score"] - 110) < 1e-9
     and abs(j["schedule"]["slots"][1]["candidates"][1]["score"] - 120) < 1e-9'
jcheck "hand: average cost 26/3 within the bound 5 + 13/3" "$TMP/h/plan.json" \
    'abs(j["schedule"]["average_cost_per_hour"] - 26/3) < 1e-12 and
     abs(j["schedule"]["cost_bound_per_hour"] - (5 + 13/3)) < 1e-12'
jcheck "hand: slot files named in the schedule" "$TMP/h/plan.json" \
    '[s["plan"] for s in j["schedule"]["slots"]] ==
     ["plan-slot1.json", "plan-slot2.json", "plan-slot3.json"]'
jcheck "hand: a slot plan is a plan without a schedule" \
    "$TMP/h/plan-slot2.json" '"schedule" not in j and
     [g["stages"][0]["node"] for g in j["groups"]] == ["b"]'

# Every slot's plan stands alone: eval prices it, emit launches it.
expect_run "slot 2 evaluates" 0 - - -- dlplan eval "$TMP/h/plan-slot2.json"
check "slot 2: eval gives 0.096 s" grep -q '0\.096 s' "$TMP/out"
expect_run "slot 2 emits" 0 - - -- dlplan emit "$TMP/h/plan-slot2.json" \
    --launcher hostfile -o "$TMP/l2" -- train.py
check "slot 2: the hostfile has b alone" \
    sh -c "[ \"\$(cat '$TMP/l2/launch/hostfile')\" = 'b slots=1' ]"
expect_run "plan.json with its schedule evaluates" 0 - - -- \
    dlplan eval "$TMP/h/plan.json"

# JSON on standard output: the schedule, but no slot files.
dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 --format json \
    >"$TMP/h.json" 2>"$TMP/h.err"
check "json: exit 0, nothing on stderr" sh -c "[ ! -s '$TMP/h.err' ]"
jcheck "json: the schedule without file names" "$TMP/h.json" \
    'len(j["schedule"]["slots"]) == 3 and
     all("plan" not in s for s in j["schedule"]["slots"])'

# --- a budget that never binds --------------------------------------------
# Above the best plan's cost the queue stays 0 and every slot gets the plan
# "dlplan plan" makes.
dlplan plan $HAND -o "$TMP/free" >/dev/null
dlplan plan $HAND --budget 100 --slots 3 -o "$TMP/rich" >/dev/null
check "rich: plan.csv is the plain plan's" cmp "$TMP/free/plan.csv" \
    "$TMP/rich/plan.csv"
# (Input paths are printed relative to each plan: leave them out.)
dlplan eval "$TMP/free/plan.json" | sed '1d; /\.csv$/d' >"$TMP/free.txt"
for t in 1 2 3; do
	dlplan eval "$TMP/rich/plan-slot$t.json" | sed '1d; /\.csv$/d' \
	    >"$TMP/rich$t.txt"
	check "rich: slot $t prices like the plain plan" cmp "$TMP/free.txt" \
	    "$TMP/rich$t.txt"
done
jcheck "rich: the queue stays 0" "$TMP/rich/plan.json" \
    'all(s["queue"] == 0 and s["queue_after"] == 0
         for s in j["schedule"]["slots"])'

# --- a bundled cluster with load histories --------------------------------
# hetero-lab: 6 nodes with prices and a load history; 6 slots of 4 steps.
# Whatever V, the time-averaged cost stays within the documented bound.
for V in 0.01 100 10000; do
	dlplan plan -c datasets/clusters/hetero-lab \
	    -m datasets/models/gpt2-xl.csv --global-batch 64 --micro-batch 2 \
	    --budget 30 --slots 6 --slot-steps 4 --tradeoff $V >"$TMP/hl" 2>&1
	check "hetero-lab V $V: average cost within the bound" awk '
	    /^cost / { c = $2; b = $NF; sub(/\)/, "", b); found = 1 }
	    END { exit !(found && c <= b + 0) }' "$TMP/hl"
done

# --- errors -------------------------------------------------------------
expect_err "budget below the cheapest plan" 3 \
    "dlplan: budget 1 per hour is below the cheapest plans that fit: 2 per hour on average over 3 slots (slot 1: 2 per hour on 'b')" -- \
    dlplan plan $HAND --budget 1 --slots 3 -o "$TMP/low"
check "budget too low: nothing written" test ! -e "$TMP/low"
expect_err "a node without a price" 2 \
    "dlplan: $B/noprice/nodes.csv:3: node 'b' has no cost_per_hour (--budget needs the price of every node)" -- \
    dlplan plan -c $B/noprice -m $B/model.csv --global-batch 8 \
    --budget 5 --slots 2
expect_err "--slots without --budget" 1 \
    "dlplan: option '--slots' needs --budget COST" -- \
    dlplan plan $HAND --slots 3
expect_err "--tradeoff without --budget" 1 \
    "dlplan: option '--tradeoff' needs --budget COST" -- \
    dlplan plan $HAND --tradeoff 3
expect_err "--slot-steps without --budget" 1 \
    "dlplan: option '--slot-steps' needs --budget COST" -- \
    dlplan plan $HAND --slot-steps 3
expect_err "--budget without --slots" 1 \
    "dlplan: option '--budget' needs --slots N (the number of slots to schedule)" -- \
    dlplan plan $HAND --budget 5
expect_err "--dump-lp with --budget" 1 \
    "dlplan: option '--dump-lp' does not apply to a --budget schedule" -- \
    dlplan plan $HAND --budget 5 --slots 2 --dump-lp "$TMP/lp"
expect_err "too many forecast steps" 1 \
    "dlplan: --slots x --slot-steps is 1000000000 forecast steps (at most 1000000)" -- \
    dlplan plan $HAND --budget 5 --slots 10000 --slot-steps 100000

# two-dc has links without traffic history: their empty series were
# copied with memcpy(t, NULL, 0), which UBSan stops (make check
# SANITIZE=undefined).
expect_run "two-dc: links without traffic history" 0 - - -- \
    dlplan plan -c datasets/clusters/two-dc -m datasets/models/llama2-7b.csv \
    --global-batch 64 --micro-batch 2 --budget 150 --slots 3 -q --format json

# --- -o DIR is one output set under the directory's lock ------------------
dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 -o "$TMP/set" \
    >/dev/null
dlplan plan $HAND -o "$TMP/set" --launcher hostfile -- python3 train.py \
    >/dev/null 2>&1
check "set: a plan with launch files first" test -f "$TMP/set/launch/hostfile"
dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 -o "$TMP/set" \
    >/dev/null
dlplan plan $HAND --budget 5 --slots 2 --tradeoff 1000 -o "$TMP/set" \
    >/dev/null
check "--budget: the earlier plan's launch files and slot 3 are gone" \
    sh -c "! ls '$TMP/set/launch/'* >/dev/null 2>&1 &&
	test ! -e '$TMP/set/plan-slot3.json' -a -f '$TMP/set/plan-slot2.json'"
check "--budget: a manifest lists the set" grep -qx plan-slot2.json \
    "$TMP/set/.dlplan-files"
flock -o "$TMP/set/.dlplan.lock" sleep 30 &
_holder=$!
sleep 0.3
expect_err "--budget into a locked directory" 4 \
    "dlplan: $TMP/set/.dlplan.lock: another dlplan is writing to '$TMP/set'" -- \
    dlplan plan $HAND --budget 5 --slots 3 --tradeoff 1000 -o "$TMP/set"
check "... and slot 3 is not written" test ! -e "$TMP/set/plan-slot3.json"
kill $_holder 2>/dev/null
wait $_holder 2>/dev/null || :
