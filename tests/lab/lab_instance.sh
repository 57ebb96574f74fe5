#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab is a Lima qemu instance as vmcost sees one (issue 2, acceptance 2 and 4): directory
# layout and pids, limactl list --json shape, limactl shell, free-page reporting returning memory,
# the ratchet without a balloon, and clean stop.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

GIB_KB=1048576

# ---- boot and layout ------------------------------------------------------------------------
line=$(lab_start t1 --fpr)
echo "$line"
boot=$(echo "$line" | sed -n 's/.*ready in \([0-9.]*\) s.*/\1/p')
check "boot time is printed ($boot s)" test -n "$boot"
check "boot to a usable shell under 60 s" awk -v b="${boot:-999}" 'BEGIN { exit !(b < 60) }'

dir=$LIMA_HOME/t1
for f in lima.yaml ha.pid qemu.pid serial.log lima-version; do
	check "$f exists" test -f "$dir/$f"
done
check "qmp.sock is a socket" test -S "$dir/qmp.sock"
check "sock/vmcost-agent.sock is a socket" test -S "$dir/sock/vmcost-agent.sock"
qemu=$(cat "$dir/qemu.pid")
ha=$(cat "$dir/ha.pid")
check "qemu.pid is alive" kill -0 "$qemu"
check "ha.pid is alive" kill -0 "$ha"
# VMCOST_LAB_ARCH=aarch64 runs the suite on the aarch64 lab (lab/vm --arch).
arch=${VMCOST_LAB_ARCH:-x86_64}
check "qemu.pid is the QEMU process" sh -c "readlink /proc/$qemu/exe | grep -q qemu-system-$arch"
check "QEMU is a child of the hostagent" test "$(awk '{print $4}' "/proc/$qemu/stat")" = "$ha"
check "lima.yaml: vmType qemu" grep -qx 'vmType: qemu' "$dir/lima.yaml"
check "lima.yaml: arch" grep -qx "arch: $arch" "$dir/lima.yaml"
check "lima.yaml: agent socket forward" grep -q 'hostSocket: "{{.Dir}}/sock/vmcost-agent.sock"' "$dir/lima.yaml"

# ---- limactl list --json --------------------------------------------------------------------
json=$(limactl list --json t1)
check "list --json is one line (JSON Lines)" test "$(echo "$json" | wc -l)" -eq 1
check "list --json parses" sh -c "echo '$json' | jq -e . >/dev/null"
jqt() { echo "$json" | jq -e "$1" >/dev/null; }
check "name" jqt '.name == "t1"'
check "status Running" jqt '.status == "Running"'
check "dir" jqt ".dir == \"$dir\""
check "vmType qemu" jqt '.vmType == "qemu"'
check "arch" jqt ".arch == \"$arch\""
check "cpus is a number" jqt '.cpus == 2'
check "memory in bytes" jqt '.memory == 2147483648'
check "disk in bytes" jqt '.disk == 4294967296'
check "hostAgentPID is ha.pid" jqt ".hostAgentPID == $ha"
check "driverPID is qemu.pid" jqt ".driverPID == $qemu"
check "config is the instance config" jqt '.config.vmType == "qemu" and (.config.portForwards | length) >= 1'
check "limaVersion" jqt '.limaVersion | type == "string"'
check "deprecated PascalCase keys" jqt '.HostOS == "linux" and (.LimaHome | type == "string")'
check "unknown instance: exit 1" sh -c '! limactl list --json nope 2>/dev/null'

# ---- limactl shell --------------------------------------------------------------------------
check "limactl shell t1 cat /proc/meminfo" sh -c 'limactl shell t1 cat /proc/meminfo | grep -q "^MemTotal:"'
check "limactl shell t1 -- cat /proc/meminfo" sh -c 'limactl shell t1 -- cat /proc/meminfo | grep -q "^MemAvailable:"'
limactl shell t1 sh -c 'echo out; echo err >&2; exit 7' >/tmp/lab-shell.$$.out 2>/tmp/lab-shell.$$.err
rc=$?
check "exit status of CMD comes back" test "$rc" -eq 7
check "stdout comes back" grep -qx out /tmp/lab-shell.$$.out
check "stderr comes back separately" grep -qx err /tmp/lab-shell.$$.err
rm -f /tmp/lab-shell.$$.out /tmp/lab-shell.$$.err
check "arguments keep their words" test "$(limactl shell t1 printf '[%s]' 'a b' c)" = "[a b][c]"
check "guest sees free-page reporting (balloon feature bit 5)" sh -c \
	'limactl shell t1 sh -c "cat /sys/bus/virtio/devices/*/features" | cut -c6 | grep -q 1'
check "scratch disk mounted at /mnt/scratch" limactl shell t1 grep -q ' /mnt/scratch ext4 ' /proc/mounts

# ---- free-page reporting returns freed memory -----------------------------------------------
# Touch 1 GiB (tmpfs pages), read QEMU's RSS while it is held, then free it.
touch_1g() { limactl shell "$1" sh -c 'head -c 1073741824 /dev/zero >/dev/shm/fill'; }
free_1g() { limactl shell "$1" rm /dev/shm/fill; }
touch_1g t1
touched=$(lab_qemu_rss_kb t1)
free_1g t1
echo "t1: QEMU RSS while 1 GiB is touched: $((touched / 1024)) MiB"
target=$((touched - GIB_KB * 8 / 10))
fell() { [ "$(lab_qemu_rss_kb t1)" -le "$target" ]; }
start=$(date +%s)
if lab_wait_until 30 fell; then
	ok "FPR: QEMU RSS fell by >= 80 % of 1 GiB in $(($(date +%s) - start)) s ($((touched / 1024)) -> $(($(lab_qemu_rss_kb t1) / 1024)) MiB)"
else
	fail "FPR: QEMU RSS did not fall by 80 % of 1 GiB within 30 s ($((touched / 1024)) -> $(($(lab_qemu_rss_kb t1) / 1024)) MiB)"
fi

# ---- stop ---------------------------------------------------------------------------------
check "limactl stop t1" sh -c "limactl stop t1 2>/dev/null"
for f in ha.pid qemu.pid qmp.sock sock/vmcost-agent.sock; do
	check "stop removed $f" test ! -e "$dir/$f"
done
check "QEMU is gone" sh -c "! kill -0 $qemu 2>/dev/null"
check "list says Stopped" sh -c 'limactl list --json t1 | jq -e ".status == \"Stopped\"" >/dev/null'

# ---- without a balloon: the ratchet -------------------------------------------------------
lab_start t2 --no-balloon
touch_1g t2
touched=$(lab_qemu_rss_kb t2)
free_1g t2
sleep 30
after=$(lab_qemu_rss_kb t2)
echo "t2 (no balloon): $((touched / 1024)) MiB after touch, $((after / 1024)) MiB 30 s after free"
check "no balloon: RSS stays at the high-water mark (within 10 %)" \
	test "$after" -ge $((touched - touched / 10))
# shellcheck disable=SC2016 # expanded in the inner shell
check "no balloon: the guest still freed it" sh -c \
	'test "$(limactl shell t2 awk "/^MemFree:/ {print \$2}" /proc/meminfo)" -gt 1500000'
limactl stop t2 >/dev/null 2>&1
summary
