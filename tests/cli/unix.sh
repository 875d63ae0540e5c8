# Unix plumbing: a reader that closes the pipe early, "did you
# mean" for unknown commands and options, a schema in every JSON output,
# model --format json and the presets in model -h.

# --- a closed pipe ends quietly ----------------------------------------
# 2,000 series of 5 points: about 300 KB of csv, more than a pipe holds,
# so dlplan is still writing when head has gone.
awk 'BEGIN { print "node,t,util"
	for (i = 0; i < 2000; i++) for (t = 0; t < 5; t++)
		printf "n%d,%d,0.%d\n", i, t, 1 + (i + t) % 8 }' >"$TMP/many.csv"
( dlplan predict -H "$TMP/many.csv" --format csv 2>"$TMP/pipe.err"
  echo $? >"$TMP/pipe.rc" ) | head -n 1 >/dev/null
check "closed pipe: status 0 or 141 (SIGPIPE)" \
    sh -c 'rc=$(cat "$1"); [ "$rc" = 0 ] || [ "$rc" = 141 ]' sh "$TMP/pipe.rc"
check "closed pipe: nothing on stderr" test ! -s "$TMP/pipe.err"
# With SIGPIPE ignored by the caller the write fails with EPIPE instead:
# still quiet, still no error status.
( trap '' PIPE
  dlplan predict -H "$TMP/many.csv" --format csv 2>"$TMP/pipe2.err"
  echo $? >"$TMP/pipe2.rc" ) | head -n 1 >/dev/null
check "closed pipe, SIGPIPE ignored: quiet" test ! -s "$TMP/pipe2.err"
check "closed pipe, SIGPIPE ignored: status 0 or 141" \
    sh -c 'rc=$(cat "$1"); [ "$rc" = 0 ] || [ "$rc" = 141 ]' sh "$TMP/pipe2.rc"
# A full disk is still an error (exit 4, named).
if [ -w /dev/full ]; then
	expect_err "stdout on a full disk: exit 4" 4 \
	    "dlplan: cannot write standard output: No space left on device" -- \
	    sh -c 'exec "$@" >/dev/full' sh "$DLPLAN" model --preset gpt2-xl
else
	skip "stdout on a full disk: exit 4" "no /dev/full"
fi

# --- did you mean ------------------------------------------------------
expect_err "command typo: suggestion" 1 \
    "dlplan: unknown command 'plna' (did you mean 'plan'?)" -- dlplan plna
expect_err "command typo, one letter off" 1 \
    "dlplan: unknown command 'evl' (did you mean 'eval'?)" -- dlplan evl
expect_err "unknown command: no suggestion when far" 1 \
    "dlplan: unknown command 'frobnicate'" -- dlplan frobnicate
expect_err "option typo: suggestion" 1 \
    "dlplan: unknown option '--formt' (did you mean '--format'?)" -- \
    dlplan check --formt json
expect_err "option with swapped letters" 1 \
    "dlplan: unknown option '--hroizon' (did you mean '--horizon'?)" -- \
    dlplan predict -H x --hroizon 2
expect_err "unknown option: no suggestion when far" 1 \
    "dlplan: unknown option '--zzzzzz'" -- dlplan plan --zzzzzz

# --- every JSON output names its schema ---------------------------------
dlplan check -c datasets/clusters/two-dc --format json >"$TMP/c.json" 2>&1
check "check json has a schema" /usr/bin/python3 -c "
import json, sys
sys.exit(0 if json.load(open('$TMP/c.json'))['schema'] == 'dlplan.check/1'
    else 1)"

# --- model --format json, model -h --------------------------------------
dlplan model --preset llama2-7b >"$TMP/m.csv" 2>&1
dlplan model --preset llama2-7b --format json >"$TMP/m.json" 2>&1
check "model json: schema, architecture, and the csv rows exactly" \
    /usr/bin/python3 -c "
import csv, json, sys
j = json.load(open('$TMP/m.json'))
rows = list(csv.DictReader(l for l in open('$TMP/m.csv')
                           if not l.startswith('#')))
ok = (j['schema'] == 'dlplan.model/1' and j['family'] == 'llama' and
      j['preset'] == 'llama2-7b' and j['architecture']['layers'] == 32 and
      j['totals']['rows'] == len(rows) == len(j['rows']))
for r, x in zip(rows, j['rows']):
    ok = ok and r['layer'] == x['layer'] and all(
        float(r[k]) == x[k] for k in ('fwd_gflop', 'bwd_gflop', 'params_m',
                                      'act_mb', 'mem_mb', 'tp_mb'))
ok = ok and abs(j['totals']['params_m'] -
                sum(float(r['params_m']) for r in rows)) < 1e-6
sys.exit(0 if ok else 1)"
dlplan model -h >"$TMP/mh.txt" 2>&1
for p in gpt2-xl gpt3-175b llama2-7b llama2-13b llama2-70b bert-large \
    resnet50; do
	check "model -h lists preset $p" grep -q "^  $p " "$TMP/mh.txt"
done
expect_err "model: unknown format" 1 \
    "dlplan: option '--format': 'xml' is not one of csv|summary|json" -- \
    dlplan model --preset gpt2-xl --format xml

# --- one output, one writer ---------------------------------------------
ONE="-c $DATA/eval/one -m $DATA/eval/m4.csv --global-batch 6"
dlplan plan $ONE -q -o "$TMP/lk" >/dev/null 2>&1
check "no lock file left after a run" test ! -e "$TMP/lk/.dlplan.lock"
cp "$TMP/lk/plan.json" "$TMP/lk.before"
: >"$TMP/lk/.dlplan.lock"
# A live writer holds its lock file with flock(2); flock(1) stands in.
flock -o "$TMP/lk/.dlplan.lock" sleep 30 &
_holder=$!
sleep 0.3
expect_err "a second writer fails, naming the lock" 4 \
    "dlplan: $TMP/lk/.dlplan.lock: another dlplan is writing to '$TMP/lk'" -- \
    dlplan plan $ONE --mfu 0.5 -o "$TMP/lk"
check "locked: the output is untouched" cmp "$TMP/lk/plan.json" \
    "$TMP/lk.before"
check "locked: the other writer's lock stays" test -e "$TMP/lk/.dlplan.lock"
expect_err "emit into a locked directory" 4 \
    "dlplan: $TMP/lk/.dlplan.lock: another dlplan is writing to '$TMP/lk'" -- \
    dlplan emit "$TMP/lk/plan.json" --launcher hostfile \
    -o "$TMP/lk" -- x
kill $_holder 2>/dev/null
wait $_holder 2>/dev/null || :
# The holder gone, its lock file is stale: taken over with a warning.
expect_err "a stale lock is taken over, with a warning" 0 \
    "dlplan: warning: $TMP/lk/.dlplan.lock: took over a stale lock (the dlplan that left it is gone)" -- \
    dlplan plan $ONE --mfu 0.5 -o "$TMP/lk"
check "... and removed at the end" test ! -e "$TMP/lk/.dlplan.lock"
# A run killed with SIGKILL (or by SIGXFSZ in older versions) leaves its
# lock file behind: the next run must not be blocked by it.
"$DLPLAN" schedule -c datasets/clusters/philly-64 \
    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/lk9" -q &
_p=$!
while [ ! -e "$TMP/lk9/.dlplan.lock" ] && kill -0 $_p 2>/dev/null; do
	sleep 0.01
done
kill -KILL $_p 2>/dev/null
wait $_p 2>/dev/null
check "after kill -9, the next run into the directory succeeds" \
    "$DLPLAN" schedule -c datasets/clusters/philly-64 \
    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/lk9" -q

# Past a file size limit the write fails (exit 4), not the run by SIGXFSZ:
# no temporary file, no lock left to block the next run.
mkdir -p "$TMP/fsz"
(ulimit -f 8; exec "$DLPLAN" schedule -c datasets/clusters/philly-64 \
    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/fsz" -q) \
    >/dev/null 2>"$TMP/fsz.err"
_rc=$?
check "ulimit -f: exit 4 (not killed by SIGXFSZ), said on stderr" sh -c \
    "test $_rc -eq 4 && grep -q 'File too large' '$TMP/fsz.err'"
check "ulimit -f: no temporary file or lock left" sh -c \
    "! find '$TMP/fsz' -name '*.tmp-*' -o -name .dlplan.lock | grep -q ."

# SIGTERM while plan.json is being renamed (strace holds every rename for
# 2 s): the plan files and the launch files are one output, so the run
# finishes all the renames and only then dies of the signal; never a new
# plan.json beside the old launch/ files.
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "SIGTERM during plan --launcher: one output" "not under $DLPLAN_WRAP"
elif ! command -v strace >/dev/null 2>&1 ||
    ! strace -o /dev/null true 2>/dev/null; then
	skip "SIGTERM during plan --launcher: one output" "needs strace (and ptrace)"
else
	mkdir -p "$TMP/one/launch"
	for f in plan.json plan.csv launch/plan.sbatch launch/worker.sh; do
		echo old >"$TMP/one/$f"
	done
	strace -f -o "$TMP/one.trace" -e trace=rename,renameat,renameat2 \
	    -e inject=rename,renameat,renameat2:delay_exit=2000000 \
	    sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$TMP/one.pid" \
	    "$DLPLAN" plan $ONE -q -o "$TMP/one" --launcher slurm -- \
	    python3 train.py >/dev/null 2>&1 &
	_spid=$!
	sleep 1
	kill -s TERM "$(cat "$TMP/one.pid")" 2>/dev/null
	wait "$_spid"
	_rc=$?
	_ren=$(grep -c 'rename' "$TMP/one.trace")
	if [ "$_ren" -lt 1 ]; then
		skip "SIGTERM during plan --launcher: one output" \
		    "the signal came too early"
	elif [ "$_rc" -eq 143 ] && grep -q '"schema"' "$TMP/one/plan.json" &&
	    grep -q '^#SBATCH' "$TMP/one/launch/plan.sbatch" &&
	    ! grep -qx old "$TMP/one/launch/worker.sh"; then
		t_ok "SIGTERM during plan --launcher: one output, exit 143"
	else
		t_notok "SIGTERM during plan --launcher: one output, exit 143" \
		    "status $_rc, $_ren renames" \
		    "plan.json: $(head -c 40 "$TMP/one/plan.json")" \
		    "plan.sbatch: $(head -c 40 "$TMP/one/launch/plan.sbatch")"
	fi
	check "SIGTERM: no temporary or lock file left" \
	    test -z "$(find "$TMP/one" -name '*.tmp-*' -o -name .dlplan.lock)"
fi

# -v: progress of the search on stderr, never on stdout, and the same plan.
TWO="-c $SRCDIR/datasets/clusters/two-dc -m $SRCDIR/datasets/models/llama2-7b.csv --global-batch 256"
dlplan plan $TWO -o "$TMP/pv0" >"$TMP/pv0.out" 2>"$TMP/pv0.err"
dlplan plan $TWO -v -o "$TMP/pv1" >"$TMP/pv1.out" 2>"$TMP/pv1.err"
dlplan plan $TWO -v -j 2 -o "$TMP/pv2" >"$TMP/pv2.out" 2>"$TMP/pv2.err"
check "-v: a last progress line on stderr" \
    grep -q '^dlplan: search: done, [0-9]* of [0-9]* jobs.*best T .*bound ' \
    "$TMP/pv1.err"
check "-v -j 2: progress too" grep -q '^dlplan: search: done' "$TMP/pv2.err"
check "no -v, stderr not a terminal: no progress" \
    sh -c "! grep -q 'search:' '$TMP/pv0.err'"
check "-v: stdout unchanged" sh -c "grep -v '^search \\|^wrote ' '$TMP/pv0.out' >'$TMP/a'
    grep -v '^search \\|^wrote ' '$TMP/pv1.out' >'$TMP/b'; cmp -s '$TMP/a' '$TMP/b'"
check "-v, -j 2: the same plan" sh -c "
    for d in pv1 pv2; do
	grep -v '\"time_s\"' '$TMP/'\$d/plan.json >'$TMP/'\$d.j
    done
    grep -v '\"time_s\"' '$TMP/pv0/plan.json' | cmp -s - '$TMP/pv1.j' &&
    cmp -s '$TMP/pv1.j' '$TMP/pv2.j'"
