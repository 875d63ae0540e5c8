#!/bin/sh
# tests/bench/run.sh - the numbers of "make bench": one table on stdout,
# the same as CSV and an SVG chart in tests/bench/out/ (git ignores it).
#
#	DLPLAN=path/to/dlplan BUILD=build/std sh tests/bench/run.sh
#
# 1. Planning at scale: clusters from gen-cluster.py of 8, 64, 512, 4096
#    and 16,384 GPUs (1, 2, 4, 8 and 16 sites; 3, 3, 4, 5 and 5 GPU types)
#    x a 32-layer (llama2-7b) and an 80-layer (llama2-70b) model, global
#    batch 4 samples per GPU in micro-batches of 1.  Each is planned
#    BENCH_RUNS times (default 5; BENCH_HUGE_RUNS, default 3, at 16,384
#    GPUs) under "timeout BENCH_LIMIT" (default 300 s per run; a run that
#    hits it ends the series: "not finished").  Reported: the median wall
#    time, peak RSS (/usr/bin/time %M), and from "plan --format json" the
#    efficiency T_lb/T, the gap to estimate.bound_s, the gap to T_lb of
#    the GPUs the plan uses (from the cluster's nodes.csv and the loads in
#    plan.json) and the speed-up over the even and the
#    speed-proportional data-parallel baselines.
#    The same scales again on clusters from gen-cluster2.py (several
#    sites with their own GPU mix, WAN traffic history) with a global
#    batch of one sample per 4 GPUs (kind "gpus2" in raw.tsv).
# 2. Layers: the 64-GPU cluster x llama-style models of 12 to 1,000
#    blocks (dlplan model, hidden 2048), the same way.
# 3. Growth: least-squares slopes of log(time) against log(GPUs) and
#    log(layers) (report.py).
# 4. partition_balanced (DeepSpeed's min-max split) against dlplan's
#    partition on homogeneous GPUs: the table of test_balanced --table.
# 5. Forecast (predict.sh: throughput on 10,000 synthetic series, backtest
#    MAPE on ../shared/data/google-vm-cpu.csv) and routing of 1,000 flows
#    (route.sh), with one more run of each for the peak RSS.
# 6. Step time against published runs (published.py: the SC'21 Table 1
#    rows imported with dlplan import megatron, predicted against
#    measured teraFLOP/s per GPU), in published.txt after the table.
# 7. Many jobs (sched-scale.sh): "dlplan schedule" on BENCH_SCHED_JOBS
#    (default 100,000) gen-jobs.py jobs on philly-64, once without and
#    once with -o: wall, user and system time, peak RSS, the plan files
#    and megabytes written.
#
# BENCH_SCALES and BENCH_LAYERS override the lists (e.g. BENCH_SCALES="8
# 64" BENCH_LAYERS="12 32" BENCH_RUNS=1 for a quick look).

set -eu
LC_ALL=C
export LC_ALL
root=$(cd "$(dirname "$0")/../.." && pwd)
dlplan=${DLPLAN:-$root/dlplan}
build=${BUILD:-$root/build/std}
out=$root/tests/bench/out
runs=${BENCH_RUNS:-5}
huge_runs=${BENCH_HUGE_RUNS:-3}
limit=${BENCH_LIMIT:-300}
scales=${BENCH_SCALES:-8 64 512 4096 16384}
layers=${BENCH_LAYERS:-12 32 80 200 500 1000}
small_layers=${BENCH_SMALL_LAYERS:-1020 4092}
raw=$out/raw.tsv

mkdir -p "$out/clusters" "$out/models" "$out/json"
[ -x "$dlplan" ] || { echo "bench: no dlplan binary at $dlplan" >&2; exit 1; }
timer=""
if [ -x /usr/bin/time ]; then
	timer=/usr/bin/time
else
	echo "bench: /usr/bin/time missing (apt-get install time): no RSS" >&2
fi

now() {
	date +%s.%N
}

log() {
	printf 'bench: %s\n' "$*" >&2
}

# sites and GPU types of a scale
shape() {
	case $1 in
	8) echo "1 3" ;;
	64) echo "2 3" ;;
	512) echo "4 4" ;;
	4096) echo "8 5" ;;
	*) echo "16 5" ;;
	esac
}

# bench_plan KIND GPUS LAYERS CLUSTER MODEL NRUNS [BATCH]: time "dlplan
# plan" (global batch BATCH, default 4 per GPU), one raw.tsv line per run:
# kind gpus layers sites types batch run status wall_s rss_kb json cluster
bench_plan() {
	_kind=$1 _g=$2 _l=$3 _c=$4 _m=$5 _n=$6 _batch=${7:-$((4 * $2))}
	set -- $(shape "$_g")
	_sites=$1 _types=$2
	_json=$out/json/$_kind-$_g-$_l.json
	_i=1
	while [ "$_i" -le "$_n" ]; do
		_t0=$(now)
		_st=0
		if [ -n "$timer" ]; then
			$timer -f %M -o "$out/rss.txt" timeout "$limit" \
			    "$dlplan" plan -c "$_c" -m "$_m" \
			    --global-batch "$_batch" --micro-batch 1 \
			    --format json >"$out/plan.json" 2>"$out/plan.err" ||
			    _st=$?
		else
			timeout "$limit" "$dlplan" plan -c "$_c" -m "$_m" \
			    --global-batch "$_batch" --micro-batch 1 \
			    --format json >"$out/plan.json" 2>"$out/plan.err" ||
			    _st=$?
		fi
		_t1=$(now)
		_rss=$(tail -n 1 "$out/rss.txt" 2>/dev/null | tr -dc 0-9)
		[ -n "$_rss" ] || _rss=0
		[ "$_st" -eq 0 ] && cp "$out/plan.json" "$_json"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		    "$_kind" "$_g" "$_l" "$_sites" "$_types" "$_batch" "$_i" \
		    "$_st" "$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.4f", b - a }')" \
		    "$_rss" "$_json" "$_c" >>"$raw"
		log "$_kind $_g GPUs x $_l layers run $_i: status $_st," \
		    "$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.3f", b - a }') s"
		# Not finished, infeasible or broken: more runs say nothing new.
		[ "$_st" -eq 0 ] || break
		_i=$((_i + 1))
	done
}

: >"$raw"

# 1. GPUs x {32, 80} layers.
for g in $scales; do
	set -- $(shape "$g")
	c=$out/clusters/g$g
	[ -f "$c/nodes.csv" ] ||
	    python3 "$root/tests/bench/gen-cluster.py" "$g" "$1" "$c" --types "$2"
	n=$runs
	[ "$g" -gt 4096 ] && n=$huge_runs
	bench_plan gpus "$g" 32 "$c" "$root/datasets/models/llama2-7b.csv" "$n"
	bench_plan gpus "$g" 80 "$c" "$root/datasets/models/llama2-70b.csv" "$n"
done

# 1b. The same scales on gen-cluster2.py's clusters (sites with their own
# GPU mix, WAN traffic history), with a small batch: one sample per 4 GPUs.
for g in $scales; do
	set -- $(shape "$g")
	c=$out/clusters/h$g
	[ -f "$c/nodes.csv" ] ||
	    python3 "$root/tests/bench/gen-cluster2.py" "$g" "$1" "$c" \
	    --types "$2"
	n=$runs
	[ "$g" -gt 4096 ] && n=$huge_runs
	b=$((g / 4))
	[ "$b" -ge 1 ] || b=1
	bench_plan gpus2 "$g" 32 "$c" "$root/datasets/models/llama2-7b.csv" \
	    "$n" "$b"
	bench_plan gpus2 "$g" 80 "$c" "$root/datasets/models/llama2-70b.csv" \
	    "$n" "$b"
done

# 2. Layers on 64 GPUs.
c=$out/clusters/g64
[ -f "$c/nodes.csv" ] ||
    python3 "$root/tests/bench/gen-cluster.py" 64 2 "$c" --types 3
for l in $layers; do
	m=$out/models/llama-$l.csv
	[ -f "$m" ] || "$dlplan" model llama --preset llama2-7b --layers "$l" \
	    --hidden 2048 --heads 16 --kv-heads 16 --ffn 5632 --seq 2048 \
	    -o "$m"
	bench_plan layers 64 "$l" "$c" "$m" "$runs"
done

# 2b. Many small layers on a small cluster: every stage fits, so the
# partition DP meets its widest scans (a model of 1,024 such layers took
# minutes before the sliding window).
for l in $small_layers; do
	m=$out/models/gpt-small-$l.csv
	[ -f "$m" ] || "$dlplan" model gpt --layers "$l" --hidden 256 \
	    --heads 4 --vocab 50257 --seq 1024 -o "$m"
	bench_plan small 48 "$l" "$root/datasets/clusters/two-dc" "$m" \
	    "$runs" 256
done

# 4. partition_balanced against dlplan's partition.
bal=$out/balanced.txt
if [ -x "$build/tests/test_balanced" ]; then
	(cd "$root" && "$build/tests/test_balanced" --table \
	    datasets/models/*.csv) >"$bal" || true
else
	echo "not ok - no $build/tests/test_balanced (make unit)" >"$bal"
fi

# 5. Forecast and routing, reusing predict.sh and route.sh.
log "predict.sh"
sh "$root/tests/bench/predict.sh" "$dlplan" >"$out/predict.txt" 2>&1 ||
    echo "predict.sh failed: $?" >>"$out/predict.txt"
series=$out/series-10000x288.csv
prss=0
if [ -n "$timer" ] && [ -f "$series" ]; then
	$timer -f %M -o "$out/rss.txt" "$dlplan" predict -H "$series" \
	    --format csv >/dev/null
	prss=$(tail -n 1 "$out/rss.txt" | tr -dc 0-9)
fi
log "route.sh"
sh "$root/tests/bench/route.sh" "$dlplan" >"$out/route.txt" 2>&1 ||
    echo "route.sh failed: $?" >>"$out/route.txt"
rrss=0
if [ -n "$timer" ] && [ -f "$out/route/flows-1000.csv" ]; then
	$timer -f %M -o "$out/rss.txt" "$dlplan" route -c "$out/route" \
	    --flows "$out/route/flows-1000.csv" --format csv >/dev/null
	rrss=$(tail -n 1 "$out/rss.txt" | tr -dc 0-9)
fi
rm -f "$out/rss.txt" "$out/plan.json" "$out/plan.err"

# 7. Many jobs.
log "sched-scale.sh"
sh "$root/tests/bench/sched-scale.sh" "$dlplan" "$out" \
    "${BENCH_SCHED_JOBS:-100000}" >"$out/sched.txt" 2>&1 ||
    echo "sched-scale.sh failed: $?" >>"$out/sched.txt"

# 6. Published runs.
log "published.py"
python3 "$root/tests/bench/published.py" --dlplan "$dlplan" \
    --out "$out/published.txt" >/dev/null 2>&1 ||
    echo "published.py failed: $?" >>"$out/published.txt"

python3 "$root/tests/bench/report.py" --out "$out" --raw "$raw" \
    --limit "$limit" --balanced "$bal" --predict "$out/predict.txt" \
    --predict-rss "$prss" --route "$out/route.txt" --route-rss "$rrss" \
    --sched "$out/sched.txt"
echo
echo "Step time against the SC'21 Table 1 (tests/bench/published.py):"
cat "$out/published.txt"
