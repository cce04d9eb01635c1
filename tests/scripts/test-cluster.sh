#!/usr/bin/env bash
# Test of scripts/cluster's messages about where its state is, printing
# TAP: `down` and `down --purge` name the directory they keep or remove,
# BATON_CLUSTER_DIR's when it is set (not .cluster/), and --purge removes
# that directory and nothing else. No node is started: a state directory
# with no nodes is enough for `down`.
set -u

script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/cluster"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-cluster.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { # description, then a command that must succeed
        local what=$1
        shift
        n=$((n + 1))
        if "$@"; then
                echo "ok $n - $what"
        else
                failed=$((failed + 1))
                echo "not ok $n - $what"
        fi
}

state="$tmp/other state"
mkdir -p "$state" "$tmp/beside"
out=$(BATON_CLUSTER_DIR="$state" "$script" down 2>&1)
echo "# down: $out"
ok "down names BATON_CLUSTER_DIR as where the data is kept" \
        grep -qF "data kept in $state" <<<"$out"
ok "down does not speak of .cluster/ for another directory" \
        bash -c '! grep -qF ".cluster/" <<<"$1"' _ "$out"
out=$(BATON_CLUSTER_DIR="$state" "$script" down --purge 2>&1)
echo "# down --purge: $out"
ok "down --purge names BATON_CLUSTER_DIR as removed" \
        grep -qF "$state removed" <<<"$out"
ok "down --purge does not speak of .cluster/ for another directory" \
        bash -c '! grep -qF ".cluster/" <<<"$1"' _ "$out"
ok "down --purge removed that directory" test ! -e "$state"
ok "and nothing beside it" test -d "$tmp/beside"

echo "1..$n"
[ "$failed" -eq 0 ]
