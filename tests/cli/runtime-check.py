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
import csv
import json
import os
import re
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


# Compute capability of the GPU models the bundled clusters name; bf16
# arithmetic needs 8.0 (Ampere) or later.
GPU_CC = {"H100": 9.0, "A100": 8.0, "L4": 8.9, "A10": 8.6, "T4": 7.5,
          "V100": 7.0, "P100": 6.0, "P40": 6.1, "K80": 3.7}


def plan_fp16(plan):
    """Whether a GPU the plan uses has no bf16, read from the cluster's
    nodes.csv (gpu_model), independently of plan.json's precision."""
    path = [i["path"] for i in plan["inputs"] if i["kind"] == "nodes"][0]
    path = os.path.join(plan["_dir"], path)
    with open(path) as fh:
        rows = csv.DictReader(l for l in fh if not l.startswith("#"))
        model = {r["node"]: r["gpu_model"] for r in rows}
    used = {s["node"] for g in plan["groups"] for s in g["stages"]}
    ccs = [GPU_CC[model[n].split("-")[0]] for n in used]
    fp16 = min(ccs) < 8.0
    need(plan.get("precision") == ("fp16" if fp16 else "bf16"),
         "plan.json precision %r, the GPUs %s" % (plan.get("precision"),
                                                 sorted(model[n] for n in
                                                        used)))
    return fp16


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
    v = groups[0].get("virtual_stages", 1)
    need(all(gr.get("virtual_stages", 1) == v for gr in groups),
         "groups with different virtual stages")
    need(v == 1 or runtime == "megatron", "%s: virtual stages" % runtime)
    return {"k": k, "S": len(g0), "G": len(groups), "m": m, "v": v,
            "gpus": len(used), "layers": layers, "sizes": sizes,
            "firsts": firsts, "micro": opt["micro_batch"],
            "global": opt["global_batch"],
            "rc": [s["recompute_layers"] for s in g0],
            "sharded": opt.get("optimizer") == "sharded"}


def whole_rc(runtime, f, blocks):
    """DeepSpeed's activation_checkpoint_interval and torchtitan's FullAC
    recompute every block of a stage or none, the same on every stage:
    whether the plan recomputes."""
    rc = any(f["rc"])
    need(not rc or f["rc"] == blocks, "%s: stages recompute %s of their "
         "blocks %s, not all or none" % (runtime, f["rc"], blocks))
    return rc


# Megatron-LM at commit d98e8a64ddf3 (2026-08-22).  Where each fact
# below comes from, as MEGATRON:FILE:LINE:
MT = "Megatron-LM d98e8a64ddf3"
MT_TB = "megatron/core/transformer/transformer_block.py"
MT_TC = "megatron/core/transformer/transformer_config.py"
MT_ARGS = "megatron/training/arguments.py"
MT_TL = "megatron/core/transformer/transformer_layer.py"
MT_SCH = "megatron/core/pipeline_parallel/schedules.py"


def megatron_parser():
    """The arguments dlplan writes, as Megatron declares them: flags of
    dataclass fields are "--" + the name with "-" for "_"
    (megatron/training/argument_utils.py:106), booleans store_true
    (argument_utils.py:191)."""
    p = argparse.ArgumentParser(prog="megatron", allow_abbrev=False)
    num = ["tensor-model-parallel-size", "pipeline-model-parallel-size",
           "num-layers", "decoder-first-pipeline-num-layers",
           "decoder-last-pipeline-num-layers", "micro-batch-size",
           "global-batch-size", "hidden-size", "num-attention-heads",
           "num-query-groups", "ffn-hidden-size", "seq-length",
           "max-position-embeddings", "vocab-size",
           "recompute-num-layers", "num-virtual-stages-per-pipeline-rank",
           "num-layers-per-virtual-pipeline-stage"]
    for n in num:
        p.add_argument("--" + n, type=int)
    for n in ["hidden-dropout", "attention-dropout"]:
        p.add_argument("--" + n, type=float)
    for n in ["position-embedding-type", "normalization",
              "attention-backend", "recompute-granularity",
              "recompute-method"]:
        p.add_argument("--" + n)
    for n in ["use-tp-pp-dp-mapping", "account-for-embedding-in-pipeline-"
              "split", "account-for-loss-in-pipeline-split", "bf16", "fp16",
              "grad-reduce-in-bf16", "group-query-attention", "swiglu",
              "disable-bias-linear", "untie-embeddings-and-output-weights",
              "sequence-parallel", "recompute-activations",
              "use-distributed-optimizer", "overlap-grad-reduce",
              "overlap-param-gather", "tp-comm-overlap"]:
        p.add_argument("--" + n, action="store_true")
    return p


def megatron_layers_to_build(a, pp_rank):
    """get_num_layers_to_build() without a layout or virtual stages
    (MT_TB:76-204): the transformer layers pipeline rank pp_rank builds."""
    pp = a.pipeline_model_parallel_size
    first_pp, last_pp = pp_rank == 0, pp_rank == pp - 1
    first = a.decoder_first_pipeline_num_layers
    last = a.decoder_last_pipeline_num_layers
    if first is not None or last is not None:
        # MT_TB:108-112: no account-for flags with uneven stages.
        need(not (a.account_for_embedding_in_pipeline_split or
                  a.account_for_loss_in_pipeline_split),
             "%s:108: first/last with account-for flags" % MT_TB)
        left, stages = a.num_layers, pp
        if first is not None:
            left, stages = left - first, stages - 1
        if last is not None:
            left, stages = left - last, stages - 1
        if stages > 0:
            need(left % stages == 0, "%s:132: left over layers %d not "
                 "divisible by %d stages" % (MT_TB, left, stages))
            n = left // stages
        else:
            n = 0
        if first_pp and first is not None:
            n = first                                   # MT_TB:143
        if last_pp and last is not None:
            n = last                                    # MT_TB:146
    else:
        total = a.num_layers
        total += 1 if a.account_for_embedding_in_pipeline_split else 0
        total += 1 if a.account_for_loss_in_pipeline_split else 0
        need(total % pp == 0, "%s:157: %d layers not divisible by PP %d"
             % (MT_TB, total, pp))
        n = total // pp
    if a.account_for_embedding_in_pipeline_split and first_pp:
        n -= 1                                          # MT_TB:193
    if a.account_for_loss_in_pipeline_split and last_pp:
        n -= 1                                          # MT_TB:200
    need(n >= 0, "%s:194: stage %d builds %d layers" % (MT_TB, pp_rank, n))
    return n


def megatron_vp(a):
    """The virtual pipeline size (MT_ARGS:929-983): None without one."""
    vpl = a.num_layers_per_virtual_pipeline_stage
    vpn = a.num_virtual_stages_per_pipeline_rank
    need(vpl is None or vpn is None, "%s:929 both virtual stage arguments"
         % MT_ARGS)
    if vpl is not None:
        need(a.decoder_first_pipeline_num_layers is None and
             a.decoder_last_pipeline_num_layers is None,
             "%s:955 layers per virtual stage with uneven stages" % MT_ARGS)
        total = a.num_layers + a.account_for_embedding_in_pipeline_split \
            + a.account_for_loss_in_pipeline_split
        per = total // a.pipeline_model_parallel_size
        need(per % vpl == 0, "%s:972 stage layers %d not divisible by %d"
             % (MT_ARGS, per, vpl))
        vp = per // vpl
    else:
        vp = vpn
    return None if vp == 1 else vp


def megatron_offset(a, pp_rank, vp_stage, vp):
    """get_transformer_layer_offset() (MT_TL:65-219) without a layout: the
    first transformer layer of chunk vp_stage of pipeline rank pp_rank."""
    pp = a.pipeline_model_parallel_size
    first = a.decoder_first_pipeline_num_layers
    last = a.decoder_last_pipeline_num_layers
    if pp == 1:
        return 0
    if first is not None or last is not None:
        middle_stages = pp - (first is not None) - (last is not None)
        nf, nl = first or 0, last or 0
        middle = a.num_layers - nf - nl
        middle_rank = pp_rank if first is None else pp_rank - 1
        if vp is not None:
            cf, cl, cm = nf // vp, nl // vp, middle // vp       # MT_TL:126
            total = cf + cm + cl
            if pp_rank == 0:
                return vp_stage * total
            return vp_stage * total + cf + middle_rank * (cm // middle_stages)
        per = middle // middle_stages if middle_stages > 0 else 0
        return 0 if pp_rank == 0 else middle_rank * per + nf
    n = a.num_layers + a.account_for_embedding_in_pipeline_split \
        + a.account_for_loss_in_pipeline_split
    per = n // pp
    if vp is not None:
        off = vp_stage * (n // vp) + pp_rank * (per // vp)     # MT_TL:202
    else:
        off = pp_rank * per
    if a.account_for_embedding_in_pipeline_split and not (
            vp_stage in (None, 0) and pp_rank == 0):
        off -= 1
    return off


def megatron_validate(a, world, env):
    """The validate_args() and TransformerConfig.__post_init__ conditions
    on these arguments; returns the list checked."""
    tp, pp = a.tensor_model_parallel_size, a.pipeline_model_parallel_size
    heads = a.num_attention_heads
    groups = a.num_query_groups if a.group_query_attention else heads
    conds = [
        ("%s:432 world size divisible by TP x PP" % MT_ARGS,
         world % (tp * pp) == 0),
        ("%s:1205 not both --bf16 and --fp16" % MT_ARGS,
         not (a.bf16 and a.fp16)),
        ("%s:1332 hidden size divisible by heads" % MT_ARGS,
         a.hidden_size % heads == 0),
        ("%s:1354 max_position_embeddings >= seq_length" % MT_ARGS,
         a.max_position_embeddings >= a.seq_length),
        ("%s:1477 CUDA_DEVICE_MAX_CONNECTIONS=1 with TP > 1 (before "
         "Blackwell)" % MT_ARGS, tp == 1 or env.get(
             "CUDA_DEVICE_MAX_CONNECTIONS") == "1"),
        ("%s:1446 heads divisible by TP" % MT_TC, heads % tp == 0),
        ("megatron/core/model_parallel_config.py:502 sequence parallelism "
         "only with TP > 1", not a.sequence_parallel or tp > 1),
        ("%s:1461 query groups a multiple or a divisor of TP" % MT_TC,
         groups % tp == 0 or tp % groups == 0),
        ("%s:1024 --overlap-param-gather only with the distributed "
         "optimizer" % MT_ARGS, not a.overlap_param_gather or
         a.use_distributed_optimizer),
        ("%s:1027 --overlap-param-gather with --overlap-grad-reduce"
         % MT_ARGS, not a.overlap_param_gather or a.overlap_grad_reduce),
        ("%s:2229 first/last not with the account-for flags" % MT_TC,
         not ((a.decoder_first_pipeline_num_layers is not None or
               a.decoder_last_pipeline_num_layers is not None) and
              (a.account_for_embedding_in_pipeline_split or
               a.account_for_loss_in_pipeline_split))),
    ]
    first = a.decoder_first_pipeline_num_layers
    last = a.decoder_last_pipeline_num_layers
    if first is not None or last is not None:
        left, stages = a.num_layers, pp
        if first is not None:
            conds.append(("%s:2304 first stage layers > 0" % MT_TC,
                          first > 0))
            left, stages = left - first, stages - 1
        if last is not None:
            conds.append(("%s:2323 last stage layers > 0" % MT_TC,
                          last > 0))
            left, stages = left - last, stages - 1
        conds.append(("%s:2341 middle layers exactly when middle stages"
                      % MT_TC, bool(left) == bool(stages)))
        conds.append(("%s:2349 middle layers divisible by middle stages"
                      % MT_TC, stages == 0 or left % stages == 0))
    else:
        total = a.num_layers + a.account_for_embedding_in_pipeline_split \
            + a.account_for_loss_in_pipeline_split
        conds.append(("%s:997 layers (with the account-for flags) "
                      "divisible by PP" % MT_ARGS, total % pp == 0))
    vp = megatron_vp(a)
    if vp is not None:
        conds.append(("%s:1001 the interleaved schedule with PP > 1 (p2p "
                      "overlap on by default, line 3118)" % MT_ARGS, pp > 1))
        conds.append(("%s:176 each stage's layers divisible by the "
                      "virtual stages" % MT_TB, all(
                          megatron_layers_to_build(a, r) % vp == 0
                          for r in range(pp))))
        m = a.global_batch_size // (a.micro_batch_size * (world // (tp * pp)))
        conds.append(("%s:1160 micro-batches at least PP (the default "
                      "group, model_parallel_config.py:567)" % MT_SCH,
                      m >= pp))
        conds.append(("%s:1172 micro-batches a multiple of the group of PP"
                      % MT_SCH, m % pp == 0))
    for what, ok in conds:
        need(ok, "%s: %s fails" % (MT, what))
    return [w for w, _ in conds]


def model_arch(path):
    """The "# dlplan model" line of model.csv: family and sizes."""
    with open(path) as fh:
        w = fh.readline().split()
    need(w[:3] == ["#", "dlplan", "model"], "%s: no dlplan model line"
         % path)
    arch = {"family": w[3]}
    i = 4
    while i + 1 < len(w):
        arch[w[i][2:]] = w[i + 1]
        i += 2
    return arch


def model_blocks(plan, f):
    """Transformer blocks (rows named blockN) of each stage of the plan."""
    path = [i["path"] for i in plan["inputs"] if i["kind"] == "model"][0]
    path = os.path.join(plan["_dir"], path)
    with open(path) as fh:
        rows = [r for r in csv.reader(l for l in fh if not l.startswith("#"))]
    names = [r[0] for r in rows[1:]]
    need(len(names) == f["layers"], "model rows %d, plan layers %d"
         % (len(names), f["layers"]))
    blk = [bool(re.fullmatch(r"block[0-9]+", n)) for n in names]
    return [sum(blk[a:a + n]) for a, n in zip(f["firsts"], f["sizes"])], \
        model_arch(path)


def sh_exports(script):
    """The variables a generated script sets and exports."""
    env = {}
    with open(script) as fh:
        for line in fh:
            m = re.fullmatch(r"([A-Z_]+)=(\S+)\n", line)
            if m:
                env[m.group(1)] = m.group(2)
    return env


def check_megatron(f, launch, plan):
    with open(os.path.join(launch, "megatron.args")) as fh:
        a = megatron_parser().parse_args(fh.read().split("\n")[:-1])
    tp, pp = a.tensor_model_parallel_size, a.pipeline_model_parallel_size
    need(f["gpus"] % (tp * pp) == 0, "world %d is not a multiple of TP x "
         "PP" % f["gpus"])
    dp = f["gpus"] // (tp * pp)
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]), "megatron TP, PP, DP "
         "%s differ from the plan's %s" % ((tp, pp, dp),
                                           (f["k"], f["S"], f["G"])))
    blocks, arch = model_blocks(plan, f)
    need(a.num_layers == sum(blocks), "--num-layers %d, the model has %d "
         "transformer blocks" % (a.num_layers, sum(blocks)))
    acc, rem = divmod(a.global_batch_size, a.micro_batch_size * dp)
    # megatron/core/num_microbatches_calculator.py:381
    need(rem == 0 and acc == f["m"] and a.micro_batch_size == f["micro"],
         "micro x accumulation x DP != global batch as planned")
    need(a.use_tp_pp_dp_mapping == (pp > 1 and dp > 1),
         "--use-tp-pp-dp-mapping expected exactly when PP > 1 and DP > 1")
    built = [megatron_layers_to_build(a, r) for r in range(pp)]
    need(built == blocks, "megatron builds %s transformer layers per "
         "stage, the plan has %s" % (built, blocks))
    # Interleaved: the chunks dlplan(1) says it prices, chunk c of stage
    # s from block c N + sum_{j<s} n_j / v on (N = sum_j n_j / v), are
    # where Megatron puts them.
    vp = megatron_vp(a)
    need((vp or 1) == f["v"], "megatron builds %s virtual stages, the plan "
         "%d" % (vp or 1, f["v"]))
    for c in range(f["v"] if vp else 0):
        for r in range(pp):
            want = c * sum(blocks) // vp + sum(blocks[:r]) // vp
            got = megatron_offset(a, r, c, vp)
            need(got == want, "megatron puts chunk %d of stage %d at layer "
                 "%d, the plan at %d" % (c, r, got, want))
    # Ranks: megatron/training/initialize.py:395 orders them
    # tp-cp-ep-dp-pp, or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping
    # (the first axis varies fastest).
    for rk in plan["ranks"]:
        r = rk["rank"] // tp
        stage = r % pp if a.use_tp_pp_dp_mapping else r // dp
        need(stage == rk["stage"], "rank %d: megatron pipeline rank %d, "
             "the plan's stage %d" % (rk["rank"], stage, rk["stage"]))
    # The sizes of the model.
    want = {"hidden_size": arch["hidden"], "num_attention_heads":
            arch["heads"], "ffn_hidden_size": arch["ffn"], "seq_length":
            arch["seq"], "vocab_size": arch["vocab"]}
    for k, v in want.items():
        need(getattr(a, k) == int(v), "--%s %s, the model %s"
             % (k.replace("_", "-"), getattr(a, k), v))
    kv = int(arch.get("kv-heads", arch["heads"]))
    need(kv == (a.num_query_groups if a.group_query_attention else
                a.num_attention_heads), "query groups differ from kv-heads")
    half = arch.get("dtype-bytes") == "2"
    fp16 = plan.get("precision") == "fp16"
    need(a.bf16 == (half and not fp16), "--bf16 for 2 bytes on GPUs "
         "with bf16")
    need(a.fp16 == (half and fp16), "--fp16 for 2 bytes on GPUs "
         "without bf16")
    need(a.untie_embeddings_and_output_weights == (arch["tied"] == "no"),
         "--untie-embeddings-and-output-weights")
    # The memory model divides all activations by TP: sequence
    # parallelism too.
    need(a.sequence_parallel == (tp > 1), "--sequence-parallel with TP > 1")
    env = sh_exports(os.path.join(launch, "megatron.sh"))
    conds = megatron_validate(a, f["gpus"], env)
    return "TP %d PP %d DP %d%s, layers %s, %d conditions of %s" % (
        tp, pp, dp, " (%d virtual stages)" % vp if vp else "", built,
        len(conds), MT)


# DeepSpeed 0.19.6 at commit edaa7221267 (2026-08-22).
DS = "DeepSpeed edaa7221267"


def ds_batch(c, world, how):
    """DeepSpeedConfig's batch sizes for a world size: the missing one
    derived (deepspeed/runtime/config.py:942-987), then the assertion
    (config.py:925-940).  Returns train_batch_size."""
    tb = c.get("train_batch_size")
    mb = c.get("train_micro_batch_size_per_gpu")
    ga = c.get("gradient_accumulation_steps")
    if tb is not None and mb is not None and ga is not None:
        pass
    elif tb is not None and mb is not None:
        ga = tb // mb // world
    elif tb is not None and ga is not None:
        mb = tb // world // ga
    elif mb is not None and ga is not None:
        tb = mb * ga * world
    elif tb is not None:
        ga, mb = 1, tb // world
    elif mb is not None:
        tb, ga = mb * world, 1
    else:
        fail("%s: config.py:985 no train_batch_size nor micro-batch" % DS)
    need(tb > 0 and mb > 0 and ga > 0, "%s: config.py:929-933 batch sizes "
         "not positive" % DS)
    need(tb == mb * ga * world, "%s: config.py:937 with %s (world size "
         "%d): train_batch_size %d != %d * %d * %d" % (DS, how, world, tb,
                                                     mb, ga, world))
    return tb


def check_deepspeed(f, launch, plan):
    with open(os.path.join(launch, "ds_config.json")) as fh:
        c = json.load(fh)
    slots = 0
    with open(os.path.join(launch, "hostfile")) as fh:
        for line in fh:
            host, s = line.split()
            need(s.startswith("slots="), "hostfile line %r" % line)
            slots += int(s[6:])
    need(slots == f["gpus"], "hostfile slots %d != GPUs %d"
         % (slots, f["gpus"]))
    tp = c.get("tensor_parallel", {}).get("autotp_size", 1)
    pl_path = os.path.join(launch, "deepspeed-pipeline.json")
    pp = 1
    if os.path.exists(pl_path):
        with open(pl_path) as fh:
            pl = json.load(fh)
        axes, dims = pl["topology"]["axes"], pl["topology"]["dims"]
        need(axes == ["data", "pipe"], "topology axes %s" % axes)
        pp = dims[1]
        need(pl["num_stages"] == pp and pp > 1, "num_stages")
        # deepspeed/runtime/pipe/topology.py:19-24: the last axis varies
        # fastest, so rank = data x PP + pipe.
        for rk in plan["ranks"]:
            need(rk["rank"] // pp == rk["group"] and rk["rank"] % pp ==
                 rk["stage"], "rank %d: topology coordinates are not the "
                 "plan's group and stage" % rk["rank"])
        need(pl["partition_method"] == "uniform", "partition_method")
        # pipe/module.py:373-393: an interval of 1
        # runs each layer under the checkpoint function, 0 none.
        blocks, _ = model_blocks(plan, f)
        need(pl["activation_checkpoint_interval"] == int(whole_rc(
            "deepspeed", f, blocks)), "activation_checkpoint_interval %s, "
             "the plan recomputes %s" % (pl["activation_checkpoint_"
                                          "interval"], f["rc"]))
        # deepspeed/runtime/utils.py:606-624 partition_uniform
        b = ds_uniform(pl["num_layers"], pp)
        sizes = [b[j + 1] - b[j] for j in range(pp)]
        need(sizes == f["sizes"], "uniform split %s is not the plan's %s"
             % (sizes, f["sizes"]))
    # AutoTP has no pipeline axis (docs/_tutorials/autotp-training.md:14-20:
    # TP, data parallelism, ZeRO; engine.py:671-672 builds its own TP mesh).
    need(tp == 1 or pp == 1, "%s: AutoTP with a pipeline" % DS)
    need(f["gpus"] % (tp * pp) == 0, "world not a multiple of TP x PP")
    dp = f["gpus"] // (tp * pp)
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]),
         "deepspeed degrees %s differ from the plan" % ((tp, pp, dp),))
    # The world size DeepSpeedConfig divides the batch by: a plain module
    # is configured with the mpu the script passes, or none
    # (deepspeed/__init__.py:213-214), a PipelineModule with its own
    # (__init__.py:242-244, the data axis of the topology);
    # runtime/config.py:712-724 takes the mpu's data-parallel size, or
    # without one every rank, the TP ranks of AutoTP too.
    worlds = {"an mpu": dp}
    if pp == 1:
        worlds["no mpu"] = f["gpus"]
    for how, world in worlds.items():
        ds_batch(c, world, how)
    need(c["train_micro_batch_size_per_gpu"] * c["gradient_accumulation_steps"]
         * dp == f["global"] and c["train_micro_batch_size_per_gpu"] ==
         f["micro"] and c["gradient_accumulation_steps"] == f["m"],
         "deepspeed batch differs from the plan")
    # A plain module recomputes only what its own code checkpoints.
    need(pp > 1 or not any(f["rc"]), "deepspeed: the plan recomputes "
         "blocks without a PipelineModule")
    # ZeRO stage 1 shards the optimizer state; the pipeline engine
    # refuses stage 2 and 3 (pipe/engine.py:76-77); with
    # use_multi_rank_bucket_allreduce off each gradient slice is reduced
    # to its owner (zero/stage_1_and_2.py:1435-1468), as priced.
    z = c["zero_optimization"]
    if f["sharded"]:
        need(z == {"stage": 1, "use_multi_rank_bucket_allreduce": False},
             "zero_optimization %s for a sharded optimizer state" % z)
    else:
        need(z == {"stage": 0}, "ZeRO shards what the plan replicates")
    # The precision: bf16 where every GPU of the plan has it, else fp16
    # with dynamic loss scaling (precision_config.py:132: loss_scale 0);
    # never both (runtime/config.py:827-828); without ZeRO the gradients
    # accumulate in the model's type (runtime/engine.py:1484-1496,
    # 2011-2021).
    half = plan["options"]["param_bytes"] == 2
    fp16 = plan_fp16(plan)
    bf = c.get("bf16", {}).get("enabled", False)
    fp = c.get("fp16", {}).get("enabled", False)
    need(not (bf and fp), "%s: config.py:827 bf16 and fp16 both" % DS)
    need(bf == (half and not fp16), "bf16 for 2 bytes on GPUs with bf16")
    need(fp == (half and fp16), "fp16 for 2 bytes on GPUs without bf16")
    need(not fp or c["fp16"].get("loss_scale", 0) == 0, "fp16 without "
         "dynamic loss scaling")
    # With ZeRO stage 1, bf16 and fp32 accumulation take the
    # BF16_Optimizer (engine.py:1994-1996), which all-reduces.
    model_dtype = "fp16" if fp else "bf16" if bf else "fp32"
    accum = c.get("data_types", {}).get("grad_accum_dtype") or model_dtype
    need(accum == model_dtype, "%s: engine.py:2021 model %s, gradient "
         "accumulation %s" % (DS, model_dtype, accum))
    with open(os.path.join(launch, "deepspeed.sh")) as fh:
        sh = fh.read()
    for w in ("--hostfile", "--master_addr", "--master_port", "--no_python",
              "--no_local_rank", "worker.sh"):
        need(w in sh, "deepspeed.sh lacks %s" % w)
    with open(os.path.join(launch, "worker.sh")) as fh:
        need("'--deepspeed_config' '%s'" % os.path.join(
            os.path.abspath(launch), "ds_config.json") in fh.read(),
            "worker.sh does not pass --deepspeed_config")
    return "TP %d PP %d DP %d, split %s, %s" % (tp, pp, dp, f["sizes"], DS)


# torchtitan at commit b5bcd76c66d0 (2026-08-21), as TT:FILE:LINE.
TT = "torchtitan b5bcd76c66d0"


def tt_split_module(names, fqns):
    """The children of the whole model that _split_module() keeps for one
    model part (torchtitan/distributed/pipeline_parallel.py:470-531):
    "layers.N" keeps key N of the layers ModuleDict, whose keys are the
    block numbers str(i) (torchtitan/models/common/decoder.py:250-252);
    other children stay when named."""
    keep = set(fqns)
    kept = []
    for child in names:
        if child == "layers":
            kept += ["layers.%s" % n.split(".", 1)[1] for n in fqns
                     if n.startswith("layers.")]
        elif child in keep:
            kept.append(child)
    return kept


def check_torchtitan(f, launch, plan):
    """Run dlplan_plan() of the generated module on a stand-in base
    configuration with the planned model's sizes, and check what it sets
    with torchtitan's own rules."""
    import types
    blocks, arch = model_blocks(plan, f)
    # torchtitan/models/__init__.py:7-18: the families it builds; of
    # dlplan's (gpt, llama, bert) only llama, as its llama3: RMSNorm,
    # SwiGLU feed_forward (w1: dim -> hidden_dim), rotary positions,
    # grouped KV heads (torchtitan/models/llama3/__init__.py:69-112).
    need(arch["family"] == "llama", "%s: models/__init__.py:7-18 has no "
         "%s family" % (TT, arch["family"]))
    n = sum(blocks)
    ns = types.SimpleNamespace

    def spec(name="llama3", ffn=int(arch["ffn"])):
        """A llama3 ModelSpec (models/llama3/__init__.py:382-390) of the
        planned sizes: blocks with feed_forward.w1.out_features
        (models/common/config_utils.py:298-300)."""
        attn = ns(n_heads=int(arch["heads"]),
                  n_kv_heads=int(arch.get("kv-heads", arch["heads"])))
        block = ns(feed_forward=ns(w1=ns(out_features=ffn)))
        return ns(name=name, model=ns(layers=[block] * n, dim=int(
            arch["hidden"]), vocab_size=int(arch["vocab"]),
            first_attention=attn))
    base = types.ModuleType("dlplan_check_base")
    # The defaults the checks below read (torchtitan/config/configs.py:75,
    # the dataclass fields of ParallelismConfig).
    base.make = lambda: ns(model_spec=base.spec(), parallelism=ns(
        expert_parallel_degree=1), training=ns(disable_cuda_graphs=False),
        activation_checkpoint="SAC")
    sys.modules["dlplan_check_base"] = base
    # torchtitan/distributed/activation_checkpoint.py:166-182: FullAC, its
    # Config the policy that wraps every transformer block.
    full_ac = types.ModuleType("torchtitan.distributed.activation_checkpoint")
    full_ac.FullAC = type("FullAC", (), {"Config": type("Config", (), {})})
    for name in ("torchtitan", "torchtitan.distributed"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules[full_ac.__name__] = full_ac
    os.environ["DLPLAN_TORCHTITAN_BASE"] = "dlplan_check_base:make"
    sys.path.insert(0, launch)
    import dlplan_torchtitan
    # A base of another family or feed-forward size is refused.
    for other in (lambda: spec(name="qwen3"), lambda: spec(ffn=int(
            arch["ffn"]) + 256)):
        base.spec = other
        try:
            dlplan_torchtitan.dlplan_plan()
            fail("dlplan_plan() took a base that is not the planned model")
        except ValueError:
            pass
    base.spec = spec
    c = dlplan_torchtitan.dlplan_plan()
    par, tr = c.parallelism, c.training
    tp, pp = par.tensor_parallel_degree, par.pipeline_parallel_degree
    dp = par.data_parallel_replicate_degree * par.data_parallel_shard_degree
    # TT torchtitan/distributed/parallel_dims.py:182
    need(dp * par.context_parallel_degree * tp * pp == f["gpus"],
         "%s: parallel_dims.py:182 DP x CP x TP x PP != world" % TT)
    need((tp, pp, dp) == (f["k"], f["S"], f["G"]),
         "torchtitan degrees differ from the plan")
    if f["sharded"]:
        # FSDP over the groups, the parameters gathered once a step
        # (distributed/fsdp.py:112-137: "never" keeps them from forward
        # to backward).
        need(par.data_parallel_replicate_degree == 1 and
             par.data_parallel_shard_degree == dp and
             par.fsdp_reshard_after_forward == "never", "FSDP for a "
             "sharded optimizer state")
    else:
        need(par.data_parallel_shard_degree == 1, "FSDP shards what the "
             "plan replicates")
    # torchtitan/models/common/decoder.py:169, 190, 195
    need(pp == 1 or arch["tied"] == "no", "%s: decoder.py:169 weight tying "
         "with a pipeline" % TT)
    attn = c.model_spec.model.first_attention
    need(attn.n_heads % tp == 0 and attn.n_kv_heads % tp == 0,
         "%s: decoder.py:190/195 TP must divide n_heads and n_kv_heads"
         % TT)
    # torchtitan/trainer.py:296-307 (sequence parallel on by default)
    seq = int(arch["seq"])
    need(tr.num_tokens_per_microbatch_per_dp_rank % tp == 0,
         "%s: trainer.py:302 micro-batch tokens not divisible by TP" % TT)
    need(tr.num_tokens_per_microbatch_per_dp_rank == f["micro"] * seq and
         tr.max_context_length == seq, "micro-batch tokens differ")
    # torchtitan/trainer.py:409-427: accumulation steps.
    npp = par.num_pp_microbatches if pp > 1 else 1
    per_dp = tr.num_tokens_per_microbatch_per_dp_rank * npp
    acc, rem = divmod(tr.num_tokens_per_train_step, per_dp * dp)
    need(rem == 0, "%s: trainer.py:419 tokens per step not divisible" % TT)
    need(acc * npp == f["m"] and tr.num_tokens_per_train_step ==
         f["global"] * seq, "accumulation x pipeline micro-batches %d x %d, "
         "the plan %d" % (acc, npp, f["m"]))
    # FullAC recomputes every block; None none; the default SelectiveAC
    # (trainer.py:108-110) is not what dlplan prices.
    if whole_rc("torchtitan", f, blocks):
        need(isinstance(c.activation_checkpoint, full_ac.FullAC.Config),
             "activation_checkpoint %r, the plan recomputes every block"
             % c.activation_checkpoint)
    else:
        need(c.activation_checkpoint is None, "activation checkpointing on")
    # trainer.py:856: without a pipeline FSDP reduces every accumulated
    # micro-batch, which the plan does not price.
    need(not f["sharded"] or dp == 1 or pp > 1 or acc == 1, "FSDP with "
         "%d accumulated micro-batches" % acc)
    need(tr.mixed_precision_param == ("bfloat16" if arch.get(
        "dtype-bytes") == "2" else "float32"), "mixed_precision_param")
    # torchtitan/config/configs.py:94: bfloat16 or float32, no fp16.
    need(arch.get("dtype-bytes") != "2" or not plan_fp16(plan), "%s: "
         "configs.py:94 bfloat16 on a GPU without bf16" % TT)
    need(par.pipeline_parallel_schedule == "1F1B", "schedule")
    # Trainer.Config.__post_init__ (torchtitan/trainer.py:118-130), run
    # again on the configuration tyro builds from this one
    # (config/manager.py:40-42): pipeline micro-batches > 0, then
    # _validate_cuda_graphs (trainer.py:168-178), also called at
    # trainer.py:352.
    need(par.num_pp_microbatches > 0, "%s: trainer.py:125 "
         "num_pp_microbatches must be greater than 0" % TT)
    need(tr.disable_cuda_graphs or pp == 1, "%s: trainer.py:172-176 CUDA "
         "graphs do not support pipeline parallelism yet" % TT)
    need(tr.disable_cuda_graphs or par.expert_parallel_degree == 1,
         "%s: trainer.py:178 CUDA graphs with expert parallelism" % TT)
    if pp == 1:
        return "TP %d PP 1 DP %d, accumulation %d" % (tp, dp, acc)
    # A single-stage schedule: one model part per PP rank
    # (pipeline_parallel.py:194-264).
    parts = par.module_fqns_per_model_part
    need(len(parts) == pp, "%d model parts for PP %d" % (len(parts), pp))
    children = ["tok_embeddings", "layers", "norm", "lm_head"]
    got = []
    for j, fq in enumerate(parts):
        kept = tt_split_module(children, fq)
        need(sorted(kept) == sorted(fq), "stage %d: %s names modules the "
             "model does not have" % (j, fq))
        lay = [int(k.split(".")[1]) for k in kept if k.startswith("layers.")]
        got.append(len(lay))
        a = sum(blocks[:j])
        need(lay == list(range(a, a + blocks[j])), "stage %d keeps blocks "
             "%s, the plan %d..%d" % (j, lay, a, a + blocks[j] - 1))
        need(("tok_embeddings" in kept) == (j == 0), "tok_embeddings")
        need(("norm" in kept and "lm_head" in kept) == (j == pp - 1),
             "norm and lm_head")
    # Ranks: the mesh is pp, dp_replicate, dp_shard, cp, tp
    # (parallel_dims.py:309-310); torchtitan.sh renumbers RANK.
    with open(os.path.join(launch, "torchtitan.sh")) as fh:
        m = re.search(r"RANK=\$\(\(DLPLAN_STAGE \* (\d+) \+ DLPLAN_GROUP "
                      r"\* (\d+) \+ DLPLAN_TP_RANK\)\)", fh.read())
    need(m is not None, "torchtitan.sh sets no RANK")
    seen = set()
    for rk in plan["ranks"]:
        r = rk["stage"] * int(m.group(1)) + rk["group"] * int(m.group(2)) \
            + rk["tp_rank"]
        seen.add(r)
        need(r // (dp * tp) == rk["stage"] and (r // tp) % dp ==
             rk["group"] and r % tp == rk["tp_rank"], "rank %d: torchtitan "
             "rank %d is not its stage, group, TP rank" % (rk["rank"], r))
    need(seen == set(range(f["gpus"])), "RANK is not a permutation")
    return "TP %d PP %d DP %d, blocks %s, %s" % (tp, pp, dp, got, TT)


def main():
    if len(sys.argv) != 4:
        fail("usage: runtime-check.py RUNTIME PLAN.json LAUNCH_DIR")
    runtime, plan_path, launch = sys.argv[1:]
    with open(plan_path) as fh:
        plan = json.load(fh)
    plan["_dir"] = os.path.dirname(os.path.abspath(plan_path))
    f = check_plan(runtime, plan)
    what = {"megatron": check_megatron, "deepspeed": check_deepspeed,
            "torchtitan": check_torchtitan}[runtime](f, launch, plan)
    print("%s: %d GPUs, %s" % (runtime, f["gpus"], what))


main()
