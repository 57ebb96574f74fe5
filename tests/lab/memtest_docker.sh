#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# memtest --workload pgbench and vmcost load end to end through the instance's docker.sock
# (issue 5, acceptance 2), on the Docker lab guest. The lab cannot pull postgres:17-alpine (no
# route to Docker Hub), so the workload image is PostgreSQL 15 + pgbench from Debian packages
# (tests/lab/memtest-pg-image), imported through the Docker API; vmcost then takes the same API
# path it takes with the official image: image present check, create, start, exec (pg_isready,
# pgbench -i, pgbench), stop, wait, remove. The pull itself is tested where the lab can: its
# failure, with Docker's own message and exit code 10, and memtest's pre-flight refusing the same
# image before anything runs.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

jq_true() { # file expr: the expression holds for the JSON file
	jq -e "$2" "$1" >/dev/null
}
VMCOST=${VMCOST:-vmcost}
IMAGE=vmcost/postgres:15-debian
out=$LIMA_HOME/out
res=$LIMA_HOME/results
mkdir -p "$out"

tar=$("$LAB_TEST_REPO/tests/lab/memtest-pg-image") || {
	fail "build the PostgreSQL image from Debian packages"
	summary
}
ok "PostgreSQL 15 image from Debian packages: $tar"

lab_start mdock --docker --fpr
sock=$LIMA_HOME/mdock/sock/docker.sock

status_of() {
	limactl list --json "$1" | jq -r .status
}

# docker import through the API (what `docker import` does), with the settings the official
# image has: entrypoint, PATH with pg_isready and pgbench, PGDATA.
changes=""
for c in 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	'ENV PGDATA=/var/lib/postgresql/data' \
	'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'CMD ["postgres"]'; do
	changes="$changes&changes=$(printf '%s' "$c" | jq -sRr @uri)"
done
code=$(curl -s -o "$out/import.log" -w '%{http_code}' --unix-socket "$sock" -X POST \
	-H 'Content-Type: application/x-tar' --data-binary "@$tar" \
	"http://docker/images/create?fromSrc=-&repo=vmcost/postgres&tag=15-debian$changes")
check "image imported through docker.sock (HTTP $code)" [ "$code" = 200 ]

# ---- memtest's pre-flight against a real dockerd (issue 14): refused before anything runs --------
"$VMCOST" memtest mdock --check --json --results none >"$out/pf-pull.json" 2>"$out/pf-pull.err"
rc=$?
check "pre-flight: an image that cannot be pulled exits 10 (got $rc)" [ "$rc" = 10 ]
check "pre-flight: it says why, in Docker's words, and what to do" grep -q \
	'cannot be pulled: dockerd could not look postgres:17-alpine up in its registry.*registry-1.docker.io.*docker load' \
	"$out/pf-pull.err"
check "pre-flight: the pgbench verdict failed with 10" jq_true "$out/pf-pull.json" \
	'.preflight[2] | .check == "pgbench" and .status == "fail" and .exit_code == 10'
"$VMCOST" memtest mdock --check --no-pull --image postgres:16 --results none >/dev/null \
	2>"$out/pf-nopull.err"
rc=$?
check "pre-flight: a missing image with --no-pull exits 10 (got $rc)" [ "$rc" = 10 ]
check "pre-flight: --no-pull named" grep -q 'postgres:16 is not in the Docker of instance "mdock" and --no-pull was given' \
	"$out/pf-nopull.err"
"$VMCOST" memtest mdock --check --image "$IMAGE" --results none >"$out/pf-ok.txt" 2>&1
rc=$?
check "pre-flight: a present image passes (got $rc)" [ "$rc" = 0 ]
check "pre-flight: it names the image and Docker" grep -q "ok    pgbench      Docker .* answers; $IMAGE is present" \
	"$out/pf-ok.txt"
containers=$(curl -s --unix-socket "$sock" 'http://docker/containers/json?all=1' | jq length)
check "pre-flight: no container was made ($containers)" [ "$containers" = 0 ]
check "pre-flight: the instance still runs" [ "$(status_of mdock)" = Running ]

# ---- Docker errors, with the exit code of the README table --------------------------------------
"$VMCOST" load mdock --results none >/dev/null 2>"$out/pull.err"
rc=$?
check "pull failure exits 10 (got $rc)" [ "$rc" = 10 ]
check "pull failure names the image and Docker's reason" \
	grep -q 'pulling postgres:17-alpine failed.*registry-1.docker.io' "$out/pull.err"
check "pull failure says what to do" grep -q 'docker load' "$out/pull.err"
"$VMCOST" load mdock --no-pull --image postgres:16 --results none >/dev/null 2>"$out/nopull.err"
rc=$?
check "missing image with --no-pull exits 10 (got $rc)" [ "$rc" = 10 ]
check "missing image message" grep -q 'is not in the Docker of instance "mdock"' "$out/nopull.err"

# ---- vmcost load: the published load table, short ------------------------------------------------
"$VMCOST" load mdock --image "$IMAGE" --scale 1 --duration 10 --single-duration 5 --idle 10 \
	--interval 5 --json --results "$res" >"$out/load.json" 2>"$out/load.err"
rc=$?
check "load exits 0 (got $rc)" [ "$rc" = 0 ]
check "load: 8-client run has tps" jq_true "$out/load.json" '.pgbench.runs[0] | .clients == 8 and .tps > 0'
check "load: 1-client run has tps and latency" \
	jq_true "$out/load.json" '.pgbench.runs[1] | .clients == 1 and .tps > 0 and .latency_ms > 0'
check "load: idle CPU with the container running measured" \
	jq_true "$out/load.json" '.idle_cpu.intervals == 2 and .idle_cpu.median_percent > 0'
check "load: markdown and JSON written" test -s "$(jq -r .files.markdown "$out/load.json")"
containers=$(curl -s --unix-socket "$sock" 'http://docker/containers/json?all=1' | jq length)
check "load removed its container ($containers left)" [ "$containers" = 0 ]

# ---- memtest --workload pgbench -----------------------------------------------------------------
"$VMCOST" memtest mdock --yes --workload pgbench --image "$IMAGE" --scale 1 --duration 10 \
	--pressure none --json --results "$res" >"$out/memtest.json" 2>"$out/memtest.err"
rc=$?
check "memtest --workload pgbench exits 0 (got $rc)" [ "$rc" = 0 ]
check "memtest: pgbench tps reported" jq_true "$out/memtest.json" '.result.pgbench[0].tps > 0'
check "memtest: the workload went through the image present check (no pull)" \
	jq_true "$out/memtest.json" '.phases[1].pgbench.pulled == false and .phases[1].pgbench.image == "'"$IMAGE"'"'
check "memtest: Docker's version recorded" \
	jq_true "$out/memtest.json" '.phases[1].pgbench.docker_version | test("^[0-9]")'
check "memtest: the stop gain is measured" \
	jq_true "$out/memtest.json" '.result.ram_freed_by_stop | numbers'
check "memtest: the instance is stopped" [ "$(status_of mdock)" = Stopped ]

summary
