# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# tests/lima/docker-lib.sh: what the real-Lima Docker suites (docker_clients.sh, autostop.sh)
# share, on top of tests/lima/lib.sh: Docker access for the Lima user, images from local
# files, and the testcontainers client with its Ryuk. Source it after lib.sh, after lima_init.

# lima_wait SECONDS CMD...: true as soon as CMD succeeds, polled every second.
lima_wait() {
	limit=$1
	shift
	end=$(($(date +%s) + limit))
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 1
	done
}

# lima_docker_access SOCK: the Lima user may use /var/run/docker.sock in the guest, so Lima's
# forward to SOCK reaches dockerd. The instance tests/lima/lib.sh makes sees to it (docker.socket
# owned by the Lima user); an instance made by an older harness may not, and is given it here:
# the docker group for every later login (ssh's forward keeps the groups of the login it runs
# in), and the socket's owner for now.
lima_docker_access() {
	docker_ok() { as_lima env DOCKER_HOST="unix://$1" /usr/bin/docker version >/dev/null 2>&1; }
	lima_wait 30 docker_ok "$1" && return 0
	user=$(lima_shell id -un) || return 1
	lima_log "giving $user the guest's docker.sock (docker group, and the socket's owner now)"
	lima_shell sudo usermod -aG docker "$user" || return 1
	lima_shell sudo chown "$user" /var/run/docker.sock || return 1
	lima_wait 60 docker_ok "$1"
}

# lima_docker_apparmor: containers can start. The kernel has AppArmor on, and Docker 20.10 then
# loads its docker-default profile with apparmor_parser, which the test image lacks (Debian's
# docker.io only recommends the apparmor package). Until the image has it, dockerd is told
# AppArmor is off, the way runc asks (/sys/module/apparmor/parameters/enabled), by a drop-in
# that survives the restarts autostop makes. Does nothing when apparmor_parser is there.
lima_docker_apparmor() {
	lima_shell sh -c 'command -v apparmor_parser || test -x /sbin/apparmor_parser' >/dev/null 2>&1 &&
		return 0
	[ "$(lima_shell cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] || return 0
	lima_log "the image has no apparmor_parser: dockerd is told AppArmor is off (test instance only)"
	# shellcheck disable=SC2016 # for the guest's shell
	lima_shell sudo sh -c 'mkdir -p /etc/systemd/system/docker.service.d &&
		printf "%s\n" "[Service]" \
			"ExecStartPre=/bin/sh -c \"echo N >/run/vmcost-apparmor-off && mount --bind /run/vmcost-apparmor-off /sys/module/apparmor/parameters/enabled\"" \
			>/etc/systemd/system/docker.service.d/vmcost-test-apparmor.conf &&
		systemctl daemon-reload && systemctl restart docker' || return 1
	user=$(lima_shell id -un) || return 1
	lima_shell sudo chown "$user" /var/run/docker.sock
}

# lima_busybox_tar OUT: a root file system of Debian's static busybox (the lab's copy, from the
# busybox-static package) with the applets the suites use and /www/index.html, as a tar the
# test user can read.
lima_busybox_tar() {
	bb=${VMCOST_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmcost-lab}/busybox
	[ -x "$bb" ] || "$LIMA_TEST_REPO/lab/build" >&2 || return 1
	root=$(mktemp -d)
	mkdir -p "$root/bin" "$root/www" "$(dirname "$1")"
	cp "$bb" "$root/bin/busybox"
	for applet in sh echo cat sleep httpd; do ln -s busybox "$root/bin/$applet"; done
	echo "hello from vmcost" >"$root/www/index.html"
	tar -C "$root" -cf "$1" bin www
	rm -rf "$root"
	chmod a+r "$1"
	[ "$(id -u)" = 0 ] && chown "$LIMA_TEST_USER:" "$(dirname "$1")"
	return 0
}

# lima_testcontainers DIR: builds (or finds) the client and Ryuk, imports Ryuk under the tag the
# client asks for, copies the client where the test user can run it; prints the client's path.
lima_testcontainers() {
	built=$("$LIMA_TEST_REPO/tests/lima/testcontainers-build") || return 1
	client=$(echo "$built" | sed -n 's/^client //p')
	ryuk=$(echo "$built" | sed -n 's/^ryuk \([^ ]*\) .*/\1/p')
	tag=$(echo "$built" | sed -n 's/^ryuk [^ ]* //p')
	mkdir -p "$1/ryuk/bin"
	cp "$ryuk" "$1/ryuk/bin/ryuk"
	tar -C "$1/ryuk" -cf "$1/ryuk.tar" bin
	cp "$client" "$1/tc-client"
	chmod a+rx "$1/tc-client" && chmod a+r "$1/ryuk.tar"
	# What Ryuk's own Dockerfile gives its image: the binary as the command, and its label.
	as_lima env DOCKER_HOST="unix://$(lima_dir)/sock/docker.sock" /usr/bin/docker import \
		--change 'CMD ["/bin/ryuk"]' --change 'LABEL org.testcontainers.ryuk=true' \
		"$1/ryuk.tar" "$tag" >/dev/null || return 1
	echo "$1/tc-client"
}

# lima_tc_recipe: the testcontainers exports of templates/minimal-docker.yaml's message (what
# limactl start prints to its user), read with Lima's own yq: one NAME=VALUE a line.
lima_tc_recipe() {
	lima_yq '.message' "$LIMA_TEST_STAGE/templates/minimal-docker.yaml" |
		sed -n 's/^ *export \(TESTCONTAINERS_[A-Z_]*=[^ ]*\) *$/\1/p'
}

# lima_tc_run CLIENT NAME=VALUE...: one testcontainers session as the test user, with that
# environment (DOCKER_HOST and the recipe), on the imported busybox image.
lima_tc_run() {
	client=$1
	shift
	as_lima env "$@" "$client" vmcost-busybox:latest
}
