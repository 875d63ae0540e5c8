"""Run plans/dlplan_train.py with the buckets of the overlapped sync
closing at ELEMENTS elements instead of Megatron-LM's 40 million, so that
a model small enough for a CPU has several (test-only: the executor has
no such option, and dlplan counts n_u from Megatron's size).

    PYTHONPATH=plans python3 tests/e2e/bucket_run.py ELEMENTS OPTIONS...
"""

import sys

import dlplan_exec
import dlplan_train

if __name__ == "__main__":
    try:
        n = int(sys.argv[1])
    except (IndexError, ValueError):
        n = 0
    if n < 1:
        sys.stderr.write("usage: bucket_run.py ELEMENTS OPTIONS...\n")
        sys.exit(1)
    dlplan_exec.OVERLAP_BUCKET = n
    dlplan_exec.OVERLAP_BUCKET_PER_GROUP = 0
    sys.exit(dlplan_train.main(sys.argv[2:]))
