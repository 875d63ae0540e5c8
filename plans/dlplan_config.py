"""dlplan_config - the options of a training run, as one typed object.

dlplan_train.py's command line builds a TrainConfig once; everything
below the command line (the model helpers, the executor, the profiles)
takes it instead of argparse's namespace.  Standard library only.
"""

import dataclasses
import os
import tempfile

__all__ = ["TrainConfig", "TrainError", "atomic_write", "check_output"]


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """What a run does besides the plan: steps, seed, optimizer,
    numerics and the files it writes (None: not written)."""

    steps: int = 3
    seed: int = 1
    optimizer: str = "adamw"        # "adamw" or "sgd"
    lr: float = 1e-3
    weight_decay: float = 0.01
    momentum: float = 0.0
    dtype: str = "float32"          # "float32" or "float64"
    threads: int = 1
    timeout: float = 300.0
    first_step: int = 0
    log: str = None
    trace: str = None
    dump_params: str = None

    @classmethod
    def from_namespace(cls, ns):
        """The fields of an argparse namespace that has them all."""
        return cls(**{f.name: getattr(ns, f.name)
                      for f in dataclasses.fields(cls)})


class TrainError(Exception):
    """The plan or the options cannot be run as asked (exit 2)."""


def atomic_write(path, write, binary=False):
    """Write path as dlplan writes its outputs: write(f) fills a new
    temporary file beside it (an unpredictable name, created exclusively,
    so a link planted there is never followed), which is synced and
    renamed over path; on any failure it is removed and path is left as
    it was.  A link at path is replaced, not written through."""
    d, base = os.path.split(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=base + ".tmp-", dir=d)
    try:
        with os.fdopen(fd, "wb" if binary else "w",
                       **({} if binary else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        um = os.umask(0)
        os.umask(um)
        os.chmod(tmp, 0o666 & ~um)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def check_output(opt, path, kind="file"):
    """Refuse, before any work, an output path that cannot be written:
    TrainError naming the option.  kind "file": a file to replace or
    append to, in an existing directory; "dir": a directory, made when
    missing."""
    what = "--%s %s" % (opt, path)
    if kind == "dir":
        if os.path.exists(path) and not os.path.isdir(path):
            raise TrainError("%s: exists and is not a directory" % what)
        parent = os.path.dirname(os.path.abspath(path))
    else:
        if os.path.isdir(path):
            raise TrainError("%s: is a directory (expected a file)" % what)
        parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise TrainError("%s: no directory %s" % (what, parent))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise TrainError("%s: cannot write in %s" % (what, parent))
