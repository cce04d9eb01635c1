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

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

state="$tmp/other state"
mkdir -p "$state" "$tmp/beside"
out=$(BATON_CLUSTER_DIR="$state" "$script" down 2>&1)
echo "# down: $out"
tap_check "down names BATON_CLUSTER_DIR as where the data is kept" \
        grep -qF "data kept in $state" <<<"$out"
tap_check "down does not speak of .cluster/ for another directory" \
        bash -c '! grep -qF ".cluster/" <<<"$1"' _ "$out"
out=$(BATON_CLUSTER_DIR="$state" "$script" down --purge 2>&1)
echo "# down --purge: $out"
tap_check "down --purge names BATON_CLUSTER_DIR as removed" \
        grep -qF "$state removed" <<<"$out"
tap_check "down --purge does not speak of .cluster/ for another directory" \
        bash -c '! grep -qF ".cluster/" <<<"$1"' _ "$out"
tap_check "down --purge removed that directory" test ! -e "$state"
tap_check "and nothing beside it" test -d "$tmp/beside"

tap_end
