"""dlplan_config - the options of a training run, as one typed object.

dlplan_train.py's command line builds a TrainConfig once; everything
below the command line (the model helpers, the executor, the profiles)
takes it instead of argparse's namespace.  Standard library only.
"""

import dataclasses

__all__ = ["TrainConfig", "TrainError"]


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
