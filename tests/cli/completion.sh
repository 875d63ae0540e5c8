# tests/cli/completion.sh - the shell completions in completions/, run in
# real shells: bash (with bash-completion when it is installed, and
# without), zsh (typing TAB on a pty) and fish (complete -C).  A shell that
# is not installed is skipped.  The expected words come from the binary
# (dlplan --complete), so these tests check the plumbing, not the lists.

COMP=$SRCDIR/completions
# "dlplan" on PATH is the binary under test; each call is counted in
# $TMP/calls (a TAB that starts many processes is slow on a loaded machine).
mkdir -p "$TMP/bin"
cat >"$TMP/bin/dlplan" <<EOF
#!/bin/sh
echo "\$*" >>"$TMP/calls"
exec "$DLPLAN" "\$@"
EOF
chmod +x "$TMP/bin/dlplan"
PATH=$TMP/bin:$PATH
export PATH

# A directory to complete in: directories, CSV, JSON and other files.
W=$TMP/w
mkdir -p "$W/clusters/lab" "$W/clusters/dc2" "$W/runs"
: >"$W/clusters/notes.txt"
: >"$W/clusters/model.csv"
: >"$W/runs/plan.json"
: >"$W/runs/plan.csv"

# same NAME GOT WANT: GOT and WANT hold the same words (order and repeats
# aside).
same() {
	_g=$(printf '%s\n' $2 | sort -u | tr '\n' ' ')
	_w=$(printf '%s\n' $3 | sort -u | tr '\n' ' ')
	if [ "$_g" = "$_w" ]; then
		t_ok "$1"
	else
		t_notok "$1" "got:    $_g" "wanted: $_w"
	fi
}

CMDS=$(dlplan --complete commands | tr '\n' ' ')
PLANLONG=$(dlplan --complete options plan | grep '^--' | tr '\n' ' ')
STRAT=$(dlplan --complete values plan --strategy | tr '\n' ' ')
FAMILIES=$(dlplan --complete operands model | head -n 1 | tr '|' ' ')
# The checks below compare with these lists; empty ones prove nothing.
for v in CMDS PLANLONG STRAT FAMILIES; do
	eval "_v=\$$v"
	case $_v in
	*[a-z]*) ;;
	*) t_notok "dlplan --complete gives the words to expect ($v)" \
	    "empty: is 'plan' or 'model' missing?" ;;
	esac
done

# --- bash -------------------------------------------------------------
# bash_complete MODE WORD...: COMPREPLY for the words (the last is the one
# being completed), one per line; MODE "bc" loads bash-completion first.
bash_complete() {
	_mode=$1
	shift
	bash --norc --noprofile -c '
		mode=$1 comp=$2
		shift 2
		if [ "$mode" = bc ]; then
			. /usr/share/bash-completion/bash_completion || exit 3
		fi
		. "$comp" || exit 3
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		# The line as typed: no blanks around a "=" word.
		COMP_LINE="" p=""
		for w; do
			if [ "$w" = = ] || [ "$p" = = ]; then
				COMP_LINE+=$w
			else
				COMP_LINE+=${COMP_LINE:+ }$w
			fi
			p=$w
		done
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_dlplan dlplan "${COMP_WORDS[COMP_CWORD]}" \
		    "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"' sh "$_mode" "$COMP/dlplan.bash" "$@"
}

if ! command -v bash >/dev/null 2>&1; then
	skip "bash completion" "bash not installed"
else
	modes=plain
	if [ -f /usr/share/bash-completion/bash_completion ]; then
		modes="bc plain"
	else
		skip "bash completion with bash-completion" \
		    "package bash-completion not installed"
	fi
	for m in $modes; do
		b="bash ($m)"
		same "$b: subcommands" "$(bash_complete $m dlplan '')" "$CMDS"
		same "$b: subcommands starting with p" \
		    "$(bash_complete $m dlplan p)" \
		    "$(printf '%s\n' $CMDS | grep '^p')"
		same "$b: long options of plan" \
		    "$(bash_complete $m dlplan plan --)" "$PLANLONG"
		same "$b: values of --strategy" \
		    "$(bash_complete $m dlplan plan --strategy '')" "$STRAT"
		same "$b: values of --strategy after other options" \
		    "$(bash_complete $m dlplan plan -c "$W" --strategy h)" \
		    "hybrid"
		same "$b: -c completes directories" \
		    "$(bash_complete $m dlplan plan -c "$W/clusters/")" \
		    "$W/clusters/dc2 $W/clusters/lab"
		same "$b: --cluster completes directories" \
		    "$(bash_complete $m dlplan check --cluster "$W/")" \
		    "$W/clusters $W/runs"
		same "$b: -m completes csv files and directories" \
		    "$(bash_complete $m dlplan plan -m "$W/clusters/")" \
		    "$W/clusters/dc2 $W/clusters/lab $W/clusters/model.csv"
		same "$b: emit's PLAN.json operand" \
		    "$(bash_complete $m dlplan emit "$W/runs/")" \
		    "$W/runs/plan.json"
		same "$b: model's family operand" \
		    "$(bash_complete $m dlplan model '')" "$FAMILIES"
		same "$b: a taken operand leaves the options" \
		    "$(bash_complete $m dlplan eval x.json --b)" "--baselines"
	done
	# bash splits --opt=value at '='.
	same "bash (plain): --strategy=value" \
	    "$(bash_complete plain dlplan plan --strategy = d)" "dp"
	if [ -f /usr/share/bash-completion/bash_completion ]; then
		same "bash (bc): --strategy=value" \
		    "$(bash_complete bc dlplan plan --strategy = d)" "dp"
	fi
fi

# --- zsh --------------------------------------------------------------
# Completions are collected by wrapping compadd, in an interactive zsh on
# a pseudo-terminal, after typing each line and TAB.
cat >"$TMP/comp.zsh" <<'EOF'
zmodload zsh/zpty || exit 2
compdir=$1 out=$2
shift 2
zpty z zsh -f -i || exit 2
zpty -w z "PS1='' PS2='' RPS1=''; unsetopt zle_bracketed_paste 2>/dev/null"
zpty -w z "fpath=(${(q)compdir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)out}.dump"
zpty -w z "compadd() { local -a __m; if (( \${@[(I)-[OAD]*]} )); then builtin compadd \"\$@\"; return; fi; builtin compadd -O __m \"\$@\"; print -rl -- \$__m >>${(q)out}.cur; builtin compadd \"\$@\"; }"
zpty -w z "print -r -- '##''# ready'"
zpty -r z x '*### ready*' || exit 2
n=0
for line; do
  : >$out.cur
  zpty -w -n z "$line"$'\t'
  sleep 0.2
  zpty -w -n z $'\C-u'
  zpty -w z "print -r -- '##''# done'"
  zpty -r z x '*### done*' || exit 2
  n=$((n + 1))
  cp $out.cur $out.$n
done
zpty -d z
EOF
if ! command -v zsh >/dev/null 2>&1; then
	skip "zsh completion" "zsh not installed"
elif ! zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
	skip "zsh completion" "zsh has no zsh/zpty module"
else
	# Lines to type, in order; their results are $TMP/z.N.
	set -- 'dlplan ' 'dlplan plan --' 'dlplan plan --strategy ' \
	    "dlplan plan -c $W/clusters/" "dlplan emit $W/runs/" \
	    'dlplan model ' 'dlplan plan --strategy=h' \
	    "dlplan plan -m $W/clusters/"
	: >"$TMP/calls"
	if ! timeout 60 zsh -f "$TMP/comp.zsh" "$COMP" "$TMP/z" "$@" \
	    >/dev/null 2>"$TMP/zerr"; then
		t_notok "zsh completion runs" "$(head -5 "$TMP/zerr")"
	else
		# _arguments wants every option's values up front: they come
		# with options-long, not from a "--complete values" call per
		# option (fifty processes a TAB, once the cause of this test's
		# timeout).
		ncalls=$(wc -l <"$TMP/calls" | tr -d ' ')
		if [ "$ncalls" -le $((4 * $#)) ]; then
			t_ok "zsh: a TAB asks dlplan at most 4 times"
		else
			t_notok "zsh: a TAB asks dlplan at most 4 times" \
			    "$ncalls calls for $# lines:" \
			    "$(sort "$TMP/calls" | uniq -c | sort -rn | head -5)"
		fi
		z() { cat "$TMP/z.$1" 2>/dev/null; }
		same "zsh: subcommands" "$(z 1)" "$CMDS"
		# zsh also offers -c etc.; the long ones must all be there.
		same "zsh: long options of plan" "$(z 2 | grep '^--')" "$PLANLONG"
		same "zsh: values of --strategy" "$(z 3)" "$STRAT"
		same "zsh: -c completes directories" "$(z 4)" "dc2 lab"
		same "zsh: emit's PLAN.json operand" "$(z 5)" "plan.json"
		same "zsh: model's family operand" "$(z 6)" "$FAMILIES"
		same "zsh: --strategy=value" "$(z 7)" "hybrid"
		same "zsh: -m completes csv files and directories" "$(z 8)" \
		    "dc2 lab model.csv"
	fi
fi

# --- fish -------------------------------------------------------------
# fish_complete LINE: the words fish offers (descriptions cut).
fish_complete() {
	fish --no-config -c 'source $argv[1]; complete -C$argv[2]' \
	    "$COMP/dlplan.fish" "$1" 2>/dev/null | cut -f1
}
if ! command -v fish >/dev/null 2>&1; then
	skip "fish completion" "fish not installed"
else
	same "fish: subcommands" "$(fish_complete 'dlplan ')" "$CMDS"
	same "fish: long options of plan" \
	    "$(fish_complete 'dlplan plan --')" "$PLANLONG"
	same "fish: values of --strategy" \
	    "$(fish_complete 'dlplan plan --strategy ')" "$STRAT"
	same "fish: -c completes directories" \
	    "$(fish_complete "dlplan plan -c $W/clusters/")" \
	    "$W/clusters/dc2/ $W/clusters/lab/"
	same "fish: emit's PLAN.json operand" \
	    "$(fish_complete "dlplan emit $W/runs/")" "$W/runs/plan.json"
	same "fish: -m completes csv files and directories" \
	    "$(fish_complete "dlplan plan -m $W/clusters/")" \
	    "$W/clusters/dc2/ $W/clusters/lab/ $W/clusters/model.csv"
	same "fish: model's family operand" \
	    "$(fish_complete 'dlplan model ')" "$FAMILIES"
	same "fish: --strategy=value" \
	    "$(fish_complete 'dlplan plan --strategy=h')" "--strategy=hybrid"
fi
