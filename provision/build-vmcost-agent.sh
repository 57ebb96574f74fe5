#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-vmcost-agent.sh SRC-DIR OUTPUT: compile vmcost-agent from the sources a vmcost Lima
# template embeds (SRC-DIR/guest-agent/*.c and SRC-DIR/lib/*.c: the lib/ modules the agent uses,
# which provision/vmcost-agent-sources.sh lists) against libyaml, jansson and libmicrohttpd found
# with pkg-config. Runs in the guest (Alpine, Debian, Fedora) and in the tests
# that build from exactly the template's files; the same flags as the repository's Makefile,
# without -Werror (a newer guest compiler must not fail the provisioning). One compiler per CPU at
# a time: under QEMU without KVM one file after the other took about 10 minutes on 2 vCPUs.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: build-vmcost-agent.sh SRC-DIR OUTPUT" >&2
	exit 2
fi
src=$1 out=$2
cc=${CC:-cc}
pkgs="yaml-0.1 jansson libmicrohttpd"
# shellcheck disable=SC2086 # a list of package names
if ! pkg_cflags=$(pkg-config --cflags $pkgs) || ! pkg_libs=$(pkg-config --libs $pkgs); then
	echo "build-vmcost-agent.sh: pkg-config cannot find $pkgs: install their -dev packages" >&2
	exit 1
fi
# The version names the exact sources: the template has no git history to describe.
version=src-$(cat "$src"/guest-agent/*.[ch] "$src"/lib/*.[ch] | sha256sum | cut -c1-12)
flags="-std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -O2 -g -Wall -Wextra"
jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
objs=$(mktemp -d)
trap 'rm -rf "$objs"' EXIT

pids="" running=0 failed=0
for c in "$src"/guest-agent/*.c "$src"/lib/*.c; do
	o=$objs/$(printf '%s' "${c#"$src"/}" | tr / _).o
	# shellcheck disable=SC2086 # flag lists
	"$cc" $flags -I"$src/lib" -I"$src/guest-agent" $pkg_cflags -DVMCOST_VERSION="\"$version\"" \
		-c "$c" -o "$o" &
	pids="$pids $!"
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		for p in $pids; do wait "$p" || failed=1; done
		pids="" running=0
	fi
done
for p in $pids; do wait "$p" || failed=1; done
[ "$failed" = 0 ] || exit 1
# shellcheck disable=SC2086
"$cc" $flags -DVMCOST_VERSION="\"$version\"" -o "$out" "$objs"/*.o $pkg_libs -lm -lpthread
