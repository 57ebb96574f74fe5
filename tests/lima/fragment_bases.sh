#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The agent fragment (templates/vmcost-agent.yaml) taken with `base:` by Lima's own templates, the
# README's recipe, checked by the real Lima 2.2.0 without a VM: for each of Lima's debian-12,
# ubuntu, fedora, docker and alpine templates a two-line template
#   base: [template:NAME, /abs/path/templates/vmcost-agent.yaml]
# must pass `limactl validate` without a warning, and the template Lima embeds from it
# (`limactl template copy --embed-all`, what `limactl start` writes as the instance's lima.yaml)
# must carry the fragment's provision scripts first, its probe and its socket forward, and the
# base's own ones too. A fragment path with "../" is shown to be refused, as the README says, and
# the ISO Lima's _images/alpine-iso names is the one minimal-docker-iso.yaml's comment names.
# Runs in make lima-check (it needs limactl, not a VM; make check does not run it).
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"

if [ ! -x "$LIMACTL" ]; then
	skip "real limactl $LIMA_VERSION not built ($LIMACTL): run make lima (or make lima-check)"
	summary
fi
lima_init
st=$LIMA_TEST_STAGE
fragment=$st/templates/vmcost-agent.yaml

# validate_clean FILE: limactl validate passes and warns about nothing.
validate_clean() {
	out=$(lima_ctl validate "$1" 2>&1)
	rc=$?
	echo "$out" | grep -v 'level=info msg="File ' | grep -v ': OK"' | tail -n 8 | sed 's/^/    /'
	[ "$rc" = 0 ] && ! echo "$out" | grep -q 'level=warn'
}

# Lima's aliases (debian -> debian-13, docker.yaml's base _images/ubuntu-lts -> ubuntu-26.04, ...)
# are symlinks in its tree, which Go module zips leave out: make lima makes them again.
lima_templates=$(dirname "$LIMA_RT_BIN")/share/lima/templates
for name in debian ubuntu fedora alpine _images/ubuntu-lts; do
	check "Lima's template alias $name.yaml is there (make lima restores the module's symlinks)" \
		as_lima test -f "$lima_templates/$name.yaml"
done

for base in debian ubuntu fedora docker alpine; do
	t=$st/with-$base.yaml
	printf 'base:\n- template:%s\n- %s\n' "$base" "$fragment" >"$t"
	chmod a+r "$t"
	check "template:$base + the fragment: limactl validate passes without a warning" validate_clean "$t"
	embedded=$st/with-$base.embedded.yaml
	if ! lima_ctl template copy --embed-all "$t" - >"$embedded" 2>"$embedded.err"; then
		fail "template:$base + the fragment: limactl template copy --embed-all"
		sed 's/^/    /' "$embedded.err"
		continue
	fi
	# Lima prepends a base's provision scripts and probes, appends its portForwards.
	# (Lima base64-encodes a script with tabs: !!binary, decoded here; yq's @base64d fails on it.)
	expr='[.provision[] | select(.mode == "system" or .mode == null)][0].script'
	first=$(lima_yq "$expr" "$embedded")
	if [ "$(lima_yq "$expr | tag" "$embedded")" = '!!binary' ]; then
		first=$(printf '%s\n' "$first" | base64 -d)
	fi
	check "template:$base + the fragment: the agent's build script is the first system script" \
		sh -c "printf '%s\n' \"\$1\" | grep -q 'vmcost provision, Lima .mode: system. (every boot), from templates/vmcost-agent.yaml'" sh "$first"
	check "template:$base + the fragment: the agent's configuration is written once" \
		test "$(lima_yq '.provision[] | select(.path == "/etc/vmcost/agent.yaml") | .overwrite' "$embedded")" = false
	check "template:$base + the fragment: the agent's probe" \
		sh -c "lima_out=\$1; printf '%s\n' \"\$lima_out\" | grep -qx 'vmcost-agent listens on /run/vmcost-agent.sock'" sh \
		"$(lima_yq '.probes[].description' "$embedded")"
	check "template:$base + the fragment: the API socket is forwarded" \
		test "$(lima_yq '.portForwards[] | select(.guestSocket == "/run/vmcost-agent.sock") | .hostSocket' "$embedded")" = '{{.Dir}}/sock/vmcost-agent.sock'
	check "template:$base + the fragment: the base template's image is kept" \
		test "$(lima_yq '.images | length' "$embedded")" -gt 0
done

# docker.yaml forwards the rootless docker.sock; both forwards must be there, Lima's first.
embedded=$st/with-docker.embedded.yaml
if [ -s "$embedded" ]; then
	check "template:docker + the fragment: Lima's docker.sock forward comes first, then the agent's" \
		test "$(lima_yq '[.portForwards[].guestSocket] | join(" ")' "$embedded")" = '/run/user/{{.UID}}/docker.sock /run/vmcost-agent.sock'
fi

# What the ISO template boots is what Lima's _images/alpine-iso names; its comment says which.
iso_image=$(lima_yq '.images[] | select(.arch == "x86_64") | .location' "$lima_templates/_images/alpine-iso.yaml")
check "Lima $LIMA_VERSION's _images/alpine-iso is alpine-lima v0.2.49 (Alpine 3.23.0), as minimal-docker-iso.yaml says ($iso_image)" \
	sh -c "case '$iso_image' in */v0.2.49/alpine-lima-std-3.23.0-x86_64.iso) exit 0 ;; esac; exit 1"

# The README says a base path must not contain "../": Lima refuses it.
mkdir -p "$st/sub"
printf 'base:\n- template:debian-12\n- ../templates/vmcost-agent.yaml\n' >"$st/sub/dotdot.yaml"
chmod -R a+rX "$st/sub"
if lima_ctl validate "$st/sub/dotdot.yaml" >"$st/dotdot.out" 2>&1; then
	fail "a base path with ../ is refused (limactl validate passed)"
else
	check "a base path with ../ is refused" grep -q '\.\.' "$st/dotdot.out"
fi
summary
