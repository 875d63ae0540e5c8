"""dlplan_arch - the layer list and the tensor-parallel split of the
model dlplan_train.py runs (standard library only; dlplan_model.py builds
the layers with PyTorch).  See dlplan_model.py for the model and the
split.

    Arch(layers, hidden, heads, seq, vocab, ffn=None, positions=None)
    Arch.from_model_csv(path) -> Arch or None
    apportion(n, shares) -> [(lo, hi), ...]
    param_specs(arch, layer) -> [Spec, ...]          full shapes
    local_params(arch, layer, shares, tp_rank) -> [Local, ...]
    ranges(arch, by, shares) -> [(lo, hi), ...] per TP rank; by is
        "heads" (in hidden columns), "ffn" or "vocab"
"""

import math
import re

__all__ = ["Arch", "ModelError", "Spec", "Local", "apportion",
           "param_specs", "local_params", "ranges"]


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
        return Arch.from_model_lines(head, path)

    @staticmethod
    def from_model_lines(head, path):
        """The architecture named by the "# dlplan model gpt ..." line
        among the first lines head of the model.csv path, or None."""
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


def ranges(arch, by, shares):
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
            lo, hi = ranges(arch, s.by, shares)[tp_rank]
            out.append(Local(s, s.dim, lo, hi, True))
    return out
