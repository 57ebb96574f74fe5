#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Both templates against the real Lima 2.2.0, no VM needed: `limactl validate` (what
# `limactl start` checks before it creates anything) must pass without a warning, and the strict
# schema from `limactl generate-jsonschema` (every struct closed: an unknown or misspelt key is an
# error, where validate only warns "Non-strict YAML") must accept them — checked twice, by Lima's
# own validator and by Debian's python3-jsonschema on the template converted to JSON by Lima's yq.
# Each template with every base and `file:` embedded (what an instance's lima.yaml holds) stays
# under 60,000 bytes, so Lima 2.2.0's `limactl list --json` keeps working (issue 19 item 7).
# Each check is also shown to reject a broken copy. Runs in make lima-check (it needs limactl, not
# a VM; make check does not run it); without limactl the Lima checks are skipped.
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"

templates="minimal-docker.yaml minimal-docker-iso.yaml"

if [ ! -x "$LIMACTL" ]; then
	skip "real limactl $LIMA_VERSION not built ($LIMACTL): run make lima (or make lima-check)"
	# What needs no Lima: each template (or the agent fragment it takes) forwards both sockets.
	for t in $templates; do
		for s in docker.sock vmcost-agent.sock; do
			check "$t: forwards $s to the instance directory" \
				grep -q "hostSocket: \"{{.Dir}}/sock/$s\"" "$LIMA_TEST_REPO/templates/$t" \
				"$LIMA_TEST_REPO/templates/vmcost-agent.yaml" 2>/dev/null
		done
	done
	summary
fi
lima_init
st=$LIMA_TEST_STAGE
schema=$st/schema-limayaml.json

python_jsonschema() {
	for py in /usr/bin/python3 python3; do
		if "$py" -c 'import jsonschema' 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	return 1
}

# validate FILE: limactl validate passes and warns about nothing.
validate_clean() {
	out=$(lima_ctl validate "$1" 2>&1)
	rc=$?
	# Lima logs one info line per embedded file; show the rest.
	echo "$out" | grep -v 'level=info msg="File ' | tail -n 12 | sed 's/^/    /'
	[ "$rc" = 0 ] && ! echo "$out" | grep -q 'level=warn'
}

# Lima's own strict check: generate-jsonschema validates the files it is given.
lima_schema_accepts() {
	out=$(lima_ctl generate-jsonschema --schemafile "$schema" "$1" 2>&1)
	rc=$?
	echo "$out" | grep -v 'level=info msg="File ' | tail -n 3 | sed 's/^/    /'
	[ "$rc" = 0 ]
}

# python3-jsonschema on the YAML as JSON (Lima's yq converts it).
python_schema_accepts() {
	json=$st/check.json
	as_lima yq -o=json "$1" >"$json" || return 1
	"$PY" - "$schema" "$json" <<'EOF'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
instance = json.load(open(sys.argv[2]))
cls = jsonschema.validators.validator_for(schema)
errors = sorted(cls(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
for e in errors[:5]:
    print("    " + "/".join(str(p) for p in e.absolute_path) + ": " + e.message[:160])
sys.exit(1 if errors else 0)
EOF
}

# A copy of a template with one change (a yq expression), next to the original so its
# file: entries still resolve.
broken_copy() { # name template expr
	out=$st/templates/$1
	# shellcheck disable=SC2016 # expanded by the inner shell
	as_lima sh -c 'yq "$1" "$2" >"$3"' sh "$3" "$st/templates/$2" "$out" && echo "$out"
}

# refuses CMD...: CMD fails (a check that must reject).
refuses() {
	! "$@"
}

version_is_ours() {
	echo "$LIMACTL_VERSION_LINE" | grep -q "limactl version $LIMA_VERSION\$"
}

schema_is_strict() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	as_lima sh -c 'limactl generate-jsonschema >"$1"' sh "$schema" &&
		grep -q '"additionalProperties": false' "$schema"
}

echo "# $LIMACTL_VERSION_LINE"
check "limactl reports version $LIMA_VERSION (the -ldflags version, not <unknown>)" version_is_ours
check "generate-jsonschema: every struct closed (additionalProperties false)" schema_is_strict

PY=$(python_jsonschema) || PY=""
for t in $templates; do
	f=$st/templates/$t
	check "$t: limactl validate passes without a warning" validate_clean "$f"
	check "$t: Lima's strict schema accepts it (generate-jsonschema)" lima_schema_accepts "$f"
	if [ -n "$PY" ]; then
		check "$t: python3-jsonschema accepts it as JSON" python_schema_accepts "$f"
	else
		fail "$t: python3-jsonschema is missing (make deps installs it)"
	fi
done

# What an instance's lima.yaml holds: `limactl create` embeds every base and `file:` as
# `template copy --embed-all` does. Lima 2.2.0's `limactl list --json` fails for every instance
# once one instance's line is over 64 KiB, so each template must stay well under that.
embedded_size() { # template -> bytes written by template copy --embed-all
	# shellcheck disable=SC2016 # expanded by the inner shell
	as_lima sh -c 'limactl template copy --embed-all "$1" - 2>/dev/null | wc -c' sh "$1"
}
small_when_embedded() {
	n=$(embedded_size "$1")
	echo "    $(basename "$1"): $n bytes with every base and file: embedded"
	[ "${n:-0}" -gt 0 ] && [ "$n" -lt 60000 ]
}
for t in $templates; do
	check "$t: limactl template copy --embed-all writes less than 60,000 bytes" small_when_embedded "$st/templates/$t"
done

# The agent fragment is a partial template (no images: limactl validate needs a whole one; the
# instance of make lima-check takes it with base:), but every key it has must be Lima's.
fragment=$st/templates/vmcost-agent.yaml
if [ -f "$fragment" ]; then
	check "vmcost-agent.yaml (fragment): Lima's strict schema accepts it" lima_schema_accepts "$fragment"
	if [ -n "$PY" ]; then
		check "vmcost-agent.yaml (fragment): python3-jsonschema accepts it as JSON" python_schema_accepts "$fragment"
	fi
fi

# The checks can fail: an unknown top-level key and a misspelt nested one.
t=minimal-docker.yaml
unknown=$(broken_copy unknown-key.yaml "$t" '.vmcostUnknownKey = 1')
typo=$(broken_copy misspelt-key.yaml "$t" '.portForwards[0].guestSockett = .portForwards[0].guestSocket | del(.portForwards[0].guestSocket)')
check "an unknown key: limactl validate does not pass it cleanly" refuses validate_clean "$unknown"
# The size check can fail: 70 KB of sources as a data `file:`, as the fragment once carried them.
cat "$st"/guest-agent/*.c | head -c 70000 >"$st/templates/sources.txt"
big=$(broken_copy big-data-file.yaml "$t" '.provision += [{"mode": "data", "path": "/usr/local/src/big", "file": "sources.txt"}]')
check "a template with 70 KB in a data file: (embedded) is over the limit" refuses small_when_embedded "$big"
for b in "$unknown" "$typo"; do
	check "$(basename "$b"): Lima's strict schema rejects it" refuses lima_schema_accepts "$b"
	if [ -n "$PY" ]; then
		check "$(basename "$b"): python3-jsonschema rejects it" refuses python_schema_accepts "$b"
	fi
done
summary
