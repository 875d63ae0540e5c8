"""dlplan_profile - measure this machine for dlplan's cost model.

profile_layers(cfg, device, arch, mu, reps) -> [(name, fwd_s, bwd_s,
        Layer), ...]
    Seconds per sample of every layer's forward and backward (median of
    reps after two warm-up passes, micro-batches of mu samples, the
    thread count of cfg).
profile_layers_csv(cfg, device, arch, mu, reps, tflops, path)
    dlplan_train.py --profile: a model.csv in FLOPs at a declared speed.
profile_cluster(cfg, device, arch, mu, reps, outdir, ranks, nodes)
    dlplan_train.py --profile-cluster: the layers, then point-to-point
    and all-reduce times between `ranks` processes (gloo on CPU, NCCL on
    CUDA; process r pinned to the r-th core it may use), written as a
    cluster directory and a model.csv that dlplan plan reads as they are:

    model.csv  the "# dlplan model gpt" line, then per layer fwd_gflop and
               bwd_gflop = measured seconds x the node speed below (so
               the model's compute time of a layer is its measured time),
               and the architecture's parameters, activations and TP
               volume
    nodes.csv  `nodes` nodes n1.. of ranks/nodes "GPUs" each: tflops =
               the blocks' FLOPs (2 per multiply-add, backward twice the
               forward) over their measured time (at least 0.001, the
               GFLOP scaled alike), mfu 1; intra_gbps and
               nic_gbps = the effective point-to-point bandwidth at the
               plan's activation size (bytes over the measured one-way
               time, latency included: dlplan prices transfers inside a
               node by bandwidth alone)
    links.csv  (two or more nodes) every pair of nodes linked directly
               with the fitted bandwidth and latency (t = latency +
               bytes / bandwidth, least squares over the sizes measured)
    comm.csv   every measurement: kind (p2p: one-way time of a ping-pong;
               allreduce; optimizer: one step over the whole model, which
               dlplan does not price), members, bytes, seconds (median),
               and as comments the fit per kind and member count
"""

import json
import os
import socket
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

if __package__:
    from .dlplan_config import TrainError, atomic_write
    from .dlplan_model import (Layer, TPComm, batch, make_optimizer,
                               param_specs, setup_torch)
else:
    from dlplan_config import TrainError, atomic_write
    from dlplan_model import (Layer, TPComm, batch, make_optimizer,
                              param_specs, setup_torch)

__all__ = ["profile_layers", "profile_layers_csv", "profile_cluster"]

# The least tflops and bandwidth dlplan's nodes.csv and links.csv take.
MIN_TFLOPS = 0.001
MIN_GBPS = 0.001


def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def profile_layers(cfg, device, arch, mu, reps):
    dev = setup_torch(cfg, device)
    comm = TPComm(None, 1)
    layers = [Layer(arch, i, [1.0], 0, comm, cfg.seed, dev)
              for i in range(arch.nlayers)]
    x0, y = batch(arch, mu, 0, cfg.seed)
    x0, y = x0.to(dev), y.to(dev)
    sync = torch.cuda.synchronize if dev.startswith("cuda") else \
        (lambda: None)
    rows = []
    x = x0
    head = arch.layers + 1
    for m in layers:
        fw, bw = [], []
        for rep in range(reps + 2):
            inp = x if m.layer == 0 else x.detach().requires_grad_()
            sync()
            t0 = time.perf_counter()
            out = m(inp, y) if m.layer == head else m(inp)
            sync()
            t1 = time.perf_counter()
            if m.layer == head:
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
        if m.layer != head:
            x = out.detach()
    return rows


def _layer_bytes(arch, layer, width):
    """(params, act, mem, tp) of a layer per sample, bytes but params."""
    s, h, a, V, F_ = arch.seq, arch.hidden, arch.heads, arch.vocab, arch.ffn
    params = sum(sp.numel for sp in param_specs(arch, layer))
    p = width
    if layer == 0:
        return params, p * s * h, 16 * s, p * s * h
    if layer == arch.layers + 1:
        return params, 0, 2 * p * s * h + 4 * s * V, p * s * h + 12 * s
    return (params, p * s * h,
            p * s * 8 * h + p * a * s * s + 2 * p * s * F_, 4 * p * s * h)


def _width(cfg):
    return 8 if cfg.dtype == "float64" else 4


def _model_csv(cfg, arch, mu, rows, speed, note):
    out = ["# " + arch.command(), "# " + note,
           "layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb,tp_mb"]
    for name, tf, tb, m in rows:
        params, act, mem, tp = _layer_bytes(arch, m.layer, _width(cfg))
        out.append("%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g" % (
            name, tf * speed / 1e9, tb * speed / 1e9, params / 1e6,
            act / 1e6, mem / 1e6, tp / 1e6))
    return "\n".join(out) + "\n"


def _write(path, text):
    atomic_write(path, lambda f: f.write(text))


def profile_layers_csv(cfg, device, arch, mu, reps, tflops, path):
    rows = profile_layers(cfg, device, arch, mu, reps)
    note = ("measured by dlplan_train.py --profile on %s: seconds per "
            "sample (micro-batch %d, %s, %d thread(s)) x %g TFLOPS; a node "
            "of tflops %g and mfu 1 per GPU is one rank of this machine" %
            (socket.gethostname(), mu, cfg.dtype, cfg.threads, tflops,
             tflops))
    _write(path, _model_csv(cfg, arch, mu, rows, tflops * 1e12, note))
    return 0


def block_flops(arch):
    """Forward FLOPs per sample of one block: the six matrix products
    (2 FLOPs per multiply-add) and the two attention products."""
    s, h, F_ = arch.seq, arch.hidden, arch.ffn
    return 2 * s * (4 * h * h + 2 * h * F_) + 4 * s * s * h


def time_optimizer(cfg, layers, reps):
    """("optimizer", 1, parameter bytes, seconds): the median time of one
    step of cfg's optimizer over the whole model's parameters, which dlplan
    does not price yet."""
    params = [p for m in layers for p in m.parameters()]
    for p in params:
        p.grad = torch.full_like(p, 1e-3)
    opt = make_optimizer(cfg, params)
    ts = []
    with torch.no_grad():
        saved = [p.clone() for p in params]
    for rep in range(reps + 2):
        t0 = time.perf_counter()
        opt.step()
        if rep >= 2:
            ts.append(time.perf_counter() - t0)
    with torch.no_grad():
        for p, q in zip(params, saved):
            p.copy_(q)
    n = sum(p.numel() for p in params)
    return ("optimizer", 1, n * _width(cfg), _median(ts))


# --- communication ---------------------------------------------------

def _sizes(act):
    """Message sizes to time, bytes: a ladder and the plan's activation."""
    out = {4, 1 << 12, 1 << 16, 1 << 20, 1 << 22, act, 4 * act}
    return sorted(b for b in out if b >= 4)


def _comm_worker(rank, world, port, cores, device, dtype, sizes, reps, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      RANK=str(rank), WORLD_SIZE=str(world))
    if cores:
        os.sched_setaffinity(0, {cores[rank % len(cores)]})
    torch.set_num_threads(1)
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.set_device(rank % torch.cuda.device_count())
    dist.init_process_group("nccl" if cuda else "gloo", init_method="env://")
    dev = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    groups = {m: dist.new_group(list(range(m))) for m in range(2, world + 1)}
    rows = []
    el = 8 if dtype == "float64" else 4
    dt = getattr(torch, dtype)
    for b in sizes:
        x = torch.zeros(max(1, b // el), dtype=dt, device=dev)
        n = x.numel() * el
        ts = []
        for rep in range(reps + 2):
            dist.barrier()
            sync()
            t0 = time.perf_counter()
            if rank == 0:
                dist.send(x, 1)
                dist.recv(x, 1)
            elif rank == 1:
                dist.recv(x, 0)
                dist.send(x, 0)
            sync()
            if rep >= 2:
                ts.append((time.perf_counter() - t0) / 2)
        if rank == 0:
            rows.append(("p2p", 2, n, _median(ts)))
        for m, g in groups.items():
            ts = []
            for rep in range(reps + 2):
                dist.barrier()
                sync()
                t0 = time.perf_counter()
                if rank < m:
                    dist.all_reduce(x, group=g)
                sync()
                if rep >= 2:
                    ts.append(time.perf_counter() - t0)
            # the slowest member's time is the collective's
            t = torch.tensor([_median(ts) if rank < m else 0.0],
                             dtype=torch.float64, device=dev)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            if rank == 0:
                rows.append(("allreduce", m, n, t.item()))
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(rows, f)


def _fit(pts):
    """Least squares t = a + b * bytes over (bytes, t): (a, b)."""
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    b = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx else 0.0
    a = my - b * mx
    return max(a, 0.0), max(b, 1e-15)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_comm(device, dtype, act, ranks, reps):
    """[(kind, members, bytes, seconds), ...] between `ranks` processes."""
    cores = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "comm.json")
        mp.start_processes(_comm_worker,
                           args=(ranks, _free_port(), cores, device, dtype,
                                 _sizes(act), reps, out),
                           nprocs=ranks, join=True, start_method="spawn")
        with open(out, encoding="utf-8") as f:
            return [tuple(r) for r in json.load(f)]


def profile_cluster(cfg, device, arch, mu, reps, outdir, ranks, nodes):
    if ranks < 2:
        raise TrainError("--profile-ranks %d: the communication profile "
                         "needs 2 processes" % ranks)
    cores = sorted(os.sched_getaffinity(0))
    keep = set(cores)
    os.sched_setaffinity(0, {cores[0]})
    try:
        rows = profile_layers(cfg, device, arch, mu, reps)
        opt = time_optimizer(cfg, [m for _, _, _, m in rows], reps)
    finally:
        os.sched_setaffinity(0, keep)
    blocks = [r for r in rows if r[0].startswith("block")]
    sec = _median([tf + tb for _, tf, tb, _ in blocks])
    measured = 3 * block_flops(arch) / sec
    # nodes.csv takes 0.001 TFLOPS and up; a slower speed is written as
    # 0.001 with the layers' GFLOP scaled alike (same seconds).
    speed = max(measured, MIN_TFLOPS * 1e12)
    width = _width(cfg)
    act = mu * arch.seq * arch.hidden * width
    dev = setup_torch(cfg, device)
    comm = measure_comm(dev, cfg.dtype, act, ranks, reps)
    p2p = [(b, t) for k, m, b, t in comm if k == "p2p"]
    lat, inv = _fit(p2p)
    at_act = min(p2p, key=lambda bt: abs(bt[0] - act))
    eff_gbps = max(8 * at_act[0] / at_act[1] / 1e9, MIN_GBPS)
    fit_gbps = max(8 / inv / 1e9, MIN_GBPS)
    host = socket.gethostname()
    note = ("measured by dlplan_train.py --profile-cluster on %s: micro-"
            "batch %d, %s, %d thread(s) per rank; GFLOP = measured seconds "
            "x %.6g TFLOPS (the blocks ran at %.6g TFLOPS)" %
            (host, mu, cfg.dtype, cfg.threads, speed / 1e12,
             measured / 1e12))
    os.makedirs(outdir, exist_ok=True)
    _write(os.path.join(outdir, "model.csv"),
           _model_csv(cfg, arch, mu, rows, speed, note))
    per = ranks // nodes
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9
    lines = ["node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,"
             "mfu"]
    for n in range(nodes):
        lines.append("n%d,local,%d,%s-%dt,%.6g,%.6g,%.6g,%.6g,1" % (
            n + 1, per, "cuda" if dev.startswith("cuda") else "cpu",
            cfg.threads, speed / 1e12, max(0.001, mem / ranks), eff_gbps,
            eff_gbps))
    _write(os.path.join(outdir, "nodes.csv"), "\n".join(lines) + "\n")
    links = os.path.join(outdir, "links.csv")
    if nodes > 1:
        lines = ["src,dst,gbps,latency_ms"]
        for a in range(nodes):
            for b in range(a + 1, nodes):
                lines.append("n%d,n%d,%.6g,%.6g" % (a + 1, b + 1, fit_gbps,
                                                   lat * 1e3))
        _write(links, "\n".join(lines) + "\n")
    elif os.path.exists(links):
        os.remove(links)
    lines = ["# measured by dlplan_train.py --profile-cluster on %s, %d "
             "processes, one core each, %s" % (host, ranks, cfg.dtype),
             "# p2p fit: latency %.6g s, bandwidth %.6g Gbps; at the "
             "activation (%d bytes): %.6g Gbps" % (lat, fit_gbps, act,
                                                  eff_gbps)]
    for m in range(2, ranks + 1):
        a, b = _fit([(x, t) for k, mm, x, t in comm
                     if k == "allreduce" and mm == m])
        lines.append("# allreduce fit, %d members: %.6g s + bytes / %.6g "
                     "Gbps" % (m, a, 8 / b / 1e9))
    lines.append("# optimizer (%s): %.6g s per million parameters" % (
        cfg.optimizer, opt[3] / (opt[2] / width) * 1e6))
    lines.append("kind,members,bytes,seconds")
    lines += ["%s,%d,%d,%.9g" % r for r in comm + [opt]]
    _write(os.path.join(outdir, "comm.csv"), "\n".join(lines) + "\n")
    return 0
