#!/usr/bin/python3
"""The README's table of what the framework restrictions cost, computed.

usage: runtime-table.py DLPLAN DATASETS_DIR [TMPDIR]

For every bundled cluster x gpt2-xl, llama2-7b, bert-large (the README's
order), global batch 256, micro-batch 4: T and the shape (TP/PP/DP of the
first group) of the unrestricted plan, then for each of megatron,
deepspeed and torchtitan T of its plan over the unrestricted T, as the
"runtime" line of "dlplan plan --runtime R" prints it, with its shape
where it differs, or "exit 3" when no plan of it fits ("no gpt
family" where the framework does not build the model's family).  A combination with no
unrestricted plan has no row.  Prints the Markdown table; runtime.sh
compares it with README.md.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

CLUSTERS = ["single-node", "hetero-lab", "two-dc", "geo-8", "philly-64"]
MODELS = ["gpt2-xl", "llama2-7b", "bert-large"]
RUNTIMES = ["megatron", "deepspeed", "torchtitan"]
JOB = ["--global-batch", "256", "--micro-batch", "4"]


def shape(path):
    with open(path) as fh:
        g = json.load(fh)["groups"]
    return "%d/%d/%d" % (len(g[0]["stages"][0]["gpus"]),
                         len(g[0]["stages"]), len(g))


def run(dlplan, args, quiet=True):
    return subprocess.run([dlplan, "plan"] + (["-q"] if quiet else []) +
                          args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, check=False)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: runtime-table.py DLPLAN DATASETS_DIR [TMPDIR]")
    dlplan, data = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(dir=sys.argv[3] if len(sys.argv) == 4 else None)
    print("| cluster | model | dlplan T (shape) | megatron | deepspeed "
          "| torchtitan |")
    print("|---|---|---|---|---|---|")
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
            print("| %s | %s | %#.3g s (%s) | %s |" % (c, m, t, free,
                                                    " | ".join(cells)))


main()
