#!/usr/bin/python3
# readme-tour.py - rerun the quoted commands of README.md's tour and compare
# their output with what the README shows.
#
#	readme-tour.py DLPLAN README.md [--update]
#
# A tour block is a fenced block whose first line starts with "$ " and
# whose command runs dlplan, head, sed or cat (the blocks that run torchrun
# or Slurm are not rerun).  Each block's command runs in a scratch
# directory that holds a copy of the repository's datasets/ and its
# plans/ and tests/ (as links), one after another, so that later blocks see what earlier ones
# wrote.  Output is compared line by line, except the solve time on
# dlplan's "search" line and the digest prefixes, which differ from run to
# run.  With --update the README's blocks are rewritten with the output.
#
# Copyright (C) 2026 dlplan developers.
# SPDX-License-Identifier: GPL-3.0-or-later

import os
import re
import shutil
import subprocess
import sys
import tempfile

RERUN = ("dlplan ", "head ", "sed ", "cat >")


def blocks(lines):
    """(start, end) line indices of each tour block's body (fences out)."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```") and i + 1 < len(lines) and \
                lines[i + 1].startswith("$ ") and \
                lines[i + 1][2:].startswith(RERUN):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            # One command a block, on one line.
            if sum(x.startswith("$ ") for x in lines[i + 1:j]) == 1 and \
                    not lines[i + 1].endswith("\\"):
                out.append((i + 1, j))
            i = j + 1
        else:
            i += 1
    return out


def split(body):
    """The command (with a here-document's lines) and the shown output."""
    cmd = [body[0][2:]]
    k = 1
    if "<<'EOF'" in cmd[0]:
        while body[k] != "EOF":
            cmd.append(body[k])
            k += 1
        cmd.append("EOF")
        k += 1
    return "\n".join(cmd) + "\n", body[k:]


def mask(line):
    line = re.sub(r"^(search .*, )[0-9.e+-]+ s$", r"\1TIME s", line)
    return re.sub(r"sha256 [0-9a-f]{12}", "sha256 DIGEST", line)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: readme-tour.py DLPLAN README.md [--update]")
    dlplan, readme = os.path.abspath(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    src = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    lines = open(readme).read().split("\n")
    work = tempfile.mkdtemp(prefix="dlplan-tour.")
    bindir = os.path.join(work, ".bin")
    os.mkdir(bindir)
    os.symlink(dlplan, os.path.join(bindir, "dlplan"))
    # A copy of datasets/: eval prints the paths plan.json records,
    # relative to the plan, and a link would resolve them elsewhere.
    shutil.copytree(os.path.join(src, "datasets"),
                    os.path.join(work, "datasets"))
    for d in ("plans", "tests"):
        os.symlink(os.path.join(src, d), os.path.join(work, d))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
               LC_ALL="C")
    bad, runs = 0, []
    for start, end in blocks(lines):
        cmd, shown = split(lines[start:end])
        r = subprocess.run(["sh", "-c", cmd], cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        got = r.stdout.rstrip("\n").split("\n")
        if got == [""]:
            got = []
        runs.append((end - len(shown), end, got))
        if [mask(x) for x in got] == [mask(x) for x in shown]:
            continue
        bad += 1
        print("README.md:%d: '%s' prints otherwise:" %
              (start + 1, cmd.split("\n")[0]))
        for a, b in zip(shown, got):
            if mask(a) != mask(b):
                print("  README: %s\n  now:    %s" % (a, b))
                break
        else:
            print("  %d lines shown, %d printed" % (len(shown), len(got)))
    shutil.rmtree(work)
    if update:
        for a, b, got in reversed(runs):
            lines[a:b] = got
        open(readme, "w").write("\n".join(lines))
        return 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
