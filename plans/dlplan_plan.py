"""dlplan_plan - what a dlplan plan asks of this rank.

A reference reader for training scripts started by dlplan's launch files
(dlplan emit, or dlplan plan --launcher).  Standard library only; copy it
next to your training script or put plans/ on PYTHONPATH.

    import dlplan_plan

    me = dlplan_plan.assignment()   # DLPLAN_PLAN, and DLPLAN_RANK or RANK
    model = build_layers(me.first, me.last)        # layers first..last
    for step in range(steps):
        for mb in range(me.micro_batches):          # this group's share
            ...
    torch.cuda.set_device(me.gpu)                   # the planned GPU

assignment(path=None, rank=None) -> Rank
    The rank's assignment.  path defaults to $DLPLAN_PLAN; rank to
    $DLPLAN_RANK, else $RANK (torch.distributed's), else $SLURM_PROCID.
load(path=None) -> Plan
    The whole plan.

Plan
    path, world_size, global_batch, micro_batch, groups (list of Group),
    ranks (list of Rank, index = rank), rank(r) -> Rank, nodes (node ids
    in node-rank order: order of first appearance in the rank list),
    segments() -> list of (first, last) sync segments.
Group
    index, micro_batches, virtual_stages (model chunks a stage holds under
    Megatron-LM's interleaved schedule; 1: plain 1F1B), stages (list of
    Stage), ranks.
Stage
    group, index, node, host, gpus (local GPU indices), tp_shares, first,
    last (0-based, inclusive layer range), ranks (one per GPU, TP order).
Rank
    rank, world_size, node, host, gpu, group, stage, nstages, first, last,
    layers (range(first, last + 1)), micro_batches (of its group),
    micro_batch (samples per micro-batch), samples (micro_batches *
    micro_batch), tp_rank, tp_size, tp_share, tp_ranks (the ranks of its
    stage, TP order), is_first_stage, is_last_stage,
    prev_ranks, next_ranks   all ranks of the previous / next stage of
                             the group ([] at the ends)
    prev_rank, next_rank     the pipeline peer: the rank of that stage
                             whose TP rank is this rank's TP rank modulo
                             the stage's TP size (None at the ends)
    dp_rings                 list of Ring, one per sync segment this rank's
                             layers take part in (none with one group)
    dp_peers                 sorted ranks of all its rings but itself
Ring
    first, last (the layer segment), ranks (one per group, in ring order:
    the plan's "rings" when it lists them, else group order; from each
    holding stage the rank with this rank's TP rank modulo its TP size),
    prev, next (this rank's neighbours on the ring).

Ranks are numbered as dlplan numbers them (plan.h): groups in plan order,
a group's stages in pipeline order, a stage's GPUs in "gpus" order; the
plan's "ranks" list, when present, gives the hosts.

Run as a program, it prints a rank's assignment as JSON:
    python3 dlplan_plan.py PLAN.json [RANK]
"""

import json
import math
import os
import sys

__all__ = ["load", "assignment", "Plan", "Group", "Stage", "Rank", "Ring",
           "PlanError"]


class PlanError(Exception):
    """The plan file is missing, unreadable or not a dlplan plan."""


class Stage:
    def __init__(self, group, index, node, host, gpus, tp_shares, first,
                 last):
        self.group = group
        self.index = index
        self.node = node
        self.host = host
        self.gpus = gpus
        self.tp_shares = tp_shares
        self.first = first
        self.last = last
        self.recompute = 0      # the first blocks recomputed in backward
        self.ranks = []

    def __repr__(self):
        return "Stage(group=%d, index=%d, node=%r, gpus=%r, layers=%d:%d)" % (
            self.group, self.index, self.node, self.gpus, self.first,
            self.last)


class Group:
    def __init__(self, index, micro_batches):
        self.index = index
        self.micro_batches = micro_batches
        self.virtual_stages = 1
        self.stages = []

    @property
    def ranks(self):
        return [r for s in self.stages for r in s.ranks]

    def __repr__(self):
        return "Group(index=%d, micro_batches=%d, stages=%d)" % (
            self.index, self.micro_batches, len(self.stages))


class Ring:
    def __init__(self, first, last, ranks, me):
        self.first = first
        self.last = last
        self.ranks = ranks
        i = ranks.index(me)
        self.prev = ranks[i - 1]
        self.next = ranks[(i + 1) % len(ranks)]

    def __repr__(self):
        return "Ring(layers=%d:%d, ranks=%r)" % (self.first, self.last,
                                                 self.ranks)


def _peer(stage, tp_rank):
    if stage is None:
        return None
    return stage.ranks[tp_rank % len(stage.ranks)]


class Rank:
    def __init__(self, plan, rank, stage, tp_rank):
        self._plan = plan
        self.rank = rank
        self.world_size = 0
        self.node = stage.node
        self.host = stage.host
        self.gpu = stage.gpus[tp_rank]
        self.group = stage.group
        self.stage = stage.index
        self.first = stage.first
        self.last = stage.last
        self.tp_rank = tp_rank
        self.tp_size = len(stage.gpus)
        self.tp_share = stage.tp_shares[tp_rank]
        self.recompute = stage.recompute
        self._stage = stage

    @property
    def layers(self):
        return range(self.first, self.last + 1)

    @property
    def nstages(self):
        return len(self._plan.groups[self.group].stages)

    @property
    def micro_batches(self):
        return self._plan.groups[self.group].micro_batches

    @property
    def micro_batch(self):
        return self._plan.micro_batch

    @property
    def samples(self):
        return self.micro_batches * self._plan.micro_batch

    @property
    def tp_ranks(self):
        return list(self._stage.ranks)

    @property
    def is_first_stage(self):
        return self.stage == 0

    @property
    def is_last_stage(self):
        return self.stage == self.nstages - 1

    def _neighbour(self, d):
        stages = self._plan.groups[self.group].stages
        i = self.stage + d
        return stages[i] if 0 <= i < len(stages) else None

    @property
    def prev_ranks(self):
        s = self._neighbour(-1)
        return list(s.ranks) if s else []

    @property
    def next_ranks(self):
        s = self._neighbour(1)
        return list(s.ranks) if s else []

    @property
    def prev_rank(self):
        return _peer(self._neighbour(-1), self.tp_rank)

    @property
    def next_rank(self):
        return _peer(self._neighbour(1), self.tp_rank)

    @property
    def dp_rings(self):
        plan = self._plan
        if len(plan.groups) < 2:
            return []
        rings = []
        for first, last in plan.segments():
            if last < self.first or first > self.last:
                continue
            ranks = [_peer(plan.groups[g].stages[s], self.tp_rank)
                     for g, s in plan._ring_order(first)]
            rings.append(Ring(first, last, ranks, self.rank))
        return rings

    @property
    def dp_peers(self):
        return sorted({r for ring in self.dp_rings for r in ring.ranks
                       if r != self.rank})

    def as_dict(self):
        """The assignment as plain data (what the CLI prints); with
        "virtual_stages" only when the group interleaves."""
        d = {
            "rank": self.rank, "world_size": self.world_size,
            "node": self.node, "host": self.host, "gpu": self.gpu,
            "group": self.group, "stage": self.stage,
            "nstages": self.nstages, "layers": [self.first, self.last],
            "micro_batches": self.micro_batches,
            "micro_batch": self.micro_batch, "tp_rank": self.tp_rank,
            "tp_size": self.tp_size, "tp_share": self.tp_share,
            "tp_ranks": self.tp_ranks, "prev_rank": self.prev_rank,
            "next_rank": self.next_rank, "prev_ranks": self.prev_ranks,
            "next_ranks": self.next_ranks,
            "dp_rings": [{"layers": [r.first, r.last], "ranks": r.ranks,
                          "prev": r.prev, "next": r.next}
                         for r in self.dp_rings],
            "dp_peers": self.dp_peers,
        }
        v = self._plan.groups[self.group].virtual_stages
        if v > 1:
            d["virtual_stages"] = v
        return d

    def __repr__(self):
        return ("Rank(rank=%d, node=%r, gpu=%d, group=%d, stage=%d, "
                "layers=%d:%d, micro_batches=%d, tp_share=%r)" % (
                    self.rank, self.node, self.gpu, self.group, self.stage,
                    self.first, self.last, self.micro_batches,
                    self.tp_share))


def _int(v, what):
    if isinstance(v, bool) or not isinstance(v, int):
        raise PlanError("%s: expected an integer, found %s" %
                        (what, _show(v)))
    return v


def _show(v):
    """A value for a message: short, one line, no control characters."""
    t = json.dumps(v) if not isinstance(v, (dict, list)) else \
        type(v).__name__
    t = "".join(c if c.isprintable() else "\\x%02x" % (ord(c) & 0xff)
                for c in t)
    return t if len(t) <= 40 else t[:37] + "..."


def _obj(v, what):
    if not isinstance(v, dict):
        raise PlanError("%s: expected an object, found %s" %
                        (what, _show(v)))
    return v


def _list(v, what):
    if not isinstance(v, list):
        raise PlanError("%s: expected a list, found %s" % (what, _show(v)))
    return v


def _share(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or \
            not math.isfinite(v) or v < 0:
        raise PlanError("%s: expected a number >= 0, found %s" %
                        (what, _show(v)))
    return float(v)


class Plan:
    def __init__(self, data, path=None):
        if not isinstance(data, dict) or data.get("schema") != \
                "dlplan.plan/1":
            raise PlanError("%s: not a dlplan plan (expected \"schema\": "
                            "\"dlplan.plan/1\")" % (path or "plan"))
        self.path = path
        opts = _obj(data.get("options"), "options")
        self.global_batch = _int(opts.get("global_batch"),
                                 "options.global_batch")
        self.micro_batch = _int(opts.get("micro_batch", 1),
                                "options.micro_batch")
        # The memory savers the executor runs (dlplan-formats(5)): full
        # recomputation of each stage's first recompute_layers blocks,
        # and the optimizer state sharded over the holders of each
        # gradient bucket.
        self.optimizer = opts.get("optimizer", "replicated")
        if self.optimizer not in ("replicated", "sharded"):
            raise PlanError("options.optimizer: %s (expected \"replicated\""
                            " or \"sharded\")" % _show(self.optimizer))
        full = opts.get("recompute", "none") == "full"
        # The data-parallel sync: after the pipeline ("none"), or bucket
        # by bucket under each stage's last backward ("dp", dlplan(1)
        # ALGORITHMS, Overlap).  The executor overlaps no tensor-parallel
        # traffic, and its sharded step all-reduces the updated shards
        # after the optimizer: it has no parameter gather to overlap with
        # the next forward, as dlplan prices "dp" with "sharded".
        self.overlap = opts.get("overlap", "none")
        if self.overlap not in ("none", "dp"):
            raise PlanError("options.overlap: %s (expected \"none\" or "
                            "\"dp\": this executor overlaps no tensor-"
                            "parallel traffic)" % _show(self.overlap))
        if self.overlap == "dp" and self.optimizer == "sharded":
            raise PlanError("options.overlap \"dp\" with options.optimizer"
                            " \"sharded\": this executor does not overlap "
                            "the parameter gather with the next forward as "
                            "dlplan prices it (plan with --overlap none)")
        hosts = {}
        for r in data.get("ranks") or []:
            if isinstance(r, dict) and "node" in r and "host" in r:
                hosts[r["node"]] = r["host"]
        self.groups = []
        self.ranks = []
        for g, gj in enumerate(_list(data.get("groups"), "groups")):
            w = "groups[%d]" % g
            _obj(gj, w)
            group = Group(g, _int(gj.get("micro_batches"),
                                  w + ".micro_batches"))
            if "virtual_stages" in gj:
                group.virtual_stages = _int(gj["virtual_stages"],
                                            w + ".virtual_stages")
                if group.virtual_stages < 1:
                    raise PlanError("%s.virtual_stages: %d (expected at "
                                    "least 1)" % (w, group.virtual_stages))
            for s, sj in enumerate(_list(gj.get("stages"), w + ".stages")):
                w = "groups[%d].stages[%d]" % (g, s)
                _obj(sj, w)
                gpus = [_int(x, w + ".gpus")
                        for x in _list(sj.get("gpus"), w + ".gpus")]
                if not gpus:
                    raise PlanError("%s.gpus: no GPUs" % w)
                if len(set(gpus)) != len(gpus) or min(gpus) < 0:
                    raise PlanError("%s.gpus: %s (expected distinct GPU "
                                    "numbers >= 0)" % (w, gpus))
                shares = sj.get("tp_shares")
                if shares is None:
                    shares = [1.0 / len(gpus)] * len(gpus)
                shares = [_share(x, w + ".tp_shares")
                          for x in _list(shares, w + ".tp_shares")]
                if len(shares) != len(gpus):
                    raise PlanError("%s.tp_shares: %d shares for %d GPUs" %
                                    (w, len(shares), len(gpus)))
                layers = _list(sj.get("layers"), w + ".layers")
                if len(layers) != 2:
                    raise PlanError("%s.layers: expected [first, last]" % w)
                node = sj.get("node")
                if not isinstance(node, str) or not node:
                    raise PlanError("%s.node: expected a node id, found %s"
                                    % (w, _show(node)))
                stage = Stage(g, s, node, hosts.get(node, node), gpus,
                              shares,
                              _int(layers[0], w + ".layers"),
                              _int(layers[1], w + ".layers"))
                stage.recompute = _int(sj.get("recompute_layers", 0),
                                       w + ".recompute_layers")
                if stage.recompute < 0 or (stage.recompute and not full):
                    raise PlanError("%s.recompute_layers: %d (expected 0, "
                                    "or more with options.recompute "
                                    "\"full\")" % (w, stage.recompute))
                for j in range(len(gpus)):
                    stage.ranks.append(len(self.ranks))
                    self.ranks.append(Rank(self, len(self.ranks), stage, j))
                group.stages.append(stage)
            if not group.stages:
                raise PlanError("groups[%d].stages: no stages" % g)
            self.groups.append(group)
        if not self.groups:
            raise PlanError("%s: plan has no groups" % (path or "plan"))
        self.world_size = len(self.ranks)
        for r in self.ranks:
            r.world_size = self.world_size
        self.nodes = []
        for r in self.ranks:
            if r.node not in self.nodes:
                self.nodes.append(r.node)
        # Ring orders the plan lists, by the segment's first layer.
        self._rings = {}
        for rj in data.get("rings") or []:
            try:
                order = [(int(m["group"]), int(m["stage"]))
                         for m in rj["members"]]
                self._rings[int(rj["layers"][0])] = order
            except (KeyError, TypeError, ValueError, IndexError):
                continue

    def rank(self, r):
        if not 0 <= r < self.world_size:
            raise PlanError("rank %d is not in the plan (world size %d)" %
                            (r, self.world_size))
        return self.ranks[r]

    def segments(self):
        """Sync segments: the layer list cut at every stage boundary of
        every group, as (first, last) pairs."""
        last = max(s.last for g in self.groups for s in g.stages)
        cuts = sorted({s.first for g in self.groups for s in g.stages} |
                      {last + 1})
        return [(a, b - 1) for a, b in zip(cuts, cuts[1:])]

    def _holder(self, group, layer):
        for s in self.groups[group].stages:
            if s.first <= layer <= s.last:
                return s.index
        raise PlanError("group %d has no stage holding layer %d" %
                        (group, layer))

    def _ring_order(self, first):
        holders = [(g.index, self._holder(g.index, first))
                   for g in self.groups]
        order = self._rings.get(first)
        if order is not None and sorted(order) == sorted(holders):
            return order
        return holders


def load(path=None):
    """Read the plan at path (default $DLPLAN_PLAN)."""
    if path is None:
        path = os.environ.get("DLPLAN_PLAN")
        if not path:
            raise PlanError("DLPLAN_PLAN is not set (start the script "
                            "through dlplan's launch files, or pass path)")
    return Plan(read_json(path), path)


def read_json(path):
    """The JSON value in the file path; PlanError when it cannot be read
    (missing, a directory, not UTF-8, not JSON, nested too deeply)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise PlanError("%s: %s" % (path, e.strerror or e)) from e
    except (ValueError, RecursionError) as e:
        raise PlanError("%s: invalid JSON: %s" % (path, str(e)[:200])) \
            from e


def assignment(path=None, rank=None):
    """This rank's assignment (see the module documentation)."""
    plan = load(path)
    if rank is None:
        for var in ("DLPLAN_RANK", "RANK", "SLURM_PROCID"):
            v = os.environ.get(var)
            if v is not None and v != "":
                try:
                    rank = int(v)
                except ValueError:
                    raise PlanError("%s: '%s' is not a rank" % (var, v))
                break
        else:
            raise PlanError("no rank given (DLPLAN_RANK, RANK and "
                            "SLURM_PROCID are unset)")
    return plan.rank(rank)


def _main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: dlplan_plan.py PLAN.json [RANK]\n")
        return 1
    try:
        a = assignment(argv[1], int(argv[2]) if len(argv) == 3 else None)
    except (PlanError, ValueError) as e:
        sys.stderr.write("dlplan_plan: %s\n" % e)
        return 2
    json.dump(a.as_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
