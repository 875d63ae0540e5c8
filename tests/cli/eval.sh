# dlplan eval: hand-written plans priced by the cost model (golden tables
# and JSON whose numbers are worked out by hand in tests/unit/test_cost.c),
# --baselines, --svg, input overrides, and every error path with its exact
# message and exit status.

E=tests/cli/data/eval

# --- good plans -------------------------------------------------------
for p in hybrid pp4 tp; do
	expect_run "table $p" 0 "eval-$p.txt" - -- dlplan eval "$E/$p.json"
done
expect_run "table dp2 with baselines" 0 eval-dp2-baselines.txt - -- \
    dlplan eval "$E/dp2.json" --baselines

# JSON: the evaluated plan with absolute input paths; the golden file has
# @SRCDIR@ in their place.
dlplan eval "$E/hybrid.json" --format json >"$TMP/hy.json" 2>"$TMP/hy.err"
check "json hybrid: exit 0, nothing on stderr" \
    sh -c "[ ! -s '$TMP/hy.err' ]"
sed "s|$SRCDIR/|@SRCDIR@/|g" "$TMP/hy.json" >"$TMP/out"
_d=$(_golden eval-hybrid.json out)
if [ $? -eq 0 ]; then t_ok "json hybrid: golden"; else
	t_notok "json hybrid: golden" "$_d"; fi
dlplan eval "$E/dp2.json" --format json --baselines |
    sed "s|$SRCDIR/|@SRCDIR@/|g" >"$TMP/out"
_d=$(_golden eval-dp2-baselines.json out)
if [ $? -eq 0 ]; then t_ok "json dp2 baselines: golden"; else
	t_notok "json dp2 baselines: golden" "$_d"; fi

# Baselines in a plan file are not repeated unless asked for again.
dlplan eval "$E/dp2.json" --format json --baselines >"$TMP/dp2b.json"
check "baselines are not carried over" \
    sh -c "! \"\$DLPLAN\" eval '$TMP/dp2b.json' --format json | grep -q baselines"

# The evaluated plan reads back, with digests, and prices the same.
expect_run "json output evaluates again" 0 eval-hybrid-again.txt - -- \
    sh -c "\"\$DLPLAN\" eval '$TMP/hy.json' | sed -e 's|$TMP/|@TMP@/|' \
    -e 's|$SRCDIR/|@SRCDIR@/|'"

# Stable keys of dlplan-formats(5), plan.json (json_key FILE EXPR: a jq-less
# check).
for k in '"schema": "dlplan.plan/1"' '"iteration_s"' '"lower_bound_s"' \
    '"efficiency"' '"micro_batches"' '"node"' '"gpus"' '"layers"' \
    '"tp_shares"' '"src"' '"dst"' '"bytes"' '"expected_s"' '"path"'; do
	check "json has $k" grep -q "$k" "$TMP/hy.json"
done

# The steady-state term is steady_s; bubble_s, its old name, carries the
# same number for one version, and a plan with either name reads.
check "json has steady_s and its alias bubble_s, equal" sh -c "
    a=\$(grep '\"steady_s\"' '$TMP/hy.json' | sed 's/.*: //')
    b=\$(grep '\"bubble_s\"' '$TMP/hy.json' | sed 's/.*: //')
    [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ]"
grep -v '"steady_s"' "$TMP/hy.json" >"$TMP/hy-old.json"
grep -v '"bubble_s"' "$TMP/hy.json" >"$TMP/hy-new.json"
dlplan eval "$TMP/hy.json" >"$TMP/hy.txt" 2>&1
check "a plan with only bubble_s evaluates the same" sh -c \
    "\"\$DLPLAN\" eval '$TMP/hy-old.json' 2>&1 | sed 's/hy-old/hy/' |
    cmp -s - '$TMP/hy.txt'"
check "a plan with only steady_s evaluates the same" sh -c \
    "\"\$DLPLAN\" eval '$TMP/hy-new.json' 2>&1 | sed 's/hy-new/hy/' |
    cmp -s - '$TMP/hy.txt'"

# -c and -m override the plan's inputs.
mkdir -p "$TMP/c"
cp "$E/one/nodes.csv" "$TMP/c/nodes.csv"
cp "$E/m4.csv" "$TMP/m.csv"
expect_run "-c and -m override" 0 eval-hybrid-override.txt - -- \
    sh -c "\"\$DLPLAN\" eval '$E/hybrid.json' -c '$TMP/c' -m '$TMP/m.csv' |
    sed 's|$TMP/|@TMP@/|'"

# --svg: valid XML, written atomically, one block per micro-batch.
expect_run "svg hybrid" 0 - - -- dlplan eval "$E/hybrid.json" \
    --svg "$TMP/t.svg"
if command -v xmllint >/dev/null 2>&1; then
	check "svg is valid XML" xmllint --noout "$TMP/t.svg"
else
	skip "svg is valid XML" "no xmllint"
fi
# 2 x 2 + 2 x 4 micro-batches, and the legend.
check "svg has a forward block per stage and micro-batch" \
    sh -c "[ \$(grep -c 'class=\"fwd\"' '$TMP/t.svg') -eq 13 ]"
check "svg has the sync segments" grep -q '>q2</text>' "$TMP/t.svg"
check "svg has a time axis" grep -q 'time (s)' "$TMP/t.svg"
check "svg leaves no temporary file" \
    sh -c "! ls -A '$TMP' | grep -q 'tmp-'"
expect_err "svg into a missing directory" 4 \
    "dlplan: $TMP/no/t.svg: cannot create file: No such file or directory" -- \
    dlplan eval "$E/hybrid.json" --svg "$TMP/no/t.svg"

# --- memory -----------------------------------------------------------
expect_err "memory does not fit" 3 \
    "dlplan: $E/mem.json: memory does not fit on GPU 1 of node 'small' (groups[0].stages[0]): needs 2.112 GB, 0.9 GB available; over by 1.212 GB (1212000000 bytes)" -- \
    dlplan eval "$E/mem.json" --svg "$TMP/mem.svg"
check "memory: nothing on stdout" sh -c "[ ! -s '$TMP/out' ]"
check "memory: no svg written" sh -c "[ ! -e '$TMP/mem.svg' ]"

# --- usage ------------------------------------------------------------
expect_err "no plan" 1 "dlplan: no plan given (expected PLAN.json)" -- \
    dlplan eval
expect_err "two plans" 1 "dlplan: unexpected argument 'b.json'" -- \
    dlplan eval a.json b.json
expect_err "bad format" 1 \
    "dlplan: option '--format': 'xml' is not one of table|json" -- \
    dlplan eval "$E/hybrid.json" --format xml
expect_err "unknown option" 1 "dlplan: unknown option '--fast'" -- \
    dlplan eval "$E/hybrid.json" --fast

# --- bad plans --------------------------------------------------------
# plan NAME BODY: write $TMP/NAME.json, a plan on the one-node cluster
# (4 GPUs) and model m4 (4 layers) with BODY after the inputs.
plan() {
	printf '{ "schema": "dlplan.plan/1", "inputs": [ { "kind": "nodes", "path": "%s", "sha256": "%s" }, { "kind": "model", "path": "%s", "sha256": "%s" } ], %s }\n' \
	    "$SRCDIR/$E/one/nodes.csv" "$(sha256sum <"$SRCDIR/$E/one/nodes.csv" | cut -c1-64)" \
	    "$SRCDIR/$E/m4.csv" "$(sha256sum <"$SRCDIR/$E/m4.csv" | cut -c1-64)" \
	    "$2" >"$TMP/$1.json"
}
OPT='"options": { "global_batch": 2, "micro_batch": 1 }'
st() { # st NODE GPUS FIRST LAST
	printf '{ "node": "%s", "gpus": [%s], "layers": [%s, %s] }' "$@"
}
G1="{ \"micro_batches\": 1, \"stages\": [ $(st a 0 0 3) ] }"

expect_err "missing file" 2 \
    "dlplan: $TMP/none.json: cannot open file: No such file or directory" -- \
    dlplan eval "$TMP/none.json"
printf '{ "schema": "dlplan.plan/1",\n  "groups": [ 1, ]\n}\n' >"$TMP/syntax.json"
expect_err "bad JSON with line and column" 2 \
    "dlplan: $TMP/syntax.json:2:18: invalid JSON: unexpected token near ']'" -- \
    dlplan eval "$TMP/syntax.json"
printf '{ "a": 1, "a": 2 }' >"$TMP/dup.json"
expect_err "duplicate key" 2 \
    "dlplan: $TMP/dup.json:1:13: invalid JSON: duplicate object key near '\"a\"'" -- \
    dlplan eval "$TMP/dup.json"
printf '[1, 2]\n' >"$TMP/array.json"
expect_err "not an object" 2 \
    "dlplan: $TMP/array.json: not a plan (expected a JSON object with \"schema\": \"dlplan.plan/1\", found an array)" -- \
    dlplan eval "$TMP/array.json"
printf '{ "schema": "dlplan.plan/2" }\n' >"$TMP/schema.json"
expect_err "wrong schema" 2 \
    "dlplan: $TMP/schema.json: schema: 'dlplan.plan/2' is not a supported schema (expected \"dlplan.plan/1\")" -- \
    dlplan eval "$TMP/schema.json"
printf '{ "groups": [] }\n' >"$TMP/noschema.json"
expect_err "no schema" 2 \
    "dlplan: $TMP/noschema.json: schema: missing (expected \"dlplan.plan/1\")" -- \
    dlplan eval "$TMP/noschema.json"
printf '{ "schema": "dlplan.plan/1", %s, "groups": [ %s, %s ] }\n' "$OPT" \
    "$G1" "{ \"micro_batches\": 1, \"stages\": [ $(st a 1 0 3) ] }" \
    >"$TMP/noinputs.json"
expect_err "no inputs and no -c" 1 \
    "dlplan: plan '$TMP/noinputs.json' names no nodes.csv (expected -c DIR or --nodes FILE)" -- \
    dlplan eval "$TMP/noinputs.json"
expect_err "no inputs and no -m" 1 \
    "dlplan: plan '$TMP/noinputs.json' names no model (expected -m MODEL.csv)" -- \
    dlplan eval "$TMP/noinputs.json" -c "$E/one"
expect_run "no inputs, -c and -m given" 0 - - -- \
    dlplan eval "$TMP/noinputs.json" -c "$E/one" -m "$E/m4.csv"

plan noopt "\"groups\": [ $G1 ]"
expect_err "missing options" 2 \
    "dlplan: $TMP/noopt.json: options: missing (expected an object)" -- \
    dlplan eval "$TMP/noopt.json"
plan nogb "\"options\": { \"micro_batch\": 1 }, \"groups\": [ $G1 ]"
expect_err "missing global batch" 2 \
    "dlplan: $TMP/nogb.json: options.global_batch: missing (expected an integer in [1, 1000000000000])" -- \
    dlplan eval "$TMP/nogb.json"
plan typo "\"options\": { \"global_batch\": 2, \"micro_batch\": 1, \"micro_bacth\": 2 }, \"groups\": [ $G1 ]"
expect_err "unknown option key" 2 \
    "dlplan: $TMP/typo.json: options: unknown key 'micro_bacth' (expected global_batch, micro_batch, mfu, param_bytes, grad_bytes, optimizer_bytes, mem_reserve, horizon, states, forecast, max_stages, max_tp, time_limit, attention, recompute, optimizer, overlap; prefix other keys with x_)" -- \
    dlplan eval "$TMP/typo.json"
plan fm "\"options\": { \"global_batch\": 2, \"micro_batch\": 1, \"forecast\": \"arima\" }, \"groups\": [ $G1 ]"
expect_err "unknown forecast method" 2 \
    "dlplan: $TMP/fm.json: options.forecast: unknown method 'arima' (expected gmc|gm|last|mean|median|wmed|ensemble|auto)" -- \
    dlplan eval "$TMP/fm.json"
plan mfu "\"options\": { \"global_batch\": 2, \"micro_batch\": 1, \"mfu\": \"high\" }, \"groups\": [ $G1 ]"
expect_err "option of the wrong type" 2 \
    "dlplan: $TMP/mfu.json: options.mfu: expected a number in [1e-09, 1], found a string" -- \
    dlplan eval "$TMP/mfu.json"
plan nogroups "$OPT, \"groups\": []"
expect_err "no groups" 2 \
    "dlplan: $TMP/nogroups.json: groups: no groups (expected at least one)" -- \
    dlplan eval "$TMP/nogroups.json"
plan node "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st b 0 0 3) ] } ]"
expect_err "unknown node" 2 \
    "dlplan: $TMP/node.json: groups[0].stages[0].node: unknown node 'b' (not in nodes.csv)" -- \
    dlplan eval "$TMP/node.json"
plan gap "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 0 0), $(st a 1 2 3) ] } ]"
expect_err "layer gap" 2 \
    "dlplan: $TMP/gap.json: groups[0].stages[1].layers: starts at layer 2 but groups[0].stages[0] ends at layer 0 (layer 1 is in no stage)" -- \
    dlplan eval "$TMP/gap.json"
plan overlap "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 0 2), $(st a 1 1 3) ] } ]"
expect_err "layer overlap" 2 \
    "dlplan: $TMP/overlap.json: groups[0].stages[1].layers: starts at layer 1 but groups[0].stages[0] ends at layer 2 (layers 1 to 2 are in two stages)" -- \
    dlplan eval "$TMP/overlap.json"
plan short "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 0 2) ] } ]"
expect_err "layers not all covered" 2 \
    "dlplan: $TMP/short.json: groups[0].stages[0].layers: ends at layer 2 (expected 3: layer 3 is in no stage)" -- \
    dlplan eval "$TMP/short.json"
plan late "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 1 3) ] } ]"
expect_err "first layer not 0" 2 \
    "dlplan: $TMP/late.json: groups[0].stages[0].layers: starts at layer 1 (expected 0: layer 0 is in no stage)" -- \
    dlplan eval "$TMP/late.json"
plan far "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 0 4) ] } ]"
expect_err "layer beyond the model" 2 \
    "dlplan: $TMP/far.json: groups[0].stages[0].layers: layer 4 does not exist (the model has 4 layers: 0 to 3)" -- \
    dlplan eval "$TMP/far.json"
plan twice "$OPT, \"groups\": [ $G1, { \"micro_batches\": 1, \"stages\": [ $(st a 1,0 0 3) ] } ]"
expect_err "GPU used twice" 2 \
    "dlplan: $TMP/twice.json: groups[1].stages[0].gpus[1]: GPU 0 of node 'a' is already used by groups[0].stages[0].gpus[0]" -- \
    dlplan eval "$TMP/twice.json"
plan nogpu "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 4 0 3) ] } ]"
expect_err "GPU that does not exist" 2 \
    "dlplan: $TMP/nogpu.json: groups[0].stages[0].gpus[0]: GPU 4 does not exist on node 'a' (it has 4: 0 to 3)" -- \
    dlplan eval "$TMP/nogpu.json"
plan k3 "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0,1,2 0 3) ] } ]"
expect_err "bad TP degree" 2 \
    "dlplan: $TMP/k3.json: groups[0].stages[0].gpus: 3 GPUs (expected a TP degree of 1, 2, 4 or 8)" -- \
    dlplan eval "$TMP/k3.json"
plan k8 "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0,1,2,3,0,1,2,3 0 3) ] } ]"
expect_err "TP degree above the node's GPUs" 2 \
    "dlplan: $TMP/k8.json: groups[0].stages[0].gpus: TP degree 8 exceeds the 4 GPUs of node 'a'" -- \
    dlplan eval "$TMP/k8.json"
plan shares "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ { \"node\": \"a\", \"gpus\": [0, 1], \"tp_shares\": [0.5, 0.6], \"layers\": [0, 3] } ] } ]"
expect_err "shares do not sum to 1" 2 \
    "dlplan: $TMP/shares.json: groups[0].stages[0].tp_shares: shares sum to 1.1000000000000001 (expected 1 within 1e-9)" -- \
    dlplan eval "$TMP/shares.json"
plan nshares "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ { \"node\": \"a\", \"gpus\": [0, 1], \"tp_shares\": [1], \"layers\": [0, 3] } ] } ]"
expect_err "one share per GPU" 2 \
    "dlplan: $TMP/nshares.json: groups[0].stages[0].tp_shares: 1 shares for 2 GPUs" -- \
    dlplan eval "$TMP/nshares.json"
plan batch "$OPT, \"groups\": [ { \"micro_batches\": 3, \"stages\": [ $(st a 0 0 3) ] } ]"
expect_err "micro-batches do not make the global batch" 2 \
    "dlplan: $TMP/batch.json: groups: micro-batches sum to 3, times micro-batch 1 is 3 samples, but options.global_batch is 2" -- \
    dlplan eval "$TMP/batch.json"
plan zero "$OPT, \"groups\": [ { \"micro_batches\": 0, \"stages\": [ $(st a 0 0 3) ] } ]"
expect_err "group without micro-batches" 2 \
    "dlplan: $TMP/zero.json: groups[0].micro_batches: 0 is out of range (expected an integer in [1, 1000000000000])" -- \
    dlplan eval "$TMP/zero.json"
plan skey "$OPT, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ { \"node\": \"a\", \"gpu\": [0], \"layers\": [0, 3] } ] } ]"
expect_err "unknown stage key" 2 \
    "dlplan: $TMP/skey.json: groups[0].stages[0]: unknown key 'gpu' (expected node, gpus, tp_shares, layers, layer_names, ranks, micro_batches, compute_s, p2p_s, mem_bytes, recompute_layers; prefix other keys with x_)" -- \
    dlplan eval "$TMP/skey.json"
plan xkey "$OPT, \"x_note\": 1, \"groups\": [ { \"micro_batches\": 2, \"x_why\": \"test\", \"stages\": [ $(st a 0 0 3) ] } ]"
expect_run "x_ keys are allowed" 0 - - -- dlplan eval "$TMP/xkey.json"
plan fc "$OPT, \"forecast\": { \"zz\": 0.5 }, \"groups\": [ { \"micro_batches\": 2, \"stages\": [ $(st a 0 0 3) ] } ]"
expect_err "forecast of an unknown node" 2 \
    "dlplan: $TMP/fc.json: forecast.zz: unknown node 'zz' (not in nodes.csv)" -- \
    dlplan eval "$TMP/fc.json"
printf '{ "schema": "dlplan.plan/1", "inputs": [ { "kind": "nodez", "path": "x" } ] }\n' >"$TMP/kind.json"
expect_err "bad input kind" 2 \
    "dlplan: $TMP/kind.json: inputs[0].kind: 'nodez' is not an input kind (expected nodes, links, load, traffic or model)" -- \
    dlplan eval "$TMP/kind.json"

# --- digests ----------------------------------------------------------
# A plan made by eval from copies of the inputs, then a changed input.
mkdir -p "$TMP/d"
cp "$E/one/nodes.csv" "$E/m4.csv" "$TMP/d/"
dlplan eval "$E/hybrid.json" -c "$TMP/d" -m "$TMP/d/m4.csv" --format json \
    >"$TMP/d/plan.json"
expect_run "digests match" 0 - - -- dlplan eval "$TMP/d/plan.json"
# The size the plan records is compared first, then the digest.
printf '# a comment changes the size\n' >>"$TMP/d/nodes.csv"
expect_err "size mismatch" 2 \
    "dlplan: $TMP/d/nodes.csv: is $(wc -c <"$TMP/d/nodes.csv") bytes, not the $(wc -c <"$E/one/nodes.csv") bytes the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" -- \
    dlplan eval "$TMP/d/plan.json"
expect_run "--ignore-digests" 0 - - -- \
    dlplan eval "$TMP/d/plan.json" --ignore-digests
expect_err "-c DIR with another nodes.csv: size mismatch" 2 \
    "dlplan: $TMP/d/nodes.csv: plan was made for a different nodes.csv ($(wc -c <"$TMP/d/nodes.csv") bytes, the plan records $(wc -c <"$E/one/nodes.csv")); re-run dlplan plan" -- \
    dlplan eval "$TMP/d/plan.json" -c "$TMP/d"
# As many bytes, one of them changed.
sed '1s/One/Two/' "$E/one/nodes.csv" >"$TMP/d/nodes.csv"
expect_err "digest mismatch" 2 \
    "dlplan: $TMP/d/nodes.csv: does not match the digest the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" -- \
    dlplan eval "$TMP/d/plan.json"
expect_err "-c DIR with another nodes.csv: digest mismatch" 2 \
    "dlplan: $TMP/d/nodes.csv: plan was made for a different nodes.csv (digest mismatch); re-run dlplan plan" -- \
    dlplan eval "$TMP/d/plan.json" -c "$TMP/d"
cp "$E/one/nodes.csv" "$TMP/d/"
printf 'l4,1,1,1,1,1\n' >>"$TMP/d/m4.csv"
expect_err "model size mismatch" 2 \
    "dlplan: $TMP/d/m4.csv: is $(wc -c <"$TMP/d/m4.csv") bytes, not the $(wc -c <"$E/m4.csv") bytes the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" -- \
    dlplan eval "$TMP/d/plan.json"
sed '$s/.$/9/' "$E/m4.csv" >"$TMP/d/m4.csv"
expect_err "model digest mismatch" 2 \
    "dlplan: $TMP/d/m4.csv: does not match the digest the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" -- \
    dlplan eval "$TMP/d/plan.json"
cp "$E/m4.csv" "$TMP/d/"
printf 'node,t,util\na,0,0.5\n' >"$TMP/d/load.csv"
expect_err "an input the plan was made without" 2 \
    "dlplan: $TMP/d/load.csv: plan was made without a load.csv; re-run dlplan plan" -- \
    dlplan eval "$TMP/d/plan.json" -c "$TMP/d"

# --- uneven TP shares -------------------------------------------------
# A unit's GPUs run in step, so shares of 0.75 and 0.25 are priced by the
# larger: the FLOPs term of the stage's compute is 1.5 times the even
# one (k times the largest share), the TP all-reduce term unchanged.
# From the CSVs: TP term = mu * sum tp_mb * 1e6 * 2(k-1)/k /
# (intra_gbps * 1e9 / 8), FLOPs term = even compute - TP term.  The
# edited plan sits beside the original, whose input paths are relative
# to its directory.
mkdir -p "$TMP/ts"
dlplan plan -q -c "$SRCDIR/datasets/clusters/single-node" \
    -m "$SRCDIR/datasets/models/gpt2-xl.csv" --global-batch 16 \
    --micro-batch 2 --max-tp 2 --strategy pp -o "$TMP/ts/p" >/dev/null 2>&1
/usr/bin/python3 - "$TMP/ts/p/plan.json" "$TMP/ts/p/u.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for g in p["groups"]:
    for s in g["stages"]:
        if len(s["gpus"]) == 2:
            s["tp_shares"] = [0.75, 0.25]
json.dump(p, open(sys.argv[2], "w"))
PY
dlplan eval "$TMP/ts/p/plan.json" --format json >"$TMP/ts/even.json" 2>&1
dlplan eval "$TMP/ts/p/u.json" --ignore-digests --trust-paths --format json \
    >"$TMP/ts/uneven.json" 2>&1
check "uneven TP shares: compute priced by the largest share" \
    /usr/bin/python3 - "$TMP/ts/even.json" "$TMP/ts/uneven.json" \
    "$SRCDIR/datasets/clusters/single-node/nodes.csv" \
    "$SRCDIR/datasets/models/gpt2-xl.csv" <<'PY'
import csv, json, sys
ev, un = (json.load(open(f)) for f in sys.argv[1:3])
node = [r for r in csv.DictReader(l for l in open(sys.argv[3])
        if not l.startswith("#"))][0]
rows = [r for r in csv.DictReader(l for l in open(sys.argv[4])
        if not l.startswith("#"))]
bw = float(node["intra_gbps"]) * 1e9 / 8
n = 0
for ge, gu in zip(ev["groups"], un["groups"]):
    for se, su in zip(ge["stages"], gu["stages"]):
        if len(se["gpus"]) != 2:
            continue
        a, b = se["layers"]
        tp = sum(float(r["tp_mb"]) for r in rows[a:b + 1])
        tpterm = 2 * tp * 1e6 * (2 * (2 - 1) / 2) / bw
        want = se["compute_s"] + 0.5 * (se["compute_s"] - tpterm)
        assert abs(su["compute_s"] - want) <= 1e-9 * want, (su, want)
        n += 1
assert n > 0
PY

# The model FLOPs line against Megatron-LM's own num_floating_point_
# operations() (megatron/training/training.py at d98e8a64ddf3, the
# function run unchanged, cut out with ast, on these arguments: the
# figures below are its output).  Plans made with import megatron, so
# that the vocabulary is padded to 128 x TP as Megatron pads it.
fl_args() {
	# fl_args MODEL.csv: the model's sizes as megatron arguments.
	/usr/bin/python3 -c '
import sys
w = open(sys.argv[1]).readline().split()
a = dict(zip(w[4::2], w[5::2]))
out = ["--num-layers", a["--layers"], "--hidden-size", a["--hidden"],
       "--num-attention-heads", a["--heads"], "--ffn-hidden-size",
       a["--ffn"], "--seq-length", a["--seq"], "--vocab-size", a["--vocab"],
       "--max-position-embeddings", a.get("--positions", a["--seq"]),
       "--bf16"]
if a["--kv-heads"] != a["--heads"]:
    out += ["--group-query-attention", "--num-query-groups", a["--kv-heads"]]
if w[3] == "llama":
    out += ["--position-embedding-type", "rope", "--normalization",
            "RMSNorm", "--swiglu", "--disable-bias-linear",
            "--untie-embeddings-and-output-weights", "--hidden-dropout", "0",
            "--attention-dropout", "0"]
print(" ".join(out))' "$1"
}
mkdir -p "$TMP/fl4"
{
	echo "node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps"
	for i in 0 1 2 3; do echo "dgx-$i,dc,8,A100-SXM4-80GB,312,80,2400,1600"; done
} >"$TMP/fl4/nodes.csv"
# model TP PP global-batch cluster megatron's FLOPs
for c in "llama2-7b 4 1 64 single-node 1.1238108347498496e+16" \
    "gpt2-xl 1 1 32 single-node 321196444876800.0" \
    "llama2-70b 8 4 64 fl4 1.1230851570755174e+17"; do
	set -- $c
	cl=datasets/clusters/$5
	[ "$5" = fl4 ] && cl=$TMP/fl4
	sp=""
	[ "$2" -gt 1 ] && sp=--sequence-parallel
	# shellcheck disable=SC2046
	dlplan import megatron -q -c "$cl" -m "datasets/models/$1.csv" \
	    -o "$TMP/fl-$1" -- $(fl_args "datasets/models/$1.csv") \
	    --tensor-model-parallel-size "$2" $sp \
	    --pipeline-model-parallel-size "$3" --micro-batch-size 1 \
	    --global-batch-size "$4" >/dev/null 2>&1
	expect_run "eval: model FLOPs of $1 TP $2" 0 - - -- \
	    dlplan eval "$TMP/fl-$1/plan.json"
	check "eval: $1 TP $2 FLOPs are Megatron's count" \
	    /usr/bin/python3 -c "
import re, sys
t = open('$TMP/out').read()
f = float(re.search(r'^model +([0-9.e+]+) FLOP an iteration', t, re.M)[1])
want = $6
sys.exit(abs(f - want) > 1e-12 * want)"
done
check "eval: MFU is the FLOPs over T and the peak" /usr/bin/python3 -c "
import json, re, subprocess, sys
t = open('$TMP/out').read()
f = float(re.search(r'^model +([0-9.e+]+) FLOP', t, re.M)[1])
mfu = float(re.search(r'MFU ([0-9.]+) %', t)[1])
T = float(re.search(r'^iteration  T +([0-9.e+-]+) s', t, re.M)[1])
sys.exit(abs(mfu - 100 * f / (T * 32 * 312e12)) > 0.006)"
