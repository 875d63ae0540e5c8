#!/usr/bin/python3
"""A stand-in for "python3 -m torchtitan.train" (torchtitan b5bcd76c66d0)
for the launch-chain tests: DLPLAN_PYTHON="torchtitan-train.py" makes
torchtitan.sh run it, and so does a copy as torchtitan/train.py on the
Python path.  It loads the configuration as ConfigManager does
(torchtitan/config/manager.py:48-160: --module and --config, the module
imported from the path, its function called) and prints one JSON line:
its argv, the launch variables of its environment and the degrees of the configuration.
"""
import importlib
import json
import os
import re
import sys

# Run as a file after "-m torchtitan.train", or as torchtitan/train.py
# on the path by "python3 -m torchtitan.train".
args = sys.argv[1:]
if args[:2] == ["-m", "torchtitan.train"]:
    args = args[2:]
elif os.path.basename(sys.argv[0]) != "train.py":
    sys.exit("torchtitan-train: expected -m torchtitan.train, got %s" % args)
module = config = None
i = 0
while i < len(args):
    if args[i] == "--module":
        module, i = args[i + 1], i + 1
    elif args[i] == "--config":
        config, i = args[i + 1], i + 1
    i += 1
if module is None or config is None:
    sys.exit("torchtitan-train: --module and --config are required")
# Without torchtitan installed, the class a configuration that recomputes
# imports (torchtitan/distributed/activation_checkpoint.py:166-182).
try:
    importlib.import_module("torchtitan.distributed.activation_checkpoint")
except ImportError:
    import types
    for name in ("torchtitan", "torchtitan.distributed",
                 "torchtitan.distributed.activation_checkpoint"):
        sys.modules[name] = sys.modules.get(name) or types.ModuleType(name)
    sys.modules["torchtitan.distributed.activation_checkpoint"].FullAC = \
        type("FullAC", (), {"Config": type("Config", (), {})})
c = getattr(importlib.import_module(module), config)()
p = c.parallelism
# One short line (under PIPE_BUF): ranks started together share a pipe.
env = {k: v for k, v in os.environ.items() if k.startswith("DLPLAN_") or
       re.fullmatch(r"(LOCAL_)?(RANK|WORLD_SIZE)|MASTER_ADDR", k)}
sys.stdout.write(json.dumps({
    "argv": sys.argv[1:], "env": env,
    "torchtitan": {"pp": p.pipeline_parallel_degree,
                   "dp": p.data_parallel_replicate_degree *
                   p.data_parallel_shard_degree,
                   "tp": p.tensor_parallel_degree}}) + "\n")
