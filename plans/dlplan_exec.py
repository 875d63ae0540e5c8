"""dlplan_exec - one rank of a planned run (used by dlplan_train.py).

Executor(plan, me, arch, cfg, device, global_batch, slow)
    run()    join the process group, build the rank's layers, train
             cfg.steps iterations (cfg: a dlplan_config.TrainConfig), log
             and dump as asked
    close()  leave the process group

One iteration on a rank of group g, stage s of S, m = the group's
micro-batches, mu = the plan's micro-batch:

 1. Data: the global batch of the step (dlplan_model.batch, the same in
    every process); group g takes samples [off_g, off_g + m*mu) with
    off_g = mu * (micro-batches of the groups before g), micro-batch j the
    j-th mu of them.  Each micro-batch's loss is the sum of its per-sample
    losses divided by the global batch, so the gradients summed over all
    micro-batches of all groups are the gradient of the mean loss.
 2. 1F1B: min(S-s-1, m) warm-up forwards, then one forward and one
    backward alternately, then the remaining backwards.  Activations go
    forward and their gradients backward with point-to-point messages:
    rank t of a stage of TP size b receives from rank t mod a of the
    previous stage (TP size a), which sends to every rank t' of the next
    stage with t' mod a = t (all TP ranks of a stage hold the same
    activations after the stage's all-reduce).  Sends are asynchronous and
    waited for at the end of the pipeline phase.
 3. Sync (two or more groups), after the pipeline phase (options.overlap
    "none"; "dp" below): for every
    segment of Plan.segments(), each parameter of the segment is cut into
    pieces that one rank of every group holds whole (the boundaries of all
    groups' TP ranges of it); the pieces with the same holders go into one
    bucket (at most BUCKET_BYTES), and each bucket is all-reduced over a
    process group of exactly its holders.  Only what a rank holds is sent:
    no padding to the full segment.  A replicated tensor (LayerNorm, bias
    after an all-reduce) is held by every TP rank of a stage; TP rank 0
    sends its gradient and the others zeros of the same (small) size, so
    each group counts once and every copy gets the sum.  Buckets run in one
    order on every rank (segment, then holders), so blocking all-reduces on
    overlapping groups cannot deadlock.
 3'. With options.overlap "dp" the same pieces are all-reduced bucket by
    bucket under the stage's last backward, as PyTorch DDP and Megatron-
    LM's --overlap-grad-reduce do: the rank's pieces from the last layer
    back (the order the backward produces them) go into buckets of one
    holder set each, a bucket closing once it holds overlap_bucket()
    elements; a gradient hook on every parameter counts what the last
    micro-batch's backward has accumulated, and each bucket, once whole
    and after the ones before it, is copied out and all-reduced
    asynchronously.  After the pipeline the rank waits for them and
    copies the sums back.  Every holder cuts the same list at the same
    places and launches it in that order, so each process group sees
    one sequence of collectives.
 4. The optimizer steps on every rank; shards step elementwise as the
    whole tensor would.  With options.optimizer "sharded" (ZeRO stage 1:
    Megatron's --use-distributed-optimizer) each sync bucket's flat
    buffer is cut into one contiguous shard per holder; a rank keeps
    master copies and optimizer state of its shards only, steps them with
    the all-reduced gradient, and the holders then all-reduce the updated
    values (each shard from its owner, zeros elsewhere) into every copy.
    Parameters in no bucket (a single group) step locally, as replicated.

Recomputation: the first recompute_layers transformer blocks of a stage
(plan.json, options.recompute "full") run under torch.utils.checkpoint:
their forward keeps only its input and runs again in backward, TP
all-reduces included, on every TP rank of the stage alike.

The step log has, per rank and step, "seconds" (start of the step to the
end of its pipeline phase, without the sync and the optimizer: what
dlplan replan --observed expects), "samples" (its group's) and
"compute_seconds" (the time spent in forward and backward, the TP
all-reduces included, receives and waits excluded) and "x_step_seconds"
(the whole iteration: pipeline, sync and optimizer step).  The trace has
a row per pass (op F, B), per sync bucket (op R, micro_batch the bucket's
number: wait_s when its gradients were copied out, start_s when its
all-reduce was started, end_s when it had ended) and per optimizer step
(op O).

Tests break a run on purpose by patching Executor (tests/cli/
train_break.py): the loss scale is the attribute "scale" set by _build(),
and _sync_plan() returns the rank's buckets, each with its segment.
"""

import dataclasses
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.utils.checkpoint

if __package__:
    from .dlplan_model import (Layer, TPComm, batch, make_optimizer,
                               param_specs, ranges, save_params,
                               setup_torch)
    from .dlplan_pipe import order
else:
    from dlplan_model import (Layer, TPComm, batch, make_optimizer,
                              param_specs, ranges, save_params,
                              setup_torch)
    from dlplan_pipe import order

__all__ = ["Executor", "setup_torch", "sync_pieces", "BUCKET_BYTES",
           "overlap_bucket"]

# Largest gradient bucket of the sync, in bytes (PyTorch DDP's default).
BUCKET_BYTES = 25 << 20
# A bucket of the overlapped sync closes once it holds
# max(OVERLAP_BUCKET, OVERLAP_BUCKET_PER_GROUP x groups) elements:
# Megatron-LM's bucket size, from which dlplan counts a unit's n_u buckets
# (dlplan(1) ALGORITHMS, Overlap).
OVERLAP_BUCKET = 40_000_000
OVERLAP_BUCKET_PER_GROUP = 1_000_000


def overlap_bucket(groups):
    """Elements a bucket of the overlapped sync holds before it closes."""
    return max(OVERLAP_BUCKET, OVERLAP_BUCKET_PER_GROUP * groups)


@dataclasses.dataclass
class Piece:
    """Part of one parameter that the same ranks hold: the slice [lo, hi)
    of dimension dim (dim None: the whole tensor) and the ranks that hold
    it, one per group, or every TP rank of a stage for a replicated one."""

    layer: int
    spec: object
    dim: object
    lo: int
    hi: int
    holders: tuple

    @property
    def numel(self):
        if self.dim is None:
            return self.spec.numel
        return self.spec.numel // self.spec.shape[self.dim] * \
            (self.hi - self.lo)


def sync_pieces(plan, arch):
    """Every piece of every segment, as [(segment, [Piece...]), ...] in
    segment order: the same list on every rank."""
    out = []
    for first, last in plan.segments():
        hold = [next(s for s in g.stages if s.first <= first <= s.last)
                for g in plan.groups]
        pieces = []
        for i in range(first, last + 1):
            for sp in param_specs(arch, i):
                if sp.tp0:
                    pieces.append(Piece(i, sp, None, 0, 0, tuple(sorted(
                        s.ranks[0] for s in hold))))
                elif sp.dim is None:
                    pieces.append(Piece(i, sp, None, 0, 0, tuple(sorted(
                        r for s in hold for r in s.ranks))))
                else:
                    rg = [ranges(arch, sp.by, s.tp_shares) for s in hold]
                    cuts = sorted({b for r in rg for lo_hi in r
                                   for b in lo_hi})
                    for lo, hi in zip(cuts, cuts[1:]):
                        if hi <= lo:
                            continue
                        who = tuple(sorted(
                            s.ranks[next(t for t, (a, b) in enumerate(r)
                                         if a <= lo < b)]
                            for s, r in zip(hold, rg)))
                        pieces.append(Piece(i, sp, sp.dim, lo, hi, who))
        out.append(((first, last), pieces))
    return out


@dataclasses.dataclass
class Bucket:
    """One all-reduce of the sync: pieces of one segment with the same
    holders.  items: (param, local dim, local lo, n, sends, offset)."""

    segment: tuple
    holders: tuple
    group: object = None
    items: list = dataclasses.field(default_factory=list)
    size: int = 0
    buf: object = None


class Executor:
    def __init__(self, plan, me, arch, cfg, device, global_batch, slow):
        self.plan = plan
        self.me = me
        self.arch = arch
        self.cfg = cfg
        self.dev = device
        self.gb = global_batch
        self.slow = slow.get(me.rank, 1.0)
        self.busy = 0.0
        self.joined = False
        self.trace = []     # (step, op, micro-batch, wait, start, end)
        self.cur_step = 0
        self.overlap = plan.overlap == "dp"
        self._armed = False

    # --- set-up --------------------------------------------------------

    def _join(self):
        backend = "nccl" if self.dev == "cuda" else "gloo"
        if self.dev == "cuda":
            n = torch.cuda.device_count()
            lr = int(os.environ.get("LOCAL_RANK", "0"))
            torch.cuda.set_device(self.me.gpu if self.me.gpu < n else lr % n)
            self.dev = "cuda:%d" % torch.cuda.current_device()
        dist.init_process_group(
            backend, init_method="env://",
            timeout=datetime.timedelta(seconds=self.cfg.timeout))
        self.joined = True
        # Every rank creates every group, in plan order (new_group needs
        # all ranks).  TP groups first, then one group per segment.
        plan, me = self.plan, self.me
        self.tpg = None
        for g in plan.groups:
            for s in g.stages:
                if len(s.ranks) > 1:
                    pg = dist.new_group(s.ranks)
                    if me.rank in s.ranks:
                        self.tpg = pg
        self.pieces = sync_pieces(plan, self.arch) \
            if len(plan.groups) > 1 else []
        sets = sorted({p.holders for _, ps in self.pieces for p in ps})
        self.sync_groups = {}
        for h in sets:
            pg = dist.new_group(list(h))
            if me.rank in h:
                self.sync_groups[h] = pg

    def _build(self):
        me, plan = self.me, self.plan
        stage = plan.groups[me.group].stages[me.stage]
        self.stage = stage
        self.comm = TPComm(self.tpg, me.tp_size)
        self.layers = [Layer(self.arch, i, stage.tp_shares, me.tp_rank,
                             self.comm, self.cfg.seed, self.dev)
                       for i in me.layers]
        self.params = [p for m in self.layers for p in m.parameters()]
        stages = plan.groups[me.group].stages
        self.prev = stages[me.stage - 1] if me.stage > 0 else None
        self.next = stages[me.stage + 1] if me.stage + 1 < len(stages) \
            else None
        t = me.tp_rank
        # Forward: from prev, to next; backward: the other way round.
        self.src_fwd = self._source(self.prev, t)
        self.dst_fwd = self._targets(self.next, t, me.tp_size)
        self.src_bwd = self._source(self.next, t)
        self.dst_bwd = self._targets(self.prev, t, me.tp_size)
        off = sum(g.micro_batches for g in plan.groups[:me.group])
        self.offset = off * plan.micro_batch
        self.scale = float(self.gb)
        if self.overlap:
            self.buckets = self._overlap_plan()
            self._hook_params()
        else:
            self.buckets = self._sync_plan()
        self._make_optimizers()

    def _make_optimizers(self):
        """The replicated optimizer over the rank's parameters, or with a
        sharded plan one over the rank's shards of every bucket (masters)
        and one over the parameters in no bucket."""
        self.shards = []
        local = self.params
        if self.plan.optimizer == "sharded" and self.buckets:
            inb = {id(it[0]) for b in self.buckets for it in b.items}
            local = [p for p in self.params if id(p) not in inb]
            for b in self.buckets:
                n, i = len(b.holders), b.holders.index(self.me.rank)
                lo, hi = b.size * i // n, b.size * (i + 1) // n
                flat = self._gather(b)
                master = torch.nn.Parameter(flat[lo:hi].clone())
                self.shards.append((b, lo, hi, master))
            masters = [m for _, lo, hi, m in self.shards if hi > lo]
            self.zopt = make_optimizer(self.cfg, masters) if masters \
                else None
        self.opt = make_optimizer(self.cfg, local) if local else None

    @staticmethod
    def _gather(b):
        """The bucket's parameter values, flat, in the order of its
        gradient buffer."""
        flat = torch.empty_like(b.buf)
        for p, dim, lo, n, _, off in b.items:
            v = p.detach() if dim is None else p.detach().narrow(dim, lo, n)
            flat[off:off + v.numel()].copy_(v.reshape(-1))
        return flat

    def _sharded_step(self):
        """Step the rank's shards with the all-reduced gradients (still in
        each bucket's buffer after _sync()), then give every holder the
        updated values of every shard."""
        for b, lo, hi, master in self.shards:
            if hi > lo:
                master.grad = b.buf[lo:hi].clone()
        if self.zopt is not None:
            self.zopt.step()
        for b, lo, hi, master in self.shards:
            upd = torch.zeros_like(b.buf)
            upd[lo:hi].copy_(master.detach())
            dist.all_reduce(upd, group=b.group)
            with torch.no_grad():
                for p, dim, plo, n, _, off in b.items:
                    v = p if dim is None else p.narrow(dim, plo, n)
                    v.copy_(upd[off:off + v.numel()].view(v.shape))

    @staticmethod
    def _source(stage, t):
        return None if stage is None else stage.ranks[t % len(stage.ranks)]

    @staticmethod
    def _targets(stage, t, mine):
        if stage is None:
            return []
        return [r for j, r in enumerate(stage.ranks) if j % mine == t]

    # --- one iteration ---------------------------------------------------

    def _timed(self, fn):
        t0 = time.perf_counter()
        out = fn()
        if self.dev.startswith("cuda"):
            torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if self.slow > 1:
            time.sleep((self.slow - 1) * dt)
            dt *= self.slow
        self.busy += dt
        return out

    def _forward(self, j, x, y):
        me, mu = self.me, self.plan.micro_batch
        t_wait = time.monotonic()
        if me.is_first_stage:
            inp = x[j * mu:(j + 1) * mu]
        else:
            inp = torch.empty(mu, self.arch.seq, self.arch.hidden,
                              device=self.dev)
            dist.recv(inp, self.src_fwd, tag=2 * j)
            inp.requires_grad_()
        t_in = time.monotonic()
        tgt = y[j * mu:(j + 1) * mu]

        def run():
            h, left = inp, self.me.recompute
            for m in self.layers:
                if m.layer == self.arch.layers + 1:
                    return m(h, tgt).sum() / self.scale
                if left > 0 and 0 < m.layer <= self.arch.layers:
                    left -= 1
                    h = torch.utils.checkpoint.checkpoint(
                        m, h, use_reentrant=False)
                else:
                    h = m(h)
            return h
        out = self._timed(run)
        self.trace.append((self.cur_step, 0, j, t_wait, t_in,
                           time.monotonic()))
        if not me.is_last_stage:
            snd = out.detach()
            for r in self.dst_fwd:
                self.sends.append((dist.isend(snd, r, tag=2 * j), snd))
        return inp, out

    def _backward(self, j, inp, out):
        me = self.me
        t_wait = time.monotonic()
        if me.is_last_stage:
            t_in = t_wait
            self._timed(lambda: out.backward())
        else:
            g = torch.empty_like(out)
            dist.recv(g, self.src_bwd, tag=2 * j + 1)
            t_in = time.monotonic()
            self._timed(lambda: torch.autograd.backward(out, g))
        self.trace.append((self.cur_step, 1, j, t_wait, t_in,
                           time.monotonic()))
        if not me.is_first_stage:
            gi = inp.grad.detach()
            for r in self.dst_bwd:
                self.sends.append((dist.isend(gi, r, tag=2 * j + 1), gi))

    def _pipeline(self, x, y):
        me = self.me
        m = me.micro_batches
        self.sends = []
        live = {}
        # The 1F1B order dlplan prices (dlplan_pipe.order()); the last
        # pass is the last micro-batch's backward, under which the
        # overlapped sync starts.
        ops = order(me.nstages, me.stage, m)
        for k, (op, j, _) in enumerate(ops):
            if op == "F":
                live[j] = self._forward(j, x, y)
            else:
                self._armed = self.overlap and k == len(ops) - 1
                self._backward(j, *live.pop(j))
        self._armed = False
        for w, _ in self.sends:
            w.wait()
        self.sends = []

    def _locals(self):
        return {loc.spec.name: (loc, p) for m in self.layers
                for loc, p in m.named_locals()}

    @staticmethod
    def _add_piece(b, pc, params):
        loc, p = params[pc.spec.name]
        if pc.dim is None:
            b.items.append((p, None, 0, pc.numel, loc.owner, b.size))
        else:
            b.items.append((p, pc.dim, pc.lo - loc.lo, pc.hi - pc.lo, True,
                            b.size))
        b.size += pc.numel

    def _sync_plan(self):
        """The rank's buckets, in the order every rank runs them."""
        me = self.me
        params = self._locals()
        width = torch.tensor([], dtype=torch.get_default_dtype()).\
            element_size()
        out = []
        for seg, pieces in self.pieces:
            by = {}
            for pc in pieces:
                if me.rank in pc.holders:
                    by.setdefault(pc.holders, []).append(pc)
            for h in sorted(by):
                b = None
                for pc in by[h]:
                    if b is None or (b.size and (b.size + pc.numel) *
                                     width > BUCKET_BYTES):
                        b = Bucket(seg, h, self.sync_groups[h])
                        out.append(b)
                    self._add_piece(b, pc, params)
        for b in out:
            b.buf = torch.empty(b.size, device=self.dev)
        return out

    def _overlap_plan(self):
        """The rank's buckets of the overlapped sync, in the order it
        starts them: its pieces from the last layer back, each holder
        set's into buckets that close at overlap_bucket() elements.  A
        bucket's segment is the span of layers it holds."""
        params, cap = self._locals(), overlap_bucket(len(self.plan.groups))
        out, cur = [], {}
        for seg, pieces in reversed(self.pieces):
            for pc in reversed(pieces):
                if self.me.rank not in pc.holders:
                    continue
                b = cur.get(pc.holders)
                if b is None or b.size >= cap:
                    b = Bucket(seg, pc.holders, self.sync_groups[pc.holders])
                    cur[pc.holders] = b
                    out.append(b)
                b.segment = (min(b.segment[0], seg[0]),
                             max(b.segment[1], seg[1]))
                self._add_piece(b, pc, params)
        for b in out:
            b.buf = torch.empty(b.size, device=self.dev)
        return out

    def _hook_params(self):
        """A hook on the gradient accumulator of every parameter in a
        bucket (the node autograd runs after adding a pass's gradient to
        .grad, where DDP hooks it); only the armed backward counts."""
        self._of = {}
        for k, b in enumerate(self.buckets):
            for it in b.items:
                self._of.setdefault(id(it[0]), set()).add(k)
        self._need = [len({id(it[0]) for it in b.items})
                      for b in self.buckets]
        self._accs = []
        for p in self.params:
            if id(p) in self._of:
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(self._hook(p))
                self._accs.append(acc)   # the hook lives as long as acc
        self._reset_overlap()

    def _hook(self, p):
        def accumulated(*_):
            if self._armed and id(p) not in self._seen:
                self._seen.add(id(p))
                for k in self._of[id(p)]:
                    self._left[k] -= 1
                self._launch_ready()
        return accumulated

    def _reset_overlap(self):
        self._seen = set()
        self._left = list(self._need)
        self._next = 0
        self._works = []

    def _launch_ready(self, force=False):
        """Start every bucket whose gradients are all there, in order;
        with force all that are left."""
        while self._next < len(self.buckets) and \
                (force or self._left[self._next] == 0):
            b = self.buckets[self._next]
            t_copy = time.monotonic()
            self._fill(b)
            t0 = time.monotonic()
            work = dist.all_reduce(b.buf, group=b.group, async_op=True)
            done = [None]

            def ended(fut, done=done):
                done[0] = time.monotonic()
                return fut.value()
            self._works.append((work, work.get_future().then(ended), done,
                                t_copy, t0))
            self._next += 1

    def _finish_overlap(self):
        """Wait for the overlapped sync and copy the sums back."""
        self._launch_ready(force=True)
        for k, (work, fut, done, t_copy, t0) in enumerate(self._works):
            work.wait()
            fut.wait()
            self._unfill(self.buckets[k])
            self.trace.append((self.cur_step, 2, k, t_copy, t0, done[0]))
        self._reset_overlap()

    @staticmethod
    def _piece(p, dim, lo, n):
        g = p.grad
        return g if dim is None else g.narrow(dim, lo, n)

    def _fill(self, b):
        """Copy the rank's gradients of bucket b into its buffer."""
        for p, dim, lo, n, sends, off in b.items:
            g = self._piece(p, dim, lo, n)
            dst = b.buf[off:off + g.numel()].view(g.shape)
            if sends:
                dst.copy_(g)
            else:
                dst.zero_()

    def _unfill(self, b):
        for p, dim, lo, n, sends, off in b.items:
            g = self._piece(p, dim, lo, n)
            g.copy_(b.buf[off:off + g.numel()].view(g.shape))

    def _sync(self):
        for k, b in enumerate(self.buckets):
            t_copy = time.monotonic()
            self._fill(b)
            t0 = time.monotonic()
            dist.all_reduce(b.buf, group=b.group)
            self.trace.append((self.cur_step, 2, k, t_copy, t0,
                               time.monotonic()))
            self._unfill(b)

    def step(self, step):
        gx, gy = batch(self.arch, self.gb, step, self.cfg.seed)
        n = self.me.samples
        x = gx[self.offset:self.offset + n].to(self.dev)
        y = gy[self.offset:self.offset + n].to(self.dev)
        self.busy = 0.0
        self.cur_step = step + self.cfg.first_step
        for p in self.params:
            p.grad.zero_()
        t0 = time.perf_counter()
        self._pipeline(x, y)
        t1 = time.perf_counter()
        if self.overlap:
            self._finish_overlap()
        else:
            self._sync()
        t_opt = time.monotonic()
        if self.opt is not None:
            self.opt.step()
        if self.shards:
            self._sharded_step()
        if self.dev.startswith("cuda"):
            torch.cuda.synchronize()
        self.trace.append((self.cur_step, 3, 0, t_opt, t_opt,
                           time.monotonic()))
        return t1 - t0, self.busy, time.perf_counter() - t0

    # --- run -------------------------------------------------------------

    def run(self):
        self._join()
        self._build()
        for m in self.layers:
            for p in m.parameters():
                p.grad = torch.zeros_like(p)
        log = []
        for step in range(self.cfg.steps):
            log.append((step + self.cfg.first_step,) + self.step(step))
        if self.cfg.log:
            self._write_log(log)
        if self.cfg.trace:
            self._write_trace()
        if self.cfg.dump_params:
            self._dump()
        dist.barrier()

    def _write_log(self, log):
        w = self.plan.world_size
        mine = torch.tensor([t[1:] for t in log], dtype=torch.float64)
        if self.dev.startswith("cuda"):
            mine = mine.to(self.dev)
        parts = [torch.zeros_like(mine) for _ in range(w)]
        dist.all_gather(parts, mine)
        if self.me.rank != 0:
            return
        path = self.cfg.log
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        rows = []
        for k, t in enumerate(log):
            for r in range(w):
                s, b, a = parts[r][k].tolist()
                rows.append("%d,%d,%.9g,%d,%.9g,%.9g" % (
                    r, t[0], s, self.plan.ranks[r].samples, b, a))
        with open(path, "a", encoding="utf-8") as f:
            if new:
                f.write("rank,step,seconds,samples,compute_seconds,"
                        "x_step_seconds\n")
            f.write("\n".join(rows) + "\n")

    def _write_trace(self):
        """Rank 0 writes every rank's forward and backward passes:
        when the rank began to wait for its input, when the input was
        there (the pass began) and when the pass ended, in seconds of
        one monotonic clock (comparable between the ranks of one host
        only); then its sync buckets and optimizer steps (module
        docstring)."""
        parts = [None] * self.plan.world_size
        dist.all_gather_object(parts, self.trace)
        if self.me.rank != 0:
            return
        rows = []
        for r, tr in enumerate(parts):
            me = self.plan.ranks[r]
            for st, op, j, w, a, b in tr:
                rows.append("%d,%d,%d,%d,%d,%s,%d,%.9f,%.9f,%.9f" % (
                    r, st, me.group, me.stage, me.tp_rank, "FBRO"[op], j,
                    w, a, b))
        path = self.cfg.trace
        new = not os.path.exists(path) or os.path.getsize(path) == 0
        with open(path, "a", encoding="utf-8") as f:
            if new:
                f.write("rank,step,group,stage,tp_rank,op,micro_batch,"
                        "wait_s,start_s,end_s\n")
            f.write("\n".join(rows) + "\n")

    def _dump(self):
        """Every group's copy of the full model, summed over the world
        into its own slot; rank 0 writes group 0's and how far the other
        groups' copies are from it (0: the sync kept them equal)."""
        arch, G = self.arch, len(self.plan.groups)
        specs = [sp for i in range(arch.nlayers)
                 for sp in param_specs(arch, i)]
        size = sum(sp.numel for sp in specs)
        buf = torch.zeros(G * size, dtype=torch.float64, device=self.dev)
        base = self.me.group * size
        offs, off = {}, 0
        for sp in specs:
            offs[sp.name] = off
            off += sp.numel
        for m in self.layers:
            for loc, p in m.named_locals():
                if not loc.owner:
                    continue
                o = base + offs[loc.spec.name]
                full = buf[o:o + loc.spec.numel].view(loc.spec.shape)
                loc.cut(full).copy_(p.detach())
        dist.all_reduce(buf)
        if self.me.rank != 0:
            return
        buf = buf.cpu()
        slots = buf.view(G, size)
        diff = (slots - slots[0]).abs().max().item() if G > 1 else 0.0
        params = {}
        for sp in specs:
            o = offs[sp.name]
            params[sp.name] = slots[0, o:o + sp.numel].view(
                sp.shape).to(torch.get_default_dtype()).clone()
        save_params(self.cfg.dump_params, arch, self.cfg, params,
                    {"groups_max_diff": diff,
                     "plan": os.path.abspath(self.plan.path or "")})

    def close(self):
        if self.joined:
            dist.destroy_process_group()
            self.joined = False
