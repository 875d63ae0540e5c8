"""Run plans/dlplan_train.py with the executor broken on purpose, to show
that tests/cli/train.sh's exactness check can fail (test-only; the
executor has no such switch).

    PYTHONPATH=plans python3 tests/cli/train_break.py BREAK OPTIONS...

BREAK: "noscale" scales each group's loss by the group's own samples
instead of the global batch; "skipseg" leaves the last layer segment out
of the gradient sync.  "smallbuckets" breaks nothing: buckets of at most
256 bytes, so that every segment's sync takes many all-reduces per
process group (the result must still equal the reference).
"""

import sys

import dlplan_exec
import dlplan_train


def noscale():
    build = dlplan_exec.Executor._build

    def broken(self):
        build(self)
        self.scale = float(self.me.samples)
    dlplan_exec.Executor._build = broken


def skipseg():
    plan = dlplan_exec.Executor._sync_plan

    def broken(self):
        last = self.arch.nlayers - 1
        return [b for b in plan(self) if b.segment[1] != last]
    dlplan_exec.Executor._sync_plan = broken


def smallbuckets():
    dlplan_exec.BUCKET_BYTES = 256


BREAKS = {"noscale": noscale, "skipseg": skipseg,
          "smallbuckets": smallbuckets}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in BREAKS:
        sys.stderr.write("usage: train_break.py noscale|skipseg|smallbuckets OPTIONS...\n")
        sys.exit(1)
    BREAKS[sys.argv[1]]()
    sys.exit(dlplan_train.main(sys.argv[2:]))
