# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh disable=SC2034
# Where the real Lima lives on this machine: shared by lab/lima/build and tests/lima/lib.sh.
# Lima is a test-time tool only: built from its Go module into a cache outside the repository,
# never committed.

LIMA_VERSION=2.2.0
LIMA_MODULE=github.com/lima-vm/lima/v2
LIMA_CACHE=${VMCOST_LIMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmcost-lima}
# limactl must sit in PREFIX/bin with its guest agent in PREFIX/share/lima (Lima looks for the
# agent beside dirname(dirname(limactl))).
LIMA_PREFIX=$LIMA_CACHE/lima-$LIMA_VERSION
LIMACTL=$LIMA_PREFIX/bin/limactl
LIMA_GUESTAGENT=$LIMA_PREFIX/share/lima/lima-guestagent.Linux-x86_64
LIMA_QEMU_WRAPPER=$LIMA_CACHE/bin/qemu-tcg
LIMA_IMAGE_DIR=$LIMA_CACHE/image/debian-12
LIMA_MIRROR=${VMCOST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
LIMA_GO=${GO:-}
if [ -z "$LIMA_GO" ]; then
	if command -v go >/dev/null 2>&1; then LIMA_GO=$(command -v go); else LIMA_GO=/usr/local/go/bin/go; fi
fi
PATH=$PATH:/usr/sbin:/sbin
export PATH

lima_die() {
	echo "lima: $*" >&2
	exit 1
}
