#!/usr/bin/python3
"""torchrun's rank rules for the torchrun-<node>.sh scripts dlplan emit
wrote, with every rank's argv and environment checked against the plan.

usage: torchrun-launch.py PLAN.json LAUNCH_DIR
       torchrun-launch.py --check PLAN.json OUTPUT  (the JSON lines of
           some ranks of the plan among other lines, from torchrun-<node>.sh
           run with DLPLAN_TORCHRUN "torchrun-launch.py --agent")

Runs every torchrun-<node>.sh of LAUNCH_DIR with DLPLAN_TORCHRUN set to
this script with --agent, which stands in for torchrun's elastic agent:
what the agents announce at rendezvous (node rank, --nproc_per_node) is
read from the sibling scripts, and each agent gives its workers the
global ranks offset by the workers of the agents of lower node rank
(torch/distributed/elastic/agent/server/api.py,
SimpleElasticAgent._assign_worker_ranks and _get_ranks), LOCAL_RANK the
worker's index, and runs the --no_python script (worker.sh) with RANK,
LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and
MASTER_PORT.  The training command prints a JSON line of its argv and
environment ("torchtitan" also the degrees of its configuration).
Exits 1 on the first rank that differs from the plan: its host, RANK,
LOCAL_RANK, WORLD_SIZE, DLPLAN_* values, and for torchtitan the mesh
position (pp, dp_replicate, tp) of its renumbered RANK.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ME = os.path.abspath(__file__)


def fail(msg):
    sys.stderr.write("torchrun-launch: %s\n" % msg)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def announced(launch):
    """What each agent announces at rendezvous: node rank -> workers, read
    from the torchrun-<node>.sh scripts of the launch directory."""
    agents = {}
    for f in glob.glob(os.path.join(launch, "torchrun-*.sh")):
        with open(f) as fh:
            t = fh.read()
        n = int(re.search(r"--node_rank=(\d+)", t).group(1))
        need(n not in agents, "two agents of node rank %d" % n)
        agents[n] = int(re.search(r"--nproc_per_node=(\d+)", t).group(1))
    return agents


def agent(argv):
    """One torchrun on one node (DLPLAN_TORCHRUN)."""
    p = argparse.ArgumentParser(prog="torchrun")
    p.add_argument("--node_rank", type=int, required=True)
    p.add_argument("--nnodes", type=int, required=True)
    p.add_argument("--nproc_per_node", type=int, required=True)
    p.add_argument("--master_addr", required=True)
    p.add_argument("--master_port", type=int, required=True)
    p.add_argument("--no_python", action="store_true")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    need(a.no_python, "torchrun without --no_python")
    agents = announced(os.path.dirname(a.script))
    need(sorted(agents) == list(range(a.nnodes)), "agents %s for --nnodes "
         "%d" % (sorted(agents), a.nnodes))
    need(agents[a.node_rank] == a.nproc_per_node, "--nproc_per_node")
    # _get_ranks: the offset is the workers of the lower node ranks.
    base = sum(agents[i] for i in range(a.node_rank))
    world = sum(agents.values())
    for local in range(a.nproc_per_node):
        env = dict(os.environ, RANK=str(base + local), LOCAL_RANK=str(local),
                   WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(a.nproc_per_node),
                   GROUP_RANK=str(a.node_rank), MASTER_ADDR=a.master_addr,
                   MASTER_PORT=str(a.master_port))
        rc = subprocess.run([a.script] + a.args, env=env,
                            check=False).returncode
        need(rc == 0, "rank %d: %s exited %d" % (base + local, a.script, rc))


def run_all(plan_path, launch):
    """Every torchrun-<node>.sh, as on its node; then the check."""
    with open(plan_path) as fh:
        plan = json.load(fh)
    hosts = {rk["node"]: rk["host"] for rk in plan["ranks"]}
    scripts = sorted(glob.glob(os.path.join(launch, "torchrun-*.sh")))
    need(scripts, "no torchrun-<node>.sh in %s" % launch)
    got = []
    for s in scripts:
        node = os.path.basename(s)[len("torchrun-"):-len(".sh")]
        env = dict(os.environ, DLPLAN_CHECK_HOST=hosts.get(node, node),
                   DLPLAN_TORCHRUN="%s %s --agent" % (sys.executable, ME))
        r = subprocess.run(["sh", s], env=env, stdout=subprocess.PIPE,
                           check=False)
        need(r.returncode == 0, "%s exited %d" % (s, r.returncode))
        got += [json.loads(l) for l in r.stdout.decode().splitlines()]
    check(plan, got, True)
    print("torchrun launch: %d agents, %d ranks as planned"
          % (len(scripts), len(got)))


def check(plan, got, whole):
    ranks = {rk["rank"]: rk for rk in plan["ranks"]}
    started = sorted(int(g["env"]["DLPLAN_RANK"]) for g in got)
    need(started and len(set(started)) == len(started) and (
        not whole or started == sorted(ranks)), "ranks %s started, the plan "
         "has %d" % (started, len(ranks)))
    for g in got:
        env = g["env"]
        rk = ranks[int(env["DLPLAN_RANK"])]
        what = "rank %d" % rk["rank"]
        need(env.get("DLPLAN_CHECK_HOST", rk["host"]) == rk["host"], "%s "
             "runs on %s, planned for %s" % (what, env.get("DLPLAN_CHECK_HOST"),
                                             rk["host"]))
        need(env["LOCAL_RANK"] == str(rk["local_gpu"]), "%s: LOCAL_RANK %s, "
             "the plan's GPU %d" % (what, env["LOCAL_RANK"], rk["local_gpu"]))
        need(env["WORLD_SIZE"] == str(len(ranks)), "%s: WORLD_SIZE" % what)
        need(env["MASTER_ADDR"] == ranks[0]["host"], "%s: MASTER_ADDR"
             % what)
        for k in ("group", "stage", "tp_rank"):
            need(env["DLPLAN_" + k.upper()] == str(rk[k]), "%s: DLPLAN_%s"
                 % (what, k.upper()))
        tt = g.get("torchtitan")
        if tt is None:
            need(env["RANK"] == str(rk["rank"]), "%s: RANK %s" % (what,
                                                                  env["RANK"]))
            continue
        # parallel_dims.py:309-310: the mesh is pp, dp_replicate, tp, the
        # last varying fastest.
        r, dp, tp = int(env["RANK"]), tt["dp"], tt["tp"]
        need((r // (dp * tp), (r // tp) % dp, r % tp) == (
            rk["stage"], rk["group"], rk["tp_rank"]), "%s: torchtitan rank "
             "%d is not its stage, group and TP rank" % (what, r))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--agent":
        agent(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "--check":
        with open(sys.argv[2]) as fh:
            plan = json.load(fh)
        with open(sys.argv[3]) as fh:
            got = [json.loads(l) for l in fh if l.startswith("{")]
        # The lines of this plan's ranks (worker.sh's DLPLAN_PLAN).
        got = [g for g in got if os.path.samefile(g["env"]["DLPLAN_PLAN"],
                                                  sys.argv[2])]
        check(plan, got, False)
        print("torchrun launch: %d ranks as planned" % len(got))
    elif len(sys.argv) == 3:
        run_all(sys.argv[1], sys.argv[2])
    else:
        fail("usage: torchrun-launch.py PLAN.json LAUNCH_DIR, or --check "
             "PLAN.json OUTPUT, or (as DLPLAN_TORCHRUN) --agent ARGS")


main()
