#!/usr/bin/env bash
# scripts/chaos's matrices, read through --list-runs (nothing is run),
# printing TAP: --all runs every nemesis of --list on 3 and 5 nodes, and
# the controls of clock-jump and crash-point (batond-wallclock,
# batond-trustimage); the smoke matrix has the faults scripts/test relies
# on (a power cut, a damaged follower log, a one-way partition) and the
# negative controls of the disk, corruption and digest checks; --only
# keeps the runs it matches with the seeds they have in the whole matrix,
# and a pattern that matches nothing fails rather than passing with no
# run.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
chaos="$root/scripts/chaos"
n=0
failed=0

ok() {
        n=$((n + 1))
        echo "ok $n - $1"
}

not_ok() {
        n=$((n + 1))
        failed=1
        echo "not ok $n - $1"
        [ $# -lt 2 ] || sed 's/^/# /' <<<"$2"
}

echo "1..7"

all=$("$chaos" --all --list-runs 2>&1)
missing=""
for name in $("$chaos" --list | awk '{print $1}'); do
        for nodes in 3 5; do
                [ "$name" = partition-ring ] && [ "$nodes" = 3 ] && continue
                grep -Fq -- "--nemesis $name --nodes $nodes " <<<"$all" ||
                        missing="$missing $name/${nodes}n"
        done
done
if [ -z "$missing" ]; then
        ok "--all runs every nemesis of --list on 3 and 5 nodes"
else
        not_ok "--all runs every nemesis of --list on 3 and 5 nodes" "missing:$missing"
fi

# has_all DESCRIPTION RUNS GREP_FLAG WANT...: one check, ok when the run
# list RUNS has a line that grep GREP_FLAG finds for each WANT.
has_all() {
        local what=$1 runs=$2 flag=$3 want missing=""
        shift 3
        for want; do
                grep "$flag" -- "$want" <<<"$runs" || missing="$missing [$want]"
        done
        if [ -z "$missing" ]; then
                ok "$what"
        else
                not_ok "$what" "missing:$missing"
        fi
}

has_all "--all has the controls of clock-jump and crash-point" "$all" -q \
        "--nemesis clock-jump --nodes 3 --time 90 --seed [0-9]* --server batond-wallclock --expect invalid" \
        "--nemesis crash-point --nodes 3 --time 90 --seed [0-9]* --server batond-trustimage --expect invalid"

smoke=$("$chaos" --smoke --list-runs 2>&1)
has_all "the smoke matrix has a power cut, a damaged log, a one-way partition and their controls" \
        "$smoke" -Fq "--nemesis power-cut --nodes 3" "--nemesis corrupt-acked --nodes 3" \
        "--nemesis partition-oneway --nodes 3" "--server batond-earlyack --expect invalid" \
        "--server batond-trustcorrupt --expect invalid" "--server batond-diverge --expect invalid"

only=$("$chaos" --all --list-runs --only '-5n-' 2>&1)
if [ -n "$only" ] && ! grep -v '^[0-9]* runs$' <<<"$only" | grep -qv -- '-5n-'; then
        ok "--only keeps the runs whose label matches"
else
        not_ok "--only keeps the runs whose label matches" "$only"
fi

# Each kept run has the same line (and so the same seed) as in the whole
# matrix.
strays=$(grep -v '^[0-9]* runs$' <<<"$only" | grep -vxF -f <(printf '%s\n' "$all"))
if [ -z "$strays" ]; then
        ok "--only keeps each run's seed"
else
        not_ok "--only keeps each run's seed" "$strays"
fi

out=$("$chaos" --all --list-runs --only 'no-such-run' 2>&1)
st=$?
if [ "$st" -ne 0 ] && grep -q '^0 runs$' <<<"$out"; then
        ok "--list-runs with --only matching nothing fails"
else
        not_ok "--list-runs with --only matching nothing fails" "status $st: $out"
fi

out=$("$chaos" --smoke --no-build --only 'no-such-run' 2>&1)
st=$?
if [ "$st" -ne 0 ] && grep -q "no run's label matches" <<<"$out"; then
        ok "a matrix whose --only matches nothing fails, saying so"
else
        not_ok "a matrix whose --only matches nothing fails, saying so" "status $st: $out"
fi

exit "$failed"
