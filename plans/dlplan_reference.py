"""dlplan_reference - the one-process runs of dlplan_train.py.

run_reference(cfg, device, arch, global_batch)
    Train the whole model in one process on the whole global batch of
    every step (the result every plan must reproduce); write
    cfg.dump_params when set.
run_compare(files, tolerance) -> exit status
    Compare --dump-params files with the first; one line each.
"""

import sys

import torch

if __package__:
    from .dlplan_config import TrainError
    from .dlplan_model import (Layer, TPComm, batch, make_optimizer,
                               save_params, setup_torch)
else:
    from dlplan_config import TrainError
    from dlplan_model import (Layer, TPComm, batch, make_optimizer,
                              save_params, setup_torch)

__all__ = ["run_reference", "run_compare"]


def run_reference(cfg, device, arch, gb):
    dev = setup_torch(cfg, device)
    comm = TPComm(None, 1)
    layers = [Layer(arch, i, [1.0], 0, comm, cfg.seed, dev)
              for i in range(arch.nlayers)]
    opt = make_optimizer(cfg, [p for m in layers for p in m.parameters()])
    for step in range(cfg.steps):
        x, y = batch(arch, gb, step, cfg.seed)
        x, y = x.to(dev), y.to(dev)
        for m in layers[:-1]:
            x = m(x)
        loss = layers[-1](x, y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if cfg.dump_params:
        params = {}
        for m in layers:
            for loc, p in m.named_locals():
                params[loc.spec.name] = p.detach().cpu().clone()
        save_params(cfg.dump_params, arch, cfg, params)
    return 0


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


def _load_dump(path):
    """A --dump-params file; TrainError (one line) for anything else."""
    try:
        d = torch.load(path)
    except Exception as e:
        raise TrainError("--compare %s: not a --dump-params file (%s)" %
                         (path, str(e).splitlines()[0][:120] if str(e)
                          else type(e).__name__)) from e
    if not isinstance(d, dict) or not isinstance(d.get("params"), dict):
        raise TrainError("--compare %s: not a --dump-params file (no "
                         "parameters)" % path)
    return d


def run_compare(files, tol):
    """Each of files[1:] against files[0]: one line each; 1 if any
    differs."""
    ref = _load_dump(files[0])
    bad = 0
    for f in files[1:]:
        ok, line = _compare_one(ref, _load_dump(f), tol)
        sys.stdout.write("%s: %s%s\n" % (f, "" if ok else "DIFFERS: ",
                                          line))
        bad += not ok
    return 1 if bad else 0
