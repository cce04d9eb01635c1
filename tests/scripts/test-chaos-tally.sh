#!/usr/bin/env bash
# tests/chaos/chaos-tally over a matrix of made-up run directories, printing
# TAP: it sums the summaries' operations, faults, elections and fencing
# saves, counts faults by kind from nemesis.log (heal-all aside), and a run
# with a failed checker or without a summary fails the tally.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
tally="$root/tests/chaos/chaos-tally"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

check() {
        n=$((n + 1))
        if grep -Fqx -- "$2" <<<"$out"; then
                echo "ok $n - $1"
        else
                failed=1
                echo "not ok $n - $1: no line '$2' in"
                sed 's/^/# /' <<<"$out"
        fi
}

# run DIR OK FAIL INFO FAULTS ELECTIONS SAVES VERDICT-LINES...
run() {
        local d=$1
        mkdir -p "$d"
        echo "seed=1" >"$d/plan"
        {
                echo "operations: $2 ok, $3 fail, $4 info"
                echo "faults injected: $5"
                echo "elections: $6"
                echo "fencing saves: $7"
                shift 7
                printf '%s\n' "$@"
        } >"$d/summary"
}

m="$tmp/all-1"
run "$m/a-3n-s1" 100 5 1 2 3 1 "S1 PASS x" "20 passed, 0 failed"
printf '%s\n' "t=1 action=start fault=kill-leader target=n1 cmd=x" \
        "t=2 action=end fault=kill-leader target=n1 cmd=y" \
        "t=3 action=start fault=slow-link target=n2 cmd=z" \
        "t=4 action=start fault=heal-all target=all cmd=h" >"$m/a-3n-s1/nemesis.log"
run "$tmp/all-2/b-5n-s2" 50 0 0 1 2 0 "S1 PASS x" "20 passed, 0 failed"
echo "t=1 action=start fault=kill-leader target=n3 cmd=x" >"$tmp/all-2/b-5n-s2/nemesis.log"

echo "1..15"
out=$("$tally" "$m" "$tmp/all-2")
st=$?
check "two passing runs" "runs: 2, 2 passed, 0 failed"
check "operations summed" "operations: 150 ok, 5 fail, 1 info"
check "faults summed" "faults injected: 3"
check "elections and saves summed" "elections: 5"
check "faults by kind, heal-all aside" "       2 kill-leader"
check "a second kind" "       1 slow-link"
n=$((n + 1))
if grep -q heal-all <<<"$out"; then failed=1; echo "not ok $n - heal-all counted as a fault"; else echo "ok $n - heal-all is not a fault"; fi
n=$((n + 1))
if [ "$st" -eq 0 ]; then echo "ok $n - exit 0 when all passed"; else failed=1; echo "not ok $n - exit $st when all passed"; fi

run "$m/control-x-s5" 70 0 0 9 0 0 "S1 FAIL two holders" "19 passed, 1 failed"
echo "expect=invalid" >>"$m/control-x-s5/plan"
echo "t=1 action=start fault=power-cut target=all cmd=x" >"$m/control-x-s5/nemesis.log"
out=$("$tally" "$m" "$tmp/all-2")
st=$?
check "a control that went red counts apart" "negative controls: 1, 1 went red"
check "a control's operations are not in the figures" "operations: 150 ok, 5 fail, 1 info"
run "$m/control-y-s6" 70 0 0 9 0 0 "S1 PASS x" "20 passed, 0 failed"
echo "expect=invalid" >>"$m/control-y-s6/plan"
run "$m/c-3n-s3" 10 0 0 0 0 0 "S7 FAIL not linearizable" "19 passed, 1 failed"
mkdir -p "$m/d-3n-s4" && echo "seed=4" >"$m/d-3n-s4/plan"
out=$("$tally" "$m" "$tmp/all-2")
st=$?
check "a failed checker and a missing summary fail their runs" "runs: 4, 2 passed, 2 failed"
check "the failed checker is named" "  c-3n-s3 (S7)"
check "a control that stayed green fails the tally" "  control-y-s6 (control: stayed-green)"
run "$m/e-3n-s7" 10 0 0 0 0 0 "S1 PASS x" "20 passed, 0 failed"
echo "t=1 severity=fail fault=member-replace target=n2 what=x" >"$m/e-3n-s7/member-failures"
out=$("$tally" "$m" "$tmp/all-2")
check "a failed membership change fails its run" "  e-3n-s7 (member-failures)"
n=$((n + 1))
if [ "$st" -eq 1 ]; then echo "ok $n - exit 1 with a failed run"; else failed=1; echo "not ok $n - exit $st with a failed run"; fi
exit "$failed"
