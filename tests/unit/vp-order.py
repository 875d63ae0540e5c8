#!/usr/bin/python3
# tests/unit/vp-order.py - print the operations of every rank of Megatron-LM's
# interleaved 1F1B schedule, taken from Megatron's own code, for the ORDERS
# table of tests/unit/test_pipevp.c.
#
# usage: vp-order.py MEGATRON_LM/megatron/core/pipeline_parallel/schedules.py
#
# The script lifts get_schedule_table() and get_pp_rank_microbatches() out of
# the given schedules.py (Megatron-LM d98e8a64, lines 929-1016) unchanged and
# calls them; the loop around them is that of
# forward_backward_pipelining_with_interleaving(): the warm-up forwards (line
# 1573), then forward k + warm-up and backward k (lines 1733-1749), then the
# remaining backwards (line 1971), backward k running chunk v - 1 - c of the
# table's pair k (get_model_chunk_id(), lines 1244-1249).  Each line: "S v m
# r" and the rank's operations Fi.c / Bi.c (micro-batch i, chunk c).
import ast
import sys
import typing

src = open(sys.argv[1]).read()
tree = ast.parse(src)
fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
mod = ast.Module(body=[fns["get_schedule_table"],
                       fns["get_pp_rank_microbatches"]], type_ignores=[])
g = {"Optional": typing.Optional, "P2PCommunicator": object}
exec(compile(ast.fix_missing_locations(mod), "schedules.py", "exec"), g)


class Group:
    def __init__(self, size, rank):
        self._size, self._rank = size, rank

    def size(self):
        return self._size

    def rank(self):
        return self._rank


class Comm:
    """What get_pp_rank_microbatches() reads of a P2PCommunicator."""

    def __init__(self, S, r, v):
        self.pp_group = Group(S, r)
        self.virtual_pipeline_model_parallel_size = v


def order(S, v, m, r):
    tab = g["get_schedule_table"](m, v, S)
    tot, _, W, rem = g["get_pp_rank_microbatches"](
        m, v, S, p2p_communicator=Comm(S, r, v))
    ops = [("F",) + tab[j] for j in range(W)]
    for k in range(rem):
        ops.append(("F",) + tab[W + k])
        ops.append(("B", tab[k][0], v - 1 - tab[k][1]))
    for j in range(rem, tot):
        ops.append(("B", tab[j][0], v - 1 - tab[j][1]))
    return ops


for S, v, m in [(2, 2, 4), (3, 2, 6), (2, 3, 4), (4, 2, 8), (3, 3, 3)]:
    for r in range(S):
        print(S, v, m, r, " ".join("%s%d.%d" % o for o in order(S, v, m, r)))
