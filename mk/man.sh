#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mk/man.sh SRC.scd OUT: one manual page, scdoc source to roff.
# The page's date is the last commit that changed its source (SOURCE_DATE_EPOCH, which scdoc
# reads), so a rebuild of the same sources gives the same page. scdoc opens every section and
# indented block with a paragraph macro that has nothing to start (.P right before or after
# .SH, before .RE); those are dropped here so that mandoc -T lint has nothing to warn about.
# The text and layout groff and mandoc render are the same with or without them.
set -eu
src=$1 out=$2
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct -- "$src" 2>/dev/null || true)
	[ -n "$SOURCE_DATE_EPOCH" ] || unset SOURCE_DATE_EPOCH
fi
export SOURCE_DATE_EPOCH
scdoc <"$src" >"$out.roff"
awk '
	/^\.P$/ { if (held || prev ~ /^\.S[HS]( |$)/) next; held = 1; next }
	{
		if (held && $0 !~ /^\.(S[HS]|RE|P)( |$)/) print ".P"
		held = 0
		print
		prev = $0
	}' "$out.roff" >"$out.tmp"
rm -f "$out.roff"
mv "$out.tmp" "$out"
