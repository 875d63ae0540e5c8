#!/bin/sh
# plans/regen.sh - write the example plans: every bundled cluster with two
# models, under plans/CLUSTER--MODEL/ (plan.json and plan.csv).
#
#	DLPLAN=./dlplan sh plans/regen.sh [OUTDIR]
#
# "make plans" runs it; tests/cli/plan.sh runs it into a scratch
# directory and fails when plans/ is stale.  The job options are fixed
# here so the plans only change when dlplan or its inputs do.
set -eu
cd "$(dirname "$0")/.."
: "${DLPLAN:=./dlplan}"
out=${1:-plans}
for cluster in single-node hetero-lab two-dc geo-8; do
	for model in gpt2-xl llama2-7b; do
		dir=$out/$cluster--$model
		mkdir -p "$dir"
		"$DLPLAN" plan -q -c "datasets/clusters/$cluster" \
		    -m "datasets/models/$model.csv" \
		    --global-batch 256 --micro-batch 4 -o "$dir"
	done
done
