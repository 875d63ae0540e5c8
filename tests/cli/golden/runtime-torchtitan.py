#
# torchtitan.sh runs: python3 -m torchtitan.train --module dlplan_torchtitan
# --config dlplan_plan.  Written for torchtitan b5bcd76c66d0 (2026-08-21).
import importlib
import os

BASE = "torchtitan.models.llama3.config_registry:llama3_8b"
MODEL = {"name": "llama3", "blocks": 32, "dim": 4096, "vocab_size": 32000,
         "n_heads": 32, "n_kv_heads": 32, "hidden_dim": 11008}


def _base():
    name = os.environ.get("DLPLAN_TORCHTITAN_BASE", BASE)
    module, _, function = name.partition(":")
    return getattr(importlib.import_module(module), function)()


def _check(spec):
    """Refuse a base whose model is not the planned one."""
    model = spec.model
    attn = getattr(model, "first_attention", None)
    ffn = getattr(model.layers[0], "feed_forward", None) if model.layers \
        else None
    have = {"name": getattr(spec, "name", None),
            "blocks": len(model.layers),
            "dim": getattr(model, "dim", MODEL["dim"]),
            "vocab_size": getattr(model, "vocab_size",
                                  MODEL["vocab_size"]),
            "n_heads": getattr(attn, "n_heads", MODEL["n_heads"]),
            "n_kv_heads": getattr(attn, "n_kv_heads", None) or
            getattr(attn, "n_heads", MODEL["n_kv_heads"]),
            "hidden_dim": getattr(getattr(ffn, "w1", None), "out_features",
                                  None)}
    for k, v in MODEL.items():
        if have[k] != v:
            raise ValueError("dlplan: the base configuration has %s %s, "
                             "the plan was made for %s "
                             "(set DLPLAN_TORCHTITAN_BASE)" % (k, have[k], v))


def dlplan_plan():
    config = _base()
    _check(config.model_spec)
    p = config.parallelism
    p.data_parallel_replicate_degree = 2
    p.data_parallel_shard_degree = 1
    p.context_parallel_degree = 1
    p.expert_parallel_degree = 1
    p.tensor_parallel_degree = 2
    p.pipeline_parallel_degree = 2
    p.pipeline_parallel_schedule = "1F1B"
    p.pipeline_parallel_layers_per_stage = None
    p.num_pp_microbatches = 32
    p.module_fqns_per_model_part = [
        ["tok_embeddings",
         "layers.0",
         "layers.1",
         "layers.2",
         "layers.3",
         "layers.4",
         "layers.5",
         "layers.6",
         "layers.7",
         "layers.8",
         "layers.9",
         "layers.10",
         "layers.11",
         "layers.12",
         "layers.13",
         "layers.14",
         "layers.15"],
        ["layers.16",
         "layers.17",
         "layers.18",
         "layers.19",
         "layers.20",
         "layers.21",
         "layers.22",
         "layers.23",
         "layers.24",
         "layers.25",
         "layers.26",
         "layers.27",
         "layers.28",
         "layers.29",
         "layers.30",
         "layers.31",
         "norm",
         "lm_head"]]
    t = config.training
    t.num_tokens_per_microbatch_per_dp_rank = 16384
    t.num_tokens_per_train_step = 1048576
    t.max_context_length = 4096
    t.dtype = "float32"
    t.mixed_precision_param = "bfloat16"
    t.disable_cuda_graphs = True
    config.activation_checkpoint = None
    return config
#
# worker.sh execs it on every rank: "torchtitan.sh [ARGS...]" runs torchtitan's
# trainer with the configuration dlplan_plan() of dlplan_torchtitan.py and then
# ARGS, the words given after "--" to dlplan emit.  RANK becomes torchtitan's
# rank of the plan's stage, group and TP rank (its mesh is pp, dp_replicate,
# tp).  DLPLAN_TORCHTITAN_BASE (module:function) names the configuration that
# builds the model; DLPLAN_PYTHON the interpreter (default python3).  Written
# for torchtitan b5bcd76c66d0 (2026-08-21).
set -f
RANK=$((DLPLAN_STAGE * 4 + DLPLAN_GROUP * 2 + DLPLAN_TP_RANK))
PYTHONPATH='TMP/hybrid-torchtitan/launch'${PYTHONPATH:+:$PYTHONPATH}
export RANK PYTHONPATH
exec ${DLPLAN_PYTHON:-python3} -m torchtitan.train \
	'--module' 'dlplan_torchtitan' \
	'--config' 'dlplan_plan' \
	"$@"
