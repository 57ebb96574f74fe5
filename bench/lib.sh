# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Shared by the bench/ scripts: which vmcost to run, where results go, and a header that keeps
# machine and versions next to every recorded output.
set -eu
BENCH_REPO=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${VMCOST:-}" ]; then
	:
elif [ -x "$BENCH_REPO/host/vmcost" ]; then
	VMCOST=$BENCH_REPO/host/vmcost
else
	VMCOST=vmcost
fi
RESULTS=${VMCOST_RESULTS:-$BENCH_REPO/results}

bench_usage() { # text
	echo "usage: $1" >&2
	exit 2
}

# bench_file KIND NAME EXT: results/KIND-NAME-YYYYmmdd-HHMMSS.EXT (directory created).
bench_file() {
	mkdir -p "$RESULTS"
	echo "$RESULTS/$1-$2-$(date +%Y%m%d-%H%M%S).$3"
}

# The first lines of a kept output: what ran, when, on what.
bench_header() { # command line...
	echo "# $*"
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ); $("$VMCOST" --version 2>/dev/null || echo vmcost ?);" \
		"$(limactl --version 2>/dev/null || echo 'limactl not found')"
	echo "# host: $(uname -srm)$(os_name)"
}

os_name() {
	if [ -r /etc/os-release ]; then
		# shellcheck disable=SC1091
		(. /etc/os-release && printf ', %s' "${PRETTY_NAME:-}")
	elif command -v sw_vers >/dev/null 2>&1; then
		printf ', macOS %s' "$(sw_vers -productVersion)"
	fi
}

# bench_keep KIND NAME CMD...: runs CMD, shows its output and keeps it (with the header) in
# results/; the exit status is CMD's.
bench_keep() {
	kind=$1 name=$2
	shift 2
	file=$(bench_file "$kind" "$name" txt)
	status_file=$(mktemp)
	{
		bench_header "$@"
		rc=0
		"$@" 2>&1 || rc=$?
		echo "$rc" >"$status_file"
	} | tee "$file"
	rc=$(cat "$status_file")
	rm -f "$status_file"
	echo "kept: $file" >&2
	return "$rc"
}
