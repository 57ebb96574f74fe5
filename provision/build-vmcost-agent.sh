#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# build-vmcost-agent.sh SRC-DIR OUTPUT: compile vmcost-agent from the sources a vmcost Lima
# template embeds (SRC-DIR/guest-agent/*.c and SRC-DIR/lib/*.c) against libyaml, jansson and
# libmicrohttpd found with pkg-config. Runs in the guest (Alpine) and in the Debian test that
# builds from exactly the template's files; the same flags as the repository's Makefile, without
# -Werror (a newer guest compiler must not fail the provisioning).
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
# shellcheck disable=SC2086 # pkg-config output is a list of words
"$cc" -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -O2 -g -Wall -Wextra \
	-I"$src/lib" -I"$src/guest-agent" $pkg_cflags -DVMCOST_VERSION="\"$version\"" \
	-o "$out" "$src"/guest-agent/*.c "$src"/lib/*.c $pkg_libs -lm -lpthread
