# plan --runtime and emit --launcher megatron|deepspeed|torchtitan: on the
# bundled clusters, each framework's plan keeps its restrictions and the
# configuration emit writes parses back (argparse, json, tomllib) to the
# plan (tests/cli/runtime-check.py); the configuration files and the
# price line are golden; a plan made for another runtime is refused.

CHK="/usr/bin/python3 $SRCDIR/tests/cli/runtime-check.py"
CL=$SRCDIR/datasets/clusters
MO=$SRCDIR/datasets/models
JOB="--global-batch 256 --micro-batch 4"

# Megatron-LM: every bundled cluster x gpt2-xl, llama2-7b, bert-large.
# Each plan either exists, and then the transformer layers Megatron builds
# on each pipeline rank (its get_num_layers_to_build(), re-derived in
# runtime-check.py with the file and line) are the plan's blocks of that
# stage and the validate_args() conditions hold; or no Megatron plan fits
# (exit 3 with the reason).
# The same for torchtitan: the modules of each model part
# (module_fqns_per_model_part as its _split_module() reads them) hold the
# plan's blocks of that stage, and its batch, mesh and model rules hold;
# it builds no GPT or BERT (torchtitan/models/__init__.py), so plan
# refuses them.
for rt in megatron torchtitan deepspeed; do
	for c in "$CL"/*; do
		c=${c##*/}
		for m in gpt2-xl llama2-7b bert-large; do
			d=$TMP/$rt-$c-$m
			if [ $rt = torchtitan ] && [ $m != llama2-7b ]; then
				f=gpt
				[ $m = bert-large ] && f=bert
				expect_err "torchtitan on $c, $m: no $f family" \
				    3 "dlplan: model '$MO/$m.csv' is a $f: \
torchtitan has no $f family (it builds deepseek_v3, flux, gpt_oss, \
kimi_k2_7, llama3, muse_glimmer, qwen3 and qwen3_5; of dlplan's families, \
llama is its llama3)" -- dlplan plan -q -c "$CL/$c" -m "$MO/$m.csv" $JOB \
				    --runtime torchtitan -o "$d" --launcher \
				    torchtitan -- --mock-data
				continue
			fi
			check "$rt on $c, $m: a plan, or exit 3 with the reason" \
			    sh -c "'$DLPLAN' plan -q -c '$CL/$c' -m '$MO/$m.csv' \
			    $JOB --runtime $rt -o '$d' --launcher $rt -- \
			    --mock-data 2>'$d.err'; rc=\$?; [ \$rc = 0 ] || \
			    { [ \$rc = 3 ] && grep -q \
			    '^dlplan: no plan that $rt can run fits' '$d.err'; }"
			[ -f "$d/plan.json" ] || continue
			check "$rt on $c, $m: the framework's own rules" \
			    $CHK $rt "$d/plan.json" "$d/launch"
		done
	done
done

# The launch line: worker.sh execs megatron.sh, which runs the training
# script with every argument of megatron.args as its own word and then the
# words given after "--" (a stub pretrain_gpt.py prints its argv).
d=$TMP/megatron-hetero-lab-llama2-7b
mkdir -p "$TMP/mlm"
printf 'import json, sys\nprint(json.dumps(sys.argv[1:]))\n' \
    >"$TMP/mlm/pretrain_gpt.py"
check "megatron.sh: every argument its own word" sh -c "
	cd '$d/launch' && RANK=0 LOCAL_RANK=0 WORLD_SIZE=\$(sed -n \
	's/^world_size=//p' worker.sh) MEGATRON_LM='$TMP/mlm' \
	DLPLAN_PYTHON=/usr/bin/python3 sh worker.sh >'$TMP/argv.json' &&
	/usr/bin/python3 -c \"
import json, sys
argv = json.load(open(sys.argv[1]))
want = open(sys.argv[2]).read().split('\\\\n')[:-1] + ['--mock-data']
sys.exit(argv != want)\" '$TMP/argv.json' megatron.args"
check "megatron.sh: CUDA_DEVICE_MAX_CONNECTIONS=1 with TP > 1" \
    grep -qx 'CUDA_DEVICE_MAX_CONNECTIONS=1' "$d/launch/megatron.sh"

# The configuration files of one heterogeneous cluster, byte for byte.
H=$TMP/megatron-hetero-lab-llama2-7b/launch
expect_run "megatron.args and megatron.sh" 0 runtime-megatron.args - -- \
    sh -c "cat '$H/megatron.args'; sed 1,3d '$H/megatron.sh'"

# The summary prices the restriction against the unrestricted plan.
for rt in megatron deepspeed torchtitan; do
	m=gpt2-xl
	[ $rt = torchtitan ] && m=llama2-7b
	expect_run "$rt: price line" 0 runtime-price-$rt.txt - -- sh -c \
	    "'$DLPLAN' plan -c '$CL/two-dc' -m '$MO/$m.csv' $JOB \
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

# The overlap: the reference executor runs dp when the plan asks for it
# (auto stays none, as the goldens show), not with a sharded optimizer;
# DeepSpeed's pipeline engine runs none only.
check "--runtime dlplan --overlap dp is recorded" sh -c "
    '$DLPLAN' plan -q -c '$CL/hetero-lab' -m '$MO/gpt2-xl.csv' $JOB \
    --overlap dp -o '$TMP/ovl' &&
    grep -q '\"overlap\": \"dp\"' '$TMP/ovl/plan.json'"
# The plan the search finds without overlap is a candidate of the search
# with it: here the improvement phase led the overlap search from a
# faster start (3 groups) to a slower end (8 groups, 2.3367 s) than the
# one-group plan found without overlap, which prices 2.3250 s with it.
ovl_not_slower() {
	"$DLPLAN" plan -q -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB \
	    --overlap none -o "$TMP/ovn" || return 1
	/usr/bin/python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
p["options"]["overlap"] = "dp"
json.dump(p, open(sys.argv[2], "w"))' "$TMP/ovn/plan.json" \
	    "$TMP/ovn/plan-dp.json" || return 1
	"$DLPLAN" eval "$TMP/ovl/plan.json" --format json >"$TMP/ovt1" &&
	"$DLPLAN" eval "$TMP/ovn/plan-dp.json" --format json >"$TMP/ovt2" &&
	/usr/bin/python3 -c 'import json, sys
t = [json.load(open(f))["estimate"]["iteration_s"] for f in sys.argv[1:]]
print("T with --overlap dp %.6g, the none plan priced with dp %.6g" % tuple(t))
sys.exit(t[0] > t[1] * (1 + 1e-9))' "$TMP/ovt1" "$TMP/ovt2"
}
check "--overlap dp: not slower than the --overlap none plan priced with dp" \
    ovl_not_slower
expect_err "--runtime dlplan: overlap dp with a sharded optimizer" 1 \
    "dlplan: '--overlap dp' with '--optimizer sharded': the reference executor does not overlap the parameter gather with the next forward (use '--overlap none')" -- \
    dlplan plan -q -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB \
    --overlap dp --optimizer sharded
expect_err "--runtime deepspeed: no overlap" 1 \
    "dlplan: '--overlap dp': '--runtime deepspeed' reduces gradients after the pipeline, overlapping nothing" -- \
    dlplan plan -q -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB \
    --runtime deepspeed --overlap dp

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
micro-batches per replica, the layer split deepspeed expresses, memory); \
TP 2, 4, 8 only with one stage: deepspeed runs TP > 1 only without a \
pipeline: a PipelineModule does not slice tensors, and AutoTP \
(tensor_parallel.autotp_size) combines TP with data parallelism and ZeRO \
only, its process groups a data x TP mesh with no pipeline axis" -- \
    dlplan plan -c "$CL/philly-64" -m "$MO/llama2-7b.csv" $JOB \
    --runtime deepspeed --recompute none
check "deepspeed fits it there recomputing every block" sh -c "
    '$DLPLAN' plan -q -c '$CL/philly-64' -m '$MO/llama2-7b.csv' $JOB \
    --runtime deepspeed -o '$TMP/savers-deepspeed-philly' &&
    grep -q '\"recompute\": \"full\"' '$TMP/savers-deepspeed-philly/plan.json'"

expect_err "nothing fits: the TP degrees the heads refuse" 3 "dlplan: no \
plan that megatron can run fits the limits given (every group the same \
shape, even micro-batches per replica, the layer split megatron expresses, \
memory); TP 2, 4, 8 left out: megatron needs num_attention_heads (25) \
divisible by TP 2 and num_query_groups (25) a multiple or a divisor of it" \
    -- dlplan plan -c "$CL/philly-64" -m "$MO/gpt2-xl.csv" $JOB \
    --runtime megatron --recompute none --attention unfused
expect_err "not with --budget" 1 "dlplan: option '--runtime' does not go \
with '--budget'" -- dlplan plan -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" \
    $JOB --runtime megatron --budget 10 --slots 2

# Several groups of several stages: Megatron's ranks in the plan's order.
# torchtitan builds llama3, and no pipeline for a head tied to the
# embedding: llama2-7b.
for rt in megatron deepspeed torchtitan; do
	d=$TMP/hybrid-$rt
	m=$MO/gpt2-xl.csv
	[ $rt = torchtitan ] && m=$MO/llama2-7b.csv
	expect_run "$rt, --strategy hybrid" 0 - - -- dlplan plan -q \
	    -c "$CL/single-node" -m "$m" $JOB --strategy hybrid \
	    --runtime $rt -o "$d" --launcher $rt -- python3 t.py
	check "$rt, --strategy hybrid: restrictions and configuration" \
	    $CHK $rt "$d/plan.json" "$d/launch"
done
# torchtitan's: TP 2, PP 2, DP 2 on one node.
H=$TMP/hybrid-torchtitan/launch
expect_run "dlplan_torchtitan.py and torchtitan.sh" 0 runtime-torchtitan.py \
    - -- sh -c "sed 1,2d '$H/dlplan_torchtitan.py'; sed 1,3d \
    '$H/torchtitan.sh' | sed 's|$TMP|TMP|'"
expect_run "megatron.args of a hybrid plan" 0 runtime-megatron-hybrid.args \
    - -- cat "$TMP/hybrid-megatron/launch/megatron.args"
H=$TMP/hybrid-deepspeed/launch
expect_run "ds_config.json, deepspeed-pipeline.json, deepspeed.sh" 0 \
    runtime-deepspeed.json - -- sh -c "cat '$H/ds_config.json' \
    '$H/deepspeed-pipeline.json'; sed 1,3d '$H/deepspeed.sh' | \
    sed 's|$TMP|TMP|g'"
expect_run "eval names the runtime" 0 - - -- sh -c "'$DLPLAN' eval \
    '$TMP/hybrid-megatron/plan.json' | grep -qx 'runtime    megatron (made \
with plan --runtime megatron)'"
expect_err "a framework launcher needs its runtime" 1 "dlplan: option \
'--launcher torchtitan' needs '--runtime torchtitan'" -- dlplan plan \
    -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" $JOB -o "$TMP/y" \
    --launcher torchtitan -- python3 t.py

# DeepSpeed's and torchtitan's memory savers, chosen by the search where
# they are faster or the only way to fit (micro-batch 1): llama2-70b on
# two-dc, which torchtitan runs faster recomputing every block (FullAC),
# and on geo-8, which DeepSpeed fits only by recomputing
# (activation_checkpoint_interval 1), with ZeRO stage 1 for --optimizer
# sharded; llama2-13b on geo-8 with torchtitan's FSDP over two groups.
# runtime-check.py checks each configuration with the framework's rules,
# and the launch chains below run them.
SJOB="--global-batch 256 --micro-batch 1"
# savers RUNTIME CLUSTER MODEL NAME: the plan into $TMP/savers-RUNTIME-NAME.
savers() {
	_d=$TMP/savers-$1-$4
	expect_run "$1 on $2, $3: the savers" 0 - - -- dlplan plan -q \
	    -c "$CL/$2" -m "$MO/$3.csv" $SJOB --runtime $1 --optimizer sharded \
	    -o "$_d" --launcher $1 -- --mock-data
	check "$1 on $2, $3: the savers by the framework's rules" \
	    $CHK $1 "$_d/plan.json" "$_d/launch"
}
savers torchtitan two-dc llama2-70b rc
savers torchtitan geo-8 llama2-13b fsdp
savers deepspeed geo-8 llama2-70b rc
check "torchtitan: FullAC for a plan that recomputes" grep -qx \
    '    config.activation_checkpoint = FullAC.Config()' \
    "$TMP/savers-torchtitan-rc/launch/dlplan_torchtitan.py"
check "torchtitan: FSDP over the groups" grep -qx \
    '    p.data_parallel_shard_degree = 2' \
    "$TMP/savers-torchtitan-fsdp/launch/dlplan_torchtitan.py"
check "deepspeed: every layer checkpointed, ZeRO stage 1" sh -c "
    grep -qx '  \"activation_checkpoint_interval\": 1,' \
    '$TMP/savers-deepspeed-rc/launch/deepspeed-pipeline.json' &&
    grep -qx '  \"zero_optimization\": {\"stage\": 1, \"use_multi_rank_bucket_allreduce\": false}' \
    '$TMP/savers-deepspeed-rc/launch/ds_config.json'"
check "deepspeed: without recomputation no plan fits there" sh -c "
    '$DLPLAN' plan -q -c '$CL/geo-8' -m '$MO/llama2-70b.csv' $SJOB \
    --runtime deepspeed --recompute none >/dev/null 2>&1; [ \$? = 3 ]"
# A saver the framework lacks is refused with the reason; a plan that
# recomputes some blocks of a stage is one neither framework runs.
expect_err "deepspeed: no selective recomputation" 1 "dlplan: '--runtime \
deepspeed': deepspeed has no selective recomputation: a PipelineModule's \
activation_checkpoint_interval recomputes whole layers (use '--recompute \
full' or 'auto')" -- dlplan plan -c "$CL/hetero-lab" -m "$MO/gpt2-xl.csv" \
    $JOB --runtime deepspeed --recompute selective
expect_err "torchtitan: no unfused attention" 1 "dlplan: '--runtime \
torchtitan': torchtitan's llama3 has no unfused attention (its backends, \
flex and varlen, keep no scores)" -- dlplan plan -c "$CL/hetero-lab" \
    -m "$MO/llama2-7b.csv" $JOB --runtime torchtitan --attention unfused
nb=$(/usr/bin/python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
s = p['groups'][0]['stages'][0]
print(s['recompute_layers'])
s['recompute_layers'] = 1
json.dump(p, open(sys.argv[2], 'w'))" "$TMP/savers-torchtitan-rc/plan.json" \
    "$TMP/savers-torchtitan-rc/plan-some.json")
expect_err "torchtitan: some blocks of a stage recomputed" 3 "dlplan: stage 0 \
recomputes 1 of its $nb transformer blocks: torchtitan recomputes every \
block of every stage or none" -- dlplan emit \
    "$TMP/savers-torchtitan-rc/plan-some.json" --launcher torchtitan \
    -o "$TMP/some"

# What a framework cannot run exits 3 with the reason: a model without the
# "dlplan model" line (no sizes to build from), and a plan whose TP degree
# does not divide the model's heads (its model replaced by one with 25).
sed 1d "$MO/llama2-7b.csv" >"$TMP/profiled.csv"
expect_err "megatron needs the model's sizes" 3 "dlplan: model \
'$TMP/profiled.csv' has no 'dlplan model' line of a transformer (gpt, \
llama, bert): megatron builds the model from its sizes (write model.csv \
with 'dlplan model')" -- dlplan plan -c "$CL/hetero-lab" \
    -m "$TMP/profiled.csv" $JOB --runtime megatron
mkdir -p "$TMP/heads25"
dlplan model llama --preset llama2-7b --heads 25 --kv-heads 25 \
    --hidden 4000 >"$TMP/heads25/model.csv"
/usr/bin/python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
for i in p['inputs']:
    if i['kind'] == 'model':
        i['path'] = sys.argv[2]
        del i['sha256']
json.dump(p, open(sys.argv[3], 'w'))" \
    "$TMP/megatron-hetero-lab-llama2-7b/plan.json" "$TMP/heads25/model.csv" \
    "$TMP/heads25/plan.json"
expect_err "megatron: TP 4 on 25 heads" 3 "dlplan: TP 4, 3 stages: megatron \
needs num_attention_heads (25) divisible by TP 4 and num_query_groups (25) \
a multiple or a divisor of it" -- dlplan emit --ignore-digests --trust-paths \
    "$TMP/heads25/plan.json" --launcher megatron -o "$TMP/heads25"

# DeepSpeed's launch chain, end to end: deepspeed.sh through DeepSpeed's
# runner and launch.py rules (tests/cli/deepspeed-launch.py: the hostfile,
# pdsh's remote shell line, launch.py's RANK and LOCAL_RANK), each rank's
# training command printing its argv and environment, checked against the
# plan; for every DeepSpeed plan above, and for hosts that run different
# rank counts (8 and 6 GPUs of philly-64: DeepSpeed's LOCAL_RANK is RANK
# modulo the host's count, which worker.sh corrects).
# One short line (under PIPE_BUF: ranks a node script starts together
# write to one pipe): the argv and the launch variables.
cat >"$TMP/rankenv.py" <<'PY'
import json, os, re, sys
env = {k: v for k, v in os.environ.items() if k.startswith("DLPLAN_") or
       re.fullmatch(r"(LOCAL_)?(RANK|WORLD_SIZE|SIZE)|MASTER_ADDR|"
                    r"CUDA_VISIBLE_DEVICES", k)}
sys.stdout.write(json.dumps({"argv": sys.argv[1:], "env": env}) + "\n")
PY
DSL="/usr/bin/python3 $SRCDIR/tests/cli/deepspeed-launch.py"
dlplan plan -q -c "$CL/philly-64" -m "$MO/bert-large.csv" --global-batch 256 \
    --micro-batch 1 --strategy pp --max-tp 1 --runtime deepspeed \
    -o "$TMP/deepspeed-uneven" >/dev/null
for d in "$TMP"/deepspeed-* "$TMP"/savers-deepspeed-rc; do
	[ -f "$d/plan.json" ] || continue
	check "deepspeed launch chain: ${d##*/}" sh -c "
	    '$DLPLAN' emit '$d/plan.json' --launcher deepspeed -o '$d/e2e' -- \
	    /usr/bin/python3 '$TMP/rankenv.py' >/dev/null &&
	    cd '$TMP' && DLPLAN_DEEPSPEED=\"$DSL $d/plan.json\" \
	    sh '$d/e2e/launch/deepspeed.sh'"
done
check "deepspeed: the hosts run 8 and 2 ranks" sh -c "grep -qx \
    'dgx1-v100-0 slots=8' '$TMP/deepspeed-uneven/e2e/launch/hostfile' &&
    grep -qx 'dgx1-v100-3 slots=2' \
    '$TMP/deepspeed-uneven/e2e/launch/hostfile'"

# DeepSpeed's PDSH runner puts the path of worker.sh unquoted into the
# line each host's shell reads (multinode_runner.py:98-123): an output
# directory that shell would split or expand is refused, and nothing runs.
for o in "$TMP/run dir" "$TMP/run\$(touch $TMP/pwned)" "$TMP/r;id" \
    "$TMP/r*"; do
	expect_err "deepspeed: output directory '$o'" 2 "dlplan: output \
directory '$o' cannot be given to deepspeed: its launcher passes \
'$o/launch/worker.sh' to a remote shell unquoted, which would split or \
expand it (use a path of letters, digits and / . _ + , : @ % = -)" -- \
	    dlplan emit "$TMP/hybrid-deepspeed/plan.json" --launcher deepspeed \
	    -o "$o" -- python3 t.py
	check "deepspeed: '$o' written nowhere" test ! -e "$o"
done
check "deepspeed: nothing ran" test ! -e "$TMP/pwned"
mkdir -p "$TMP/a dir"
expect_err "deepspeed.sh from a directory a remote shell would split" 2 \
    "deepspeed.sh: DeepSpeed's launcher passes the current directory \
'$TMP/a dir' to a remote shell unquoted; run it from a directory without \
spaces or shell characters" -- sh -c "cd '$TMP/a dir' && \
    DLPLAN_DEEPSPEED=false sh '$TMP/hybrid-deepspeed/launch/deepspeed.sh'"

# Precision: bf16 where every GPU of the plan has it, else fp16 with
# dynamic loss scaling (runtime-check.py derives which from nodes.csv);
# torchtitan has no fp16 and leaves such GPUs out.
expect_err "torchtitan: no GPU with bf16" 3 "dlplan: no plan that \
torchtitan can run fits the limits given (every group the same shape, even \
micro-batches per replica, the layer split torchtitan expresses, memory); \
GPUs without bf16 left out (V100-SXM2-16GB, P100-PCIe-16GB): torchtitan \
trains in bfloat16 or float32, with no fp16 loss scaling" -- dlplan plan \
    -c "$CL/philly-64" -m "$MO/llama2-7b.csv" $JOB --runtime torchtitan
check "deepspeed on V100 and P100: fp16 with dynamic loss scaling" grep -qx \
    '  "fp16": {"enabled": true, "loss_scale": 0},' \
    "$TMP/deepspeed-uneven/e2e/launch/ds_config.json"

# Megatron's and torchtitan's launch chain, end to end: every
# torchrun-<node>.sh through torchrun's rank rules
# (tests/cli/torchrun-launch.py), worker.sh, megatron.sh or torchtitan.sh,
# and a training program that prints its argv and environment (for
# torchtitan a stand-in for "python3 -m torchtitan.train" that loads the
# configuration as torchtitan's ConfigManager does), each rank checked
# against the plan: host, RANK, LOCAL_RANK, and torchtitan's mesh position.
TRL="/usr/bin/python3 $SRCDIR/tests/cli/torchrun-launch.py"
mkdir -p "$TMP/mlm2" "$TMP/ttbase"
cp "$TMP/rankenv.py" "$TMP/mlm2/pretrain_gpt.py"
mkdir -p "$TMP/mlm2/examples/bert"
cp "$TMP/rankenv.py" "$TMP/mlm2/examples/bert/pretrain_bert.py"
cat >"$TMP/ttbase/my_configs.py" <<'PY'
"""A stand-in llama3 configuration of llama2-7b's sizes."""
import types
ns = types.SimpleNamespace


def llama2_7b():
    block = ns(feed_forward=ns(w1=ns(out_features=11008)))
    model = ns(layers=[block] * 32, dim=4096, vocab_size=32000,
               first_attention=ns(n_heads=32, n_kv_heads=32))
    return ns(model_spec=ns(name="llama3", model=model),
              parallelism=ns(expert_parallel_degree=1),
              training=ns(disable_cuda_graphs=False),
              activation_checkpoint="SAC")


def llama(blocks, dim, heads, kv_heads, ffn):
    def make():
        c = llama2_7b()
        c.model_spec.model = ns(
            layers=[ns(feed_forward=ns(w1=ns(out_features=ffn)))] * blocks,
            dim=dim, vocab_size=32000,
            first_attention=ns(n_heads=heads, n_kv_heads=kv_heads))
        return c
    return make


llama2_13b = llama(40, 5120, 40, 40, 13824)
llama2_70b = llama(80, 8192, 64, 8, 28672)
PY
TTENV="PYTHONPATH='$TMP/ttbase' DLPLAN_TORCHTITAN_BASE=my_configs:llama2_7b \
DLPLAN_PYTHON='/usr/bin/python3 $SRCDIR/tests/cli/torchtitan-train.py'"
for d in "$TMP"/megatron-* "$TMP"/torchtitan-* "$TMP"/hybrid-megatron \
    "$TMP"/hybrid-torchtitan; do
	[ -f "$d/plan.json" ] || continue
	rt=${d##*/}
	rt=${rt#hybrid-}
	rt=${rt%%-*}
	env="MEGATRON_LM='$TMP/mlm2' DLPLAN_PYTHON=/usr/bin/python3"
	[ $rt = torchtitan ] && env=$TTENV
	check "torchrun launch chain: ${d##*/}" sh -c "
	    '$DLPLAN' emit '$d/plan.json' --launcher $rt -o '$d/e2e' \
	    2>/dev/null >/dev/null && $env \
	    $TRL '$d/plan.json' '$d/e2e/launch'"
done
# The savers' plans, FullAC and FSDP loaded as torchtitan-train.py does.
for a in rc:llama2_70b fsdp:llama2_13b; do
	d=$TMP/savers-torchtitan-${a%%:*}
	check "torchrun launch chain: ${d##*/}" sh -c "
	    '$DLPLAN' emit '$d/plan.json' --launcher torchtitan -o '$d/e2e' \
	    2>/dev/null >/dev/null && $TTENV \
	    DLPLAN_TORCHTITAN_BASE=my_configs:${a#*:} \
	    $TRL '$d/plan.json' '$d/e2e/launch'"
done

# README.md, "Running a plan with Megatron-LM, DeepSpeed or torchtitan":
# its table is what tests/cli/runtime-table.py computes, and its commands
# (not its transcripts) run as written (from a directory with the bundled datasets), the
# frameworks' launchers and programs replaced by the stand-ins above, and
# every rank they start checked against its plan.
check "README: the runtime cost table is runtime-table.py's" sh -c "
    /usr/bin/python3 '$SRCDIR/tests/cli/runtime-table.py' '$DLPLAN' \
    '$SRCDIR/datasets' '$TMP' >'$TMP/table.md' &&
    sed -n '/^| cluster | model | dlplan T/,/^\$/p' '$SRCDIR/README.md' |
    sed '\$d' | diff -u - '$TMP/table.md'"
R=$TMP/readme
mkdir -p "$R/bin" "$R/home/Megatron-LM" "$R/torchtitan"
ln -s "$SRCDIR/datasets" "$R/datasets"
ln -s "$DLPLAN" "$R/bin/dlplan"
cp "$TMP/rankenv.py" "$R/home/Megatron-LM/pretrain_gpt.py"
cp "$TMP/rankenv.py" "$R/train.py"
cp "$TMP/ttbase/my_configs.py" "$R/my_configs.py"
: >"$R/torchtitan/__init__.py"
cp "$SRCDIR/tests/cli/torchtitan-train.py" "$R/torchtitan/train.py"
# The indented blocks of the section, but transcripts ("$ " first).
awk '/^## Running a plan with Megatron-LM/ { on = 1; next }
    /^## / { on = 0 }
    on && /^    / { if (!blk) { blk = 1; tr = /^    \$ / }
	if (!tr) print substr($0, 5); next }
    { blk = 0 }' "$SRCDIR/README.md" >"$R/commands.sh"
check "README: the section has commands, none with '...'" sh -c "
    grep -q '^dlplan plan' '$R/commands.sh' &&
    ! grep -q '\.\.\.' '$R/commands.sh'"
check "README: its commands run as written" sh -c "cd '$R' &&
    HOME='$R/home' PATH='$R/bin':\$PATH PYTHONPATH='$R' \
    DLPLAN_TORCHRUN='/usr/bin/python3 $SRCDIR/tests/cli/torchrun-launch.py \
    --agent' DLPLAN_DEEPSPEED='$DSL out/run3/plan.json' \
    sh -e commands.sh >out.txt 2>err.txt"
for r in out/run2 out/run4; do
	check "README: the ranks $r started are its plan's" \
	    $TRL --check "$R/$r/plan.json" "$R/out.txt"
done
check "README: deepspeed.sh started every rank as planned" grep -q \
    '^deepspeed launch: 1 hosts, 8 ranks as planned' "$R/out.txt"
