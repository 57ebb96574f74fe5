#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The lab's limactl stand-in (lab/bin/limactl) against the real limactl 2.2.0, side by side: the
# same commands on a running instance of each, on a stopped one (a real instance created and
# never started), on names that do not exist and on a malformed lima.yaml — exit codes, the
# message (times and paths normalised), the `list --json` keys and their JSON types, and the
# instance-directory files vmcost reads. Differences that remain on purpose are listed here,
# each with its reason (and in the README's lab section); any other difference fails.
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"
lima_init
lima_up any

lab_home=$(mktemp -d /tmp/vmcost-standin.XXXXXX)
tmp=$(mktemp -d)
chmod 755 "$tmp"
standin_cleanup() {
	for lab_instance in lr sl; do
		LIMA_HOME=$lab_home "$LIMA_TEST_REPO/lab/vm" stop -f "$lab_instance" >/dev/null 2>&1
	done
	lima_ctl delete -f "${LIMA_INSTANCE}s" >/dev/null 2>&1
	rm -rf "$lab_home" "$tmp"
	lima_cleanup
}
trap standin_cleanup EXIT
real_stopped=${LIMA_INSTANCE}s

# Keys only the real limactl prints, and why the stand-in leaves them out.
#   sshLocalPort, sshConfigFile: the lab guest has no sshd (its channel is a TCP hostfwd)
#   errors: printed by the stand-in only for directories it cannot load, as Lima does
#   message: the template's message, absent from lab instances
#   param: the instance's params (the agent fragment's vmcostAgentSrc, vmcostAgentURL...);
#          lab instances are made by lab/vm, with none
real_only_running="errors message param sshConfigFile sshLocalPort"

standin() { # args...: the stand-in on the lab's LIMA_HOME
	env LIMA_HOME="$lab_home" "$LIMA_TEST_REPO/lab/bin/limactl" "$@"
}

# Exit code, then stderr with times, paths and instance names made comparable.
outcome() { # real|standin args...
	who=$1
	shift
	if [ "$who" = real ]; then
		lima_ctl "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	else
		standin "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	fi
	echo "exit $?"
	sed -e 's/^time="[^"]*" //' -e "s|$LIMA_HOME|\$LIMA_HOME|g" -e "s|$lab_home|\$LIMA_HOME|g" \
		-e "s/$real_stopped/STOPPED/g" -e 's/\bsl\b/STOPPED/g' "$tmp/err"
}

same_outcome() { # message args... (args name the stopped instance as @S)
	msg=$1
	shift
	real_args="" lab_args=""
	for a in "$@"; do
		case $a in
		@S) real_args="$real_args $real_stopped" lab_args="$lab_args sl" ;;
		*) real_args="$real_args $a" lab_args="$lab_args $a" ;;
		esac
	done
	# shellcheck disable=SC2086 # argument words without spaces
	r=$(outcome real $real_args)
	# shellcheck disable=SC2086
	s=$(outcome standin $lab_args)
	if [ "$r" = "$s" ]; then ok "$msg: $(echo "$r" | tr '\n' ' ' | cut -c1-160)"; else
		fail "$msg"
		echo "    real:     $(echo "$r" | tr '\n' ' ')"
		echo "    stand-in: $(echo "$s" | tr '\n' ' ')"
	fi
}

key_types() { # JSON object on stdin -> "key:type" lines, sorted
	jq -r 'to_entries[] | "\(.key):\(.value | type)"' | sort
}

# ---- the two beds ----------------------------------------------------------------------------
if ! yaml=$(lima_instance_yaml) ||
	! lima_ctl create --tty=false --name "$real_stopped" "$yaml" >"$tmp/create.log" 2>&1; then
	fail "limactl create $real_stopped: $(tail -n 3 "$tmp/create.log")"
fi
if LIMA_HOME=$lab_home "$LIMA_TEST_REPO/lab/vm" start sl >"$tmp/lab.log" 2>&1 &&
	LIMA_HOME=$lab_home "$LIMA_TEST_REPO/lab/vm" start lr >>"$tmp/lab.log" 2>&1; then
	ok "lab instances sl and lr: $(tail -n 1 "$tmp/lab.log")"
else
	fail "lab/vm start: $(tail -n 5 "$tmp/lab.log")"
	summary
fi
LIMA_HOME=$lab_home "$LIMA_TEST_REPO/lab/vm" stop sl >/dev/null 2>&1

# ---- list --json: keys and types ---------------------------------------------------------------
# --format '{{json .}}' (what vmcost reads): --json fails on the real instance, whose embedded
# agent sources overflow Lima 2.2.0's 64 KiB line scanner.
lima_ctl list --format '{{json .}}' "$LIMA_INSTANCE" | key_types >"$tmp/real-running"
standin list --format '{{json .}}' lr | key_types >"$tmp/lab-running"
lima_ctl list --format '{{json .}}' "$real_stopped" | key_types >"$tmp/real-stopped"
standin list --format '{{json .}}' sl | key_types >"$tmp/lab-stopped"
for state in running stopped; do
	missing=$(comm -23 "$tmp/real-$state" "$tmp/lab-$state" | cut -d: -f1 | sort -u | tr '\n' ' ')
	extra=$(comm -13 "$tmp/real-$state" "$tmp/lab-$state" | tr '\n' ' ')
	expected=""
	for k in $real_only_running; do
		grep -q "^$k:" "$tmp/real-$state" && expected="$expected $k"
	done
	expected=$(echo "$expected" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')
	check "list --json ($state): the stand-in has every key of real Lima with its type, except: $expected(listed reasons; missing: ${missing:-none})" \
		test "$missing" = "$expected"
	check "list --json ($state): the stand-in prints no key real Lima does not (${extra:-none})" \
		test -z "$extra"
done
for k in hostAgentPID driverPID; do
	check "list --json: $k only while running, in both" \
		sh -c "grep -q '^$k:number' '$tmp/real-running' && grep -q '^$k:number' '$tmp/lab-running' &&
			! grep -q '^$k:' '$tmp/real-stopped' && ! grep -q '^$k:' '$tmp/lab-stopped'"
done
real_cfg=$(lima_ctl list --format '{{json .}}' "$LIMA_INSTANCE" | jq -c '[.config | to_entries[] | select(.key == ("vmType", "cpus", "memory", "disk", "portForwards")) | {(.key): (.value | type)}] | add')
lab_cfg=$(standin list --format '{{json .}}' lr | jq -c '[.config | to_entries[] | select(.key == ("vmType", "cpus", "memory", "disk", "portForwards")) | {(.key): (.value | type)}] | add')
check "list --json: config.vmType/cpus/memory/disk/portForwards have the same types ($real_cfg)" \
	test "$real_cfg" = "$lab_cfg"

real_v=$(lima_ctl list --format '{{json .}}' "$LIMA_INSTANCE" | jq -r .limaVersion)
check "list --json: limaVersion is Lima's own string ($real_v)" \
	test "$real_v" = "$(standin list --format '{{json .}}' lr | jq -r .limaVersion)"

# ---- exit behaviour and messages ----------------------------------------------------------------
same_outcome "list nosuch" list nosuch
same_outcome "list --json nosuch" list --json nosuch
same_outcome "stop nosuch" stop nosuch
same_outcome "stop -f nosuch" stop -f nosuch
same_outcome "shell nosuch" shell nosuch true
same_outcome "shell without a name" shell
same_outcome "stop on a stopped instance" stop @S
same_outcome "shell on a stopped instance" shell @S true

# ---- a malformed lima.yaml ----------------------------------------------------------------------
# shellcheck disable=SC2016 # run by sh -c with the LIMA_HOME as $1
bad_yaml='mkdir -p "$1/badyaml" && printf "vmType: [qemu\ncpus: {\n" >"$1/badyaml/lima.yaml"'
as_lima sh -c "$bad_yaml" sh "$LIMA_HOME"
sh -c "$bad_yaml" sh "$lab_home"
r=$(lima_ctl list --format '{{json .}}' badyaml 2>/dev/null | jq -c '{name, status, vmType}')
s=$(standin list --format '{{json .}}' badyaml 2>/dev/null | jq -c '{name, status, vmType}')
check "malformed lima.yaml: listed alike, with an empty status ($r)" test "$r" = "$s"
real_rc=$(lima_vmcost footprint badyaml >/dev/null 2>&1; echo $?)
# The lab belongs to whoever runs the suite (root in CI), like its own tests.
lab_rc=$(env LIMA_HOME="$lab_home" PATH="$LIMA_TEST_REPO/lab/bin:$LIMA_TEST_REPO/host:/usr/bin:/bin" \
	vmcost footprint badyaml >/dev/null 2>&1; echo $?)
check "malformed lima.yaml: vmcost exits 8 with the real limactl ($real_rc)" test "$real_rc" -eq 8
check "malformed lima.yaml: vmcost exits 8 with the stand-in ($lab_rc)" test "$lab_rc" -eq 8
as_lima rm -rf "$LIMA_HOME/badyaml"
rm -rf "$lab_home/badyaml"

# ---- the instance directory --------------------------------------------------------------------
# What vmcost reads: lima.yaml, ha.pid, qemu.pid, qmp.sock, ha.stderr.log, lima-version and the
# forwarded agent socket.
real_dir=$(lima_dir)
for f in lima.yaml ha.pid qemu.pid qmp.sock ha.stderr.log ha.stdout.log lima-version serial.log \
	sock/vmcost-agent.sock; do
	check "instance dir: $f in both" sh -c "test -e '$real_dir/$f' && test -e '$lab_home/lr/$f'"
done
check "lima-version: the same version ($(cat "$real_dir/lima-version"))" \
	test "$(cat "$real_dir/lima-version")" = "$(cat "$lab_home/lr/lima-version")"
(cd "$lab_home/lr" && ls) | sort >"$tmp/lab-files"
(cd "$real_dir" && ls) | sort >"$tmp/real-files"
echo "  files only real Lima writes: $(comm -23 "$tmp/real-files" "$tmp/lab-files" | tr '\n' ' ')"
echo "  files only the lab writes:   $(comm -13 "$tmp/real-files" "$tmp/lab-files" | tr '\n' ' ')"
summary
