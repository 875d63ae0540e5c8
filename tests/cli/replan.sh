# dlplan replan: re-plans of hand-written plans from step logs whose
# numbers are worked out by hand in tests/unit/test_replan.c, the new
# plan's parent and round trip, noisy logs, and every error path with its
# exact message and exit status.
#
# noisy-dp3.csv and slow-b-pp2.csv were written by
# plans/replan-example/simulate-run.py on the plans as eval prices them:
#	dlplan eval dp3.json --format json >dp3e.json
#	simulate-run.py dp3e.json --steps 16 --noise 0.1 --spike-prob 0.02 \
#	    --seed 3 >noisy-dp3.csv
#	dlplan eval pp2.json --format json >pp2e.json
#	simulate-run.py pp2e.json --steps 16 --slow b=2 --compute \
#	    >slow-b-pp2.csv

R=tests/cli/data/replan

# log FILE VALUES...: a log of 10 steps in which rank i logs VALUES[i].
log() {
	_f=$1
	shift
	printf 'rank,step,seconds\n' >"$_f"
	for _s in 0 1 2 3 4 5 6 7 8 9; do
		_r=0
		for _v in "$@"; do
			printf '%d,%d,%s\n' $_r $_s $_v >>"$_f"
			_r=$((_r + 1))
		done
	done
}

# mb FILE: the micro_batches column of a plan.csv, one value per rank.
mb() {
	awk -F, 'NR > 1 { printf "%s ", $8 }' "$1"
}

# golden NAME FILE CMD...: CMD exits 0 and its stdout, with the scratch
# directory spelt @TMP@, equals the golden FILE.
golden() {
	_n=$1 _g=$2
	shift 2
	"$@" >"$TMP/raw" 2>"$TMP/err"
	_rc=$?
	sed "s|$TMP/|@TMP@/|g" "$TMP/raw" >"$TMP/out"
	if _d=$(_golden "$_g" out) && [ $_rc -eq 0 ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "exit status $_rc" "$_d" "$(head -5 "$TMP/err")"
	fi
}

# --- one replica 2x slower -------------------------------------------
# dp3: three replicas at 0.06 s.  c logs 0.12 s: factor 0.5, and the
# split 5, 5, 2 gives 0.075 s + 4 tau against 0.12 s + 4 tau.
log "$TMP/slow.csv" 0.06 0.06 0.12
golden "slow replica" replan-slow.txt dlplan replan $R/dp3.json \
    --observed "$TMP/slow.csv" -o "$TMP/s"
check "slow: micro-batches 5, 5, 2" test "$(mb "$TMP/s/plan.csv")" = "5 5 2 "
check "slow: parent is the sha256 of the old plan" grep -q \
    "\"parent\": \"$(sha256sum $R/dp3.json | cut -c1-64)\"" "$TMP/s/plan.json"
check "slow: the new plan records its log" grep -q '"observed": ' \
    "$TMP/s/plan.json"
expect_run "slow: the new plan evaluates" 0 - - -- \
    dlplan eval "$TMP/s/plan.json"
check "slow: the method of the parent (gmc) carries over" grep -q \
    '"forecast": "gmc"' "$TMP/s/plan.json"
# --forecast forecasts again (no load.csv here: every node idle) and the
# new plan records the method.
expect_run "slow, --forecast median" 0 - - -- dlplan replan $R/dp3.json \
    --observed "$TMP/slow.csv" --forecast median -o "$TMP/sm"
check "--forecast: the new plan records the method" grep -q \
    '"forecast": "median"' "$TMP/sm/plan.json"
check "--forecast: same split without load history" \
    test "$(mb "$TMP/sm/plan.csv")" = "5 5 2 "
# A re-plan of the re-plan with a log that matches it keeps it.
log "$TMP/s2.csv" 0.075 0.075 0.06
expect_run "slow: replan of the replan" 0 - - -- dlplan replan \
    "$TMP/s/plan.json" --observed "$TMP/s2.csv" -o "$TMP/s2"
check "slow again: a log matching the new plan keeps it" \
    sh -c "grep -q 'the log matches the plan' '$TMP/out' &&
    cmp -s '$TMP/s/plan.csv' '$TMP/s2/plan.csv'"
# c slows down again, to a quarter of the forecast speed: the factors
# compound (0.5 x 0.5) and 2 x 0.06 s against 0.075 s moves one more
# micro-batch away: 5, 6, 1 or 6, 5, 1 give 0.09 s.
log "$TMP/s3.csv" 0.075 0.075 0.12
expect_run "slower again" 0 - - -- dlplan replan "$TMP/s/plan.json" \
    --observed "$TMP/s3.csv" -o "$TMP/s3"
check "slower again: c at 0.25 of the forecast" grep -q '"c": 0.25' \
    "$TMP/s3/plan.json"
check "slower again: c keeps one micro-batch" sh -c \
    "[ \"\$(awk -F, 'NR == 4 { print \$8 }' '$TMP/s3/plan.csv')\" = 1 ]"

# --- a log that matches the plan ----------------------------------------
log "$TMP/same.csv" 0.06 0.06 0.06
golden "matching log" replan-same.txt dlplan replan $R/dp3.json \
    --observed "$TMP/same.csv"
dlplan replan $R/dp3.json --observed "$TMP/same.csv" -o "$TMP/m" >/dev/null
check "matching: same micro-batches" test "$(mb "$TMP/m/plan.csv")" = "4 4 4 "

# --- noisy logs ---------------------------------------------------------
expect_run "noisy log keeps the plan" 0 - - -- dlplan replan $R/dp3.json \
    --observed $R/noisy-dp3.csv --repartition
check "noisy: the parent's structure" grep -q "the parent's" "$TMP/out"
if command -v python3 >/dev/null 2>&1; then
	dlplan eval $R/dp3.json --format json >"$TMP/dp3e.json"
	flips=0
	for seed in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		python3 plans/replan-example/simulate-run.py "$TMP/dp3e.json" \
		    --steps 16 --noise 0.1 --spike-prob 0.02 --seed $seed \
		    >"$TMP/n.csv"
		dlplan replan $R/dp3.json --observed "$TMP/n.csv" \
		    --repartition | grep -q "(new)" && flips=$((flips + 1))
	done
	check "noisy: 20 seeds, no plan changed" test $flips -eq 0
else
	skip "noisy: 20 seeds, no plan changed" "no python3"
fi

# --- a pipeline with busy times -------------------------------------------
# pp2: a [0-1] > b [2-3]; b 2x slower.  --repartition moves layer 2 to a:
# T = 0.0225 + 1.8e-4 + 0.015 + 11 x 0.0225 = 0.28518 s.
expect_run "pipeline, busy times, repartition" 0 replan-pp2.txt - -- \
    dlplan replan $R/pp2.json --observed $R/slow-b-pp2.csv --repartition
expect_run "pipeline without --repartition keeps it" 0 - - -- \
    dlplan replan $R/pp2.json --observed $R/slow-b-pp2.csv
check "pipeline: kept without --repartition" grep -q "the parent's" \
    "$TMP/out"

# --- JSON on standard output --------------------------------------------
dlplan replan $R/dp3.json --observed "$TMP/slow.csv" --format json \
    >"$TMP/j.json" 2>"$TMP/j.err"
check "json: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$TMP/j.err"
for k in '"parent": ' '"replan": ' '"estimator": "pipeline"' \
    '"speed_factors": ' '"adopted": true' '"gain": '; do
	check "json has $k" grep -q "$k" "$TMP/j.json"
done

# --- errors -------------------------------------------------------------
printf 'rank,step,seconds\n0,0,1\n1,0,1\n3,0,1\n2,0,1\n' >"$TMP/e1.csv"
expect_err "a rank not in the plan" 2 \
    "dlplan: $TMP/e1.csv:4:1: column 'rank': rank 3 is not in the plan (it has 3 ranks, 0 to 2)" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e1.csv"
printf 'rank,step,seconds\n0,0,1\n2,0,1\n' >"$TMP/e2.csv"
expect_err "a rank missing from the log" 2 \
    "dlplan: $TMP/e2.csv: rank 1 of the plan has no steps in the log" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e2.csv"
printf 'rank,step,seconds\n0,0,1\n1,0,1\n' >"$TMP/e3.csv"
expect_err "a log of a smaller world" 2 \
    "dlplan: $TMP/e3.csv: the log has ranks 0 to 1, the plan has 3 ranks (a log of another plan?)" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e3.csv"
printf 'rank,step,seconds\n0,0,1\n1,0,0\n2,0,1\n' >"$TMP/e4.csv"
expect_err "a step of no time" 2 \
    "dlplan: $TMP/e4.csv:3:3: column 'seconds': '0' is out of range (expected a number in (0, 1000000000] (seconds))" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e4.csv"
printf 'rank,step,seconds\n0,0,1\n1,0,-1\n2,0,1\n' >"$TMP/e5.csv"
expect_err "a step of negative time" 2 \
    "dlplan: $TMP/e5.csv:3:3: column 'seconds': '-1' is out of range (expected a number in (0, 1000000000] (seconds))" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e5.csv"
printf 'rank,step,seconds\n0,5,1\n1,5,1\n2,5,1\n0,5,1\n' >"$TMP/e6.csv"
expect_err "a step twice" 2 \
    "dlplan: $TMP/e6.csv:5:2: column 'step': rank 0 step 5 appears twice (also on line 2)" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e6.csv"
printf 'rank,step,seconds,samples\n0,0,1,4\n1,0,1,8\n2,0,1,4\n' >"$TMP/e7.csv"
expect_err "samples of another plan" 2 \
    "dlplan: $TMP/e7.csv:3:4: column 'samples': rank 1 processed 8 samples, the plan gives its group 4 (a log of another plan?)" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e7.csv"
printf 'rank,step,secs\n0,0,1\n' >"$TMP/e8.csv"
expect_err "a log with the wrong header" 2 \
    "dlplan: $TMP/e8.csv:1:3: unknown column 'secs' in steps.csv header (expected rank, step, seconds, samples, compute_seconds; prefix extra columns with x_)" -- \
    dlplan replan $R/dp3.json --observed "$TMP/e8.csv"
expect_err "no log file" 2 \
    "dlplan: $TMP/none.csv: cannot open file: No such file or directory" -- \
    dlplan replan $R/dp3.json --observed "$TMP/none.csv"
check "errors: nothing on stdout" test ! -s "$TMP/out"

expect_err "no plan" 1 "dlplan: no plan given (expected PLAN.json)" -- \
    dlplan replan --observed "$TMP/same.csv"
expect_err "two plans" 1 "dlplan: unexpected argument 'b.json'" -- \
    dlplan replan a.json b.json --observed "$TMP/same.csv"
expect_err "no log" 1 \
    "dlplan: no step log given (expected --observed STEPS.csv)" -- \
    dlplan replan $R/dp3.json
expect_err "window 0" 1 \
    "dlplan: option '--window': '0' is out of range [1, 100000]" -- \
    dlplan replan $R/dp3.json --observed "$TMP/same.csv" --window 0
expect_err "over the parent" 1 \
    "dlplan: '$TMP/s/plan.json' would overwrite the parent plan (choose another -o)" -- \
    dlplan replan "$TMP/s/plan.json" --observed "$TMP/s2.csv" -o "$TMP/s"

# The worked example of plans/replan-example/README.md runs as written.
check "plans/replan-example/run.sh runs to its end" sh -c "
    DLPLAN=\"\$DLPLAN\" sh plans/replan-example/run.sh '$TMP/rex' |
    grep -q '^gain      42.0% faster than the parent\$'"
