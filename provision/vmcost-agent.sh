#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot), from templates/vmcost-agent.yaml: puts the
# agent's sources in /usr/local/src/vmcost and runs their install.sh, which builds vmcost-agent
# when they changed and runs it as the `cache-trim` service. Lima inlines this script into the
# instance's lima.yaml, so it stays small: the sources (about 300 KB) come from
#   param vmcostAgentSrc, when set: a vmcost checkout as the guest sees it (a read-only mount,
#     e.g. your home directory, which the vmcost templates mount), copied file by file; or
#   param vmcostAgentURL: the source tarball `make agent-src` makes, downloaded once and
#     accepted only with the sha256 of param vmcostAgentSha256 (pinned in the fragment).
# VMCOST_ROOT (tests only) prefixes every path; VMCOST_SRC_WAIT (tests only): seconds to wait for
# the checkout (60).
set -eu
root=${VMCOST_ROOT:-}
src=/usr/local/src/vmcost
pinned=/usr/local/lib/vmcost/agent-src.sha256
checkout=${PARAM_vmcostAgentSrc:-}
url=${PARAM_vmcostAgentURL:-}
sha256=${PARAM_vmcostAgentSha256:-}

say() { echo "vmcost agent: $*"; }
die() {
    echo "vmcost agent: $*" >&2
    exit 1
}

# The agent's sources in a checkout, as its provision/vmcost-agent-sources.sh lists them (every
# guest-agent/*.[ch], the lib/ modules they include); a checkout older than that script: all of
# guest-agent/ and lib/.
checkout_sources() { # dir
    if [ -f "$1/provision/vmcost-agent-sources.sh" ]; then
        sh "$1/provision/vmcost-agent-sources.sh" "$1"
    else
        for f in "$1"/guest-agent/*.[ch] "$1"/lib/*.[ch]; do
            [ -f "$f" ] && echo "${f#"$1"/}"
        done
    fi
}

# The tarball's layout from a checkout (templates/update-embedded packs the same files):
# "PATH-IN-SRC CHECKOUT-FILE" lines.
checkout_files() { # dir
    checkout_sources "$1" | while read -r f; do
        echo "$f $1/$f"
    done
    echo "build.sh $1/provision/build-vmcost-agent.sh"
    echo "install.sh $1/provision/install-vmcost-agent.sh"
    echo "init.d/cache-trim $1/provision/init.d/cache-trim"
    echo "systemd/cache-trim.service $1/provision/systemd/cache-trim.service"
    echo "systemd/vmcost-engine-thaw.service $1/provision/systemd/vmcost-engine-thaw.service"
    echo "idle-sysctls.sh $1/provision/idle-sysctls.sh"
    echo "containerd-quiet.sh $1/provision/containerd-quiet.sh"
    echo "agent.yaml $1/provision/vmcost-agent.yaml"
}

# True when $src holds exactly the checkout's files.
same_as_checkout() { # dir
    [ "$(find "$root$src" -type f | wc -l)" -eq "$(checkout_files "$1" | wc -l)" ] || return 1
    checkout_files "$1" | {
        while read -r dest file; do
            cmp -s "$file" "$root$src/$dest" || return 1
        done
    }
}

copy_checkout() { # dir
    [ -f "$1/provision/build-vmcost-agent.sh" ] || return 1
    checkout_files "$1" | while read -r dest file; do
        case $dest in */*) mkdir -p "$root$src.new/${dest%/*}" ;; esac
        cp "$file" "$root$src.new/$dest"
    done
}

fetch() { # url file
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --retry 5 --retry-delay 2 -o "$2" "$1"
    else
        n=0
        until wget -q -O "$2" "$1"; do
            n=$((n + 1))
            [ "$n" -lt 5 ] || return 1
            sleep 2
        done
    fi
}

# New sources replace the old ones only whole: a run killed half way leaves $src.new behind.
replace_sources() {
    rm -rf "$root$src"
    mv "$root$src.new" "$root$src"
}

if [ -n "$checkout" ]; then
    # A reverse-sshfs mount comes up after the system scripts start: wait for it.
    i=0
    until [ -f "$checkout/provision/build-vmcost-agent.sh" ] || [ "$i" -ge "${VMCOST_SRC_WAIT:-60}" ]; do
        sleep 1
        i=$((i + 1))
    done
    [ -f "$checkout/provision/build-vmcost-agent.sh" ] || die "param vmcostAgentSrc=$checkout: no vmcost checkout there (provision/build-vmcost-agent.sh): name the checkout's path as the guest sees it, and mount it (limactl start --mount DIR)"
    if ! same_as_checkout "$checkout"; then
        rm -rf "$root$src.new"
        mkdir -p "$root$src.new"
        copy_checkout "$checkout"
        rm -f "$root$pinned"
        replace_sources
        say "sources copied from $checkout"
    fi
elif [ ! -f "$root$src/install.sh" ] || [ "$(cat "$root$pinned" 2>/dev/null)" != "$sha256" ]; then
    if [ -z "$url" ] || [ -z "$sha256" ]; then
        die "params vmcostAgentURL and vmcostAgentSha256 are empty: give both, or vmcostAgentSrc (a vmcost checkout in the guest)"
    fi
    rm -rf "$root$src.new"
    mkdir -p "$root$src.new" "$root${pinned%/*}"
    tarball=$root$src.new/.download.tar.gz
    fetch "$url" "$tarball" || die "cannot download $url (param vmcostAgentURL): without network, build from a checkout: limactl start --param vmcostAgentSrc=DIR (a checkout the guest sees at DIR)"
    got=$(sha256sum "$tarball" | cut -d' ' -f1)
    [ "$got" = "$sha256" ] || die "$url has sha256 $got, not the pinned $sha256 (param vmcostAgentSha256): refusing it"
    tar -xzf "$tarball" -C "$root$src.new"
    rm -f "$tarball"
    replace_sources
    echo "$sha256" >"$root$pinned"
    say "sources from $url (sha256 $sha256)"
fi
# Lima renders this template field with the instance's user name.
VMCOST_USER="{{.User}}" exec sh "$root$src/install.sh"
