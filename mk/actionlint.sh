#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# mk/actionlint.sh: prints the path of actionlint (the GitHub Actions workflow linter), built
# from its Go module at a pinned version into a cache outside the repository, as the real Lima
# is (lab/lima/build). Needs Go (PATH or /usr/local/go/bin/go); exits 3 without it.
set -eu
version=1.7.12
module=github.com/rhysd/actionlint
cache=${VMCOST_TOOLS_CACHE:-${HOME:-/tmp}/.cache/vmcost-tools}
bin=$cache/actionlint-$version/actionlint
if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
go=${GO:-$(command -v go 2>/dev/null || echo /usr/local/go/bin/go)}
if [ ! -x "$go" ]; then
	echo "mk/actionlint.sh: Go is missing (looked on PATH and at /usr/local/go/bin/go); set GO=/path/to/go" >&2
	exit 3
fi
GOPATH=$cache/go
GOMODCACHE=$cache/go/mod
GOCACHE=$cache/go/build-cache
GOTOOLCHAIN=local
GOFLAGS=-buildvcs=false
export GOPATH GOMODCACHE GOCACHE GOTOOLCHAIN GOFLAGS
# Built inside the downloaded module (go install MODULE@VERSION asks the proxy for a version
# list first, which not every proxy answers): the same go.mod and go.sum, the same binary.
dir=$("$go" mod download -json "$module@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -f "$dir/go.mod" ] || {
	echo "mk/actionlint.sh: go mod download $module@v$version failed" >&2
	exit 1
}
mkdir -p "$(dirname "$bin")"
(cd "$dir" && "$go" build -o "$bin.tmp" ./cmd/actionlint) || {
	echo "mk/actionlint.sh: go build actionlint failed" >&2
	exit 1
}
mv "$bin.tmp" "$bin"
echo "$bin"
