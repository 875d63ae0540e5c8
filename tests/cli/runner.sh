# tests/cli/runner.sh - tests/run itself, on a tree of made-up tests: -j N
# runs N at once, "# tests/run: serial" scripts never overlap, the slowest
# by tests/out/times start first, each test's line carries its time, the
# ten slowest are listed, a failure gives the "failed:" line and status 1,
# and a bad -j is refused.

F=$TMP/f
mkdir -p "$F/tests/cli" "$F/build/tests"
cp "$SRCDIR/tests/run" "$SRCDIR/tests/lib.sh" "$F/tests/"
EV=$TMP/events
: >"$EV"
export EV

# meet NAME OTHER: note NAME's start, wait up to 5 s for OTHER's, note the
# end; prints "ok - NAME met OTHER" only when both ran at once.
cat >"$F/tests/meet.sh" <<'EOF'
meet() {
echo "start $1" >>"$EV"
i=0
while ! grep -qx "start $2" "$EV" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
if grep -qx "start $2" "$EV"; then
	echo "ok - $1 met $2"
else
	echo "not ok - $1 met $2"
fi
echo "end $1" >>"$EV"
}
EOF
for n in p1 p2; do
	o=p2
	[ $n = p2 ] && o=p1
	printf '. "$SRCDIR/tests/meet.sh"\nmeet %s %s\n' $n $o \
	    >"$F/tests/cli/$n.sh"
done
for n in s1 s2; do
	printf '# tests/run: serial\necho "start %s" >>"$EV"\nsleep 1\n' $n \
	    >"$F/tests/cli/$n.sh"
	printf 'echo "end %s" >>"$EV"\necho "ok - %s"\n' $n $n \
	    >>"$F/tests/cli/$n.sh"
done
printf 'echo "start bad" >>"$EV"\necho "ok - one"\necho "not ok - two"\n' \
    >"$F/tests/cli/bad.sh"
printf 'echo "start quick" >>"$EV"\necho "ok - quick # SKIP why not"\n' \
    >"$F/tests/cli/quick.sh"

frun() {
	DLPLAN=/bin/true BUILD=$F/build DLPLAN_JOBS= sh "$F/tests/run" "$@" \
	    >"$TMP/run.out" 2>&1
}

# Two at once: p1 and p2 each wait for the other.
frun -j 2 p1 p2
rc=$?
check "-j 2: two tests run at once" grep -qx 'ok - p1 met p2' \
    "$F/tests/out/p1.tap"
check "-j 2: status 0 when all pass" test "$rc" -eq 0
check "-j 2: the counts" grep -qx '2 passed, 0 failed, 0 skipped' \
    "$TMP/run.out"
check "each test's line ends with its time" grep -Eq \
    '^p1 +1 passed +0 failed +0 skipped +[0-9]+\.[0-9] s$' "$TMP/run.out"
check "the slowest are listed" grep -qx 'slowest:' "$TMP/run.out"
check "times are kept in tests/out/times" grep -Eq '^p2 [0-9.]+$' \
    "$F/tests/out/times"

# One at a time: neither meets the other.
: >"$EV"
frun -j1 p1 p2
check "-j1: one test at a time" grep -qx 'not ok - p1 met p2' \
    "$F/tests/out/p1.tap"

# Serial scripts never overlap, even with room for both.
: >"$EV"
frun -j 4 s1 s2
check "serial scripts run one after the other" sh -c '
	tr "\n" " " <"$1" | grep -Eqx "start (s.) end \\1 start (s.) end \\2 "' \
    sh "$EV"

# Slowest first, by the recorded times; tests without one before those.
printf 'quick 9\nbad 0.1\n' >"$F/tests/out/times"
printf 'echo "start new" >>"$EV"\necho "ok - new"\n' >"$F/tests/cli/new.sh"
: >"$EV"
frun -j 1 bad quick s1 new
rc=$?
check "slowest first, unknown ones before, serial ones first of those" sh -c \
    'test "$(grep start "$1" | tr "\n" " ")" = "start s1 start new start quick start bad "' \
    sh "$EV"
check "a failed check: status 1" test "$rc" -eq 1
check "a failed check: the failed: line" grep -qx 'failed: bad' "$TMP/run.out"
check "a failed check: shown above its test's line" sh -c '
	grep -A1 "^not ok - two" "$1" | tail -n 1 | grep -q "^bad "' \
    sh "$TMP/run.out"
check "a failed check: the counts" grep -qx '3 passed, 1 failed, 1 skipped' \
    "$TMP/run.out"
check "the log holds every test in name order" sh -c '
	test "$(grep "^# " "$1" | tr "\n" " ")" = "# bad # new # quick # s1 "' \
    sh "$F/tests/out/log"

expect_err "a bad -j is refused" 2 \
    "tests/run: -j 'x' is not a whole number of at least 1" -- \
    sh "$F/tests/run" -j x
