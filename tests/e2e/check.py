"""tests/e2e/check.py - check what the ranks of a launcher run reported.

    python3 check.py PLAN.json OUTDIR NODEVAR [ARGS...]

Reads the plan as written (standard library JSON, not dlplan_plan.py, so
that the reader is checked too), numbers its ranks as dlplan does (groups,
stages, GPUs in "gpus" order) and checks OUTDIR/rank-N.json of every rank
(tests/e2e/worker.py writes them): torch.distributed's rank and world size
are the plan's, the all-reduce over all ranks gave the world size (one
process group), the rank ran on its planned node (NODEVAR names the
environment variable that tells: SLURMD_NODENAME under Slurm; DLPLAN_NODE
when all "nodes" are this machine), its DLPLAN_* variables and the
reader's view hold its planned stage, layers, micro-batches, GPU and TP
share, and the training arguments arrived unchanged.  Prints one line per
problem and exits 1 if there was any.
"""

import json
import os
import sys


def main():
    plan_path, outdir, nodevar = sys.argv[1:4]
    args = sys.argv[4:]
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    want = []
    for g, group in enumerate(plan["groups"]):
        for s, st in enumerate(group["stages"]):
            k = len(st["gpus"])
            shares = st.get("tp_shares") or [1.0 / k] * k
            for j, gpu in enumerate(st["gpus"]):
                want.append({
                    "node": st["node"], "gpu": gpu, "group": g, "stage": s,
                    "layers": st["layers"],
                    "micro_batches": group["micro_batches"],
                    "tp_rank": j, "tp_size": k, "tp_share": shares[j]})
    world = len(want)
    bad = []
    files = sorted(n for n in os.listdir(outdir) if n.startswith("rank-"))
    if len(files) != world:
        bad.append("%d rank files, expected %d: %s" %
                   (len(files), world, " ".join(files)))
    for r, w in enumerate(want):
        path = os.path.join(outdir, "rank-%d.json" % r)
        if not os.path.exists(path):
            bad.append("rank %d did not report" % r)
            continue
        with open(path, encoding="utf-8") as f:
            got = json.load(f)
        env = got["env"]

        def expect(what, value, wanted):
            if value != wanted:
                bad.append("rank %d: %s is %r, planned %r" %
                           (r, what, value, wanted))

        expect("torch rank", got["rank"], r)
        expect("world size", got["world_size"], world)
        expect("all_reduce", got["all_reduce"], float(world))
        expect("node (%s)" % nodevar, env.get(nodevar), w["node"])
        expect("RANK", env.get("RANK"), str(r))
        expect("DLPLAN_RANK", env.get("DLPLAN_RANK"), str(r))
        expect("DLPLAN_PLAN", env.get("DLPLAN_PLAN"),
               os.path.abspath(plan_path))
        expect("DLPLAN_NODE", env.get("DLPLAN_NODE"), w["node"])
        expect("DLPLAN_GPU", env.get("DLPLAN_GPU"), str(w["gpu"]))
        expect("DLPLAN_GROUP", env.get("DLPLAN_GROUP"), str(w["group"]))
        expect("DLPLAN_STAGE", env.get("DLPLAN_STAGE"), str(w["stage"]))
        expect("DLPLAN_LAYERS", env.get("DLPLAN_LAYERS"),
               "%d:%d" % tuple(w["layers"]))
        expect("DLPLAN_MICROBATCHES", env.get("DLPLAN_MICROBATCHES"),
               str(w["micro_batches"]))
        expect("DLPLAN_TP_RANK", env.get("DLPLAN_TP_RANK"),
               str(w["tp_rank"]))
        expect("DLPLAN_TP_SIZE", env.get("DLPLAN_TP_SIZE"),
               str(w["tp_size"]))
        share = env.get("DLPLAN_TP_SHARE")
        expect("DLPLAN_TP_SHARE", share is not None and float(share),
               w["tp_share"])
        p = got["plan"]
        expect("reader node", p["node"], w["node"])
        expect("reader stage", [p["group"], p["stage"]],
               [w["group"], w["stage"]])
        expect("reader layers", p["layers"], w["layers"])
        expect("reader micro_batches", p["micro_batches"],
               w["micro_batches"])
        expect("reader gpu", p["gpu"], w["gpu"])
        expect("reader tp_share", p["tp_share"], w["tp_share"])
        expect("arguments", got["args"], args)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
