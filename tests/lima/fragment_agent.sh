#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The agent as templates/vmcost-agent.yaml delivers it, on the real Lima instance (Debian 12,
# systemd, apt; its YAML takes the fragment with `base:`, tests/lima/lib.sh): Lima inlined the
# fragment's small installer, which downloaded the source tarball the fragment pins (served from
# this machine, as a release would serve it: tests/lima/lib.sh) through QEMU's user network,
# checked its sha256 and built the agent from exactly this tree's sources without apt-get (the
# image has every package); it runs as cache-trim.service. The instance's configuration stays
# small, so `limactl list --json` works (Lima 2.2.0 fails it for every instance once one line is
# over 64 KiB: issue 19 item 7). The socket is the Lima user's, so `vmcost wakeups` through
# Lima's own forward keeps working when the agent re-creates its socket (systemctl restart, a
# crash and systemd's restart), and `vmcost doctor` passes through it (issue 11 items 2 and 8,
# issue 9 item 4).
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"
lima_init
lima_up any

in_guest() { lima_shell "$@"; }
# what: the command's output, stderr included (one line per check message).
say_fail() { # message, output
	fail "$1"
	printf '%s\n' "$2" | tail -n 15 | sed 's/^/    /'
}

# ---- the instance's configuration: small, and limactl list --json works -----------------------
size=$(wc -c <"$(lima_dir)/lima.yaml")
check "the instance's lima.yaml is well under 64 KiB ($size bytes)" test "$size" -lt 60000
lima_ctl list --json >"$LIMA_TEST_STAGE/list.json" 2>"$LIMA_TEST_STAGE/list.err"
rc=$?
if [ "$rc" = 0 ] && jq -e . "$LIMA_TEST_STAGE/list.json" >/dev/null 2>&1; then
	ok "limactl list --json: exit 0, every line parses"
else
	say_fail "limactl list --json: exit 0, every line parses (exit $rc)" "$(cat "$LIMA_TEST_STAGE/list.err")"
fi
line=$(jq -c "select(.name == \"$LIMA_INSTANCE\")" "$LIMA_TEST_STAGE/list.json" 2>/dev/null)
check "limactl list --json: the instance's line (${#line} bytes) is under Lima's 64 KiB scanner limit" \
	sh -c "[ ${#line} -gt 0 ] && [ ${#line} -lt 65536 ]"
one=$(lima_ctl list --json "$LIMA_INSTANCE" 2>&1)
check "limactl list --json $LIMA_INSTANCE: Running" \
	sh -c "printf '%s' \"\$1\" | jq -e '.status == \"Running\"' >/dev/null" sh "$one"

# ---- what the fragment's provisioning did ------------------------------------------------------
sha=$(sed -n 's/^  vmcostAgentSha256: "\(.*\)"$/\1/p' "$LIMA_TEST_REPO/templates/vmcost-agent.yaml")
log=$(in_guest sudo cat /var/log/cloud-init-output.log 2>&1)
check "the installer downloaded the tarball from this machine (192.168.5.2, Lima's slirp gateway)" \
	sh -c "printf '%s\n' \"\$1\" | grep -q 'vmcost agent: sources from http://192.168.5.2:[0-9]*/vmcost-agent-src-$sha.tar.gz (sha256 $sha)'" sh "$log"
check "... and the host's server answered it (agent-src-http.log)" \
	grep -q "\"GET /vmcost-agent-src-$sha.tar.gz HTTP/1.1\" 200" "$LIMA_TEST_HOME/agent-src-http.log"
check "the guest keeps the pinned sha256" test "$(in_guest cat /usr/local/lib/vmcost/agent-src.sha256)" = "$sha"
version=$(in_guest /usr/local/bin/vmcost-agent --version 2>&1)
# The tarball holds only the lib/ modules the agent uses (provision/vmcost-agent-sources.sh), and
# build-vmcost-agent.sh hashes what it holds in its own glob order: the same files, in that order.
want=src-$(cd "$LIMA_TEST_REPO" && taken=" $(provision/vmcost-agent-sources.sh . | tr '\n' ' ') " &&
	for f in guest-agent/*.[ch] lib/*.[ch]; do
		case $taken in *" $f "*) cat "$f" ;; esac
	done | sha256sum | cut -c1-12)
check "the agent was built in the guest from this tree's sources ($version)" \
	test "$version" = "vmcost-agent $want"
check "the build script ran as a Lima system script (cloud-init-output.log)" \
	sh -c "printf '%s\n' \"\$1\" | grep -q 'vmcost agent: built /usr/local/bin/vmcost-agent'" sh "$log"
check "no apt-get: the image has every package, so no network was needed" \
	sh -c "! printf '%s\n' \"\$1\" | grep -Eq 'Reading package lists|apt-get (update|install|purge)'" sh "$log"
check "cache-trim.service is enabled" in_guest systemctl is-enabled --quiet cache-trim.service
check "cache-trim.service is active" in_guest systemctl is-active --quiet cache-trim.service
check "the unit is the tarball's copy" sh -c \
	"lima_unit=\$1; [ \"\$lima_unit\" = \"\$(cat '$LIMA_TEST_REPO/provision/systemd/cache-trim.service')\" ]" sh \
	"$(in_guest cat /etc/systemd/system/cache-trim.service)"
config=$(in_guest cat /etc/vmcost/agent.yaml 2>&1)
check "/etc/vmcost/agent.yaml gives the socket to the Lima user ($LIMA_TEST_USER)" \
	sh -c "printf '%s\n' \"\$1\" | grep -qx 'socket-owner: \"$LIMA_TEST_USER\"'" sh "$config"
owner=$(in_guest stat -c %U /run/vmcost-agent.sock 2>&1)
check "/run/vmcost-agent.sock is the Lima user's ($owner)" test "$owner" = "$LIMA_TEST_USER"
check "the documented defaults are beside it" in_guest test -s /usr/local/src/vmcost/agent.yaml

# ---- through Lima's forward ------------------------------------------------------------------
status_ok() { lima_vmcost wakeups "$LIMA_INSTANCE" 1 >"$LIMA_TEST_STAGE/status.out" 2>&1; }
# After a respawn the agent needs a moment to bind again.
status_within() { # seconds
	i=0
	while [ "$i" -lt "$1" ]; do
		status_ok && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}
if status_within 30; then ok "vmcost wakeups through Lima's forward"; else
	say_fail "vmcost wakeups through Lima's forward" "$(cat "$LIMA_TEST_STAGE/status.out")"
fi
pid_before=$(in_guest systemctl show -p MainPID --value cache-trim.service)
in_guest sudo systemctl restart cache-trim.service
pid_after=$(in_guest systemctl show -p MainPID --value cache-trim.service)
check "systemctl restart re-created the agent ($pid_before -> $pid_after)" test "$pid_before" != "$pid_after"
if status_within 30; then ok "vmcost wakeups after systemctl restart (same Lima login, new socket)"; else
	say_fail "vmcost wakeups after systemctl restart (same Lima login, new socket)" "$(cat "$LIMA_TEST_STAGE/status.out")"
fi
in_guest sudo kill -KILL "$pid_after"
sleep 7 # RestartSec=5
pid_crash=$(in_guest systemctl show -p MainPID --value cache-trim.service)
check "systemd restarted the agent after a crash ($pid_after -> $pid_crash)" \
	sh -c "[ '$pid_crash' != '$pid_after' ] && [ '$pid_crash' != 0 ]"
if status_within 30; then ok "vmcost wakeups after a crash and systemd's restart"; else
	say_fail "vmcost wakeups after a crash and systemd's restart" "$(cat "$LIMA_TEST_STAGE/status.out")"
fi

# vmcost doctor: exit 0 when nothing fails (warnings allowed), 1 when a check fails, 5 when the
# agent cannot be reached. Through the fragment the agent must answer: the guest section is there.
lima_vmcost doctor "$LIMA_INSTANCE" >"$LIMA_TEST_STAGE/doctor.out" 2>&1
rc=$?
sed 's/^/    /' "$LIMA_TEST_STAGE/doctor.out"
check "vmcost doctor reaches the agent through the fragment's forward (exit $rc, not 5)" test "$rc" != 5
check "vmcost doctor prints the guest's checks" grep -q '^Guest' "$LIMA_TEST_STAGE/doctor.out"
check "vmcost doctor passes (exit 0: no check fails)" test "$rc" = 0

summary
