#!/usr/bin/python3
# tests/cli/megatron-memory.py - dlplan's memory per stage against Megatron-LM's
# own estimate, megatron/training/theoretical_memory_usage.py at commit
# d98e8a64ddf3 (2026-08-22), for plans made with --runtime megatron.
#
# usage: megatron-memory.py [--report FILE] PLANDIR...
#
# Each PLANDIR holds plan.json and launch/megatron.args (dlplan plan -o DIR
# --launcher megatron).  For every stage of every group the script takes
# Megatron's figure for the arguments dlplan emitted, per GPU:
#
#   weights and optimizer state, compute_weight_and_optimizer_memory()
#     (lines 12-305): per transformer layer 2h^2 (1 + g/a) of attention
#     (line 79) and 2 h F (x 3/2 with --swiglu) of MLP (line 97), split
#     over TP, and 2 h of norms (x 2 with LayerNorm, line 121) whole;
#     the h x V_p embedding (line 88; V_p the vocabulary padded to a
#     multiple of 128 TP) over TP on the first stage, and on the last the
#     output layer (untied, or with PP > 1 the copy of the tied
#     embedding Megatron's last stage keeps); the final norm on the last;
#     18 bytes a parameter, 6 + 12/DP with --use-distributed-optimizer
#     (line 293);
#   activations, compute_activation_memory() (lines 307-372): per layer
#     s b h (18 + 4 F / h) / TP (Korthikanti et al. 2022, Table 2, with
#     sequence parallelism and no attention scores kept), times the
#     stage's transformer layers and its micro-batches in flight,
#     min(m, PP - stage) under 1F1B (line 349 for the first stage);
#     the embedding's 8 s b + s b h (lines 326, 330) on the first
#     stage, times its micro-batches in flight; the output layer's
#     4 s b h (1 + V_p / h) (line 362) on the last stage; all over TP.
#
# Megatron's function answers for the most loaded first stage; placing its
# own terms on the stage that holds them is the only change.  The formula
# without sequence parallelism (compute_activation_memory_without_sp(),
# lines 375-444) is not used for TP 1 plans: sequence parallelism is then
# a no-op, and that formula (s b h (10 + 24/TP), plus 5 %) does not follow
# the MLP width; report_theoretical_memory() prints it even with sequence
# parallelism on, and Megatron's own published H100 runs would not fit
# under it (dlplan(1), Memory savers, says more).
#
# The check: Megatron's figure <= dlplan's stage memory <= 1.10 x it, per
# stage.  With MEGATRON_LM naming a checkout of Megatron-LM at d98e8a64,
# the script also calls Megatron's own compute_weight_and_optimizer_memory()
# and compute_activation_memory() for the first stage of every plan with
# an even split and asserts the figures above equal them.

import argparse
import csv
import importlib.util
import json
import math
import os
import statistics
import sys
import types

LIMIT = 1.10


def die(msg):
    sys.stderr.write("megatron-memory: %s\n" % msg)
    sys.exit(1)


def megatron_args(path):
    """megatron.args as a dict of the flags dlplan writes."""
    with open(path) as fh:
        words = fh.read().split("\n")[:-1]
    a, i = {}, 0
    while i < len(words):
        k = words[i][2:].replace("-", "_")
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            a[k] = words[i + 1]
            i += 2
        else:
            a[k] = True
            i += 1
    return a


def num(a, k, d=None):
    v = a.get(k, d)
    return None if v is None else int(v)


def padded_vocab(v, tp):
    # megatron/training/tokenizer/tokenizer.py _vocab_size_with_padding():
    # a multiple of make-vocab-size-divisible-by (128) x TP.
    m = 128 * tp
    return int(math.ceil(v / m) * m)


class Shape:
    def __init__(self, a, plan):
        self.tp = num(a, "tensor_model_parallel_size")
        self.pp = num(a, "pipeline_model_parallel_size")
        self.dp = len(plan["groups"])
        self.h = num(a, "hidden_size")
        self.heads = num(a, "num_attention_heads")
        self.groups = num(a, "num_query_groups") if \
            a.get("group_query_attention") else self.heads
        self.ffn = num(a, "ffn_hidden_size")
        self.s = num(a, "seq_length")
        self.b = num(a, "micro_batch_size")
        self.vp = padded_vocab(num(a, "vocab_size"), self.tp)
        self.swiglu = bool(a.get("swiglu"))
        self.norm = 1 if a.get("normalization") == "RMSNorm" else 2
        self.untied = bool(a.get("untie_embeddings_and_output_weights"))
        self.distopt = bool(a.get("use_distributed_optimizer"))
        self.sp = bool(a.get("sequence_parallel"))

    def bytes_per_param(self):
        return 18 if not self.distopt else 6 + 12 / self.dp

    def layer_params(self):
        attn = 2 * self.h * self.h * (1 + self.groups / self.heads)
        mlp = 2 * self.h * self.ffn * (1.5 if self.swiglu else 1)
        return (attn + mlp) / self.tp + 2 * self.h * self.norm

    def weights(self, stage, blocks):
        p = blocks * self.layer_params()
        emb = self.h * self.vp / self.tp
        if stage == 0:
            p += emb
        if stage == self.pp - 1:
            p += self.norm * self.h
            if self.untied or self.pp > 1:
                p += emb
        return p * self.bytes_per_param()

    def activations(self, stage, blocks, m, v=1):
        s, b, h = self.s, self.b, self.h
        inflight = min(m, self.pp - stage)
        if v > 1:
            # The interleaved schedule: the warm-up forwards of each rank
            # and one more, a chunk each (get_pp_rank_microbatches(),
            # megatron/core/pipeline_parallel/schedules.py:929-986); on the
            # first stage pp x interleaved_schedule_memory_penalty (line
            # 343 of theoretical_memory_usage.py).
            w = min(m * v, 2 * (self.pp - stage - 1) + (v - 1) * self.pp)
            inflight = (w + (w < m * v)) / v
        act = s * b * h * (18 + 4 * self.ffn / h) * blocks * inflight
        if stage == 0:
            act += (8 * s * b + s * b * h) * inflight
        if stage == self.pp - 1:
            act += s * b * h * 4 * (1 + self.vp / h)
        return act / self.tp


def load_megatron(root):
    """Megatron's theoretical_memory_usage.py as a module, its one import
    (print helpers of megatron/training/utils.py) stubbed."""
    path = os.path.join(root, "megatron", "training",
                        "theoretical_memory_usage.py")
    pkg = types.ModuleType("mt")
    pkg.__path__ = []
    utils = types.ModuleType("mt.utils")
    utils.is_hybrid_model = lambda args: False
    utils.print_rank_0 = lambda *a, **k: None
    sys.modules["mt"] = pkg
    sys.modules["mt.utils"] = utils
    spec = importlib.util.spec_from_file_location("mt.tmu", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def megatron_first_stage(mod, sh, blocks0, m, v=1):
    """Megatron's own figures for the first stage of an even split."""
    ns = types.SimpleNamespace(
        kv_channels=sh.h // sh.heads, num_attention_heads=sh.heads,
        hidden_size=sh.h, group_query_attention=sh.groups != sh.heads,
        num_query_groups=sh.groups, num_experts=None, swiglu=sh.swiglu,
        moe_shared_expert_intermediate_size=None, moe_layer_freq=1,
        num_layers=blocks0 * sh.pp, mtp_num_layers=None,
        normalization="RMSNorm" if sh.norm == 1 else "LayerNorm",
        multi_latent_attention=False, padded_vocab_size=sh.vp,
        untie_embeddings_and_output_weights=sh.untied,
        ffn_hidden_size=sh.ffn, moe_latent_size=None, moe_router_topk=2,
        add_bias_linear=False, expert_tensor_parallel_size=1,
        expert_model_parallel_size=1,
        pipeline_model_parallel_size=sh.pp, world_size=sh.tp * sh.pp * sh.dp,
        tensor_model_parallel_size=sh.tp, data_parallel_size=sh.dp,
        use_distributed_optimizer=sh.distopt, seq_length=sh.s,
        micro_batch_size=sh.b,
        virtual_pipeline_model_parallel_size=v if v > 1 else None,
        moe_ffn_hidden_size=None)
    w = mod.compute_weight_and_optimizer_memory(ns)
    a = mod.compute_activation_memory(ns, num_microbatches=m)
    return w, a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report")
    ap.add_argument("dirs", nargs="+")
    o = ap.parse_args()
    mod = None
    if os.environ.get("MEGATRON_LM"):
        mod = load_megatron(os.environ["MEGATRON_LM"])
    ratios, lines, bad, own = [], [], [], 0
    for d in o.dirs:
        with open(os.path.join(d, "plan.json")) as fh:
            plan = json.load(fh)
        a = megatron_args(os.path.join(d, "launch", "megatron.args"))
        sh = Shape(a, plan)
        if sh.tp > 1 and not sh.sp:
            die("%s: TP %d without --sequence-parallel" % (d, sh.tp))
        opt = plan["options"]
        if opt.get("recompute", "none") == "full" or \
                opt.get("attention", "unfused") != "fused":
            die("%s: Megatron's formula is for fused attention without "
                "full recomputation" % d)
        model = [i["path"] for i in plan["inputs"] if i["kind"] == "model"][0]
        model = os.path.join(d, model)
        with open(model) as fh:
            names = [r[0] for r in csv.reader(
                l for l in fh if not l.startswith("#"))][1:]
        for g, grp in enumerate(plan["groups"]):
            m = grp["micro_batches"]
            v = grp.get("virtual_stages", 1)
            for j, st in enumerate(grp["stages"]):
                blocks = sum(1 for i in range(st["layers"][0], st["layers"][1] + 1)
                             if names[i].startswith("block"))
                mt = sh.weights(j, blocks) + sh.activations(j, blocks, m,
                                                            v)
                r = st["mem_bytes"] / mt
                ratios.append(r)
                lines.append("%s group %d stage %d: %d blocks, dlplan %.3f "
                             "GB, megatron %.3f GB, ratio %.4f"
                             % (d, g, j, blocks, st["mem_bytes"] / 1e9,
                                mt / 1e9, r))
                if not 1 - 1e-9 <= r <= LIMIT:
                    bad.append(lines[-1])
        if mod is not None:
            blocks = [sum(1 for i in range(s["layers"][0], s["layers"][1] + 1)
                          if names[i].startswith("block"))
                      for s in plan["groups"][0]["stages"]]
            if len(set(blocks)) == 1:
                m = plan["groups"][0]["micro_batches"]
                v = plan["groups"][0].get("virtual_stages", 1)
                w, act = megatron_first_stage(mod, sh, blocks[0], m, v)
                mine_w = sh.weights(0, blocks[0])
                mine_a = sh.activations(0, blocks[0], m, v)
                # Megatron spreads the final norm over the stages
                # (line 254); the figures agree to it.
                tol = (sh.norm * sh.h + 1) * sh.bytes_per_param()
                if abs(w - mine_w) > tol or abs(act - mine_a) > 1e-6 * act:
                    die("%s: the transcription differs from Megatron's "
                        "own functions: weights %r vs %r, activations %r "
                        "vs %r" % (d, mine_w, w, mine_a, act))
                own += 1
    lines.append("stages %d, ratio dlplan / megatron: min %.4f, median %.4f, "
                 "max %.4f%s" % (len(ratios), min(ratios),
                                 statistics.median(ratios), max(ratios),
                                 ", %d plans checked against Megatron's own "
                                 "functions" % own if mod else ""))
    if o.report:
        with open(o.report, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    if bad:
        die("%d stages outside [1, %.2f] x Megatron's figure:\n%s"
            % (len(bad), LIMIT, "\n".join(bad)))
    print(lines[-1])


main()
