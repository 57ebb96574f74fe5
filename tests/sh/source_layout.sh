#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The "Source layout" section of docs/development.md and the tree agree: every top-level folder and
# every room of host/ in the repository is listed there, and every folder listed there exists.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# The folders as the section lists them: "name/" at the start of a line (top level) or after two
# spaces (a room of host/).
doc=docs/development.md
sed -n '/<!-- section:layout -->/,/<!-- \/section:layout -->/p' "$doc" >"$tmp/section"
sed -n 's|^\([a-z][a-z-]*\)/ .*|\1|p' "$tmp/section" | sort >"$tmp/listed-top"
sed -n 's|^  \([a-z][a-z-]*\)/ .*|host/\1|p' "$tmp/section" | sort >"$tmp/listed-host"

if [ -s "$tmp/listed-top" ] && [ -s "$tmp/listed-host" ]; then
	ok "$doc has a layout section listing folders and host/ rooms"
else
	fail "$doc has no <!-- section:layout --> listing folders and host/ rooms"
fi

# The tree: folders holding tracked files (a fresh clone has exactly these).
if git ls-files >"$tmp/files" 2>/dev/null && [ -s "$tmp/files" ]; then
	sed -n 's|^\([^/.][^/]*\)/.*|\1|p' "$tmp/files" | sort -u >"$tmp/tree-top"
	sed -n 's|^host/\([^/]*\)/.*|host/\1|p' "$tmp/files" | sort -u >"$tmp/tree-host"
else
	for d in */; do echo "${d%/}"; done | grep -v '^build' | sort >"$tmp/tree-top"
	for d in host/*/; do echo "${d%/}"; done | sort >"$tmp/tree-host"
fi

for kind in top host; do
	missing=$(comm -23 "$tmp/tree-$kind" "$tmp/listed-$kind" | tr '\n' ' ')
	extra=$(comm -13 "$tmp/tree-$kind" "$tmp/listed-$kind" | tr '\n' ' ')
	if [ -z "$missing" ]; then ok "every $kind folder is in $doc's layout"; else
		fail "$doc's layout does not list: $missing"
	fi
	if [ -z "$extra" ]; then ok "every $kind folder $doc lists exists"; else
		fail "$doc's layout lists folders that do not exist: $extra"
	fi
done
# No source file left flat in host/: new host code goes into a room.
flat=$(grep -E '^host/[^/]+\.[ch]$' "$tmp/files" 2>/dev/null | tr '\n' ' ')
if [ -z "$flat" ]; then ok "host/ holds rooms only, no flat sources"; else
	fail "sources directly in host/ (put them in a room): $flat"
fi
suite_summary
