#!/bin/sh
# run.sh - the plan -> run -> replan loop of README.md on bundled clusters,
# with simulated runs (simulate-run.py) in place of real training jobs.
#
#	sh plans/replan-example/run.sh [OUTDIR]
#
# OUTDIR (default: a new directory under $TMPDIR or /tmp) receives every
# plan and log.  DLPLAN names the binary (default: ./dlplan of the tree).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dlplan=${DLPLAN:-$top/dlplan}
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/replan-example.XXXXXX")}
mkdir -p "$out"
sim="python3 $here/simulate-run.py"

echo "# 1. Data parallelism on two-dc: one node turns out 1.5x slower."
"$dlplan" plan -c "$top/datasets/clusters/two-dc" \
    -m "$top/datasets/models/gpt2-xl.csv" --global-batch 256 \
    --micro-batch 4 --strategy dp -o "$out/dp/plan" |
    sed -n '1,3p;/^iteration/p'
$sim "$out/dp/plan/plan.json" --slow use-h100-1=1.5 --steps 32 \
    --noise 0.05 --spike-prob 0.01 --seed 42 >"$out/dp/steps.csv"
"$dlplan" replan "$out/dp/plan/plan.json" \
    --observed "$out/dp/steps.csv" \
    -o "$out/dp/replan"
# The job goes on with the new plan, whose stage times are already the
# measured ones: its log matches it, and replan keeps it.
$sim "$out/dp/replan/plan.json" --steps 32 --noise 0.05 --spike-prob 0.01 \
    --seed 43 >"$out/dp/steps2.csv"
"$dlplan" replan "$out/dp/replan/plan.json" \
    --observed "$out/dp/steps2.csv" -o "$out/dp/replan2" | tail -3

echo
echo "# 2. A pipeline on hetero-lab: the V100 stages run 2x slower; the"
echo "#    job logs busy times too, so --repartition moves layers."
"$dlplan" plan -c "$top/datasets/clusters/hetero-lab" \
    -m "$top/datasets/models/gpt2-xl.csv" --global-batch 256 \
    --micro-batch 4 --strategy pp -o "$out/pp/plan" | sed -n '1,/^iteration/p'
$sim "$out/pp/plan/plan.json" --slow lab-v100-0=2 --steps 32 --noise 0.05 \
    --spike-prob 0.01 --seed 7 --compute >"$out/pp/steps.csv"
"$dlplan" replan "$out/pp/plan/plan.json" \
    --observed "$out/pp/steps.csv" \
    --repartition -o "$out/pp/replan"
echo
echo "wrote $out"
