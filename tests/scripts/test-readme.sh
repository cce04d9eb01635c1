#!/usr/bin/env bash
# README.md's shell examples, run as written, printing TAP: every ```sh
# block of the README, in order, in one bash (as a user types them into one
# shell, so that `eval "$(scripts/cluster env)"` carries over), from the top
# of the source tree, stopping at the first command that fails (bash -e).
# One case per block. The one line not run is `scripts/test`, the suite
# that runs this test; it is named in a comment.
#
# What the test sets around the commands, without changing them: the local
# cluster's state directory and ports (BATON_CLUSTER_DIR in a scratch
# directory, BATON_BASE_PORT a free base from $BATON_README_TEST_BASE_PORT,
# default 25000), so that a cluster of the user's own in .cluster/ is left
# alone, and TMPDIR (the examples' mktemp -d) in the same scratch directory.
# The README's own batond example uses fixed ports (7501..7503,
# 7601..7603): a lock file serialises runs of this test on the machine.
#
# The README's commands name build/: only the build in build/ runs this
# test (another build dir skips it, saying so).
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
readme="$root/README.md"

if [ ! -d "$root/build" ] || [ "$(pwd -P)" != "$(cd "$root/build" && pwd -P)" ]; then
        echo "1..0 # SKIP README.md's commands use build/, and this is another build dir"
        exit 0
fi

# shellcheck source=tests/lib/docblocks.sh
. "$root/tests/lib/docblocks.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-readme.XXXXXX") || exit 1
state="$tmp/cluster"
runner_pid=""

cleanup() {
        # The README's batond nodes, if a failure left them: the runner's
        # process group (it runs under setsid), by its id.
        [ -n "$runner_pid" ] && kill -TERM -- "-$runner_pid" 2>/dev/null
        if [ -f "$state/nodes" ]; then
                BATON_CLUSTER_DIR="$state" "$root/scripts/cluster" down --purge >/dev/null 2>&1
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT

exec 9>/tmp/baton-readme-test.lock
if ! flock -w 900 9; then
        echo "1..0 # SKIP another run of this test held /tmp/baton-readme-test.lock for 15 min"
        exit 0
fi
base=$(docblocks_free_base "${BATON_README_TEST_BASE_PORT:-25000}" \
        1 2 3 4 5 101 102 103 104 105 201 202 203 204 205 301 302 303 304 305) || {
        echo "1..1"
        echo "not ok 1 - no free port base near ${BATON_README_TEST_BASE_PORT:-25000}"
        exit 1
}

# The blocks, one file each: block-N.sh.
blocks=$(docblocks_split "$readme" "$tmp")

# One script: each block, then a line saying it ran. scripts/test alone on
# its line (with a comment) is left out.
script="$tmp/readme.sh"
{
        echo "cd $(printf '%q' "$root")"
        for i in $(seq 1 "$blocks"); do
                echo "echo '### block $i' >&2"
                sed -E 's|^scripts/test([[:space:]].*)?$|: "scripts/test: not run here, it is the suite that runs this test"|' \
                        "$tmp/block-$i.sh"
                echo "echo 'BLOCK_DONE $i' >&3"
        done
} >"$script"

echo "1..$blocks"
env BATON_CLUSTER_DIR="$state" BATON_BASE_PORT="$base" TMPDIR="$tmp" \
        setsid timeout -k 30 900 bash -e "$script" 3>"$tmp/done" >"$tmp/log" 2>&1 &
runner_pid=$!
wait "$runner_pid"
rc=$?

done_n=$(grep -c '^BLOCK_DONE' "$tmp/done")
for i in $(seq 1 "$blocks"); do
        first=$(head -1 "$tmp/block-$i.sh")
        if [ "$i" -le "$done_n" ]; then
                echo "ok $i - README block $i ($first ...)"
                if grep -q '^scripts/test' "$tmp/block-$i.sh"; then
                        echo "# block $i: its scripts/test line was not run (the suite that runs this test)"
                fi
        elif [ "$i" -eq $((done_n + 1)) ]; then
                echo "not ok $i - README block $i ($first ...): bash -e stopped there (exit $rc)"
                echo "# the block:"
                sed 's/^/#   /' "$tmp/block-$i.sh"
                echo "# what it printed (last 30 lines):"
                awk -v b="### block $i" '$0 == b { on = 1 } on' "$tmp/log" | tail -30 | sed 's/^/#   /'
        else
                echo "not ok $i - README block $i ($first ...): not run, an earlier block failed"
        fi
done
[ "$done_n" -eq "$blocks" ]
