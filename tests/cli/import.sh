# tests/cli/import.sh - dlplan import megatron: the ranks and layers
# Megatron builds, derived by hand; the round trip plan -> emit -> import
# (same T, the same megatron.args again); the savers; every error.

C=$SRCDIR/datasets/clusters
M=$SRCDIR/datasets/models
ONE=$C/single-node

dlplan model gpt --layers 4 --hidden 64 --heads 4 --seq 32 --vocab 128 \
    -o "$TMP/tiny.csv"
TINY="--num-layers 4 --hidden-size 64 --num-attention-heads 4
--seq-length 32 --max-position-embeddings 32 --vocab-size 128 --bf16
--micro-batch-size 1 --global-batch-size 8"

# layout FILE: per group, per stage "node/gpus/first-last/recompute".
layout() {
	/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(" ".join("|".join("%s/%s/%d-%d/%d" % (s["node"],
      ",".join(map(str, s["gpus"])), s["layers"][0], s["layers"][-1],
      s.get("recompute_layers", 0)) for s in g["stages"])
      for g in p["groups"]))' "$1"
}

# Ranks, by hand: TP 2, PP 2, DP 2 on one 8-GPU node.  Megatron's order
# tp-cp-ep-dp-pp puts rank r = tp + 2 (dp + 2 pp), so replica 0 has GPUs
# 0,1 (stage 0) and 4,5 (stage 1); with --use-tp-pp-dp-mapping, r = tp +
# 2 (pp + 2 dp): replica 0 has 0,1 and 2,3.  4 blocks over 2 stages: rows
# 0-2 (embed, position, block0, block1) and the rest.
expect_run "import: TP 2 PP 2 DP 2, megatron's rank order" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r1" -q -- \
    $TINY --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size 2
rows=$(grep -v '^#' "$TMP/tiny.csv" | sed 1d | cut -d, -f1 | tr '\n' ' ')
check "import: the tiny model's rows" test "$rows" = \
    "embed block0 block1 block2 block3 head "
check "import: replica 0 on GPUs 0,1 and 4,5" test "$(layout "$TMP/r1/plan.json")" = \
    "dgx-a100-0/0,1/0-2/0|dgx-a100-0/4,5/3-5/0 dgx-a100-0/2,3/0-2/0|dgx-a100-0/6,7/3-5/0"
expect_run "import: --use-tp-pp-dp-mapping" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r2" -q -- \
    $TINY --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size 2 --use-tp-pp-dp-mapping
check "import: replica 0 on GPUs 0,1 and 2,3" test "$(layout "$TMP/r2/plan.json")" = \
    "dgx-a100-0/0,1/0-2/0|dgx-a100-0/2,3/3-5/0 dgx-a100-0/4,5/0-2/0|dgx-a100-0/6,7/3-5/0"
check "import: the plan is given, runtime megatron, 4 micro-batches each" \
    /usr/bin/python3 -c "
import json, sys
p = json.load(open('$TMP/r2/plan.json'))
sys.exit(not (p['solver']['status'] == 'given' and p['runtime'] == 'megatron' and
              [g['micro_batches'] for g in p['groups']] == [4, 4]))"
# eval prices the written plan as import did.
dlplan eval "$TMP/r2/plan.json" --format json >"$TMP/r2.eval.json"
check "import: eval gives the same T" /usr/bin/python3 -c "
import json, sys
a = json.load(open('$TMP/r2/plan.json'))['estimate']['iteration_s']
b = json.load(open('$TMP/r2.eval.json'))['estimate']['iteration_s']
sys.exit(a != b)"

# Splits: PP 4 with the first stage given 1 block.  The rest (3) over
# the other 3 stages.  And the embedding and loss counted as a layer
# each: (4 + 2) / 3 = 2 a stage, 1 block on the first and the last.
expect_run "import: --decoder-first-pipeline-num-layers" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r3" -q -- \
    $TINY --pipeline-model-parallel-size 4 \
    --decoder-first-pipeline-num-layers 1 --global-batch-size 16
check "import: first 1 block, then 1 each" test "$(layout "$TMP/r3/plan.json" | cut -d' ' -f1)" = \
    "dgx-a100-0/0/0-1/0|dgx-a100-0/2/2-2/0|dgx-a100-0/4/3-3/0|dgx-a100-0/6/4-5/0"
expect_run "import: the account-for flags" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r4" -q \
    --hosts dgx-a100-0:6 -- $TINY --pipeline-model-parallel-size 3 \
    --account-for-embedding-in-pipeline-split \
    --account-for-loss-in-pipeline-split
check "import: 1, 2 and 1 blocks" test "$(layout "$TMP/r4/plan.json" | cut -d' ' -f1)" = \
    "dgx-a100-0/0/0-1/0|dgx-a100-0/2/2-3/0|dgx-a100-0/4/4-5/0"

# The savers.
expect_run "import: full recomputation of 3 blocks a stage" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r5" -q -- \
    $TINY --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 3 \
    --recompute-granularity full --recompute-method block \
    --recompute-num-layers 2 --use-distributed-optimizer \
    --attention-backend unfused
check "import: min(2, blocks) recomputed per stage" test "$(layout "$TMP/r5/plan.json" | cut -d' ' -f1)" = \
    "dgx-a100-0/0/0-3/2|dgx-a100-0/4/4-5/1"
check "import: options full, sharded, unfused" /usr/bin/python3 -c "
import json, sys
o = json.load(open('$TMP/r5/plan.json'))['options']
sys.exit((o['recompute'], o['optimizer'], o['attention'], o['grad_bytes'])
         != ('full', 'sharded', 'unfused', 4))"
expect_run "import: uniform with 1 recomputes every block" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -o "$TMP/r6" -q -- \
    $TINY --recompute-granularity full --recompute-method uniform \
    --recompute-num-layers 1 --recompute-activations --grad-reduce-in-bf16
check "import: 4 of 4 blocks on every stage" test "$(layout "$TMP/r6/plan.json" | cut -d' ' -f1)" = \
    "dgx-a100-0/0/0-5/4"
expect_run "import: --recompute-activations is selective" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" --format json -- \
    $TINY --recompute-activations --use-flash-attn
check "import: selective, fused" grep -q '"recompute": "selective"' "$TMP/out"

# Arguments that change time but are not priced: a warning, no error.
expect_run "import: --bias-gelu-fusion warns" 0 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -- $TINY \
    --bias-gelu-fusion --lr 1e-4 --data-path 1 a 1 b --split 99,1,0
check "import: the warning names the argument" grep -q \
    "^dlplan: warning: megatron argument '--bias-gelu-fusion': " "$TMP/err"
check "import: the table gives T" grep -q "^iteration [0-9.e-]* s" "$TMP/out"

# The round trip on the bundled clusters: plan --runtime megatron, its
# megatron.args imported on the hosts of its ranks price the same T and
# emit the same arguments.
for cm in geo-8:llama2-7b two-dc:llama2-7b hetero-lab:gpt2-xl \
    single-node:gpt2-xl two-dc:gpt2-xl; do
	cl=${cm%%:*} md=${cm#*:}
	d=$TMP/rt-$cl-$md
	expect_run "import: round trip $cl $md: plan" 0 - - -- \
	    dlplan plan -c "$C/$cl" -m "$M/$md.csv" --runtime megatron \
	    --global-batch 32 --recompute full -o "$d/a" -q \
	    --launcher megatron -- true
	hosts=$(/usr/bin/python3 -c '
import json, sys
out = []
for r in json.load(open(sys.argv[1]))["ranks"]:
    if out and out[-1][0] == r["node"]:
        out[-1][1] += 1
    else:
        out.append([r["node"], 1])
print(",".join("%s:%d" % (n, k) for n, k in out))' "$d/a/plan.json")
	expect_run "import: round trip $cl $md: import" 0 - - -- \
	    dlplan import megatron -c "$C/$cl" -m "$M/$md.csv" -o "$d/b" \
	    --hosts "$hosts" -q -- $(cat "$d/a/launch/megatron.args")
	check "import: round trip $cl $md: the same T" /usr/bin/python3 -c "
import json, sys
a = json.load(open('$d/a/plan.json'))['estimate']['iteration_s']
b = json.load(open('$d/b/plan.json'))['estimate']['iteration_s']
sys.exit(abs(a - b) > 1e-9 * a)"
	dlplan emit "$d/b/plan.json" --launcher megatron -o "$d/c" -q -- true
	check "import: round trip $cl $md: the same megatron.args" \
	    cmp "$d/a/launch/megatron.args" "$d/c/launch/megatron.args"
done

# The interleaved schedule: 8 blocks over PP 4 in 2 chunks a stage, 8
# micro-batches a replica.  The same plan from either argument, faster
# than plain 1F1B (the bubble is S - 1 chunks of half a stage), eval
# prices it the same, and emit gives Megatron the chunks back.
dlplan model gpt --layers 8 --hidden 256 --heads 4 --seq 64 --vocab 512 \
    -o "$TMP/t8.csv"
T8="--num-layers 8 --hidden-size 256 --num-attention-heads 4 --seq-length 64
--max-position-embeddings 64 --vocab-size 512 --bf16 --micro-batch-size 1
--global-batch-size 16 --pipeline-model-parallel-size 4"
I8="dlplan import megatron -c $ONE -m $TMP/t8.csv -q"
expect_run "import: plain 1F1B, PP 4" 0 - - -- $I8 -o "$TMP/v1" -- $T8
expect_run "import: 2 virtual stages a rank" 0 - - -- $I8 -o "$TMP/v2" -- \
    $T8 --num-virtual-stages-per-pipeline-rank 2
expect_run "import: 1 layer a virtual stage" 0 - - -- $I8 -o "$TMP/v2b" -- \
    $T8 --num-layers-per-virtual-pipeline-stage 1
check "import: either argument gives the same plan" cmp "$TMP/v2/plan.json" "$TMP/v2b/plan.json"
check "import: the interleaved plan records its chunks and is faster" /usr/bin/python3 -c "
import json, sys
a = json.load(open('$TMP/v1/plan.json'))
b = json.load(open('$TMP/v2/plan.json'))
sys.exit(not (all('virtual_stages' not in g for g in a['groups']) and
              all(g['virtual_stages'] == 2 for g in b['groups']) and
              b['estimate']['pipeline_s'] < a['estimate']['pipeline_s']))"
dlplan eval "$TMP/v2/plan.json" --format json >"$TMP/v2.eval.json"
check "import: eval prices the interleaved plan the same" /usr/bin/python3 -c "
import json, sys
a = json.load(open('$TMP/v2/plan.json'))['estimate']['iteration_s']
b = json.load(open('$TMP/v2.eval.json'))['estimate']['iteration_s']
sys.exit(a != b)"
dlplan eval "$TMP/v2/plan.json" >"$TMP/v2.eval.txt"
check "import: eval says the replay is not run" grep -qx \
    "simulated  1F1B  not run (the plan interleaves; the replay is of plain 1F1B)" \
    "$TMP/v2.eval.txt"
check "import: eval names the chunks" grep -q \
    "^group 0 .* 4 stages of 2 interleaved chunks: T_g" "$TMP/v2.eval.txt"
expect_err "import: --svg refuses an interleaved plan" 2 \
    "dlplan: $TMP/v2/plan.json: --svg draws the plain 1F1B schedule, and the plan interleaves (virtual_stages)" -- \
    dlplan eval "$TMP/v2/plan.json" --svg "$TMP/v2.svg"
expect_run "import: emit the interleaved plan" 0 - - -- \
    dlplan emit "$TMP/v2/plan.json" --launcher megatron -o "$TMP/v2e" -q -- true
check "import: megatron.args gives the chunks" grep -qx -- \
    --num-virtual-stages-per-pipeline-rank "$TMP/v2e/launch/megatron.args"
expect_err "import: a torchrun launch refuses it" 3 \
    "dlplan: the plan was made for runtime megatron, not torchtitan: torchtitan cannot run groups of different shapes or uneven micro-batches (make the plan with 'dlplan plan --runtime torchtitan')" -- \
    dlplan emit "$TMP/v2/plan.json" --launcher torchtitan -o "$TMP/v2t" -q -- true
expect_err "import: the reference executor refuses an interleaved plan" 2 \
    "dlplan_train: $TMP/v2/plan.json: groups[0].virtual_stages 2: the plan runs Megatron-LM's interleaved schedule, and this executor runs plain 1F1B (launch the plan with --launcher megatron)" -- \
    /usr/bin/python3 "$SRCDIR/plans/dlplan_train.py" --plan "$TMP/v2/plan.json"
check "import: the plan reader gives the chunks" /usr/bin/python3 -c "
import json, subprocess, sys
a = json.loads(subprocess.run([sys.executable, '$SRCDIR/plans/dlplan_plan.py',
    '$TMP/v2/plan.json', '0'], capture_output=True, text=True).stdout)
sys.exit(a.get('virtual_stages') != 2)"
sed 's/"runtime": "megatron"/"runtime": "dlplan"/' "$TMP/v2/plan.json" >"$TMP/v2/d.json"
expect_err "import: virtual stages only with runtime megatron" 2 \
    "dlplan: $TMP/v2/d.json: groups[0].virtual_stages: the interleaved schedule is Megatron-LM's; the plan's runtime is dlplan (expected runtime megatron, or no virtual_stages)" -- \
    dlplan eval "$TMP/v2/d.json"

# Errors.
I="dlplan import megatron -c $ONE -m $TMP/tiny.csv"
expect_err "import: unknown argument" 1 \
    "dlplan: unknown megatron argument '--hiden-size': dlplan does not know whether it changes memory or time (did you mean '--hidden-size'?) (dlplan(1), IMPORT, lists the arguments it reads)" -- \
    $I -- $TINY --hiden-size 64
expect_err "import: a word that is no option" 1 \
    "dlplan: megatron argument 'x': expected an option (--NAME)" -- \
    $I -- $TINY x
expect_err "import: a flag with a value" 1 \
    "dlplan: megatron argument '--bf16' takes no value (got 'yes')" -- \
    $I -- $TINY --bf16=yes
expect_err "import: a value missing" 1 \
    "dlplan: megatron argument '--micro-batch-size' needs a value" -- \
    $I -- $TINY --micro-batch-size
expect_err "import: a bad number" 1 \
    "dlplan: megatron argument '--micro-batch-size x': expected a whole number" -- \
    $I -- $TINY --micro-batch-size x
expect_err "import: interleaved without a pipeline" 1 \
    "dlplan: megatron's interleaved schedule (4 virtual stages) needs --pipeline-model-parallel-size 2 or more (megatron/training/arguments.py:1002)" -- \
    $I -- $TINY --num-layers-per-virtual-pipeline-stage 1
expect_err "import: both interleaving arguments" 1 \
    "dlplan: megatron arguments '--num-layers-per-virtual-pipeline-stage' and '--num-virtual-stages-per-pipeline-rank' together (megatron/training/arguments.py:929)" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 \
    --num-layers-per-virtual-pipeline-stage 1 --num-virtual-stages-per-pipeline-rank 2
expect_err "import: chunks that do not divide a stage" 1 \
    "dlplan: megatron argument '--num-layers-per-virtual-pipeline-stage 3': a pipeline stage's 2 layers are not a multiple of it (megatron/training/arguments.py:972)" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 3
expect_err "import: more chunks than a stage's layers" 1 \
    "dlplan: megatron cannot split pipeline stage 0's 2 layers into 3 virtual stages (megatron/core/transformer/transformer_block.py:176)" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 3
expect_err "import: layers a chunk with an uneven first stage" 1 \
    "dlplan: megatron argument '--num-layers-per-virtual-pipeline-stage' with an uneven first or last stage (use --num-virtual-stages-per-pipeline-rank; megatron/training/arguments.py:955)" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 2 \
    --num-layers-per-virtual-pipeline-stage 1
expect_err "import: interleaved micro-batches not in groups of the stages" 3 \
    "dlplan: the interleaved schedule runs micro-batches in groups of the 2 stages (Megatron-LM's microbatch_group_size_per_vp_stage); 1 micro-batches a replica is not a multiple of 2" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 \
    --global-batch-size 4
expect_err "import: interleaved transfers on the lane" 3 \
    "dlplan: megatron argument '--no-overlap-p2p-communication' with the interleaved schedule: dlplan prices its transfers under compute, as Megatron runs them by default" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 \
    --no-overlap-p2p-communication
expect_err "import: interleaved with the embedding counted" 3 \
    "dlplan: megatron arguments '--account-for-*-in-pipeline-split' with the interleaved schedule: Megatron's first or last chunk then holds a block fewer, a layout dlplan does not price" -- \
    $I -- $TINY --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split
expect_run "import: --no-overlap-p2p-communication without interleaving" 0 - - -- \
    $I -q -- $TINY --pipeline-model-parallel-size 2 --no-overlap-p2p-communication
expect_err "import: context parallelism" 3 \
    "dlplan: megatron argument '--context-parallel-size 2': dlplan plans no context parallelism" -- \
    $I -- $TINY --context-parallel-size 2
expect_err "import: sgd" 3 \
    "dlplan: megatron argument '--optimizer sgd': dlplan prices Adam's state (two fp32 moments and fp32 master weights)" -- \
    $I -- $TINY --optimizer sgd
expect_err "import: hidden size differs" 2 \
    "dlplan: megatron argument '--hidden-size 128': model '$TMP/tiny.csv' has hidden size 64" -- \
    $I -- $TINY --hidden-size 128
expect_err "import: ffn default differs" 2 \
    "dlplan: megatron argument '--swiglu': model '$TMP/tiny.csv' has a GELU MLP" -- \
    $I -- $TINY --swiglu --ffn-hidden-size 256
expect_err "import: dropout differs" 2 \
    "dlplan: megatron argument '--hidden-dropout 0': model '$TMP/tiny.csv' trains with dropout (give --hidden-dropout 0.1)" -- \
    $I -- $TINY --hidden-dropout 0
expect_err "import: no micro-batch" 1 \
    "dlplan: no --micro-batch-size (megatron requires it)" -- \
    $I -- --num-layers 4 --hidden-size 64 --num-attention-heads 4 \
    --seq-length 32 --vocab-size 128 --bf16
expect_err "import: world not a multiple" 3 \
    "dlplan: the hosts have 8 GPUs, not a multiple of TP x PP = 3 (megatron's world size; megatron/training/arguments.py:432)" -- \
    $I -- $TINY --pipeline-model-parallel-size 3
expect_err "import: TP without sequence parallelism" 3 \
    "dlplan: TP 2 without --sequence-parallel: dlplan's memory model divides every activation of a stage by TP (tensor and sequence parallelism together); without it megatron keeps the LayerNorm and dropout activations whole on every TP rank" -- \
    $I -- $TINY --tensor-model-parallel-size 2
expect_err "import: sequence parallelism without TP" 1 \
    "dlplan: megatron argument '--sequence-parallel' needs TP > 1 (megatron/core/model_parallel_config.py:502)" -- \
    $I -- $TINY --sequence-parallel
expect_err "import: bf16 and fp16" 1 \
    "dlplan: megatron arguments '--bf16' and '--fp16' together (megatron/training/arguments.py:1205)" -- \
    $I -- $TINY --fp16
expect_err "import: uniform chunks of 2" 3 \
    "dlplan: megatron arguments '--recompute-method uniform --recompute-num-layers 2': dlplan prices recomputation one layer at a time (uniform with 1, or block)" -- \
    $I -- $TINY --recompute-granularity full --recompute-method uniform \
    --recompute-num-layers 2
expect_err "import: full without a method" 1 \
    "dlplan: full recomputation needs --recompute-method and --recompute-num-layers (megatron/core/transformer/transformer_config.py:1913, 1919)" -- \
    $I -- $TINY --recompute-granularity full
expect_err "import: a batch Megatron cannot split" 1 \
    "dlplan: global batch 12 is not a positive multiple of micro-batch 1 x data-parallel size 8 (megatron/core/num_microbatches_calculator.py:381)" -- \
    $I -- $TINY --global-batch-size 12
expect_err "import: layers Megatron cannot split" 1 \
    "dlplan: megatron cannot split 4 layers over 8 pipeline stages evenly (megatron/training/arguments.py:997)" -- \
    $I -- $TINY --pipeline-model-parallel-size 8
expect_err "import: --hosts names no node" 1 \
    "dlplan: option '--hosts': no node 'x' in nodes.csv" -- \
    $I --hosts x -- $TINY
expect_err "import: --hosts twice" 1 \
    "dlplan: option '--hosts': node 'dgx-a100-0' given twice" -- \
    $I --hosts dgx-a100-0,dgx-a100-0 -- $TINY
expect_err "import: --hosts too many GPUs" 1 \
    "dlplan: option '--hosts': 'dgx-a100-0:9': expected 1 to 8 GPUs" -- \
    $I --hosts dgx-a100-0:9 -- $TINY
expect_err "import: no framework" 1 \
    "dlplan: no framework given (expected 'megatron')" -- \
    dlplan import -c $ONE -m "$TMP/tiny.csv" -- $TINY
expect_err "import: another framework" 1 \
    "dlplan: cannot import 'deepspeed' (expected 'megatron')" -- \
    dlplan import deepspeed -c $ONE -m "$TMP/tiny.csv" -- $TINY
expect_err "import: no cluster" 1 \
    "dlplan: no cluster given (expected -c DIR)" -- \
    dlplan import megatron -m "$TMP/tiny.csv" -- $TINY
expect_err "import: no model" 1 \
    "dlplan: no model given (expected -m MODEL.csv)" -- \
    dlplan import megatron -c $ONE -- $TINY
expect_err "import: no arguments" 1 \
    "dlplan: no megatron arguments (expected '-- ARGS...', pretrain_gpt.py's arguments)" -- \
    $I
expect_err "import: an operand before --" 1 \
    "dlplan: unexpected argument 'x' (put megatron's arguments after '--')" -- \
    $I x -- $TINY
# bf16 on a cluster with V100s (hetero-lab's lab-v100-2 has 1 GPU).
expect_err "import: --bf16 on a V100" 3 \
    "dlplan: megatron argument '--bf16': a GPU of the cluster has no bf16 (train with --fp16)" -- \
    dlplan import megatron -c "$C/hetero-lab" -m "$TMP/tiny.csv" \
    --hosts lab-v100-2 -- $TINY --global-batch-size 1
# Too big: llama2-70b on one node, no savers.  Nothing is written.
expect_run "import: llama2-70b on one node does not fit" 3 - - -- \
    dlplan import megatron -c $ONE -m "$M/llama2-70b.csv" -o "$TMP/big" -- \
    --num-layers 80 --hidden-size 8192 --num-attention-heads 64 \
    --group-query-attention --num-query-groups 8 --ffn-hidden-size 28672 \
    --seq-length 4096 --max-position-embeddings 4096 --vocab-size 32000 \
    --position-embedding-type rope --normalization RMSNorm --swiglu \
    --disable-bias-linear --untie-embeddings-and-output-weights \
    --hidden-dropout 0 --attention-dropout 0 --bf16 \
    --tensor-model-parallel-size 8 --sequence-parallel \
    --micro-batch-size 1 --global-batch-size 8
check "import: the message names the GPU and the bytes over" grep -q \
    "memory does not fit on GPU .*over by" "$TMP/err"
check "import: no output directory written" test ! -e "$TMP/big/plan.json"

# The overlap (dlplan(1) ALGORITHMS, Overlap), re-derived from the priced
# parts: llama2-7b, TP 2 x PP 2 x DP 2 on the single node, gradients
# reduced under each stage's last backward.  Stage s's last backward
# ends at T_g - sum_{j<s} (b_j + xb_j), b_j its compute times the
# backward's share of its layers' FLOPs (model.csv) and xb_j half its
# two-way transfer; its reduction R (the ring times of its segments,
# summed) ends max(R / n_b, R - b_s) later, n_b = ceil(params / GPUs /
# 4e7).  The same plan without overlap is T_g + max R.  Both add the
# optimizer step: the largest stage's parameters per GPU times 30 bytes
# (Adam's 12-byte state read and written, a 2-byte weight and Megatron's
# 4-byte main gradient) over the A100's 2,039 GB/s.
OVA="--tensor-model-parallel-size 2 --sequence-parallel
--pipeline-model-parallel-size 2
--num-layers 32 --hidden-size 4096 --num-attention-heads 32
--ffn-hidden-size 11008 --seq-length 4096 --max-position-embeddings 4096
--vocab-size 32000 --position-embedding-type rope --normalization RMSNorm
--swiglu --disable-bias-linear --untie-embeddings-and-output-weights
--hidden-dropout 0 --attention-dropout 0 --bf16 --micro-batch-size 1
--global-batch-size 16"
for ov in none dp; do
	extra=
	[ $ov = dp ] && extra=--overlap-grad-reduce
	expect_run "import: overlap $ov" 0 - - -- \
	    dlplan import megatron -q -c $ONE -m "$M/llama2-7b.csv" \
	    --format json -- $OVA $extra
	cp "$TMP/out" "$TMP/ov-$ov.json"
done
check "import: --overlap-grad-reduce is overlap dp" grep -q \
    '"overlap": "dp"' "$TMP/ov-dp.json"
check "import: the overlapped T re-derived by hand" /usr/bin/python3 -c '
import csv, json, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[3])
                                  if not l.startswith("#"))]
def T(p, ov):
    est = p["estimate"]
    R, params = {}, {}
    for r in p["rings"]:
        for m in r["members"]:
            k = (m["group"], m["stage"])
            R[k] = R.get(k, 0) + r["time_s"]
            params[k] = params.get(k, 0) + r["params"]
    o = p["options"]
    w = 2 * o["optimizer_bytes"] + o["param_bytes"] + max(o["grad_bytes"], 4)
    opt = max(sum(float(r["params_m"]) * 1e6 for r in
                  rows[st["layers"][0]:st["layers"][-1] + 1]) /
              len(st["gpus"]) * w / 2039e9
              for gr in p["groups"] for st in gr["stages"])
    assert abs(opt - est["optimizer_s"]) <= 1e-12 * opt, (opt, est)
    if not ov:
        return est["pipeline_s"] + max(R.values()) + opt
    t = est["pipeline_s"]
    for g, gr in enumerate(p["groups"]):
        cool = 0
        for s, st in enumerate(gr["stages"]):
            ly = rows[st["layers"][0]:st["layers"][-1] + 1]
            fw = sum(float(r["fwd_gflop"]) for r in ly)
            bw = sum(float(r["bwd_gflop"]) for r in ly)
            b = st["compute_s"] * bw / (fw + bw)
            rr = R[(g, s)]
            nb = max(1, math.ceil(params[(g, s)] / len(st["gpus"]) / 4e7))
            t = max(t, gr["time_s"] - cool + max(rr / nb, rr - b))
            cool += b + st["p2p_s"] / 2
    return t + opt
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
ta, tb = T(a, False), T(b, True)
ea, eb = a["estimate"]["iteration_s"], b["estimate"]["iteration_s"]
print(ta, ea, tb, eb)
sys.exit(0 if abs(ta - ea) <= 1e-9 * ea and abs(tb - eb) <= 1e-9 * eb and
         eb < ea else 1)' "$TMP/ov-none.json" "$TMP/ov-dp.json" \
    "$M/llama2-7b.csv"

# Megatron's rules for the overlap flags (arguments.py:1024-1029).
expect_err "import: --overlap-param-gather needs the distributed optimizer" 1 \
    "dlplan: megatron argument '--overlap-param-gather' needs --use-distributed-optimizer (megatron/training/arguments.py:1025)" -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -- $TINY \
    --overlap-grad-reduce --overlap-param-gather
expect_err "import: --overlap-param-gather needs --overlap-grad-reduce" 1 \
    "dlplan: megatron argument '--overlap-param-gather' needs --overlap-grad-reduce (megatron/training/arguments.py:1028)" -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -- $TINY \
    --use-distributed-optimizer --overlap-param-gather
expect_err "import: --tp-comm-overlap needs sequence parallelism" 1 \
    "dlplan: megatron argument '--tp-comm-overlap' needs --sequence-parallel (its all-gathers and reduce-scatters are what overlap)" -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -- $TINY \
    --overlap-grad-reduce --tp-comm-overlap
expect_run "import: --tp-comm-overlap alone is not priced" 3 - - -- \
    dlplan import megatron -c $ONE -m "$TMP/tiny.csv" -- $TINY \
    --tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap
expect_run "import: dp+tp" 0 - - -- \
    dlplan import megatron -q -c $ONE -m "$M/llama2-7b.csv" \
    --format json -- $OVA --overlap-grad-reduce --tp-comm-overlap
check "import: dp+tp is recorded" grep -q '"overlap": "dp+tp"' "$TMP/out"
check "import: dp+tp is no slower than dp" /usr/bin/python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["estimate"]["iteration_s"]
b = json.load(open(sys.argv[2]))["estimate"]["iteration_s"]
sys.exit(0 if b <= a else 1)' "$TMP/ov-dp.json" "$TMP/out"
