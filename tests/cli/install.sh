# tests/cli/install.sh - make install and make uninstall under a scratch
# prefix: the man pages render with man(1), the completions sit where
# bash-completion, zsh and fish look for them under that prefix, the plan
# reader and the executor sit in PREFIX/share/dlplan, and uninstall leaves
# nothing but empty directories.
#
# The binary under test is installed as it is ($DLPLAN, "-o dlplan" keeps
# make from rebuilding it).

P=$TMP/x
mk() {
	make -s -C "$SRCDIR" -o dlplan BIN="$DLPLAN" "$@" >"$TMP/make.out" 2>&1
}

if ! command -v make >/dev/null 2>&1; then
	skip "make install" "make not installed"
	return 0 2>/dev/null || exit 0
fi
if mk install PREFIX="$P"; then
	t_ok "make install PREFIX=..."
else
	t_notok "make install PREFIX=..." "$(tail -5 "$TMP/make.out")"
fi

check "installed binary runs" "$P/bin/dlplan" --version

# --- man pages --------------------------------------------------------
for page in "1 dlplan" "5 dlplan-formats"; do
	set -- $page
	f=$P/share/man/man$1/$2.$1
	if [ ! -f "$f" ]; then
		t_notok "$2($1) installed" "missing $f"
		continue
	fi
	if command -v man >/dev/null 2>&1; then
		MANPAGER=cat MANWIDTH=80 man -M "$P/share/man" "$1" "$2" \
		    >"$TMP/man.out" 2>"$TMP/man.err"
		how="man -M"
	else
		mandoc -Tascii "$f" >"$TMP/man.out" 2>"$TMP/man.err"
		how="mandoc (no man(1))"
	fi
	# The NAME line, with overstrike removed.
	if sed "s/.$(printf '\b')//g" "$TMP/man.out" |
	    grep -q "^ *$2 *[-\\\\]"; then
		t_ok "$2($1) renders with $how"
	else
		t_notok "$2($1) renders with $how" "$(head -5 "$TMP/man.err")" \
		    "$(head -5 "$TMP/man.out")"
	fi
done

# --- the plan reader and the executor -----------------------------------
for f in __init__.py dlplan_plan.py dlplan_train.py dlplan_exec.py \
    dlplan_model.py dlplan_config.py dlplan_reference.py dlplan_profile.py \
    dlplan_arch.py dlplan_pipe.py; do
	check "$f installed under share/dlplan" test -f "$P/share/dlplan/$f"
done
if command -v python3 >/dev/null 2>&1; then
	check "installed dlplan_plan.py reads a plan" python3 \
	    "$P/share/dlplan/dlplan_plan.py" "$DATA/e2e-plan.json" 0
	# As a package: the modules import one another relatively.
	check "installed modules import as the package dlplan" env \
	    PYTHONPATH="$P/share" python3 -m dlplan.dlplan_train --help
else
	skip "installed dlplan_plan.py reads a plan" "no python3"
fi

# --- completions ------------------------------------------------------
mkdir -p "$TMP/bin"
ln -s "$P/bin/dlplan" "$TMP/bin/dlplan"

# bash-completion loads completions/NAME from each XDG_DATA_DIRS entry
# (default /usr/local/share:/usr/share) on first use.
if [ ! -f "$P/share/bash-completion/completions/dlplan" ]; then
	t_notok "bash completion installed" "not in $P/share/bash-completion/completions"
elif [ ! -f /usr/share/bash-completion/bash_completion ]; then
	skip "bash-completion finds it under the prefix" "bash-completion not installed"
else
	got=$(XDG_DATA_DIRS=$P/share PATH=$TMP/bin:$PATH bash --norc -c '
	    . /usr/share/bash-completion/bash_completion
	    __load_completion dlplan && complete -p dlplan' 2>&1)
	case $got in
	*"-F _dlplan dlplan"*) t_ok "bash-completion finds it under the prefix" ;;
	*) t_notok "bash-completion finds it under the prefix" "$got" ;;
	esac
fi

# zsh: the directory must be PREFIX/<dir> for a <dir> that zsh's own
# fpath has under /usr/local (where "make install" puts things), and
# compinit must pick the function up from there.
zdir=$(cd "$P" && ls -d share/zsh/*/_dlplan 2>/dev/null | sed 's,/_dlplan$,,')
if [ -z "$zdir" ]; then
	t_notok "zsh completion installed" "no $P/share/zsh/*/_dlplan"
elif ! command -v zsh >/dev/null 2>&1; then
	skip "zsh looks where it is installed" "zsh not installed"
else
	if zsh -fc 'print -l $fpath' | grep -qx "/usr/local/$zdir"; then
		t_ok "zsh looks in PREFIX/$zdir"
	else
		t_notok "zsh looks in PREFIX/$zdir" \
		    "zsh's fpath: $(zsh -fc 'print $fpath')"
	fi
	got=$(zsh -fc 'fpath=("$1" $fpath); autoload -Uz compinit
	    compinit -u -d "$2"; print -r -- $_comps[dlplan]' sh \
	    "$P/$zdir" "$TMP/zcompdump" 2>&1)
	if [ "$got" = _dlplan ]; then
		t_ok "zsh compinit registers _dlplan from there"
	else
		t_notok "zsh compinit registers _dlplan from there" "got: $got"
	fi
fi

# fish loads vendor_completions.d/NAME.fish from each XDG_DATA_DIRS entry.
if [ ! -f "$P/share/fish/vendor_completions.d/dlplan.fish" ]; then
	t_notok "fish completion installed" "not in $P/share/fish/vendor_completions.d"
elif ! command -v fish >/dev/null 2>&1; then
	skip "fish finds it under the prefix" "fish not installed"
else
	# fish's own config.fish sets the search path; a scratch HOME keeps
	# the user's configuration out.
	got=$(HOME=$TMP/home XDG_CONFIG_HOME=$TMP/home/.config \
	    XDG_DATA_HOME=$TMP/home/.local/share XDG_DATA_DIRS=$P/share \
	    PATH=$TMP/bin:$PATH fish -c 'complete -C"dlplan "' 2>&1 |
	    cut -f1 | sort | tr '\n' ' ')
	want=$("$P/bin/dlplan" --complete commands | sort | tr '\n' ' ')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		t_ok "fish finds it under the prefix"
	else
		t_notok "fish finds it under the prefix" "got: $got" \
		    "wanted: $want"
	fi
fi

# --- uninstall --------------------------------------------------------
if mk uninstall PREFIX="$P"; then
	t_ok "make uninstall PREFIX=..."
else
	t_notok "make uninstall PREFIX=..." "$(tail -5 "$TMP/make.out")"
fi
left=$(find "$P" ! -type d | sed "s,^$P/,," | tr '\n' ' ')
if [ -z "$left" ]; then
	t_ok "uninstall leaves only empty directories"
else
	t_notok "uninstall leaves only empty directories" "left: $left"
fi

# --- DESTDIR ----------------------------------------------------------
if mk install DESTDIR="$TMP/stage" PREFIX=/usr &&
    [ -x "$TMP/stage/usr/bin/dlplan" ] &&
    [ -f "$TMP/stage/usr/share/man/man1/dlplan.1" ] &&
    [ -f "$TMP/stage/usr/share/man/man5/dlplan-formats.5" ]; then
	t_ok "make install DESTDIR=... PREFIX=/usr stages under DESTDIR"
else
	t_notok "make install DESTDIR=... PREFIX=/usr stages under DESTDIR" \
	    "$(tail -5 "$TMP/make.out")" "$(cd "$TMP/stage" 2>/dev/null && find . | head)"
fi
