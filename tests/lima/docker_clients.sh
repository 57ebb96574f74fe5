#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Real Docker clients through real Lima's forwarded docker.sock (issue 9 item 7): Debian's docker
# CLI (docker.io) runs a container; a published port answers on the host's 127.0.0.1, forwarded
# by Lima itself; Debian's docker-compose brings a project up and down; and a real
# testcontainers client (testcontainers-go, built at test time by tests/lima/testcontainers-build)
# runs a container, reads its published port and ends its session, with Ryuk removing what it
# left, using the recipe of the template's message (read out of templates/minimal-docker.yaml:
# TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE, the socket as the daemon sees it, which Ryuk mounts;
# TESTCONTAINERS_HOST_OVERRIDE, where Lima forwards published ports).
# Nothing can be pulled here: the images are imported from local files (a static busybox; Ryuk
# built from its Go module, tagged as the client expects).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=docker-lib.sh
. "$(dirname "$0")/docker-lib.sh"
lima_init
lima_up any
docker=/usr/bin/docker
sock=$(lima_dir)/sock/docker.sock
if [ ! -x "$docker" ] || ! command -v docker-compose >/dev/null 2>&1; then
	fail "Debian's docker CLI and docker-compose are missing (make deps: docker.io docker-compose)"
	summary
fi
# as_docker CMD...: CMD as the test user with the instance's docker.sock.
as_docker() {
	as_lima env DOCKER_HOST="unix://$sock" "$@"
}

# What a template user does once (the template's boot script): let the Lima user reach
# docker.sock, then log in again so that ssh's forward runs with the new group.
{ lima_docker_access "$sock" && lima_docker_apparmor; } || {
	fail "the Lima user cannot reach /var/run/docker.sock in the guest"
	summary
}
version=$(as_docker "$docker" version --format '{{.Server.Version}}' 2>&1)
check "docker version through Lima's forward: server $version" test -n "$version"

images=$LIMA_TEST_STAGE/images
lima_busybox_tar "$images/busybox.tar"
import_busybox() { as_docker "$docker" import "$images/busybox.tar" vmcost-busybox:latest >/dev/null; }
check "docker import of a static busybox (vmcost-busybox)" import_busybox
out=$(as_docker "$docker" run --rm vmcost-busybox echo hello-from-lima 2>&1)
check "docker run: \"$out\"" test "$out" = hello-from-lima
out=$(echo stdin-through-lima | as_docker "$docker" run --rm -i vmcost-busybox cat 2>&1)
check "docker run -i with stdin piped: \"$out\"" test "$out" = stdin-through-lima

# A published port, forwarded to the host by Lima's own port forwarding.
as_docker "$docker" rm -f web >/dev/null 2>&1 # a leftover of an interrupted run
as_docker "$docker" run -d --name web -p 8080 vmcost-busybox httpd -f -p 8080 -h /www >/dev/null
port=$(as_docker "$docker" port web 8080/tcp | sed -n 's/^0\.0\.0\.0:\([0-9]*\)$/\1/p' | head -n 1)
got() { [ "$(curl -s -m 5 "http://127.0.0.1:$port/")" = "hello from vmcost" ]; }
check "published port $port answers on the host's 127.0.0.1 (Lima forwards it)" lima_wait 120 got
as_docker "$docker" rm -f web >/dev/null

# docker-compose (Debian's 1.29) up and down.
cat >"$images/docker-compose.yml" <<'EOF'
version: "3"
services:
  web:
    image: vmcost-busybox
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
    ports: ["127.0.0.1:18081:8080"]
EOF
chmod a+r "$images/docker-compose.yml"
check "docker-compose up -d" as_docker env COMPOSE_HTTP_TIMEOUT=600 docker-compose \
	-f "$images/docker-compose.yml" -p vmcostlima up -d
port=18081
check "compose's published port answers on the host" lima_wait 120 got
check "docker-compose down" as_docker env COMPOSE_HTTP_TIMEOUT=600 docker-compose \
	-f "$images/docker-compose.yml" -p vmcostlima down
left=$(as_docker "$docker" ps -aq --filter label=com.docker.compose.project=vmcostlima | wc -l)
check "nothing of the project is left" test "$left" = 0

# testcontainers with Ryuk, set up as the template's message says.
recipe=$(lima_tc_recipe)
has_recipe() {
	echo "$recipe" | grep -q '^TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=' &&
		echo "$recipe" | grep -q '^TESTCONTAINERS_HOST_OVERRIDE='
}
check "the template's message gives the testcontainers recipe: $(echo "$recipe" | tr '\n' ' ')" has_recipe
if ! tc=$(lima_testcontainers "$images"); then
	fail "testcontainers client and Ryuk could not be built (tests/lima/testcontainers-build)"
	summary
fi
# shellcheck disable=SC2086 # one NAME=VALUE word a line
out=$(lima_tc_run "$tc" DOCKER_HOST="unix://$sock" $recipe 2>&1)
echo "$out" | sed 's/^/  /'
check "testcontainers ran a container and read its published port on 127.0.0.1" \
	sh -c "echo '$out' | grep -q 'answered: hello from vmcost'"
left_id=$(echo "$out" | sed -n 's/^container \([0-9a-f]*\) left for Ryuk$/\1/p')
gone() { ! as_docker "$docker" inspect "$left_id" >/dev/null 2>&1; }
check "Ryuk removed the container the session left, after the session ended" lima_wait 120 gone
ryuk_gone() { [ -z "$(as_docker "$docker" ps -q --filter label=org.testcontainers.ryuk=true)" ]; }
check "and Ryuk itself is gone" lima_wait 120 ryuk_gone
summary
