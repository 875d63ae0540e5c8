# tests/cli/published.sh - the configurations Megatron-LM published as
# run fit in dlplan's memory model: every row of its H100 table and of
# the SC'21 Table 1, imported with "dlplan import megatron" on clusters
# of 80 GB DGX nodes.  The tables are in tests/cli/data/ with their
# sources.  Each stage's memory against the usable 72 GB (10 % kept free)
# is printed to $TMP/published.txt (and to tests/out with DLPLAN_KEEP).

D=$SRCDIR/tests/cli/data
out=$TMP/published.txt
: >"$out"

# dgx DIR N GPU TFLOPS: a cluster of N DGX nodes of 8 GPUs of 80 GB.
dgx() {
	mkdir -p "$1"
	{
		echo "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps"
		i=0
		while [ $i -lt "$2" ]; do
			echo "dgx-$i,dc,8,$3,$4,80,2400,1600"
			i=$((i + 1))
		done
	} >"$1/nodes.csv"
}

# fit NAME CLUSTER MODEL ARGS...: the import fits; its stages to $out.
fit() {
	_name=$1 _cl=$2 _md=$3
	shift 3
	expect_run "published: $_name fits" 0 - - -- \
	    dlplan import megatron -c "$_cl" -m "$_md" -- "$@"
	{
		echo "== $_name: $*"
		cat "$TMP/out"
	} >>"$out"
}

# Megatron-LM's H100 table (README at d98e8a64ddf3): GPT models with
# untied embeddings (the published sizes count both: 1.7B is 24 blocks of
# 12 h^2 and two 131072 x 2048 tables), sequence 4,096, vocabulary
# 131,072.  The README names --overlap-param-gather, which Megatron allows
# only with --use-distributed-optimizer, so the runs sharded the optimizer
# state; the micro-batch is not published: 1.
grep -v '^#' "$D/megatron-h100-table.csv" | sed 1d |
while IFS=, read -r name heads hidden layers tp pp dp gpus gbs rest; do
	[ -d "$TMP/h100-$gpus" ] || dgx "$TMP/h100-$gpus" $((gpus / 8)) \
	    H100-SXM5-80GB 989
	dlplan model gpt --layers "$layers" --hidden "$hidden" \
	    --heads "$heads" --seq 4096 --vocab 131072 --tied no \
	    -o "$TMP/h100-$name.csv"
	sp=""
	[ "$tp" -gt 1 ] && sp=--sequence-parallel
	set -- --tensor-model-parallel-size "$tp" $sp \
	    --pipeline-model-parallel-size "$pp" --micro-batch-size 1 \
	    --global-batch-size "$gbs" --num-layers "$layers" \
	    --hidden-size "$hidden" --num-attention-heads "$heads" \
	    --seq-length 4096 --max-position-embeddings 4096 \
	    --vocab-size 131072 --untie-embeddings-and-output-weights \
	    --bf16 --use-distributed-optimizer --overlap-grad-reduce \
	    --overlap-param-gather
	fit "H100 $name (TP $tp, PP $pp, DP $dp)" "$TMP/h100-$gpus" \
	    "$TMP/h100-$name.csv" "$@"
	# The README's PP overlap exists only with the interleaved schedule
	# (megatron/training/arguments.py:1011), whose chunk count it does not
	# give: the pipelined rows fit with one block a chunk too, the count
	# tests/bench/published.py finds fastest for most of them.
	[ "$pp" -gt 1 ] || continue
	fit "H100 $name interleaved, $((layers / pp)) chunks a stage" \
	    "$TMP/h100-$gpus" "$TMP/h100-$name.csv" "$@" \
	    --num-layers-per-virtual-pipeline-stage 1
done

# SC'21 Table 1 on DGX A100 80GB: full recomputation of every layer, as
# published (run_table_1.sh's "--activations-checkpoint-method uniform",
# today --recompute-granularity full --recompute-method uniform
# --recompute-num-layers 1), fp16, its micro-batch sizes, a replicated
# optimizer (2021).  The table does not say which rows ran interleaved,
# so every row is imported with plain 1F1B.  The runs of 2021 had no
# sequence parallelism (Korthikanti et al. 2022 added it), which dlplan's
# memory model assumes with TP > 1; with every layer recomputed what that
# changes is each layer's kept input, 2 s b h bytes whole on each TP rank
# instead of a TP-th, for each micro-batch in flight: at most 17.6 GB on
# the first stage of the 1008B row (PP 64 in flight), which would then
# need 58.4 GB of its 72; every row fits either way.
grep -v '^#' "$D/megatron-sc21-table1.csv" | sed 1d |
while IFS=, read -r name heads hidden layers params tp pp dp gpus gbs seq \
    vocab gpu tflops pct mbs; do
	[ -d "$TMP/a100-$gpus" ] || dgx "$TMP/a100-$gpus" $((gpus / 8)) \
	    A100-SXM4-80GB 312
	dlplan model gpt --layers "$layers" --hidden "$hidden" \
	    --heads "$heads" --seq "$seq" --vocab "$vocab" \
	    -o "$TMP/sc21-$name.csv"
	sp=""
	[ "$tp" -gt 1 ] && sp=--sequence-parallel
	fit "SC'21 $name (TP $tp, PP $pp, DP $dp)" "$TMP/a100-$gpus" \
	    "$TMP/sc21-$name.csv" --tensor-model-parallel-size "$tp" $sp \
	    --pipeline-model-parallel-size "$pp" --micro-batch-size "$mbs" \
	    --global-batch-size "$gbs" --num-layers "$layers" \
	    --hidden-size "$hidden" --num-attention-heads "$heads" \
	    --seq-length "$seq" --max-position-embeddings "$seq" \
	    --vocab-size "$vocab" --fp16 --recompute-granularity full \
	    --recompute-method uniform --recompute-num-layers 1
done
check "published: 24 configurations imported" test \
    "$(grep -c '^== ' "$out")" -eq 24
[ -n "${DLPLAN_KEEP:-}" ] && cp "$out" "$SRCDIR/tests/out/published.txt"
:
