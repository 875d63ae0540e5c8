# plans/dlplan_train.py on bad input: every malformed plan or
# option exits 2 with one line naming what is wrong, never a traceback.
# The plan and the options are checked before PyTorch is imported, so
# this runs without it.

PY=/usr/bin/python3
TRAIN=$SRCDIR/plans/dlplan_train.py
A=$DATA/train/a-dp.json
MODEL="--layers 6 --hidden 8 --heads 2 --seq 4 --vocab 16"
mkdir -p "$TMP/x/dir"
cd "$TMP/x" || exit 1
printf '[]' >list.json
printf 'null' >null.json
printf '3' >num.json
: >empty.json
printf '{"schema": "dlplan.plan/1", "groups": [' >trunc.json
printf '\377\376\000{' >bin.json
"$PY" -c "print('[' * 100000 + ']' * 100000)" >deep.json
"$PY" - "$A" <<'EOF'
import copy, json, sys
b = json.load(open(sys.argv[1]))
def w(name, f):
    c = copy.deepcopy(b)
    f(c["groups"][0]["stages"][0], c)
    with open(name, "w") as out:
        json.dump(c, out)
w("nan.json", lambda s, c: s.__setitem__("tp_shares", [float("nan")] * len(s["gpus"])))
w("str.json", lambda s, c: s.__setitem__("tp_shares", ["1"] * len(s["gpus"])))
w("shares.json", lambda s, c: (s.__setitem__("gpus", [0, 1, 2]), s.__setitem__("tp_shares", [0.5, 0.5])))
w("nonode.json", lambda s, c: s.pop("node"))
w("noopt.json", lambda s, c: c.pop("options"))
w("dupgpu.json", lambda s, c: s.__setitem__("gpus", [0, 0]))
EOF
cd "$SRCDIR" || exit 1
# bad NAME PLAN MESSAGE [OPTIONS]: exit 2, one line, that line.
bad() {
	_n=$1 _p=$2 _m=$3
	shift 3
	"$PY" "$TRAIN" --plan "$_p" --reference $MODEL "$@" >"$TMP/out" \
	    2>"$TMP/err"
	_rc=$?
	if [ "$_rc" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
	    [ "$(cat "$TMP/err")" = "dlplan_train: $_m" ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "exit $_rc" "$(head -5 "$TMP/err")" "wanted: dlplan_train: $_m"
	fi
}
X=$TMP/x
NOTPLAN='not a dlplan plan (expected "schema": "dlplan.plan/1")'
bad "a list" "$X/list.json" "$X/list.json: $NOTPLAN"
bad "null" "$X/null.json" "$X/null.json: $NOTPLAN"
bad "a number" "$X/num.json" "$X/num.json: $NOTPLAN"
bad "an empty file" "$X/empty.json" \
    "$X/empty.json: invalid JSON: Expecting value: line 1 column 1 (char 0)"
bad "a truncated plan" "$X/trunc.json" \
    "$X/trunc.json: invalid JSON: Expecting value: line 1 column 40 (char 39)"
bad "a binary file" "$X/bin.json" \
    "$X/bin.json: invalid JSON: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
bad "deeply nested" "$X/deep.json" \
    "$X/deep.json: invalid JSON: maximum recursion depth exceeded while decoding a JSON array from a unicode string"
bad "a missing file" "$X/none.json" "$X/none.json: No such file or directory"
bad "a directory" "$X/dir" "$X/dir: Is a directory"
bad "tp_shares [NaN]" "$X/nan.json" \
    "groups[0].stages[0].tp_shares: expected a number >= 0, found NaN"
bad "tp_shares [\"1\"]" "$X/str.json" \
    "groups[0].stages[0].tp_shares: expected a number >= 0, found \"1\""
bad "three GPUs, two shares" "$X/shares.json" \
    "groups[0].stages[0].tp_shares: 2 shares for 3 GPUs"
bad "a stage without a node" "$X/nonode.json" \
    "groups[0].stages[0].node: expected a node id, found null"
bad "a plan without options" "$X/noopt.json" \
    "options: expected an object, found null"
bad "a GPU twice" "$X/dupgpu.json" \
    "groups[0].stages[0].gpus: [0, 0] (expected distinct GPU numbers >= 0)"
bad "--lr nan" "$A" "--lr nan: expected a finite number > 0" --lr nan
bad "--lr inf" "$A" "--lr inf: expected a finite number > 0" --lr inf
bad "--timeout -1" "$A" "--timeout -1.0: expected a finite number > 0" \
    --timeout -1

# The plan's model.csv is where dlplan reads it (beside the plan), never
# one of the same name in the current directory, and only with the digest
# the plan records.
mkdir -p "$TMP/mp" "$TMP/cwd"
cp "$A" "$TMP/mp/a-dp.json"
sed 's/--hidden 32/--hidden 64/' "$DATA/train/model.csv" >"$TMP/cwd/model.csv"
cd "$TMP/cwd" || exit 1
bad "a missing model.csv is not looked for in the current directory" \
    "$TMP/mp/a-dp.json" \
    "$TMP/mp/a-dp.json: inputs[1].path: $TMP/mp/model.csv: No such file or directory"
cp "$TMP/cwd/model.csv" "$TMP/mp/model.csv"
bad "a model.csv whose digest differs is not read" "$TMP/mp/a-dp.json" \
    "$TMP/mp/model.csv: does not match the digest the plan records for it, so it is not read (it changed since the plan was made)"
# A plan that records the model's size (dlplan's do): a model.csv of
# another size, here a 200 MB sparse file, is refused from its status
# before a byte is read; one of that size but other bytes by its digest.
"$PY" - "$A" "$TMP/mp/sz.json" "$DATA/train/model.csv" <<'EOF'
import json, os, sys
p = json.load(open(sys.argv[1]))
for i in p["inputs"]:
    if i["kind"] == "model":
        i["size"] = os.path.getsize(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
EOF
truncate -s 200M "$TMP/mp/model.csv"
bad "a 200 MB sparse model.csv is refused by its size" "$TMP/mp/sz.json" \
    "$TMP/mp/model.csv: is 209715200 bytes, not the $(wc -c <"$DATA/train/model.csv") bytes the plan records for it, so it is not read (it changed since the plan was made)"
rm -f "$TMP/mp/model.csv"
cp "$TMP/cwd/model.csv" "$TMP/mp/model.csv"
bad "... one of that size by its digest" "$TMP/mp/sz.json" \
    "$TMP/mp/model.csv: does not match the digest the plan records for it, so it is not read (it changed since the plan was made)"
sed 's/"size": [0-9]*/"size": -1/' "$TMP/mp/sz.json" >"$TMP/mp/neg.json"
bad "... and a size that is no size is refused" "$TMP/mp/neg.json" \
    "$TMP/mp/neg.json: inputs[1].size: -1 is not a size in bytes"
cd "$SRCDIR" || exit 1

# Output paths are checked before any work (and before PyTorch): one
# line, exit 2, on every rank alike.
mkdir -p "$TMP/o"
: >"$TMP/o/file"
bad "--dump-params in a missing directory" "$A" \
    "--dump-params $TMP/o/none/p.pt: no directory $TMP/o/none" \
    --dump-params "$TMP/o/none/p.pt"
bad "--log naming a directory" "$A" \
    "--log $TMP/o: is a directory (expected a file)" --log "$TMP/o"
bad "--profile-cluster naming a file" "$A" \
    "--profile-cluster $TMP/o/file: exists and is not a directory" \
    --profile-cluster "$TMP/o/file"
bad "--compare of a missing file" "$A" \
    "--compare $TMP/o/none.pt: No such file or directory" \
    --compare "$TMP/o/file" "$TMP/o/none.pt"

# --- the executor's temporary files after kill -9 ------------------------
# atomic_write() (dlplan_config.py; --dump-params, --profile) writes
# NAME.tmp-XXXXXX locked while it bears that name, as dlplan does, and
# then removes, holding the directory's lock, the temporaries no process
# holds: those of writers killed since, the executor's and dlplan's.
# Each try starts a write of 4 MB (A or B, alternating) and kills it
# (SIGKILL) after a random delay: the file is then the old or the new
# content, never a mix, and the next write leaves exactly its content,
# no temporary file and no lock.  DLPLAN_EXEC_KILLS sets the tries.
W=$TMP/aw
mkdir -p "$W"
# aw FILE CHAR [SLEEP]: atomic_write() of FILE with 64 pieces of 64 KB of
# CHAR, 2 ms apart (so that most kills fall inside the write), and
# SLEEP seconds before the last.  Started in the background as
# "$PY" "$AW" ..., so that $! is the writer itself.
AW=$TMP/aw.py
cat >"$AW" <<'EOF'
import sys, time
sys.path.insert(0, sys.argv[1])
import dlplan_config
def w(f):
    for i in range(64):
        time.sleep(float(sys.argv[4]) if i == 63 else 0.002)
        f.write(sys.argv[3] * 65536)
        f.flush()
dlplan_config.atomic_write(sys.argv[2], w)
EOF
aw() {
	"$PY" "$AW" "$SRCDIR/plans" "$1" "$2" "${3:-0}"
}
# wstrays DIR: the temporary files in DIR (NAME.tmp-..., NAME.old-...).
wstrays() {
	ls -A "$1" | grep -c -e '\.tmp-' -e '\.old-'
}
aw "$W/a" a
aw "$W/b" b
_ca=$(cksum <"$W/a") _cb=$(cksum <"$W/b")
_r0=$(date +%s%N)
aw "$W/f" a
_r1=$(date +%s%N)
_kills=0 _mixed=0 _fail=0 _left=0 _hit=0 _cur=a
awk -v n="${DLPLAN_EXEC_KILLS:-40}" -v s="$$" \
    -v t="$(((_r1 - _r0) / 1000))" 'BEGIN { srand(s)
    if (t < 1000 || t > 5000000) t = 100000
    for (i = 0; i < n; i++) printf "%.4f\n", rand() * t * 1.2e-6 }' \
    >"$TMP/awdelays"
while read -r _d; do
	if [ $_cur = a ]; then _nx=b; else _nx=a; fi
	"$PY" "$AW" "$SRCDIR/plans" "$W/f" $_nx &
	_p=$!
	sleep "$_d"
	kill -KILL "$_p" 2>/dev/null
	{ wait "$_p"; } 2>/dev/null
	[ $? -eq 137 ] && _kills=$((_kills + 1))
	[ "$(wstrays "$W")" -gt 0 ] && _hit=$((_hit + 1))
	_c=$(cksum <"$W/f")
	[ "$_c" = "$_ca" ] || [ "$_c" = "$_cb" ] || _mixed=$((_mixed + 1))
	if ! aw "$W/f" $_nx 2>"$TMP/awerr"; then
		_fail=$((_fail + 1))
		head -2 "$TMP/awerr" | sed 's/^/# failed: /'
	elif [ "$(cksum <"$W/f")" != "$(cksum <"$W/$_nx")" ]; then
		_mixed=$((_mixed + 1))
	fi
	_left=$((_left + $(wstrays "$W")))
	[ -e "$W/.dlplan.lock" ] && _left=$((_left + 1))
	_cur=$_nx
done <"$TMP/awdelays"
echo "# atomic_write: $(wc -l <"$TMP/awdelays") tries, $_kills killed, $_hit left a temporary file, $_mixed mixed, $_fail next writes failed, $_left temporary files left"
check "atomic_write killed $_kills times: never mixed" test "$_mixed" -eq 0
check "... kills fell inside writes ($_hit left a temporary file)" \
    test "$_hit" -gt 0
check "... every next write succeeds" test "$_fail" -eq 0
check "... and leaves no temporary file and no lock" test "$_left" -eq 0
# A writer that lives keeps its temporary file; once killed, the next
# write removes it.
"$PY" "$AW" "$SRCDIR/plans" "$W/slow" a 5 &
_p=$!
_i=0
while [ "$(wstrays "$W")" -eq 0 ] && [ $_i -lt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
aw "$W/f" a
check "atomic_write: a live writer's temporary file stays" \
    test "$(wstrays "$W")" -eq 1
kill -KILL "$_p" 2>/dev/null
wait "$_p" 2>/dev/null
aw "$W/f" b
check "... and goes once its writer is killed" test "$(wstrays "$W")" -eq 0
# dlplan's own sweep removes the executor's temporaries too, and the
# executor's sweep removes dlplan's.
dlplan plan -c datasets/clusters/two-dc -m datasets/models/llama2-7b.csv \
    --global-batch 256 --micro-batch 2 --horizon 3 -o "$TMP/ds" \
    >/dev/null 2>&1
"$PY" "$AW" "$SRCDIR/plans" "$TMP/ds/params.pt" a 5 &
_p=$!
_i=0
while [ "$(wstrays "$TMP/ds")" -eq 0 ] && [ $_i -lt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
kill -KILL "$_p" 2>/dev/null
wait "$_p" 2>/dev/null
check "a killed executor leaves its temporary file" \
    test "$(wstrays "$TMP/ds")" -eq 1
dlplan emit "$TMP/ds/plan.json" --launcher slurm -o "$TMP/ds" -- \
    python3 train.py >/dev/null 2>&1
check "... which the next dlplan writing there removes" \
    test "$(wstrays "$TMP/ds")" -eq 0
printf 'stray\n' >"$TMP/ds/plan.csv.tmp-Qq1Qq1"
aw "$TMP/ds/params.pt" a
check "a stray of dlplan's: the executor's write removes it" \
    test "$(wstrays "$TMP/ds")" -eq 0
