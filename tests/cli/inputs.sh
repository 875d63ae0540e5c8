# tests/cli/inputs.sh - the rules every input file follows:
# no input may block or feed dlplan without end (FIFOs, devices, sparse
# files), text is UTF-8 without NUL bytes, one rule for line ends, ranges
# the solver can handle, linear duplicate checks, and hostnames that
# cannot pass for options.  Reproducers are small; large inputs are made
# here.

ONE="-c $DATA/eval/one --global-batch 6"
M4=$DATA/eval/m4.csv
NOTREG="not a regular file (a FIFO, socket or device cannot be an input; use a file or standard input)"

# --- non-regular files ------------------------------------------------
if mkfifo "$TMP/fifo" 2>/dev/null; then
	expect_err "FIFO as model" 2 "dlplan: $TMP/fifo: $NOTREG" -- \
	    timeout 10 "$DLPLAN" plan $ONE -m "$TMP/fifo"
	expect_err "FIFO as flows" 2 "dlplan: $TMP/fifo: $NOTREG" -- \
	    timeout 10 "$DLPLAN" route -c $DATA/eval/dp2 --flows "$TMP/fifo"
	expect_err "FIFO as plan" 2 "dlplan: $TMP/fifo: $NOTREG" -- \
	    timeout 10 "$DLPLAN" eval "$TMP/fifo"
else
	skip "FIFO as model" "mkfifo failed"
fi
expect_err "/dev/zero as history" 2 "dlplan: /dev/zero: $NOTREG" -- \
    timeout 10 "$DLPLAN" predict -H /dev/zero
expect_err "/dev/zero as model" 2 "dlplan: /dev/zero: $NOTREG" -- \
    timeout 10 "$DLPLAN" plan $ONE -m /dev/zero
# Standard input given by name is the caller's pipe, and is read.
if timeout 10 "$DLPLAN" plan $ONE -m /dev/stdin <"$M4" >"$TMP/out" \
    2>"$TMP/err"; then
	t_ok "/dev/stdin is read"
else
	t_notok "/dev/stdin is read" "$(head -3 "$TMP/err")"
fi

# --- NUL bytes: stop at the first, name line and column -----------------
# A 2 GB sparse file: a hole is NUL bytes, so reading stops at once.
if truncate -s 2G "$TMP/sparse.csv" 2>/dev/null; then
	expect_err "sparse file stops at the first NUL" 2 \
	    "dlplan: $TMP/sparse.csv:1:1: NUL byte in file (expected text)" \
	    -- timeout 10 "$DLPLAN" plan $ONE -m "$TMP/sparse.csv"
	rm -f "$TMP/sparse.csv"
else
	skip "sparse file stops at the first NUL" "truncate failed"
fi
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1\0001,1,1,1\n' \
    >"$TMP/nul.csv"
expect_err "NUL names line and column" 2 \
    "dlplan: $TMP/nul.csv:2:5: NUL byte in file (expected text)" -- \
    dlplan plan $ONE -m "$TMP/nul.csv"

# --- invalid UTF-8 in text columns ------------------------------------
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1,1,1,1\n\377\376,1,1,1,1\n' \
    >"$TMP/utf.csv"
expect_err "invalid UTF-8 layer name" 2 \
    "dlplan: $TMP/utf.csv:3:1: column 'layer': invalid UTF-8 in text (byte 0xff)" \
    -- dlplan plan $ONE -m "$TMP/utf.csv"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\na,s,4,A\300\257,100,80,800,100\n' \
    >"$TMP/nodes-utf.csv"
expect_err "overlong UTF-8 gpu_model" 2 \
    "dlplan: $TMP/nodes-utf.csv:2:4: column 'gpu_model': invalid UTF-8 in text (byte 0xc0)" \
    -- dlplan check --nodes "$TMP/nodes-utf.csv"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\n\303\251l\342\202\2540,1,1,1,1\n' \
    >"$TMP/utf-ok.csv"
expect_run "valid UTF-8 layer name" 0 - - -- \
    dlplan plan $ONE -m "$TMP/utf-ok.csv"

# --- CR line ends: one rule for all inputs ----------------------------
printf '# layers\rlayer,fwd_gflop,params_m,act_mb,mem_mb\rl0,1,1,1,1\rl1,1,1,1,1\r' \
    >"$TMP/cr.csv"
expect_run "CR-only model starting with a comment" 0 - - -- \
    dlplan plan $ONE -m "$TMP/cr.csv"
printf '# history\rnode,t,util\ra,0,0.1\ra,1,0.2\ra,2,0.1\ra,3,0.2\ra,4,0.1\r' \
    >"$TMP/cr-load.csv"
expect_run "CR-only history starting with a comment" 0 - - -- \
    dlplan predict -H "$TMP/cr-load.csv"

# --- ranges the solver can handle --------------------------------------
mkdir -p "$TMP/tiny"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\na,s,4,A,100,80,1e-300,100\n' \
    >"$TMP/tiny/nodes.csv"
expect_err "intra_gbps 1e-300 refused" 2 \
    "dlplan: $TMP/tiny/nodes.csv:2:7: column 'intra_gbps': '1e-300' is out of range (expected a number in [0.001, 10000000] (Gbps))" \
    -- dlplan plan -c "$TMP/tiny" -m "$M4" --global-batch 8

# --- duplicate flow ids: linear ---------------------------------------
awk 'BEGIN { print "flow,src,dst,mb"
	for (i = 0; i < 200000; i++) print "f,n1,n2,1" }' >"$TMP/dup.csv"
expect_err "200k duplicate flow ids in seconds" 2 \
    "dlplan: $TMP/dup.csv:3:1: column 'flow': duplicate flow 'f' (first on line 2)" \
    -- timeout 20 "$DLPLAN" route -c $DATA/eval/dp2 --flows "$TMP/dup.csv"

# --- hostnames that read as options or paths ---------------------------
mkdir -p "$TMP/dash"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n-n,s,4,A,100,80,800,100\n' \
    >"$TMP/dash/nodes.csv"
if dlplan plan -c "$TMP/dash" -m "$M4" --global-batch 8 -o "$TMP/dplan" \
    -q >/dev/null 2>"$TMP/err"; then
	t_ok "node id '-n' plans"
else
	t_notok "node id '-n' plans" "$(head -3 "$TMP/err")"
fi
_hmsg="node '-n' has no valid host name for the launch files (without a 'host' column the id is the host: letters, digits, '.', '-', '_', not first '-' or '.'; give a 'host' column)"
expect_err "node id '-n' is no hostname for a launcher: nodes.csv:LINE" 2 \
    "dlplan: $TMP/dplan/../dash/nodes.csv:2: $_hmsg" -- \
    dlplan emit "$TMP/dplan/plan.json" --launcher hostfile \
    -o "$TMP/dout" -- train
expect_err "... and from plan --launcher" 2 \
    "dlplan: $TMP/dash/nodes.csv:2: $_hmsg" -- \
    dlplan plan -c "$TMP/dash" -m "$M4" --global-batch 8 -o "$TMP/dplan2" \
    --launcher torchrun -- train

# --- documented exit status of a missing input ------------------------
expect_err "missing input is bad input data" 2 \
    "dlplan: $TMP/none.csv: cannot open file: No such file or directory" \
    -- dlplan plan $ONE -m "$TMP/none.csv"
if mandoc -Tascii "$SRCDIR/man/dlplan.1" 2>/dev/null | sed 's/.\x08//g' |
    tr -s ' \n' '  ' | grep -q "A named input file that does not exist"; then
	t_ok "dlplan(1) says a missing input exits 2"
else
	t_notok "dlplan(1) says a missing input exits 2"
fi

# --- implausible values: accepted, warned about, recorded ---------------
mkdir -p "$TMP/mb"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,mfu\na,s,4,A,100,81920,800,100,0.5\n' \
    >"$TMP/mb/nodes.csv"
MBW="$TMP/mb/nodes.csv:2:6: column 'mem_gb': 81920 is implausible (more than 1,024 GB per GPU; given in MB?)"
dlplan plan -c "$TMP/mb" -m "$M4" --global-batch 6 -o "$TMP/mbo" \
    >"$TMP/mb.out" 2>"$TMP/mb.err"
check "mem_gb 81920: planned (exit 0)" test -s "$TMP/mbo/plan.json"
check "mem_gb 81920: a warning with FILE:LINE:COLUMN on stderr" \
    grep -qxF "dlplan: warning: $MBW" "$TMP/mb.err"
check "mem_gb 81920: the summary says so" \
    grep -q '^warnings  1 implausible value in the inputs' "$TMP/mb.out"
check "mem_gb 81920: plan.json's warnings" grep -qF "\"$MBW\"" \
    "$TMP/mbo/plan.json"
dlplan plan -q -c "$TMP/mb" -m "$M4" --global-batch 6 >/dev/null \
    2>"$TMP/mbq.err"
check "-q: no warning" test ! -s "$TMP/mbq.err"
check "check: the warning in its json" sh -c "\"\$DLPLAN\" check -q \
    -c '$TMP/mb' --format json | grep -qF \"\\\"$MBW\\\"\""
check "no warning for a plausible cluster" sh -c "\"\$DLPLAN\" check \
    -c '$DATA/eval/one' --format json 2>&1 | grep -q '\"warnings\": \[\]'"
printf 'layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1,7000000,1,2\n' \
    >"$TMP/mbm.csv"
expect_err "params_m in units, not millions: a warning" 0 \
    "dlplan: warning: $TMP/mbm.csv:2:3: column 'params_m': 7000000 is implausible (more than 100 billion parameters in one layer; given in units, not millions?)" \
    -- "$DLPLAN" check -c "$DATA/eval/one" -m "$TMP/mbm.csv"

# --- a plan's inputs are trusted by content ------------------------------
# A plan reads the files it names when their bytes have the digests it
# records, wherever they lie.  A plan naming /etc/passwd with a wrong or
# no digest is refused before it is parsed (exit 2, no line of the file in
# the message); with the right digest it is read like any input.  With
# --ignore-digests the files must lie below the plan's directory ('..' and
# symbolic links out are refused) unless --trust-paths.
mkdir -p "$TMP/pp/in" "$TMP/pp/plan"
cp "$DATA/eval/one/nodes.csv" "$TMP/pp/in/nodes.csv"
cp "$M4" "$TMP/pp/in/m4.csv"
dlplan plan -c "$TMP/pp/in" -m "$TMP/pp/in/m4.csv" --global-batch 6 \
    -o "$TMP/pp/in" >/dev/null 2>&1
sed 's|"path": "|"path": "../in/|' "$TMP/pp/in/plan.json" \
    >"$TMP/pp/plan/plan.json"
check "inputs inside the plan's tree: eval reads them" \
    "$DLPLAN" eval "$TMP/pp/in/plan.json"
check "inputs outside with their digests: eval reads them" \
    "$DLPLAN" eval "$TMP/pp/plan/plan.json"
# etc.json records nodes.csv's digest without its size, as plans of
# older versions do; etc-size.json its size too, which /etc/passwd does
# not have.
sed -e 's|"path": "[^"]*nodes.csv"|"path": "/etc/passwd"|' \
    -e '/"path": "\/etc\/passwd"/{n;s/",$/"/;n;d;}' \
    "$TMP/pp/in/plan.json" >"$TMP/pp/plan/etc.json"
sed 's|"path": "[^"]*nodes.csv"|"path": "/etc/passwd"|' \
    "$TMP/pp/in/plan.json" >"$TMP/pp/plan/etc-size.json"
sed -e 's|"path": "[^"]*nodes.csv",|"path": "/etc/passwd"|' \
    -e '/"path": "\/etc\/passwd"/{n;N;d;}' \
    "$TMP/pp/in/plan.json" >"$TMP/pp/plan/etc-none.json"
NB=$(wc -c <"$TMP/pp/in/nodes.csv")
for c in eval emit replan; do
	case $c in
	emit) a="--launcher hostfile -o $TMP/pp/o -- true" ;;
	replan) a="--observed $TMP/pp/none.csv" ;;
	*) a= ;;
	esac
	expect_err "$c: /etc/passwd with a wrong digest is refused" 2 \
	    "dlplan: /etc/passwd: does not match the digest the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" \
	    -- "$DLPLAN" $c "$TMP/pp/plan/etc.json" $a
	expect_err "$c: /etc/passwd of another size is refused" 2 \
	    "dlplan: /etc/passwd: is $(wc -c </etc/passwd) bytes, not the $NB bytes the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" \
	    -- "$DLPLAN" $c "$TMP/pp/plan/etc-size.json" $a
	expect_err "$c: /etc/passwd without a digest is refused" 2 \
	    "dlplan: $TMP/pp/plan/etc-none.json: inputs[0].sha256: missing, so '/etc/passwd' is not read (give the cluster with -c DIR, or --ignore-digests to read it inside the plan's directory)" \
	    -- "$DLPLAN" $c "$TMP/pp/plan/etc-none.json" $a
done
check "/etc/passwd: nothing of it in the messages" sh -c "! { \
    \"\$DLPLAN\" eval '$TMP/pp/plan/etc.json'; \
    \"\$DLPLAN\" eval '$TMP/pp/plan/etc-none.json'; \
    \"\$DLPLAN\" eval --ignore-digests '$TMP/pp/plan/etc.json'; } 2>&1 | \
    grep -q root"
sed "s|\"path\": \"/etc/passwd\"|&, \"sha256\": \"$(sha256sum </etc/passwd | \
    cut -c1-64)\"|" "$TMP/pp/plan/etc-none.json" >"$TMP/pp/plan/etc-ok.json"
# (check.sh spells out the column list; here it is the binary's schema.)
NODECOLS=$("$DLPLAN" --complete schemas | awk -F '\t' '$1 == "nodes.csv" {
    printf "%s%s", n++ ? ", " : "", $2 }')
expect_err "/etc/passwd with its digest is read like any input" 2 \
    "dlplan: /etc/passwd:1:1: unknown column '$(head -1 /etc/passwd | cut -d, -f1)' in nodes.csv header (expected $NODECOLS; prefix extra columns with x_)" \
    -- "$DLPLAN" eval "$TMP/pp/plan/etc-ok.json"
OUTSIDE="leads outside the plan's directory ('..', an absolute path or a symbolic link; give the file on the command line, or --trust-paths to allow it)"
expect_err "--ignore-digests: /etc/passwd is refused" 2 \
    "dlplan: /etc/passwd: $OUTSIDE" \
    -- "$DLPLAN" eval --ignore-digests "$TMP/pp/plan/etc.json"
expect_err "--ignore-digests: a path above the plan's directory is refused" 2 \
    "dlplan: $TMP/pp/plan/../in/nodes.csv: $OUTSIDE" \
    -- "$DLPLAN" eval --ignore-digests "$TMP/pp/plan/plan.json"
mkdir -p "$TMP/pp/ln"
sed 's|"path": "|"path": "link/|' "$TMP/pp/in/plan.json" \
    >"$TMP/pp/ln/plan.json"
ln -s ../in "$TMP/pp/ln/link"
check "a symbolic link out of the plan's directory, digests right: read" \
    "$DLPLAN" eval "$TMP/pp/ln/plan.json"
expect_err "--ignore-digests: a symbolic link out of the plan's directory is refused" 2 \
    "dlplan: $TMP/pp/ln/link/nodes.csv: $OUTSIDE" \
    -- "$DLPLAN" eval --ignore-digests "$TMP/pp/ln/plan.json"
check "--ignore-digests: inside the plan's tree, read" \
    "$DLPLAN" eval --ignore-digests "$TMP/pp/in/plan.json"
check "-c and -m replace the plan's paths" "$DLPLAN" eval \
    "$TMP/pp/plan/etc.json" -c "$TMP/pp/in" -m "$TMP/pp/in/m4.csv"
check "--ignore-digests --trust-paths allows them" "$DLPLAN" eval \
    "$TMP/pp/plan/plan.json" --ignore-digests --trust-paths

# --- columns by header name -------------------------------------------
# Every CSV input is read by its header names (dlplan-formats(5), CSV
# input rules): the same file with its columns in reverse order and an
# x_ column among them gives the same output, byte for byte, once the
# directory names and the solve time are left out.
# revcols IN OUT: IN with its columns reversed and "x_note" in the middle;
# comment and blank lines stay as they are.
revcols() {
	/usr/bin/python3 - "$1" "$2" <<'EOF'
import csv, io, sys
head, out = True, io.StringIO()
w = csv.writer(out, lineterminator="\n")
for line in open(sys.argv[1], newline="").read().splitlines():
    if line.strip() == "" or line.lstrip().startswith("#"):
        out.write(line + "\n")
        continue
    row = next(csv.reader([line]))[::-1]
    row.insert(len(row) // 2, "x_note" if head else "n")
    head = False
    w.writerow(row)
open(sys.argv[2], "w").write(out.getvalue())
EOF
}
# samecols NAME ARGS_ORIG... -- ARGS_REORDERED...: run dlplan with both,
# compare stdout and stderr with $RC and $TMP in them as DIR.
samecols() {
	_n=$1
	shift
	_a=""
	while [ "$1" != -- ]; do _a="$_a '$1'"; shift; done
	shift
	eval "dlplan $_a" >"$TMP/sc.a" 2>&1
	_ra=$?
	dlplan "$@" >"$TMP/sc.b" 2>&1
	_rb=$?
	for f in a b; do
		sed -e "s|$TMP/rcol/|DIR/|g; s|$TMP/rc|DIR|g" \
		    -e "s|datasets/clusters/two-dc|DIR|g" \
		    -e "s|$R/|DIR/|g; s|$SCH/|DIR/|g" \
		    -e "s|tests/cli/data/|DIR/|g" \
		    -e '/^search /d' "$TMP/sc.$f" >"$TMP/sc.$f.n"
	done
	if [ "$_ra" -eq 0 ] && [ "$_rb" -eq 0 ] &&
	    cmp -s "$TMP/sc.a.n" "$TMP/sc.b.n"; then
		t_ok "$_n"
	else
		t_notok "$_n" "exit $_ra and $_rb" \
		    "$(diff "$TMP/sc.a.n" "$TMP/sc.b.n" | head -5)"
	fi
}
R=tests/cli/data/replan
SCH=tests/cli/data/schedule
mkdir -p "$TMP/rc" "$TMP/rcol"
for f in nodes links load traffic; do
	revcols datasets/clusters/two-dc/$f.csv "$TMP/rc/$f.csv"
done
revcols datasets/models/gpt2-xl.csv "$TMP/rcol/gpt2-xl.csv"
revcols tests/cli/data/route-two-dc.csv "$TMP/rcol/flows.csv"
revcols $R/noisy-dp3.csv "$TMP/rcol/noisy-dp3.csv"
revcols $SCH/light.csv "$TMP/rcol/light.csv"
revcols tests/cli/data/predict-load.csv "$TMP/rcol/predict-load.csv"
revcols tests/cli/data/predict-traffic.csv "$TMP/rcol/predict-traffic.csv"
check "revcols reverses the header" grep -qx \
    'cost_per_hour,nic_gbps,intra_gbps,mem_gb,x_note,tflops,gpu_model,gpus,site,node' \
    "$TMP/rc/nodes.csv"
samecols "columns in another order: nodes, links, load, traffic, model" \
    plan -c datasets/clusters/two-dc -m datasets/models/gpt2-xl.csv \
    --global-batch 64 -- \
    plan -c "$TMP/rc" -m "$TMP/rcol/gpt2-xl.csv" --global-batch 64
samecols "columns in another order: check of every file" \
    check -c datasets/clusters/two-dc -m datasets/models/gpt2-xl.csv \
    --format json -- \
    check -c "$TMP/rc" -m "$TMP/rcol/gpt2-xl.csv" --format json
samecols "columns in another order: flows" \
    route -c datasets/clusters/two-dc --flows tests/cli/data/route-two-dc.csv \
    --format csv -- \
    route -c "$TMP/rc" --flows "$TMP/rcol/flows.csv" --format csv
samecols "columns in another order: steps" \
    replan $R/dp3.json --observed $R/noisy-dp3.csv --repartition -- \
    replan $R/dp3.json --observed "$TMP/rcol/noisy-dp3.csv" --repartition
samecols "columns in another order: jobs" \
    schedule -c datasets/clusters/philly-64 --jobs $SCH/light.csv \
    --format csv -- \
    schedule -c datasets/clusters/philly-64 --jobs "$TMP/rcol/light.csv" \
    --format csv
samecols "columns in another order: a load history" \
    predict -H tests/cli/data/predict-load.csv -- \
    predict -H "$TMP/rcol/predict-load.csv"
samecols "columns in another order: a traffic history" \
    predict -H tests/cli/data/predict-traffic.csv -- \
    predict -H "$TMP/rcol/predict-traffic.csv"

# --- a plan's input of another size is not read --------------------------
# A plan records each input's size besides its digest: a model.csv
# swapped for a 200 MB sparse file is refused from its size, at once,
# naming both sizes.  Under a memory limit a 64 MB text file swapped in
# is refused with the digest's status (2), not out of memory (4): by its
# size, or, for a plan that records no size (older versions), by its
# digest, which is read in pieces and never held whole.
mkdir -p "$TMP/sz"
cp "$M4" "$TMP/sz/m.csv"
dlplan plan $ONE -m "$TMP/sz/m.csv" -o "$TMP/sz/p" >/dev/null 2>&1
check "plan.json records each input's size" grep -q \
    "\"size\": $(wc -c <"$M4")\$" "$TMP/sz/p/plan.json"
sed '/"path": "..\/m.csv"/{n;s/",$/"/;n;d;}' "$TMP/sz/p/plan.json" \
    >"$TMP/sz/p/old.json"
SZMSG="bytes the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)"
truncate -s 200M "$TMP/sz/m.csv"
expect_err "a 200 MB sparse model.csv: refused by its size" 2 \
    "dlplan: $TMP/sz/p/../m.csv: is 209715200 bytes, not the $(wc -c <"$M4") $SZMSG" \
    -- timeout 10 "$DLPLAN" eval "$TMP/sz/p/plan.json"
if [ -n "${DLPLAN_WRAP:-}" ]; then
	skip "under ulimit -v: refused with status 2" "not under $DLPLAN_WRAP"
elif ldd "$DLPLAN" 2>/dev/null | grep -q libasan; then
	# AddressSanitizer reserves terabytes of shadow memory at start.
	skip "under ulimit -v: refused with status 2" "not with AddressSanitizer"
else
	# limited CMD...: CMD with 50 MB of address space.
	limited() {
		sh -c 'ulimit -v 50000 && exec "$@"' sh "$@"
	}
	cp "$M4" "$TMP/sz/m.csv"
	check "under ulimit -v 50000 the plan's own inputs are read" \
	    limited "$DLPLAN" eval "$TMP/sz/p/plan.json"
	check "... and so they are without sizes (an older plan)" \
	    limited "$DLPLAN" eval "$TMP/sz/p/old.json"
	yes 'l9,1,10,1,2,5' | head -c 67108864 >"$TMP/sz/m.csv"
	expect_err "under ulimit -v: a 64 MB model.csv refused by its size" 2 \
	    "dlplan: $TMP/sz/p/../m.csv: is 67108864 bytes, not the $(wc -c <"$M4") $SZMSG" \
	    -- limited "$DLPLAN" eval "$TMP/sz/p/plan.json"
	expect_err "... and without a size, by its digest read in pieces" 2 \
	    "dlplan: $TMP/sz/p/../m.csv: does not match the digest the plan records for it, so it is not read (it changed since the plan was made; give it on the command line, or --ignore-digests)" \
	    -- limited "$DLPLAN" eval "$TMP/sz/p/old.json"
fi
rm -f "$TMP/sz/m.csv"
