#!/usr/bin/env bash
# docs/http.md's walkthrough, run as written, printing TAP: a local TLS
# cluster is started with scripts/cluster (in a scratch directory, on
# ports from $BATON_HTTP_DOC_TEST_BASE_PORT, default 28000), then every
# ```sh block of the page runs, in order, in one bash (as a user types
# them into one shell), from the top of the source tree, stopping at the
# first command that fails (bash -e). One case per block, and then the
# outcome the page promises, checked in the same shell: a token was
# granted, the watch saw its grant, its new value and its release with
# that token, and the lock and the session are gone.
#
# The page's commands name scripts/cluster and build/ through it: only
# the build in build/ runs this test (another build dir skips it).
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
page="$root/docs/http.md"

if [ ! -d "$root/build" ] || [ "$(pwd -P)" != "$(cd "$root/build" && pwd -P)" ]; then
        echo "1..0 # SKIP docs/http.md's commands use build/, and this is another build dir"
        exit 0
fi

# shellcheck source=tests/lib/docblocks.sh
. "$root/tests/lib/docblocks.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-http-doc.XXXXXX") || exit 1
state="$tmp/cluster"
cleanup() {
        BATON_CLUSTER_DIR="$state" "$root/scripts/cluster" down --purge >/dev/null 2>&1
        rm -rf "$tmp"
}
trap cleanup EXIT

base=$(docblocks_free_base "${BATON_HTTP_DOC_TEST_BASE_PORT:-28000}" \
        1 2 3 101 102 103 201 202 203 301 302 303) || {
        echo "1..1"
        echo "not ok 1 - no free port base near ${BATON_HTTP_DOC_TEST_BASE_PORT:-28000}"
        exit 1
}
export BATON_CLUSTER_DIR="$state" BATON_BASE_PORT="$base" TMPDIR="$tmp"

blocks=$(docblocks_split "$page" "$tmp")

# The promised outcome, in the walkthrough's shell, after its last block.
cat >"$tmp/outcome.sh" <<'EOF'
echo "### outcome" >&2
[ "$token" -gt 0 ]
grep -q "^data: .*\"token\":$token" "$events"
[ "$(grep -c '^event: granted' "$events")" -eq 1 ]
[ "$(grep -c '^event: released' "$events")" -eq 1 ]
[ "$(grep -c '^event: proclaimed' "$events")" -eq 1 ]
grep -q '^data: .*"value":"curl-demo: 2 of 3 written"' "$events"
[ "$(api "$BATON_HTTP/v1/lock/holders?name=reports" | jq '.holders | length')" -eq 0 ]
[ "$(api "${auth[@]}" -X POST "$BATON_HTTP/v1/session/keepalive" | jq -r .error)" = BATON_ECLOSED ]
echo OUTCOME_OK >&3
EOF

script="$tmp/page.sh"
{
        echo "cd $(printf '%q' "$root")"
        for i in $(seq 1 "$blocks"); do
                echo "echo '### block $i' >&2"
                cat "$tmp/block-$i.sh"
                echo "echo 'BLOCK_DONE $i' >&3"
        done
        cat "$tmp/outcome.sh"
} >"$script"

echo "1..$((blocks + 2))"
if "$root/scripts/cluster" up >"$tmp/up.log" 2>&1; then
        echo "ok 1 - scripts/cluster up starts a TLS cluster with the HTTP API"
else
        echo "not ok 1 - scripts/cluster up starts a TLS cluster with the HTTP API"
        sed 's/^/#   /' "$tmp/up.log" | tail -20
fi
timeout -k 10 300 bash -e "$script" 3>"$tmp/done" >"$tmp/log" 2>&1
rc=$?
done_n=$(grep -c '^BLOCK_DONE' "$tmp/done")
for i in $(seq 1 "$blocks"); do
        first=$(head -1 "$tmp/block-$i.sh")
        if [ "$i" -le "$done_n" ]; then
                echo "ok $((i + 1)) - docs/http.md block $i ($first ...)"
        else
                echo "not ok $((i + 1)) - docs/http.md block $i ($first ...): stopped (exit $rc)"
                sed 's/^/#   /' "$tmp/block-$i.sh"
                awk -v b="### block $i" '$0 == b { on = 1 } on' "$tmp/log" | tail -20 | sed 's/^/#   /'
        fi
done
if grep -q '^OUTCOME_OK' "$tmp/done"; then
        echo "ok $((blocks + 2)) - the walkthrough did what the page says: a grant, its value, its events, nothing left"
else
        echo "not ok $((blocks + 2)) - the walkthrough did what the page says: a grant, its value, its events, nothing left"
        awk '$0 == "### outcome" { on = 1 } on' "$tmp/log" | tail -20 | sed 's/^/#   /'
        sed 's/^/#   events: /' "$tmp"/tmp.* 2>/dev/null | head -20
fi
grep -q '^OUTCOME_OK' "$tmp/done" && [ "$done_n" -eq "$blocks" ]
