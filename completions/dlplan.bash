# bash completion for dlplan(1)                            -*- shell-script -*-
#
# Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
#
# Everything is asked of the dlplan being completed ("dlplan --complete",
# see src/main.c), so the completion cannot drift from the option tables
# and nothing is cached.  Works with or without the bash-completion
# package.

# _dlplan_files KIND WORD: put the completions of WORD for a value of kind
# KIND (dir, file, csv, json or fixed words "a|b") in COMPREPLY.
_dlplan_files()
{
	local kind=$1 cur=$2 IFS=$'\n'

	case $kind in
	dir)
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -d -- "$cur"))
		;;
	file)
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -f -- "$cur"))
		;;
	csv | json)
		# Matching files, and directories to descend into.
		compopt -o filenames 2>/dev/null
		COMPREPLY+=($(compgen -f -X "!*.$kind" -- "$cur")
		    $(compgen -d -- "$cur"))
		;;
	?*)
		COMPREPLY+=($(IFS=$'\n|'; compgen -W "$kind" -- "$cur"))
		;;
	esac
}

# _dlplan_takes_arg OPT: does the option (short or long) take an argument?
# Reads short2long and argopts of the calling _dlplan.
_dlplan_takes_arg()
{
	local o=$1 a
	[[ $o == --* ]] || o=${short2long[$o]:-}
	[[ -n $o ]] || return 1
	for a in "${argopts[@]}"; do
		[[ $a == "$o" ]] && return 0
	done
	return 1
}

_dlplan()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion -n =: || return
	else
		# Without bash-completion: glue "--opt" "=" "value" (bash
		# breaks words at '=') back into one word.
		local w i j=-1 glue=0
		words=()
		for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
			w=${COMP_WORDS[i]}
			if ((j >= 0)) && [[ ${words[j]} == --* ]] &&
			    { [[ $w == = ]] || ((glue)); }; then
				words[j]+=$w
				glue=0
				[[ $w == = ]] && glue=1
			else
				words[++j]=$w
				glue=0
			fi
			((i == COMP_CWORD)) && cword=$j
		done
		cur=${words[cword]}
		prev=${words[cword - 1]}
	fi
	COMPREPLY=()

	# The dlplan the user is completing (./dlplan, ~/bin/dlplan, dlplan).
	local dl=${words[0]}
	dl=${dl/#\~/$HOME}
	type -P -- "$dl" >/dev/null 2>&1 || [[ -x $dl ]] || dl=dlplan

	# The subcommand: the first word that is not an option.
	local i cmd="" ci=0
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} != -* ]]; then
			cmd=${words[i]} ci=$i
			break
		fi
	done
	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$dl" --complete commands \
			    2>/dev/null)" -- "$cur"))
		fi
		return
	fi

	# The options of cmd: "--long" then its "-s" (options), and
	# "--long<TAB>ARG<TAB>help" (options-long).
	local -a opts argopts=()
	local line arg last=""
	local -A short2long=()
	opts=($("$dl" --complete options "$cmd" 2>/dev/null)) || return
	for line in "${opts[@]}"; do
		if [[ $line == --* ]]; then
			last=$line
		else
			short2long[$line]=$last
		fi
	done
	while IFS=$'\t' read -r line arg _; do
		[[ -n $arg ]] && argopts+=("$line")
	done < <("$dl" --complete options-long "$cmd" 2>/dev/null)

	# Walk the words after cmd: count operands, skip option arguments,
	# stop at "--".
	local nops=0 skip=0 dd=0
	for ((i = ci + 1; i < cword; i++)); do
		if ((skip)); then
			skip=0
		elif [[ ${words[i]} == -- ]]; then
			dd=$i
			break
		elif [[ ${words[i]} == --*=* ]]; then
			:
		elif [[ ${words[i]} == -?* ]]; then
			_dlplan_takes_arg "${words[i]}" && skip=1
		else
			((nops++))
		fi
	done

	# After "--": a command and its arguments.
	if ((dd)); then
		if declare -F _command_offset >/dev/null 2>&1; then
			_command_offset $((dd + 1))
		elif ((cword == dd + 1)); then
			COMPREPLY=($(compgen -c -- "$cur"))
		else
			_dlplan_files file "$cur"
		fi
		return
	fi

	# The argument of an option: "--opt VALUE", "--opt=VALUE", "-oVALUE".
	if ((skip)); then
		_dlplan_files "$("$dl" --complete values "$cmd" "$prev" \
		    2>/dev/null)" "$cur"
		return
	fi
	if [[ $cur == --*=* ]]; then
		local opt=${cur%%=*} val=${cur#*=}
		_dlplan_files "$("$dl" --complete values "$cmd" "$opt" \
		    2>/dev/null)" "$val"
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "${opts[*]}" -- "$cur"))
		return
	fi

	# An operand: its kind from the synopsis, else the options.
	local -a kinds
	kinds=($("$dl" --complete operands "$cmd" 2>/dev/null))
	if ((nops < ${#kinds[@]})); then
		_dlplan_files "${kinds[nops]}" "$cur"
	else
		COMPREPLY=($(compgen -W "${opts[*]}" -- "$cur"))
	fi
}
complete -F _dlplan dlplan
