# Output sets: a command that writes several files replaces
# the directory's previous set as one unit, removes the files of that set
# it no longer writes (those .dlplan-files lists), and leaves the
# directory as it was on failure or signal.

C=datasets/clusters/two-dc
M=datasets/models/llama2-7b.csv
# state DIR: every path below DIR with its checksum, one per line.
state() {
	(cd "$1" && find . -print | LC_ALL=C sort | while read -r f; do
		if [ -f "$f" ]; then
			printf '%s %s\n' "$f" "$(cksum <"$f")"
		else
			printf '%s\n' "$f"
		fi
	done)
}

# --- plan --launcher: a failing launcher step changes nothing ----------
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    -o "$TMP/r" --launcher torchrun -- python3 train.py >/dev/null 2>&1
check "plan --launcher torchrun: a manifest lists the set" sh -c "
    grep -qx 'launch/worker.sh' '$TMP/r/.dlplan-files' &&
    grep -qx 'plan.json' '$TMP/r/.dlplan-files'"
state "$TMP/r" >"$TMP/before"
dlplan plan -c $C -m $M --global-batch 96 --micro-batch 2 --horizon 3 \
    -o "$TMP/r" --launcher hostfile -- python3 train.py >/dev/null 2>&1
_rc=$?
state "$TMP/r" >"$TMP/after"
check "plan --launcher hostfile that cannot place the ranks: exit 3" \
    test "$_rc" -eq 3
check "... and the directory is as it was (plan.json too)" \
    cmp "$TMP/before" "$TMP/after"
dlplan plan -c $C -m $M --global-batch 96 --micro-batch 2 --horizon 3 \
    -o "$TMP/new/sub" --launcher hostfile -- python3 train.py >/dev/null 2>&1
check "... a directory it made is gone again" test ! -e "$TMP/new"

# --- stale launch files go ----------------------------------------------
# Re-planning on fewer nodes: the torchrun scripts of the nodes the new
# plan does not use are removed; so is ds_config.json after deepspeed.
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    --runtime deepspeed -o "$TMP/r" --launcher deepspeed -- python3 train.py \
    >/dev/null 2>&1
check "deepspeed set written" test -f "$TMP/r/launch/ds_config.json"
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    --runtime megatron -o "$TMP/r" --launcher megatron -- python3 train.py \
    >/dev/null 2>&1
check "after megatron, no ds_config.json" test ! -e "$TMP/r/launch/ds_config.json"
check "every torchrun script names a node of the new plan" sh -c "
    for s in '$TMP/r'/launch/torchrun-*.sh; do
	n=\${s##*/torchrun-}; n=\${n%.sh}
	grep -q \"\\\"node\\\": \\\"\$n\\\"\" '$TMP/r/plan.json' || exit 1
    done"
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    -o "$TMP/r" >/dev/null 2>&1
check "plan without --launcher: the old launch files go" sh -c "
    ! ls '$TMP/r/launch/'* >/dev/null 2>&1"
# emit owns launch/ only; files dlplan did not write stay.
printf 'mine\n' >"$TMP/r/notes.txt"
mkdir -p "$TMP/r/launch" && printf 'mine\n' >"$TMP/r/launch/my.sh"
dlplan emit "$TMP/r/plan.json" --launcher torchrun -- python3 train.py \
    >/dev/null 2>&1
dlplan emit "$TMP/r/plan.json" --launcher slurm -- python3 train.py \
    >/dev/null 2>&1
check "emit slurm after torchrun: no torchrun script left" sh -c "
    ! ls '$TMP/r'/launch/torchrun-*.sh >/dev/null 2>&1"
check "emit keeps the plan and files dlplan did not write" test \
    -f "$TMP/r/plan.json" -a -f "$TMP/r/notes.txt" -a -f "$TMP/r/launch/my.sh"

# --- a hostile manifest removes nothing outside --------------------------
mkdir -p "$TMP/h/out" "$TMP/h/o2"
printf 'keep\n' >"$TMP/h/victim"
printf 'keep\n' >"$TMP/h/o2/victim"
ln -s ../o2 "$TMP/h/out/link"
printf '%s\n' '../victim' "$TMP/h/victim" 'link/victim' 'launch/../../victim' \
    >"$TMP/h/out/.dlplan-files"
cp "$TMP/r/plan.json" "$TMP/r/plan.csv" "$TMP/h/out/" 2>/dev/null
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    -o "$TMP/h/out" >/dev/null 2>&1
check "hostile manifest: nothing outside removed" test -f "$TMP/h/victim" \
    -a -f "$TMP/h/o2/victim"

# --- schedule: a second run keeps none of the first's plans -------------
J=$TMP/jobs.csv
awk -F, 'NR <= 3 { print; next } { r[n++] = $0 }
    END { for (k = 0; k < 5; k++) for (i = 0; i < n; i++) {
	sub(/^[^,]*/, sprintf("k%d-%s", k, substr(r[i], 1, index(r[i], ",") - 1)), r[i])
	print r[i] } }' datasets/jobs/philly-gavel-120.csv >"$J"
dlplan schedule -c datasets/clusters/philly-64 --jobs "$J" -o "$TMP/s" -q
n1=$(ls "$TMP/s/plans" | wc -l)
dlplan schedule -c datasets/clusters/philly-64 \
    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/s" -q
n2=$(ls "$TMP/s/plans" | wc -l)
# named DIR: the plan files DIR/jobs.csv names, one a line, sorted.
named() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "plan") c = i
		next } $c != "" { sub(/^plans\//, "", $c); print $c }' \
	    "$1/jobs.csv" | sort -u
}
named "$TMP/s" >"$TMP/s.named"
check "schedule again: only the second run's plans ($n1, then $n2)" \
    sh -c "test $n1 -gt $n2 && ls '$TMP/s/plans' | sort |
    cmp -s - '$TMP/s.named'"

# --- schedule interrupted: the old set or the new one, no temporaries ----
state "$TMP/s" >"$TMP/s.old"
bad=0 new=0 same=0
for d in 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1.0 1.2 1.5; do
	"$DLPLAN" schedule -c datasets/clusters/philly-64 --jobs "$J" \
	    -o "$TMP/s" -q >/dev/null 2>&1 &
	_p=$!
	sleep $d
	kill -INT $_p 2>/dev/null
	wait $_p
	if find "$TMP/s" -name '*.tmp-*' -o -name '*.old-*' -o \
	    -name .dlplan.lock | grep -q .; then
		bad=$((bad + 1))
		find "$TMP/s" -name '*.tmp-*' -o -name '*.old-*' -o -name .dlplan.lock | head -3 | sed 's/^/# DEBUG /'
	elif state "$TMP/s" | cmp -s - "$TMP/s.old"; then
		same=$((same + 1))
	elif [ "$(ls "$TMP/s/plans" | wc -l)" -eq "$n1" ]; then
		new=$((new + 1))
		# Back to the old set for the next try.
		dlplan schedule -c datasets/clusters/philly-64 \
		    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/s" -q
		state "$TMP/s" >"$TMP/s.old"
	else
		bad=$((bad + 1))
		echo "# DEBUG $d: $(ls "$TMP/s/plans" | wc -l) plans"
		state "$TMP/s" | diff - "$TMP/s.old" | head -5 | sed 's/^/# /'
	fi
done
echo "# schedule interrupted 12 times: $same left as they were, $new complete, $bad mixed or with temporaries"
check "schedule interrupted: never a mixed set or a temporary file" \
    test "$bad" -eq 0

# killed_at SYSCALL WHEN DIR: the 600 jobs' schedule in DIR, then the
# 120 jobs' schedule into DIR killed (SIGKILL, by strace) at the WHEN-th
# call of SYSCALL.
killed_at() {
	dlplan schedule -c datasets/clusters/philly-64 --jobs "$J" -o "$3" -q
	strace -f -o /dev/null -e trace="$1" \
	    -e inject="$1":signal=SIGKILL:when="$2" "$DLPLAN" schedule \
	    -c datasets/clusters/philly-64 \
	    --jobs datasets/jobs/philly-gavel-120.csv -o "$3" -q \
	    >/dev/null 2>&1
}

# --- killed between the new set and the removal of the old one ----------
# strace kills the run at its first unlinkat(), the removal of the first
# file of the old set: the new manifest still lists the old files, and
# the next run removes them.
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "kill -9 before the old set is removed" "not under $DLPLAN_WRAP"
elif ! strace -o /dev/null true 2>/dev/null; then
	skip "kill -9 before the old set is removed" "needs strace (and ptrace)"
else
	killed_at unlinkat 1 "$TMP/k9"
	# The 600 jobs' last plan, which the 120 jobs' set lacks.
	old=plans/p$n1.json
	check "killed before the removal: the journal is left to finish it" \
	    grep -qx "rm $old" "$TMP/k9/.dlplan-set"
	check "killed before the removal: the manifest lists the old plans" \
	    grep -qx "$old" "$TMP/k9/.dlplan-files"
	dlplan schedule -c datasets/clusters/philly-64 \
	    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/k9" -q
	check "... and the next run removes them ($n2 plans left)" \
	    test "$(ls "$TMP/k9/plans" | wc -l)" -eq "$n2"
fi

# --- an output never replaces an input of the same run -----------------
mkdir -p "$TMP/in/models"
dlplan schedule -c datasets/clusters/philly-64 \
    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/in" -q
cp datasets/jobs/philly-gavel-120.csv "$TMP/in/jobs.csv"
state "$TMP/in" >"$TMP/in.before"
expect_err "schedule --jobs DIR/jobs.csv -o DIR: refused" 1 \
    "dlplan: $TMP/in/jobs.csv: is an input of this run and would be overwritten (choose another output)" -- \
    dlplan schedule -c datasets/clusters/philly-64 --jobs "$TMP/in/jobs.csv" \
    -o "$TMP/in"
state "$TMP/in" >"$TMP/in.after"
check "... and the directory is as it was" cmp "$TMP/in.before" \
    "$TMP/in.after"
# A job's model file in DIR/models/ with a preset's name: a job naming
# that file reads it; the preset another job names must not replace it.
dlplan model --preset resnet50 -o "$TMP/mine.csv" -q
printf '# mine\n' >>"$TMP/mine.csv"
cp "$TMP/mine.csv" "$TMP/in/models/resnet50.csv"
{
	echo 'job,arrival_s,model,global_batch,micro_batch,iterations,min_gpus,max_gpus,weight'
	echo "a,0,resnet50,64,4,10,1,1,1"
	echo "b,0,$TMP/in/models/resnet50.csv,64,4,10,1,1,1"
} >"$TMP/j2.csv"
dlplan schedule -c datasets/clusters/philly-64 --jobs "$TMP/j2.csv" \
    -o "$TMP/in" -q >/dev/null 2>&1
check "schedule: a preset never replaces a user's model of the run" cmp \
    "$TMP/mine.csv" "$TMP/in/models/resnet50.csv"

# --- killed in the middle of the renames: the next run finishes them ----
# strace kills the run at its 60th rename(), part of the new set renamed:
# the journal .dlplan-set lists the rest, and the next run into the
# directory (here one that then fails) renames them first.
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "kill -9 among the renames" "not under $DLPLAN_WRAP"
elif ! strace -o /dev/null true 2>/dev/null; then
	skip "kill -9 among the renames" "needs strace (and ptrace)"
else
	dlplan schedule -c datasets/clusters/philly-64 \
	    --jobs datasets/jobs/philly-gavel-120.csv -o "$TMP/ref" -q
	killed_at rename 60 "$TMP/mid"
	check "killed among the renames: the journal is left" \
	    test -f "$TMP/mid/.dlplan-set"
	dlplan plan -c $C -m $M --global-batch 96 --micro-batch 2 \
	    --horizon 3 -o "$TMP/mid" --launcher hostfile -- python3 train.py \
	    >/dev/null 2>"$TMP/mid.err"
	check "... the next run says it finishes the set" grep -qx \
	    "dlplan: warning: $TMP/mid/.dlplan-set: finished renaming the output set of a run that was killed" \
	    "$TMP/mid.err"
	state "$TMP/mid" | grep -v '^./.dlplan-files' >"$TMP/mid.state"
	state "$TMP/ref" | grep -v '^./.dlplan-files' >"$TMP/ref.state"
	check "... and the directory holds the new set, all of it, only it" \
	    cmp "$TMP/mid.state" "$TMP/ref.state"
fi

# --- temporary files of killed runs: the next writer removes them --------
# A run killed with SIGKILL cannot remove its temporary files; the next
# run that holds the directory's lock removes those named like dlplan's
# (NAME.tmp-XXXXXX, NAME.old-XXXXXX) that no live dlplan holds locked,
# in the directory and in the set's subdirectories.  Names of another
# shape stay, and so does a temporary file its writer still holds.
E=$TMP/sw
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    -o "$E" --launcher torchrun -- python3 train.py >/dev/null 2>&1
for f in .dlplan-files.tmp-Ab3dE9 .dlplan.lock.tmp-x0Y1z2 plan.json.old-QQ7rr8 \
    launch/worker.sh.tmp-Zz9Qq1 launch/torchrun-gone.sh.tmp-000000; do
	printf 'stray\n' >"$E/$f"
done
for f in notes.tmp-1 plan.json.tmp-abc plan.json.tmp-abcdefg \
    plan.json.tmp-ab_d.f launch/my.sh.tmp-12345 launch/.tmp-abcdef \
    .tmp-Ab3dE9; do
	printf 'mine\n' >"$E/$f"
done
mkdir "$E/dir.tmp-aaaaaa"
ln -s ../plan.json "$E/launch/link.tmp-bbbbbb"
printf 'live\n' >"$E/launch/worker.sh.tmp-L1veL1"
# A live writer: the subshell locks the file on its descriptor 9 and
# becomes sleep, the only holder of that lock.
(flock 9 && exec sleep 30) 9<"$E/launch/worker.sh.tmp-L1veL1" \
    >/dev/null 2>&1 &
_fl=$!
# Wait until the holder has its lock (flock -n fails while it is held).
_i=0
while flock -n "$E/launch/worker.sh.tmp-L1veL1" true && [ $_i -lt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
dlplan emit "$E/plan.json" --launcher slurm -o "$E" -- python3 train.py \
    >/dev/null 2>&1
check "emit -o: the strays of killed runs are gone" sh -c "
    cd '$E' && test -z \"\$(ls -A . launch | grep -E '(tmp|old)-[A-Za-z0-9]{6}\$' |
    grep -v -e '^notes' -e 'abcdefg\$' -e '^dir.tmp' -e '^link.tmp' -e '^\\.tmp-' -e L1veL1)\""
check "... names of another shape, a directory and a link stay" sh -c "
    cd '$E' && test -f notes.tmp-1 -a -f plan.json.tmp-abc -a \
    -f plan.json.tmp-abcdefg -a -f plan.json.tmp-ab_d.f -a \
    -f launch/my.sh.tmp-12345 -a -f launch/.tmp-abcdef -a -f .tmp-Ab3dE9 -a \
    -d dir.tmp-aaaaaa -a -L launch/link.tmp-bbbbbb -a -f plan.json"
check "... and so does a temporary file a live writer holds locked" \
    test -f "$E/launch/worker.sh.tmp-L1veL1"
kill "$_fl" 2>/dev/null
wait "$_fl" 2>/dev/null
printf 'stray\n' >"$E/plan.csv.tmp-Pp0Pp0"
dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 --horizon 3 \
    -o "$E" >/dev/null 2>&1
check "plan -o: a stray gone, once its writer is gone too" sh -c "
    test ! -e '$E/plan.csv.tmp-Pp0Pp0' -a ! -e '$E/launch/worker.sh.tmp-L1veL1' &&
    test -f '$E/notes.tmp-1' -a -f '$E/launch/my.sh.tmp-12345'"

# --- kill -9 at random moments: old set or new, and nothing left --------
# emit -o, plan --budget -o and replan -o.  Two sets A and B alternate
# in one directory; each write of the other set is killed (SIGKILL, the
# dlplan process itself) after a random delay, then the directory must
# hold the old set or the new one, unless the journal says a rename was
# under way (the next run finishes it); the next run of that set must
# succeed and leave exactly that set, with no temporary file.
# DLPLAN_OUTSETS_KILLS sets the tries per command.
KILLS=${DLPLAN_OUTSETS_KILLS:-45}
# sstate DIR: the files below DIR, each named and then its lines, without
# the lock and the temporary files, and with the solver's wall time (the
# one field that differs run to run) blanked.
sstate() {
	(cd "$1" && find . -type f ! -name .dlplan.lock \
	    ! -name '*.tmp-??????' ! -name '*.old-??????' -print |
	    LC_ALL=C sort | xargs awk 'FNR == 1 { print "== " FILENAME }
		{ gsub(/"time_s": [0-9.e+-]*/, "\"time_s\": T"); print }')
}
# strays DIR: the temporary files below DIR (dlplan's pattern).
strays() {
	find "$1" -name '*.tmp-*' -o -name '*.old-*' | grep -cE \
	    '\.(tmp|old)-[A-Za-z0-9]{6}$'
}
# killloop NAME BASE SETA SETB: BASE is a directory to start from; SETA
# and SETB are commands writing a set into the directory "$K".
killloop() {
	_name=$1 _base=$2 _a=$3 _b=$4
	rm -rf "$TMP/kk"
	cp -R "$_base" "$TMP/kk"
	K=$TMP/kk
	eval "$_a" >/dev/null 2>&1; sstate "$K" >"$TMP/kA"
	# How long a run takes here: the kills fall anywhere within it.
	_r0=$(date +%s%N)
	eval "$_b" >/dev/null 2>&1
	_r1=$(date +%s%N)
	sstate "$K" >"$TMP/kB"
	eval "$_a" >/dev/null 2>&1; sstate "$K" >"$TMP/kA2"
	check "$_name: the two sets differ, and a set is the same each time" \
	    sh -c "! cmp -s '$TMP/kA' '$TMP/kB' && cmp '$TMP/kA' '$TMP/kA2'"
	_t0=$(date +%s)
	_cur=A _kills=0 _mixed=0 _fail=0 _left=0 _journal=0
	awk -v n="$KILLS" -v s="$$" -v t="$(((_r1 - _r0) / 1000))" 'BEGIN {
	    srand(s); if (t < 1000 || t > 1000000) t = 50000
	    for (i = 0; i < n; i++) printf "%.4f\n", rand() * t * 1.2e-6 }' \
	    >"$TMP/kdelays"
	while read -r _d; do
		if [ $_cur = A ]; then _nx=B _cmd=$_b; else _nx=A _cmd=$_a; fi
		# The command itself in the background: $! is dlplan.
		eval "$_cmd >/dev/null 2>&1 &"
		_p=$!
		sleep "$_d"
		kill -KILL "$_p" 2>/dev/null
		{ wait "$_p"; } 2>/dev/null
		[ $? -eq 137 ] && _kills=$((_kills + 1))
		if [ -f "$K/.dlplan-set" ]; then
			_journal=$((_journal + 1))
		else
			sstate "$K" >"$TMP/know"
			if ! cmp -s "$TMP/know" "$TMP/k$_cur" &&
			    ! cmp -s "$TMP/know" "$TMP/k$_nx"; then
				_mixed=$((_mixed + 1))
				diff "$TMP/k$_cur" "$TMP/know" | head -4 |
				    sed 's/^/# mixed: /'
			fi
		fi
		if ! eval "$_cmd" >/dev/null 2>"$TMP/kerr"; then
			_fail=$((_fail + 1))
			head -2 "$TMP/kerr" | sed 's/^/# failed: /'
		elif ! sstate "$K" | cmp -s - "$TMP/k$_nx"; then
			_mixed=$((_mixed + 1))
		fi
		_s=$(strays "$K")
		_left=$((_left + _s))
		[ -e "$K/.dlplan.lock" ] && _left=$((_left + 1))
		_cur=$_nx
	done <"$TMP/kdelays"
	echo "# $_name: $KILLS tries, $_kills killed, $_journal left a journal, $_mixed mixed, $_fail next runs failed, $_left temporary files left, $(($(date +%s) - _t0)) s"
	check "$_name killed $_kills times: never mixed" test "$_mixed" -eq 0
	check "... every next run succeeds" test "$_fail" -eq 0
	check "... and leaves no temporary file" test "$_left" -eq 0
}
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "kill -9 loops" "not under $DLPLAN_WRAP"
else
	rm -rf "$TMP/kbase"
	dlplan plan -c $C -m $M --global-batch 256 --micro-batch 2 \
	    --horizon 3 -o "$TMP/kbase" >/dev/null 2>&1
	killloop "emit -o" "$TMP/kbase" \
	    '"$DLPLAN" emit "$K/plan.json" --launcher torchrun -o "$K" -- python3 train.py' \
	    '"$DLPLAN" emit "$K/plan.json" --launcher slurm -o "$K" -- python3 train.py'
	mkdir -p "$TMP/kempty"
	BH="-c tests/cli/data/budget/hand -m tests/cli/data/budget/model.csv --global-batch 8 --budget 5 --tradeoff 1000 -q"
	killloop "plan --budget -o" "$TMP/kempty" \
	    '"$DLPLAN" plan $BH --slots 3 -o "$K"' \
	    '"$DLPLAN" plan $BH --slots 2 -o "$K"'
	# replan -o: the parent plan lies outside the directory; two step
	# logs (c twice as slow, and as planned) give two different sets.
	RP=tests/cli/data/replan/dp3.json
	printf 'rank,step,seconds\n' >"$TMP/kslow.csv"
	cp "$TMP/kslow.csv" "$TMP/ksame.csv"
	for _s in 0 1 2 3 4 5 6 7 8 9; do
		printf '0,%d,0.06\n1,%d,0.06\n2,%d,0.12\n' $_s $_s $_s \
		    >>"$TMP/kslow.csv"
		printf '0,%d,0.06\n1,%d,0.06\n2,%d,0.06\n' $_s $_s $_s \
		    >>"$TMP/ksame.csv"
	done
	killloop "replan -o" "$TMP/kempty" \
	    '"$DLPLAN" replan $RP --observed "$TMP/kslow.csv" -o "$K"' \
	    '"$DLPLAN" replan $RP --observed "$TMP/ksame.csv" -o "$K"'
	# schedule -o: 27 jobs' plans, then 6 other jobs' (the first set's
	# extra plans must go), on geo-8.
	SD=tests/cli/data/schedule
	killloop "schedule -o" "$TMP/kempty" \
	    '"$DLPLAN" schedule -c datasets/clusters/geo-8 --jobs $SD/geo-mix.csv -q -o "$K"' \
	    '"$DLPLAN" schedule -c datasets/clusters/geo-8 --jobs $SD/light.csv -q -o "$K"'
fi
