"""dlplan_model - the decoder-only transformer dlplan_train.py runs.

The layer list is the one "dlplan model gpt" writes: layer 0 is the
embedding (token embedding and learned positions), layers 1..N are the
transformer blocks, layer N+1 is the head (final LayerNorm and the LM
head).  The head has its own weight (like "dlplan model gpt --tied no"):
a tied head would need one more gradient sync between the first and the
last stage of every group, which this reference executor leaves out.

Tensor parallelism (Megatron-LM, Shoeybi et al. 2019): inside a stage of
k GPUs every weight matrix is split by the stage's TP shares (Li, Ji and Su's
capacity-weighted decomposition; uneven when the shares are):

    embedding   token rows by vocabulary ranges; the learned positions
                sit on TP rank 0; the partial sums are all-reduced
    attention   Q, K, V column-split by heads, the output projection
                row-split by the same heads, all-reduce after it
    MLP         first matrix column-split, second row-split by ranges of
                the inner width, all-reduce after it
    head        LM head column-split by vocabulary ranges; the loss is
                computed on the split logits (vocab-parallel cross
                entropy: all-reduces of 3 numbers per token, not of the
                logits)

LayerNorms and the biases added after an all-reduce are replicated.  A
share of n items is the largest-remainder apportionment of n by the
shares (ties to the lower TP rank); a rank may get none.

Module API (no printing, no exits; errors raise ModelError), on top of
dlplan_arch.py (Arch, apportion, param_specs, local_params: no torch):
    init_full(spec, seed) -> tensor                   deterministic
    Layer(arch, layer, shares, tp_rank, comm, seed)   an nn.Module
    batch(arch, global_batch, step, seed) -> (inputs, targets)
"""

import math
import zlib

import torch
import torch.distributed as dist
import torch.nn.functional as F

if __package__:
    from .dlplan_arch import (Arch, ModelError, apportion, local_params,
                              param_specs, ranges)
    from .dlplan_config import TrainError, atomic_write
else:
    from dlplan_arch import (Arch, ModelError, apportion, local_params,
                             param_specs, ranges)
    from dlplan_config import TrainError, atomic_write

__all__ = ["Arch", "ModelError", "apportion", "param_specs", "ranges",
           "local_params", "init_full", "Layer", "batch", "TPComm",
           "make_optimizer", "save_params", "setup_torch"]


def init_full(spec, seed):
    """The full initial value of a parameter, from its name and the seed
    alone, so that every process builds the same model."""
    g = torch.Generator().manual_seed(
        (zlib.crc32(spec.name.encode()) + 7919 * seed) & 0x7fffffffffff)
    x = torch.randn(spec.shape, generator=g, dtype=torch.float64)
    if spec.kind == "ln":
        x = 1 + 0.1 * x
    else:
        x = 0.02 * x
    return x.to(torch.get_default_dtype())


class TPComm:
    """The all-reduces of one stage's TP group (group None: one GPU)."""

    def __init__(self, group, size):
        self.group = group
        self.size = size

    def all_reduce(self, x, op=dist.ReduceOp.SUM):
        if self.size > 1:
            dist.all_reduce(x, op=op, group=self.group)
        return x


class _Copy(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the gradient."""

    @staticmethod
    def forward(ctx, x, comm):
        ctx.comm = comm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return ctx.comm.all_reduce(g.clone()), None


class _Reduce(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, comm):
        return comm.all_reduce(x.clone())

    @staticmethod
    def backward(ctx, g):
        return g, None


class _VocabCE(torch.autograd.Function):
    """Cross entropy over logits split by vocabulary ranges (Megatron's
    vocab-parallel loss): each rank holds logits [lo, lo + n) of the
    vocabulary; a MAX all-reduce of one number per token, then one SUM
    all-reduce of two (the sum of exponentials and the target's logit)
    give every rank the per-token loss.  No rank sees the full logits."""

    @staticmethod
    def forward(ctx, x, targets, comm, lo):
        n = x.shape[-1]
        if n:
            m = x.max(-1)[0]
        else:
            m = x.new_full(x.shape[:-1], -math.inf)
        m = comm.all_reduce(m.contiguous(), dist.ReduceOp.MAX)
        e = (x - m.unsqueeze(-1)).exp()
        mine = (targets >= lo) & (targets < lo + n)
        idx = (targets - lo).clamp(0, max(n - 1, 0))
        both = x.new_zeros((2,) + x.shape[:-1])
        both[0] = e.sum(-1)
        if n:
            t = x.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
            both[1] = torch.where(mine, t - m, torch.zeros_like(t))
        comm.all_reduce(both)
        ctx.save_for_backward(e, both[0], mine, idx)
        return both[0].log() - both[1]

    @staticmethod
    def backward(ctx, g):
        e, se, mine, idx = ctx.saved_tensors
        grad = e / se.unsqueeze(-1)
        if grad.shape[-1]:
            grad.scatter_add_(-1, idx.unsqueeze(-1),
                              -mine.to(grad.dtype).unsqueeze(-1))
        return grad * g.unsqueeze(-1), None, None, None


class Layer(torch.nn.Module):
    """One layer's TP shard.  forward(x) takes token ids (embedding) or
    hidden states; the head takes (x, targets) and returns the per-sample
    mean token loss."""

    def __init__(self, arch, layer, shares, tp_rank, comm, seed,
                 device="cpu"):
        super().__init__()
        self.arch = arch
        self.layer = layer
        self.comm = comm
        self.tp_rank = tp_rank
        self.locals = local_params(arch, layer, shares, tp_rank)
        self.p = {}
        for i, loc in enumerate(self.locals):
            t = loc.cut(init_full(loc.spec, seed)).clone().to(device)
            prm = torch.nn.Parameter(t)
            self.register_parameter("p%d" % i, prm)
            self.p[loc.spec.name.split(".", 1)[1]] = prm
        self.vrange = None
        if layer in (0, arch.layers + 1):
            self.vrange = ranges(arch, "vocab", shares)[tp_rank]
        self.nheads = 0
        if 0 < layer <= arch.layers:
            a, b = apportion(arch.heads, shares)[tp_rank]
            self.nheads = b - a

    def named_locals(self):
        """(Local, Parameter) pairs in spec order."""
        return [(loc, getattr(self, "p%d" % i))
                for i, loc in enumerate(self.locals)]

    def forward(self, x, targets=None):
        if self.layer == 0:
            return self._embed(x)
        if self.layer == self.arch.layers + 1:
            return self._head(x, targets)
        return self._block(x)

    def _embed(self, tokens):
        p, (lo, hi) = self.p, self.vrange
        h = self.arch.hidden
        if hi > lo:
            mine = (tokens >= lo) & (tokens < hi)
            idx = (tokens - lo).clamp(0, hi - lo - 1)
            e = p["tok"][idx] * mine.unsqueeze(-1).to(p["tok"].dtype)
        else:
            e = p["tok"].new_zeros(tokens.shape + (h,))
        if "pos" in p:
            e = e + p["pos"][:tokens.shape[1]]
        return _Reduce.apply(e, self.comm)

    def _block(self, x):
        p, a = self.p, self.arch
        h, d = a.hidden, a.hidden // a.heads
        B, S = x.shape[0], x.shape[1]
        y = F.layer_norm(x, (h,), p["ln1.w"], p["ln1.b"])
        y = _Copy.apply(y, self.comm)
        q = F.linear(y, p["q.w"], p["q.b"])
        k = F.linear(y, p["k.w"], p["k.b"])
        v = F.linear(y, p["v.w"], p["v.b"])
        n = self.nheads
        q = q.view(B, S, n, d).transpose(1, 2)
        k = k.view(B, S, n, d).transpose(1, 2)
        v = v.view(B, S, n, d).transpose(1, 2)
        att = q @ k.transpose(-1, -2) / math.sqrt(d)
        mask = torch.ones(S, S, dtype=torch.bool, device=x.device).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        o = (att @ v).transpose(1, 2).reshape(B, S, n * d)
        o = _Reduce.apply(F.linear(o, p["proj.w"]), self.comm)
        x = x + o + p["proj.b"]
        y = F.layer_norm(x, (h,), p["ln2.w"], p["ln2.b"])
        y = _Copy.apply(y, self.comm)
        y = F.gelu(F.linear(y, p["fc1.w"], p["fc1.b"]))
        y = _Reduce.apply(F.linear(y, p["fc2.w"]), self.comm)
        return x + y + p["fc2.b"]

    def _head(self, x, targets):
        p, a = self.p, self.arch
        y = F.layer_norm(x, (a.hidden,), p["lnf.w"], p["lnf.b"])
        y = _Copy.apply(y, self.comm)
        loss = _VocabCE.apply(F.linear(y, p["out.w"]), targets, self.comm,
                              self.vrange[0])
        return loss.mean(1)


def batch(arch, global_batch, step, seed):
    """Inputs and targets of the whole global batch of a step: sample i
    of step t is the same in every process and every plan."""
    g = torch.Generator().manual_seed(1000003 * seed + step)
    t = torch.randint(0, arch.vocab, (global_batch, arch.seq + 1),
                      generator=g)
    return t[:, :-1], t[:, 1:]


# --- shared by the reference, the profiles and the planned run --------

def setup_torch(cfg, want):
    """Set the default dtype and the CPU threads of a TrainConfig; the
    device to run on: want is "cpu", "cuda" or "auto" (cuda when
    present)."""
    torch.set_default_dtype(getattr(torch, cfg.dtype))
    torch.set_num_threads(max(1, cfg.threads))
    if want == "cuda" and not torch.cuda.is_available():
        raise TrainError("--device cuda: torch sees no CUDA device")
    if want == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return want


def make_optimizer(cfg, params):
    """The optimizer a TrainConfig names, over params."""
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum)
    return torch.optim.AdamW(params, lr=cfg.lr,
                             weight_decay=cfg.weight_decay)


def save_params(path, arch, cfg, params, extra=None):
    d = {"arch": arch.command(), "steps": cfg.steps,
         "optimizer": cfg.optimizer, "params": params}
    d.update(extra or {})
    atomic_write(path, lambda f: torch.save(d, f), binary=True)
