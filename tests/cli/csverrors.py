#!/usr/bin/python3
# csverrors.py DLPLAN SRCDIR TMP: feed dlplan broken variants of every CSV
# input kind and check that each exit-2 message has the form
# "FILE:LINE:COLUMN: " (dlplan(1), DIAGNOSTICS), except the few that have
# no column to name: a whole file ("FILE: empty file ...") or its header
# ("FILE:LINE: missing required column ...", "FILE:LINE: no ROWS
# (expected at least one row after the header)").  Then drops each
# required column of each kind in turn and wants it named.  Prints TAP
# lines.
import os
import re
import subprocess
import sys

B, SRC, TMP = sys.argv[1:4]
D = os.path.join(TMP, "csverrors")
os.makedirs(D, exist_ok=True)

# Per kind: a good header and row, and the command that reads the file.
NODES = os.path.join(D, "good-nodes.csv")
LINKS = os.path.join(D, "good-links.csv")
MODEL = os.path.join(D, "good-model.csv")
with open(NODES, "w") as f:
    f.write("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps\n"
            "a,s,4,A,100,80,800,100\n")
with open(LINKS, "w") as f:
    f.write("src,dst,gbps,latency_ms\na,sw,100,0.01\n")
with open(MODEL, "w") as f:
    f.write("layer,fwd_gflop,params_m,act_mb,mem_mb\nl0,1,10,1,2\n")
R = os.path.join(SRC, "tests/cli/data/replan")
KINDS = {
    "nodes": ("node,site,gpus,gpu_model,tflops,mem_gb,intra_gbps,nic_gbps,"
              "mfu,cost_per_hour,host", "a,s,4,A,100,80,800,100,0.5,10,a",
              lambda p: ["check", "--nodes", p]),
    "links": ("src,dst,gbps,latency_ms,duplex", "a,sw,100,0.01,1",
              lambda p: ["check", "--nodes", NODES, "--links", p]),
    "load": ("node,t,util", "a,1,0.5",
             lambda p: ["check", "--nodes", NODES, "--load", p]),
    "traffic": ("t,src,dst,util", "1,a,sw,0.5",
                lambda p: ["check", "--nodes", NODES, "--links", LINKS,
                           "--traffic", p]),
    "history": ("node,t,util", "a,1,0.5", lambda p: ["predict", "-H", p]),
    "model": ("layer,fwd_gflop,bwd_gflop,params_m,act_mb,mem_mb,tp_mb",
              "l0,1,2,10,1,2,5",
              lambda p: ["check", "--nodes", NODES, "-m", p]),
    "flows": ("flow,src,dst,mb", "f1,a,sw,10",
              lambda p: ["route", "--nodes", NODES, "--links", LINKS,
                         "--flows", p]),
    "steps": ("rank,step,seconds,samples", "0,1,0.5,4",
              lambda p: ["replan", os.path.join(R, "dp3.json"),
                         "--observed", p, "-c", R, "-m",
                         os.path.join(R, "model2.csv")]),
    "jobs": ("job,arrival_s,model,global_batch,micro_batch,iterations",
             "a,0,resnet50,64,4,10",
             lambda p: ["schedule", "--nodes", NODES, "--jobs", p]),
}
BAD = ["", "x", "nan", "inf", "-1", "1e400", '"q"x', "\xff\xfe", "1.5.2",
       "99999999999999999999", '"unterminated']

# A message with no column: what the file or header as a whole lacks.
NOCOL = re.compile(r"(empty file \(expected a .* header row\)"
                   r"|missing required column '.*' in .* header"
                   r"|header names no '.*' column .*"
                   r"|no .* \(expected at least one row after the header\)"
                   r"|the log has ranks .* ranks \(a log of another plan\?\))$")


def variants(hdr, row):
    cols, vals = hdr.split(","), row.split(",")
    for i, c in enumerate(cols):
        for b in BAD:
            v = list(vals)
            v[i] = b
            yield "%s=%r" % (c, b), hdr + "\n" + ",".join(v) + "\n"
    yield "too many fields", hdr + "\n" + row + ",9\n"
    yield "too few fields", hdr + "\n" + ",".join(vals[:-2]) + "\n"
    yield "unknown column", hdr + ",zz\n" + row + ",1\n"
    yield "repeated column", hdr + "," + cols[0] + "\n" + row + "," + \
        vals[0] + "\n"
    yield "missing column", ",".join(cols[1:]) + "\n" + \
        ",".join(vals[1:]) + "\n"
    yield "repeated row", hdr + "\n" + row + "\n" + row + "\n"
    yield "quote across lines", hdr + "\n" + row + '\n"abc\n'
    yield "empty file", ""
    yield "header only", hdr + "\n"


total = bad = 0
for kind, (hdr, row, cmd) in KINDS.items():
    path = os.path.join(D, kind + ".csv")
    n = nb = 0
    for name, text in variants(hdr, row):
        with open(path, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape")
                    if "\xff" not in text else text.encode("latin-1"))
        r = subprocess.run([B] + cmd(path), capture_output=True,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 2:
            continue
        msg = r.stderr.decode("utf-8", "replace").split("\n")[0]
        n += 1
        pre = "dlplan: " + path + ":"
        ok = msg.startswith(pre) and (
            re.match(r"\d+:\d+: ", msg[len(pre):]) is not None or
            NOCOL.search(msg) is not None)
        if not ok:
            nb += 1
            print("#   %s, %s: %s" % (kind, name, msg))
    total += n
    bad += nb
    if nb == 0 and n > 0:
        print("ok - %s: %d broken files, every message located" % (kind, n))
    else:
        print("not ok - %s: %d of %d messages lack FILE:LINE:COLUMN" %
              (kind, nb, n))
print("ok - %d exit-2 messages in all" % total if total > 250 else
      "not ok - only %d exit-2 messages" % total)

# Columns are found by their header names: a file without one of the
# required columns is refused with the header line and the column's name,
# whichever column it is and wherever the others stand.  The schemas
# (file, column, "required; ...") come from the binary.
SCHEMA = {"nodes": "nodes.csv", "links": "links.csv", "load": "load.csv",
          "traffic": "traffic.csv", "model": "model.csv",
          "flows": "flows.csv", "steps": "steps.csv", "jobs": "JOBS.csv"}
required = {}
for line in subprocess.run([B, "--complete", "schemas"], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    f, col, what = line.split("\t")[:3]
    if what.startswith("required"):
        required.setdefault(f, []).append(col)
for kind, sch in SCHEMA.items():
    hdr, row, cmd = KINDS[kind]
    cols, vals = hdr.split(","), row.split(",")
    path = os.path.join(D, kind + ".csv")
    wrong = []
    for col in required.get(sch, []):
        if col not in cols:
            wrong.append("%s: no column %s in the test's header" % (kind, col))
            continue
        keep = [i for i, c in enumerate(cols) if c != col][::-1]
        with open(path, "w") as f:
            f.write(",".join(cols[i] for i in keep) + "\n" +
                    ",".join(vals[i] for i in keep) + "\n")
        r = subprocess.run([B] + cmd(path), capture_output=True,
                           stdin=subprocess.DEVNULL, text=True)
        want = ("dlplan: %s:1: missing required column '%s' in %s header" %
                (path, col, sch))
        got = r.stderr.split("\n")[0]
        if r.returncode != 2 or got != want:
            wrong.append("%s without %s: exit %d, %s" % (kind, col,
                                                         r.returncode, got))
    n = len(required.get(sch, []))
    if wrong or n == 0:
        print("not ok - %s: a missing required column is named" % kind)
        for w in wrong:
            print("#   " + w)
    else:
        print("ok - %s: each of its %d required columns, when missing, is "
              "named" % (kind, n))
