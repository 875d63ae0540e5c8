# tests/cli/sync.sh - the man pages, -h and --help must say what the binary
# does (like curl's test1139).  Everything is asked of the binary:
#	dlplan --complete commands | options CMD | options-long CMD | summary CMD
#	dlplan --complete schemas
#	dlplan CMD -h, dlplan --help
# and compared with man/dlplan.1 and man/dlplan-formats.5, so that a change
# on one side alone fails here.  When a check fails it says what to add.

MAN1=$SRCDIR/man/dlplan.1
MAN5=$SRCDIR/man/dlplan-formats.5
BS=$(printf '\b')

# section FILE MACRO TITLE: the source lines of the .Sh or .Ss TITLE,
# without the heading, up to the next heading of the same or a higher
# level.
section() {
	awk -v m="$2" -v t="$3" '
	    $0 == "." m " " t { on = 1; next }
	    on && (/^\.Sh / || (m == "Ss" && /^\.Ss /)) { exit }
	    on { print }' "$1"
}

# fl_items: the options named by ".It Fl ..." lines on stdin, one per
# line, spelt as on the command line (".It Fl c , Fl -cluster Ar DIR" gives
# -c and --cluster).
fl_items() {
	awk '/^\.It / {
		for (i = 2; i < NF; i++)
			if ($i == "Fl" && $(i + 1) !~ /^[A-Z][a-z]$/ &&
			    $(i + 1) != "," && $(i + 1) != "|")
				print "-" $(i + 1)
	}'
}

# render FILE: the page as plain text, one line per paragraph line as far
# as possible (no wrapping), without overstrike.
render() {
	mandoc -Tascii -O width=1000 "$1" | sed "s/.$BS//g"
}

# squeeze: collapse blanks, drop leading and trailing ones.
squeeze() {
	sed 's/[[:space:]][[:space:]]*/ /g; s/^ //; s/ $//'
}

# same_lines NAME A B WHICH: ok when files A and B are the same, else not
# ok with their differing lines ("lines: WHICH" says which is '-', '+').
same_lines() {
	if cmp -s "$2" "$3"; then
		t_ok "$1"
	else
		t_notok "$1" "lines: $4" "$(diff "$2" "$3" | grep '^[<>]' |
		    sed 's/^</-/; s/^>/+/')"
	fi
}

# none NAME LIST WHY...: ok when LIST is empty, else not ok saying WHY.
none() {
	_n=$1 _l=$2
	shift 2
	if [ -z "$_l" ]; then
		t_ok "$_n"
	else
		t_notok "$_n" "$@"
	fi
}

have_mandoc=1
command -v mandoc >/dev/null 2>&1 || have_mandoc=0

# --- the pages themselves ---------------------------------------------
for m in "$MAN1" "$MAN5"; do
	n=$(basename "$m")
	if [ ! -f "$m" ]; then
		t_notok "$n exists" "missing $m"
		continue
	fi
	if [ "$have_mandoc" = 0 ]; then
		skip "$n lints clean" "mandoc not installed"
		continue
	fi
	mandoc -Tlint -Wwarning "$m" >"$TMP/lint" 2>&1
	if [ -s "$TMP/lint" ]; then
		t_notok "$n lints clean" "$(head -20 "$TMP/lint")"
	else
		t_ok "$n lints clean"
	fi
	# An empty quotation: a lone ".Ql ." or ".Dq ," takes its argument
	# for punctuation (write "\&.").  Lint does not see it.
	empty=$(mandoc -Tutf8 "$m" | sed "s/.$BS//g" | grep -n '‘’\|“”' |
	    head -3)
	none "$n renders no empty quotation" "$empty" "$empty" \
	    "quote punctuation as \\&. in the source"
done

dlplan --complete commands >"$TMP/cmds" 2>"$TMP/err"
if [ $? -ne 0 ] || [ ! -s "$TMP/cmds" ]; then
	t_notok "dlplan --complete commands lists commands" "$(cat "$TMP/err")"
fi
CMDS=$(cat "$TMP/cmds")
ncmds=$(wc -l <"$TMP/cmds" | tr -d ' ')

# Options that every command has are documented once, under "Common
# options", rather than in every command's subsection.
for c in $CMDS; do
	dlplan --complete options "$c" | sort -u >"$TMP/opts.$c"
done
cat "$TMP"/opts.* | sort | uniq -c | awk -v n="$ncmds" '$1 == n { print $2 }' \
    >"$TMP/common"
section "$MAN1" Ss "Common options" | fl_items | sort -u >"$TMP/man.common"
missing=$(comm -23 "$TMP/common" "$TMP/man.common" | tr '\n' ' ')
if [ -n "$missing" ]; then
	t_notok "common options documented" "not in 'Common options' of dlplan.1: $missing"
else
	t_ok "common options documented"
fi

[ "$have_mandoc" = 1 ] && render "$MAN1" | awk '
    /^SYNOPSIS/ { on = 1; next }
    on && /^[A-Z]/ { exit }
    on && NF { print }' | squeeze >"$TMP/synopsis"

# --- dlplan --help ----------------------------------------------------
dlplan --help >"$TMP/help" 2>&1
top=$(head -n 1 "$TMP/help" | sed 's/^usage: //')
if [ "$have_mandoc" = 0 ]; then
	skip "SYNOPSIS: dlplan" "mandoc not installed"
elif [ "$(head -n 1 "$TMP/synopsis")" = "$top" ]; then
	t_ok "SYNOPSIS: dlplan"
else
	t_notok "SYNOPSIS: dlplan" "dlplan --help: $top" \
	    "dlplan.1:      $(head -n 1 "$TMP/synopsis")"
fi
# Commands listed by --help: "  NAME      summary".
awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' \
    "$TMP/help" >"$TMP/help.cmds"
if cmp -s "$TMP/help.cmds" "$TMP/cmds"; then
	t_ok "--help lists every command"
else
	t_notok "--help lists every command" \
	    "--help: $(tr '\n' ' ' <"$TMP/help.cmds")" \
	    "--complete commands: $(tr '\n' ' ' <"$TMP/cmds")"
fi

# --- every command ----------------------------------------------------
for c in $CMDS; do
	section "$MAN1" Ss "dlplan $c" >"$TMP/sec"
	if [ ! -s "$TMP/sec" ]; then
		t_notok "$c: dlplan.1 has a section" \
		    "add '.Ss dlplan $c' to the DESCRIPTION of dlplan.1"
		continue
	fi
	t_ok "$c: dlplan.1 has a section"

	# Its options in the man page.
	fl_items <"$TMP/sec" | sort -u >"$TMP/man.opts"
	missing="" hint=""
	for o in $(comm -23 "$TMP/opts.$c" "$TMP/common"); do
		grep -qx -- "$o" "$TMP/man.opts" && continue
		arg=$(dlplan --complete options-long "$c" | awk -F '\t' \
		    -v o="$o" '$1 == o { print $2 }')
		missing="$missing $o"
		hint="${hint:-}${hint:+; }.It Fl ${o#-}${arg:+ Ar $arg}"
	done
	none "$c: every option is in dlplan.1" "$missing" \
	    "not in '.Ss dlplan $c':$missing" "add: $hint"

	# The man page documents no option the binary does not have.
	extra=$(comm -13 "$TMP/opts.$c" "$TMP/man.opts" | tr '\n' ' ')
	none "$c: dlplan.1 documents only real options" "$extra" \
	    "in '.Ss dlplan $c' but not accepted by 'dlplan $c': $extra"

	# -h shows every option and the usage line.
	dlplan "$c" -h >"$TMP/h" 2>&1
	rc=$?
	missing=""
	for o in $(cat "$TMP/opts.$c"); do
		grep -Eq -- "^  (-[a-zA-Z], )?$o( |,|\$)" "$TMP/h" ||
		    missing="$missing $o"
	done
	if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then
		t_ok "$c: -h lists every option"
	else
		t_notok "$c: -h lists every option" "exit status $rc;" \
		    "missing:$missing"
	fi
	# An option that takes one of fixed words (the parser's list, field 4
	# of options-long): -h shows them all, and dlplan.1 either gives the
	# same list on the option's .It line ("Cm a|b|c") or names every
	# word as "Cm word" in the command's section.
	dlplan --complete options-long "$c" | awk -F '\t' '
	    $2 != "" && $4 ~ /\|/ { print $1, $2, $4 }' >"$TMP/choices"
	hmiss="" mmiss=""
	while read -r o arg words; do
		[ "$arg" = "$words" ] || grep -qF -- "  $arg: $words" "$TMP/h" ||
		    hmiss="$hmiss $o"
		item=$(grep -E -- "^\.It Fl ${o#-}( |\$)" "$TMP/sec" | head -n 1)
		case $item in
		*" Cm $words") continue ;;
		*" Cm "*) mmiss="$mmiss $o (.It has ${item##* Cm }, the binary $words)"
			continue ;;
		esac
		# The words of the Cm macros ("Cm a , b", "Cm a|b") of the
		# option's item, up to the next option's: one a line.
		awk -v it=".It Fl ${o#-}" '
		    index($0, it) == 1 && (length($0) == length(it) ||
			substr($0, length(it) + 1, 1) == " ") { on = 1; next }
		    /^\.It Fl / { on = 0 }
		    !on { next }
		    { cm = 0
		      for (i = 1; i <= NF; i++) {
			if ($i == "Cm" || $i == ".Cm") { cm = 1; continue }
			if ($i ~ /^\.?[A-Z][a-z]$/) { cm = 0; continue }
			if (!cm) continue
			n = split($i, w, "|")
			for (k = 1; k <= n; k++)
				if (w[k] ~ /^[a-z0-9][a-z0-9._-]*$/) print w[k]
		      } }' "$TMP/sec" | sort -u >"$TMP/cmwords"
		for w in $(echo "$words" | tr '|' ' '); do
			grep -qxF -- "$w" "$TMP/cmwords" || mmiss="$mmiss $o:$w"
		done
	done <"$TMP/choices"
	none "$c: -h lists the words each option takes" "$hmiss" \
	    "-h lacks the 'ARG: a|b' line of:$hmiss"
	none "$c: dlplan.1 names the words each option takes" "$mmiss" \
	    "in '.Ss dlplan $c':$mmiss"

	usage=$(head -n 1 "$TMP/h")
	case $usage in
	"usage: dlplan $c "*|"usage: dlplan $c") ;;
	*) t_notok "$c: -h starts with its usage line" "found: $usage" ;;
	esac
	usage=$(printf '%s\n' "${usage#usage: }" | squeeze)
	if [ "$have_mandoc" = 0 ]; then
		skip "$c: SYNOPSIS matches -h" "mandoc not installed"
	else
		syn=$(grep -E "^dlplan $c( |\$)" "$TMP/synopsis")
		if [ "$syn" = "$usage" ]; then
			t_ok "$c: SYNOPSIS matches -h"
		else
			t_notok "$c: SYNOPSIS matches -h" "-h:       $usage" \
			    "dlplan.1: ${syn:-(no SYNOPSIS line for $c)}"
		fi
	fi

	# --help shows the command with its summary.
	sum=$(dlplan --complete summary "$c")
	if grep -Eq "^  $c +$(printf '%s' "$sum" | sed 's/[].[*^$()+?{}|\\/]/\\&/g')\$" \
	    "$TMP/help"; then
		t_ok "$c: --help lists it with its summary"
	else
		t_notok "$c: --help lists it with its summary" "summary: $sum"
	fi
done

# README.md's "## Commands" lists every command's usage line as -h
# prints it, in the order of --help.
awk '/^## Commands$/ { on = 1; next } on && /^## / { exit }
    on && /^    dlplan / { sub(/^    /, ""); print }' "$SRCDIR/README.md" \
    >"$TMP/readme.cmds"
for c in $CMDS; do
	dlplan "$c" -h 2>&1 | head -n 1 | sed 's/^usage: //'
done >"$TMP/usage.cmds"
same_lines "README's command list is the usage lines of -h" \
    "$TMP/readme.cmds" "$TMP/usage.cmds" "'-' README.md, '+' dlplan CMD -h"

# A man section for a command that does not exist (any more).
stale=""
for s in $(sed -n 's/^\.Ss dlplan \([a-z][a-z]*\)$/\1/p' "$MAN1"); do
	grep -qx "$s" "$TMP/cmds" || stale="$stale $s"
done
none "dlplan.1 documents only real commands" "$stale" \
    "'.Ss dlplan X' for unknown commands:$stale"
# SYNOPSIS lines for commands that do not exist.
if [ "$have_mandoc" = 1 ]; then
	stale=""
	for s in $(sed 1d "$TMP/synopsis" | awk '$1 == "dlplan" { print $2 }'); do
		grep -qx "$s" "$TMP/cmds" || stale="$stale $s"
	done
	none "SYNOPSIS lists only real commands" "$stale" "unknown:$stale"
fi

# --- ENVIRONMENT: what the launch files set and read -------------------
section "$MAN1" Sh ENVIRONMENT | awk '/^\.It Ev / { print $3 }' |
    sort -u >"$TMP/man.env"
grep -oh 'DLPLAN_[A-Z_]*' "$SRCDIR"/src/emit*.c "$SRCDIR"/src/cmd_emit.c |
    grep -vx DLPLAN_VERSION | sort -u >"$TMP/src.env"
missing=$(comm -23 "$TMP/src.env" "$TMP/man.env" | tr '\n' ' ')
none "ENVIRONMENT lists every DLPLAN_ variable of the launch files" "$missing" \
    "add '.It Ev NAME' to ENVIRONMENT in dlplan.1 for: $missing"

# --- dlplan-formats(5): input columns and their ranges ----------------
dlplan --complete schemas >"$TMP/schemas" 2>"$TMP/err"
if [ $? -ne 0 ] || [ ! -s "$TMP/schemas" ]; then
	t_notok "dlplan --complete schemas" "$(cat "$TMP/err")"
fi
for f in $(cut -f1 "$TMP/schemas" | uniq); do
	section "$MAN5" Ss "$f" >"$TMP/fsec"
	if [ ! -s "$TMP/fsec" ]; then
		t_notok "$f: dlplan-formats.5 has a section" \
		    "add '.Ss $f' to INPUT FILES"
		continue
	fi
	# ".It Cm COLUMN Pq PHRASE" -> "COLUMN<TAB>PHRASE"
	sed -n 's/^\.It Cm \([a-z_0-9]*\) Pq \(.*\)$/\1	\2/p' "$TMP/fsec" |
	    sort >"$TMP/man.cols"
	awk -F '\t' -v f="$f" 'BEGIN { OFS = "\t" } $1 == f { print $2, $3 }' \
	    "$TMP/schemas" | sort >"$TMP/bin.cols"
	same_lines "$f: columns and ranges match dlplan-formats.5" \
	    "$TMP/man.cols" "$TMP/bin.cols" \
	    "'-' dlplan-formats.5, '+' the binary (.It Cm COLUMN Pq PHRASE)"
done
# A documented file the binary lists no schema for: its columns cannot be
# checked, but some command's -h must still name it (steps.csv: replan's
# STEPS.csv), or it documents a file no command reads.
for c in $CMDS; do
	dlplan "$c" -h
done >"$TMP/allhelp" 2>&1
stale=""
for s in $(section "$MAN5" Sh "INPUT FILES" | sed -n 's/^\.Ss //p'); do
	cut -f1 "$TMP/schemas" | grep -qx "$s" && continue
	if grep -qi "${s%.csv}" "$TMP/allhelp"; then
		skip "$s: columns and ranges match dlplan-formats.5" \
		    "the binary lists no schema for it (export it and add it to print_schemas() in src/main.c)"
	else
		stale="$stale $s"
	fi
done
none "dlplan-formats.5 documents only input files dlplan reads" "$stale" \
    "no schema and no command's -h names:$stale"

# --- dlplan-formats(5): headers of the stable outputs -----------------
# header NAME FILE: the first line of FILE (minus the comments) must be
# a line of dlplan-formats.5.
header() {
	h=$(grep -v '^#' "$2" | head -n 1)
	if [ -n "$h" ] && grep -qxF -- "$h" "$MAN5"; then
		t_ok "$1 header is in dlplan-formats.5"
	else
		t_notok "$1 header is in dlplan-formats.5" "header: ${h:-(none)}"
	fi
}
C=$SRCDIR/datasets/clusters
dlplan predict -H "$C/hetero-lab/load.csv" --format csv >"$TMP/p.csv" 2>/dev/null
header "predict csv" "$TMP/p.csv"
dlplan predict -H "$C/hetero-lab/load.csv" --backtest --format csv \
    >"$TMP/b.csv" 2>/dev/null
header "predict --backtest csv" "$TMP/b.csv"
printf 'flow,src,dst,mb\nf1,use-h100-0,usw-a100-0,100\n' >"$TMP/flows.csv"
dlplan route -c "$C/two-dc" --flows "$TMP/flows.csv" --format csv \
    >"$TMP/r.csv" 2>/dev/null
header "route csv" "$TMP/r.csv"
dlplan route -c "$C/two-dc" --regimes --format csv >"$TMP/g.csv" 2>/dev/null
header "route --regimes csv" "$TMP/g.csv"

# A plan with several groups, so that rings and routes are not empty.
dlplan plan -c "$C/two-dc" -m "$SRCDIR/datasets/models/bert-large.csv" \
    --global-batch 256 --micro-batch 8 --strategy hybrid -q \
    -o "$TMP/plan" >/dev/null 2>"$TMP/err"
if [ ! -f "$TMP/plan/plan.json" ]; then
	t_notok "a plan to check dlplan-formats.5 against" "$(head -3 "$TMP/err")"
else
	header "plan.csv" "$TMP/plan/plan.csv"
	if ! command -v python3 >/dev/null 2>&1; then
		skip "plan.json keys of dlplan-formats.5 exist" "no python3"
	else
		# The stable keys: the list after "Scripts may rely on".
		section "$MAN5" Ss plan.json | awk '
		    /^Scripts may rely on/ { on = 1 }
		    on && /^\.El/ { exit }
		    on && /^\.It Cm [^ ]*$/ { print $3 }' >"$TMP/keys"
		# And an interleaved Megatron plan, for the keys only it has.
		dlplan model gpt --layers 8 --hidden 64 --heads 4 --seq 32 \
		    --vocab 128 -o "$TMP/t8.csv" 2>/dev/null
		dlplan import megatron -c "$C/single-node" -m "$TMP/t8.csv" -q \
		    -o "$TMP/vplan" -- --num-layers 8 --hidden-size 64 \
		    --num-attention-heads 4 --seq-length 32 \
		    --max-position-embeddings 32 --vocab-size 128 --bf16 \
		    --micro-batch-size 1 --global-batch-size 16 \
		    --pipeline-model-parallel-size 4 \
		    --num-virtual-stages-per-pipeline-rank 2 2>>"$TMP/err"
		python3 - "$TMP/plan/plan.json" "$TMP/keys" "$TMP/vplan/plan.json" \
		    >"$TMP/keys.out" <<'EOF'
import json, sys
plans = [json.load(open(f)) for f in sys.argv[1:2] + sys.argv[3:]]
def has(o, path):
    if not path:
        return True
    head, _, rest = path.partition(".")
    arr = head.endswith("[]")
    key = head[:-2] if arr else head
    if not isinstance(o, dict) or key not in o:
        return False
    v = o[key]
    if arr:
        return isinstance(v, list) and any(has(x, rest) for x in v)
    return has(v, rest)
for k in open(sys.argv[2]).read().split():
    if not any(has(plan, k) for plan in plans):
        print(k)
EOF
		if [ ! -s "$TMP/keys" ] || [ -s "$TMP/keys.out" ]; then
			t_notok "plan.json keys of dlplan-formats.5 exist" \
			    "not in a real plan: $(tr '\n' ' ' <"$TMP/keys.out")"
		else
			t_ok "plan.json keys of dlplan-formats.5 exist"
		fi
	fi
fi
