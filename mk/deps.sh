#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What vmcost needs to build, test and run its lab, and how to get it.
#   mk/deps.sh check [build|all]   exit 1 and name each missing piece (Debian and Homebrew names)
#   mk/deps.sh install             apt-get install everything (root or sudo); brew line on macOS
#   mk/deps.sh ensure              check all; install when possible, else print the one command
set -eu

# pkg-config module : Debian package : Homebrew formula
LIBS="yaml-0.1:libyaml-dev:libyaml libcurl:libcurl4-openssl-dev:curl jansson:libjansson-dev:jansson \
libuv:libuv1-dev:libuv"
LIBS_LINUX="libmicrohttpd:libmicrohttpd-dev:libmicrohttpd"
# command : Debian package [: Homebrew formula] (build and test tools; the lab guest's kernel and
# busybox are downloaded, never installed on the host). scdoc turns docs/man/*.scd into manuals.
TOOLS_BUILD="cc:gcc make:make pkg-config:pkg-config ar:binutils scdoc:scdoc:scdoc"
# dockerd stands for docker.io, which brings the Debian docker CLI the autostop suites use as a
# client (/usr/bin/docker); no dockerd is ever started on the host.
TOOLS_TEST="clang:clang clang-format:clang-format:clang-format shellcheck:shellcheck curl:curl jq:jq socat:socat cpio:cpio \
depmod:kmod mke2fs:e2fsprogs qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils \
debootstrap:debootstrap xz:xz-utils gzip:gzip apt-get:apt xmllint:libxml2-utils busybox:busybox \
gcc:gcc nm:binutils jsonschema:python3-jsonschema groff:groff-base mandoc:mandoc bash:bash zsh:zsh \
dockerd:docker.io docker-compose:docker-compose"
# The musl agent and its libraries, built from Debian's source packages (lab/build-static-deps,
# mk/musl.mk).
TOOLS_MUSL="musl-gcc:musl-tools readelf:binutils dpkg-source:dpkg-dev autoreconf:autoconf \
automake:automake libtoolize:libtool"
# The aarch64 agent and its unit suites (mk/arm64.mk): Debian's cross compiler, qemu-user, and
# Debian's arm64 libraries (multiarch: dpkg --add-architecture arm64, done by install). Each
# library is found by its arm64 pkg-config file; libc6:arm64 brings the loader qemu-aarch64 runs;
# musl-dev:arm64 the static aarch64 agent's libc.
TOOLS_ARM64="aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu qemu-aarch64:qemu-user \
qemu-system-aarch64:qemu-system-arm"
LIBS_ARM64="yaml-0.1:libyaml-dev:arm64 jansson:libjansson-dev:arm64 \
libmicrohttpd:libmicrohttpd-dev:arm64 libcurl:libcurl4-openssl-dev:arm64"
ARM64_PC_DIR=/usr/lib/aarch64-linux-gnu/pkgconfig

os=$(uname -s)
missing_deb=""
missing_brew=""
missing_text=""

note_missing() { # what debian brew
	missing_text="$missing_text  $1 (Debian: $2${3:+, Homebrew: $3})
"
	missing_deb="$missing_deb $2"
	[ -n "${3:-}" ] && missing_brew="$missing_brew $3"
	return 0
}

check_libs() {
	list=$LIBS
	[ "$os" = Linux ] && list="$list $LIBS_LINUX"
	if ! command -v pkg-config >/dev/null 2>&1; then
		note_missing pkg-config pkg-config pkg-config
		for entry in $list; do
			note_missing "${entry%%:*}" "$(echo "$entry" | cut -d: -f2)" "${entry##*:}"
		done
		return 0
	fi
	for entry in $list; do
		module=${entry%%:*}
		pkg-config --exists "$module" 2>/dev/null ||
			note_missing "$module" "$(echo "$entry" | cut -d: -f2)" "${entry##*:}"
	done
}

# llhttp, the HTTP/1.1 parser autostop's relay reads with: Homebrew's formula is a library with
# a pkg-config module; Debian 12 ships its C sources (node-llhttp), which the Makefile compiles.
check_llhttp() {
	pkg-config --exists libllhttp 2>/dev/null && return 0
	[ -f /usr/share/llhttp/llhttp.c ] && [ -f /usr/share/include/llhttp/llhttp.h ] && return 0
	note_missing llhttp node-llhttp llhttp
}

check_tools() { # list
	for entry in $1; do
		packages=${entry#*:}
		brew=""
		case $packages in *:*) brew=${packages#*:} ;; esac
		command -v "${entry%%:*}" >/dev/null 2>&1 ||
			note_missing "${entry%%:*}" "${packages%%:*}" "$brew"
	done
}

# Debian ships /usr/sbin tools (depmod, mke2fs, debootstrap) outside a normal user's PATH.
PATH=$PATH:/usr/sbin:/sbin
export PATH

check() { # scope
	check_tools "$TOOLS_BUILD"
	if [ "$os" = Linux ] && [ ! -f /usr/include/stdio.h ]; then
		note_missing "C library headers" libc6-dev ""
	fi
	check_libs
	check_llhttp
	if [ "$1" = all ] && [ "$os" = Linux ]; then
		check_tools "$TOOLS_TEST $TOOLS_MUSL $TOOLS_ARM64"
		check_arm64_libs
		check_fuzz_runtime
	fi
}

check_arm64_libs() {
	for entry in $LIBS_ARM64; do
		[ -f "$ARM64_PC_DIR/${entry%%:*}.pc" ] || note_missing "${entry%%:*} (arm64)" "${entry#*:}" ""
	done
	[ -e /lib/ld-linux-aarch64.so.1 ] || note_missing "the arm64 loader" "libc6:arm64" ""
	[ -f /usr/lib/aarch64-linux-musl/musl-gcc.specs ] ||
		note_missing "musl for aarch64 (mk/aarch64-musl-gcc)" "musl-dev:arm64" ""
}

# make fuzz links libFuzzer with ASan: clang alone (without Recommends) lacks their runtimes.
check_fuzz_runtime() {
	# Without clang yet, Debian's unversioned package goes with the clang package installed
	# beside it (one install, not two rounds of make deps).
	if ! command -v clang >/dev/null 2>&1; then
		note_missing "clang's fuzzer/ASan runtime" "libclang-rt-dev" ""
		return 0
	fi
	rt=$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a" 2>/dev/null)
	[ -f "$rt" ] && return 0
	version=$(clang -dumpversion 2>/dev/null | cut -d. -f1)
	note_missing "clang's fuzzer/ASan runtime" "libclang-rt-${version:-14}-dev" ""
}

# Word splitting of the package list is intended throughout.
# shellcheck disable=SC2086
dedup() { printf '%s\n' $1 | sort -u | tr '\n' ' ' | sed 's/ $//'; }

install_cmd() {
	if [ "$os" = Darwin ]; then
		echo "brew install pkg-config $(dedup "$missing_brew")"
	else
		case $missing_deb in
		*:arm64*) printf '%s' 'dpkg --add-architecture arm64 && apt-get update && ' ;;
		esac
		echo "apt-get install -y --no-install-recommends $(dedup "$missing_deb")"
	fi
}

run_install() {
	if [ "$os" = Darwin ]; then
		echo "macOS: run  $(install_cmd)" >&2
		return 1
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "no apt-get: install these by hand:" >&2
		printf '%s' "$missing_text" >&2
		return 1
	fi
	if [ "$(id -u)" = 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo="sudo"
	else
		echo "missing packages; run as root:" >&2
		echo "  sudo apt-get update && sudo $(install_cmd)" >&2
		return 1
	fi
	echo "installing: $(dedup "$missing_deb")" >&2
	case $missing_deb in
	*:arm64*) $sudo dpkg --add-architecture arm64 ;;
	esac
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2046 # word splitting of the package list is intended
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$(dedup "$missing_deb") >/dev/null
}

case "${1:-}" in
check)
	check "${2:-build}"
	if [ -n "$missing_text" ]; then
		echo "missing build dependencies:" >&2
		printf '%s' "$missing_text" >&2
		echo "install them with: make deps   (or: $(install_cmd))" >&2
		exit 1
	fi
	;;
install)
	check all
	if [ -z "$missing_text" ]; then
		echo "all dependencies present" >&2
		exit 0
	fi
	run_install
	;;
ensure)
	check all
	[ -z "$missing_text" ] && exit 0
	printf 'missing:\n%s' "$missing_text" >&2
	run_install
	;;
*)
	echo "usage: mk/deps.sh check [build|all] | install | ensure" >&2
	exit 2
	;;
esac
