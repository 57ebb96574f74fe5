#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Lima template linter as a command (build/tools/lima-template-lint): the repository's
# templates and its fragment pass; a broken copy fails with the problem on stdout and exit 1; a
# bad command line is exit 2. Its checks one by one are tests/unit/lib_template_lint.c's.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
lint=$(pwd)/${TEMPLATE_LINT:-build/tools/lima-template-lint}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ ! -x "$lint" ]; then
	fail "$lint is not built (make build/tools/lima-template-lint)"
	suite_summary
	exit 1
fi
expect "the templates pass" 0 "$lint" templates/minimal-docker.yaml templates/minimal-docker-iso.yaml
expect "the fragment passes as a fragment" 0 "$lint" --fragment templates/vmcost-agent.yaml
# A copy next to the original, so its file: and base: paths resolve the same way.
copy=templates/.lint-copy-$$.yaml
trap 'rm -rf "$tmp" "$copy"' EXIT INT TERM
sed 's/^minimumLimaVersion: .*/minimumLimaVersion: "2.2"/' templates/minimal-docker.yaml >"$copy"
printf 'cpu: 4\n' >>"$copy"
expect "a broken copy fails" 1 "$lint" "$copy"
has "it names the bad version" "$tmp/out" "$copy: minimumLimaVersion must be a semver value, not \"2.2\""
has "it names the unknown key" "$tmp/out" "unknown key \"cpu\""
rm -f "$copy"
expect "no file: usage" 2 "$lint"
expect "an unknown option: usage" 2 "$lint" --strict templates/minimal-docker.yaml
expect "a file that does not exist fails" 1 "$lint" "$tmp/none.yaml"
has "it says it cannot read it" "$tmp/out" "cannot read $tmp/none.yaml"
suite_summary
