# dlplan schedule: the bundled trace's summary (golden), an independent
# re-simulation of every policy's schedule.json (tests/cli/schedule-check.py),
# determinism, emit takes the jobs' plans, the output formats, and every
# bad input with its exit status.

PH=datasets/clusters/philly-64
TR=datasets/jobs/philly-gavel-120.csv
D=tests/cli/data/schedule
CHK="/usr/bin/python3 $SRCDIR/tests/cli/schedule-check.py"
# plan_of DIR JOB: the plan file of JOB in the output DIR (its jobs.csv's
# plan column, a path relative to DIR).
plan_of() {
	awk -F, -v j="$2" -v d="$1" 'NR == 1 { for (i = 1; i <= NF; i++)
		if ($i == "plan") c = i; next }
	    $1 == j && $c != "" { print d "/" $c }' "$1/jobs.csv"
}

expect_run "bundled trace, csv summary" 0 schedule-philly.csv - -- \
    dlplan schedule -c $PH --jobs $TR --format csv
for p in gadget fifo random tiresias srtf; do
	expect_run "$p schedule written" 0 - - -- dlplan schedule -c $PH \
	    --jobs $TR --policy $p -o "$TMP/$p" -q
	check "$p: the re-simulation agrees (GPUs, max_gpus, iterations, plans)" \
	    $CHK --eval "$DLPLAN" "$TMP/$p/schedule.json" $PH/nodes.csv \
	    "$TMP/$p/plans"
done
# Every plan file equals its schedule on a cluster of eight sites and four
# GPU kinds, where wide jobs span sites and slow GPUs get no micro-batch:
# every policy's plans, all of them, priced again by "dlplan eval".
GEO=datasets/clusters/geo-8
for p in gadget fifo random tiresias srtf; do
	expect_run "$p: a mixed trace on geo-8 written" 0 - - -- dlplan \
	    schedule -c $GEO --jobs $D/geo-mix.csv --policy $p -o "$TMP/geo-$p" -q
	check "$p: every plan, priced by eval, is its slot's (GPUs and time)" \
	    $CHK --eval "$DLPLAN" "$TMP/geo-$p/schedule.json" $GEO/nodes.csv \
	    "$TMP/geo-$p/plans"
done
expect_run "utility objective, short slots" 0 - - -- dlplan schedule \
    -c $PH --jobs $TR --objective utility --slot-seconds 60 \
    --restart-seconds 10 -o "$TMP/u" -q
check "utility: the re-simulation agrees" $CHK "$TMP/u/schedule.json" \
    $PH/nodes.csv
# Progress (dlplan(1) -v): with -v a last line for every policy on stderr
# and the same summary; without -v, stderr no terminal: none.
dlplan schedule -c $PH --jobs $TR --format csv -v >"$TMP/pv.out" \
    2>"$TMP/pv.err"
dlplan schedule -c $PH --jobs $TR --format csv >"$TMP/p0.out" 2>"$TMP/p0.err"
check "-v: a last progress line for every policy, in table order" sh -c "
	grep '^dlplan: schedule: done, ' '$TMP/pv.err' | sed 's/^dlplan: \
schedule: done, \([a-z]*\) (policy \([0-9]\) of 5), [0-9]* of 120 jobs \
ended, [0-9]* events, [0-9.e+]* s simulated, [0-9.]* s\$/\2 \1/' |
	    tr '\n' ' ' | grep -qx '1 gadget 2 fifo 3 random 4 tiresias 5 srtf '"
check "-v: the summary unchanged" cmp "$TMP/p0.out" "$TMP/pv.out"
check "no -v, stderr not a terminal: no progress" \
    sh -c "! grep -q 'schedule:' '$TMP/p0.err'"
expect_run "gadget again" 0 - - -- dlplan schedule -c $PH --jobs $TR \
    -o "$TMP/again" -q
check "same inputs, same schedule.json" cmp "$TMP/gadget/schedule.json" \
    "$TMP/again/schedule.json"
check "same inputs, same jobs.csv" cmp "$TMP/gadget/jobs.csv" \
    "$TMP/again/jobs.csv"
check "jobs.csv header" sh -c "head -1 '$TMP/gadget/jobs.csv' | grep -qx \
'job,arrival_s,start_s,finish_s,jct_s,gpu_hours,restarts,iterations,\
plan,unschedulable'"
# One plan per model, batch and first GPUs (schedule-check.py checks the
# sharing): fewer files than the 120 jobs.
check "jobs that start alike share a plan" test \
    "$(ls "$TMP/gadget/plans" | wc -l)" -lt 120
check "jobs.csv names the plan of every job, schedule.json the same" \
    /usr/bin/python3 -c "
import csv, json
r = {x['job']: x['plan'] for x in csv.DictReader(open('$TMP/gadget/jobs.csv'))}
d = {x['job']: x['plan'] or '' for x in json.load(open(
    '$TMP/gadget/schedule.json'))['jobs']}
assert r == d and all(r.values()), (r, d)"
expect_run "emit takes a job's plan" 0 - - -- dlplan emit \
    "$(plan_of "$TMP/gadget" j0001)" --launcher hostfile -o "$TMP/l1" \
    -- python train.py
check "emit wrote a hostfile" test -s "$TMP/l1/launch/hostfile"
expect_run "eval prices a job's plan as the schedule did" 0 - - -- \
    dlplan eval "$(plan_of "$TMP/gadget" j0002)" --format json
check "iteration time of the first slot = eval's" /usr/bin/python3 -c "
import json
s = json.load(open('$TMP/gadget/schedule.json'))
e = json.load(open('$TMP/out'))['estimate']['iteration_s']
t = [x['iteration_s'] for sl in s['events'] for x in sl['jobs']
     if x['job'] == 'j0002'][0]
assert abs(t - e) <= 1e-12 * e, (t, e)"
expect_run "json summary" 0 - - -- dlplan schedule -c $PH --jobs $TR \
    --format json --slots 50
check "json summary lists the five policies" /usr/bin/python3 -c "
import json
d = json.load(open('$TMP/out'))
assert [x['policy'] for x in d] == ['gadget', 'fifo', 'random', 'tiresias',
    'srtf']"

expect_run "demand never above the GPUs" 0 - - -- dlplan schedule -c $PH \
    --jobs $D/light.csv --format csv
check "no restart when the GPUs never run short" sh -c \
    "grep '^gadget,' '$TMP/out' | cut -d, -f7 | grep -qx 0"
expect_run "a short job meets a long one on one server" 0 - - -- dlplan \
    schedule --nodes $D/one-dgx/nodes.csv --jobs $D/shrink.csv -v \
    -o "$TMP/sh"
check "-v: the long job shrinks for the short one, with gain and cost" \
    grep -q "^t=300 s: job 'long' shrinks from 8 to 2 GPUs for job 'short'.*\
gain [0-9]* s against [0-9]* s that 'long' loses" "$TMP/err"
check "-v: it grows back once the short job ends, past the restart" \
    grep -q "^t=600 s: job 'long' grows from 2 to 8 GPUs: .* more than the \
30 s restart" "$TMP/err"
check "shrink and grow: the re-simulation agrees" $CHK "$TMP/sh/schedule.json" \
    $D/one-dgx/nodes.csv
for p in tiresias srtf; do
	expect_run "$p preempts on one server" 0 - - -- dlplan schedule \
	    --nodes $D/one-dgx/nodes.csv --jobs $D/shrink.csv --policy $p \
	    -o "$TMP/sh-$p" -q
	check "$p preemption: the re-simulation agrees" $CHK \
	    "$TMP/sh-$p/schedule.json" $D/one-dgx/nodes.csv
done
expect_run "1e15 iterations: whole slots between events are one record" 0 \
    - - -- dlplan schedule -c $PH --jobs $D/forever.csv -o "$TMP/fe" -q
check "1e15 iterations: the re-simulation agrees" $CHK \
    "$TMP/fe/schedule.json" $PH/nodes.csv
check "1e15 iterations: a handful of events, the last past slot 1e9" \
    /usr/bin/python3 -c "
import json
s = json.load(open('$TMP/fe/schedule.json'))
assert len(s['events']) < 10 and s['events'][-1]['slot'] > 1e9"

# A running job moves to faster GPUs that free up when the gain over its
# remaining work beats the restart: 'slow' starts on P100s while four
# jobs hold the V100s, and moves once they end.
expect_run "a job on P100s when V100s free up" 0 - - -- dlplan schedule \
    -c $PH --jobs $D/move.csv -v -o "$TMP/mv"
check "-v: it moves, with its gain over the restart" grep -q \
    "^t=600 s: job 'slow' moves from 4 GPUs to 4 elsewhere: .* more than \
the 30 s restart" "$TMP/err"
check "move: the re-simulation and every plan agree" $CHK --eval "$DLPLAN" \
    "$TMP/mv/schedule.json" $PH/nodes.csv "$TMP/mv/plans"
check "move: it ends on V100s" /usr/bin/python3 -c "
import json
d = json.load(open('$TMP/mv/schedule.json'))
e = [x for ev in d['events'] for x in ev['jobs'] if x['job'] == 'slow']
assert e[-1]['nodes'][0]['node'].startswith('dgx1-v100'), e[-1]"

# No starvation: a job that needs the whole server while 1-GPU jobs keep
# arriving.  Without --max-wait it ages: once it has waited its own least
# run time it holds a reservation, and no later job that would still run
# when the running ones end starts on the GPUs it needs; so it starts
# within its run time, plus the longest 1-GPU job, the restart and a slot
# (it waited 21,500 s before the reservation).  With --max-wait S it
# starts within S plus one slot.
ONE=$D/one-dgx/nodes.csv
for mw in 0 3600; do
	expect_run "--max-wait $mw: a whole-server job among 1-GPU jobs" 0 \
	    - - -- dlplan schedule --nodes $ONE --jobs $D/starve.csv \
	    --max-wait $mw -o "$TMP/st$mw" -q
	check "--max-wait $mw: the re-simulation and every plan agree" $CHK \
	    --eval "$DLPLAN" "$TMP/st$mw/schedule.json" $ONE "$TMP/st$mw/plans"
done
WAIT="import csv, json, sys
r = [x for x in csv.DictReader(open(sys.argv[1] + '/jobs.csv'))
     if x['job'] == 'big'][0]
w = float(r['start_s']) - float(r['arrival_s'])
d = json.load(open(sys.argv[1] + '/schedule.json'))
it = {}
for ev in d['events']:
    for x in ev['jobs']:
        it.setdefault(x['job'], x['iteration_s'])
n = {x['job']: x['iterations'] for x in d['jobs']}
run = {j: n[j] * t for j, t in it.items()}"
check "without --max-wait the big job waits at most its run time, the \
longest small job, the restart and a slot" /usr/bin/python3 -c "$WAIT
small = max(t for j, t in run.items() if j != 'big')
assert w <= run['big'] + small + 30 + 300, (w, run['big'], small)" \
    "$TMP/st0"
check "--max-wait 3600: it starts within 3600 s plus one slot" \
    /usr/bin/python3 -c "$WAIT
assert w <= 3600 + 300, w" "$TMP/st3600"

# A model-parallel job's key counts its plan's time, not the least time
# of its micro-batches, which leaves out the pipeline and tensor-parallel
# traffic (ten times too low for llama2-70b on two-dc): 'b' arrives while
# 'a' runs on the whole cluster and does not age before it has waited
# its own run time, so it holds no reservation when 'a' has shrunk for the
# 1-GPU 'c', and 'a' grows back once 'c' ends; 'b' then starts on all 48.
TD=datasets/clusters/two-dc
expect_run "two llama2-70b jobs and a small one on two-dc" 0 - - -- dlplan \
    schedule -c $TD --jobs $D/mp-age.csv -v -o "$TMP/age"
check "-v: 'a' grows back to 48 GPUs when 'c' ends" grep -q \
    "^t=2100 s: job 'a' grows from 47 to 48 GPUs" "$TMP/err"
check "-v: 'b' holds no reservation while 'a' runs" sh -c \
    "! grep -q \"job 'b' holds a reservation\" '$TMP/err'"
check "mp-age: the re-simulation and every plan agree" $CHK --eval \
    "$DLPLAN" "$TMP/age/schedule.json" $TD/nodes.csv "$TMP/age/plans"
check "'b' runs on 48 GPUs from its start" /usr/bin/python3 -c "
import json
d = json.load(open('$TMP/age/schedule.json'))
g = [x['gpus'] for ev in d['events'] for x in ev['jobs'] if x['job'] == 'b']
assert g and set(g) == {48}, g"

# --- jobs that need model parallelism -----------------------------------
# llama2-7b at micro-batch 1 needs more than one 40 GB GPU: the planner's
# plan on the GPUs it is given; gpt3-175b fits in no plan on 12 GPUs, and
# "tight" may not use the 4 GPUs llama2-7b needs (TP 4 with fused
# attention, the plan "dlplan plan" finds on one 4-GPU server).
A4=$D/a100-40/nodes.csv
for p in gadget fifo random tiresias srtf; do
	expect_run "$p: model-parallel jobs are scheduled" 0 - - -- dlplan \
	    schedule --nodes $A4 --jobs $D/mp.csv --policy $p -o "$TMP/mp-$p" -q
	check "$p: model-parallel re-simulation and plans agree" $CHK \
	    --eval "$DLPLAN" "$TMP/mp-$p/schedule.json" $A4 "$TMP/mp-$p/plans"
done
check "the llama2-7b job runs a pipeline or tensor-parallel plan" \
    /usr/bin/python3 -c "
import json
p = json.load(open('$(plan_of "$TMP/mp-gadget" llama)'))
st = [s for g in p['groups'] for s in g['stages']]
assert len(p['groups']) == 1 and (len(st) > 1 or len(st[0]['gpus']) > 1), st
assert all(len(s['gpus']) * len(st) > 1 for s in st)"
check "it needs 4 GPUs: min_gpus in schedule.json" /usr/bin/python3 -c "
import json
d = json.load(open('$TMP/mp-gadget/schedule.json'))
j = {x['job']: x for x in d['jobs']}
assert (j['llama']['min_gpus'], j['llama-b']['min_gpus']) == (4, 4), j"
sed '/^a40-[12],/d' $A4 >"$TMP/a40-one.csv"
expect_run "and no plan fits on one server of 4 such GPUs" 3 - - -- dlplan \
    plan --nodes "$TMP/a40-one.csv" -m "$TMP/mp-gadget/models/llama2-7b.csv" \
    --global-batch 16 --micro-batch 1 -j 1 --recompute none \
    --attention unfused
for j in llama llama-b; do
	expect_run "eval takes $j's plan" 0 - - -- dlplan eval \
	    "$(plan_of "$TMP/mp-gadget" $j)" --format json
	check "$j: eval's iteration time is the one the schedule used" \
	    /usr/bin/python3 -c "
import json
s = json.load(open('$TMP/mp-gadget/schedule.json'))
e = json.load(open('$TMP/out'))['estimate']['iteration_s']
t = [x['iteration_s'] for sl in s['events'] for x in sl['jobs']
     if x['job'] == '$j']
assert t and abs(t[0] - e) <= 1e-12 * e, (t[:1], e)"
done
check "jobs.csv: the job no plan fits is reported" grep -q \
    "^huge,0,,,,0,0,0,,\"one replica of gpt3-175b (batch 1) fits on no GPU, \
and no pipeline or tensor-parallel plan fits on all 12 GPUs: " \
    "$TMP/mp-gadget/jobs.csv"
WHY='tight,30,,,,0,0,0,,"a plan of llama2-7b (batch 1) needs at least 4 GPUs'
WHY="$WHY to fit in memory, more than it may use (3)\""
check "jobs.csv: so is one that may not use the 4 GPUs it needs" grep -qxF \
    "$WHY" "$TMP/mp-gadget/jobs.csv"
check "summary.csv: two unschedulable, none unfinished" sh -c "grep -q \
'^gadget,.*,0,2,[0-9]*,\$' '$TMP/mp-gadget/summary.csv'"
expect_run "emit takes a pipeline job's plan" 0 - - -- dlplan emit \
    "$(plan_of "$TMP/mp-gadget" llama)" --launcher hostfile -o "$TMP/l2" \
    -- python train.py
check "its hostfile names the servers of its plan" sh -c "grep -c '^a40-' \
'$TMP/l2/launch/hostfile' | grep -qx 3"

# --- bad inputs ---------------------------------------------------------
expect_err "a job that cannot end within the slots dlplan simulates" 2 \
    "dlplan: $D/forever.csv:2: job 'long' needs at least 2.21108e+13 s \
(1e+15 iterations of at least 0.0221108 s on 8 GPUs), more than the \
1000000000000 slots of 0.001 s dlplan simulates (give fewer iterations, \
longer --slot-seconds, or --slots N to stop early)" -- dlplan schedule \
    -c $PH --jobs $D/forever.csv --slot-seconds 0.001 --restart-seconds 0
expect_err "negative arrival" 2 "dlplan: $D/neg.csv:2:2: column \
'arrival_s': '-5' is out of range (expected a number in [0, 1000000000000] \
(seconds))" -- dlplan schedule -c $PH --jobs $D/neg.csv
expect_err "unknown model" 2 "dlplan: $D/unknown.csv:2:3: column 'model': \
unknown model 'nosuch-model' (not a file relative to the jobs file, nor a \
preset: gpt2-xl|gpt3-175b|llama2-7b|llama2-13b|llama2-70b|bert-large|resnet50)" \
    -- dlplan schedule -c $PH --jobs $D/unknown.csv
expect_run "a job that needs more GPUs than it can use is reported" 0 - - \
    -- dlplan schedule -c $PH --jobs $D/nofit.csv -o "$TMP/nofit"
check "the table names it" grep -qx "never     job 'big' (line 3): it \
needs 100 GPUs and can use at most 16 (GPUs it fits on, 16 micro-batches)" \
    "$TMP/out"
WHY='"it needs 100 GPUs and can use at most 16 (GPUs it fits on, 16 '
WHY="${WHY}micro-batches)\""
check "jobs.csv says why" grep -qxF "big,5,,,,0,0,0,,$WHY" "$TMP/nofit/jobs.csv"
check "summary.csv counts it, and the other job ran" sh -c "grep -q \
'^gadget,30.05[0-9]*,.*,0,0,1,1,\$' '$TMP/nofit/summary.csv'"
check "unschedulable: the re-simulation agrees" $CHK \
    "$TMP/nofit/schedule.json" $PH/nodes.csv
expect_err "a job that fits on no GPU, nor in any plan" 3 "dlplan: \
$D/nomem.csv:2: job 'huge' can never run: one replica of gpt3-175b (batch 1) \
fits on no GPU, and no pipeline or tensor-parallel plan fits on all 64 GPUs: \
no plan fits in GPU memory; even one pipeline over every GPU fails: memory \
does not fit on GPU 0 of node 'dgx1-v100-0' (groups[0].stages[0]): needs \
37.15 GB, 14.4 GB available; over by 22.75 GB (22749335552 bytes) (and 63 \
more GPUs); a smaller --micro-batch, a larger --max-tp, less --mem-reserve or \
more GPUs may fit" -- dlplan schedule -c $PH --jobs $D/nomem.csv
expect_err "missing jobs file" 2 "dlplan: $D/none.csv: cannot open file: \
No such file or directory" -- dlplan schedule -c $PH --jobs $D/none.csv
expect_err "no --jobs" 1 "dlplan: no jobs given (use --jobs JOBS.csv)" -- \
    dlplan schedule -c $PH
expect_err "bad policy" 1 "dlplan: option '--policy': 'best' is not one \
of gadget|fifo|random|tiresias|srtf" -- dlplan schedule -c $PH --jobs $TR \
    --policy best
expect_run "nothing written on error" 3 - - -- dlplan schedule -c $PH \
    --jobs $D/nomem.csv -o "$TMP/none"
check "no output directory" test ! -e "$TMP/none"

# One job that fits runs under every policy, alone on an empty cluster:
# model-parallel jobs that a policy's packing once put where no plan fits
# (llama2-7b on four 24 GB L4s of geo-8, or hetero-lab's V100s) are placed
# where one does (the nodes with the most GPU memory first).
HDR=job,arrival_s,model,global_batch,micro_batch,iterations,min_gpus,max_gpus,weight
# The summary the last command printed as CSV: five policies, every job
# finished, none stalled.
none_stalled() {
	/usr/bin/python3 -c "
import csv
rows = list(csv.DictReader(open('$TMP/out')))
assert len(rows) == 5, rows
for r in rows:
    assert r['unfinished'] == '0' and r['stalled'] == '', r"
}
for c in geo-8:llama2-70b:24:24 two-dc:llama2-13b:1:64 \
    two-dc:llama2-70b:24:32 hetero-lab:llama2-7b:1:4 geo-8:llama2-7b:1:4; do
	cl=${c%%:*} r=${c#*:}
	mo=${r%%:*} r=${r#*:}
	lo=${r%%:*} hi=${r#*:}
	printf '%s\none,0,%s,64,1,100,%s,%s,1\n' $HDR $mo $lo $hi \
	    >"$TMP/one.csv"
	expect_run "$mo ($lo-$hi GPUs) alone on $cl" 0 - - -- dlplan schedule \
	    -c datasets/clusters/$cl --jobs "$TMP/one.csv" --format csv
	check "... finishes under every policy, none stalled" none_stalled
done
# A data-parallel job that needs exactly as many GPUs as micro-batches
# runs only where every GPU gets one: on two-dc's mixed GPUs the packing
# gave the fast H100s theirs and left the A100s none, so the job never
# started (every policy stalled, with or without a model-parallel job
# beside it); it goes on GPUs of about one speed.
printf '%s\nd,0,bert-large,64,4,2000,16,16,1\n' $HDR >"$TMP/even.csv"
cp "$TMP/even.csv" "$TMP/even2.csv"
printf 'b,10,llama2-70b,64,1,111,1,48,1\n' >>"$TMP/even2.csv"
for f in even even2; do
	expect_run "$f: 16 GPUs for 16 micro-batches on two-dc" 0 - - -- \
	    dlplan schedule -c datasets/clusters/two-dc --jobs "$TMP/$f.csv" \
	    --format csv
	check "... finishes under every policy, none stalled" none_stalled
done
for p in gadget fifo; do
	expect_run "$p: 16 GPUs for 16 micro-batches written" 0 - - -- dlplan \
	    schedule -c datasets/clusters/two-dc --jobs "$TMP/even2.csv" \
	    --policy $p -o "$TMP/even-$p" -q
	check "$p: 16 for 16: the re-simulation and its plans agree" \
	    $CHK --eval "$DLPLAN" "$TMP/even-$p/schedule.json" \
	    datasets/clusters/two-dc/nodes.csv "$TMP/even-$p/plans"
done
for p in gadget fifo random tiresias srtf; do
	expect_run "$p: llama2-7b alone on geo-8 written" 0 - - -- dlplan \
	    schedule -c datasets/clusters/geo-8 --jobs "$TMP/one.csv" \
	    --policy $p -o "$TMP/one-$p" -q
	check "$p: llama2-7b alone: the re-simulation and its plan agree" \
	    $CHK --eval "$DLPLAN" "$TMP/one-$p/schedule.json" \
	    datasets/clusters/geo-8/nodes.csv "$TMP/one-$p/plans"
done

# A baseline that stops early never fails the policy asked for: random
# gives the job fewer than its 8 GPUs, and then it runs past the slots
# dlplan simulates; its row in summary.csv says why, the others complete.
printf 'job,arrival_s,model,global_batch,micro_batch,iterations,max_gpus\nlong,0,resnet50,256,4,2e13,8\n' \
    >"$TMP/far.csv"
FAR="random schedule: job 'long' (2e+13 iterations) still runs after \
1000000000000 slots of 1 s, the most dlplan simulates (give fewer iterations, \
longer --slot-seconds, or --slots N to stop early)"
expect_err "gadget, random stops early: a warning" 0 "dlplan: warning: \
$FAR (a baseline: reported as stalled, its summary counts the jobs it leaves \
unfinished)" -- dlplan schedule -c $PH --jobs "$TMP/far.csv" --slot-seconds 1 \
    --restart-seconds 0 -o "$TMP/far"
check "summary.csv: random stalled with its reason, the others finished" \
    /usr/bin/python3 -c "
import csv, sys
rows = {r['policy']: r for r in csv.DictReader(open('$TMP/far/summary.csv'))}
assert rows['random']['stalled'] == sys.argv[1], rows['random']
assert rows['random']['unfinished'] == '1'
for p in ('gadget', 'fifo', 'tiresias', 'srtf'):
    assert rows[p]['stalled'] == '' and rows[p]['unfinished'] == '0', rows[p]" \
    "$FAR"
expect_err "--policy random that stops early: its exit status" 2 \
    "dlplan: $TMP/far.csv:2: $FAR" -- dlplan schedule -c $PH --jobs \
    "$TMP/far.csv" --slot-seconds 1 --restart-seconds 0 --policy random
expect_err "slots no longer than a restart: refused up front" 1 \
    "dlplan: option '--slot-seconds' (30) must exceed '--restart-seconds' (30): every start takes that long out of its slot" -- \
    dlplan schedule -c $PH --jobs $TR --slot-seconds 30
