#!/usr/bin/env bash
# A rolling upgrade from the last release to this build, as an operator
# runs it (docs/operations.md, "Upgrades"), under load, then a rollback of
# one node.
#
#   tests/ops/upgrade.sh [--keep]
#
# 1. Builds the release named last in tests/ops/releases (its commit, by
#    git archive: no tag needed) into a temporary directory: batond and
#    batonctl only.
# 2. Starts a 3-node TLS cluster of that release on 127.0.0.1 with an
#    apply log per node and a snapshot every 2048 entries, so that every node
#    takes snapshots during the run and restarted nodes may need one.
# 3. Runs this build's baton-bench against it (contended and uncontended
#    locks: the client protocol is the same), and upgrades one node at a
#    time, followers first and the leader last: SIGTERM (a leader hands
#    over first), wait for the exit, start this build's batond on the same
#    data directory and config, wait until it follows the leader and has
#    applied what the leader had committed. STATUS must report the old
#    release as unknown and the new one as this build's version.
# 4. Rolls one follower back to the release, on the data directory this
#    build wrote snapshots into (the policy says it can: both write the
#    same formats), and waits until it has caught up.
# 5. Passes with zero failed client operations and the apply logs of all
#    nodes agreeing, index by index (chaos-check's S9).
#
# Prints "PASS upgrade: ..." or "FAIL upgrade: REASON" last; exit 0 or 1.
# Everything it starts is stopped on exit, and the temporary directory
# removed (kept with --keep, or on failure with BATON_UPGRADE_KEEP=1).
#
# Environment:
#   BATON_BASE_PORT            ports: raft base+i, client base+100+i,
#                              metrics base+200+i (default 24000)
#   BATON_BUILD_DIR            this build (default build/): batond,
#                              batonctl, baton-bench, tests/chaos/chaos-check
#   BATON_UPGRADE_OLD_BUILD    a directory with the release's batond
#                              already built (skips step 1)
#   BATON_UPGRADE_NEW_BATOND   the batond to upgrade to (default: this
#                              build's); the negative control passes a
#                              variant
#   BATON_UPGRADE_LOAD_S       seconds of load (default 90); the upgrade
#                              and the rollback must finish within it
#   BATON_UPGRADE_SNAPSHOTS    "THRESHOLD TRAILING" for every node
#                              (default "2048 1024"); "512 64" makes
#                              snapshots, and installs of the leader's,
#                              far more frequent
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BATON_BUILD_DIR:-$root/build}
base=${BATON_BASE_PORT:-24000}
load_s=${BATON_UPGRADE_LOAD_S:-90}
read -r snap_threshold snap_trailing <<<"${BATON_UPGRADE_SNAPSHOTS:-2048 1024}"
keep=${BATON_UPGRADE_KEEP:-0}
[ "${1:-}" = "--keep" ] && keep=1

ctl=$build/batonctl
bench=$build/baton-bench
checker=$build/tests/chaos/chaos-check
new_batond=${BATON_UPGRADE_NEW_BATOND:-$build/batond}

tmp=""
declare -A pids=()
bench_pids=()
t_start=$(date +%s)

say() { echo "upgrade: $*"; }

cleanup() {
        local i p t
        for p in "${bench_pids[@]}"; do
                kill -TERM "$p" 2>/dev/null
        done
        for i in "${!pids[@]}"; do
                kill -TERM "${pids[$i]}" 2>/dev/null
        done
        for i in "${!pids[@]}"; do
                p=${pids[$i]}
                for t in $(seq 1 50); do
                        kill -0 "$p" 2>/dev/null || break
                        sleep 0.1
                done
                kill -KILL "$p" 2>/dev/null
        done
        wait 2>/dev/null
        if [ -n "$tmp" ]; then
                if [ "$keep" = 1 ]; then
                        echo "upgrade: kept $tmp"
                else
                        rm -rf "$tmp"
                fi
        fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
        local i
        echo "upgrade: --- what the nodes said last ---"
        for i in 1 2 3; do
                [ -f "$tmp/node$i.log" ] && tail -n 5 "$tmp/node$i.log" |
                        sed "s/^/upgrade: node $i: /"
        done
        echo "FAIL upgrade: $*"
        exit 1
}

for f in "$ctl" "$bench" "$checker" "$new_batond"; do
        [ -x "$f" ] || { echo "FAIL upgrade: $f is missing: build first (make -C build)"; exit 1; }
done

# --- The release to upgrade from ---------------------------------------------

line=$(grep -v '^#' "$root/tests/ops/releases" | grep . | tail -n 1)
old_version=${line%% *}
old_commit=${line##* }
new_version=$("$new_batond" --version | awk '{print $2}')
tmp=$(mktemp -d /tmp/baton-upgrade.XXXXXX)

build_note=""
if [ -n "${BATON_UPGRADE_OLD_BUILD:-}" ]; then
        old=$BATON_UPGRADE_OLD_BUILD
        build_note="release build reused from $old"
        say "release $old_version: using the build in $old"
else
        git -C "$root" cat-file -e "$old_commit^{commit}" 2>/dev/null ||
                fail "release $old_version's commit $old_commit is not in this clone (a shallow one? git fetch --unshallow)"
        say "building release $old_version ($old_commit) in $tmp/old"
        t0=$(date +%s)
        mkdir -p "$tmp/old-src"
        git -C "$root" archive "$old_commit" | tar -x -C "$tmp/old-src" ||
                fail "git archive $old_commit"
        (cd "$tmp/old-src" && ./autogen.sh >"$tmp/old-build.log" 2>&1 &&
                mkdir -p build && cd build &&
                ../configure >>"$tmp/old-build.log" 2>&1 &&
                make -j2 batond batonctl >>"$tmp/old-build.log" 2>&1) ||
                fail "building release $old_version failed (see $tmp/old-build.log; BATON_UPGRADE_KEEP=1 keeps it)"
        old=$tmp/old-src/build
        build_s=$(($(date +%s) - t0))
        build_note="release $old_version built in ${build_s}s"
        say "built release $old_version in ${build_s}s"
fi
old_batond=$old/batond
[ -x "$old_batond" ] || fail "no batond in $old"
"$old_batond" --version | grep -q "^batond $old_version " ||
        fail "$old_batond is not release $old_version: $("$old_batond" --version)"

# --- The cluster -------------------------------------------------------------

"$root/scripts/certs" "$tmp/tls" --nodes 3 >/dev/null ||
        fail "scripts/certs failed"
for i in 1 2 3; do
        for p in $((base + i)) $((base + 100 + i)) $((base + 200 + i)); do
                ! ss -Htln "sport = :$p" 2>/dev/null | grep -q . ||
                        fail "port $p is in use: set BATON_BASE_PORT"
        done
done
endpoints="127.0.0.1:$((base + 101)),127.0.0.1:$((base + 102)),127.0.0.1:$((base + 103))"
export BATON_ENDPOINTS=$endpoints
export BATON_CACERT=$tmp/tls/ca.crt BATON_CERT=$tmp/tls/admin.crt
export BATON_KEY=$tmp/tls/admin.key

# Only keys both releases know: the config stays as it is across the
# upgrade, as an operator's would.
for i in 1 2 3; do
        mkdir -p "$tmp/run/nodes/n$i"
        {
                echo "id = $i"
                echo "data-dir = $tmp/node$i/data"
                echo "metrics-address = 127.0.0.1:$((base + 200 + i))"
                echo "apply-log = $tmp/run/nodes/n$i/apply.log"
                for j in 1 2 3; do
                        echo "member = $j 127.0.0.1:$((base + j)) 127.0.0.1:$((base + 100 + j))"
                done
                echo "tls-ca = $tmp/tls/ca.crt"
                echo "tls-cert = $tmp/tls/node$i.crt"
                echo "tls-key = $tmp/tls/node$i.key"
                echo "role = admin admin"
                echo "snapshot-threshold = $snap_threshold"
                echo "snapshot-trailing = $snap_trailing"
        } >"$tmp/node$i.conf"
done

# start I BATOND: on node I's data directory and config.
start() {
        local i=$1 bin=$2
        mkdir -p "$tmp/node$i"
        echo "=== upgrade.sh: $($bin --version) at $(date -u +%FT%TZ)" >>"$tmp/node$i.log"
        setsid "$bin" --config "$tmp/node$i.conf" >>"$tmp/node$i.log" 2>&1 </dev/null &
        pids[$i]=$!
        ran[$i]=$bin
}
declare -A ran=()

# stop I: SIGTERM (a leader transfers leadership first), wait for the exit.
stop() {
        local i=$1 p=${pids[$1]} t
        kill -TERM "$p" 2>/dev/null
        for t in $(seq 1 300); do
                kill -0 "$p" 2>/dev/null || break
                sleep 0.1
        done
        kill -0 "$p" 2>/dev/null && fail "node $i ignored SIGTERM for 30 s"
        wait "$p" 2>/dev/null
        local rc=$?
        unset "pids[$i]"
        [ "$rc" = 0 ] || fail "node $i exited with status $rc on SIGTERM"
}

# Every node's status, as JSON (a node that does not answer has zeros).
status_json() {
        "$ctl" --json status 2>/dev/null
}

# The id of the node all three name as leader (and which says it leads),
# else nothing.
leader() {
        status_json | jq -r '
            [.[] | select(.role == "leader")] as $l
            | if ($l | length) == 1 and
                 ([.[] | select(.leader == $l[0].id)] | length) == 3
              then $l[0].id else empty end' 2>/dev/null
}

# wait_ready I: node I follows (or is) a leader and has applied at least
# what a leader had committed when the wait began (the first time one is
# known): caught up with the cluster as it was when it came back. 60 s at
# most.
wait_ready() {
        local i=$1 t js want=0 got
        for t in $(seq 1 600); do
                kill -0 "${pids[$i]}" 2>/dev/null ||
                        fail "node $i ($("${ran[$i]}" --version | cut -d' ' -f1-2)) exited: $(tail -n 2 "$tmp/node$i.log" | tr '\n' ' ')"
                js=$(status_json)
                if [ "$want" = 0 ]; then
                        want=$(jq -r '[.[] | select(.role == "leader")][0].commit // 0' <<<"$js" 2>/dev/null)
                        want=${want:-0}
                fi
                got=$(jq -r --argjson i "$i" '.[] | select(.id == $i and .leader != 0) | .applied' <<<"$js" 2>/dev/null)
                if [ -n "$got" ] && [ "$want" != 0 ] && [ "$got" -ge "$want" ]; then
                        return 0
                fi
                sleep 0.1
        done
        fail "node $i did not catch up within 60 s"
}

# version_of I: the release node I reports in STATUS ("unknown" if none).
version_of() {
        status_json | jq -r --argjson i "$1" \
                '.[] | select(.id == $i) | .version // "unknown"' 2>/dev/null
}

say "starting release $old_version on 3 nodes (ports from $base)"
for i in 1 2 3; do
        start "$i" "$old_batond"
done
for t in $(seq 1 300); do
        [ -n "$(leader)" ] && break
        sleep 0.1
done
L=$(leader)
[ -n "$L" ] || fail "the $old_version cluster elected no leader in 30 s"
for i in 1 2 3; do
        wait_ready "$i"
        v=$(version_of "$i")
        [ "$v" = unknown ] ||
                fail "node $i runs $old_version but STATUS says version $v"
done
say "release $old_version serving, leader node $L"

# --- Load --------------------------------------------------------------------

"$bench" --workload contended --clients 3 --duration "$load_s" --warmup 1 \
        --prefix upg-c- --ttl-ms 10000 --op-timeout-ms 30000 \
        >"$tmp/bench-contended.json" 2>"$tmp/bench-contended.err" &
bench_pids+=($!)
"$bench" --workload uncontended --clients 2 --duration "$load_s" --warmup 1 \
        --prefix upg-u- --ttl-ms 10000 --op-timeout-ms 30000 \
        >"$tmp/bench-uncontended.json" 2>"$tmp/bench-uncontended.err" &
bench_pids+=($!)
t_load=$(date +%s)
sleep 4

# --- Upgrade, followers first, the leader last ------------------------------

order=""
for step in 1 2 3; do
        L=$(leader)
        for t in $(seq 1 100); do
                [ -n "$L" ] && break
                sleep 0.1
                L=$(leader)
        done
        [ -n "$L" ] || fail "no leader before upgrading a node"
        next=""
        for i in 1 2 3; do
                [ "${ran[$i]}" = "$old_batond" ] || continue
                # A follower while one is left; the leader last.
                if [ "$i" != "$L" ] || [ "$step" = 3 ]; then
                        next=$i
                        break
                fi
        done
        [ -n "$next" ] || fail "nothing left to upgrade at step $step"
        role=follower
        [ "$next" = "$L" ] && role=leader
        say "upgrading node $next ($role) to $new_version"
        t0=$(date +%s%N)
        stop "$next"
        start "$next" "$new_batond"
        wait_ready "$next"
        ms=$((($(date +%s%N) - t0) / 1000000))
        v=$(version_of "$next")
        [ "$v" = "$new_version" ] ||
                fail "node $next runs $new_version but STATUS says version $v"
        say "node $next runs $new_version and has caught up (${ms} ms from SIGTERM)"
        order="$order $next($role)"
done
touch "$tmp/upgraded"

# --- Rollback of one follower -------------------------------------------------

# Let every node take a snapshot in the new release first, so the one
# rolled back has to read what this build wrote.
L=$(leader)
back=""
for i in 1 2 3; do
        [ "$i" != "$L" ] && { back=$i; break; }
done
for t in $(seq 1 600); do
        [ -n "$(find "$tmp/node$back/data" -name 'snapshot-*' -newer "$tmp/upgraded" 2>/dev/null)" ] && break
        sleep 0.1
done
[ -n "$(find "$tmp/node$back/data" -name 'snapshot-*' -newer "$tmp/upgraded")" ] ||
        fail "node $back took no snapshot in 60 s after the upgrade"
say "rolling node $back (follower) back to $old_version on the data $new_version wrote"
stop "$back"
start "$back" "$old_batond"
wait_ready "$back"
say "node $back runs $old_version again and has caught up"

# --- Verdict -----------------------------------------------------------------

elapsed=$(($(date +%s) - t_load))
[ "$elapsed" -lt "$load_s" ] ||
        fail "the upgrade took ${elapsed}s, longer than the load (${load_s}s): raise BATON_UPGRADE_LOAD_S"
say "waiting for the load to end ($((load_s - elapsed + 1))s)"
bench_ok=1
for p in "${bench_pids[@]}"; do
        wait "$p" || bench_ok=0
done
bench_pids=()
errors=0
ops=0
gap=0
for w in contended uncontended; do
        js=$(tail -n 1 "$tmp/bench-$w.json")
        e=$(jq -r '.errors' <<<"$js" 2>/dev/null)
        o=$(jq -r '.ops' <<<"$js" 2>/dev/null)
        g=$(jq -r '.max_gap_ms' <<<"$js" 2>/dev/null)
        [ -n "$e" ] && [ "$e" != null ] ||
                fail "baton-bench ($w) printed no result: $(tail -n 3 "$tmp/bench-$w.err" | tr '\n' ' ')"
        errors=$((errors + e))
        ops=$((ops + o))
        gap=$(awk -v a="$gap" -v b="$g" 'BEGIN { print (b > a) ? b : a }')
done
[ "$errors" = 0 ] ||
        fail "$errors client operations failed during the upgrade: $(grep -h 'failed' "$tmp"/bench-*.err | head -n 3 | tr '\n' ' ')"
[ "$bench_ok" = 1 ] || fail "baton-bench exited with an error"
[ "$ops" -gt 0 ] || fail "no client operation completed"

# Every node applies everything before the apply logs are compared.
for i in 1 2 3; do
        wait_ready "$i"
done
for i in 1 2 3; do
        stop "$i"
done
cat >"$tmp/run/plan" <<EOF
seed=0
nemesis=upgrade
nodes=3
time_s=$load_s
ttl_ms=10000
workloads=none
network=loopback
clock_fault=0
fencing=on
server=batond
EOF
mkdir -p "$tmp/run/history"
"$checker" "$tmp/run" >"$tmp/check.out" 2>&1
s9=$(grep -E '^S9 ' "$tmp/run/results" 2>/dev/null | head -n 1)
case "$s9" in
"S9 PASS"*) ;;
*) fail "the apply logs disagree: ${s9:-chaos-check gave no S9 verdict: $(tail -n 3 "$tmp/check.out" | tr '\n' ' ')}" ;;
esac

echo "PASS upgrade: $old_version -> $new_version, 3-node TLS cluster, order$order, rollback of node $back to $old_version: $ops client ops, 0 failed, longest client gap ${gap} ms;${s9#S9 PASS}; $build_note, total $(($(date +%s) - t_start))s"
exit 0
