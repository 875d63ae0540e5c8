#!/usr/bin/python3
"""The README's table of what the framework restrictions cost, computed.

usage: runtime-table.py DLPLAN DATASETS_DIR [TMPDIR]
       runtime-table.py --update README.md DLPLAN DATASETS_DIR [TMPDIR]

For every bundled cluster x gpt2-xl, llama2-7b, bert-large (the README's
order), global batch 256, micro-batch 4: T and the shape (TP/PP/DP of the
first group; " vN" with N interleaved chunks a stage) of the
unrestricted plan, then for each of megatron,
deepspeed and torchtitan T of its plan over the unrestricted T, as the
"runtime" line of "dlplan plan --runtime R" prints it, with its shape
where it differs, or "exit 3" when no plan of it fits ("no gpt
family" where the framework does not build the model's family).  A combination with no
unrestricted plan has no row.  Prints the Markdown table; runtime.sh
compares it with README.md.  With --update FILE it replaces the table in
FILE instead (the lines from its "| cluster | model | dlplan T" header
to the first blank line after it), written to a temporary file and
renamed, and says how many rows changed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CLUSTERS = ["single-node", "hetero-lab", "two-dc", "geo-8", "philly-64"]
MODELS = ["gpt2-xl", "llama2-7b", "bert-large"]
RUNTIMES = ["megatron", "deepspeed", "torchtitan"]
JOB = ["--global-batch", "256", "--micro-batch", "4"]


def shape(path):
    """TP/PP/DP of the first group, and " vN" when its stages interleave
    N chunks each (Megatron's virtual pipeline stages)."""
    with open(path) as fh:
        g = json.load(fh)["groups"]
    v = g[0].get("virtual_stages", 1)
    return "%d/%d/%d%s" % (len(g[0]["stages"][0]["gpus"]),
                           len(g[0]["stages"]), len(g),
                           " v%d" % v if v > 1 else "")


def run(dlplan, args, quiet=True):
    return subprocess.run([dlplan, "plan"] + (["-q"] if quiet else []) +
                          args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)


HEADER = "| cluster | model | dlplan T (shape) | megatron | deepspeed " \
    "| torchtitan |"


def update(path, table):
    """Replace the table of path by table (lines); the rows changed."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    try:
        a = lines.index(HEADER)
    except ValueError:
        sys.exit("runtime-table: %s: no line %r" % (path, HEADER))
    z = a
    while z < len(lines) and lines[z] != "":
        z += 1
    old = lines[a:z]
    lines[a:z] = table
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    os.replace(tmp, path)
    return sum(1 for r in table if r not in old) + max(0, len(old) -
                                                         len(table))


def main():
    args = sys.argv[1:]
    dest = None
    if args[:1] == ["--update"]:
        if len(args) < 2:
            sys.exit("usage: runtime-table.py --update README.md DLPLAN "
                     "DATASETS_DIR [TMPDIR]")
        dest, args = args[1], args[2:]
    if len(args) not in (2, 3):
        sys.exit("usage: runtime-table.py [--update README.md] DLPLAN "
                 "DATASETS_DIR [TMPDIR]")
    dlplan, data = args[0], args[1]
    tmp = tempfile.mkdtemp(dir=args[2] if len(args) == 3 else None)
    table = [HEADER, "|---|---|---|---|---|---|"]
    for c in CLUSTERS:
        for m in MODELS:
            inp = ["-c", os.path.join(data, "clusters", c), "-m",
                   os.path.join(data, "models", m + ".csv")] + JOB
            d = os.path.join(tmp, "%s-%s" % (c, m))
            if run(dlplan, inp + ["-o", d]).returncode != 0:
                continue
            free = shape(os.path.join(d, "plan.json"))
            cells, t = [], None
            for rt in RUNTIMES:
                dr = d + "-" + rt
                r = run(dlplan, inp + ["--runtime", rt, "-o", dr], False)
                if r.returncode == 3:
                    fam = re.search(r"has no (\S+) family", r.stderr)
                    cells.append("no %s family" % fam.group(1) if fam else
                                 "exit 3")
                    continue
                if r.returncode != 0:
                    sys.exit("runtime-table: %s on %s, %s: exit %d: %s"
                             % (rt, c, m, r.returncode, r.stderr))
                mt = re.search(r"^runtime +\S+ \S+ s, unrestricted "
                               r"\(dlplan\) (\S+) s \(x(\S+)\)$",
                               r.stdout, re.M)
                t = float(mt.group(1))
                s = shape(os.path.join(dr, "plan.json"))
                cells.append("x%s%s" % (mt.group(2), "" if s == free else
                                        " (%s)" % s))
            if t is None:
                with open(os.path.join(d, "plan.json")) as fh:
                    t = json.load(fh)["estimate"]["iteration_s"]
            table.append("| %s | %s | %#.3g s (%s) | %s |" % (
                c, m, t, free, " | ".join(cells)))
    shutil.rmtree(tmp)
    if dest is None:
        print("\n".join(table))
    else:
        print("runtime-table: %s: %d rows changed" % (dest,
                                                     update(dest, table)))


main()
