#!/bin/sh
# tests/fuzz/run.sh - build the libFuzzer targets of tests/fuzz/fuzz.c with
# clang (-fsanitize=fuzzer,address,undefined) and run each for a while.
#
#	FUZZ_SECONDS=60 sh tests/fuzz/run.sh [TARGET...]
#
# Targets: nodes links load traffic model flows steps plan (default: all;
# fuzz.c says what each one drives).  The objects of src/ are compiled by
# clang into build/fuzz/.  The seed corpus is made at run time in
# tests/fuzz/out/corpus/TARGET/ (git ignores out/) from datasets/ and
# tests/cli/data/ (big files cut to their first 4 KB of lines), and the
# corpus grows there from run to run.  A crash, leak, timeout or
# out-of-memory leaves tests/fuzz/out/TARGET-crash-* (etc.) and makes the
# script fail; reproduce with build/fuzz/fuzz-TARGET FILE.
#
#	FUZZ_SECONDS  run time per target (60)
#	FUZZ_CC       the compiler (clang); FUZZ_CFLAGS extra flags
#	FUZZ_JOBS     targets fuzzed at the same time (1)

set -eu
LC_ALL=C
export LC_ALL
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
secs=${FUZZ_SECONDS:-60}
cc=${FUZZ_CC:-clang}
jobs=${FUZZ_JOBS:-1}
build=$root/build/fuzz
out=$root/tests/fuzz/out
all="nodes links load traffic model flows steps plan"
targets=${*:-$all}

if ! command -v "$cc" >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "fuzz: installing clang"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		    --no-install-recommends clang >/dev/null
	else
		echo "fuzz: $cc not found (apt-get install clang)" >&2
		exit 1
	fi
fi
sh tests/deps.sh

san="-fsanitize=address,undefined -fno-sanitize-recover=all"
flags="-std=c11 -g -O1 -fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L \
-DDLPLAN_VERSION=\"fuzz\" -Isrc ${FUZZ_CFLAGS:-}"
libs="-lglpk -lcsv -ljansson -lnettle -lm"

# Build: src objects with coverage, then one binary per target.
mkdir -p "$build/obj" "$out"
echo "fuzz: building with $($cc --version | head -n 1)"
n=0
for f in src/*.c; do
	[ "$f" = src/main.c ] && continue
	o=$build/obj/$(basename "$f" .c).o
	[ -f "$o" ] && [ -z "$(find src/ -newer "$o" -name '*.[ch]' | head -n 1)" ] &&
	    continue
	$cc $flags $san -fsanitize=fuzzer-no-link -c -o "$o" "$f" &
	n=$((n + 1))
	if [ "$n" -ge 2 ]; then
		wait
		n=0
	fi
done
wait
for t in $targets; do
	$cc $flags $san -fsanitize=fuzzer -DFUZZ_TARGET="\"$t\"" \
	    -DFUZZ_SRCDIR="\"$root\"" -o "$build/fuzz-$t" tests/fuzz/fuzz.c \
	    "$build"/obj/*.o $libs
done

# first_lines FILE: at most 4 KB of whole lines.
first_lines() {
	head -c 4096 "$1" | awk 'BEGIN { RS = "\n" } { if (length(buf) + length($0) < 4000) buf = buf $0 "\n" } END { printf "%s", buf }'
}

# seed TARGET FILE...: copy the files into the corpus of TARGET.
seed() {
	_t=$1
	shift
	mkdir -p "$out/corpus/$_t"
	for _f in "$@"; do
		[ -f "$_f" ] || continue
		_n=$(printf '%s' "$_f" | tr '/' '_')
		first_lines "$_f" >"$out/corpus/$_t/seed-$_n"
	done
}

seed nodes datasets/clusters/*/nodes.csv tests/cli/data/*/nodes.csv \
    tests/cli/data/*/*/nodes.csv
seed links datasets/clusters/*/links.csv tests/cli/data/*/links.csv
seed load datasets/clusters/*/load.csv tests/cli/data/predict-load.csv \
    tests/cli/data/*/load.csv
seed traffic datasets/clusters/*/traffic.csv \
    tests/cli/data/predict-traffic.csv tests/cli/data/*/traffic.csv
seed model datasets/models/*.csv tests/cli/data/*model*.csv \
    tests/cli/data/*/m*.csv tests/cli/data/*/*/model*.csv
seed flows tests/cli/data/route-*.csv
seed steps tests/cli/data/replan/*-*.csv tests/cli/data/replan/noisy*.csv
seed plan tests/cli/data/*.json tests/cli/data/*/*.json
# Plans as the planner writes them, for both contexts of the plan target.
if [ -x "$root/dlplan" ]; then
	"$root/dlplan" plan -c tests/cli/data/eval/one \
	    -m tests/cli/data/eval/m4.csv --global-batch 6 -q \
	    -o "$out/gen-one" >/dev/null 2>&1 || true
	"$root/dlplan" plan -c datasets/clusters/two-dc \
	    -m datasets/models/llama2-7b.csv --global-batch 64 --micro-batch 2 \
	    -q -o "$out/gen-two-dc" >/dev/null 2>&1 || true
	# A cost schedule (--budget) and a replan lineage.
	"$root/dlplan" plan -c datasets/clusters/two-dc \
	    -m datasets/models/llama2-7b.csv --global-batch 64 --micro-batch 2 \
	    --budget 150 --slots 3 -q -o "$out/gen-budget" >/dev/null 2>&1 || true
	awk 'BEGIN { print "rank,step,seconds"; for (s = 0; s < 10; s++)
	    for (r = 0; r < 4; r++) printf "%d,%d,%.3f\n", r, s, 0.3 + r * 0.1 }' \
	    >"$out/steps-one.csv"
	"$root/dlplan" replan "$out/gen-one/plan.json" \
	    --observed "$out/steps-one.csv" --repartition -q \
	    -o "$out/gen-replan" >/dev/null 2>&1 || true
	for g in one two-dc budget replan; do
		[ -f "$out/gen-$g/plan.json" ] &&
		    cp "$out/gen-$g/plan.json" "$out/corpus/plan/seed-gen-$g.json"
	done
	# steps.csv rows for both ranks of pp2.json.
	awk 'BEGIN { print "rank,step,seconds"; for (s = 0; s < 6; s++)
	    for (r = 0; r < 2; r++) printf "%d,%d,%.3f\n", r, s, 0.3 + r * 0.1 }' \
	    >"$out/corpus/steps/seed-gen.csv"
fi

# Dictionaries: column names and tricky values; the plan's JSON keys.
{
	for w in node site gpus gpu_model tflops mem_gb intra_gbps nic_gbps \
	    mfu cost_per_hour host src dst gbps latency_ms duplex t util \
	    layer fwd_gflop bwd_gflop params_m act_mb mem_mb tp_mb flow mb \
	    rank step seconds samples compute_seconds x_ 1e308 -1e308 nan \
	    inf -0 0x10 1e-320 9223372036854775808; do
		printf '"%s"\n' "$w"
	done
	printf '"\\""\n"\\x0d\\x0a"\n"#"\n","\n"\\xef\\xbb\\xbf"\n'
} >"$out/csv.dict"
grep -o '"[a-z_0-9./]*"' src/plan.c src/budget.c src/replan.c |
    cut -d: -f2 | sort -u | grep -v '^""$' >"$out/plan.dict"
printf '"dlplan.plan/1"\n"{"\n"}"\n"["\n"]"\n"1e308"\n"-1"\n"null"\n' \
    >>"$out/plan.dict"

# Run.
rm -f "$out"/*-crash-* "$out"/*-leak-* "$out"/*-timeout-* "$out"/*-oom-* \
    "$out"/*-slow-unit-*
fuzz_one() {
	_t=$1
	_d=$out/csv.dict
	[ "$_t" = plan ] && _d=$out/plan.dict
	"$build/fuzz-$_t" -max_total_time="$secs" -timeout=10 \
	    -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
	    -dict="$_d" -artifact_prefix="$out/$_t-" "$out/corpus/$_t" \
	    >"$out/$_t.log" 2>&1 || true
}
n=0
for t in $targets; do
	echo "fuzz: $t for $secs s"
	if [ "$jobs" -gt 1 ]; then
		fuzz_one "$t" &
		n=$((n + 1))
		if [ "$n" -ge "$jobs" ]; then
			wait
			n=0
		fi
	else
		fuzz_one "$t"
	fi
done
wait

# Report.
status=0
printf '%-8s %10s %8s %8s %7s  %s\n' target execs exec/s cov corpus result
for t in $targets; do
	l=$out/$t.log
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$l" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$l" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$l" | tail -n 1 | cut -d' ' -f2)
	corp=$(ls "$out/corpus/$t" | wc -l)
	arts=$(ls "$out" | grep -E "^$t-(crash|leak|timeout|oom|slow-unit)-" || true)
	if [ -n "$arts" ]; then
		res="FOUND: $(echo $arts)"
		status=1
	elif grep -q 'ERROR: libFuzzer\|ERROR: AddressSanitizer\|runtime error' "$l"; then
		res="ERROR: see $l"
		status=1
	else
		res=ok
	fi
	printf '%-8s %10s %8s %8s %7s  %s\n' "$t" "${execs:-?}" "${rate:-?}" \
	    "${cov:-?}" "$corp" "$res"
done
exit $status
