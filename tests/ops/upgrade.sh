#!/usr/bin/env bash
# A rolling upgrade from the last release to this build, as an operator
# runs it (docs/operations.md, "Upgrades"), under load, with the rollbacks
# the policy allows and refuses.
#
#   tests/ops/upgrade.sh [--keep]
#
# 1. Builds the release named last in tests/ops/releases (its commit, by
#    git archive: no tag needed) into a temporary directory: batond and
#    batonctl only.
# 2. Starts a 3-node TLS cluster of that release on 127.0.0.1 with an
#    apply log per node and a snapshot every 2048 entries, so that every node
#    takes snapshots during the run and restarted nodes may need one.
#    STATUS must report each node as the release (its version, or unknown
#    from a release before versions in STATUS).
# 3. Before the load, the two releases the other way round: one follower
#    runs this build (with digest-interval = 16 in its config), leads the
#    release's nodes for a few hundred entries, which must apply its
#    DIGEST entries and keep up, then goes back to the release on its data
#    directory, where it took no snapshot (the rollback the policy allows).
# 4. Runs this build's baton-bench against it (contended and uncontended
#    locks: the client protocol is the same), and upgrades one node at a
#    time, followers first and the leader last: SIGTERM (a leader hands
#    over first), wait for the exit, start this build's batond on the same
#    data directory and config, wait until it follows the leader and has
#    applied what the leader had committed. STATUS must report the new
#    release as this build's version. At least one node must be upgraded
#    on snapshots the release took.
# 5. Rolls one follower back to the release, on the data directory this
#    build wrote snapshots into. If this build writes a newer snapshot or
#    container version than the release reads (STATUS says which), the
#    release must refuse that directory at its start, with the line that
#    names the version, and leave it as it was: the follower then runs this
#    build again on it. Otherwise the release must run on it and catch up.
# 6. Passes with zero failed client operations and the apply logs of all
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
# What STATUS says the release runs: its version, but "unknown" from
# 0.1.0, which predates versions in STATUS.
old_says=$old_version
[ "$old_version" = 0.1.0 ] && old_says=unknown

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

# start I BATOND [CONFIG]: on node I's data directory, with its config
# (or CONFIG).
start() {
        local i=$1 bin=$2 conf=${3:-$tmp/node$1.conf}
        mkdir -p "$tmp/node$i"
        echo "=== upgrade.sh: $($bin --version) at $(date -u +%FT%TZ)" >>"$tmp/node$i.log"
        setsid "$bin" --config "$conf" >>"$tmp/node$i.log" 2>&1 </dev/null &
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

# expect_version I RELEASE SAYS: node I runs RELEASE, and STATUS must say
# SAYS.
expect_version() {
        local v
        v=$(version_of "$1")
        [ "$v" = "$3" ] ||
                fail "node $1 runs $2 but STATUS says version $v, not $3"
}

# formats_of I: "CONTAINER SNAPSHOT", the snapshot container and snapshot
# versions node I writes, as STATUS says (0.1.0 does not say: it writes
# container 1 and snapshot 11).
formats_of() {
        status_json | jq -r --argjson i "$1" '.[] | select(.id == $i)
            | "\(.formats.container // 1) \(.formats.snapshot // 11)"' 2>/dev/null
}

# wait_leader I: node I leads, as all three say. 30 s at most.
wait_leader() {
        local t
        for t in $(seq 1 300); do
                [ "$(leader)" = "$1" ] && return 0
                sleep 0.1
        done
        fail "node $1 is not the leader 30 s after batonctl transfer $1"
}

# snapshot_files I: node I's snapshot files, names and sizes.
snapshot_files() {
        find "$tmp/node$1/data" -name 'snapshot-*' -printf '%f %s\n' | sort
}

# The "index" of an apply log line.
index_of() {
        sed -n 's/^{"index":\([0-9]*\),.*/\1/p'
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
        expect_version "$i" "$old_version" "$old_says"
done
read -r old_container old_snapshot <<<"$(formats_of "$L")"
say "release $old_version serving, leader node $L (snapshot container $old_container, snapshots $old_snapshot)"

# --- This build leading the release, then back to the release ---------------

# Before the load, so that no node takes a snapshot meanwhile: follower F
# runs this build and leads the release's nodes through a few hundred
# entries. With digest-interval = 16 in its config (a key the release
# does not know, taken out again for the rollback, as docs/operations.md
# says), its DIGEST entries reach the release's nodes, which must apply
# them and keep up: what happens when a node of this build takes over in
# the middle of an upgrade. Then F goes back to the release on the data
# directory this build wrote, which holds no snapshot of this build.
F=""
for i in 1 2 3; do
        [ "$i" != "$L" ] && { F=$i; break; }
done
{
        cat "$tmp/node$F.conf"
        echo "digest-interval = 16"
} >"$tmp/node$F-new.conf"
touch "$tmp/mixed"
say "node $F (follower) to $new_version with digest-interval = 16, then leading the $old_version nodes"
stop "$F"
start "$F" "$new_batond" "$tmp/node$F-new.conf"
wait_ready "$F"
expect_version "$F" "$new_version" "$new_version"
"$ctl" transfer "$F" >"$tmp/transfer.out" 2>&1 ||
        fail "batonctl transfer $F: $(tr '\n' ' ' <"$tmp/transfer.out")"
wait_leader "$F"
"$bench" --workload uncontended --clients 1 --duration 3 --warmup 0 --rate 20 \
        --prefix upg-m- --ttl-ms 10000 --op-timeout-ms 30000 \
        >"$tmp/bench-mixed.json" 2>"$tmp/bench-mixed.err" ||
        fail "baton-bench under node $F ($new_version) failed: $(tail -n 3 "$tmp/bench-mixed.err" | tr '\n' ' ')"
js=$(tail -n 1 "$tmp/bench-mixed.json")
[ "$(jq -r '.errors' <<<"$js" 2>/dev/null)" = 0 ] && [ "$(jq -r '.ops' <<<"$js")" -gt 0 ] ||
        fail "baton-bench under node $F ($new_version): $js"
for i in 1 2 3; do
        wait_ready "$i"
done
digests=$(grep -c '"event":"ENTRY","cause":"DIGEST"' "$tmp/run/nodes/n$F/apply.log")
last_digest=$(grep '"event":"ENTRY","cause":"DIGEST"' "$tmp/run/nodes/n$F/apply.log" |
        tail -n 1 | index_of)
[ "$digests" -gt 0 ] ||
        fail "node $F led with digest-interval = 16 and applied no DIGEST entry"
for i in 1 2 3; do
        [ "$i" = "$F" ] && continue
        grep -q "^{\"index\":$last_digest,.*\"event\":\"ENTRY\"" "$tmp/run/nodes/n$i/apply.log" ||
                fail "node $i ($old_version) has not applied DIGEST entry $last_digest"
done
[ -z "$(find "$tmp/node$F/data" -name 'snapshot-*' -newer "$tmp/mixed")" ] ||
        fail "node $F took a snapshot while it ran $new_version, before the load: the rollback below needs a directory without one (BATON_UPGRADE_SNAPSHOTS too low)"
say "node $F led; the $old_version nodes applied its $digests DIGEST entries (the last at index $last_digest) and kept up"
stop "$F"
start "$F" "$old_batond"
wait_ready "$F"
expect_version "$F" "$old_version" "$old_says"
mixed_note="node $F ran $new_version and led the $old_version nodes through $digests DIGEST entries, then went back to $old_version (no snapshot taken)"
say "node $F runs $old_version again and has caught up"
L=$(leader)

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
on_snapshots=0
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
        # The snapshots the release took there, which this build loads.
        snaps=$(find "$tmp/node$next/data" -name 'snapshot-*' ! -name '*.meta' | wc -l)
        [ "$snaps" -gt 0 ] && on_snapshots=$((on_snapshots + 1))
        start "$next" "$new_batond"
        wait_ready "$next"
        ms=$((($(date +%s%N) - t0) / 1000000))
        expect_version "$next" "$new_version" "$new_version"
        say "node $next runs $new_version and has caught up (${ms} ms from SIGTERM, $snaps snapshots of $old_version on its disk)"
        order="$order $next($role)"
done
touch "$tmp/upgraded"
# The test must have shown that this build reads the release's snapshots.
[ "$on_snapshots" -gt 0 ] ||
        fail "no node had a snapshot of $old_version on its disk when it was upgraded: more load (BATON_UPGRADE_LOAD_S) or lower BATON_UPGRADE_SNAPSHOTS"

# --- Rollback of one follower -------------------------------------------------

# Let the follower take a snapshot in the new release first, so that the
# release has to read what this build wrote, or refuse it.
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
read -r new_container new_snapshot <<<"$(formats_of "$L")"
[ -n "$new_snapshot" ] || fail "node $L did not say which formats it writes"
if [ "$new_container" -gt "$old_container" ] || [ "$new_snapshot" -gt "$old_snapshot" ]; then
        # The policy: the release refuses a snapshot version it does not
        # read, at its start, with a line that says so, and changes
        # nothing; the node runs this build again on the same directory.
        if [ "$new_container" -gt "$old_container" ]; then
                want="its container is version $new_container, and this batond ($old_version) reads version $old_container"
        else
                want="it is in snapshot format version $new_snapshot, and this batond ($old_version) reads versions 1 to $old_snapshot"
        fi
        say "rolling node $back (follower) back to $old_version on the snapshots $new_version wrote: it must refuse them"
        stop "$back"
        before=$(snapshot_files "$back")
        echo "=== upgrade.sh: $($old_batond --version) at $(date -u +%FT%TZ), expected to refuse" >>"$tmp/node$back.log"
        timeout 60 "$old_batond" --config "$tmp/node$back.conf" >"$tmp/refused.out" 2>&1 </dev/null
        rc=$?
        cat "$tmp/refused.out" >>"$tmp/node$back.log"
        [ "$rc" != 124 ] ||
                fail "$old_version ran for 60 s on node $back's data directory, with snapshots of container $new_container and snapshot format $new_snapshot"
        [ "$rc" != 0 ] ||
                fail "$old_version exited 0 on node $back's data directory instead of refusing it"
        grep -qF "$want" "$tmp/refused.out" ||
                fail "$old_version refused node $back's data directory (exit $rc) without saying \"$want\": $(tail -n 2 "$tmp/refused.out" | tr '\n' ' ')"
        [ "$(snapshot_files "$back")" = "$before" ] ||
                fail "$old_version changed node $back's snapshots while refusing them"
        say "$old_version refused node $back's data directory (exit $rc): $(grep -F "$want" "$tmp/refused.out" | sed 's/^[^ ]* //' | head -c 300)"
        start "$back" "$new_batond"
        wait_ready "$back"
        expect_version "$back" "$new_version" "$new_version"
        say "node $back runs $new_version again on it and has caught up"
        rollback_note="rollback of node $back to $old_version refused as the policy says (exit $rc, \"$want\"), node $back back on $new_version"
else
        say "rolling node $back (follower) back to $old_version on the data $new_version wrote"
        stop "$back"
        start "$back" "$old_batond"
        wait_ready "$back"
        expect_version "$back" "$old_version" "$old_says"
        say "node $back runs $old_version again and has caught up"
        rollback_note="rollback of node $back to $old_version"
fi

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

echo "PASS upgrade: $old_version -> $new_version, 3-node TLS cluster; $mixed_note; order$order, $on_snapshots of 3 upgraded on snapshots of $old_version; $rollback_note: $ops client ops, 0 failed, longest client gap ${gap} ms;${s9#S9 PASS}; $build_note, total $(($(date +%s) - t_start))s"
exit 0
