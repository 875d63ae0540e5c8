"""Run plans/dlplan_train.py with the executor broken on purpose, to show
that tests/cli/train.sh's exactness check can fail (test-only; the
executor has no such switch).

    PYTHONPATH=plans python3 tests/cli/train_break.py BREAK OPTIONS...

BREAK: "noscale" scales each group's loss by the group's own samples
instead of the global batch; "skipseg" leaves the last layer segment out
of the gradient sync.  "smallbuckets" breaks nothing: buckets of at most
256 bytes, so that every segment's sync takes many all-reduces per
process group (the result must still equal the reference).  "noshare"
keeps each sharded optimizer step on its owner (the holders never get
each other's updated shards); "badrecompute" recomputes a checkpointed
block from a perturbed input, so that a plan whose blocks are really
recomputed trains wrong.  "smallovl" breaks nothing: overlapped-sync
buckets close at 64 elements, so that many all-reduces run under the last
backward; "earlyovl" starts each overlapped bucket under the first
backward that touches it, before the last micro-batch has added its
gradient.
"""

import sys

import torch
import torch.utils.checkpoint

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


def noshare():
    def broken(self):
        for b, lo, hi, master in self.shards:
            if hi > lo:
                master.grad = b.buf[lo:hi].clone()
        if self.zopt is not None:
            self.zopt.step()
        for b, lo, hi, master in self.shards:
            with torch.no_grad():
                flat = dlplan_exec.Executor._gather(b)
                flat[lo:hi].copy_(master.detach())
                for p, dim, plo, n, _, off in b.items:
                    v = p if dim is None else p.narrow(dim, plo, n)
                    v.copy_(flat[off:off + v.numel()].view(v.shape))
    dlplan_exec.Executor._sharded_step = broken


def badrecompute():
    real = torch.utils.checkpoint.checkpoint

    def broken(fn, x, **kw):
        first = []

        def twice(h):
            # The forward runs once; the recomputation sees h shifted
            # by a ramp over the hidden units (LayerNorm cancels a constant).
            if first:
                h = h + torch.arange(h.shape[-1], dtype=h.dtype) * 0.01
            first.append(1)
            return fn(h)
        return real(twice, x, **kw)
    torch.utils.checkpoint.checkpoint = broken


def smallovl():
    dlplan_exec.OVERLAP_BUCKET = 64
    dlplan_exec.OVERLAP_BUCKET_PER_GROUP = 0


def earlyovl():
    def broken(self, p):
        def accumulated(*_):
            if id(p) not in self._seen:
                self._seen.add(id(p))
                for k in self._of[id(p)]:
                    self._left[k] -= 1
                self._launch_ready()
        return accumulated
    dlplan_exec.Executor._hook = broken


BREAKS = {"noscale": noscale, "skipseg": skipseg,
          "smallbuckets": smallbuckets, "noshare": noshare,
          "badrecompute": badrecompute, "smallovl": smallovl,
          "earlyovl": earlyovl}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in BREAKS:
        sys.stderr.write("usage: train_break.py noscale|skipseg|smallbuckets|noshare|badrecompute|smallovl|earlyovl OPTIONS...\n")
        sys.exit(1)
    BREAKS[sys.argv[1]]()
    sys.exit(dlplan_train.main(sys.argv[2:]))
