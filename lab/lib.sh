# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh disable=SC2034
# Shared by lab/build, lab/vm, lab/libexec/hostagent and lab/bin/limactl.

LAB_DIR=$(cd "$(dirname "$0")" && pwd)
case $LAB_DIR in
*/lab/bin | */lab/libexec) LAB_DIR=${LAB_DIR%/*} ;;
esac
REPO_DIR=${LAB_DIR%/lab}
LAB_CACHE=${VMCOST_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmcost-lab}
LAB_MIRROR=${VMCOST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Instances live in $LIMA_HOME like Lima's, but by default in a lab folder, never ~/.lima.
LAB_HOME=${LIMA_HOME:-$LAB_CACHE/lima}
PATH=$PATH:/usr/sbin:/sbin
export PATH

lab_die() {
	echo "lab: $*" >&2
	exit 1
}

lab_check_home() {
	case $LAB_HOME in
	"$HOME/.lima" | "$HOME/.lima/")
		lab_die "LIMA_HOME is your real Lima home ($LAB_HOME): the lab never touches it; set LIMA_HOME to another folder"
		;;
	esac
}

lab_valid_name() {
	case $1 in
	'' | *[!A-Za-z0-9_.-]* | [._-]*) return 1 ;;
	esac
	[ ${#1} -le 40 ]
}

lab_instance_dir() {
	echo "$LAB_HOME/$1"
}

# A lab instance is a directory with lab.env (its settings); nothing else in the project reads it.
lab_is_instance() {
	[ -f "$LAB_HOME/$1/lab.env" ]
}

lab_pid_alive() { # pidfile
	[ -f "$1" ] || return 1
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# Lima's rule (pkg/store/instance.go): both pid files alive = Running, neither = Stopped.
lab_status() { # name
	dir=$LAB_HOME/$1
	ha=0 drv=0
	lab_pid_alive "$dir/ha.pid" && ha=1
	lab_pid_alive "$dir/qemu.pid" && drv=1
	if [ $ha = 1 ] && [ $drv = 1 ]; then
		echo Running
	elif [ $ha = 0 ] && [ $drv = 0 ]; then
		echo Stopped
	else
		echo Broken
	fi
}

lab_kernel_version_file() {
	echo "$LAB_CACHE/kernel/version"
}

# The guest architectures the lab builds, as Lima spells them (x86_64, aarch64; arm64 is taken
# for aarch64). Prints the name, or fails for any other.
lab_arch() { # name
	case $1 in
	x86_64 | amd64) echo x86_64 ;;
	aarch64 | arm64) echo aarch64 ;;
	*) return 1 ;;
	esac
}

# Where lab/build keeps an architecture's guest (kernel/, busybox, unixbridge, initrd.gz): the
# cache itself for x86_64, as before aarch64 existed, and its aarch64/ folder for aarch64.
lab_arch_cache() { # arch
	if [ "$1" = aarch64 ]; then echo "$LAB_CACHE/aarch64"; else echo "$LAB_CACHE"; fi
}

# Bytes from a Lima-style size ("2GiB", "512MiB", "4G").
lab_size_bytes() {
	awk -v s="$1" 'BEGIN {
		n = s; sub(/[^0-9.].*$/, "", n); u = s; sub(/^[0-9.]+ */, "", u); u = tolower(u)
		m = 1
		if (u ~ /^k/) m = 1024; else if (u ~ /^m/) m = 1024^2
		else if (u ~ /^g/) m = 1024^3; else if (u ~ /^t/) m = 1024^4
		else if (u != "" && u != "b") { exit 1 }
		if (n == "") exit 1
		printf "%.0f\n", n * m
	}'
}

# A free TCP port on 127.0.0.1 (QEMU's hostfwd binds it; hostagent retries on a race).
# Seeded from /dev/urandom: several VMs started in the same second must not pick the same port.
# Ports named in $LAB_TAKEN_PORTS are skipped, so one instance's ports differ from each other.
lab_free_port() {
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000))
	i=0
	while [ $i -lt 500 ]; do
		case " ${LAB_TAKEN_PORTS:-} " in
		*" $port "*) ;;
		*)
			if ! ss -Htln "sport = :$port" 2>/dev/null | grep -q .; then
				LAB_TAKEN_PORTS="${LAB_TAKEN_PORTS:-} $port"
				echo "$port"
				return 0
			fi
			;;
		esac
		port=$((port + 1))
		i=$((i + 1))
	done
	return 1
}

# Three distinct free ports: EXEC_PORT AGENT_PORT DOCKER_PORT.
lab_pick_ports() {
	LAB_TAKEN_PORTS=""
	EXEC_PORT=$(lab_free_port) && LAB_TAKEN_PORTS=" $EXEC_PORT" &&
		AGENT_PORT=$(lab_free_port) && LAB_TAKEN_PORTS=" $EXEC_PORT $AGENT_PORT" &&
		DOCKER_PORT=$(lab_free_port)
}

lab_now() {
	cut -d' ' -f1 /proc/uptime
}

# Who has FILE open (a lock file: its holder, and any waiter), other than this shell, as
# "pid PID (command)" for each process whose parent does not have it open too (the children of a
# build inherit the descriptor). flock(1) locks an inherited descriptor and exits, so /proc/locks
# names a pid that is gone; the open descriptors name the processes.
lab_lock_users() { # file
	pids=" $$ $(find /proc/[0-9]*/fd -lname "$1" 2>/dev/null | cut -d/ -f3 | sort -u | tr '\n' ' ')"
	for pid in $pids; do
		[ "$pid" = $$ ] && continue
		ppid=$( { sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f2; } 2>/dev/null)
		case $pids in *" $ppid "*) continue ;; esac
		cmd=$( { tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60; } 2>/dev/null)
		[ -n "$cmd" ] && printf 'pid %s (%s) ' "$pid" "$cmd"
	done
	return 0
}
