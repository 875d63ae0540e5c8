"""dlplan_train - a reference executor that trains with a dlplan plan.

Started once per rank by dlplan's launch files (dlplan emit --script
dlplan_train.py -- OPTIONS) or by torchrun, it reads its rank's
assignment with dlplan_plan.py and runs the plan on a decoder-only
transformer (dlplan_model.py): only its own layers, tensor-parallel
shards by the stage's tp_shares, a 1F1B pipeline per group over the
group's micro-batches, the group's share of every global batch, the
gradient sync per segment across groups of any shapes, and one optimizer
step on every rank.  The summed gradient is the gradient of the mean loss
over the whole global batch, so the parameters after any plan equal those
of --reference (one process, whole batch) up to rounding.

    torchrun --standalone --nproc_per_node W dlplan_train.py --plan P.json
    python3 dlplan_train.py --reference --plan P.json --dump-params R.pt
    python3 dlplan_train.py --compare R.pt A.pt [B.pt...]
    python3 dlplan_train.py --profile model.csv --layers 6 --hidden 64 ...
    python3 dlplan_train.py --profile-cluster DIR --layers 6 ...

The command line ends here: below it, the run's options travel as one
dlplan_config.TrainConfig.  This module checks the plan and the options
with the standard library only; PyTorch is loaded (by dlplan_reference,
dlplan_profile or dlplan_exec) once they are known to be good.

Run with --help for the options.  Errors: exit 2 with one line on stderr
("dlplan_train: ...") when the plan, the model or the environment cannot
be run, or an output cannot be written (checked before any work); exit 1
on a usage error or a failed --compare.
"""

import argparse
import hashlib
import math
import os
import stat
import sys

if __package__:
    from . import dlplan_plan
    from .dlplan_arch import Arch, ModelError
    from .dlplan_config import TrainConfig, TrainError, check_output
else:
    import dlplan_plan
    from dlplan_arch import Arch, ModelError
    from dlplan_config import TrainConfig, TrainError, check_output

PROG = "dlplan_train"
# A model.csv is one row per layer; no real one comes near this.
DLPLAN_MODEL_MAX = 64 << 20


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="dlplan_train.py",
        description="train a GPT-style model with a dlplan plan "
        "(reference executor)")
    ap.add_argument("--plan", help="plan.json (default: $DLPLAN_PLAN)")
    ap.add_argument("--steps", type=int, default=3,
                    help="training iterations (3)")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the initial weights and the data (1)")
    ap.add_argument("--optimizer", choices=("adamw", "sgd"),
                    default="adamw", help="optimizer (adamw)")
    ap.add_argument("--lr", type=float, default=1e-3,
                    help="learning rate (1e-3)")
    ap.add_argument("--weight-decay", type=float, default=0.01,
                    help="AdamW weight decay (0.01)")
    ap.add_argument("--momentum", type=float, default=0.0,
                    help="SGD momentum (0)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"),
                    default="auto", help="cpu (gloo) or cuda (NCCL); auto: "
                    "cuda when present (auto)")
    ap.add_argument("--dtype", choices=("float32", "float64"),
                    default="float32", help="parameter and activation "
                    "type (float32)")
    g = ap.add_argument_group("model (default: the '# dlplan model gpt' "
                              "line of the plan's model.csv)")
    for k in ("layers", "hidden", "heads", "seq", "vocab", "ffn",
              "positions"):
        g.add_argument("--" + k, type=int)
    ap.add_argument("--global-batch", type=int,
                    help="samples per step without a plan (--reference, "
                    "--profile)")
    ap.add_argument("--micro-batch", type=int,
                    help="samples per micro-batch without a plan")
    ap.add_argument("--reference", action="store_true",
                    help="train in one process on the whole global batch")
    ap.add_argument("--dump-params", metavar="FILE",
                    help="write the full parameters after the last step")
    ap.add_argument("--log", metavar="STEPS.csv",
                    help="append rank,step,seconds,samples,compute_seconds,"
                    "x_step_seconds rows (rank 0 writes them for all "
                    "ranks; dlplan replan --observed reads them)")
    ap.add_argument("--trace", metavar="TRACE.csv",
                    help="append one row per forward and backward pass "
                    "(op F, B), sync bucket (R) and optimizer step (O): "
                    "rank,step,group,stage,tp_rank,op,micro_batch,wait_s,"
                    "start_s,end_s (rank 0 writes them for all ranks)")
    ap.add_argument("--first-step", type=int, default=0,
                    help="number of the first step in the log (0)")
    ap.add_argument("--slow-rank", action="append", default=[],
                    metavar="R:FACTOR", help="rank R computes FACTOR times "
                    "slower (sleeps after each forward and backward)")
    ap.add_argument("--profile", metavar="OUT.csv",
                    help="time every layer's forward and backward here and "
                    "write a model.csv")
    ap.add_argument("--profile-tflops", type=float, default=1.0,
                    help="speed the profile's FLOP counts assume: a node of "
                    "this many TFLOPS with mfu 1 is one rank here (1)")
    ap.add_argument("--profile-reps", type=int, default=10,
                    help="timed repetitions per layer (10)")
    ap.add_argument("--profile-cluster", metavar="DIR",
                    help="measure this machine (layers, point-to-point, "
                    "all-reduce) and write DIR/nodes.csv, DIR/links.csv, "
                    "DIR/model.csv and DIR/comm.csv for dlplan plan")
    ap.add_argument("--profile-ranks", type=int,
                    help="processes the communication profile uses, one "
                    "per core (all cores, at most 8)")
    ap.add_argument("--profile-nodes", type=int, default=1,
                    help="nodes DIR/nodes.csv describes, each with "
                    "--profile-ranks / --profile-nodes ranks (1)")
    ap.add_argument("--compare", nargs="+", metavar="FILE",
                    help="REF.pt FILE.pt...: compare --dump-params files "
                    "with REF; exit 1 if one differs by more than "
                    "--tolerance or its groups disagree")
    ap.add_argument("--tolerance", type=float, default=1e-9,
                    help="largest relative difference --compare accepts")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads per process (1)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds a collective may wait (300)")
    a = ap.parse_args(argv)
    if a.compare is not None and len(a.compare) < 2:
        ap.error("--compare needs REF.pt and at least one more file")
    if a.steps < 1:
        ap.error("--steps must be at least 1")
    return a


def slow_factors(specs):
    out = {}
    for s in specs:
        try:
            r, f = s.split(":")
            r, f = int(r), float(f)
        except ValueError:
            raise TrainError("--slow-rank %s: expected RANK:FACTOR" % s)
        if r < 0 or not f >= 1 or math.isinf(f):
            raise TrainError("--slow-rank %s: a rank >= 0 and a factor "
                             ">= 1" % s)
        out[r] = f
    return out


def model_input(plan_path, data):
    """The plan's model input as (index, path, sha256, size), the path
    resolved as dlplan resolves it: relative to the plan's directory,
    never to the current one; size is None in plans of older versions.
    None when the plan names no model."""
    for i, inp in enumerate(data.get("inputs") or []):
        if isinstance(inp, dict) and inp.get("kind") == "model":
            p = inp.get("path")
            if not p or not isinstance(p, str):
                return None
            if p != "-" and not os.path.isabs(p):
                p = os.path.join(os.path.dirname(os.path.abspath(
                    plan_path)), p)
            sha = inp.get("sha256")
            size = inp.get("size")
            if size is not None and (type(size) is not int or size < 0):
                raise TrainError("%s: inputs[%d].size: %r is not a size "
                                 "in bytes" % (plan_path, i, size))
            return i, p, sha if isinstance(sha, str) else None, size
    return None


def read_model(plan_path, i, path, sha, size):
    """The first lines of the plan's model file, read only when its bytes
    have the size and the digest the plan records (as dlplan reads a
    plan's inputs): the size first, from the file's status, before a byte
    is read; the digest through a fixed buffer, keeping only the first
    lines."""
    if path == "-":
        raise TrainError("%s: inputs[%d].path: the model was read from "
                         "standard input; give it with --layers, --hidden, "
                         "--heads, --seq and --vocab" % (plan_path, i))
    if not sha:
        raise TrainError("%s: inputs[%d].sha256: missing, so '%s' is not "
                         "read" % (plan_path, i, path))
    head, n, h = b"", 0, hashlib.sha256()
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if (size is not None and stat.S_ISREG(st.st_mode) and
                    st.st_size != size):
                raise TrainError("%s: is %d bytes, not the %d bytes the "
                                 "plan records for it, so it is not read "
                                 "(it changed since the plan was made)" %
                                 (path, st.st_size, size))
            while n <= DLPLAN_MODEL_MAX:
                b = f.read(65536)
                if not b:
                    break
                h.update(b)
                n += len(b)
                if head.count(b"\n") < 4:
                    head += b
    except OSError as e:
        raise TrainError("%s: inputs[%d].path: %s: %s" %
                         (plan_path, i, path, e.strerror or e)) from e
    if n > DLPLAN_MODEL_MAX:
        raise TrainError("%s: larger than %d bytes (not a model.csv)" %
                         (path, DLPLAN_MODEL_MAX))
    if size is not None and n != size:
        raise TrainError("%s: is %d bytes, not the %d bytes the plan "
                         "records for it, so it is not read (it changed "
                         "since the plan was made)" % (path, n, size))
    if h.hexdigest() != sha:
        raise TrainError("%s: does not match the digest the plan records "
                         "for it, so it is not read (it changed since the "
                         "plan was made)" % path)
    text = head.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.splitlines(True)[:4]


def resolve_arch(args, plan_path):
    """The model: the options, on top of the plan's model.csv line."""
    base = None
    keys = ("layers", "hidden", "heads", "seq", "vocab", "ffn", "positions")
    vals = {k: getattr(args, k) for k in keys}
    need = ("layers", "hidden", "heads", "seq", "vocab")
    mi = plan_path and model_input(plan_path,
                                   dlplan_plan.read_json(plan_path))
    # A model read from standard input is gone: the options replace it.
    if mi and (mi[1] != "-" or any(vals[k] is None for k in need)):
        base = Arch.from_model_lines(read_model(plan_path, *mi), mi[1])
    if base is not None:
        for k in keys:
            if vals[k] is None:
                vals[k] = getattr(base, k)
    missing = [k for k in need if vals[k] is None]
    if missing:
        raise TrainError("no model: give --%s (or a plan whose model.csv "
                         "was written by 'dlplan model gpt')" %
                         ", --".join(missing))
    return Arch(**vals)


def check_plan(plan, arch):
    n = 1 + max(s.last for g in plan.groups for s in g.stages)
    if n != arch.nlayers:
        raise TrainError("the plan has %d layers, the model %d (%d blocks "
                         "+ embedding + head)" % (n, arch.nlayers,
                                                  arch.layers))
    for g in plan.groups:
        nxt = 0
        for s in g.stages:
            if s.first != nxt or s.last < s.first:
                raise TrainError("group %d stage %d: layers %d..%d do not "
                                 "follow layer %d" % (g.index, s.index,
                                                      s.first, s.last,
                                                      nxt - 1))
            nxt = s.last + 1
            tot = sum(s.tp_shares)
            if abs(tot - 1) > 1e-6 or min(s.tp_shares) < 0:
                raise TrainError("group %d stage %d: tp_shares %s sum to "
                                 "%.9g, not 1" % (g.index, s.index,
                                                  s.tp_shares, tot))
        if nxt != n:
            raise TrainError("group %d: its stages end at layer %d of %d" %
                             (g.index, nxt - 1, n))
        if g.micro_batches < 0:
            raise TrainError("group %d: negative micro_batches" % g.index)
    gb = sum(g.micro_batches for g in plan.groups) * plan.micro_batch
    if plan.global_batch is not None and gb != plan.global_batch:
        raise TrainError("micro-batches x micro-batch = %d samples, the "
                         "plan's global batch is %s" % (gb,
                                                        plan.global_batch))
    return gb


# --- the planned run ---------------------------------------------------

def env_rank(plan):
    need = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
            if not os.environ.get(v)]
    if need:
        raise TrainError("%s not set: start every rank with torchrun or "
                         "dlplan's launch files (or use --reference)" %
                         ", ".join(need))
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except ValueError:
        raise TrainError("RANK and WORLD_SIZE must be integers")
    if world != plan.world_size:
        raise TrainError("WORLD_SIZE is %d, the plan has %d ranks" %
                         (world, plan.world_size))
    d = os.environ.get("DLPLAN_RANK")
    if d not in (None, "") and d != str(rank):
        raise TrainError("DLPLAN_RANK %s is not torch's RANK %d" % (d, rank))
    return plan.rank(rank)


def run_reference(args, cfg):
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    gb = args.global_batch
    if plan_path:
        plan = dlplan_plan.load(plan_path)
    arch = resolve_arch(args, plan_path)
    if plan_path:
        gb = check_plan(plan, arch)
    if not gb or gb < 1:
        raise TrainError("--reference needs a plan or --global-batch")
    if __package__:
        from . import dlplan_reference as ref
    else:
        import dlplan_reference as ref
    return ref.run_reference(cfg, args.device, arch, gb)


def run_compare(args):
    if __package__:
        from . import dlplan_reference as ref
    else:
        import dlplan_reference as ref
    return ref.run_compare(args.compare, args.tolerance)


def run_profile(args, cfg):
    """--profile (layers only) and --profile-cluster (the machine)."""
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    arch = resolve_arch(args, plan_path)
    mu = args.micro_batch
    if mu is None and plan_path:
        mu = dlplan_plan.load(plan_path).micro_batch
    mu = mu or 1
    if __package__:
        from . import dlplan_profile as prof
    else:
        import dlplan_profile as prof
    if args.profile_cluster:
        ranks = args.profile_ranks or min(8, len(os.sched_getaffinity(0)))
        if ranks < 1 or args.profile_nodes < 1 or \
                ranks % args.profile_nodes:
            raise TrainError("--profile-ranks %d: expected a multiple of "
                             "--profile-nodes %d" % (ranks,
                                                     args.profile_nodes))
        return prof.profile_cluster(cfg, args.device, arch, mu,
                                    args.profile_reps, args.profile_cluster,
                                    ranks, args.profile_nodes)
    return prof.profile_layers_csv(cfg, args.device, arch, mu,
                                   args.profile_reps, args.profile_tflops,
                                   args.profile)


def run_planned(args, cfg):
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    if not plan_path:
        raise TrainError("no plan: give --plan or set DLPLAN_PLAN")
    plan = dlplan_plan.load(plan_path)
    for g in plan.groups:
        if g.virtual_stages > 1:
            raise TrainError("%s: groups[%d].virtual_stages %d: the plan "
                             "runs Megatron-LM's interleaved schedule, and "
                             "this executor runs plain 1F1B (launch the "
                             "plan with --launcher megatron)"
                             % (plan_path, g.index, g.virtual_stages))
    arch = resolve_arch(args, plan_path)
    gb = check_plan(plan, arch)
    slow = slow_factors(args.slow_rank)
    me = env_rank(plan)
    if __package__:
        from . import dlplan_exec
    else:
        import dlplan_exec
    dev = dlplan_exec.setup_torch(cfg, args.device)
    ex = dlplan_exec.Executor(plan, me, arch, cfg, dev, gb, slow)
    try:
        ex.run()
    finally:
        ex.close()
    return 0


def check_args(args):
    """Refuse option values argparse lets through (nan, inf, <= 0)."""
    for k in ("lr", "weight_decay", "momentum", "tolerance", "timeout",
              "profile_tflops"):
        v = getattr(args, k)
        if not math.isfinite(v) or v < 0 or \
                (v == 0 and k in ("lr", "timeout", "profile_tflops")):
            raise TrainError("--%s %r: expected a finite number %s 0" %
                             (k.replace("_", "-"), v,
                              ">" if k in ("lr", "timeout",
                                           "profile_tflops") else ">="))


def check_outputs(args):
    """Every file the run writes, checked before any work: a run must
    not train for an hour and then fail on its output path (in torchrun,
    rank 0's failure would end the others with a traceback)."""
    for opt in ("dump_params", "log", "trace", "profile"):
        if getattr(args, opt):
            check_output(opt.replace("_", "-"), getattr(args, opt))
    if args.profile_cluster:
        check_output("profile-cluster", args.profile_cluster, "dir")
    for f in args.compare or []:
        if not os.path.isfile(f):
            raise TrainError("--compare %s: %s" % (
                f, "is not a file" if os.path.exists(f) else
                "No such file or directory"))


def main(argv):
    args = parse_args(argv)
    try:
        check_args(args)
        check_outputs(args)
        cfg = TrainConfig.from_namespace(args)
        if args.compare:
            return run_compare(args)
        if args.profile or args.profile_cluster:
            return run_profile(args, cfg)
        if args.reference:
            return run_reference(args, cfg)
        return run_planned(args, cfg)
    except (TrainError, ModelError, dlplan_plan.PlanError) as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
    except ImportError as e:
        sys.stderr.write("%s: %s (the executor needs PyTorch)\n" % (PROG, e))
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
