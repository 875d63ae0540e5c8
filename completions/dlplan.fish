# fish completion for dlplan(1).
#
# Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
#
# Everything is asked of the dlplan being completed ("dlplan --complete",
# see src/main.c), so the completion cannot drift from the option tables
# and nothing is cached.

# __dlplan_values KIND PREFIX WORD: completions of WORD for a value of kind
# KIND (dir, file, csv, json, or fixed words), each printed after PREFIX.
function __dlplan_values
    set -l kind $argv[1]
    set -l prefix $argv[2]
    set -l word $argv[3]
    switch "$kind"
        case dir
            __fish_complete_directories $word | string replace -r '^' -- $prefix
        case file
            __fish_complete_path $word | string replace -r '^' -- $prefix
        case csv json
            # Matching files, and directories to descend into.
            __fish_complete_suffix $word .$kind |
                string match -r -- "^[^\t]*(\.$kind|/)(\t.*)?\$" |
                string replace -r '^' -- $prefix
        case ''
            return
        case '*'
            for w in (string split '|' -- $kind)
                printf '%s%s\n' $prefix $w
            end
    end
end

function __dlplan_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l dl $tokens[1]
    command -q -- $dl; or test -x "$dl"; or set dl dlplan

    # The subcommand: the first word that is not an option.
    set -l cmd
    set -l ci 0
    for i in (seq 2 (count $tokens))
        if not string match -q -- '-*' $tokens[$i]
            set cmd $tokens[$i]
            set ci $i
            break
        end
    end
    if test -z "$cmd"
        if string match -q -- '-*' $cur
            printf '%s\t%s\n' --version 'print the version' --help 'list the commands'
            return
        end
        # "CMD<TAB>summary", one call for all of them.
        $dl --complete commands-long 2>/dev/null
        return
    end

    # Options: "--long" then its "-s" (options), "--long<TAB>ARG<TAB>help"
    # (options-long).
    set -l longs
    set -l args
    set -l helps
    set -l shorts
    for line in ($dl --complete options-long $cmd 2>/dev/null)
        set -l f (string split \t -- $line)
        set -a longs $f[1]
        set -a args "$f[2]"
        set -a helps "$f[3]"
        set -a shorts ''
    end
    set -l last 0
    for o in ($dl --complete options $cmd 2>/dev/null)
        if string match -q -- '--*' $o
            set last (contains -i -- $o $longs; or echo 0)
        else if test "$last" -gt 0
            set shorts[$last] $o
        end
    end

    # Walk the words after cmd: count operands, skip option arguments,
    # stop at "--".
    set -l nops 0
    set -l want ''
    set -l dd 0
    if test $ci -lt (count $tokens)
        for i in (seq (math $ci + 1) (count $tokens))
            set -l t $tokens[$i]
            if test -n "$want"
                set want ''
            else if test "$t" = --
                set dd $i
                break
            else if string match -q -- '--*=*' $t
                continue
            else if string match -q -- '-?*' $t
                set -l k (contains -i -- $t $longs; or contains -i -- $t $shorts)
                if test -n "$k"; and test -n "$args[$k]"
                    set want $t
                end
            else
                set nops (math $nops + 1)
            end
        end
    end

    # After "--": the training command and its arguments.
    if test $dd -gt 0
        __fish_complete_subcommand --fcs-skip=$dd
        return
    end
    # The argument of an option: "--opt VALUE" or "--opt=VALUE".
    if test -n "$want"
        __dlplan_values "$($dl --complete values $cmd $want 2>/dev/null | string join '|')" '' $cur
        return
    end
    if string match -q -- '--*=*' $cur
        set -l opt (string split -m 1 = -- $cur)
        __dlplan_values "$($dl --complete values $cmd $opt[1] 2>/dev/null | string join '|')" "$opt[1]=" "$opt[2]"
        return
    end
    # An operand, its kind from the synopsis; else the options.
    set -l kinds ($dl --complete operands $cmd 2>/dev/null)
    if not string match -q -- '-*' $cur; and test $nops -lt (count $kinds)
        __dlplan_values $kinds[(math $nops + 1)] '' $cur
        return
    end
    for k in (seq (count $longs))
        printf '%s\t%s\n' $longs[$k] $helps[$k]
        test -n "$shorts[$k]"; and printf '%s\t%s\n' $shorts[$k] $helps[$k]
    end
end

complete -c dlplan -f -a '(__dlplan_complete)'
