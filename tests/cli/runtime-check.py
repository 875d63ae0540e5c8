#!/usr/bin/python3
"""Check a plan made with dlplan plan --runtime, and the configuration
dlplan emit --launcher wrote for it, independently of dlplan's code.

usage: runtime-check.py RUNTIME PLAN.json LAUNCH_DIR

The plan: it names RUNTIME; every group has the same stages (TP degree,
layer ranges), each stage's GPUs on one node and none used twice; every
group the same micro-batches; micro-batch x micro-batches x groups =
global batch; the layer split is one the framework expresses (Megatron:
the stages between the first and the last even; DeepSpeed: its uniform
partition; torchtitan: contiguous).

The configuration is parsed back as the framework would: Megatron's
flags with argparse (the documented names), DeepSpeed's JSON, the
torchtitan TOML with tomllib, and compared with the plan: TP x PP x DP =
GPUs used, micro-batch x accumulation x DP = global batch, and the layer
split it gives is the plan's.  Prints what it checked; exits 1 with a
message on the first violation.
"""
import argparse
import json
import os
import sys
import tomllib


def fail(msg):
    sys.stderr.write("runtime-check: %s\n" % msg)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def ds_uniform(layers, stages):
    """DeepSpeed's partition_uniform as documented: L // S a part, the
    first L % S parts one more; returns the part boundaries."""
    per, extra = divmod(layers, stages)
    bounds, a = [0], 0
    for j in range(stages):
        a += per + (1 if j < extra else 0)
        bounds.append(a)
    return bounds


def check_plan(runtime, plan):
    need(plan.get("runtime") == runtime, "plan.json runtime is %r, not %r"
         % (plan.get("runtime"), runtime))
    groups = plan["groups"]
    g0 = groups[0]["stages"]
    k = len(g0[0]["gpus"])
    m = groups[0]["micro_batches"]
    used = set()
    for g, gr in enumerate(groups):
        st = gr["stages"]
        need(len(st) == len(g0), "group %d has %d stages, group 0 %d"
             % (g, len(st), len(g0)))
        need(gr["micro_batches"] == m, "group %d has %d micro-batches, "
             "group 0 %d" % (g, gr["micro_batches"], m))
        for j, s in enumerate(st):
            need(len(s["gpus"]) == k, "group %d stage %d has TP %d, not %d"
                 % (g, j, len(s["gpus"]), k))
            need(s["layers"] == g0[j]["layers"], "group %d stage %d "
                 "layers %s differ from group 0's %s"
                 % (g, j, s["layers"], g0[j]["layers"]))
            for d in s["gpus"]:
                need((s["node"], d) not in used, "GPU %s:%d used twice"
                     % (s["node"], d))
                used.add((s["node"], d))
    firsts = [s["layers"][0] for s in g0]
    lasts = [s["layers"][1] for s in g0]
    need(firsts[0] == 0, "the first stage does not start at layer 0")
    for j in range(1, len(g0)):
        need(firsts[j] == lasts[j - 1] + 1, "stages %d and %d are not "
             "contiguous" % (j - 1, j))
    layers = lasts[-1] + 1
    sizes = [b - a + 1 for a, b in zip(firsts, lasts)]
    if runtime == "megatron" and len(sizes) > 2:
        need(len(set(sizes[1:-1])) == 1, "megatron: middle stages %s are "
             "not even" % sizes[1:-1])
    if runtime == "deepspeed":
        need(ds_uniform(layers, len(sizes))[1:] == [b + 1 for b in lasts],
             "deepspeed: split %s is not partition_method uniform" % sizes)
    opt = plan["options"]
    need(opt["micro_batch"] * m * len(groups) == opt["global_batch"],
         "micro-batch x micro-batches x groups != global batch")
    return {"k": k, "S": len(g0), "G": len(groups), "m": m,
            "gpus": len(used), "layers": layers, "sizes": sizes,
            "firsts": firsts, "micro": opt["micro_batch"],
            "global": opt["global_batch"]}


def check_megatron(f, launch):
    p = argparse.ArgumentParser(prog="megatron", allow_abbrev=False)
    p.add_argument("--tensor-model-parallel-size", type=int, required=True)
    p.add_argument("--pipeline-model-parallel-size", type=int,
                   required=True)
    p.add_argument("--num-layers", type=int, required=True)
    p.add_argument("--micro-batch-size", type=int, required=True)
    p.add_argument("--global-batch-size", type=int, required=True)
    p.add_argument("--decoder-first-pipeline-num-layers", type=int)
    p.add_argument("--decoder-last-pipeline-num-layers", type=int)
    p.add_argument("--use-tp-pp-dp-mapping", action="store_true")
    with open(os.path.join(launch, "megatron.args")) as fh:
        a = p.parse_args(fh.read().split("\n")[:-1])
    tp, pp = a.tensor_model_parallel_size, a.pipeline_model_parallel_size
    need(f["gpus"] % (tp * pp) == 0, "world %d is not a multiple of TP x "
         "PP" % f["gpus"])
    dp = f["gpus"] // (tp * pp)
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]), "megatron TP, PP, DP "
         "%s differ from the plan's %s" % ((tp, pp, dp),
                                           (f["k"], f["S"], f["G"])))
    need(a.num_layers == f["layers"], "--num-layers differs")
    acc, rem = divmod(a.global_batch_size, a.micro_batch_size * dp)
    need(rem == 0 and acc == f["m"] and a.micro_batch_size == f["micro"],
         "micro x accumulation x DP != global batch as planned")
    need(a.use_tp_pp_dp_mapping == (pp > 1 and dp > 1),
         "--use-tp-pp-dp-mapping expected exactly when PP > 1 and DP > 1")
    # The split Megatron derives from its arguments.
    first, last = (a.decoder_first_pipeline_num_layers,
                   a.decoder_last_pipeline_num_layers)
    if first is None and last is None:
        need(a.num_layers % pp == 0, "uneven layers without split flags")
        sizes = [a.num_layers // pp] * pp
    else:
        need(first is not None and last is not None, "one split flag alone")
        if pp == 2:
            need(first + last == a.num_layers, "first + last != layers")
            sizes = [first, last]
        else:
            mid, rem = divmod(a.num_layers - first - last, pp - 2)
            need(rem == 0, "middle layers do not split evenly")
            sizes = [first] + [mid] * (pp - 2) + [last]
    need(sizes == f["sizes"], "megatron split %s is not the plan's %s"
         % (sizes, f["sizes"]))
    return "TP %d PP %d DP %d, split %s" % (tp, pp, dp, sizes)


def check_deepspeed(f, launch):
    with open(os.path.join(launch, "ds_config.json")) as fh:
        c = json.load(fh)
    with open(os.path.join(launch, "deepspeed-pipeline.json")) as fh:
        pl = json.load(fh)
    slots = 0
    with open(os.path.join(launch, "hostfile")) as fh:
        for line in fh:
            host, s = line.split()
            need(s.startswith("slots="), "hostfile line %r" % line)
            slots += int(s[6:])
    need(slots == f["gpus"], "hostfile slots %d != GPUs %d"
         % (slots, f["gpus"]))
    axes, dims = pl["topology"]["axes"], pl["topology"]["dims"]
    need(axes == ["data", "pipe", "model"], "topology axes %s" % axes)
    dp, pp, tp = dims
    need(dp * pp * tp == f["gpus"], "data x pipe x model != GPUs")
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]) and
         pl["num_stages"] == pp, "deepspeed degrees differ from the plan")
    need(c["train_batch_size"] == c["train_micro_batch_size_per_gpu"] *
         c["gradient_accumulation_steps"] * dp, "train_batch_size != "
         "micro x accumulation x DP")
    need(c["train_batch_size"] == f["global"] and
         c["gradient_accumulation_steps"] == f["m"],
         "deepspeed batch differs from the plan")
    need(pl["partition_method"] == "uniform", "partition_method")
    b = ds_uniform(pl["num_layers"], pp)
    sizes = [b[j + 1] - b[j] for j in range(pp)]
    need(sizes == f["sizes"], "uniform split %s is not the plan's %s"
         % (sizes, f["sizes"]))
    return "TP %d PP %d DP %d, split %s" % (tp, pp, dp, sizes)


def check_torchtitan(f, launch):
    with open(os.path.join(launch, "torchtitan.toml"), "rb") as fh:
        t = tomllib.load(fh)
    par, tr = t["parallelism"], t["training"]
    dp = par["data_parallel_replicate_degree"] * \
        par["data_parallel_shard_degree"]
    tp, pp = par["tensor_parallel_degree"], par["pipeline_parallel_degree"]
    need(dp * tp * pp == f["gpus"], "DP x TP x PP != GPUs")
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]),
         "torchtitan degrees differ from the plan")
    mb = par["pipeline_parallel_microbatch_size"]
    acc, rem = divmod(tr["local_batch_size"], mb)
    need(rem == 0 and acc == f["m"] and mb * acc * dp == tr[
        "global_batch_size"] == f["global"], "micro x accumulation x DP "
         "!= global batch")
    pts = par["pipeline_parallel_split_points"]
    need(len(pts) == pp - 1, "%d split points for PP %d" % (len(pts), pp))
    starts = [0] + [int(s.split(".")[1]) for s in pts]
    need(all(s.startswith("layers.") for s in pts), "split point names")
    need(starts == f["firsts"], "split points %s are not the plan's "
         "stage starts %s" % (starts, f["firsts"]))
    return "TP %d PP %d DP %d, split points %s" % (tp, pp, dp, pts)


def main():
    if len(sys.argv) != 4:
        fail("usage: runtime-check.py RUNTIME PLAN.json LAUNCH_DIR")
    runtime, plan_path, launch = sys.argv[1:]
    with open(plan_path) as fh:
        f = check_plan(runtime, json.load(fh))
    what = {"megatron": check_megatron, "deepspeed": check_deepspeed,
            "torchtitan": check_torchtitan}[runtime](f, launch)
    print("%s: %d GPUs, %s" % (runtime, f["gpus"], what))


main()
