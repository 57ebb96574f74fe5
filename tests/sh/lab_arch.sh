#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lab/vm start --arch, without a guest: lab/vm and lab/lib.sh run from a copy of lab/ whose build
# step only records its arguments and whose hostagent asks the real one for the QEMU command line
# (lab/libexec/hostagent --print-qemu) and exits, so the start stops at "the VM exited during
# boot" with the instance directory written. Checked: what aarch64 changes (the QEMU binary and
# machine, the guest's kernel and initramfs from the cache's aarch64/ folder, the PL011 console,
# lima.yaml's arch, lab.env, the limactl stand-in's list), what it keeps (the balloon with
# free-page reporting, qemu.pid, qmp.sock, the agent forward), VMCOST_LAB_ARCH as the default, the
# arch kept on a restart, and the refusals; and what a failed boot reports (boot-failure.log).
# Whether the guest boots is for tests/lab (no VM here).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
repo=$(pwd)
tmp=$(mktemp -d /tmp/vmcost-labarch.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
for tool in jq ss mke2fs; do
	command -v "$tool" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin
done
if ! command -v mke2fs >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
	skip "lab/vm start --arch: needs mke2fs and jq (make deps)"
	summary
fi

mkdir -p "$tmp/lab/libexec" "$tmp/lab/bin" "$tmp/cache" "$tmp/home"
cp lab/vm lab/lib.sh "$tmp/lab/"
cp lab/bin/limactl "$tmp/lab/bin/"
cat >"$tmp/lab/build" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/build.args"
EOF
cat >"$tmp/lab/libexec/hostagent" <<EOF
#!/bin/sh
"$repo/lab/libexec/hostagent" "\$1" --print-qemu >"\$1/qemu.command"
echo "qemu-system-stub: no guest here (tests/sh/lab_arch.sh)" >&2
EOF
chmod +x "$tmp/lab/build" "$tmp/lab/libexec/hostagent"
export VMCOST_LAB_CACHE="$tmp/cache" LIMA_HOME="$tmp/home"
unset VMCOST_LAB_ARCH

# start NAME ARGS...: lab/vm start as far as it goes without QEMU.
start() {
	rm -f "$tmp/build.args"
	"$tmp/lab/vm" start "$@" --timeout 5 --max-wait 5 >"$tmp/out" 2>"$tmp/err"
}

t0=$(date +%s)
start a1 --arch aarch64 --fpr
rc=$?
took=$(($(date +%s) - t0))
dir=$LIMA_HOME/a1
has "the start stopped where the VM would have booted" "$tmp/err" "the VM exited during boot"
# A failed boot fails at once and says why: the reason, QEMU's own stderr (the hostagent's
# log), the load and the build lock, on stderr and in boot-failure.log.
check "a failed boot fails the start (exit $rc) at once ($took s)" test "$rc" != 0 -a "$took" -le 5
has "boot-failure.log: the reason" "$dir/boot-failure.log" "lab: a1: the VM exited during boot"
has "boot-failure.log: QEMU's own stderr" "$dir/boot-failure.log" "qemu-system-stub: no guest here"
has "boot-failure.log: the machine's load" "$dir/boot-failure.log" "lab: load average"
has "boot-failure.log: who holds the build lock" "$dir/boot-failure.log" "the lab build lock"
has "... and the same on stderr" "$tmp/err" "qemu-system-stub: no guest here"
has "lab/build builds the aarch64 guest" "$tmp/build.args" "--arch aarch64"
has "lab.env keeps the arch" "$dir/lab.env" "ARCH=aarch64"
has "lima.yaml: arch" "$dir/lima.yaml" "arch: aarch64"
has "lima.yaml: the aarch64 kernel" "$dir/lima.yaml" "location: \"$VMCOST_LAB_CACHE/aarch64/kernel/vmlinuz\""
has "lima.yaml: the aarch64 initramfs" "$dir/lima.yaml" "location: \"$VMCOST_LAB_CACHE/aarch64/initrd.gz\""
has "the kernel's console is the virt machine's PL011" "$dir/kernel.cmdline" "console=ttyAMA0"
cmd=$dir/qemu.command
has "QEMU: qemu-system-aarch64 with the virt machine and -cpu max" "$cmd" \
	"qemu-system-aarch64 -machine virt -cpu max,pauth-impdef=on"
has "QEMU: TCG with a bounded translation cache" "$cmd" "-accel tcg,tb-size=128"
has "QEMU: the aarch64 kernel" "$cmd" "-kernel $VMCOST_LAB_CACHE/aarch64/kernel/vmlinuz"
has "QEMU: the aarch64 initramfs" "$cmd" "-initrd $VMCOST_LAB_CACHE/aarch64/initrd.gz"
has "QEMU: a PCI balloon with free-page reporting" "$cmd" \
	"-device virtio-balloon-pci,id=balloon0,free-page-reporting=on"
has "QEMU: qemu.pid in the instance directory" "$cmd" "-pidfile $dir/qemu.pid"
has "QEMU: qmp.sock in the instance directory" "$cmd" "-qmp unix:$dir/qmp.sock,server=on,wait=off"
has "QEMU: the agent's port forwarded" "$cmd" ":7023"
has "QEMU: the console on the kernel command line" "$cmd" "console=ttyAMA0 quiet panic=-1 lab.name=a1"
has "lima.yaml: the agent socket forward" "$dir/lima.yaml" 'hostSocket: "{{.Dir}}/sock/vmcost-agent.sock"'
PATH="$tmp/lab/bin:$PATH" limactl list --json a1 >"$tmp/list.json" 2>"$tmp/err"
json "limactl list --json: arch aarch64 on the instance, its config and its image" "$tmp/list.json" \
	'.arch == "aarch64" and .config.arch == "aarch64" and .config.images[0].arch == "aarch64"
	 and (.config.images[0].kernel.location | endswith("/aarch64/kernel/vmlinuz"))
	 and .HostArch == "x86_64"'
PATH="$tmp/lab/bin:$PATH" limactl list a1 >"$tmp/list.txt" 2>"$tmp/err"
check "limactl list: the ARCH column says aarch64" grep -Eq '^a1 +[A-Za-z]+ +[^ ]+ +qemu +aarch64 ' \
	"$tmp/list.txt"

# A restart without --arch keeps the instance's.
start a1
has "a restart keeps aarch64" "$tmp/build.args" "--arch aarch64"
has "a restart keeps aarch64 in QEMU" "$LIMA_HOME/a1/qemu.command" "qemu-system-aarch64"

# x86_64 stays what it was: the default, the old cache paths, ttyS0.
start x1 --fpr
has "the default is x86_64" "$tmp/build.args" "--arch x86_64"
check "x86_64: qemu-system-x86_64, no virt machine" sh -c \
	"grep -q '^qemu-system-x86_64 -name x1 ' '$LIMA_HOME/x1/qemu.command' &&
	 ! grep -q 'machine virt' '$LIMA_HOME/x1/qemu.command'"
has "x86_64: the cache's own kernel" "$LIMA_HOME/x1/qemu.command" "-kernel $VMCOST_LAB_CACHE/kernel/vmlinuz"
has "x86_64: ttyS0" "$LIMA_HOME/x1/kernel.cmdline" "console=ttyS0"
has "x86_64: lima.yaml arch" "$LIMA_HOME/x1/lima.yaml" "arch: x86_64"
# An instance made before --arch existed (no ARCH in lab.env) restarts as x86_64, whatever the
# default for new ones.
sed -i '/^ARCH=/d' "$LIMA_HOME/x1/lab.env"
VMCOST_LAB_ARCH=aarch64 start x1
has "an instance without ARCH in lab.env restarts as x86_64" "$tmp/build.args" "--arch x86_64"

VMCOST_LAB_ARCH=arm64 start a2
has "VMCOST_LAB_ARCH=arm64 makes an aarch64 instance" "$LIMA_HOME/a2/lab.env" "ARCH=aarch64"

start b1 --arch sparc64
check "--arch sparc64 is refused" sh -c "grep -q 'takes x86_64 or aarch64' '$tmp/err' && [ ! -d '$LIMA_HOME/b1' ]"
start b2 --arch aarch64 --docker
check "--arch aarch64 --docker is refused before anything is built" sh -c \
	"grep -q 'no aarch64 Docker root' '$tmp/err' && [ ! -f '$tmp/build.args' ]"
summary
