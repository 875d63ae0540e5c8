# Messages: values that underflow are in range, a directory as
# an input file is bad input (exit 2), and no control character of an
# input reaches the terminal through a message.

# --- underflow is not "out of range" ------------------------------------
mkdir -p "$TMP/u"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\na,s,4,A,100,80,100,100,1e-310\n' \
    >"$TMP/u/nodes.csv"
awk 'BEGIN { print "node,t,util"
    for (t = 0; t < 8; t++) printf "a,%d,%s\n", t, t == 3 ? "1e-320" : "0.5" }' \
    >"$TMP/u/load.csv"
expect_run "mfu 1e-310 and util 1e-320 are accepted" 0 - - -- \
    dlplan check -c "$TMP/u"
check "... and nothing says out of range" sh -c "! grep -q 'out of range' '$TMP/err'"
expect_run "predict reads util 1e-320" 0 - - -- \
    dlplan predict -H "$TMP/u/load.csv" --horizon 1
printf 'node,t,util\na,0,1e-400\na,1,0.5\na,2,0.5\na,3,0.5\n' >"$TMP/u/zero.csv"
expect_run "util 1e-400 (zero) is accepted" 0 - - -- \
    dlplan predict -H "$TMP/u/zero.csv" --horizon 1
printf 'node,t,util\na,0,1e400\na,1,0.5\na,2,0.5\na,3,0.5\n' >"$TMP/u/big.csv"
expect_err "util 1e400 is out of range" 2 \
    "dlplan: $TMP/u/big.csv:2:3: column 'util': '1e400' is out of range (expected a number in [0, 1])" \
    -- dlplan predict -H "$TMP/u/big.csv"

# --- a directory as an input file: exit 2 --------------------------------
mkdir -p "$TMP/d/m.csv"
expect_err "a directory as the model: exit 2" 2 \
    "dlplan: $TMP/d/m.csv: is a directory (expected a file)" \
    -- dlplan check -c "$DATA/eval/one" -m "$TMP/d/m.csv"
expect_err "a directory as the history: exit 2" 2 \
    "dlplan: $TMP/d: is a directory (expected a file)" \
    -- dlplan predict -H "$TMP/d"
mkdir -p "$TMP/d/c/nodes.csv"
expect_err "a directory as nodes.csv: exit 2" 2 \
    "dlplan: $TMP/d/c/nodes.csv: is a directory (expected a file)" \
    -- dlplan check -c "$TMP/d/c"

# --- control characters are escaped ---------------------------------------
# ESC sequences that would set the terminal's title or clear the screen,
# from a CSV, a plan.json and an option value: stderr has no raw control
# character, and shows them as \xNN.
ESC=$(printf '\033')
BEL=$(printf '\007')
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n%s]0;pwned%s,s,4,A,100,80,100,100\n' \
    "$ESC" "$BEL" >"$TMP/esc-nodes.csv"
printf '{ "schema": "dlplan.plan/1", "inputs": [], "options": { "global_batch": 2 }, "x": "\\u001b[2J" }\n' \
    >"$TMP/esc-plan.json"
printf '{ "schema": "dlplan.plan/1\\u001b[2J" }\n' >"$TMP/esc-schema.json"
# noctl NAME CMD...: CMD's stderr has no control character but newlines.
noctl() {
	_n=$1
	shift
	"$@" >/dev/null 2>"$TMP/ctl.err"
	if LC_ALL=C tr -d '\n' <"$TMP/ctl.err" | LC_ALL=C grep -q '[[:cntrl:]]'; then
		t_notok "$_n" "raw control character: $(od -c "$TMP/ctl.err" | head -3)"
	elif ! grep -q '\\x1b' "$TMP/ctl.err"; then
		t_notok "$_n" "no \\x1b in: $(cat "$TMP/ctl.err")"
	else
		t_ok "$_n"
	fi
}
noctl "a CSV's ESC is escaped" "$DLPLAN" check --nodes "$TMP/esc-nodes.csv"
noctl "a plan.json's ESC is escaped" "$DLPLAN" eval "$TMP/esc-schema.json"
noctl "an option value's ESC is escaped" "$DLPLAN" plan -c "$DATA/eval/one" \
    -m "$DATA/eval/m4.csv" --global-batch "2${ESC}[2J"
noctl "an unknown command's ESC is escaped" "$DLPLAN" "x${ESC}]0;t${BEL}"
noctl "a file name's ESC is escaped" "$DLPLAN" check -c "$TMP/no${ESC}[2Jdir"
