# "-" as a file name: standard input for every option that
# reads one file and for the plan operand, standard output for every
# option that writes one file.  Reading a file through "-" must give the
# same output, byte for byte, as naming it; standard input feeds one input
# per run; options that write a directory refuse "-"; a plan made from
# standard input records "-" and the digest of the bytes read, and the
# commands that re-read its inputs ask for them again.

ONE=$DATA/eval/one
M4=$DATA/eval/m4.csv
TWO=$SRCDIR/datasets/clusters/two-dc
FL=$DATA/route-two-dc.csv
R=$DATA/replan
PH=$SRCDIR/datasets/clusters/philly-64
JOBS=$SRCDIR/datasets/jobs/philly-gavel-120.csv
GPT=$SRCDIR/datasets/models/gpt2-xl.csv
# Run where a "-" written by mistake (a build without this) does no harm.
cd "$TMP" || exit 1

# same NAME IN CMD...: CMD exits 0 with IN on standard input, and its
# stdout equals $TMP/by-name (the output of the same run naming the
# file).  IN is given through a pipe, not a redirected file.
same() {
	_n=$1 _in=$2
	shift 2
	cat "$_in" | "$@" >"$TMP/by-stdin" 2>"$TMP/err"
	_rc=$?
	if [ $_rc -eq 0 ] && [ -s "$TMP/by-name" ] &&
	    cmp -s "$TMP/by-name" "$TMP/by-stdin"; then
		t_ok "$_n"
	else
		t_notok "$_n" "exit status $_rc" \
		    "$(diff "$TMP/by-name" "$TMP/by-stdin" | head -10)" \
		    "stderr: $(head -3 "$TMP/err")"
	fi
}

# err_in NAME STATUS MESSAGE IN dlplan ARGS...: expect_err with IN on
# standard input.
err_in() {
	_n=$1 _st=$2 _msg=$3 _in=$4
	shift 5
	# shellcheck disable=SC2086
	expect_err "$_n" "$_st" "$_msg" -- \
	    sh -c '_in=$1; shift; exec "$@" <"$_in"' \
	    sh "$_in" ${DLPLAN_WRAP:-} "$DLPLAN" "$@"
}

# --- every input read from standard input --------------------------------
dlplan predict -H $DATA/predict-load.csv --format csv >"$TMP/by-name"
same "predict -H -" $DATA/predict-load.csv \
    dlplan predict -H - --format csv

dlplan check -c $TWO -m $GPT --format json >"$TMP/by-name"
same "check -m -" $GPT \
    dlplan check -c $TWO -m - --format json

dlplan route -c $TWO --flows $FL --format csv >"$TMP/by-name"
same "route --flows -" $FL dlplan route -c $TWO --flows - --format csv
for f in nodes links load traffic; do
	same "route --$f -" $TWO/$f.csv \
	    dlplan route -c $TWO --flows $FL --format csv --$f -
done

dlplan schedule -c $PH --jobs $JOBS --format csv >"$TMP/by-name"
same "schedule --jobs -" $JOBS dlplan schedule -c $PH --jobs - --format csv

# plan -m -: the same plan (plan.csv; plan.json differs in the model's
# path and the solver's time).
dlplan plan -c $ONE -m $M4 --global-batch 6 -o "$TMP/p" >/dev/null
cp "$TMP/p/plan.csv" "$TMP/by-name"
cat $M4 | dlplan plan -c $ONE -m - --global-batch 6 -o "$TMP/ps" \
    >/dev/null 2>"$TMP/err"
check "plan -m -: exit 0" test -s "$TMP/ps/plan.csv"
check "plan -m -: same plan.csv" cmp "$TMP/by-name" "$TMP/ps/plan.csv"

# The plan operand: eval, replan and emit.  A plan read from standard
# input resolves its relative paths from the current directory, so these
# run where the plan lies.
(cd "$TMP/p" && "$DLPLAN" eval --format json plan.json) \
    >"$TMP/by-name"
same "eval -" "$TMP/p/plan.json" sh -c 'cd "$1" &&
    exec "$DLPLAN" eval --format json -' sh "$TMP/p"

log=$TMP/slow.csv
printf 'rank,step,seconds\n' >"$log"
for s in 0 1 2 3 4 5 6 7 8 9; do
	printf '0,%d,0.06\n1,%d,0.06\n2,%d,0.12\n' $s $s $s >>"$log"
done
# (The new plan records where its parent and its log came from.)
dlplan replan $R/dp3.json --observed "$log" --format json |
    grep -v '"parent_file"\|"observed"' >"$TMP/by-name"
( cat "$log" | dlplan replan $R/dp3.json --observed - --format json
  echo $? >"$TMP/rc" ) | grep -v '"parent_file"\|"observed"' >"$TMP/r1"
check "replan --observed -: exit 0" test "$(cat "$TMP/rc")" = 0
check "replan --observed -: same plan" cmp "$TMP/by-name" "$TMP/r1"
( cd $R && dlplan replan - --observed "$log" --format json <dp3.json
  echo $? >"$TMP/rc" ) | grep -v '"parent_file"\|"observed"' >"$TMP/r2"
check "replan -: exit 0" test "$(cat "$TMP/rc")" = 0
check "replan -: same plan" cmp "$TMP/by-name" "$TMP/r2"
dlplan replan $R/dp3.json --observed - -o "$TMP/rp" <"$log" >/dev/null
check "replan --observed -: the log is recorded as -" \
    grep -q '"observed": "-"' "$TMP/rp/plan.json"

# emit -: the launch files of the plan by name, with a copy of the plan
# in launch/ that the workers read.
dlplan emit "$TMP/p/plan.json" --launcher torchrun -o "$TMP/e1" \
    -- python3 train.py >/dev/null
(cd "$TMP/p" && "$DLPLAN" emit - --launcher torchrun \
    -o "$TMP/e2" -- python3 train.py) <"$TMP/p/plan.json" >"$TMP/out" \
    2>"$TMP/err"
check "emit -: exit 0" test -s "$TMP/e2/launch/worker.sh"
check "emit -: launch/plan.json is the plan read" \
    cmp "$TMP/p/plan.json" "$TMP/e2/launch/plan.json"
check "emit -: the workers read that copy" \
    grep -qx "plan='$TMP/e2/launch/plan.json'" "$TMP/e2/launch/worker.sh"
sed "s|$TMP/p/plan.json|$TMP/e2/launch/plan.json|; s|$TMP/e1/|$TMP/e2/|" \
    "$TMP/e1/launch/worker.sh" >"$TMP/by-name"
check "emit -: worker.sh otherwise the same" \
    cmp "$TMP/by-name" "$TMP/e2/launch/worker.sh"
err_in "emit - needs -o" 1 \
    "dlplan: a plan from standard input has no directory to write launch/ to (expected -o DIR)" \
    "$TMP/p/plan.json" dlplan emit - --launcher hostfile -- true
err_in "emit - --slot" 1 \
    "dlplan: --slot needs the plan's file: its slot plans are beside it (give PLAN.json, not '-')" \
    "$TMP/p/plan.json" dlplan emit - --launcher hostfile -o "$TMP/e3" \
    --slot 1 -- true

# --- one input per run ------------------------------------------------
err_in "two -: --nodes and -m" 1 \
    "dlplan: standard input given to both --nodes and -m ('-' can feed only one input per run)" \
    $M4 dlplan plan --nodes - -m - --global-batch 6
err_in "two -: -m and the plan" 1 \
    "dlplan: standard input given to both -m and PLAN.json ('-' can feed only one input per run)" \
    "$TMP/p/plan.json" dlplan eval -m - -
err_in "two -: --observed and the plan" 1 \
    "dlplan: standard input given to both --observed and PLAN.json ('-' can feed only one input per run)" \
    "$log" dlplan replan - --observed -
err_in "-c - is a directory" 1 \
    "dlplan: option '-c' names a directory: '-' (standard input) cannot be one (give one file from it with --nodes -, --links -, --load - or --traffic -)" \
    $M4 dlplan check -c -

# --- outputs: one file to standard output, never a directory ---------
dlplan model --preset gpt2-xl >"$TMP/by-name"
same "model -o -" /dev/null dlplan model --preset gpt2-xl -o -
dlplan eval "$TMP/p/plan.json" --svg "$TMP/t.svg" >/dev/null
cp "$TMP/t.svg" "$TMP/by-name"
same "eval --svg - (the SVG alone)" /dev/null \
    dlplan eval "$TMP/p/plan.json" --svg -
err_in "plan -o -" 1 \
    "dlplan: option '-o' writes a directory: '-' (standard output) cannot be one; --format json prints the plan on standard output" \
    /dev/null dlplan plan -c $ONE -m $M4 --global-batch 6 -o -
err_in "plan --dump-lp -" 1 \
    "dlplan: option '--dump-lp' writes a directory: '-' (standard output) cannot be one" \
    /dev/null dlplan plan -c $ONE -m $M4 --global-batch 6 --dump-lp -
err_in "emit -o -" 1 \
    "dlplan: option '-o' writes a directory: '-' (standard output) cannot be one" \
    /dev/null dlplan emit "$TMP/p/plan.json" --launcher hostfile -o - -- true
err_in "replan -o -" 1 \
    "dlplan: option '-o' writes a directory: '-' (standard output) cannot be one; --format json prints the new plan on standard output" \
    /dev/null dlplan replan $R/dp3.json --observed "$log" -o -
err_in "schedule -o -" 1 \
    "dlplan: option '-o' writes a directory: '-' (standard output) cannot be one" \
    /dev/null dlplan schedule -c $ONE --jobs x.csv -o -
check "no file or directory named -" test ! -e ./-

# --- a plan made from standard input ------------------------------------
sha=$(sha256sum <$M4 | cut -c1-64)
check "plan -m -: recorded as - with the digest of the bytes read" sh -c \
    'grep -A1 "\"path\": \"-\"" "$1" | grep -q "$2"' sh "$TMP/ps/plan.json" \
    "$sha"
MSG="dlplan: $TMP/ps/plan.json: the plan's model.csv came from standard input: give it again with -m FILE"
# Standard input is a terminal or a pipe with data: never read in its
# place.
err_in "eval of it asks for the model again" 2 "$MSG" $M4 \
    dlplan eval "$TMP/ps/plan.json"
err_in "emit of it asks for the model again" 2 "$MSG" $M4 \
    dlplan emit "$TMP/ps/plan.json" --launcher hostfile -o "$TMP/e4" -- true
err_in "replan of it asks for the model again" 2 "$MSG" $M4 \
    dlplan replan "$TMP/ps/plan.json" --observed "$log"
dlplan eval "$TMP/ps/plan.json" -m $M4 --format json >"$TMP/e.json"
check "eval of it with -m FILE: exit 0" test -s "$TMP/e.json"
# (eval's JSON names the model it read.)
sed "s|\"path\": \"$M4\"|\"path\": \"-\"|" "$TMP/e.json" >"$TMP/by-name"
same "eval of it with -m - (digest checked)" $M4 \
    dlplan eval "$TMP/ps/plan.json" -m - --format json
printf '# changed\n' | cat - $M4 >"$TMP/m4b.csv"
err_in "eval of it with another model: size mismatch" 2 \
    "dlplan: <stdin>: plan was made for a different model.csv ($(wc -c <"$TMP/m4b.csv") bytes, the plan records $(wc -c <$M4)); re-run dlplan plan" \
    "$TMP/m4b.csv" dlplan eval "$TMP/ps/plan.json" -m -
sed '$s/.$/9/' $M4 >"$TMP/m4c.csv"
err_in "... and one of the same size: digest mismatch" 2 \
    "dlplan: <stdin>: plan was made for a different model.csv (digest mismatch); re-run dlplan plan" \
    "$TMP/m4c.csv" dlplan eval "$TMP/ps/plan.json" -m -

# --- errors in standard input name <stdin>:LINE:COLUMN -----------------
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb,tp_mb\nl0,1,10,1,2,5\nl1,x,1,1,1,1\n' \
    >"$TMP/bad.csv"
err_in "bad model on stdin" 2 \
    "dlplan: <stdin>:3:2: column 'fwd_gflop': 'x' is not a number in [0, 1000000000] (GFLOP per sample)" \
    "$TMP/bad.csv" dlplan check -c $TWO -m -
printf '{\n  "schema": x\n}\n' >"$TMP/bad.json"
err_in "bad plan on stdin" 2 \
    "dlplan: <stdin>:2:13: invalid JSON: invalid token near 'x'" \
    "$TMP/bad.json" dlplan eval -
printf 'node,t,util\na,0,0.5\na,1,0.5\0\n' >"$TMP/nul.csv"
err_in "NUL byte on stdin" 2 \
    "dlplan: <stdin>:3:8: NUL byte in file (expected text)" \
    "$TMP/nul.csv" dlplan predict -H -
