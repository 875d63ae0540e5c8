# tests/cli/house.sh - the house of src/ as src/README draws it: every file
# on a floor, uses (includes and calls) that only point down or sideways,
# no circles, no file over 1,200 lines, no function over 150 lines except
# the listed ones.  The calls are read from the object files with nm.

README=$SRCDIR/src/README

# floor_of NAME: the floor of a file name without extension, or nothing.
floor_of() {
	awk -v n="$1" '
	$1 == "floor" {
		for (i = 3; i <= NF; i++) {
			p = $i
			gsub(/\*/, ".*", p)
			if (n ~ ("^" p "$")) { print $2; exit }
		}
	}' "$README"
}

# Every source file stands on a floor.
unplaced=""
for f in "$SRCDIR"/src/*.c "$SRCDIR"/src/*.h; do
	n=$(basename "$f")
	n=${n%.*}
	[ -n "$(floor_of "$n")" ] || unplaced="$unplaced $n"
done
if [ -z "$unplaced" ]; then
	t_ok "every source file stands on a floor of src/README"
else
	t_notok "every source file stands on a floor of src/README" \
	    "not in the table:$unplaced"
fi

# The floors as "name floor" lines, for awk.
for f in "$SRCDIR"/src/*.c "$SRCDIR"/src/*.h; do
	n=$(basename "$f")
	n=${n%.*}
	echo "$n $(floor_of "$n")"
done | sort -u >"$TMP/floors"

# Include edges "user used" between files of different names.
for f in "$SRCDIR"/src/*.c "$SRCDIR"/src/*.h; do
	n=$(basename "$f")
	n=${n%.*}
	sed -n 's/^#[ 	]*include[ 	]*"\([^"]*\)\.h".*/\1/p' "$f" |
	    while read -r h; do
		[ "$h" = "$n" ] || echo "$n $h"
	done
done | sort -u >"$TMP/includes"

# Call edges from the object files: who calls a function defined in
# another object.  The build directory of the binary under test, or the
# standard one (the valgrind stage of CI runs without unit objects).
objdir=$BUILD
ls "$objdir"/*.o >/dev/null 2>&1 || objdir=$SRCDIR/build/std
if ls "$objdir"/*.o >/dev/null 2>&1; then
	for o in "$objdir"/*.o; do
		n=$(basename "$o" .o)
		nm "$o" | awk -v n="$n" '
		    $1 == "U" { print "U", $2, n }
		    NF == 3 && $2 ~ /^[TDBR]$/ { print "D", $3, n }'
	done >"$TMP/syms"
	awk '$1 == "D" { def[$2] = $3 } $1 == "U" { use[++k] = $2 " " $3 }
	    END {
		for (i = 1; i <= k; i++) {
			split(use[i], u, " ")
			if ((u[1] in def) && def[u[1]] != u[2])
				print u[2], def[u[1]]
		}
	    }' "$TMP/syms" | sort -u >"$TMP/calls"
	calls=yes
else
	: >"$TMP/calls"
	calls=
fi

# up KIND FILE: the edges of FILE that climb to a higher floor.
up() {
	awk 'NR == FNR { fl[$1] = $2; next }
	    (fl[$2] + 0) > (fl[$1] + 0) {
		print $1 " (floor " fl[$1] ") uses " $2 " (floor " fl[$2] ")"
	    }' "$TMP/floors" "$1"
}

bad=$(up "$TMP/includes")
if [ -z "$bad" ]; then
	t_ok "no file includes a header from a higher floor"
else
	t_notok "no file includes a header from a higher floor" "$bad"
fi
if [ -n "$calls" ]; then
	bad=$(up "$TMP/calls")
	if [ -z "$bad" ]; then
		t_ok "no object calls a function defined on a higher floor"
	else
		t_notok "no object calls a function defined on a higher floor" \
		    "$bad"
	fi
else
	skip "no object calls a function defined on a higher floor" \
	    "no object files in $BUILD or build/std"
fi

# Circles: tsort names a loop on stderr.  A module's headers belong to
# all of its files: NAME_int.h, and NAME.h when included by NAME_*.c (a
# module in several files, like search_*.c), so those includes are left
# out of the graph.  Calls between the files always count.
awk '$2 !~ /_int$/ && index($1, $2 "_") != 1' "$TMP/includes" |
    cat - "$TMP/calls" | sort -u >"$TMP/edges"
if tsort "$TMP/edges" >/dev/null 2>"$TMP/loop"; then
	t_ok "no files use each other in a circle"
else
	t_notok "no files use each other in a circle" "$(cat "$TMP/loop")"
fi

# File length.
long=$(wc -l "$SRCDIR"/src/*.c "$SRCDIR"/src/*.h | awk '
    $2 != "total" && $1 > 1200 { print $2 ": " $1 " lines" }')
if [ -z "$long" ]; then
	t_ok "no source file is over 1,200 lines"
else
	t_notok "no source file is over 1,200 lines" "$long"
fi

# Function length, from the line with the name at the start of a line
# (style(9)) to the closing brace at the start of a line.
# fn_lengths FILE...: "file.c:function LINES" for every function.
fn_lengths() {
	for _f; do
		awk -v f="$(basename "$_f")" '
		/^[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
			name = $0; sub(/\(.*/, "", name); start = FNR; next
		}
		/^}/ && start {
			print f ":" name " " (FNR - start + 1)
			start = 0
		}' "$_f"
	done
}
# over_150 LENGTHS ALLOWED: the functions over 150 lines not allowed.
over_150() {
	awk 'FILENAME == ARGV[1] { ok[$1] = 1; next }
	    $2 > 150 && !($1 in ok) { print $1 ": " $2 " lines" }' "$2" "$1"
}
# stale_allowed LENGTHS ALLOWED: the allowed ones that are 150 lines or
# fewer, or gone.
stale_allowed() {
	awk 'FILENAME == ARGV[1] { n[$1] = $2; next }
	    !($1 in n) || n[$1] <= 150 { printf " %s", $1 }' "$1" "$2"
}

# The measure itself, on a made-up file: a function of 151 lines and one
# of 3, each listed as allowed.  The long one is over 150 unless allowed;
# the short one is a stale entry (the check below would otherwise pass on
# any list when the measure is broken).
{
	echo 'static int'
	echo 'longfn(void)'
	echo '{'
	i=0
	while [ $i -lt 148 ]; do echo '	x++;'; i=$((i + 1)); done
	echo '}'
	echo 'static int'
	echo 'shortfn(void)'
	echo '{'
	echo '}'
} >"$TMP/made.c"
fn_lengths "$TMP/made.c" >"$TMP/made.len"
printf 'made.c:longfn\nmade.c:shortfn\n' >"$TMP/made.allowed"
: >"$TMP/none"
check "the function measure: a made-up 151-line function is over 150" \
    test "$(over_150 "$TMP/made.len" "$TMP/none")" = "made.c:longfn: 151 lines"
check "the function measure: a listed 3-line function is a stale entry" \
    test "$(stale_allowed "$TMP/made.len" "$TMP/made.allowed")" = \
    " made.c:shortfn"

# The exceptions: "file.c:function  why" lines after the heading, the why
# continued on indented lines; a line at the margin that is no entry is a
# mistake in the list that would leave an exception unread.
sed -n '/^Long functions allowed/,$p' "$README" | sed 1d >"$TMP/allowed.src"
sed -n 's/^[ 	]*\([a-z_0-9.]*\.c:[A-Za-z_0-9]*\).*/\1/p' \
    "$TMP/allowed.src" >"$TMP/allowed"
bad=$(grep -v '^[ 	]*$' "$TMP/allowed.src" |
    grep -v '^[ 	]*[a-z_0-9.]*\.c:[A-Za-z_0-9]*\([ 	]\|$\)' |
    grep -v '^[ 	][ 	]*[^ 	]' | head -3)
if [ -z "$bad" ]; then
	t_ok "src/README's long functions are file.c:function lines"
else
	t_notok "src/README's long functions are file.c:function lines" \
	    "not file.c:function (why):" "$bad"
fi

fn_lengths "$SRCDIR"/src/*.c >"$TMP/lengths"
long=$(over_150 "$TMP/lengths" "$TMP/allowed")
if [ -z "$long" ]; then
	t_ok "no function is over 150 lines outside the listed exceptions"
else
	t_notok "no function is over 150 lines outside the listed exceptions" \
	    "$long"
fi

# An exception that is no longer long is stale.
if [ ! -s "$TMP/allowed" ]; then
	skip "every listed long function is still long" \
	    "src/README lists none"
else
	stale=$(stale_allowed "$TMP/lengths" "$TMP/allowed")
	if [ -z "$stale" ]; then
		t_ok "every listed long function is still long"
	else
		t_notok "every listed long function is still long" \
		    "remove from src/README:$stale"
	fi
fi

# The repository stands alone.  A comment or document may point at a file
# only when the tree holds it (a path under a top-level directory, or any
# NAME.md), never at a design document outside it ("DESIGN 5.6") or at an
# issue tracker's numbers; and no interpreter cache is committed.  Data
# (csv, json) and the golden files are left out: they are inputs and
# outputs, not references.
if git -C "$SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRCDIR" ls-files >"$TMP/tracked"
	grep -v -e '^COPYING$' -e '/golden/' -e '\.csv$' -e '\.json$' \
	    -e '\.pyc$' -e '^tests/cli/house\.sh$' "$TMP/tracked" \
	    >"$TMP/scanned"
	(cd "$SRCDIR" && while read -r f; do
		[ -f "$f" ] || continue
		grep -onE '(^|[[:space:]"'"'"'(`])(src|man|tests|plans|datasets|completions|\.ci)/[A-Za-z0-9_./-]*\.(c|h|sh|py|md|1|5)\b|(^|[^A-Za-z0-9_/.-])[A-Za-z0-9_-]+\.md\b|DESIGN *(§|section|[0-9])' \
		    "$f" 2>/dev/null | sed "s|^|$f:|"
	done <"$TMP/scanned") >"$TMP/refs"
	bad=$(awk 'NR == FNR {
		have[$0] = 1; n = split($0, p, "/"); have[p[n]] = 1; next
	    }
	    {
		f = $1; l = $2; t = $0
		sub(/^[^:]*:[^:]*:/, "", t)
		sub(/^[^A-Za-z0-9_.]+/, "", t)
		if (t ~ /^DESIGN/ || !(t in have))
			print f ":" l ": " t
	    }' FS=: "$TMP/tracked" "$TMP/refs")
	if [ -z "$bad" ]; then
		t_ok "every file a comment or document names is in the tree"
	else
		t_notok "every file a comment or document names is in the tree" \
		    "$bad"
	fi
	bad=$(cd "$SRCDIR" && grep -inE '\bissues? #?[0-9]+' \
	    $(cat "$TMP/scanned") 2>/dev/null)
	if [ -z "$bad" ]; then
		t_ok "no reference to an issue number"
	else
		t_notok "no reference to an issue number" "$bad"
	fi
	bad=$(grep -E '(^|/)__pycache__/|\.py[co]$' "$TMP/tracked")
	if [ -z "$bad" ]; then
		t_ok "no interpreter cache is committed"
	else
		t_notok "no interpreter cache is committed" "$bad"
	fi
else
	skip "every file a comment or document names is in the tree" \
	    "$SRCDIR is not a git checkout"
	skip "no reference to an issue number" "$SRCDIR is not a git checkout"
	skip "no interpreter cache is committed" "$SRCDIR is not a git checkout"
fi
