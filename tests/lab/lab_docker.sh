#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Docker lab guest (issue 2, acceptance 3): GET /version through $LIMA_HOME/NAME/sock/docker.sock
# with curl --unix-socket, then a container through the Engine API and through limactl shell.
# The guest cannot pull from Docker Hub, so the image is imported from the lab's busybox.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

lab_start d1 --docker
sock=$LIMA_HOME/d1/sock/docker.sock
check "sock/docker.sock is a socket" test -S "$sock"
api() { # method path [curl args...]
	m=$1 p=$2
	shift 2
	curl -sS --unix-socket "$sock" -X "$m" "$@" "http://localhost$p"
}
version=$(api GET /version)
echo "GET /version: $(echo "$version" | jq -c '{Version, ApiVersion, KernelVersion}')"
check "GET /version has a Version" sh -c "echo '$version' | jq -e '.Version | type == \"string\"' >/dev/null"
check "the daemon runs the lab kernel" sh -c "echo '$version' | jq -e '.KernelVersion | startswith(\"6.\")' >/dev/null"

work=$(mktemp -d)
mkdir -p "$work/root/bin"
cache=${VMCOST_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmcost-lab}
cp "$cache/busybox" "$work/root/bin/busybox"
tar -C "$work/root" -cf "$work/bb.tar" bin
imported=$(api POST '/images/create?fromSrc=-&repo=lab-busybox&tag=latest' \
	-H 'Content-Type: application/x-tar' --data-binary "@$work/bb.tar")
check "image imported through the API" sh -c "echo '$imported' | grep -q sha256:"
rm -rf "$work"

created=$(api POST /containers/create -H 'Content-Type: application/json' \
	-d '{"Image":"lab-busybox","Cmd":["/bin/busybox","echo","hello-through-the-api"]}')
id=$(echo "$created" | jq -r '.Id // empty')
check "container created" test -n "$id"
check "container started" sh -c "test \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$sock' -X POST http://localhost/containers/$id/start)\" = 204"
waited=$(api POST "/containers/$id/wait" -m 120)
check "container exited 0" sh -c "echo '$waited' | jq -e '.StatusCode == 0' >/dev/null"
check "container output through the API" sh -c "curl -s --unix-socket '$sock' 'http://localhost/containers/$id/logs?stdout=1' | grep -q hello-through-the-api"
api DELETE "/containers/$id" >/dev/null
check "docker run through limactl shell" sh -c \
	'limactl shell d1 docker run --rm lab-busybox /bin/busybox echo hello-from-run | grep -qx hello-from-run'
check "vmcost-agent socket is forwarded in the Docker guest too" test -S "$LIMA_HOME/d1/sock/vmcost-agent.sock"
limactl stop d1 >/dev/null 2>&1
summary
