# tests/lib.sh - helpers for the CLI test scripts in tests/cli/*.sh.
#
# A script is run by tests/run with the environment below and prints one
# TAP line per check: "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why".
#
#	$DLPLAN   the binary under test (absolute path); call it as "dlplan"
#	$SRCDIR   the repository root
#	$DATA     tests/cli/data        $GOLDEN  tests/cli/golden
#	$TMP      a fresh scratch directory, removed when the script ends
#
#	expect_run NAME STATUS OUT ERR -- CMD [ARGS...]
#		Run CMD; its exit status must be STATUS; stdout must equal the
#		golden file $GOLDEN/OUT and stderr $GOLDEN/ERR ("-": not
#		compared).  With DLPLAN_UPDATE_GOLDEN=1 the golden files are
#		written instead.  stdout and stderr stay in $TMP/out, $TMP/err.
#	expect_err NAME STATUS MESSAGE -- CMD [ARGS...]
#		Run CMD; the exit status must be STATUS and the first line of
#		stderr must be exactly MESSAGE.
#	check NAME CMD [ARGS...]    ok when CMD exits 0
#	expect_empty_dir NAME DIR   ok when DIR holds no files at all
#	skip NAME WHY
#
# Everything runs under LC_ALL=C.  DLPLAN_WRAP (e.g. "valgrind -q
# --error-exitcode=99") is put in front of every dlplan call.  Under a
# wrapper, the wrapper's own notes ("--PID-- WARNING: unhandled syscall",
# valgrind's prefix for tool messages that are not errors) are dropped
# from the captured stderr before it is compared; memory errors still
# fail through the wrapper's exit status.

LC_ALL=C
export LC_ALL
: "${SRCDIR:?}" "${DLPLAN:?}"
DATA=$SRCDIR/tests/cli/data
GOLDEN=$SRCDIR/tests/cli/golden
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dlplan-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'rm -rf "$TMP"; exit 1' INT TERM

dlplan() {
	${DLPLAN_WRAP:-} "$DLPLAN" "$@"
}

t_ok() {
	printf 'ok - %s\n' "$1"
}

t_notok() {
	printf 'not ok - %s\n' "$1"
	shift
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/#   /'
	done
}

skip() {
	printf 'ok - %s # SKIP %s\n' "$1" "$2"
}

# _golden FILE KIND: compare $TMP/KIND with $GOLDEN/FILE; print problems.
_golden() {
	[ "$1" = - ] && return 0
	if [ -n "${DLPLAN_UPDATE_GOLDEN:-}" ]; then
		mkdir -p "$(dirname "$GOLDEN/$1")"
		cp "$TMP/$2" "$GOLDEN/$1"
		return 0
	fi
	if [ ! -f "$GOLDEN/$1" ]; then
		echo "missing golden file $GOLDEN/$1"
		return 1
	fi
	diff -u "$GOLDEN/$1" "$TMP/$2" | head -40
	cmp -s "$GOLDEN/$1" "$TMP/$2"
}

# _unwrap_err: drop the wrapper's tool notes from $TMP/err.
_unwrap_err() {
	[ -n "${DLPLAN_WRAP:-}" ] || return 0
	grep -v '^--[0-9][0-9]*-- ' "$TMP/err" >"$TMP/err.unwrap" || :
	mv "$TMP/err.unwrap" "$TMP/err"
}

expect_run() {
	_n=$1 _st=$2 _out=$3 _err=$4
	shift 4
	[ "$1" = -- ] && shift
	"$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	_rc=$?
	_unwrap_err
	_why=""
	[ "$_rc" -eq "$_st" ] || _why="exit status $_rc, expected $_st"
	_d1=$(_golden "$_out" out) || _why="$_why${_why:+; }stdout differs"
	_d2=$(_golden "$_err" err) || _why="$_why${_why:+; }stderr differs"
	if [ -z "$_why" ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "$_why" "$_d1" "$_d2" "stderr: $(head -5 "$TMP/err")"
	fi
}

expect_err() {
	_n=$1 _st=$2 _msg=$3
	shift 3
	[ "$1" = -- ] && shift
	"$@" >"$TMP/out" 2>"$TMP/err" </dev/null
	_rc=$?
	_unwrap_err
	_first=$(head -n 1 "$TMP/err")
	if [ "$_rc" -eq "$_st" ] && [ "$_first" = "$_msg" ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "exit status $_rc (expected $_st)" \
		    "stderr: $_first" "wanted: $_msg"
	fi
}

check() {
	_n=$1
	shift
	if "$@" >"$TMP/check.out" 2>&1; then
		t_ok "$_n"
	else
		t_notok "$_n" "failed: $*" "$(head -10 "$TMP/check.out")"
	fi
}

expect_empty_dir() {
	if [ -z "$(ls -A "$2" 2>/dev/null)" ]; then
		t_ok "$1"
	else
		t_notok "$1" "unexpected files: $(ls -A "$2" | tr '\n' ' ')"
	fi
}

# no_torch_ranks NAME: say why NAME is skipped and succeed when it cannot
# run PyTorch ranks here (under DLPLAN_WRAP=valgrind, which wraps dlplan
# and not Python, or without /usr/bin/python3's torch and torchrun).
no_torch_ranks() {
	case "${DLPLAN_WRAP:-}" in
	*valgrind*)
		skip "$1" "Python ranks under DLPLAN_WRAP=valgrind; run without it"
		return 0 ;;
	esac
	if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null ||
	    ! command -v torchrun >/dev/null 2>&1; then
		skip "$1" "no /usr/bin/python3 with torch or no torchrun (sh tests/deps.sh)"
		return 0
	fi
	return 1
}
