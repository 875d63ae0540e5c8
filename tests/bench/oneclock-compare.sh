#!/bin/sh
# tests/bench/oneclock-compare.sh OLD NEW [OUTDIR] - plans of two dlplan
# builds on one corpus, both priced by NEW's eval (its definition of T):
# does the new search win or tie everywhere?  Not part of make check.
#
# Corpus (83 cases): every bundled cluster x gpt2-xl, llama2-7b,
# bert-large x the four strategies at global batch 256 in micro-batches
# of 2; the same clusters and models at batch 64 in micro-batches of 1
# (auto); clusters of both bench generators (tests/bench/gen-cluster*.py)
# of 64 and 512 GPUs x 32 and 80 blocks (llama2-7b, llama2-70b), batch 4
# per GPU (gen 1) or one per 4 GPUs (gen 2), micro-batch 1.
# Prints one line per case (T of OLD's plan, T of NEW's plan, their
# ratio) and a summary; a case that one build cannot plan says so.

set -u
OLD=$1 NEW=$2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${3:-$(mktemp -d "${TMPDIR:-/tmp}/dlplan-oneclock.XXXXXX")}
mkdir -p "$OUT/clusters"
for g in 64 512; do
	s=2; [ "$g" -eq 512 ] && s=4
	[ -f "$OUT/clusters/g$g/nodes.csv" ] || python3 \
	    "$SRC/tests/bench/gen-cluster.py" "$g" "$s" "$OUT/clusters/g$g" \
	    --types 3 >/dev/null
	[ -f "$OUT/clusters/h$g/nodes.csv" ] || python3 \
	    "$SRC/tests/bench/gen-cluster2.py" "$g" "$s" "$OUT/clusters/h$g" \
	    --types 3 >/dev/null
done

# price DIR: T of DIR/plan.json under NEW's eval, or "-".
price() {
	[ -f "$1/plan.json" ] || { echo -; return; }
	"$NEW" eval "$1/plan.json" --trust-paths --format json 2>/dev/null |
	    python3 -c 'import json, sys
print(json.load(sys.stdin)["estimate"]["iteration_s"])' 2>/dev/null || echo -
}

# one NAME CLUSTER MODEL ARGS...
one() {
	o_n=$1 o_c=$2 o_m=$3
	shift 3
	rm -rf "$OUT/old/$o_n" "$OUT/new/$o_n"
	"$OLD" plan -c "$o_c" -m "$o_m" "$@" -o "$OUT/old/$o_n" -q \
	    >/dev/null 2>&1
	"$NEW" plan -c "$o_c" -m "$o_m" "$@" -o "$OUT/new/$o_n" -q \
	    >/dev/null 2>&1
	o_to=$(price "$OUT/old/$o_n")
	o_tn=$(price "$OUT/new/$o_n")
	printf '%s %s %s\n' "$o_n" "$o_to" "$o_tn" >>"$OUT/t.txt"
	printf '%-32s %20s %20s\n' "$o_n" "$o_to" "$o_tn"
}

: >"$OUT/t.txt"
D=$SRC/datasets
for c in geo-8 hetero-lab philly-64 single-node two-dc; do
	for m in gpt2-xl llama2-7b bert-large; do
		for s in auto dp pp hybrid; do
			one "$c-$m-$s" "$D/clusters/$c" "$D/models/$m.csv" \
			    --global-batch 256 --micro-batch 2 --strategy "$s"
		done
		one "$c-$m-b64" "$D/clusters/$c" "$D/models/$m.csv" \
		    --global-batch 64 --micro-batch 1
	done
done
for g in 64 512; do
	for m in llama2-7b llama2-70b; do
		one "gen1-$g-$m" "$OUT/clusters/g$g" "$D/models/$m.csv" \
		    --global-batch $((4 * g)) --micro-batch 1
		one "gen2-$g-$m" "$OUT/clusters/h$g" "$D/models/$m.csv" \
		    --global-batch $((g / 4)) --micro-batch 1
	done
done
python3 - "$OUT/t.txt" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
both = [(n, float(a), float(b)) for n, a, b in rows if a != "-" and b != "-"]
win = sum(1 for _, a, b in both if b < a * (1 - 1e-9))
lose = [(n, b / a) for n, a, b in both if b > a * (1 + 1e-9)]
gm = math.exp(sum(math.log(b / a) for _, a, b in both) / max(len(both), 1))
print("cases %d, both planned %d: new faster %d, tie %d, slower %d; "
      "geometric mean new/old %.4f; best %.4f" % (
          len(rows), len(both), win, len(both) - win - len(lose), len(lose),
          gm, min(b / a for _, a, b in both)))
for n, r in lose:
    print("  slower: %s x%.4f" % (n, r))
PY
