"""tests/e2e/worker.py - one rank of the end-to-end launcher tests.

Started by dlplan's launch files (worker.sh execs "$DLPLAN_PYTHON
worker.py OUTDIR ARGS...").  It joins the job's process group with
torch.distributed (gloo on CPU, env:// from the launcher), all-reduces a
one so that every rank sees the world size only if all ranks formed one
group, reads its assignment with plans/dlplan_plan.py, and writes what it
saw as one JSON object to OUTDIR/rank-N.json (and a line on stdout):
torch's rank and world size, the all-reduce result, the launcher's and
dlplan's environment, the Slurm node it ran on, the reader's view, and the
arguments it was given (to prove they arrived unchanged).
"""

import datetime
import json
import os
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "plans"))

import dlplan_plan  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
       "MASTER_ADDR", "MASTER_PORT", "SLURMD_NODENAME", "SLURM_PROCID",
       "DLPLAN_PLAN", "DLPLAN_RANK", "DLPLAN_NODE", "DLPLAN_GPU",
       "DLPLAN_GROUP", "DLPLAN_STAGE", "DLPLAN_LAYERS", "DLPLAN_MICROBATCHES",
       "DLPLAN_TP_RANK", "DLPLAN_TP_SIZE", "DLPLAN_TP_SHARE")


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: worker.py OUTDIR [ARGS...]\n")
        return 2
    out = sys.argv[1]
    dist.init_process_group("gloo", init_method="env://",
                            timeout=datetime.timedelta(seconds=90))
    rank, world = dist.get_rank(), dist.get_world_size()
    t = torch.ones(1)
    dist.all_reduce(t)
    me = dlplan_plan.assignment()
    rec = {
        "rank": rank,
        "world_size": world,
        "all_reduce": t.item(),
        "hostname": socket.gethostname(),
        "env": {k: os.environ.get(k) for k in ENV},
        "plan": me.as_dict(),
        "args": sys.argv[2:],
    }
    tmp = os.path.join(out, ".rank-%d.json" % rank)
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(rec, f, sort_keys=True)
    os.rename(tmp, os.path.join(out, "rank-%d.json" % rank))
    print(json.dumps(rec, sort_keys=True), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
