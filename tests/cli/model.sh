# tests/cli/model.sh - dlplan model: bundled files up to date, output
# formats, every usage error with its message, atomic -o.

M=$SRCDIR/datasets/models

# Staleness: every preset's file in datasets/models is what the binary
# writes (run datasets/models/regen.sh after changing the generator).
presets=$(dlplan --complete values model --preset)
check "model: presets are listed for completion" test -n "$presets"
for p in $presets; do
	dlplan model --preset "$p" >"$TMP/$p.csv" 2>"$TMP/$p.err"
	check "model: datasets/models/$p.csv is up to date (run regen.sh)" \
	    cmp "$M/$p.csv" "$TMP/$p.csv"
done
for f in "$M"/*.csv; do
	p=$(basename "$f" .csv)
	case "$p" in *-pipedream) continue ;; esac
	check "model: $p.csv belongs to a preset" \
	    sh -c 'printf "%s\n" "$1" | grep -qx "$2"' sh "$presets" "$p"
done

# The generated files load as model.csv.
for p in llama2-70b resnet50; do
	check "model: $p.csv passes dlplan check" \
	    dlplan check -c "$SRCDIR/datasets/clusters/hetero-lab" -m "$M/$p.csv"
done
check "model: resnet50-pipedream.csv passes dlplan check" \
    dlplan check -c "$SRCDIR/datasets/clusters/hetero-lab" \
    -m "$M/resnet50-pipedream.csv"

# A tiny GPT whose rows tests/unit/test_modelgen.c derives by hand.
expect_run "model: tiny gpt" 0 model-tiny-gpt.csv - -- \
    dlplan model gpt --layers 1 --hidden 8 --heads 2 --seq 4 --vocab 10
expect_run "model: tiny llama with GQA" 0 model-tiny-llama.csv - -- \
    dlplan model llama --layers 1 --hidden 8 --heads 2 --kv-heads 1 \
    --ffn 12 --seq 4 --vocab 10
expect_run "model: summary" 0 model-summary-llama2-7b.txt - -- \
    dlplan model --preset llama2-7b --format summary
expect_run "model: resnet50 summary" 0 model-summary-resnet50.txt - -- \
    dlplan model resnet50 --format summary
expect_run "model: -h" 0 - - -- dlplan model -h

# The family word is implied by a preset; options override the preset.
dlplan model llama --preset llama2-7b >"$TMP/a.csv"
check "model: family word is optional with --preset" \
    cmp "$TMP/a.csv" "$M/llama2-7b.csv"
dlplan model --preset llama2-7b --seq 2048 --dtype-bytes 4 >"$TMP/b.csv"
check "model: options override preset fields" \
    grep -q -- '--seq 2048 --dtype-bytes 4 --tied no$' "$TMP/b.csv"
# 2048 tokens * 4096 * 4 bytes = 33.554432 MB.
check "model: overridden seq and dtype reach the rows" \
    grep -q '^block0,.*,33.554432,' "$TMP/b.csv"

# The comment line is a command that regenerates the file.
for f in "$M/gpt2-xl.csv" "$SRCDIR/tests/cli/golden/model-tiny-llama.csv"; do
	args=$(sed -n '1s/^# dlplan //p' "$f")
	# shellcheck disable=SC2086
	dlplan $args >"$TMP/again.csv"
	check "model: first line of $(basename "$f") regenerates it" \
	    cmp "$f" "$TMP/again.csv"
done

# Usage errors: status 1 and an exact message.
while IFS='~' read -r name msg args; do
	# shellcheck disable=SC2086
	expect_err "model: $name" 1 "dlplan: $msg" -- dlplan model $args
done <<'EOF'
zero heads~option '--heads': '0' is out of range [1, 1048576]~gpt --layers 2 --hidden 8 --heads 0 --seq 4 --vocab 10
heads not dividing hidden~'hidden' 10 is not a multiple of 'heads' 3~gpt --layers 2 --hidden 10 --heads 3 --seq 4 --vocab 10
kv-heads not dividing heads~'kv-heads' 3 does not divide 'heads' 4~llama --layers 2 --hidden 8 --heads 4 --kv-heads 3 --seq 4 --vocab 10
kv-heads above heads~'kv-heads' 64 does not divide 'heads' 32~--preset llama2-7b --kv-heads 64
unknown preset~option '--preset': 'gpt4' is not one of gpt2-xl|gpt3-175b|llama2-7b|llama2-13b|llama2-70b|bert-large|resnet50~--preset gpt4
unknown family~unknown model family 't5' (expected gpt|llama|bert|resnet50)~t5 --layers 2
no family~no model family given (expected gpt|llama|bert|resnet50 or --preset NAME)~--layers 2
family contradicts preset~preset 'llama2-7b' is a llama model, not gpt~gpt --preset llama2-7b
hidden 1e12~option '--hidden': '1e12' is out of range [1, 1048576]~--preset llama2-7b --hidden 1e12
hidden huge integer~option '--hidden': '99999999999999999999' is out of range [1, 1048576]~--preset llama2-7b --hidden 99999999999999999999
negative layers~option '--layers': '-3' is out of range [1, 10000]~--preset gpt2-xl --layers -3
fractional hidden~option '--hidden': '4096.5' is not an integer~--preset llama2-7b --hidden 4096.5
hidden not a number~option '--hidden': 'big' is not an integer~--preset llama2-7b --hidden big
dtype too wide~option '--dtype-bytes': '16' is out of range [1, 8]~--preset bert-large --dtype-bytes 16
missing heads~missing '--heads' for a gpt model (or use --preset)~gpt --layers 2 --hidden 8 --seq 4 --vocab 10
missing everything~missing '--layers' for a llama model (or use --preset)~llama
missing vocab~missing '--vocab' for a bert model (or use --preset)~bert --layers 2 --hidden 8 --heads 2 --seq 4
option not for resnet50~option '--layers' does not apply to resnet50~resnet50 --layers 101
positions not for llama~option '--positions' does not apply to llama~--preset llama2-7b --positions 8192
tied not for resnet50~option '--tied' does not apply to resnet50~--preset resnet50 --tied no
image too small~option '--image': '16' is out of range [32, 16384]~resnet50 --image 16
seq beyond learned positions~'seq' 2048 exceeds the 1024 learned 'positions'~--preset gpt2-xl --seq 2048
absurd total work~model too large: forward work in total is 2.10755e+11 GFLOP per sample, more than 1e+09~--preset llama2-70b --hidden 1048576 --layers 10000
absurd attention memory~model too large: activation memory of 'block0' is 1.40738e+09 MB per sample, more than 1e+09~gpt --layers 1 --hidden 8 --heads 1 --vocab 10 --seq 16777216
extra operand~unexpected argument 'llama'~gpt llama
bad tied word~option '--tied': 'maybe' is not one of yes|no~--preset gpt2-xl --tied maybe
bad format~option '--format': 'xml' is not one of csv|summary|json~--preset gpt2-xl --format xml
unknown option~unknown option '--depth'~--preset gpt2-xl --depth 3
EOF

# -o: written atomically; nothing is created or changed on error.
mkdir "$TMP/o"
expect_run "model: -o writes nothing to stdout" 0 - - -- \
    dlplan model --preset bert-large -o "$TMP/o/bert.csv"
check "model: -o file equals stdout output" \
    cmp "$TMP/o/bert.csv" "$M/bert-large.csv"
check "model: -o leaves no temporary file" \
    test "$(ls -A "$TMP/o")" = bert.csv
mkdir "$TMP/e"
expect_err "model: bad argument with -o" 1 \
    "dlplan: 'hidden' 10 is not a multiple of 'heads' 3" -- \
    dlplan model gpt --layers 1 --hidden 10 --heads 3 --seq 4 --vocab 10 \
    -o "$TMP/e/x.csv"
expect_empty_dir "model: nothing created on a usage error" "$TMP/e"
expect_err "model: absurd model with -o" 1 \
    "dlplan: model too large: forward work in total is 2.10755e+11 GFLOP per sample, more than 1e+09" -- \
    dlplan model --preset llama2-70b --hidden 1048576 --layers 10000 \
    -o "$TMP/e/x.csv"
expect_empty_dir "model: nothing created when the model is absurd" "$TMP/e"
cp "$M/resnet50.csv" "$TMP/o/keep.csv"
expect_err "model: failure keeps an existing file" 1 \
    "dlplan: option '--layers' does not apply to resnet50" -- \
    dlplan model resnet50 --layers 3 -o "$TMP/o/keep.csv"
check "model: existing file unchanged" cmp "$M/resnet50.csv" "$TMP/o/keep.csv"
expect_err "model: -o into a missing directory" 4 \
    "dlplan: $TMP/nodir/x.csv: cannot create file: No such file or directory" -- \
    dlplan model --preset resnet50 -o "$TMP/nodir/x.csv"
check "model: missing directory not created" test ! -e "$TMP/nodir"
