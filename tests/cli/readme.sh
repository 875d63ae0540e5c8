# tests/cli/readme.sh - the commands of README.md's tour print what the
# README shows: tests/cli/readme-tour.py reruns every quoted dlplan, head,
# sed and cat command of it in a scratch copy of datasets/ and compares
# the output line by line, all but the solve time and digest prefixes.
# Refresh the README with "readme-tour.py dlplan README.md --update".

check "README: the tour prints what it shows" /usr/bin/python3 \
    "$SRCDIR/tests/cli/readme-tour.py" "$DLPLAN" "$SRCDIR/README.md"
# The check must be able to fail: a README whose plan summary is off by
# one digit is caught.
sed 's/^throughput \([0-9]\)/throughput 9\1/' "$SRCDIR/README.md" \
    >"$TMP/README.md"
check "README: a changed transcript line fails the check" sh -c "
    ! /usr/bin/python3 '$SRCDIR/tests/cli/readme-tour.py' '$DLPLAN' \
    '$TMP/README.md' >/dev/null"
