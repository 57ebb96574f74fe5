# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# bash completion for vmcost (installed as share/bash-completion/completions/vmcost).
# Commands, options and which options take a value come from vmcost's own --help, so they cannot
# drift from the program; instance names are the directories of $LIMA_HOME (default ~/.lima)
# that hold a lima.yaml, as Lima lays them out. Plain bash 3.2 (macOS's /bin/bash) is enough.

# The command words of `vmcost --help`.
_vmcost_commands() {
	"$1" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}

# Every --option a command's help names.
_vmcost_options() {
	"$1" "$2" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# "--option VALUE" pairs of a command's usage lines: what each option takes.
_vmcost_option_values() {
	"$1" "$2" --help 2>/dev/null | awk '/^$/ { exit } 1' |
		grep -oE -- '\[--[a-z][a-z0-9-]* [^]]+\]' | tr -d '[]'
}

_vmcost_instances() {
	local home=${LIMA_HOME:-$HOME/.lima} yaml name
	for yaml in "$home"/*/lima.yaml; do
		[ -f "$yaml" ] || continue
		name=${yaml%/lima.yaml}
		printf '%s\n' "${name##*/}"
	done
}

# _vmcost_reply CURRENT < WORDS: adds the words (one a line) that start with CURRENT.
_vmcost_reply() {
	local w
	while IFS= read -r w; do
		case $w in "$1"*) COMPREPLY+=("$w") ;; esac
	done
}

_vmcost() {
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} i word cmd="" cmd_at=0
	local IFS=$' \t\n'
	COMPREPLY=()
	# The command is the first word that is not one of vmcost's own options.
	for ((i = 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		case $word in
		-*) ;;
		*)
			cmd=$word
			cmd_at=$i
			break
			;;
		esac
	done
	if [ -z "$cmd" ]; then
		case $cur in
		-*) _vmcost_reply "$cur" < <(printf '%s\n' --help --version -v) ;;
		*) _vmcost_reply "$cur" < <(_vmcost_commands "$prog") ;;
		esac
		return 0
	fi

	local pairs prev=${COMP_WORDS[COMP_CWORD - 1]} value=""
	pairs=$(_vmcost_option_values "$prog" "$cmd")
	# The value of an option that takes one: its choices (pgbench|fill, DIR|none) or directories.
	if [ "$COMP_CWORD" -gt $((cmd_at + 1)) ] && [ "${prev#--}" != "$prev" ]; then
		value=$(printf '%s\n' "$pairs" | awk -v o="$prev" '$1 == o { print $2; exit }')
		if [ -n "$value" ]; then
			# Lower-case alternatives are literal choices; DIR means a directory.
			_vmcost_reply "$cur" < <(printf '%s\n' "$value" | tr '|' '\n' | grep -v '^[A-Z]')
			case "|$value|" in
			*"|DIR|"*) _vmcost_reply "$cur" < <(compgen -d -- "$cur") ;;
			esac
			return 0
		fi
	fi
	case $cur in
	-*)
		_vmcost_reply "$cur" < <(_vmcost_options "$prog" "$cmd"; echo --help)
		return 0
		;;
	esac
	# Positional words so far (options and their values skipped): the first is the instance
	# when the usage line starts with NAME.
	local npos=0
	for ((i = cmd_at + 1; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		case $word in
		-*)
			if printf '%s\n' "$pairs" | awk -v o="$word" '$1 == o { f = 1 } END { exit !f }'; then
				i=$((i + 1))
			fi
			;;
		*) npos=$((npos + 1)) ;;
		esac
	done
	if [ "$npos" -eq 0 ] && "$prog" "$cmd" --help 2>/dev/null | head -n 1 |
		grep -q "^usage: vmcost $cmd NAME"; then
		_vmcost_reply "$cur" < <(_vmcost_instances)
	fi
	return 0
}

complete -F _vmcost vmcost
