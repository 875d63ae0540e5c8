#!/usr/bin/python3
"""Re-simulate a dlplan schedule.json independently of dlplan's code.

usage: schedule-check.py [--eval DLPLAN] SCHEDULE.json NODES.csv [PLANS]

Replays the events (schema dlplan.schedule/3: the slots in which a job
launched, finished or stopped) slot by slot, its own way: every running
job does (slot_s - restart_s) / iteration_s iterations in the slot it
launches in and slot_s / iteration_s in every later one, until its
iterations are done.  Checks that no GPU is given to two jobs, every GPU
exists, no job runs over its max_gpus or under its min_gpus, a job runs
only after it arrived; that a launch is flagged exactly when the GPUs
differ from the job's previous ones; that the iterations and run_s of
each entry are the replay's and a job finishes exactly in the slot and at
the time the replay says, never before or after; that every job
finishes except the unschedulable ones, which never run; and that the
summary's average JCT and makespan agree with the replay.  Two jobs name
the same plan exactly when they start on the same GPUs with the same
model and batch.

With PLANS (the plans/ directory of the same output), every job that ran
names a plan in PLANS ("plan" of schedule.json's jobs), PLANS holds no
other file, and each job's plan is checked against the job's first
slot: its stages hold every layer in order, in every group; its groups
share the global batch's micro-batches; every GPU it names is one the
job holds in that slot, none twice, and every GPU the job holds is in
the plan (unless it holds just the min_gpus it asked for); the model's weights, gradients and
optimizer state (params_m of the model file times the option bytes) fit
in the memory the plan's GPUs have left after mem_reserve (so a job that
needs a pipeline or tensor parallelism cannot have been given too few
GPUs); and the plan's iteration time is the slot's iteration_s.  With
--eval, every plan file is priced again by "DLPLAN eval" (all of them,
one process each) and its iteration time must be the first slot's of
every job that names it.  Prints
the number of slots and jobs checked; exits 1 with a message on the
first violation.
"""
import csv
import json
import os
import subprocess
import sys


def fail(msg):
    sys.exit("schedule-check: " + msg)


def model_params(path):
    """Sum of params_m (millions) of a model.csv."""
    with open(path) as fp:
        rows = csv.DictReader(l for l in fp if not l.startswith("#"))
        return sum(float(r["params_m"]) for r in rows)


def plan_file(plans, name, ref):
    """The file of job name's plan ref (schedule.json's "plan")."""
    if ref is None:
        fail("%s ran but names no plan" % name)
    head, base = os.path.split(ref)
    if head != "plans" or not base.endswith(".json"):
        fail("%s: plan %s is not a file of plans/" % (name, ref))
    path = os.path.join(plans, base)
    if not os.path.exists(path):
        fail("%s ran but has no plan %s" % (name, path))
    return path


# Each plan file read, and priced by eval, once: path -> (plan, eval's T).
read_plans = {}


def check_plan(plans, name, ref, entry, mem_gb, min_gpus, dlplan=None):
    """The plan of job name (ref) against its first slot's entry."""
    path = plan_file(plans, name, ref)
    if path not in read_plans:
        read_plans[path] = (json.load(open(path)), None)
    p = read_plans[path][0]
    o = p["options"]
    held = {(n["node"], x) for n in entry["nodes"] for x in n["gpus"]}
    used = []
    nlayers = None
    mb = 0
    for g in p["groups"]:
        nxt = 0
        for st in g["stages"]:
            lo, hi = st["layers"]
            if lo != nxt or hi < lo:
                fail("%s: plan stage layers %s out of order" % (name,
                                                                  st["layers"]))
            nxt = hi + 1
            used += [(st["node"], x) for x in st["gpus"]]
        if nlayers is None:
            nlayers = nxt
        elif nxt != nlayers:
            fail("%s: plan groups hold different layers" % name)
        mb += g["micro_batches"]
    if mb * o["micro_batch"] != o["global_batch"]:
        fail("%s: plan groups share %d micro-batches, not %d" % (
            name, mb, o["global_batch"] // o["micro_batch"]))
    if len(set(used)) != len(used):
        fail("%s: plan names a GPU twice" % name)
    if not set(used) <= held:
        fail("%s: plan uses GPUs %s the job does not hold" % (
            name, sorted(set(used) - held)))
    # Only a job whose plan needs fewer than the min_gpus it asked for
    # holds GPUs its plan leaves out.
    if set(used) != held and len(held) != min_gpus:
        fail("%s: the job holds GPUs %s its plan does not use" % (
            name, sorted(held - set(used))))
    model = [i["path"] for i in p["inputs"] if i["kind"] == "model"][0]
    if not os.path.isabs(model):
        model = os.path.join(plans, model)
    state = model_params(model) * 1e6 * (o["param_bytes"] + o["grad_bytes"] +
                                         o["optimizer_bytes"])
    room = sum(mem_gb[n] * 1e9 * (1 - o["mem_reserve"]) for n, _ in used)
    if state > room:
        fail("%s: %.4g GB of model state on GPUs with %.4g GB" % (
            name, state / 1e9, room / 1e9))
    t = p["estimate"]["iteration_s"]
    if abs(t - entry["iteration_s"]) > 1e-12 * t:
        fail("%s: plan iteration %.17g s, schedule %.17g s" % (
            name, t, entry["iteration_s"]))
    if dlplan is not None:
        t = read_plans[path][1]
        if t is None:
            out = subprocess.run([dlplan, "eval", path, "--format", "json"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                fail("%s: dlplan eval %s: %s" % (name, path,
                                                  out.stderr.strip()))
            t = json.loads(out.stdout)["estimate"]["iteration_s"]
            read_plans[path] = (p, t)
        if abs(t - entry["iteration_s"]) > 1e-12 * t:
            fail("%s: eval prices the plan at %.17g s, schedule %.17g s" % (
                name, t, entry["iteration_s"]))


def main():
    args = sys.argv[1:]
    dlplan = None
    if args[:1] == ["--eval"]:
        dlplan = args[1]
        args = args[2:]
    d = json.load(open(args[0]))
    plans = args[2] if len(args) > 2 else None
    gpus = {}
    mem_gb = {}
    with open(args[1]) as fp:
        rows = csv.DictReader(l for l in fp if not l.startswith("#"))
        for r in rows:
            gpus[r["node"]] = int(r["gpus"])
            mem_gb[r["node"]] = float(r["mem_gb"])
    S, R = d["slot_s"], d["restart_s"]
    jobs = {j["job"]: j for j in d["jobs"]}
    if d["schema"] != "dlplan.schedule/3":
        fail("schema %s" % d["schema"])
    left = {n: j["iterations"] for n, j in jobs.items()}
    alloc = {}       # running job -> sorted GPUs
    rate = {}        # running job -> iteration_s
    pos = {}         # running job -> the next slot not yet counted
    finish = {}
    started = set()
    last = -1
    shared = {}      # (model, batch, first GPUs) -> plan, and back

    def advance(name, upto):
        """Whole slots pos .. upto-1 of a running job, no launch."""
        d_ = (upto - pos[name]) * S / rate[name]
        if d_ >= left[name] * (1 + 1e-9) and d_ > 0:
            fail("%s should have finished before slot %d" % (name, upto))
        left[name] -= d_
        pos[name] = upto

    for ev in d["events"]:
        k, t0 = ev["slot"], ev["start_s"]
        if k <= last or abs(t0 - k * S) > 1e-6 * max(1, t0):
            fail("event at slot %d out of order or misplaced" % k)
        last = k
        for name in list(alloc):
            advance(name, k)
        for name in ev["stop"]:
            if name not in alloc:
                fail("slot %d: %s stops but did not run" % (k, name))
            del alloc[name]
        for e in ev["jobs"]:
            name = e["job"]
            j = jobs[name]
            g = sorted((n["node"], x) for n in e["nodes"] for x in n["gpus"])
            if name in finish:
                fail("slot %d: %s runs after it finished" % (k, name))
            if j["arrival_s"] > t0:
                fail("slot %d: %s runs before it arrives" % (k, name))
            if len(g) != e["gpus"] or len(set(g)) != len(g):
                fail("slot %d: %s gpus count" % (k, name))
            if not j["min_gpus"] <= len(g) <= j["max_gpus"]:
                fail("slot %d: %s has %d GPUs outside [%d, %d]" % (
                    k, name, len(g), j["min_gpus"], j["max_gpus"]))
            for node, x in g:
                if node not in gpus or not 0 <= x < gpus[node]:
                    fail("slot %d: %s on a GPU that does not exist" % (k, name))
            launch = alloc.get(name) != g
            if launch != e["launch"]:
                fail("slot %d: %s launch flag is wrong" % (k, name))
            if not launch and not e["finished"]:
                fail("slot %d: %s listed without a change" % (k, name))
            if launch and name not in started:
                key = (j["model"], j["global_batch"], j["micro_batch"],
                       tuple(g))
                ref = j["plan"]
                if shared.setdefault(key, ref) != ref:
                    fail("%s: plan %s, but a job of its model and batch "
                         "started on its GPUs has %s" % (name, ref,
                                                         shared[key]))
                if shared.setdefault(ref, key) != key:
                    fail("%s: plan %s, which a job of another model, batch "
                         "or GPUs started with" % (name, ref))
            if launch and plans is not None and name not in started:
                check_plan(plans, name, j["plan"], e, mem_gb, j["min_gpus"],
                           dlplan)
            if launch:
                started.add(name)
            alloc[name] = g
            rate[name] = e["iteration_s"]
            lost = min(R, S) if launch else 0
            it = min((S - lost) / rate[name], left[name])
            # left[] of 1e15 iterations is exact to about 0.1
            tol = 1e-6 * max(1, it) + 1e-12 * j["iterations"]
            if abs(it - e["iterations"]) > tol:
                fail("slot %d: %s iterations %g, the replay %g" % (
                    k, name, e["iterations"], it))
            if abs(e["run_s"] - it * rate[name]) > tol * rate[name] + 1e-6 * max(
                    1, e["run_s"]):
                fail("slot %d: %s run_s %g, the replay %g" % (
                    k, name, e["run_s"], it * rate[name]))
            ends = (S - lost) / rate[name] >= left[name] * (1 - 1e-9)
            if ends != e["finished"]:
                fail("slot %d: %s finished is %s, the replay says %s" % (
                    k, name, e["finished"], ends))
            left[name] -= it
            pos[name] = k + 1
            if ends:
                finish[name] = t0 + lost + e["run_s"]
                del alloc[name]
        seen = [x for g in alloc.values() for x in g]
        if len(seen) != len(set(seen)):
            fail("slot %d: a GPU given twice" % k)
    if alloc:
        fail("%s still run after the last event" % sorted(alloc))
    never = {n for n, j in jobs.items() if j["unschedulable"] is not None}
    if never & started:
        fail("an unschedulable job runs")
    for n in never:
        del jobs[n]
    for name, j in jobs.items():
        if name not in finish:
            fail("%s never finishes" % name)
        if (j["plan"] is None) != (name not in started):
            fail("%s: plan %s, but it %s" % (name, j["plan"], "ran" if
                                             name in started else "never ran"))
    jct = sum(finish[n] - jobs[n]["arrival_s"] for n in jobs) / len(jobs)
    want = d["summary"][d["policy"]]["avg_jct_s"]
    if abs(jct - want) > 1e-6 * want:
        fail("average JCT %g, summary says %g" % (jct, want))
    if plans is not None:
        files = set(os.listdir(plans))
        named = {os.path.basename(jobs[n]["plan"]) for n in started}
        if files != named:
            fail("plans/ holds %s, the jobs that ran name %s" % (
                sorted(files - named), sorted(named - files)))
    if finish:
        span = max(finish.values()) - min(jobs[n]["arrival_s"]
                                          for n in finish)
        got = d["summary"][d["policy"]]["makespan_s"]
        if abs(span - got) > 1e-6 * max(1, span):
            fail("makespan %g, the jobs that ran span %g" % (got, span))
    print("%d events, %d jobs checked" % (len(d["events"]), len(jobs)))


if __name__ == "__main__":
    main()
