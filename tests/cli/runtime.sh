# plan --runtime and emit --launcher megatron|deepspeed|torchtitan: on the
# bundled clusters, each framework's plan keeps its restrictions and the
# configuration emit writes parses back (argparse, json, tomllib) to the
# plan (tests/cli/runtime-check.py); the configuration files and the
# price line are golden; a plan made for another runtime is refused.

CHK="/usr/bin/python3 $SRCDIR/tests/cli/runtime-check.py"
CL=$SRCDIR/datasets/clusters
MO=$SRCDIR/datasets/models
JOB="--global-batch 256 --micro-batch 4"

for rt in megatron deepspeed torchtitan; do
	for c in single-node hetero-lab two-dc geo-8; do
		for m in gpt2-xl llama2-7b; do
			d=$TMP/$rt-$c-$m
			expect_run "$rt on $c, $m: plan and launch files" 0 - - \
			    -- dlplan plan -q -c "$CL/$c" -m "$MO/$m.csv" $JOB \
			    --runtime $rt -o "$d" --launcher $rt -- python3 t.py
			check "$rt on $c, $m: restrictions and configuration" \
			    $CHK $rt "$d/plan.json" "$d/launch"
		done
	done
done

# The configuration files of one heterogeneous cluster, byte for byte.
H=$TMP/megatron-hetero-lab-gpt2-xl/launch
expect_run "megatron.args" 0 runtime-megatron.args - -- cat "$H/megatron.args"
H=$TMP/deepspeed-hetero-lab-gpt2-xl/launch
expect_run "ds_config.json and deepspeed-pipeline.json" 0 \
    runtime-deepspeed.json - -- cat "$H/ds_config.json" \
    "$H/deepspeed-pipeline.json"
H=$TMP/torchtitan-two-dc-gpt2-xl/launch
expect_run "torchtitan.toml" 0 runtime-torchtitan.toml - -- \
    sed 1,2d "$H/torchtitan.toml"

# The summary prices the restriction against the unrestricted plan.
for rt in megatron deepspeed torchtitan; do
	expect_run "$rt: price line" 0 runtime-price-$rt.txt - -- sh -c \
	    "'$DLPLAN' plan -c '$CL/two-dc' -m '$MO/gpt2-xl.csv' $JOB \
	    --runtime $rt | grep '^runtime'"
done

# --runtime dlplan is the plan of today, without a runtime key.
expect_run "runtime dlplan" 0 - - -- dlplan plan -q -c "$CL/hetero-lab" \
    -m "$MO/gpt2-xl.csv" $JOB --runtime dlplan -o "$TMP/rd"
expect_run "no runtime option" 0 - - -- dlplan plan -q \
    -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB -o "$TMP/r0"
check "--runtime dlplan: the same plan.json (but the solve time)" \
    /usr/bin/python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for d in (a, b):
    d['solver'].pop('time_s')
sys.exit(a != b or 'runtime' in a)" "$TMP/rd/plan.json" "$TMP/r0/plan.json"
check "--runtime dlplan: the same plan.csv" cmp "$TMP/rd/plan.csv" \
    "$TMP/r0/plan.csv"

# Refusals.
expect_err "framework launcher for a dlplan plan" 3 "dlplan: the plan was \
made for runtime dlplan, not megatron: megatron cannot run groups of \
different shapes or uneven micro-batches (make the plan with 'dlplan plan \
--runtime megatron')" -- dlplan emit "$TMP/r0/plan.json" --launcher megatron \
    -o "$TMP/x" -- python3 t.py
expect_err "deepspeed launcher for a megatron plan" 3 "dlplan: the plan was \
made for runtime megatron, not deepspeed: deepspeed cannot run groups of \
different shapes or uneven micro-batches (make the plan with 'dlplan plan \
--runtime deepspeed')" -- dlplan emit \
    "$TMP/megatron-hetero-lab-gpt2-xl/plan.json" --launcher deepspeed \
    -o "$TMP/x" -- python3 t.py
check "a refused launcher wrote nothing" test ! -e "$TMP/x/launch"
expect_err "nothing fits: exit 3 with the reason" 3 "dlplan: no plan that \
deepspeed can run fits the limits given (every group the same shape, even \
micro-batches per replica, the layer split deepspeed expresses, memory)" -- \
    dlplan plan -c "$CL/philly-64" -m "$MO/llama2-7b.csv" $JOB \
    --runtime deepspeed
expect_err "not with --budget" 1 "dlplan: option '--runtime' does not go \
with '--budget'" -- dlplan plan -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" \
    $JOB --runtime megatron --budget 10 --slots 2

# Several groups of several stages: Megatron's ranks in the plan's order.
for rt in megatron deepspeed torchtitan; do
	d=$TMP/hybrid-$rt
	expect_run "$rt, --strategy hybrid" 0 - - -- dlplan plan -q \
	    -c "$CL/single-node" -m "$MO/gpt2-xl.csv" $JOB --strategy hybrid \
	    --runtime $rt -o "$d" --launcher $rt -- python3 t.py
	check "$rt, --strategy hybrid: restrictions and configuration" \
	    $CHK $rt "$d/plan.json" "$d/launch"
done
expect_run "megatron.args of a hybrid plan" 0 runtime-megatron-hybrid.args \
    - -- cat "$TMP/hybrid-megatron/launch/megatron.args"
expect_run "eval names the runtime" 0 - - -- sh -c "'$DLPLAN' eval \
    '$TMP/hybrid-megatron/plan.json' | grep -qx 'runtime    megatron (made \
with plan --runtime megatron)'"
expect_err "a framework launcher needs its runtime" 1 "dlplan: option \
'--launcher torchtitan' needs '--runtime torchtitan'" -- dlplan plan \
    -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB -o "$TMP/y" \
    --launcher torchtitan -- python3 t.py
