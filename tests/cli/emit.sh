# dlplan emit: the launch files of every launcher for hand-written plans
# (golden files, $TMP shown as @TMP@), the emitted scripts run against
# stub srun, torchrun and python, every error path with its exit status,
# and hostile values that must arrive as data and never run.
#
# The plans are tests/cli/data/e2e-plan.json (4 nodes x 2 ranks, nodes in
# the order n3 n1 n4 n2: torchrun form) and e2e-plan-uneven.json (n2 runs
# ranks 0-1, n1 ranks 2 and 4-5, n3 rank 3, using 4, 2 and 1 GPUs: a
# heterogeneous job of one task per node), and e2e-plan-mixed*.json on
# e2e-cluster-mixed (n1, n2 of four GPUs and n4 of eight).

mkdir -p "$TMP/run"
cp -R "$DATA/e2e-cluster" "$DATA/e2e-model.csv" "$DATA/e2e-plan.json" \
    "$DATA/e2e-plan-uneven.json" "$DATA/e2e-cluster-mixed" \
    "$DATA/e2e-plan-mixed.json" "$DATA/e2e-plan-mixed-even.json" \
    "$TMP/run/"

# show DIR: every file of DIR/launch behind a header with its mode.
show() {
	for sh_f in "$1"/launch/*; do
		if [ -x "$sh_f" ]; then sh_m=executable; else sh_m=plain; fi
		printf '==> %s (%s) <==\n' "${sh_f##*/}" "$sh_m"
		sed "s|$TMP|@TMP@|g" "$sh_f"
	done
}

# emit_show OUTDIR ARGS...: run "dlplan emit -o OUTDIR ARGS" in $TMP/run,
# then print its standard output and the files it wrote; its standard
# error passes through.
emit_show() {
	es_out=$1
	shift
	rm -rf "$es_out"
	(cd "$TMP/run" && dlplan emit -o "$es_out" "$@") >"$TMP/emit.out" ||
	    return $?
	sed "s|$TMP|@TMP@|g" "$TMP/emit.out"
	show "$es_out"
}

P=e2e-plan.json
U=e2e-plan-uneven.json
W=/opt/train/worker.py

# --- golden launch files ----------------------------------------------
expect_run "slurm: torchrun per node" 0 emit-slurm.txt emit-empty.err -- \
    emit_show "$TMP/o1" "$P" --launcher slurm --partition gpu,debug \
    --time 1-12:00:00 --job-name llm-run.1 --master-port 29600 \
    --script "$W" -- --epochs 3
expect_run "slurm: uneven plan, one task per rank" 0 emit-slurm-uneven.txt \
    emit-note-slurm.err -- emit_show "$TMP/o2" "$U" --launcher slurm \
    --script "$W"
# Account, QOS, log paths and pass-through options, quoted where they
# may hold more than a name.  Plans on nodes of 8 and 4 GPUs
# (e2e-plan-mixed*.json) make a heterogeneous job, every component with
# these lines.
expect_run "slurm: account, qos, logs, --sbatch-arg" 0 emit-slurm-opts.txt \
    emit-empty.err -- emit_show "$TMP/o11" "$P" --launcher slurm \
    --account proj-1.a --qos high_prio --output "logs/%x-%j it's.out" \
    --error '/var/log/run #1.err' --sbatch-arg --mail-type=END \
    --sbatch-arg "--comment=a 'b' \$(c)" -- x
expect_run "slurm: nodes of 8 and 4 GPUs, heterogeneous job" 0 \
    emit-slurm-mixed.txt emit-note-slurm.err -- emit_show "$TMP/o12" \
    e2e-plan-mixed.json --launcher slurm --qos q --sbatch-arg=--x=1 -- x
expect_run "slurm: mixed GPU counts, torchrun form" 0 \
    emit-slurm-mixed-even.txt emit-empty.err -- emit_show "$TMP/o13" \
    e2e-plan-mixed-even.json --launcher slurm -- x
expect_run "srun: one task per rank" 0 emit-srun.txt emit-empty.err -- \
    emit_show "$TMP/o3" "$P" --launcher srun --time 30 -- python3 -u \
    train.py
expect_run "torchrun: a script per node" 0 emit-torchrun.txt \
    emit-empty.err -- emit_show "$TMP/o4" "$P" --launcher torchrun \
    --script "$W"
expect_run "torchrun: uneven plan starts ranks itself" 0 \
    emit-torchrun-uneven.txt emit-note-torchrun.err -- \
    emit_show "$TMP/o5" "$U" --launcher torchrun --script "$W"
expect_run "hostfile" 0 emit-hostfile.txt emit-empty.err -- \
    emit_show "$TMP/o6" "$P" --launcher hostfile -- ./train.sh
expect_run "-q drops the note" 0 - emit-empty.err -- \
    dlplan emit "$TMP/run/$U" --launcher torchrun -o "$TMP/o7" -q -- x
expect_run "-q and -v between the plan and --" 0 - - -- \
    dlplan emit -o "$TMP/o7" --launcher torchrun "$TMP/run/$U" -qv -v -- x

# Without -o the files go beside the plan; the paths printed are the
# plan's directory and launch/.
expect_run "default directory" 0 emit-default-dir.txt emit-empty.err -- \
    sh -c "cd '$TMP/run' && \"\$DLPLAN\" emit $P --launcher hostfile -- x"
check "default directory: files beside the plan" \
    test -x "$TMP/run/launch/worker.sh" -a -f "$TMP/run/launch/hostfile"

# Every script is valid sh.
for _f in "$TMP"/o*/launch/*.sh "$TMP"/o*/launch/plan.sbatch; do
	check "sh -n ${_f#"$TMP"/}" sh -n "$_f"
done

# --- the scripts run (stub srun, torchrun and python) ------------------
#
# The stubs do what the real programs would, one process at a time:
# srun runs the step's command once per node of the job in Slurm's order
# (n1 n2 n3 n4, not the plan's), or once per line of SLURM_HOSTFILE with
# --distribution=arbitrary, setting SLURMD_NODENAME and SLURM_PROCID
# (a heterogeneous job's step, --het-group, runs on the nodes in
# RR_NODES when run_ranks is given them);
# torchrun runs the command after --no_python once per local rank with
# RANK, LOCAL_RANK and WORLD_SIZE; "python" and "python3" write the rank's
# environment and arguments to $STUB_OUT/rank-N.  worker.sh refuses a rank on the
# wrong node, so a wrong node rank fails the run.
mkdir -p "$TMP/stub"
cat >"$TMP/stub/srun" <<'EOF'
#!/bin/sh
arbitrary=0
while [ $# -gt 0 ]; do
	case $1 in
	--distribution=arbitrary) arbitrary=1 ;;
	--*) ;;
	*) break ;;
	esac
	shift
done
if [ "$arbitrary" = 1 ]; then
	r=0
	while read -r host; do
		SLURM_PROCID=$r SLURMD_NODENAME=$host "$@" </dev/null || exit
		r=$((r + 1))
	done <"$SLURM_HOSTFILE"
else
	r=0
	for host in $STUB_NODES; do
		SLURM_PROCID=$r SLURMD_NODENAME=$host "$@" </dev/null || exit
		r=$((r + 1))
	done
fi
EOF
cat >"$TMP/stub/torchrun" <<'EOF'
#!/bin/sh
printf '%s\n' "$*" >>"$STUB_OUT/torchrun.log"
while [ $# -gt 0 ]; do
	case $1 in
	--nnodes=*) nnodes=${1#*=} ;;
	--node_rank=*) node_rank=${1#*=} ;;
	--nproc_per_node=*) nproc=${1#*=} ;;
	--no_python) shift; break ;;
	esac
	shift
done
i=0
while [ "$i" -lt "$nproc" ]; do
	RANK=$((node_rank * nproc + i)) LOCAL_RANK=$i \
	    WORLD_SIZE=$((nnodes * nproc)) "$@" || exit
	i=$((i + 1))
done
EOF
cat >"$TMP/stub/python" <<'EOF'
#!/bin/sh
{
	echo "rank=$DLPLAN_RANK RANK=$RANK node=$DLPLAN_NODE" \
	    "slurmd=${SLURMD_NODENAME-} gpu=$DLPLAN_GPU group=$DLPLAN_GROUP" \
	    "stage=$DLPLAN_STAGE layers=$DLPLAN_LAYERS" \
	    "mb=$DLPLAN_MICROBATCHES tp=$DLPLAN_TP_RANK/$DLPLAN_TP_SIZE" \
	    "share=$DLPLAN_TP_SHARE world=$WORLD_SIZE local=$LOCAL_RANK" \
	    "master=${MASTER_ADDR-}:${MASTER_PORT-}"
	printf '<%s>\n' "$@"
} >"$STUB_OUT/rank-$DLPLAN_RANK"
EOF
cp "$TMP/stub/python" "$TMP/stub/python3"
chmod +x "$TMP/stub/srun" "$TMP/stub/torchrun" "$TMP/stub/python" \
    "$TMP/stub/python3"

# run_ranks NAME OUTDIR CMD...: run CMD with the stubs first in PATH, then
# print every rank's report.  (Helpers here use their own variable names:
# lib.sh's functions keep theirs in _n, _rc and the like.)
run_ranks() {
	rr_dir=$2
	shift 2
	rm -rf "$rr_dir"
	mkdir -p "$rr_dir"
	PATH="$TMP/stub:$PATH" STUB_OUT=$rr_dir \
	    STUB_NODES="${RR_NODES:-n1 n2 n3 n4}" \
	    DLPLAN_PYTHON="$TMP/stub/python" "$@" >"$rr_dir.out" 2>&1 || {
		echo "exit status $?"
		cat "$rr_dir.out"
	}
	for rr_f in "$rr_dir"/rank-*; do
		sed "s|$TMP|@TMP@|g" "$rr_f"
	done
}

expect_run "run slurm torchrun form" 0 emit-run-slurm.txt - -- \
    run_ranks slurm "$TMP/r1" sh "$TMP/o1/launch/plan.sbatch"
run_ranks slurm "$TMP/r1b" env DLPLAN_TORCHRUN="torchrun --redirects 1" \
    sh "$TMP/o1/launch/plan.sbatch" >/dev/null
check "DLPLAN_TORCHRUN splits into words" grep -q \
    '^--redirects 1 --node_rank=0 --nnodes=4 --nproc_per_node=2 ' \
    "$TMP/r1b/torchrun.log"
RR_NODES="n1 n2 n3"
expect_run "run slurm per-node form (heterogeneous job)" 0 \
    emit-run-slurm-uneven.txt - -- \
    run_ranks slurm "$TMP/r2" sh "$TMP/o2/launch/plan.sbatch"
RR_NODES=
expect_run "run srun" 0 emit-run-srun.txt - -- \
    run_ranks srun "$TMP/r3" sh "$TMP/o3/launch/plan.sbatch"

# torchrun scripts: every node's script, as a cluster would run them.
run_nodes() {
	for rn_s in "$1"/launch/torchrun-*.sh; do
		sh "$rn_s" || return
	done
}
expect_run "run torchrun scripts" 0 emit-run-torchrun.txt - -- \
    run_ranks torchrun "$TMP/r4" run_nodes "$TMP/o4"
expect_run "run torchrun scripts, uneven" 0 emit-run-torchrun-uneven.txt \
    - -- run_ranks torchrun "$TMP/r5" run_nodes "$TMP/o5"

# worker.sh refuses what does not match the plan.
_w=$TMP/o1/launch/worker.sh
expect_err "worker: wrong node" 2 \
    "worker.sh: rank 0 is planned for 'n3' but runs on 'n1'" -- \
    env SLURMD_NODENAME=n1 SLURM_PROCID=0 "$_w" srun
expect_err "worker: rank out of range" 2 \
    "worker.sh: rank '8' is not in the plan (world size 8)" -- \
    env RANK=8 "$_w"
expect_err "worker: no rank" 2 \
    "worker.sh: rank '' is not in the plan (world size 8)" -- \
    env -u RANK "$_w"
expect_err "worker: launcher's world size differs" 2 \
    "worker.sh: rank 1 was started with WORLD_SIZE '4' and LOCAL_RANK '1'; the plan has 8 and 1" -- \
    env RANK=1 LOCAL_RANK=1 WORLD_SIZE=4 "$_w"
expect_err "worker: unknown mode" 2 \
    "worker.sh: unknown mode 'pbs' (expected srun or mpi)" -- "$_w" pbs

# --- hostile values ----------------------------------------------------
#
# Arguments, a script path and a plan directory full of shell syntax:
# every one must reach the training command unchanged, and none may run.
# Each would create $TMP/pwned if a shell ever evaluated it.
H=$TMP/hostile
mkdir -p "$H"
_q="'"
_bad="x; touch $TMP/pwned"
_sub="\$(touch $TMP/pwned)"
_bq="\`touch $TMP/pwned\`"
_nl="a
touch $TMP/pwned"
_dir="$H/d ${_q}x${_q} \$(touch $TMP/pwned) \`touch $TMP/pwned\`; y"
mkdir -p "$_dir"
cp -R "$DATA/e2e-cluster" "$DATA/e2e-model.csv" "$DATA/e2e-plan.json" \
    "$_dir/"
_script="$H/my script's \$(touch $TMP/pwned).py"
# hostile_args: the arguments, one per line, as the stub writes them.
hostile_args() {
	printf '<%s>\n' "$_script" "$_bad" "$_sub" "$_bq" "$_nl" "it's" \
	    '"q"' '*' '$HOME' '\' '' "--x=\$(id)|&<>"
}

dlplan emit "$_dir/e2e-plan.json" --launcher slurm --script "$_script" \
    -- "$_bad" "$_sub" "$_bq" "$_nl" "it's" '"q"' '*' '$HOME' '\' '' \
    "--x=\$(id)|&<>" >"$TMP/h.out" 2>"$TMP/h.err"
check "hostile: emit succeeds" test -x "$_dir/launch/plan.sbatch"
check "hostile: scripts are valid sh" sh -n "$_dir/launch/worker.sh"
run_ranks hostile "$TMP/rh" sh "$_dir/launch/plan.sbatch" >"$TMP/rh.txt"
hostile_args >"$TMP/want-args"
_ok=1
for _r in 0 1 2 3 4 5 6 7; do
	if [ ! -f "$TMP/rh/rank-$_r" ] ||
	    ! tail -n +2 "$TMP/rh/rank-$_r" | cmp -s - "$TMP/want-args"; then
		_ok=0
	fi
done
if [ "$_ok" = 1 ]; then
	t_ok "hostile: every rank got the arguments unchanged"
else
	t_notok "hostile: every rank got the arguments unchanged" \
	    "$(head -20 "$TMP/rh.txt")"
fi
check "hostile: DLPLAN_PLAN is the hostile path" \
    grep -qF "plan='$H/d '\\''x'\\''" "$_dir/launch/worker.sh"
check "hostile: nothing ran" test ! -e "$TMP/pwned"

# The same through the torchrun scripts.
dlplan emit "$_dir/e2e-plan.json" --launcher torchrun -o "$H/t" \
    --script "$_script" -- "$_bad" "$_sub" "$_bq" "$_nl" "it's" '"q"' \
    '*' '$HOME' '\' '' "--x=\$(id)|&<>" >/dev/null 2>&1
run_ranks hostile "$TMP/rt" run_nodes "$H/t" >"$TMP/rt.txt"
check "hostile torchrun: rank 7 got the arguments unchanged" sh -c \
    "tail -n +2 '$TMP/rt/rank-7' | cmp -s - '$TMP/want-args'"
check "hostile torchrun: nothing ran" test ! -e "$TMP/pwned"

# Options that end up in #SBATCH lines are refused, nothing is written.
# refused OPTION VALUE...: each value must give exit 1 and a message on it.
refused() {
	rf_opt=$1
	shift
	for rf_v in "$@"; do
		rm -rf "$TMP/hp"
		dlplan emit "$TMP/run/$P" --launcher slurm -o "$TMP/hp" \
		    "$rf_opt" "$rf_v" -- x >/dev/null 2>"$TMP/err"
		rf_rc=$?
		rf_name="hostile $rf_opt refused: $(echo "$rf_v" | head -1)"
		if [ "$rf_rc" -eq 1 ] && [ ! -e "$TMP/hp" ] &&
		    grep -q "^dlplan: option '$rf_opt': " "$TMP/err"; then
			t_ok "$rf_name"
		else
			t_notok "$rf_name" "exit $rf_rc" "$(cat "$TMP/err")"
		fi
	done
}
refused --partition "gpu;touch $TMP/pwned" "gpu
#SBATCH --uid=0" 'gpu $(id)' 'gpu`id`' "gpu'" 'a b' ''
refused --time "1:00;reboot" "1:00
#SBATCH --uid=0" '$(id)' '1 00' '1-' ''
refused --job-name "x;touch $TMP/pwned" 'a
b' '$(id)'
refused --account "x;touch $TMP/pwned" 'a
b' '$(id)' '' 'a b'
refused --qos "x;touch $TMP/pwned" 'a
b' '$(id)' ''
refused --output "a
#SBATCH --uid=0" 'a\b' ''
refused --error "a
b" 'a\b' ''
refused --sbatch-arg "--x
#SBATCH --uid=0" '-x' '--' 'x=1' '--x=a\b' ''
check "hostile options: nothing ran" test ! -e "$TMP/pwned"

# A hand-made cluster with a hostile host never gets as far as a script.
mkdir -p "$TMP/hc/e2e-cluster"
cp "$TMP/run/e2e-model.csv" "$TMP/run/e2e-plan.json" "$TMP/hc/"
printf 'node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,host\n%s\n%s\n%s\n%s\n' \
    'n1,lab,4,A,312,80,2400,200,"n1;touch pwned"' 'n2,lab,4,A,312,80,2400,200,' \
    'n3,lab,4,A,312,80,2400,200,' 'n4,lab,4,A,312,80,2400,200,' \
    >"$TMP/hc/e2e-cluster/nodes.csv"
dlplan emit "$TMP/hc/e2e-plan.json" --ignore-digests --launcher slurm -- x \
    >/dev/null 2>"$TMP/err"
_rc=$?
if [ "$_rc" -eq 2 ] && [ ! -e "$TMP/hc/launch" ] &&
    grep -q 'not a valid hostname' "$TMP/err"; then
	t_ok "hostile host in the cluster: exit 2, nothing written"
else
	t_notok "hostile host in the cluster: exit 2, nothing written" \
	    "exit $_rc" "$(cat "$TMP/err")"
fi

# --- usage errors (exit 1) ---------------------------------------------
_u="usage: dlplan emit PLAN.json"
expect_err "no plan" 1 "dlplan: no plan given (expected PLAN.json)" -- \
    dlplan emit --launcher slurm -- x
expect_err "no launcher" 1 \
    "dlplan: no launcher given (expected --launcher slurm|torchrun|srun|hostfile|megatron|deepspeed|torchtitan)" \
    -- dlplan emit "$TMP/run/$P" -- x
expect_err "unknown launcher" 1 \
    "dlplan: option '--launcher': 'pbs' is not one of slurm|torchrun|srun|hostfile|megatron|deepspeed|torchtitan" \
    -- dlplan emit "$TMP/run/$P" --launcher pbs -- x
expect_err "no command" 1 \
    "dlplan: no training command given (expected --script FILE or -- COMMAND [ARGS...])" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm
expect_err "two operands" 1 \
    "dlplan: unexpected argument 'train.py' (put the training command after '--')" \
    -- dlplan emit "$TMP/run/$P" train.py --launcher slurm
expect_err "operands before --" 1 \
    "dlplan: unexpected argument 'x' (put the training command after '--')" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm x -- y
expect_err "port 0" 1 \
    "dlplan: option '--master-port': '0' is out of range [1, 65535]" -- \
    dlplan emit "$TMP/run/$P" --launcher slurm --master-port 0 -- x
expect_err "port not a number" 1 \
    "dlplan: option '--master-port': '80;x' is not an integer" -- \
    dlplan emit "$TMP/run/$P" --launcher slurm --master-port '80;x' -- x
expect_err "job name" 1 \
    "dlplan: option '--job-name': 'a b' is not a job name (expected 1 to 63 letters, digits, '.', '_', '-')" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --job-name 'a b' -- x
expect_err "partition" 1 \
    "dlplan: option '--partition': 'a;b' is not a partition name (expected letters, digits, '.', '_', '-', names separated by ',')" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --partition 'a;b' -- x
expect_err "time" 1 \
    "dlplan: option '--time': '1:2:3:4' is not a Slurm time limit (expected MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED)" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --time 1:2:3:4 -- x
expect_err "account" 1 \
    "dlplan: option '--account': 'a/b' is not an account name (expected 1 to 63 letters, digits, '.', '_', '-')" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --account a/b -- x
expect_err "qos" 1 \
    "dlplan: option '--qos': 'a,b' is not a QOS name (expected 1 to 63 letters, digits, '.', '_', '-')" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --qos a,b -- x
expect_err "output" 1 \
    "dlplan: option '--output': '' is not a log path (expected a non-empty path without newline or backslash)" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --output '' -- x
expect_err "error" 1 \
    "dlplan: option '--error': 'a\\b' is not a log path (expected a non-empty path without newline or backslash)" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --error 'a\b' -- x
expect_err "sbatch-arg" 1 \
    "dlplan: option '--sbatch-arg': '-N2' is not an sbatch option (expected '--NAME' or '--NAME=VALUE' without newline or backslash)" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --sbatch-arg -N2 -- x
_many=
for _i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 \
    25 26 27 28 29 30 31 32 33; do
	_many="$_many --sbatch-arg --x$_i"
done
# shellcheck disable=SC2086
expect_err "sbatch-arg: at most 32" 1 \
    "dlplan: option '--sbatch-arg': '--x33' is one too many (at most 32)" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm $_many -- x
expect_err "plan: account" 1 \
    "dlplan: option '--account': 'a b' is not an account name (expected 1 to 63 letters, digits, '.', '_', '-')" \
    -- dlplan plan -c "$TMP/run/e2e-cluster" -m "$TMP/run/e2e-model.csv" \
    --global-batch 8 -o "$TMP/o14" --launcher slurm --account 'a b' -- x
expect_err "plan: sbatch-arg" 1 \
    "dlplan: option '--sbatch-arg': 'x' is not an sbatch option (expected '--NAME' or '--NAME=VALUE' without newline or backslash)" \
    -- dlplan plan -c "$TMP/run/e2e-cluster" -m "$TMP/run/e2e-model.csv" \
    --global-batch 8 -o "$TMP/o14" --launcher slurm --sbatch-arg x -- x
expect_err "empty script" 1 "dlplan: option '--script': empty file name" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm --script ''
check "usage errors print the usage line" grep -q "^$_u" "$TMP/err"
expect_run "help" 0 emit-help.txt emit-empty.err -- dlplan emit -h

# --- data errors (exit 2) and infeasible launches (exit 3) --------------
expect_err "missing plan" 2 \
    "dlplan: $TMP/none.json: cannot open file: No such file or directory" \
    -- dlplan emit "$TMP/none.json" --launcher slurm -- x
printf '{"schema": "dlplan.plan/1", "options": {"global_batch": 2, "micro_batch": 1}, "groups": []}\n' \
    >"$TMP/noinputs.json"
expect_err "plan without inputs" 2 \
    "dlplan: $TMP/noinputs.json: plan names no nodes.csv (give the cluster with -c DIR)" \
    -- dlplan emit "$TMP/noinputs.json" --launcher slurm -- x
sed 's/"n4"/"n9"/' "$TMP/run/$P" >"$TMP/run/unknown.json"
expect_err "plan on an unknown node" 2 \
    "dlplan: $TMP/run/unknown.json: groups[1].stages[0].node: unknown node 'n9' (not in nodes.csv)" \
    -- dlplan emit "$TMP/run/unknown.json" --launcher slurm -o "$TMP/o10" \
    -- x
check "data errors write nothing" test ! -e "$TMP/o10" -a ! -e "$TMP/launch"
rm -rf "$TMP/o8"
expect_err "hostfile cannot place interleaved ranks" 3 \
    "dlplan: a hostfile cannot place the plan's ranks: node 'n1' runs ranks 2 4-5, which are not consecutive (use --launcher slurm, srun or torchrun)" \
    -- dlplan emit "$TMP/run/$U" --launcher hostfile -o "$TMP/o8" -- x
expect_empty_dir "infeasible launch writes nothing" "$TMP/o8"

# --- output errors (exit 4): nothing written, nothing replaced ----------
: >"$TMP/afile"
expect_err "output directory is a file" 4 \
    "dlplan: $TMP/afile: not a directory" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm -o "$TMP/afile" -- x
mkdir -p "$TMP/o9/launch/plan.sbatch"
expect_err "a directory in the way" 4 \
    "dlplan: $TMP/o9/launch/plan.sbatch: cannot write file: Is a directory" \
    -- dlplan emit "$TMP/run/$P" --launcher slurm -o "$TMP/o9" -- x
check "a directory in the way: no partial files" \
    test ! -e "$TMP/o9/launch/worker.sh"
check "a directory in the way: no temporary files" \
    sh -c "[ \$(ls -A '$TMP/o9/launch' | wc -l) -eq 1 ]"
if [ "$(id -u)" -ne 0 ]; then
	mkdir -p "$TMP/ro/launch"
	cp "$TMP/o1/launch/worker.sh" "$TMP/ro/launch/worker.sh"
	chmod 555 "$TMP/ro/launch"
	expect_err "output directory not writable" 4 \
	    "dlplan: $TMP/ro/launch/worker.sh: cannot create file: Permission denied" \
	    -- dlplan emit "$TMP/run/$P" --launcher slurm -o "$TMP/ro" -- x
	check "not writable: old file kept, nothing added" sh -c \
	    "cmp -s '$TMP/o1/launch/worker.sh' '$TMP/ro/launch/worker.sh' &&
	    [ \$(ls -A '$TMP/ro/launch' | wc -l) -eq 1 ]"
	chmod 755 "$TMP/ro/launch"
else
	skip "output directory not writable" "root may write anywhere"
	skip "not writable: old file kept, nothing added" "root"
fi

# --- a plan from the planner ---------------------------------------------
# The ranks the scripts start are plan.csv's rows, in order.
(cd "$TMP/run" && dlplan plan -c e2e-cluster -m e2e-model.csv \
    --global-batch 16 -o planned) >/dev/null 2>"$TMP/plan.err"
check "planner: plan for the e2e cluster" test -f "$TMP/run/planned/plan.csv"
dlplan emit "$TMP/run/planned/plan.json" --launcher slurm -- python3 \
    >/dev/null 2>&1
run_ranks planned "$TMP/rp" sh "$TMP/run/planned/launch/plan.sbatch" \
    >"$TMP/rp.txt"
tail -n +2 "$TMP/run/planned/plan.csv" | cut -d, -f1-9 >"$TMP/want.csv"
for _f in "$TMP"/rp/rank-*; do
	head -n 1 "$_f"
done | sed -n 's/^rank=\([0-9]*\) RANK=[0-9]* node=\([^ ]*\) slurmd=[^ ]* gpu=\([0-9]*\) group=\([0-9]*\) stage=\([0-9]*\) layers=\([0-9]*\):\([0-9]*\) mb=\([0-9]*\) tp=[^ ]* share=\([^ ]*\) .*/\1,\2,\3,\4,\5,\6,\7,\8,\9/p' |
    sort -t, -k1,1n >"$TMP/got.csv"
if [ -s "$TMP/want.csv" ] && cmp -s "$TMP/want.csv" "$TMP/got.csv"; then
	t_ok "planner: every rank of plan.csv runs as planned"
else
	t_notok "planner: every rank of plan.csv runs as planned" \
	    "$(diff "$TMP/want.csv" "$TMP/got.csv" | head -10)" \
	    "$(head -5 "$TMP/rp.txt")"
fi
