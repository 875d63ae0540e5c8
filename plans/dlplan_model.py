"""dlplan_model - the decoder-only transformer dlplan_train.py runs.

The layer list is the one "dlplan model gpt" writes: layer 0 is the
embedding (token embedding and learned positions), layers 1..N are the
transformer blocks, layer N+1 is the head (final LayerNorm and the LM
head).  The head has its own weight (like "dlplan model gpt --tied no"):
a tied head would need one more gradient sync between the first and the
last stage of every group, which this reference executor leaves out.

Tensor parallelism (Megatron-LM, Shoeybi et al. 2019): inside a stage of
k GPUs every weight matrix is split by the stage's TP shares (seed 000's
capacity-weighted decomposition; uneven when the shares are):

    embedding   token rows by vocabulary ranges; the learned positions
                sit on TP rank 0; the partial sums are all-reduced
    attention   Q, K, V column-split by heads, the output projection
                row-split by the same heads, all-reduce after it
    MLP         first matrix column-split, second row-split by ranges of
                the inner width, all-reduce after it
    head        LM head column-split by vocabulary ranges; the logits are
                gathered (a zero-padded all-reduce) for the loss

LayerNorms and the biases added after an all-reduce are replicated.  A
share of n items is the largest-remainder apportionment of n by the
shares (ties to the lower TP rank); a rank may get none.

Module API (no printing, no exits; errors raise ModelError):
    Arch(layers, hidden, heads, seq, vocab, ffn=None, positions=None)
    Arch.from_model_csv(path) -> Arch or None
    apportion(n, shares) -> [(lo, hi), ...]
    param_specs(arch, layer) -> [Spec, ...]          full shapes
    local_params(arch, layer, shares, tp_rank) -> [Local, ...]
    init_full(spec, seed) -> tensor                   deterministic
    Layer(arch, layer, shares, tp_rank, comm, seed)   an nn.Module
    batch(arch, global_batch, step, seed) -> (inputs, targets)
"""

import math
import re
import zlib

import torch
import torch.nn.functional as F

__all__ = ["Arch", "ModelError", "apportion", "param_specs",
           "local_params", "init_full", "Layer", "batch", "TPComm"]


class ModelError(Exception):
    """The architecture is invalid or does not fit the plan."""


class Arch:
    def __init__(self, layers, hidden, heads, seq, vocab, ffn=None,
                 positions=None):
        self.layers = int(layers)
        self.hidden = int(hidden)
        self.heads = int(heads)
        self.seq = int(seq)
        self.vocab = int(vocab)
        self.ffn = int(ffn) if ffn else 4 * self.hidden
        self.positions = int(positions) if positions else self.seq
        for k in ("layers", "hidden", "heads", "seq", "vocab", "ffn",
                  "positions"):
            if getattr(self, k) < 1:
                raise ModelError("--%s must be at least 1" % k)
        if self.hidden % self.heads:
            raise ModelError("hidden %d is not a multiple of heads %d" %
                             (self.hidden, self.heads))
        if self.positions < self.seq:
            raise ModelError("positions %d is fewer than seq %d" %
                             (self.positions, self.seq))

    @property
    def nlayers(self):
        """Rows of the model.csv: embedding, blocks, head."""
        return self.layers + 2

    def name(self, layer):
        if layer == 0:
            return "embed"
        if layer == self.layers + 1:
            return "head"
        return "block%d" % (layer - 1)

    def command(self):
        """The dlplan model command that writes this layer list."""
        return ("dlplan model gpt --layers %d --hidden %d --heads %d "
                "--ffn %d --vocab %d --seq %d --positions %d --tied no" %
                (self.layers, self.hidden, self.heads, self.ffn,
                 self.vocab, self.seq, self.positions))

    @staticmethod
    def from_model_csv(path):
        """The architecture named by the "# dlplan model gpt ..." line of
        a model.csv, or None when the file has none."""
        try:
            with open(path, encoding="utf-8-sig") as f:
                head = [f.readline() for _ in range(4)]
        except OSError:
            return None
        for line in head:
            m = re.match(r"#\s*dlplan model (\S+)(.*)$", line)
            if not m:
                continue
            if m.group(1) != "gpt":
                raise ModelError("%s: a '%s' model; the executor runs "
                                 "gpt models only" % (path, m.group(1)))
            opts = dict(re.findall(r"--([a-z-]+)\s+(\S+)", m.group(2)))
            if opts.get("kv-heads", opts.get("heads")) != opts.get("heads"):
                raise ModelError("%s: grouped-query attention (--kv-heads)"
                                 " is not supported" % path)
            try:
                return Arch(opts["layers"], opts["hidden"], opts["heads"],
                            opts["seq"], opts["vocab"], opts.get("ffn"),
                            opts.get("positions"))
            except (KeyError, ValueError) as e:
                raise ModelError("%s: incomplete architecture line (%s)" %
                                 (path, e))
        return None


def apportion(n, shares):
    """Split n items by shares: largest remainder, ties to lower index."""
    total = float(sum(shares))
    quota = [n * s / total for s in shares]
    base = [int(math.floor(q)) for q in quota]
    left = n - sum(base)
    order = sorted(range(len(shares)), key=lambda i: (-(quota[i] - base[i]),
                                                      i))
    for i in order[:left]:
        base[i] += 1
    out, lo = [], 0
    for b in base:
        out.append((lo, lo + b))
        lo += b
    return out


class Spec:
    """One full parameter: name, shape, the dimension TP splits (None:
    not split), what it is split by ("heads", "ffn", "vocab"), and whether
    only TP rank 0 holds it (the positions)."""

    def __init__(self, name, shape, dim=None, by=None, tp0=False,
                 kind="w"):
        self.name = name
        self.shape = tuple(shape)
        self.dim = dim
        self.by = by
        self.tp0 = tp0
        self.kind = kind

    @property
    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n


def param_specs(arch, layer):
    h, F_, V = arch.hidden, arch.ffn, arch.vocab
    p = arch.name(layer) + "."
    if layer == 0:
        return [Spec(p + "tok", (V, h), 0, "vocab"),
                Spec(p + "pos", (arch.positions, h), tp0=True)]
    if layer == arch.layers + 1:
        return [Spec(p + "lnf.w", (h,), kind="ln"),
                Spec(p + "lnf.b", (h,), kind="b"),
                Spec(p + "out.w", (V, h), 0, "vocab")]
    return [Spec(p + "ln1.w", (h,), kind="ln"),
            Spec(p + "ln1.b", (h,), kind="b"),
            Spec(p + "q.w", (h, h), 0, "heads"),
            Spec(p + "q.b", (h,), 0, "heads", kind="b"),
            Spec(p + "k.w", (h, h), 0, "heads"),
            Spec(p + "k.b", (h,), 0, "heads", kind="b"),
            Spec(p + "v.w", (h, h), 0, "heads"),
            Spec(p + "v.b", (h,), 0, "heads", kind="b"),
            Spec(p + "proj.w", (h, h), 1, "heads"),
            Spec(p + "proj.b", (h,), kind="b"),
            Spec(p + "ln2.w", (h,), kind="ln"),
            Spec(p + "ln2.b", (h,), kind="b"),
            Spec(p + "fc1.w", (F_, h), 0, "ffn"),
            Spec(p + "fc1.b", (F_,), 0, "ffn", kind="b"),
            Spec(p + "fc2.w", (h, F_), 1, "ffn"),
            Spec(p + "fc2.b", (h,), kind="b")]


def _ranges(arch, by, shares):
    if by == "heads":
        d = arch.hidden // arch.heads
        return [(a * d, b * d) for a, b in apportion(arch.heads, shares)]
    if by == "ffn":
        return apportion(arch.ffn, shares)
    return apportion(arch.vocab, shares)


class Local:
    """A rank's piece of a Spec: the slice [lo, hi) of dimension dim
    (dim None: the whole tensor).  owner: this rank's copy counts when
    gradients are summed or parameters gathered (replicated tensors count
    once, from TP rank 0)."""

    def __init__(self, spec, dim, lo, hi, owner):
        self.spec = spec
        self.dim = dim
        self.lo = lo
        self.hi = hi
        self.owner = owner

    def cut(self, full):
        if self.dim is None:
            return full
        return full.narrow(self.dim, self.lo, self.hi - self.lo)


def local_params(arch, layer, shares, tp_rank):
    out = []
    for s in param_specs(arch, layer):
        if s.tp0:
            if tp_rank == 0:
                out.append(Local(s, None, 0, 0, True))
        elif s.dim is None:
            out.append(Local(s, None, 0, 0, tp_rank == 0))
        else:
            lo, hi = _ranges(arch, s.by, shares)[tp_rank]
            out.append(Local(s, s.dim, lo, hi, True))
    return out


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

    def __init__(self, group, size, busy=None):
        self.group = group
        self.size = size

    def all_reduce(self, x):
        if self.size > 1:
            import torch.distributed as dist
            dist.all_reduce(x, group=self.group)
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


class _Gather(torch.autograd.Function):
    """Gather the last dimension from [lo, hi) pieces (a zero-padded
    all-reduce, exact and fine with uneven pieces); backward: the piece."""

    @staticmethod
    def forward(ctx, x, comm, lo, n):
        ctx.lo, ctx.hi = lo, lo + x.shape[-1]
        full = x.new_zeros(x.shape[:-1] + (n,))
        full[..., ctx.lo:ctx.hi] = x
        return comm.all_reduce(full)

    @staticmethod
    def backward(ctx, g):
        return g[..., ctx.lo:ctx.hi].contiguous(), None, None, None


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
            self.vrange = _ranges(arch, "vocab", shares)[tp_rank]
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
        logits = _Gather.apply(F.linear(y, p["out.w"]), self.comm,
                               self.vrange[0], a.vocab)
        B, S = targets.shape
        loss = F.cross_entropy(logits.reshape(B * S, a.vocab),
                               targets.reshape(B * S), reduction="none")
        return loss.view(B, S).mean(1)


def batch(arch, global_batch, step, seed):
    """Inputs and targets of the whole global batch of a step: sample i
    of step t is the same in every process and every plan."""
    g = torch.Generator().manual_seed(1000003 * seed + step)
    t = torch.randint(0, arch.vocab, (global_batch, arch.seq + 1),
                      generator=g)
    return t[:, :-1], t[:, 1:]
