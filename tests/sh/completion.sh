#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Shell completion for vmcost (issue 13): bash's completion function, called as bash calls it
# (COMP_WORDS, COMP_CWORD) on a fake LIMA_HOME, completes commands (vmcost f<TAB> -> footprint),
# options, option values and instance names (directories holding a lima.yaml); zsh's, typed
# into an interactive zsh with compinit through zsh/zpty, does the same; make install puts both,
# and the manuals, where bash-completion, zsh and man look for them.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -x host/vmcost ]; then
	fail "host/vmcost is not built (run make)"
	suite_summary
	exit 1
fi
# A LIMA_HOME as Lima lays it out: two instances, Lima's _config, a directory without lima.yaml.
lh=$tmp/lima
mkdir -p "$lh/dev" "$lh/docker-2" "$lh/_config" "$lh/half-made" "$tmp/home/.lima/athome" \
	"$tmp/dirs/results-a" "$tmp/dirs/results-b"
touch "$lh/dev/lima.yaml" "$lh/docker-2/lima.yaml" "$lh/_config/default.yaml" \
	"$tmp/home/.lima/athome/lima.yaml" "$tmp/dirs/results-file"
path=$repo/host:$PATH

# bash_complete WORD...: what _vmcost offers for the last word, sorted, on one line.
bash_complete() {
	PATH=$path LIMA_HOME=$lh bash --norc --noprofile -c '
		. host/completion/vmcost.bash
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_vmcost
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' vmcost "$@"
}

# expect_bash WANT WORD...: the candidates are exactly WANT.
expect_bash() {
	want=$1
	shift
	got=$(bash_complete "$@")
	if [ "$got" = "$want" ]; then ok "bash: $*<TAB> -> ${want:-nothing}"; else
		fail "bash: $*<TAB>: want \"$want\", got \"$got\""
	fi
}

if command -v bash >/dev/null 2>&1; then
	expect_bash footprint vmcost f
	expect_bash "$(host/vmcost --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
		on { print $1 }' | sort | tr '\n' ' ' | sed 's/ $//')" vmcost ""
	expect_bash "--help --version -v" vmcost -
	expect_bash "dev docker-2" vmcost footprint ""
	expect_bash docker-2 vmcost footprint "do"
	expect_bash "dev docker-2" vmcost -v memtest ""
	expect_bash "" vmcost list ""
	expect_bash "" vmcost idle dev ""
	expect_bash "--help --json --pid --watch" vmcost footprint dev --
	expect_bash "--workload" vmcost memtest dev --wor
	expect_bash "fill pgbench" vmcost memtest dev --workload ""
	expect_bash "" vmcost memtest dev --pid ""
	expect_bash "dev docker-2" vmcost memtest --yes --pid 42 ""
	expect_bash "$tmp/dirs/results-a $tmp/dirs/results-b" vmcost memtest dev --results "$tmp/dirs/res"
	expect_bash none vmcost memtest dev --results n
	got=$(PATH=$path HOME=$tmp/home bash --norc --noprofile -c 'unset LIMA_HOME
		. host/completion/vmcost.bash
		COMP_WORDS=(vmcost trim ""); COMP_CWORD=2; _vmcost; echo "${COMPREPLY[*]}"')
	if [ "$got" = athome ]; then ok "bash: without LIMA_HOME, instances come from ~/.lima"; else
		fail "bash: without LIMA_HOME: want athome, got \"$got\""
	fi
else
	skip "bash completion: no bash"
fi

# zsh: type LINE and TAB into an interactive zsh with compinit and the completion on fpath,
# then print the edited line.
cat >"$tmp/type.zsh" <<'EOF'
zmodload zsh/zpty || exit 2
zpty z zsh -f -i
zpty -w z "PS1='%% '; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D; setopt nobeep"
zpty -w -n z "$2"$'\t'$'\C-e'"ZEND"$'\C-a'"print -r LINE: "$'\n'
zpty -r -m z out '*LINE: vmcost*ZEND*'
print -r -- "$out" | tr -d '\r' | sed -n 's/^LINE: \(.*\)ZEND.*/\1/p'
zpty -d z
EOF
expect_zsh() { # WANT LINE
	got=$(PATH=$path LIMA_HOME=$lh timeout 30 zsh -f "$tmp/type.zsh" "$repo/host/completion" "$2" 2>&1)
	# zsh drops the space after a completed word once the next key is typed; compare words.
	if [ "$(echo "$got" | sed 's/ *$//')" = "$1" ]; then ok "zsh: $2<TAB> -> $1"; else
		fail "zsh: $2<TAB>: want \"$1\", got \"$got\""
	fi
}
if command -v zsh >/dev/null 2>&1 && zsh -fc 'zmodload zsh/zpty' 2>/dev/null; then
	if zsh -n host/completion/_vmcost; then ok "zsh -n host/completion/_vmcost"; else
		fail "zsh -n host/completion/_vmcost"
	fi
	expect_zsh "vmcost footprint" "vmcost f"
	expect_zsh "vmcost footprint docker-2" "vmcost footprint do"
	expect_zsh "vmcost trim dev" "vmcost trim de"
	expect_zsh "vmcost memtest dev --workload fill" "vmcost memtest dev --workload f"
	expect_zsh "vmcost footprint dev --watch" "vmcost footprint dev --wa"
	expect_zsh "vmcost -v disk" "vmcost -v di"
else
	skip "zsh completion: no zsh with zsh/zpty (Debian: zsh)"
fi

# make install: completions and manuals where bash-completion, zsh and man look.
dest=$tmp/dest
if make -s install DESTDIR="$dest" PREFIX=/usr >"$tmp/install.log" 2>&1; then
	for f in share/bash-completion/completions/vmcost share/zsh/site-functions/_vmcost \
		share/man/man1/vmcost.1 share/man/man1/vmcost-footprint.1; do
		if [ -f "$dest/usr/$f" ]; then ok "make install: /usr/$f"; else
			fail "make install did not install /usr/$f"
		fi
	done
	if [ -x guest-agent/vmcost-agent ]; then
		for f in share/man/man8/vmcost-agent.8 share/man/man5/vmcost-agent.yaml.5; do
			if [ -f "$dest/usr/$f" ]; then ok "make install: /usr/$f"; else
				fail "make install did not install /usr/$f"
			fi
		done
	fi
	got=$(PATH=$path LIMA_HOME=$lh bash --norc --noprofile -c '
		. "$1"; COMP_WORDS=(vmcost di); COMP_CWORD=1; _vmcost; echo "${COMPREPLY[*]}"' \
		x "$dest/usr/share/bash-completion/completions/vmcost")
	if [ "$got" = disk ]; then ok "the installed bash completion completes (di -> disk)"; else
		fail "the installed bash completion: di -> \"$got\""
	fi
	make -s uninstall DESTDIR="$dest" PREFIX=/usr >/dev/null 2>&1
	left=$(find "$dest" -type f -o -type l | sed "s|^$dest||" | tr '\n' ' ')
	if [ -z "$left" ]; then ok "make uninstall removes every installed file"; else
		fail "make uninstall left: $left"
	fi
else
	fail "make install DESTDIR=... failed: $(tail -n 5 "$tmp/install.log")"
fi

suite_summary
