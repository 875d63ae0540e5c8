# A plan's inputs are trusted by content: the README's flows
# run without --trust-paths, and no swap of a directory of the plan's tree
# for a symbolic link makes eval read a file outside it.

# --- the README's flows, as a new user types them -----------------------
# Inputs outside the output directory, named by the plan as ../...
mkdir -p "$TMP/r/datasets/clusters" "$TMP/r/datasets/models"
cp -R "$SRCDIR/datasets/clusters/two-dc" "$TMP/r/datasets/clusters/"
cp "$SRCDIR/datasets/models/llama2-7b.csv" "$TMP/r/datasets/models/"
cd "$TMP/r" || exit 1
check "plan -o run1" "$DLPLAN" plan -c datasets/clusters/two-dc \
    -m datasets/models/llama2-7b.csv --global-batch 256 --micro-batch 2 \
    --horizon 3 -o run1
check "plan -> eval" "$DLPLAN" eval run1/plan.json --baselines
for l in slurm torchrun srun; do
	check "plan -> emit --launcher $l" "$DLPLAN" emit run1/plan.json \
	    --launcher $l -o "e-$l" -- python3 train.py
done
# The frameworks take plans made for them (--runtime), hostfile one with
# each node's ranks consecutive.
for l in megatron deepspeed torchtitan; do
	"$DLPLAN" plan -c datasets/clusters/two-dc -m datasets/models/llama2-7b.csv \
	    --global-batch 256 --micro-batch 2 --horizon 3 --runtime $l \
	    -o "run-$l" >/dev/null 2>&1
	check "plan --runtime $l -> emit --launcher $l" "$DLPLAN" emit \
	    "run-$l/plan.json" --launcher $l -o "e-$l" -- python3 train.py
done
check "plan -> emit --launcher hostfile" "$DLPLAN" emit \
    run-megatron/plan.json --launcher hostfile -o e-hostfile -- python3 train.py
awk -F, 'NR > 1 && !seen[$1]++ { r[n++] = $1 }
    END { print "rank,step,seconds"
	for (s = 0; s < 8; s++) for (i = 0; i < n; i++)
		printf "%s,%d,%.3f\n", r[i], s, 16.5 + (i % 3) * 0.4 }' \
    run1/plan.csv >steps.csv
check "plan -> replan" "$DLPLAN" replan run1/plan.json --observed steps.csv \
    -o run2
check "replan -> eval" "$DLPLAN" eval run2/plan.json
check "schedule -o" "$DLPLAN" schedule -c "$SRCDIR/datasets/clusters/philly-64" \
    --jobs "$SRCDIR/datasets/jobs/philly-gavel-120.csv" -o sched -q
# A job's plan: the plan column of jobs.csv, relative to the output.
jobplan() {
	awk -F, -v j="$1" 'NR == 1 { for (i = 1; i <= NF; i++)
		if ($i == "plan") c = i; next }
	    $1 == j { print "sched/" $c }' sched/jobs.csv
}
check "schedule -> emit of a job's plan" "$DLPLAN" emit \
    "$(jobplan j0001)" --launcher hostfile -o e-sched -- python3 train.py
check "schedule -> eval of a job's plan" "$DLPLAN" eval "$(jobplan j0002)"
# The whole flow moved elsewhere: the plan's ../ paths now lead nowhere.
cd "$SRCDIR" || exit 1

# --- a directory swapped for a symbolic link while eval runs ------------
# plan/d holds the inputs; outside/ holds a nodes.csv whose first line is
# a secret (an error would quote it).  A helper swaps plan/d for a link to
# ../outside and back as fast as it can while eval runs 150 times with
# the digests and 150 times with --ignore-digests, then emit and replan
# (the other readers of a plan's inputs) 40 times each, half of them
# with --ignore-digests: the secret must never show, and some runs must
# still read plan/d.
R=$TMP/race
mkdir -p "$R/plan/d" "$R/outside"
cp "$DATA/eval/one/nodes.csv" "$DATA/eval/m4.csv" "$R/plan/d/"
printf 'SECRET-%s,x\n1,2\n' "$$" >"$R/outside/nodes.csv"
cp "$DATA/eval/m4.csv" "$R/outside/m4.csv"
dlplan plan -c "$R/plan/d" -m "$R/plan/d/m4.csv" --global-batch 4 \
    -o "$R/plan" >/dev/null 2>&1
check "race: the plan names d/ relative to its directory" \
    grep -q '"path": "d/nodes.csv"' "$R/plan/plan.json"
ln -s ../outside "$R/plan/link"
/usr/bin/python3 -c '
import os, sys, time
d, link, real = sys.argv[1] + "/d", sys.argv[1] + "/link", sys.argv[1] + "/real"
end = time.time() + float(sys.argv[2])
n = 0
while time.time() < end and not os.path.exists(sys.argv[3]):
    os.rename(d, real); os.rename(link, d)
    os.rename(d, link); os.rename(real, d)
    n += 1
open(sys.argv[3] + ".n", "w").write("%d\n" % n)
' "$R/plan" 60 "$R/stop" &
swapper=$!
: >"$R/out"
ok=0
i=0
while [ $i -lt 300 ]; do
	if [ $i -lt 150 ]; then a=; else a=--ignore-digests; fi
	"$DLPLAN" eval $a "$R/plan/plan.json" >>"$R/out" 2>&1 && ok=$((ok + 1))
	i=$((i + 1))
done
# A step log of the plan's 4 ranks for replan.
printf 'rank,step,seconds\n' >"$R/steps.csv"
for r in 0 1 2 3; do
	for s in 1 2 3 4 5 6 7 8; do
		echo "$r,$s,1.0" >>"$R/steps.csv"
	done
done
okr=0
i=0
while [ $i -lt 40 ]; do
	if [ $i -lt 20 ]; then a=; else a=--ignore-digests; fi
	"$DLPLAN" emit $a "$R/plan/plan.json" --launcher hostfile \
	    -o "$R/em" -- python3 t.py >>"$R/out" 2>&1 && okr=$((okr + 1))
	"$DLPLAN" replan $a "$R/plan/plan.json" --observed "$R/steps.csv" \
	    -o "$R/re" >>"$R/out" 2>&1 && okr=$((okr + 1))
	i=$((i + 1))
done
: >"$R/stop"
wait $swapper
echo "# race: $(cat "$R/stop.n" 2>/dev/null) swaps, $ok of 300 evals and $okr of 80 emits and replans read plan/d"
check "race: never a read outside the plan's tree" \
    sh -c "! grep -q SECRET '$R/out'"
check "race: the swapper ran" test -s "$R/stop.n"
check "race: refusals name the digest or the way out" sh -c "
    grep '^dlplan:' '$R/out' | grep -v -e 'does not match the digest' \
    -e 'bytes the plan records' -e 'leads outside the plan' \
    -e 'cannot open file' -e 'is a directory' \
    -e 'no nodes.csv' | { ! grep -q .; }"
