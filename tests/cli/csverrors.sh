# tests/cli/csverrors.sh - every error about a CSV input names its file,
# line and column: csverrors.py breaks every column of every
# input kind in the usual ways and reads dlplan's first message.
/usr/bin/python3 "$SRCDIR/tests/cli/csverrors.py" "$DLPLAN" "$SRCDIR" "$TMP"
