#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Citations point inside the repository (issue 10 item 9): tests/check-citations passes on the
# repository, and fails, naming file and line, on each kind of bad citation planted in a copy of
# the repository or in a small fixture tree: the team's private fact sheets, a docs/ file that
# does not exist, a heading that does not exist, a relative Markdown link to nothing.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
repo=$(pwd)
checker=$repo/tests/check-citations
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# Folder names kept in variables, so that the citations planted below are not citations made
# by this file itself.
sheets=notes
d=docs

# passes NAME DIR: the checker accepts DIR and prints nothing.
passes() {
	if "$checker" "$2" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ]; then ok "$1"; else
		fail "$1: $(head -c 600 "$tmp/out")"
	fi
}
# rejects NAME DIR WHERE: the checker fails on DIR and names WHERE ("file:line:").
rejects() {
	if "$checker" "$2" >"$tmp/out" 2>&1; then
		fail "$1: accepted"
	elif grep -qF -- "$3" "$tmp/out"; then
		ok "$1"
	else
		fail "$1: no \"$3\" in: $(head -c 600 "$tmp/out")"
	fi
}

passes "the repository cites only what it holds" "$repo"

# A copy of the repository (tracked and untracked-but-not-ignored files) with one bad line.
copy=$tmp/copy
mkdir -p "$copy"
git ls-files -co --exclude-standard | while IFS= read -r f; do
	[ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "$f"
done >"$tmp/files"
tar -cf - -T "$tmp/files" | tar -xf - -C "$copy"
passes "an unchanged copy of the repository passes" "$copy"
lines=$(wc -l <"$copy/README.md")
printf 'Details: %s/lima.md\n' "$sheets" >>"$copy/README.md"
rejects "a planted fact-sheet citation in the README fails" "$copy" "README.md:$((lines + 1)):"
sed -i '$d' "$copy/README.md"
printf '/* see %s/lima.md#no-such-heading */\n' "$d" >>"$copy/lib/log.h"
rejects "a planted citation of a missing heading in lib/ fails" "$copy" "lib/log.h:"

# fixture NAME LINE [FILE]: a small tree whose good.md in docs has known headings and whose
# src/x.c exists, plus LINE appended to FILE (default src/x.c).
fixture() {
	dir=$tmp/fixture-$1
	mkdir -p "$dir/docs" "$dir/src" "$dir/results"
	: >"$dir/src/x.c"
	cat >"$dir/docs/good.md" <<'EOF'
# Title
## The `proc_pid_rusage` call
## Repeated
## Repeated
```
## Not a heading
```
<a id="custom"></a>
EOF
	printf '%s\n' "$2" >>"$dir/${3:-src/x.c}"
	echo "$dir"
}

passes "good citations pass" "$(fixture good "$d/good.md, $d/good.md#title,
$d/good.md#the-proc_pid_rusage-call, $d/good.md#repeated, $d/good.md#repeated-1,
$d/good.md#custom; lima-vm/lima/website/content/en/$d/dev/internals.md and hh-$sheets/x
are someone else's")"
passes "good relative links pass" "$(fixture rel '[a](../docs/good.md#repeated) [b](https://x.test/y.md#z)' results/r.md)"
passes "good links inside docs pass" \
	"$(fixture indocs '[a](good.md#title) [b](#custom) [c](../src/x.c) [d](../src/)' "$d/good.md")"

rejects "a fact-sheet citation fails" "$(fixture sheet "/* $sheets/lima.md §3 */")" "src/x.c:1:"
rejects "a fact-sheet path outside the repository fails" \
	"$(fixture shared "see /work/shared/$sheets/lab.md")" "src/x.c:1:"
rejects "a missing docs file fails" "$(fixture missing "# $d/missing.md#title")" \
	"$d/missing.md does not exist"
rejects "a missing heading fails" "$(fixture anchor "$d/good.md#nope")" \
	"$d/good.md has no heading for #nope"
rejects "a heading inside a code block is not an anchor" \
	"$(fixture fenced "$d/good.md#not-a-heading")" "no heading for #not-a-heading"
rejects "a third repeated heading does not exist" "$(fixture third "$d/good.md#repeated-2")" \
	"#repeated-2"
rejects "a relative link to a missing heading fails" \
	"$(fixture relbad '[a](../docs/good.md#nope)' results/r.md)" "results/r.md:1:"
rejects "a relative link to a missing file fails" \
	"$(fixture relmissing '[a](nothere.md)' "$d/more.md")" \
	"$d/more.md:1:"
rejects "a link out of the tree fails" "$(fixture out '[a](../../x.md)' "$d/more.md")" \
	"leaves the repository"

suite_summary
