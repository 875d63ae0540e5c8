#!/bin/sh
# regen.sh - regenerate datasets/models/PRESET.csv for every preset of
# "dlplan model" (the list comes from the binary, so it cannot drift).
#
#	DLPLAN=path/to/dlplan sh datasets/models/regen.sh
#
# tests/cli/model.sh fails when a file here differs from what the binary
# writes.  resnet50-pipedream.csv is not generated here: see README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${DLPLAN:=$here/../../dlplan}"
presets=$("$DLPLAN" --complete values model --preset)
if [ -z "$presets" ]; then
	echo "regen.sh: $DLPLAN lists no presets" >&2
	exit 1
fi
for p in $presets; do
	"$DLPLAN" model --preset "$p" -o "$here/$p.csv"
done
