# tests/cli/memory.sh - the memory of every --runtime megatron plan on the
# bundled clusters against Megatron-LM's own estimate
# (tests/cli/megatron-memory.py: theoretical_memory_usage.py at
# d98e8a64ddf3, per stage): never below it, at most 10 % above.  With
# MEGATRON_LM naming a Megatron-LM checkout at that commit the script also
# calls Megatron's functions and checks its transcription against them.
# llama2-70b has no plan on hetero-lab, single-node and philly-64: its
# weights alone (18 bytes a parameter) exceed their GPUs' memory.
# Under DLPLAN_WRAP (valgrind) two clusters and two models with the first
# savers only: the check is the same, the plans a few of the same kind.

C=$SRCDIR/datasets/clusters
M=$SRCDIR/datasets/models
dirs=""
clusters="geo-8 two-dc hetero-lab single-node philly-64"
models="llama2-7b llama2-13b llama2-70b gpt2-xl"
variants=2
if [ -n "${DLPLAN_WRAP:-}" ]; then
	clusters="two-dc single-node" models="llama2-7b gpt2-xl" variants=1
fi
for savers in "--recompute none" \
    "--recompute selective --optimizer sharded"; do
	[ "$variants" -gt 0 ] || break
	variants=$((variants - 1))
	for cl in $clusters; do
		for md in $models; do
			case $cl:$md in
			hetero-lab:llama2-70b|single-node:llama2-70b|philly-64:llama2-70b)
				continue ;;
			esac
			d=$TMP/mem-$cl-$md-${savers##* }
			expect_run "memory: plan $cl $md $savers" 0 - - -- \
			    dlplan plan -c "$C/$cl" -m "$M/$md.csv" \
			    --runtime megatron --global-batch 64 $savers \
			    -o "$d" -q --launcher megatron -- true
			dirs="$dirs $d"
		done
	done
done
# shellcheck disable=SC2086
check "memory: every stage within [1, 1.10] x Megatron's estimate" \
    /usr/bin/python3 "$SRCDIR/tests/cli/megatron-memory.py" \
    --report "$TMP/memory.txt" $dirs
[ -n "${DLPLAN_KEEP:-}" ] && cp "$TMP/memory.txt" "$SRCDIR/tests/out/memory.txt"
:

# The sharded optimizer in a framework's search: the state over the
# groups lets philly-64 x llama2-13b (megatron) hold two replicas of two
# stages, faster than one pipeline of four with the state replicated.
for op in replicated sharded; do
	expect_run "memory: philly-64 llama2-13b megatron, optimizer $op" 0 \
	    - - -- dlplan plan -c "$C/philly-64" -m "$M/llama2-13b.csv" \
	    --runtime megatron --global-batch 64 --recompute none \
	    --optimizer $op --format json
	cp "$TMP/out" "$TMP/opt-$op.json"
done
check "memory: sharded finds more groups and a faster plan" \
    /usr/bin/python3 -c "
import json, sys
r = json.load(open('$TMP/opt-replicated.json'))
s = json.load(open('$TMP/opt-sharded.json'))
sys.exit(not (len(s['groups']) > len(r['groups']) and
              s['estimate']['iteration_s'] < r['estimate']['iteration_s']))"
expect_run "memory: --runtime dlplan takes --optimizer sharded" 0 - - -- \
    dlplan plan -c "$C/hetero-lab" -m "$M/gpt2-xl.csv" --global-batch 64 \
    --optimizer sharded -q
