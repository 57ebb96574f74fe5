#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make lint` checks C formatting (issue 10 item 11): it runs tests/clang-format-suite over every
# C source and header tests/list-c-sources names, and that suite fails on a misformatted file and
# passes on a formatted one, whatever directory the file is in.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! command -v clang-format >/dev/null 2>&1; then
	skip "clang-format is not installed (make deps installs it)"
	suite_summary
	exit $?
fi

cp lib/units.h "$tmp/formatted.h"
if tests/clang-format-suite "$tmp/formatted.h" >"$tmp/out" 2>&1; then
	ok "a formatted file passes"
else
	fail "a formatted file fails: $(head -c 300 "$tmp/out")"
fi

# The same file with its layout broken the ways a hand edit does: spaces, a brace, a long line.
sed -e 's/^int vmc_parse_size(const char \*s, uint64_t \*bytes);/int  vmc_parse_size( const char *s,uint64_t *bytes ) ;/' \
	-e 's/^\/\* "1.5 GiB"/  \/* "1.5 GiB"/' lib/units.h >"$tmp/misformatted.h"
if cmp -s lib/units.h "$tmp/misformatted.h"; then
	fail "the misformatted copy differs from the original (test set-up)"
elif tests/clang-format-suite "$tmp/formatted.h" "$tmp/misformatted.h" >"$tmp/out" 2>&1; then
	fail "a misformatted file passes"
else
	ok "a misformatted file fails"
	if grep -q "FAIL clang-format $tmp/misformatted.h" "$tmp/out" &&
		! grep -q "FAIL clang-format $tmp/formatted.h" "$tmp/out" &&
		grep -q "1 passed, 1 failed" "$tmp/out"; then
		ok "the failure names the file and counts it"
	else
		fail "the failure does not name the misformatted file: $(head -c 400 "$tmp/out")"
	fi
fi

# make lint runs the suite over the whole list, and the list is every C file git knows.
if make -n lint 2>/dev/null | grep -q 'tests/clang-format-suite .*host/commands/cli.c'; then
	ok "make lint runs clang-format-suite over the C sources"
else
	fail "make lint does not run tests/clang-format-suite over host/commands/cli.c"
fi
tests/list-c-sources | sort >"$tmp/listed"
git ls-files -- '*.c' '*.h' | sort >"$tmp/tracked"
missing=$(comm -13 "$tmp/listed" "$tmp/tracked" | head -n 5 | tr '\n' ' ')
if [ -s "$tmp/tracked" ] && [ -z "$missing" ]; then
	ok "tests/list-c-sources names every tracked C file ($(wc -l <"$tmp/tracked"))"
else
	fail "tests/list-c-sources misses: $missing"
fi
suite_summary
