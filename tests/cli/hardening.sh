# Hardening: faults while writing outputs, interrupted solves, and huge or
# hostile inputs.  Every failure must be the documented exit status (2
# bad input, 4 system or I/O error, 128+N for a fatal signal N) with a
# "dlplan: " message, and must leave no partial or temporary file; no
# input may crash dlplan, hang it, or make it take unbounded memory.
#
# Root-only faults (a directory nobody may write, mounted read-only and
# full file systems) skip with the reason when they cannot be set up.
# The time and memory bounds are for the optimised build: under
# DLPLAN_WRAP (valgrind) only the status and the message are checked, with
# 20 times the time; a sanitizer build (linked with libasan) gets 5 times
# the time and 4 times the memory.  Sizes, times and peak RSS of the big
# inputs are printed as "# " lines (tests/out/hardening.tap).

ONE="-c $DATA/eval/one -m $DATA/eval/m4.csv --global-batch 6"
TWODC=datasets/clusters/two-dc
TSCALE=1 MSCALE=1 MEASURE=1
if [ -n "${DLPLAN_WRAP:-}" ]; then
	TSCALE=20 MEASURE=""
elif ldd "$DLPLAN" 2>/dev/null | grep -q libasan; then
	TSCALE=5 MSCALE=4
fi
TIMER=""
[ -x /usr/bin/time ] && [ -n "$MEASURE" ] && TIMER=/usr/bin/time

# no_leftovers NAME DIR: DIR holds no plan file and no temporary file.
no_leftovers() {
	_left=$(find "$2" \( -name 'plan.json' -o -name 'plan.csv' -o \
	    -name '*.tmp-*' \) -print 2>/dev/null | head -5)
	if [ -z "$_left" ]; then
		t_ok "$1"
	else
		t_notok "$1" "left behind: $_left"
	fi
}

# bounded NAME SECONDS MAXKB STATUSES -- CMD...: CMD ends within SECONDS
# (killed after that) with one of STATUSES ("0 2 3"), a "dlplan: "
# first line on stderr when it fails, and a peak RSS of at most MAXKB
# (scaled as said above; CMD "$DLPLAN" gets DLPLAN_WRAP in front).
# Prints "# NAME: T s, peak RSS N KB, status N"; stdout and stderr stay in
# $TMP/out and $TMP/err.
bounded() {
	_n=$1 _s=$(($2 * TSCALE)) _kb=$(($3 * MSCALE)) _ok=$4
	shift 4
	[ "$1" = -- ] && shift
	[ "$1" = "$DLPLAN" ] && set -- ${DLPLAN_WRAP:-} "$@"
	_t0=$(date +%s.%N)
	if [ -n "$TIMER" ]; then
		$TIMER -f %M -o "$TMP/rss" timeout -s KILL "$_s" "$@" \
		    >"$TMP/out" 2>"$TMP/err" </dev/null
	else
		timeout -s KILL "$_s" "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	fi
	_rc=$?
	_t1=$(date +%s.%N)
	_rss=0
	[ -n "$TIMER" ] && _rss=$(tail -n 1 "$TMP/rss" | tr -dc 0-9)
	[ -n "$_rss" ] || _rss=0
	_el=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.2f", b - a }')
	_shown="$_rss KB"
	[ -n "$TIMER" ] || _shown="not measured"
	printf '# %s: %s s, peak RSS %s, status %s\n' "$_n" "$_el" \
	    "$_shown" "$_rc"
	_why=""
	case " $_ok " in
	*" $_rc "*) ;;
	*) _why="exit status $_rc, expected one of: $_ok" ;;
	esac
	[ "$_rc" -eq 137 ] && _why="killed after $_s s (hang?)"
	if [ "$_rc" -ne 0 ] && [ "$_rc" -ne 137 ] &&
	    ! head -n 1 "$TMP/err" | grep -q '^dlplan: '; then
		_why="$_why${_why:+; }no 'dlplan: ' message"
	fi
	[ "${_rss:-0}" -le "$_kb" ] ||
	    _why="$_why${_why:+; }peak RSS $_rss KB > $_kb KB"
	if [ -z "$_why" ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "$_why" "stderr: $(head -c 300 "$TMP/err")"
	fi
}

# A plan and a step log for the commands that read one (emit, replan,
# eval --svg); in $TMP/pub, which user nobody may read below.
mkdir -p "$TMP/pub"
dlplan plan $ONE -q -o "$TMP/pub/src" >/dev/null 2>&1
SRCPLAN=$TMP/pub/src/plan.json
awk 'BEGIN { print "rank,step,seconds"; for (s = 0; s < 10; s++)
    for (r = 0; r < 4; r++) printf "%d,%d,%.3f\n", r, s, 0.3 + r * 0.1 }' \
    >"$TMP/pub/steps.csv"
STEPS=$TMP/pub/steps.csv
check "a source plan for emit, replan and eval" test -s "$SRCPLAN"

# writers DIR: run every command that writes files with its output in
# DIR (emit -o DIR/e, replan -o DIR/r, model -o DIR/m.csv, eval --svg
# DIR/x.svg); each line of $TMP/writers is "NAME STATUS FIRST-LINE".
# CMD_PREFIX goes in front of dlplan (e.g. setpriv).
writers() {
	: >"$TMP/writers"
	_wd=$1
	for _w in emit replan model svg; do
		case $_w in
		emit) set -- emit "$SRCPLAN" --launcher slurm \
		    --script t.py -o "$_wd/e" ;;
		replan) set -- replan "$SRCPLAN" \
		    --observed "$STEPS" -q -o "$_wd/r" ;;
		model) set -- model llama --preset llama2-7b -o "$_wd/m.csv" ;;
		svg) set -- eval "$SRCPLAN" --svg "$_wd/x.svg" ;;
		esac
		${CMD_PREFIX:-} ${DLPLAN_WRAP:-} "$DLPLAN" "$@" \
		    >/dev/null 2>"$TMP/w.err" </dev/null
		echo "$_w $? $(head -n 1 "$TMP/w.err")" >>"$TMP/writers"
	done
}

# expect_writers NAME DIR MESSAGE: after writers DIR, every command
# exited 4 with "dlplan: DIR/...: ...: MESSAGE", and DIR holds no file
# (directories they made may stay).
expect_writers() {
	_why=""
	while read -r _w _rc _msg; do
		case "$_rc $_msg" in
		"4 dlplan: $2/"*": $3") ;;
		*) _why="$_why${_why:+; }$_w: status $_rc, '$_msg'" ;;
		esac
	done <"$TMP/writers"
	_left=$(find "$2" -type f | head -5)
	[ -z "$_left" ] || _why="$_why${_why:+; }left behind: $_left"
	if [ -z "$_why" ]; then
		t_ok "$1"
	else
		t_notok "$1" "$_why"
	fi
}

# --- output directory not writable -------------------------------------
: >"$TMP/file"
expect_err "-o under a regular file" 4 \
    "dlplan: $TMP/file/out: cannot create directory: Not a directory" -- \
    dlplan plan $ONE -o "$TMP/file/out"
check "-o under a regular file: file untouched" test ! -s "$TMP/file"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	skip "-o in a directory nobody may write" "needs root and setpriv"
else
	mkdir -p "$TMP/pub/locked"
	chmod 755 "$TMP" "$TMP/pub" "$TMP/pub/locked"
	_as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	if ! $_as_nobody test -r "$DATA/eval/m4.csv"; then
		skip "-o in a directory nobody may write" \
		    "user nobody cannot read $DATA"
	else
		expect_err "-o in a directory nobody may write" 4 \
		    "dlplan: $TMP/pub/locked/.dlplan.lock: cannot create lock file: Permission denied" -- \
		    $_as_nobody ${DLPLAN_WRAP:-} "$DLPLAN" plan $ONE \
		    -o "$TMP/pub/locked"
		expect_err "-o below a directory nobody may write" 4 \
		    "dlplan: $TMP/pub/locked/new: cannot create directory: Permission denied" -- \
		    $_as_nobody ${DLPLAN_WRAP:-} "$DLPLAN" plan $ONE \
		    -o "$TMP/pub/locked/new"
		expect_empty_dir "nothing written where nobody may write" \
		    "$TMP/pub/locked"
		CMD_PREFIX=$_as_nobody writers "$TMP/pub/locked"
		expect_writers "emit, replan, model, eval --svg where nobody may write" \
		    "$TMP/pub/locked" "Permission denied"
	fi
	chmod 700 "$TMP"
fi

# tmpfs DIR OPTIONS: mount a small tmpfs (root only); fails quietly.
# The mounts go before $TMP does, however the script ends.
trap 'umount "$TMP/ro" "$TMP/full" 2>/dev/null; rm -rf "$TMP"' EXIT
tmpfs() {
	mkdir -p "$1" && [ "$(id -u)" -eq 0 ] &&
	    mount -t tmpfs -o "$2" dlplan-test "$1" 2>/dev/null
}

if tmpfs "$TMP/ro" ro,size=64k; then
	expect_err "-o on a read-only file system" 4 \
	    "dlplan: $TMP/ro/out: cannot create directory: Read-only file system" -- \
	    dlplan plan $ONE -o "$TMP/ro/out"
	expect_empty_dir "read-only file system: nothing written" "$TMP/ro"
	writers "$TMP/ro"
	expect_writers "emit, replan, model, eval --svg on a read-only file system" \
	    "$TMP/ro" "Read-only file system"
	umount "$TMP/ro"
else
	skip "-o on a read-only file system" "cannot mount a tmpfs (not root?)"
fi

# --- disk full ----------------------------------------------------------
if tmpfs "$TMP/full" size=16k; then
	dd if=/dev/zero of="$TMP/full/fill" bs=1k 2>/dev/null
	mkdir "$TMP/full/out" 2>/dev/null
	expect_err "plan -o on a full file system" 4 \
	    "dlplan: $TMP/full/out/plan.json: cannot write file: No space left on device" -- \
	    dlplan plan $ONE -o "$TMP/full/out"
	no_leftovers "full file system: no partial or temporary file" \
	    "$TMP/full"
	expect_err "model -o on a full file system" 4 \
	    "dlplan: $TMP/full/m.csv: cannot write file: No space left on device" -- \
	    dlplan model llama --preset llama2-7b -o "$TMP/full/m.csv"
	check "model -o on a full file system: no file" \
	    test ! -e "$TMP/full/m.csv"
	mkdir "$TMP/full/w"
	writers "$TMP/full/w"
	expect_writers "emit, replan, model, eval --svg on a full file system" \
	    "$TMP/full/w" "No space left on device"
	umount "$TMP/full"
else
	skip "plan -o on a full file system" "cannot mount a tmpfs (not root?)"
fi

# Room for plan.json but not for plan.csv as well: neither may replace
# the old pair (both temporary files are written before either is
# renamed).  The free space is plan.json's size in whole pages.
_js=$(wc -c <"$SRCPLAN")
_pg=$(( (_js + 4095) / 4096 ))
if [ $((_pg * 4096 - _js)) -lt 200 ]; then
	skip "plan -o with room for plan.json only" \
	    "plan.json is $_js bytes, too near a page boundary"
elif tmpfs "$TMP/full" size=64k; then
	mkdir "$TMP/full/o"
	echo old >"$TMP/full/o/plan.json"
	echo old >"$TMP/full/o/plan.csv"
	dd if=/dev/zero of="$TMP/full/fill" bs=4k count=$((16 - 2 - _pg)) \
	    2>/dev/null
	expect_err "plan -o with room for plan.json only" 4 \
	    "dlplan: $TMP/full/o/plan.csv: cannot write file: No space left on device" -- \
	    dlplan plan $ONE -o "$TMP/full/o"
	check "room for plan.json only: the old pair kept, no temporary file" \
	    sh -c "test \"\$(cat '$TMP/full/o/plan.json' '$TMP/full/o/plan.csv')\" = 'old
old' && test -z \"\$(find '$TMP/full' -name '*.tmp-*')\""
	umount "$TMP/full"
else
	skip "plan -o with room for plan.json only" \
	    "cannot mount a tmpfs (not root?)"
fi

# A file size limit fails the write the way a full disk does, anywhere.
mkdir "$TMP/fsz"
expect_err "plan -o past the file size limit" 4 \
    "dlplan: $TMP/fsz/plan.json: cannot write file: File too large" -- \
    sh -c 'ulimit -f 2; trap "" XFSZ; exec "$@"' sh ${DLPLAN_WRAP:-} \
    "$DLPLAN" plan -c $TWODC -m datasets/models/llama2-7b.csv \
    --global-batch 64 -o "$TMP/fsz"
no_leftovers "file size limit: no partial or temporary file" "$TMP/fsz"

for cmd in "plan $ONE --format json" "check -c $TWODC" \
    "model llama --preset llama2-7b" "predict -H $DATA/predict-load.csv"; do
	expect_err "${cmd%% *}: standard output on /dev/full" 4 \
	    "dlplan: cannot write standard output: No space left on device" -- \
	    sh -c 'exec "$@" >/dev/full' sh ${DLPLAN_WRAP:-} "$DLPLAN" $cmd
done

# plan.json a symlink to /dev/full: replaced by the new file, never
# written through (outputs are a temporary file renamed into place).
mkdir "$TMP/sl"
ln -s /dev/full "$TMP/sl/plan.json"
expect_run "plan.json a symlink to /dev/full is replaced" 0 - - -- \
    dlplan plan $ONE -o "$TMP/sl"
check "the replaced plan.json is a complete plan" \
    sh -c "test ! -L '$TMP/sl/plan.json' && grep -q '\"schema\"' '$TMP/sl/plan.json'"

# --- output path is a directory -----------------------------------------
mkdir -p "$TMP/isdir/plan.json"
expect_err "plan.json is a directory" 4 \
    "dlplan: $TMP/isdir/plan.json: cannot write file: Is a directory" -- \
    dlplan plan $ONE -o "$TMP/isdir"
check "plan.json directory untouched, no temporary file" \
    sh -c "test -d '$TMP/isdir/plan.json' && test -z \"\$(ls -A '$TMP/isdir/plan.json')\" && test -z \"\$(find '$TMP/isdir' -name '*.tmp-*')\""
# plan.csv a directory: plan.json is not replaced either.
mkdir -p "$TMP/csvdir/plan.csv"
echo old >"$TMP/csvdir/plan.json"
expect_err "plan.csv is a directory" 4 \
    "dlplan: $TMP/csvdir/plan.csv: cannot write file: Is a directory" -- \
    dlplan plan $ONE -o "$TMP/csvdir"
check "plan.csv a directory: old plan.json kept, no temporary file" \
    sh -c "test \"\$(cat '$TMP/csvdir/plan.json')\" = old && test -z \"\$(find '$TMP/csvdir' -name '*.tmp-*')\""
mkdir -p "$TMP/rcsv/plan.csv"
expect_err "replan: plan.csv is a directory" 4 \
    "dlplan: $TMP/rcsv/plan.csv: cannot write file: Is a directory" -- \
    dlplan replan "$SRCPLAN" --observed "$STEPS" -o "$TMP/rcsv"
check "replan: plan.csv a directory, no plan.json" \
    test ! -e "$TMP/rcsv/plan.json"
mkdir -p "$TMP/bdir/plan-slot2.json"
expect_err "plan --budget: plan-slot2.json is a directory" 4 \
    "dlplan: $TMP/bdir/plan-slot2.json: cannot write file: Is a directory" -- \
    dlplan plan -c $TWODC -m datasets/models/llama2-7b.csv --global-batch 64 \
    --micro-batch 2 --budget 150 --slots 3 -o "$TMP/bdir"
check "plan --budget: no slot plan, plan.json or plan.csv written" \
    sh -c "test -z \"\$(find '$TMP/bdir' -type f)\""
mkdir -p "$TMP/svgdir"
expect_err "eval --svg a directory" 4 \
    "dlplan: $TMP/svgdir: cannot write file: Is a directory" -- \
    dlplan eval "$SRCPLAN" --svg "$TMP/svgdir"
expect_empty_dir "eval --svg a directory: nothing in it" "$TMP/svgdir"
mkdir "$TMP/adir"
expect_err "model -o a directory" 4 \
    "dlplan: $TMP/adir: cannot write file: Is a directory" -- \
    dlplan model llama --preset llama2-7b -o "$TMP/adir"
expect_empty_dir "model -o a directory: nothing in it" "$TMP/adir"

# --- output path is a device ---------------------------------------------
# Written through, never replaced by a regular file (as root, -o
# /dev/null must not replace /dev/null).  Device nodes of our own, so
# that a bug cannot touch the real ones.
if [ "$(id -u)" -eq 0 ] && mkdir "$TMP/dev" &&
    mknod "$TMP/dev/null" c 1 3 2>/dev/null &&
    mknod "$TMP/dev/full" c 1 7 2>/dev/null &&
    [ -c "$TMP/dev/null" ] && echo x >"$TMP/dev/null" 2>/dev/null; then
	expect_run "model -o a null device" 0 - - -- \
	    dlplan model llama --preset llama2-7b -o "$TMP/dev/null"
	expect_run "eval --svg a null device" 0 - - -- \
	    dlplan eval "$SRCPLAN" --svg "$TMP/dev/null"
	expect_err "model -o a full device" 4 \
	    "dlplan: $TMP/dev/full: cannot write file: No space left on device" -- \
	    dlplan model llama --preset llama2-7b -o "$TMP/dev/full"
	mkdir "$TMP/dev/o"
	mknod "$TMP/dev/o/plan.json" c 1 3
	expect_run "plan -o with plan.json a null device" 0 - - -- \
	    dlplan plan $ONE -q -o "$TMP/dev/o"
	check "the device nodes are still devices, no temporary file" \
	    sh -c "test -c '$TMP/dev/null' && test -c '$TMP/dev/full' && test -c '$TMP/dev/o/plan.json' && test -s '$TMP/dev/o/plan.csv' && test -z \"\$(find '$TMP/dev' -name '*.tmp-*')\""
else
	skip "output path is a device" "needs root and mknod"
fi
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
_cpid=$!
expect_run "model -o a FIFO" 0 - - -- \
    dlplan model llama --preset llama2-7b -o "$TMP/fifo"
# A FIFO replaced by a file leaves the reader waiting: end it.
for _i in 1 2 3 4 5 6 7 8 9 10; do
	kill -0 "$_cpid" 2>/dev/null || break
	sleep 0.2
done
kill "$_cpid" 2>/dev/null
wait "$_cpid" 2>/dev/null
check "model -o a FIFO: the rows went through it" \
    sh -c "test -p '$TMP/fifo' && grep -q '^layer,' '$TMP/fifo.out'"

# --- interrupted solve --------------------------------------------------
# A 16,384-GPU cluster on one thread takes the structured search well
# over 5 s (a 4,096-GPU one on two threads no longer does: 1.1 s); the
# signal comes after 1 s.  dlplan must die of the signal at once (the
# shell's 128 + N; within 5 s), leave no temporary file, and leave the
# plan.json and plan.csv already in the output directory as they were.
python3 tests/bench/gen-cluster.py 16384 16 "$TMP/big" --types 5
for sig in INT TERM HUP; do
	mkdir -p "$TMP/int-$sig"
	echo old >"$TMP/int-$sig/plan.json"
	echo old >"$TMP/int-$sig/plan.csv"
	# Not through the dlplan function: $! must be dlplan (or its
	# wrapper) itself.
	${DLPLAN_WRAP:-} "$DLPLAN" plan -c "$TMP/big" \
	    -m datasets/models/llama2-7b.csv --global-batch 65536 \
	    --micro-batch 1 -j 1 -o "$TMP/int-$sig" >"$TMP/int.out" \
	    2>"$TMP/int.err" &
	_pid=$!
	sleep 1
	_t0=$(date +%s.%N)
	if kill -s "$sig" "$_pid" 2>/dev/null; then
		wait "$_pid" 2>/dev/null
		_rc=$?
		_t1=$(date +%s.%N)
		_el=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", b - a }')
		printf '# SIG%s: exit status %s, %s s after the signal\n' \
		    "$sig" "$_rc" "$_el"
		case $sig in
		INT) _want=130 ;;
		TERM) _want=143 ;;
		HUP) _want=129 ;;
		esac
		if [ "$_rc" -eq "$_want" ] &&
		    awk -v t="$_el" -v m=$((5 * TSCALE)) 'BEGIN { exit !(t < m) }'
		then
			t_ok "SIG$sig during a solve: exit status $_want at once"
		else
			t_notok "SIG$sig during a solve: exit status $_want at once" \
			    "got $_rc after $_el s" \
			    "stderr: $(head -3 "$TMP/int.err")"
		fi
		check "SIG$sig during a solve: old plan kept, no temporary file" \
		    sh -c "test \"\$(cat '$TMP/int-$sig/plan.json' '$TMP/int-$sig/plan.csv')\" = 'old
old' && test -z \"\$(find '$TMP/int-$sig' -name '*.tmp-*')\""
	else
		wait "$_pid" 2>/dev/null
		skip "SIG$sig during a solve" "the plan finished within 1 s"
	fi
done

# SIGINT between the renames of plan.json and plan.csv (strace holds
# every rename for 3 s): the signal must wait until both are renamed, so
# that the pair is both new, never a new plan.json beside the old
# plan.csv.  Exit status 130 all the same.
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "SIGINT between the renames" "not under $DLPLAN_WRAP"
elif ! command -v strace >/dev/null 2>&1 ||
    ! strace -o /dev/null true 2>/dev/null; then
	skip "SIGINT between the renames" "needs strace (and ptrace)"
else
	mkdir -p "$TMP/ren"
	echo old >"$TMP/ren/plan.json"
	echo old >"$TMP/ren/plan.csv"
	strace -f -o "$TMP/ren.trace" -e trace=rename,renameat,renameat2 \
	    -e inject=rename,renameat,renameat2:delay_exit=3000000 \
	    sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$TMP/ren.pid" \
	    "$DLPLAN" plan $ONE -q -o "$TMP/ren" >/dev/null 2>&1 &
	_spid=$!
	sleep 1.5
	kill -s INT "$(cat "$TMP/ren.pid")" 2>/dev/null
	wait "$_spid"
	_rc=$?
	_ren=$(grep -c 'rename.*plan\.' "$TMP/ren.trace")
	if [ "$_ren" -lt 1 ]; then
		skip "SIGINT between the renames" "the signal came too early"
	elif [ "$_rc" -eq 130 ] && [ "$_ren" -eq 2 ] &&
	    grep -q '"schema"' "$TMP/ren/plan.json" &&
	    grep -q '^rank,' "$TMP/ren/plan.csv"; then
		t_ok "SIGINT between the renames: both files new, exit 130"
	else
		t_notok "SIGINT between the renames: both files new, exit 130" \
		    "status $_rc, $_ren renames" \
		    "plan.json: $(head -c 40 "$TMP/ren/plan.json")" \
		    "plan.csv: $(head -c 40 "$TMP/ren/plan.csv")"
	fi
	check "SIGINT between the renames: no temporary file" \
	    test -z "$(find "$TMP/ren" -name '*.tmp-*')"
fi

# --- huge and hostile inputs ---------------------------------------------
mkdir -p "$TMP/h"
# One 10 MB header name; 10 MB of empty header names.
head -c 10000000 /dev/zero | tr '\0' a >"$TMP/h/nodes.csv"
echo >>"$TMP/h/nodes.csv"
bounded "10 MB header-only line, one name" 20 262144 2 -- \
    "$DLPLAN" check -c "$TMP/h"
check "10 MB header name: error names the column" \
    grep -q "^dlplan: $TMP/h/nodes.csv:1:1: unknown column 'aaaa" "$TMP/err"
head -c 10000000 /dev/zero | tr '\0' , >"$TMP/h/nodes.csv"
echo >>"$TMP/h/nodes.csv"
bounded "10 MB header-only line of empty names" 20 1048576 2 -- \
    "$DLPLAN" check -c "$TMP/h"
# A million x_ columns after a valid header, then no row.
awk 'BEGIN { printf "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps"
    for (i = 0; i < 1000000; i++) printf ",x_%d", i; print "" }' \
    >"$TMP/h/nodes.csv"
bounded "a million x_ columns, no row" 20 524288 2 -- \
    "$DLPLAN" check -c "$TMP/h"
check "no row: says so" grep -q "no nodes" "$TMP/err"

# 100,000 nodes on one site (its implicit switch): check's diameter
# searched from every node, O(nodes x links), hours; now once per set
# of nodes with the same neighbours.
mkdir -p "$TMP/n"
awk 'BEGIN { print "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps"
    for (i = 0; i < 100000; i++) printf "n%d,s,8,G,100,80,800,100\n", i }' \
    >"$TMP/n/nodes.csv"
bounded "check with 100,000 nodes" 5 524288 0 -- "$DLPLAN" check -c "$TMP/n"
check "check with 100,000 nodes: diameter 2 hops" \
    grep -q "100001 vertices, 200000 directed links, diameter 2 hops" "$TMP/out"

# 1,000,000 rows of load history: 8 nodes x 125,000 steps.
mkdir -p "$TMP/l"
cp $TWODC/nodes.csv $TWODC/links.csv "$TMP/l/"
awk -F, '/^#/ { next } h++ { n[++k] = $1 }
    END { print "node,t,util"
	for (i = 1; i <= k; i++) for (t = 0; t < 1000000 / k; t++)
	    printf "%s,%d,%.3f\n", n[i], t, (t * 7 + i * 13) % 100 / 100 }' \
    $TWODC/nodes.csv >"$TMP/l/load.csv"
printf '# load.csv: %s rows, %s bytes\n' "$(($(wc -l <"$TMP/l/load.csv") - 1))" \
    "$(wc -c <"$TMP/l/load.csv")"
bounded "check with 1,000,000 load rows" 60 524288 0 -- \
    "$DLPLAN" check -c "$TMP/l"
bounded "predict on 1,000,000 load rows" 60 524288 0 -- \
    "$DLPLAN" predict -H "$TMP/l/load.csv" --format csv
check "predict on 1,000,000 rows: a forecast per node" \
    sh -c "test \$(grep -c ',1,' '$TMP/out') -eq \$(grep -vc '^#\|^node' '$TWODC/nodes.csv')"

# A full mesh: every solve walks every link between vertices that are
# not stubs, and a search solves toward every node it prices, so a mesh
# of 300 nodes (89,700 links) planned for minutes.  plan and schedule
# refuse more than 262,144 (meshed nodes x links between them) up front:
# a full mesh of 64 nodes is 258,048, of 65 nodes 270,400.  route and
# eval, one solve per flow, take it; check warns.
mesh() {
	mkdir -p "$TMP/$1"
	awk -v n="$2" 'BEGIN { print "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps"
	    for (i = 0; i < n; i++) printf "m%d,s%d,1,G,100,80,800,100\n", i, i % 4 }' \
	    >"$TMP/$1/nodes.csv"
	awk -v n="$2" 'BEGIN { print "src,dst,gbps,latency_ms"
	    for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
		printf "m%d,m%d,%d,%d\n", i, j, 10 + (i + j) % 90, 1 + (i * j) % 40 }' \
	    >"$TMP/$1/links.csv"
}
mesh mesh65 65
mesh mesh64 64
MESHMSG="a mesh too dense to search: 65 nodes joined to more than one vertex x 4160 links between such vertices = 270400, at most 262144 (a full mesh of 64 nodes); join nodes through switches (dlplan-formats(5), links.csv)"
bounded "plan refuses a full mesh of 65 up front" 10 262144 2 -- \
    "$DLPLAN" plan -c "$TMP/mesh65" -m "$DATA/eval/m4.csv" --global-batch 64 \
    -o "$TMP/mesh65/out"
check "plan refuses a full mesh of 65: the message" \
    test "$(head -n 1 "$TMP/err")" = "dlplan: $TMP/mesh65/links.csv: $MESHMSG"
expect_empty_dir "plan refuses a full mesh of 65: nothing written" \
    "$TMP/mesh65/out"
printf 'job,arrival_s,model,global_batch,micro_batch,iterations\nj1,0,%s,64,4,100\n' \
    "$DATA/eval/m4.csv" >"$TMP/mesh65/jobs.csv"
expect_err "schedule refuses a full mesh of 65" 2 \
    "dlplan: $TMP/mesh65/links.csv: $MESHMSG" -- \
    dlplan schedule -c "$TMP/mesh65" --jobs "$TMP/mesh65/jobs.csv" \
    -o "$TMP/mesh65/sched"
expect_err "check warns of a full mesh of 65" 0 \
    "dlplan: warning: $TMP/mesh65/links.csv: plan and schedule refuse this network: $MESHMSG" -- \
    dlplan check -c "$TMP/mesh65"
printf 'src,dst,mb\nm0,m1,10\nm2,m7,20\n' >"$TMP/mesh65/flows.csv"
bounded "route takes a full mesh of 65" 10 262144 0 -- \
    "$DLPLAN" route -c "$TMP/mesh65" --flows "$TMP/mesh65/flows.csv"
bounded "check takes a full mesh of 64" 10 262144 0 -- \
    "$DLPLAN" check -c "$TMP/mesh64"
check "check takes a full mesh of 64: no warning" test ! -s "$TMP/err"

# 100,000 layers: hopeless for the exact layer partition (O(S L^2) per
# candidate bottleneck), so plan refuses more than 4,096 layers up front
# instead of hanging; replan --repartition too.
awk 'BEGIN { print "layer,fwd_gflop,params_m,act_mb,mem_mb"
    for (i = 0; i < 100000; i++) printf "l%d,%.3f,%.3f,1,2\n", i, 1 + i % 7, 0.5 + i % 3 }' \
    >"$TMP/h/100k.csv"
bounded "plan with 100,000 layers fails fast" 10 262144 2 -- \
    "$DLPLAN" plan -c datasets/clusters/hetero-lab -m "$TMP/h/100k.csv" \
    --global-batch 64 --time-limit 5
expect_err "plan with 100,000 layers: the message" 2 \
    "dlplan: $TMP/h/100k.csv: 100000 layers: dlplan partitions at most 4096 (the layer partition grows with the square of the layer count); merge consecutive layers into blocks" -- \
    dlplan plan -c datasets/clusters/hetero-lab -m "$TMP/h/100k.csv" \
    --global-batch 64 --time-limit 5
# replan --repartition of a two-stage plan of 4,097 layers; without
# --repartition only the data split is solved again, which is cheap.
awk 'BEGIN { print "layer,fwd_gflop,params_m,act_mb,mem_mb"
    for (i = 0; i < 4097; i++) printf "l%d,1,0.001,1,0.01\n", i }' \
    >"$TMP/h/4097.csv"
cp "$DATA/replan/nodes.csv" "$TMP/h/nodes.csv"
printf '%s\n' '{ "schema": "dlplan.plan/1",' \
    '  "inputs": [ { "kind": "nodes", "path": "nodes.csv" },' \
    '              { "kind": "model", "path": "4097.csv" } ],' \
    '  "options": { "global_batch": 8, "micro_batch": 1 },' \
    '  "groups": [ { "micro_batches": 8, "stages": [' \
    '      { "node": "a", "gpus": [0], "layers": [0, 2047] },' \
    '      { "node": "b", "gpus": [0], "layers": [2048, 4096] } ] } ] }' \
    >"$TMP/h/p.json"
awk 'BEGIN { print "rank,step,seconds"
    for (s = 0; s < 10; s++) for (r = 0; r < 2; r++) printf "%d,%d,%.2f\n", r, s, 2 + r }' \
    >"$TMP/h/steps.csv"
expect_err "replan --repartition with 4,097 layers" 2 \
    "dlplan: $TMP/h/4097.csv: 4097 layers: dlplan partitions at most 4096 (the layer partition grows with the square of the layer count); merge consecutive layers into blocks" -- \
    dlplan replan "$TMP/h/p.json" --observed "$TMP/h/steps.csv" \
    --repartition --ignore-digests
bounded "replan without --repartition, 4,097 layers" 60 524288 0 -- \
    "$DLPLAN" replan "$TMP/h/p.json" --observed "$TMP/h/steps.csv" \
    --ignore-digests

# Extreme but valid numbers (1e-300 TFLOPS and Gbps next to 1e6): a
# result or a clear error, never a crash or a hang.
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\na,s,2,G,1e-300,1000000,1e-300,1e-300\nb,s,1,G,1000000,1e-300,1000000,1e-300\n' \
    >"$TMP/h/nodes.csv"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1000000000,0,1e9,0\nl1,1e9,0,1e-300,0\n' \
    >"$TMP/h/x.csv"
bounded "plan on extreme numbers" 60 524288 "0 2 3 4" -- \
    "$DLPLAN" plan -c "$TMP/h" -m "$TMP/h/x.csv" --global-batch 1000000 \
    --format json
check "plan on extreme numbers: no NaN or Inf in the output" \
    sh -c "! grep -qi 'nan\|inf' '$TMP/out'"

# Links: one link repeated 100,000 times; a chain of 20,000 switches.
mkdir -p "$TMP/d"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\na,s,1,G,100,80,800,100\nb,s,1,G,100,80,800,100\n' \
    >"$TMP/d/nodes.csv"
awk 'BEGIN { print "src,dst,gbps,latency_ms"
    for (i = 0; i < 100000; i++) print "a,b,100,0.01" }' >"$TMP/d/links.csv"
bounded "100,000 duplicated links" 30 524288 "0 2" -- \
    "$DLPLAN" check -c "$TMP/d"
# 100,000 relays in parallel between a and b: 200,000 links out of a
# and into b (duplex).  The check for a link given twice compared every
# pair of a vertex's links: 31 s for check; now linear.
awk 'BEGIN { print "src,dst,gbps,latency_ms"
    for (i = 0; i < 100000; i++) printf "a,s%d,100,0.01\ns%d,b,100,0.01\n", i, i }' \
    >"$TMP/d/links.csv"
bounded "check with 100,000 parallel relays" 5 524288 0 -- \
    "$DLPLAN" check -c "$TMP/d"
printf 'flow,src,dst,mb\nf,a,b,100\n' >"$TMP/d/flows.csv"
bounded "route across 100,000 parallel relays" 5 524288 0 -- \
    "$DLPLAN" route -c "$TMP/d" --flows "$TMP/d/flows.csv" --format csv
check "route across 100,000 parallel relays: through the first" \
    sh -c "tail -n 1 '$TMP/out' | grep -q ',a>s0>b\$'"
awk 'BEGIN { print "src,dst,gbps,latency_ms"; print "a,s0,100,0.001"
    for (i = 1; i < 20000; i++) printf "s%d,s%d,100,0.001\n", i - 1, i
    print "s19999,b,100,0.001" }' >"$TMP/d/links.csv"
printf 'flow,src,dst,mb\nf,a,b,100\n' >"$TMP/d/flows.csv"
bounded "route over a chain of 20,000 switches" 60 524288 0 -- \
    "$DLPLAN" route -c "$TMP/d" --flows "$TMP/d/flows.csv" --format csv
check "the route takes all 20,001 hops" \
    sh -c "tail -n 1 '$TMP/out' | tr '>' '\n' | wc -l | grep -qx 20002"

# util = 1e308 and friends: out of range, exit 2, the cell named.
mkdir -p "$TMP/u"
cp $TWODC/nodes.csv $TWODC/links.csv "$TMP/u/"
printf 'node,t,util\nuse-h100-0,0,1e308\n' >"$TMP/u/load.csv"
expect_err "load util 1e308" 2 \
    "dlplan: $TMP/u/load.csv:2:3: column 'util': '1e308' is out of range (expected a number in [0, 1])" -- \
    dlplan check -c "$TMP/u"
printf 'node,t,util\nuse-h100-0,0,1e999\n' >"$TMP/u/load.csv"
expect_err "load util 1e999 (overflows to inf)" 2 \
    "dlplan: $TMP/u/load.csv:2:3: column 'util': '1e999' is out of range (expected a number in [0, 1])" -- \
    dlplan check -c "$TMP/u"
expect_err "predict: util 1e999" 2 \
    "dlplan: $TMP/u/load.csv:2:3: column 'util': '1e999' is out of range (expected a number in [0, 1])" -- \
    dlplan predict -H "$TMP/u/load.csv"
rm "$TMP/u/load.csv"
printf 't,src,dst,util\n0,use-h100-0,sw-a,1e308\n' >"$TMP/u/traffic.csv"
expect_err "traffic util 1e308" 2 \
    "dlplan: $TMP/u/traffic.csv:2:4: column 'util': '1e308' is out of range (expected a number in [0, 1])" -- \
    dlplan check -c "$TMP/u"
rm "$TMP/u/traffic.csv"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1e308,1,1,1\n' >"$TMP/u/m.csv"
expect_err "model fwd_gflop 1e308" 2 \
    "dlplan: $TMP/u/m.csv:2:2: column 'fwd_gflop': '1e308' is out of range (expected a number in [0, 1000000000] (GFLOP per sample))" -- \
    dlplan plan -c "$TMP/u" -m "$TMP/u/m.csv" --global-batch 8
printf 'flow,src,dst,mb\nf,use-h100-0,usw-l4-0,1e308\n' >"$TMP/u/flows.csv"
expect_err "flow mb 1e308" 2 \
    "dlplan: $TMP/u/flows.csv:2:4: column 'mb': '1e308' is out of range (expected a number in (0, 1000000000000] (MB))" -- \
    dlplan route -c "$TMP/u" --flows "$TMP/u/flows.csv"

# predict --backtest keeps the window forecasts of the last horizon + 1
# origins only: 20,000 points at horizon 1,000 took 1.33 GB,
# now memory grows with the horizon, not with the series.
awk 'BEGIN { print "node,t,util"; srand(1)
    for (t = 0; t < 20000; t++) printf "a,%d,%.4f\n", t, 0.5 + 0.3 * sin(t / 50) + 0.1 * rand() }' \
    >"$TMP/bt.csv"
bounded "predict --backtest, 20,000 points, horizon 1,000" 120 262144 0 -- \
    "$DLPLAN" predict -H "$TMP/bt.csv" --backtest --horizon 1000

# schedule: a job of 1e15 iterations (in the documented range) ran
# forever and grew ~8 MB/s; the slots between two events are
# now one record, so it ends at once, and a job that cannot end within
# 1e12 slots is refused up front with exit 2 naming its line.
printf 'job,arrival_s,model,global_batch,micro_batch,iterations\nj1,0,resnet50,256,4,1e15\n' \
    >"$TMP/it15.csv"
bounded "schedule, a job of 1e15 iterations" 120 262144 0 -- \
    "$DLPLAN" schedule -c "$SRCDIR/datasets/clusters/philly-64" \
    --jobs "$TMP/it15.csv"
bounded "schedule, 1e15 iterations in slots of 1 ms" 120 262144 2 -- \
    "$DLPLAN" schedule -c "$SRCDIR/datasets/clusters/philly-64" \
    --jobs "$TMP/it15.csv" --slot-seconds 0.001 --restart-seconds 0
check "... refused up front naming its line" grep -q \
    "^dlplan: $TMP/it15.csv:2: job 'j1' needs at least .* more than the 1000000000000 slots of 0.001 s" \
    "$TMP/err"

# --- micro-batches by the billion ----------------------------------------
# The documented ranges allow 1e12 micro-batches.  The 1F1B makespan
# skips the steady steps (pipesched.c), the search's tables over groups
# stop at the GPUs, and eval's pass-by-pass simulation and --svg have
# limits of their own: eval of 1e8 micro-batches ran out of memory, plan
# --global-batch 2^24 took 11 s and 780 MB, and 2^40 exited 4.
dlplan plan -c $TWODC -m datasets/models/llama2-7b.csv --global-batch 256 \
    --micro-batch 1 -o "$TMP/mb" >/dev/null 2>&1
# mb_plan N OUT: the plan with N micro-batches, shared evenly by its
# groups.
mb_plan() {
	python3 - "$TMP/mb/plan.json" "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = int(float(sys.argv[3])) // len(d["groups"])
for g in d["groups"]:
    g["micro_batches"], g["samples"] = n, n
    for s in g["stages"]:
        s["micro_batches"] = n
d["options"]["global_batch"] = n * len(d["groups"])
json.dump(d, open(sys.argv[2], "w"))
PY
}
mb_plan 1e12 "$TMP/mb/p12.json"
bounded "eval of 1e12 micro-batches" 2 65536 0 -- \
    "$DLPLAN" eval "$TMP/mb/p12.json"
check "... the pass-by-pass simulation says it did not run" grep -q \
    '^simulated  1F1B  not run (more than 1048576 stage micro-batches over all groups)$' \
    "$TMP/out"
bounded "plan --global-batch 2^40 --micro-batch 1" 3 65536 0 -- \
    "$DLPLAN" plan -c $TWODC -m datasets/models/llama2-7b.csv \
    --global-batch 1099511627776 --micro-batch 1
mb_plan 1e6 "$TMP/mb/p6.json"
bounded "eval --svg of 1e6 micro-batches: refused" 2 65536 2 -- \
    "$DLPLAN" eval "$TMP/mb/p6.json" --svg "$TMP/mb/x.svg"
check "... naming the limit, no SVG written" sh -c "
    grep -q 'too many passes to draw with --svg (more than 65536 stage micro-batches over all groups)' '$TMP/err' &&
    test ! -e '$TMP/mb/x.svg'"
# 16 stages whose lanes tie exactly: the rounded state drifts and does not
# repeat for whole binades (pipesched.h); 72 s before, now well under 1.
printf 'job,arrival_s,model,global_batch,micro_batch,iterations\nj1,0,llama2-13b,1000000000,1,10\n' \
    >"$TMP/mb/jobs.csv"
bounded "schedule, a job of 1e9 micro-batches on 16 equal stages" 10 65536 0 -- \
    "$DLPLAN" schedule -c "$SRCDIR/datasets/clusters/philly-64" \
    --jobs "$TMP/mb/jobs.csv"
