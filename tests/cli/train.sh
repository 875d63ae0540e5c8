# plans/dlplan_train.py, the reference executor: started by torchrun
# (single node, gloo on CPU, float64, 3 steps of AdamW), the parameters
# after each plan of tests/cli/data/train equal those of --reference
# within 1e-9 relative:
#   a-dp      pure data parallel, micro-batches 3/2/1
#   b-pp      two groups of 2 and 3 stages with different boundaries
#             (segments 0-2, 3, 4-5, 6-7: finer than either group's stages)
#   c-tp      a TP 2 stage next to a group whose holder of the same layers
#             has TP 1
#   d-uneven  TP shares 0.75/0.25 next to a pipeline of two TP 1 stages
#   b-savers, c-savers  b-pp and c-tp with the memory savers: the first
#             two blocks of every stage recomputed (torch.utils.checkpoint)
#             and the optimizer state sharded over each bucket's holders
# A broken executor (tests/cli/train_break.py patches it: no global loss
# scaling, the last segment left out of the sync, sharded updates kept on
# their owner, a recomputation from a perturbed input) fails the same check;
# d-uneven with sync buckets of 256 bytes (many per segment) passes it.
# With options.overlap "dp" (the sync bucket by bucket under each stage's
# last backward): a-dp with the executor's buckets, b-pp and d-uneven with
# buckets of 64 elements (many all-reduces under the backward) equal the
# reference, and a broken overlap that starts a bucket under the first
# backward that touches it (earlyovl) fails.  With CUDA and three
# GPUs, plan a-dp runs with NCCL too.  Errors exit 2 with one line.
#
# Needs /usr/bin/python3 with torch (tests/deps.sh installs python3-torch).
# Skipped under DLPLAN_WRAP=valgrind: it runs Python, not dlplan.
# tests/run: serial
# (a torch rank per process with c10d rendezvous ports; not beside
# e2e_slurm or calibrate.)

TR_PY=/usr/bin/python3
TRAIN=$SRCDIR/plans/dlplan_train.py
TD=$SRCDIR/tests/cli/data/train
if no_torch_ranks "train"; then
	return 0 2>/dev/null || exit 0
fi

for _p in a-dp b-pp c-tp d-uneven; do
	check "dlplan eval accepts $_p" dlplan eval "$TD/$_p.json"
done

OPTS="--dtype float64 --steps 3 --optimizer adamw"
# variant PLAN KIND: $TMP/<PLAN's letter>-KIND.json, PLAN with the memory
# savers (savers: recompute_layers min(2, blocks) on every stage, options
# recompute full and optimizer sharded) or the overlapped sync (ovl:
# options.overlap dp), its inputs named by absolute paths.
variant() {
	"$TR_PY" -c '
import json, os, sys
src, kind, dst = sys.argv[1:]
p = json.load(open(src))
if kind == "savers":
    p["options"]["recompute"] = "full"
    p["options"]["optimizer"] = "sharded"
    for g in p["groups"]:
        for s in g["stages"]:
            a, b = s["layers"]
            s["recompute_layers"] = min(2, sum(1 for i in range(a, b + 1)
                                               if 0 < i < 7))
else:
    p["options"]["overlap"] = "dp"
for i in p["inputs"]:
    i["path"] = os.path.join(os.path.dirname(src), i["path"])
json.dump(p, open(dst, "w"))' "$TD/$1.json" "$2" "$TMP/${1%%-*}-$2.json"
	check "dlplan eval accepts ${1%%-*}-$2" dlplan eval \
	    "$TMP/${1%%-*}-$2.json"
}
for _p in b-pp c-tp; do
	variant $_p savers
done
for _p in a-dp b-pp d-uneven; do
	variant $_p ovl
done

# planned NAME PLAN WORLD [BREAK]: run PLAN with torchrun on one node
# (c10d rendezvous on a free port) into $TMP/NAME.pt, through
# train_break.py BREAK when given; the exit status goes to $TMP/NAME.rc.
planned() {
	_n=$1 _pl=$2 _w=$3
	if [ $# -gt 3 ]; then
		set -- "$SRCDIR/tests/cli/train_break.py" "$4"
	else
		set -- "$TRAIN"
	fi
	case $_pl in
	/*) ;;
	*) _pl=$TD/$_pl.json ;;
	esac
	PYTHONPATH=$SRCDIR/plans torchrun --redirects 1 --tee 1 --nnodes 1 \
	    --nproc_per_node "$_w" --rdzv_backend c10d \
	    --rdzv_endpoint localhost:0 --rdzv_id "train-$_n" \
	    --monitor_interval 0.2 "$@" --plan "$_pl" $OPTS \
	    --dump-params "$TMP/$_n.pt" >"$TMP/$_n.log" 2>&1
	echo $? >"$TMP/$_n.rc"
}

# Two runs at a time (the reference next to the first two).
"$TR_PY" "$TRAIN" --reference --plan "$TD/a-dp.json" $OPTS \
    --dump-params "$TMP/ref.pt" >"$TMP/ref.log" 2>&1 &
_ref=$!
planned a-dp a-dp 3 &
planned b-pp b-pp 5
wait
planned c-tp c-tp 4 &
planned d-uneven d-uneven 4
wait
planned noscale a-dp 3 noscale &
planned skipseg c-tp 4 skipseg
wait
planned smallbkt d-uneven 4 smallbuckets &
planned b-savers "$TMP/b-savers.json" 5
wait
planned c-savers "$TMP/c-savers.json" 4 &
planned noshare "$TMP/b-savers.json" 5 noshare
wait
planned badrc "$TMP/b-savers.json" 5 badrecompute &
planned a-ovl "$TMP/a-ovl.json" 3
wait
planned b-ovl "$TMP/b-ovl.json" 5 smallovl &
planned d-ovl "$TMP/d-ovl.json" 4 smallovl
wait
planned earlyovl "$TMP/b-ovl.json" 5 earlyovl
check "reference run" test -s "$TMP/ref.pt"
_cmp=
for _n in a-dp b-pp c-tp d-uneven smallbkt b-savers c-savers a-ovl b-ovl \
    d-ovl noscale skipseg noshare badrc earlyovl; do
	[ -s "$TMP/$_n.pt" ] && _cmp="$_cmp $TMP/$_n.pt"
done
# shellcheck disable=SC2086
"$TR_PY" "$TRAIN" --compare "$TMP/ref.pt" $_cmp >"$TMP/cmp.txt" 2>&1

# ran NAME: torchrun succeeded, or say why not.
ran() {
	[ "$(cat "$TMP/$1.rc" 2>/dev/null)" = 0 ] && return 0
	t_notok "$1: torchrun runs it" "$(grep -v '^\*\|^Setting\|^WARNING' \
	    "$TMP/$1.log" | tail -8)"
	return 1
}
for _n in a-dp b-pp c-tp d-uneven smallbkt b-savers c-savers a-ovl b-ovl \
    d-ovl; do
	ran "$_n" || continue
	_l=$(grep "^$TMP/$_n.pt: " "$TMP/cmp.txt" | sed "s|^$TMP/$_n.pt: ||")
	case "$_l" in
	"max relative"*) t_ok "$_n: equals the reference ($_l)" ;;
	*) t_notok "$_n: equals the reference" "$_l" "$(cat "$TMP/cmp.txt")" ;;
	esac
done
for _n in noscale skipseg noshare badrc earlyovl; do
	ran "$_n" || continue
	_l=$(grep "^$TMP/$_n.pt: " "$TMP/cmp.txt" | sed "s|^$TMP/$_n.pt: ||")
	case "$_l" in
	"DIFFERS: "*) t_ok "broken ($_n) fails the check: ${_l#DIFFERS: }" ;;
	*) t_notok "broken ($_n) fails the check" "$_l" ;;
	esac
done

if "$TR_PY" -c 'import sys, torch
sys.exit(not (torch.cuda.is_available() and torch.cuda.device_count() >= 3))' \
    2>/dev/null; then
	OPTS="$OPTS --device cuda"
	planned nccl a-dp 3
	if ran nccl && "$TR_PY" "$TRAIN" --compare "$TMP/ref.pt" \
	    "$TMP/nccl.pt" >"$TMP/nccl.txt" 2>&1; then
		t_ok "nccl: a-dp equals the reference"
	else
		t_notok "nccl: a-dp equals the reference" "$(cat "$TMP/nccl.txt")"
	fi
else
	skip "nccl: a-dp equals the reference" "no CUDA with 3 GPUs here"
fi

# Errors: exit 2 and one line on stderr.
expect_err "plan and model differ in layers" 2 \
    "dlplan_train: the plan has 8 layers, the model 7 (5 blocks + embedding + head)" -- \
    "$TR_PY" "$TRAIN" --plan "$TD/a-dp.json" --layers 5 --reference
expect_err "rank environment missing" 2 \
    "dlplan_train: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT not set: start every rank with torchrun or dlplan's launch files (or use --reference)" -- \
    env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT \
    "$TR_PY" "$TRAIN" --plan "$TD/a-dp.json"
cp "$TD/nodes.csv" "$TD/model.csv" "$TMP/"
sed 's/0.75, 0.25/0.75, 0.2/' "$TD/d-uneven.json" >"$TMP/bad.json"
expect_err "shares that do not sum to 1" 2 \
    "dlplan_train: group 0 stage 0: tp_shares [0.75, 0.2] sum to 0.95, not 1" -- \
    "$TR_PY" "$TRAIN" --plan "$TMP/bad.json" --reference
sed 's/"overlap": "dp"/"overlap": "dp", "optimizer": "sharded"/' \
    "$TMP/a-ovl.json" >"$TMP/ovl-sharded.json"
expect_err "overlap dp with a sharded optimizer is refused" 2 \
    "dlplan_train: options.overlap \"dp\" with options.optimizer \"sharded\": this executor does not overlap the parameter gather with the next forward as dlplan prices it (plan with --overlap none)" -- \
    "$TR_PY" "$TRAIN" --plan "$TMP/ovl-sharded.json" --reference
sed 's/"overlap": "dp"/"overlap": "dp+tp"/' "$TMP/a-ovl.json" \
    >"$TMP/ovl-tp.json"
expect_err "overlap dp+tp is refused" 2 \
    "dlplan_train: options.overlap: \"dp+tp\" (expected \"none\" or \"dp\": this executor overlaps no tensor-parallel traffic)" -- \
    "$TR_PY" "$TRAIN" --plan "$TMP/ovl-tp.json" --reference
printf 'not a dump\n' >"$TMP/junk.pt"
"$TR_PY" "$TRAIN" --compare "$TMP/ref.pt" "$TMP/junk.pt" >/dev/null \
    2>"$TMP/junk.err"
_rc=$?
check "--compare of a file that is no dump: exit 2, one line" sh -c "
    test $_rc -eq 2 && test \$(wc -l <'$TMP/junk.err') -eq 1 &&
    grep -q '^dlplan_train: --compare $TMP/junk.pt: not a --dump-params file (' \
    '$TMP/junk.err'"
# --dump-params writes through an unpredictable temporary name: a link
# planted at FILE.tmp is not followed.
printf 'keep\n' >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/p.pt.tmp"
"$TR_PY" "$TRAIN" --reference --plan "$TD/a-dp.json" --dtype float64 \
    --steps 1 --dump-params "$TMP/p.pt" >/dev/null 2>&1
check "--dump-params: a link at FILE.tmp is not written through" sh -c \
    "test \"\$(cat '$TMP/victim')\" = keep && test -s '$TMP/p.pt' &&
    ! ls '$TMP'/p.pt.tmp-* >/dev/null 2>&1"
