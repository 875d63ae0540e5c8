#!/usr/bin/python3
"""DeepSpeed's launch chain for a deepspeed.sh that dlplan emit wrote,
re-derived from DeepSpeed 0.19.6 at commit edaa7221267 (2026-08-22), with
every rank's argv and environment checked against the plan.

usage: DLPLAN_DEEPSPEED="python3 deepspeed-launch.py PLAN.json" \\
           sh deepspeed.sh

deepspeed.sh execs DLPLAN_DEEPSPEED with the launcher's arguments.  This
script then does what deepspeed/launcher/runner.py does with them: reads
the hostfile, gives each host its first "slots" GPUs, and for more than
one host builds the PDSH command line of multinode_runner.py, which each
host's shell reads (here "sh -c", the node rank for "%n", and this script
standing in for "python -m deepspeed.launcher.launch"); its launch mode
sets each local process's environment as launch.py does and runs the
user script (worker.sh), whose training command prints its argv and
environment as JSON.  Exits 1 with a message on the first rank whose
RANK, LOCAL_RANK, GPU, WORLD_SIZE, host, stage, group, TP rank or
arguments differ from the plan.
"""
import argparse
import base64
import json
import os
import re
import subprocess
import sys

DS = "DeepSpeed edaa7221267"
ME = os.path.abspath(__file__)


def fail(msg):
    sys.stderr.write("deepspeed-launch: %s\n" % msg)
    sys.exit(1)


def need(cond, msg):
    if not cond:
        fail(msg)


def runner_args(argv):
    """The options deepspeed.sh gives (runner.py:48-200)."""
    p = argparse.ArgumentParser(prog="deepspeed")
    p.add_argument("-H", "--hostfile", default="/job/hostfile")
    p.add_argument("--master_addr", default="")
    p.add_argument("--master_port", type=int, default=29500)
    p.add_argument("--no_python", action="store_true")
    p.add_argument("--no_local_rank", action="store_true")
    p.add_argument("user_script")
    p.add_argument("user_args", nargs=argparse.REMAINDER)
    return p.parse_args(argv)


def fetch_hostfile(path):
    """runner.py:230-263: "host slots=N" lines, in file order."""
    pool = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.search(r"^(\S+)\s+slots=(\d+)", line)
            need(m is not None, "%s: runner.py:247 hostfile line %r"
                 % (DS, line))
            need(m.group(1) not in pool, "%s: runner.py:262 host %s twice"
                 % (DS, m.group(1)))
            pool[m.group(1)] = int(m.group(2))
    return pool


def runner(plan_path, argv):
    a = runner_args(argv)
    pool = fetch_hostfile(a.hostfile)
    # runner.py:396: every slot of a host, GPUs 0 .. slots-1.
    active = {h: list(range(n)) for h, n in pool.items()}
    # runner.py:401-404
    info = base64.urlsafe_b64encode(json.dumps(active).encode()).decode()
    launch = [sys.executable, ME, "--launch"]
    opts = ["--world_info=%s" % info, "--master_addr=%s" % a.master_addr,
            "--master_port=%s" % a.master_port]
    opts += ["--no_python"] if a.no_python else []
    opts += ["--no_local_rank"] if a.no_local_rank else []
    outs = []
    if len(active) == 1:
        # runner.py:545-576: one host, launch.py started without a shell.
        cmd = launch + opts + ["--node_rank=0", a.user_script] + a.user_args
        outs.append(subprocess.run(cmd, stdout=subprocess.PIPE,
                                   check=False))
    else:
        # multinode_runner.py:98-123: pdsh joins the words with spaces and
        # each host's shell reads the line, %n its node rank.
        line = " ".join(["cd %s;" % os.path.abspath(".")] + launch + opts
                        + ["--node_rank=%n", a.user_script] + a.user_args)
        for n in range(len(active)):
            outs.append(subprocess.run(["sh", "-c", line.replace(
                "%n", str(n))], stdout=subprocess.PIPE, check=False))
    for o in outs:
        need(o.returncode == 0, "a host's launch exited %d" % o.returncode)
    got = [json.loads(l) for o in outs for l in o.stdout.decode()
           .splitlines()]
    check(plan_path, active, a, got)


def launch(argv):
    """launch.py:150-263 for one host: the environment of each local
    process, then the user script with its arguments."""
    p = argparse.ArgumentParser(prog="deepspeed.launcher.launch")
    p.add_argument("--node_rank", type=int, default=0)
    p.add_argument("--master_addr", default="127.0.0.1")
    p.add_argument("--master_port", type=int, default=29500)
    p.add_argument("--world_info", default="None")
    p.add_argument("--no_python", action="store_true")
    p.add_argument("--no_local_rank", action="store_true")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    need(a.no_python, "deepspeed.sh does not pass --no_python")
    world = json.loads(base64.urlsafe_b64decode(a.world_info))
    nodes = list(world.keys())
    local = nodes[a.node_rank]
    n = len(world[local])
    mapping, r = {}, 0
    for node in nodes:                      # launch.py:170-177
        mapping[node] = list(range(r, r + len(world[node])))
        r += len(world[node])
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, world[local]))  # :182
    env.update(MASTER_ADDR=a.master_addr, MASTER_PORT=str(a.master_port),
               WORLD_SIZE=str(r), CROSS_RANK=str(a.node_rank),
               CROSS_SIZE=str(len(nodes)), LOCAL_SIZE=str(n))  # :187-192
    for i in range(n):
        dist_rank = mapping[local][i]       # launch.py:239-242
        env["RANK"] = str(dist_rank)
        env["LOCAL_RANK"] = str(dist_rank % n)
        cmd = [a.training_script]           # launch.py:259-263
        if not a.no_local_rank:
            cmd.append("--local_rank=%d" % (dist_rank % n))
        cmd += a.training_script_args
        env["DLPLAN_CHECK_HOST"] = local
        rc = subprocess.run(cmd, env=env, check=False).returncode
        need(rc == 0, "rank %d: %s exited %d" % (dist_rank, cmd[0], rc))


def check(plan_path, active, a, got):
    with open(plan_path) as fh:
        plan = json.load(fh)
    launch_dir = os.path.dirname(os.path.abspath(a.hostfile))
    ranks = {rk["rank"]: rk for rk in plan["ranks"]}
    need(sorted(g["env"]["DLPLAN_RANK"] for g in got) ==
         sorted(str(r) for r in ranks), "the ranks started are not the "
         "plan's")
    for g in got:
        env, argv = g["env"], g["argv"]
        rk = ranks[int(env["RANK"])]
        what = "rank %s" % env["RANK"]
        need(env["DLPLAN_CHECK_HOST"] == rk["host"], "%s runs on %s, the "
             "plan's host %s" % (what, env["DLPLAN_CHECK_HOST"], rk["host"]))
        need(env["WORLD_SIZE"] == str(len(ranks)), "%s: WORLD_SIZE" % what)
        need(env["LOCAL_RANK"] == str(rk["local_gpu"]), "%s: LOCAL_RANK %s, "
             "the plan's GPU %d" % (what, env["LOCAL_RANK"], rk["local_gpu"]))
        vis = env["CUDA_VISIBLE_DEVICES"].split(",")
        need(vis[int(env["LOCAL_RANK"])] == str(rk["local_gpu"]), "%s: "
             "device %s of CUDA_VISIBLE_DEVICES %s is not GPU %d" % (
                 what, env["LOCAL_RANK"], env["CUDA_VISIBLE_DEVICES"],
                 rk["local_gpu"]))
        need(env["LOCAL_WORLD_SIZE"] == str(len(active[rk["host"]])),
             "%s: LOCAL_WORLD_SIZE" % what)
        need(env["MASTER_ADDR"] == ranks[0]["host"], "%s: MASTER_ADDR"
             % what)
        for k in ("group", "stage", "tp_rank"):
            need(env["DLPLAN_" + k.upper()] == str(rk[k]), "%s: DLPLAN_%s"
                 % (what, k.upper()))
        need(argv[-2:] == ["--deepspeed_config", os.path.join(
            launch_dir, "ds_config.json")], "%s: argv %s does not end with "
             "--deepspeed_config" % (what, argv))
    print("deepspeed launch: %d hosts, %d ranks as planned, %s rules"
          % (len(active), len(got), DS))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--launch":
        launch(sys.argv[2:])
    elif len(sys.argv) > 2:
        runner(sys.argv[1], sys.argv[2:])
    else:
        fail("usage: DLPLAN_DEEPSPEED=\"deepspeed-launch.py PLAN.json\" "
             "sh deepspeed.sh")


main()
