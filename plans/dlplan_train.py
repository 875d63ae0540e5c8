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

Run with --help for the options.  Errors: exit 2 with one line on stderr
("dlplan_train: ...") when the plan, the model or the environment cannot
be run; exit 1 on a usage error or a failed --compare.
"""

import argparse
import math
import os
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import dlplan_plan  # noqa: E402
from dlplan_arch import ModelError  # noqa: E402

PROG = "dlplan_train"


class TrainError(Exception):
    """The plan cannot be run as asked (exit 2)."""


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
                    help="append one row per forward and backward pass: "
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


def model_path(plan_path, data):
    for inp in data.get("inputs") or []:
        if isinstance(inp, dict) and inp.get("kind") == "model":
            p = inp.get("path")
            if not p:
                return None
            q = os.path.join(os.path.dirname(os.path.abspath(plan_path)), p)
            return q if os.path.exists(q) else p
    return None


def resolve_arch(args, plan_path):
    """The model: the options, on top of the plan's model.csv line."""
    from dlplan_arch import Arch
    base = None
    if plan_path:
        mp = model_path(plan_path, dlplan_plan.read_json(plan_path))
        if mp:
            base = Arch.from_model_csv(mp)
    keys = ("layers", "hidden", "heads", "seq", "vocab", "ffn", "positions")
    vals = {k: getattr(args, k) for k in keys}
    if base is not None:
        for k in keys:
            if vals[k] is None:
                vals[k] = getattr(base, k)
    missing = [k for k in ("layers", "hidden", "heads", "seq", "vocab")
               if vals[k] is None]
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


def set_dtype(args):
    import torch
    torch.set_default_dtype(getattr(torch, args.dtype))
    torch.set_num_threads(max(1, args.threads))


def pick_device(args):
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        raise TrainError("--device cuda: torch sees no CUDA device")
    if args.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return args.device


# --- --reference ------------------------------------------------------

def run_reference(args):
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    gb = args.global_batch
    if plan_path:
        plan = dlplan_plan.load(plan_path)
    arch = resolve_arch(args, plan_path)
    if plan_path:
        gb = check_plan(plan, arch)
    if not gb or gb < 1:
        raise TrainError("--reference needs a plan or --global-batch")
    # PyTorch only once the inputs are known to be good.
    from dlplan_model import Layer, TPComm, batch, make_optimizer, save_params
    set_dtype(args)
    dev = pick_device(args)
    comm = TPComm(None, 1)
    layers = [Layer(arch, i, [1.0], 0, comm, args.seed, dev)
              for i in range(arch.nlayers)]
    opt = make_optimizer(args, [p for m in layers for p in m.parameters()])
    for step in range(args.steps):
        x, y = batch(arch, gb, step, args.seed)
        x, y = x.to(dev), y.to(dev)
        for m in layers[:-1]:
            x = m(x)
        loss = layers[-1](x, y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if args.dump_params:
        params = {}
        for m in layers:
            for loc, p in m.named_locals():
                params[loc.spec.name] = p.detach().cpu().clone()
        save_params(args.dump_params, arch, args, params)
    return 0


# --- --compare --------------------------------------------------------

def _compare_one(a, b, tol):
    """(ok, line) for two loaded dumps."""
    pa, pb = a["params"], b["params"]
    if sorted(pa) != sorted(pb):
        return False, "parameter names differ: %s" % sorted(set(pa) ^ set(pb))
    if b.get("groups_max_diff", 0) != 0:
        return False, "groups disagree by %.3g" % b["groups_max_diff"]
    worst, where = 0.0, None
    for k in sorted(pa):
        x, y = pa[k].double(), pb[k].double()
        if x.shape != y.shape:
            return False, "%s: shape %s vs %s" % (k, tuple(x.shape),
                                                  tuple(y.shape))
        scale = max(x.abs().max().item(), y.abs().max().item(), 1e-300)
        r = (x - y).abs().max().item() / scale
        if r > worst or where is None:
            worst, where = r, k
    return worst <= tol, ("max relative difference %.3g (%s) over %d "
                          "tensors" % (worst, where, len(pa)))


def run_compare(args):
    """Each of FILE... against REF: one line each; 1 if any differs."""
    import torch
    ref = torch.load(args.compare[0])
    bad = 0
    for f in args.compare[1:]:
        ok, line = _compare_one(ref, torch.load(f), args.tolerance)
        sys.stdout.write("%s: %s%s\n" % (f, "" if ok else "DIFFERS: ",
                                          line))
        bad += not ok
    return 1 if bad else 0


# --- --profile --------------------------------------------------------

def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def run_profile(args):
    import torch
    from dlplan_model import Layer, TPComm, batch
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    arch = resolve_arch(args, plan_path)
    mu = args.micro_batch
    if mu is None and plan_path:
        mu = dlplan_plan.load(plan_path).micro_batch
    mu = mu or 1
    set_dtype(args)
    dev = pick_device(args)
    comm = TPComm(None, 1)
    layers = [Layer(arch, i, [1.0], 0, comm, args.seed, dev)
              for i in range(arch.nlayers)]
    x0, y = batch(arch, mu, 0, args.seed)
    x0, y = x0.to(dev), y.to(dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    rows = []
    x = x0
    for m in layers:
        fw, bw = [], []
        for rep in range(args.profile_reps + 2):
            inp = x if m.layer == 0 else x.detach().requires_grad_()
            sync()
            t0 = time.perf_counter()
            out = m(inp, y) if m.layer == arch.layers + 1 else m(inp)
            sync()
            t1 = time.perf_counter()
            if m.layer == arch.layers + 1:
                out.sum().backward()
            else:
                out.backward(torch.ones_like(out))
            sync()
            t2 = time.perf_counter()
            m.zero_grad()
            if rep >= 2:
                fw.append(t1 - t0)
                bw.append(t2 - t1)
        rows.append((arch.name(m.layer), _median(fw) / mu,
                     _median(bw) / mu, m))
        if m.layer != arch.layers + 1:
            x = out.detach()
    write_profile(args, arch, mu, rows)
    return 0


def write_profile(args, arch, mu, rows):
    import torch
    p = torch.get_default_dtype().itemsize if hasattr(
        torch.get_default_dtype(), "itemsize") else (
        8 if args.dtype == "float64" else 4)
    s, h, a, V, F_ = arch.seq, arch.hidden, arch.heads, arch.vocab, arch.ffn
    flops = args.profile_tflops * 1e12 / 1e9
    out = ["# " + arch.command(),
           "# measured by dlplan_train.py --profile on %s: seconds per "
           "sample (micro-batch %d, %s, %d thread(s)) x %g TFLOPS; a node "
           "of tflops %g and mfu 1 per GPU is one rank of this machine" %
           (socket.gethostname(), mu, args.dtype, args.threads,
            args.profile_tflops, args.profile_tflops),
           "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb,tp_mb"]
    for name, tf, tb, m in rows:
        params = sum(loc.spec.numel for loc, _ in m.named_locals())
        if m.layer == 0:
            act, mem, tp = p * s * h, 16 * s, p * s * h
        elif m.layer == arch.layers + 1:
            act, mem, tp = 0, 2 * p * s * h + 4 * s * V, p * s * h + 12 * s
        else:
            act = p * s * h
            mem = p * s * 8 * h + p * a * s * s + 2 * p * s * F_
            tp = 4 * p * s * h
        out.append("%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g" % (
            name, tf * flops, tb * flops, params / 1e6, act / 1e6,
            mem / 1e6, tp / 1e6))
    tmp = args.profile + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, args.profile)


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


def run_planned(args):
    plan_path = args.plan or os.environ.get("DLPLAN_PLAN")
    if not plan_path:
        raise TrainError("no plan: give --plan or set DLPLAN_PLAN")
    plan = dlplan_plan.load(plan_path)
    arch = resolve_arch(args, plan_path)
    gb = check_plan(plan, arch)
    slow = slow_factors(args.slow_rank)
    me = env_rank(plan)
    set_dtype(args)
    dev = pick_device(args)
    from dlplan_exec import Executor
    ex = Executor(plan, me, arch, args, dev, gb, slow)
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


def main(argv):
    args = parse_args(argv)
    try:
        check_args(args)
        if args.compare:
            return run_compare(args)
        if args.profile:
            return run_profile(args)
        if args.reference:
            return run_reference(args)
        return run_planned(args)
    except (TrainError, ModelError, dlplan_plan.PlanError) as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
    except ImportError as e:
        sys.stderr.write("%s: %s (the executor needs PyTorch)\n" % (PROG, e))
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
