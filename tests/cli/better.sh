# Shapes the structured search does not build: for each kind,
# a plan written by hand and priced with "dlplan eval" that beats what the
# planner found before its improvement phase; "dlplan plan" must find one
# at least as fast (tests/cli/better-check.py holds the cases).

CHK="/usr/bin/python3 $SRCDIR/tests/cli/better-check.py"

check "a node's GPUs as half-TP units in two pipelines" $CHK split-node "$TMP"
check "TP degrees chosen per GPU type" $CHK tp-per-type "$TMP"
check "every node used where the old plan dropped two" $CHK all-nodes "$TMP"
check "pipelines cross the WAN so that the sync rings do not" $CHK rings \
    "$TMP"
check "stripes: every node's GPUs shared by the groups, rings inside nodes" \
    $CHK stripe "$TMP"
check "two stages on one node merged, the node's units packed again" \
    $CHK pack "$TMP"
check "slow nodes as a run of short stages inside every pipeline" \
    $CHK insert "$TMP"
check "slow nodes as narrow units ahead of a pipeline" $CHK narrow "$TMP"
check "TP degrees per GPU type in the structured search, A100 halves dealt" \
    $CHK tp-per-type-dealt "$TMP"
check "half nodes dealt to pipelines on philly-64" $CHK half-node-dealt "$TMP"
check "whole and half nodes in one pipeline (--strategy pp)" $CHK \
    half-node-pp "$TMP"
