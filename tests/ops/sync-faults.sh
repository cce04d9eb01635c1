#!/usr/bin/env bash
# A failed sync of raft's metadata or of a snapshot's files on one node of
# three (docs/chaos.md, "Forgotten writes and failed syncs"; docs/raft.md):
# node 3 keeps its data directory on the chaos suite's forgetfs, the two
# others on plain directories, TLS off, on loopback. For each path:
#
#   metadata      node 3 follows; its metadata syncs fail; leadership moves
#                 to node 2 and node 1 is stopped (SIGSTOP), so that every
#                 entry committed needs node 3's acknowledgement; node 3
#                 must store the new term before it answers the new
#                 leader, and cannot
#   snapshot      node 3 follows; node 2 is stopped; its snapshot files'
#                 syncs fail while it takes snapshots of its own
#                 (snapshot-threshold 64)
#   snapshot-dir  as snapshot, but the sync of the directory after raft
#                 links a snapshot's files fails
#   install       node 3 is stopped while the leader takes snapshots, then
#                 resumed with its snapshot files' syncs failing: the
#                 leader's snapshot it must install cannot be stored
#   install-dir   as install, with the directory sync after the link
#
# Locks are acquired with batonctl throughout: an acquire that batonctl
# reports as granted is an acknowledged grant. Then the disk heals and the
# stopped node resumes; node 3, if it still runs, must catch up with the
# leader; it is killed (kill -9), forgets every write it never synced (a
# power cut) and starts again. Passes when:
#
#   - node 3 acknowledged nothing it did not store: every acknowledged
#     grant is held after the power cut, with node 1 (or node 2) stopped so
#     that node 3's copy counts, and node 3's apply log agrees with the
#     others' (the digests too: digest-interval 32);
#   - it did not crash (no signal) and its log names the failure in one
#     line (an error line when it stopped, a warning while raft retries);
#   - running on after the heal, it catches up (GET /ready 200, with
#     ready-max-lag 0: it has applied all the leader has committed), and
#     it starts again after the power cut and does so too.
#
# Prints a line per path, "sync-faults PATH: passed: ..." or "sync-faults
# PATH: FAILED: REASON", then the verdict, "PASS sync-faults: ..." or
# "FAIL sync-faults: ...", and exits 0 when every path passed.
#
#   tests/ops/sync-faults.sh [--server PATH] [--lie] [PATH...]
#
#   --server PATH   the batond to run (default build/batond), e.g. an older
#                   build, to see the failure
#   --lie           the negative control of the snapshot paths: node 3's
#                   failed snapshot syncs report success (forgetfs
#                   snapshot-lie), as if the node took a failed sync for a
#                   good one; they must fail
#   PATH...         the paths to run (default: all five)
#
# Needs root or FUSE rights, and a build in build/ (batond, batonctl and
# tests/chaos/forgetfs, which configure builds when it finds fuse3).
# Ports: BATON_BASE_PORT (default 23000): raft BASE+ID, clients
# BASE+100+ID, metrics BASE+200+ID. BATON_OPS_KEEP=1 keeps every run
# directory (a failed path's is always kept).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
server=$top/build/batond
paths=()
lie=""
while [ $# -gt 0 ]; do
        case "$1" in
        --server) server=${2:?--server PATH}; shift 2 ;;
        --lie) lie=1; shift ;;
        metadata | snapshot | snapshot-dir | install | install-dir) paths+=("$1"); shift ;;
        *) echo "usage: $0 [--server PATH] [--lie] [metadata|snapshot|snapshot-dir|install|install-dir]..." >&2; exit 2 ;;
        esac
done
[ ${#paths[@]} -gt 0 ] || paths=(metadata snapshot snapshot-dir install install-dir)
ctl_bin=$top/build/batonctl
ff_bin=$top/build/tests/chaos/forgetfs
checker=$top/build/tests/chaos/chaos-check
base=${BATON_BASE_PORT:-23000}
endpoints="127.0.0.1:$((base + 101)),127.0.0.1:$((base + 102)),127.0.0.1:$((base + 103))"
run=""
ffpid=""
pids=("" "" "" "")
verdict=""

for b in "$server" "$ctl_bin" "$ff_bin" "$checker"; do
        [ -x "$b" ] || { echo "FAIL sync-faults: $b is not built"; exit 1; }
done

cleanup() {
        local i
        for i in 1 2 3; do
                if [ -n "${pids[$i]}" ]; then
                        kill -CONT "${pids[$i]}" 2>/dev/null
                        kill -KILL "${pids[$i]}" 2>/dev/null
                        wait "${pids[$i]}" 2>/dev/null
                fi
                pids[i]=""
        done
        if [ -n "$run" ]; then
                fusermount3 -u "$run/n3/data" 2>/dev/null || umount "$run/n3/data" 2>/dev/null
        fi
        if [ -n "$ffpid" ]; then
                kill -TERM "$ffpid" 2>/dev/null
                wait "$ffpid" 2>/dev/null
        fi
        ffpid=""
}
trap cleanup EXIT

say() { echo "# $path: $*"; }

# The path's verdict; the caller returns after it.
fail() { verdict="FAILED: $*${problems:+; $problems} (run directory $run)"; }

# A failed check that lets the path go on: the verdict names them all.
problem() { problems="${problems:+$problems; }$*"; say "FAILED: $*"; }

# forgetfs command $1 on node 3; its counters go to run/forgetfs.log.
disk() {
        echo "$1" >"$run/n3/data/.forgetfs"
        echo "after '$1': $(cat "$run/n3/data/.forgetfs")" >>"$run/forgetfs.log"
}

counter() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" "$run/n3/data/.forgetfs"; }

start() {
        "$server" --config "$run/n$1.conf" >>"$run/n$1/node.log" 2>&1 &
        pids[$1]=$!
}

alive() { [ -n "${pids[$1]}" ] && kill -0 "${pids[$1]}" 2>/dev/null; }

# Until node $1 exits, up to $2 tenths of a second: its status, or 255.
exits() {
        local i
        for i in $(seq 1 "$2"); do
                if ! alive "$1"; then
                        wait "${pids[$1]}"
                        return $?
                fi
                sleep 0.1
        done
        return 255
}

ctl() { timeout 5 "$ctl_bin" --endpoints "$endpoints" "$@"; }

# The leader's id, from node $1's /ready (empty when it knows none).
leader_of() {
        curl -s -m 2 "http://127.0.0.1:$((base + 200 + $1))/ready" |
                sed -n 's/.*"leader":\([0-9]*\).*/\1/p'
}

# Until node $1 answers /ready 200, up to $2 tenths of a second.
ready() {
        local i
        for i in $(seq 1 "$2"); do
                curl -fs -m 2 -o /dev/null "http://127.0.0.1:$((base + 200 + $1))/ready" && return 0
                sleep 0.1
        done
        return 1
}

# Until some node leads and serves, up to 20 s: its id in $leader.
wait_leader() {
        local i n
        leader=""
        for i in $(seq 1 200); do
                for n in 1 2 3; do
                        alive "$n" || continue
                        if curl -fs -m 2 -o /dev/null "http://127.0.0.1:$((base + 200 + n))/ready" &&
                                [ "$(leader_of "$n")" = "$n" ]; then
                                leader=$n
                                return 0
                        fi
                done
                sleep 0.1
        done
        return 1
}

# Acquire lock $1 for a minute: an acknowledged grant goes to run/acked.
acquire() {
        if ctl acquire "$1" --detach --ttl 600000 >>"$run/ctl.log" 2>&1; then
                echo "$1" >>"$run/acked"
                return 0
        fi
        return 1
}

# Acquire locks $1-1 .. $1-$2 while node 3 runs, until three in a row
# are not granted (nothing commits: no use waiting out the rest).
acquire_during() {
        local i missed=0
        for i in $(seq 1 "$2"); do
                if acquire "$1-$i"; then
                        missed=0
                else
                        missed=$((missed + 1))
                fi
                alive 3 && [ "$missed" -lt 3 ] || break
        done
}

# Leadership to node $1, from whichever node leads.
transfer_to() {
        local i
        for i in $(seq 1 20); do
                ctl transfer "$1" >>"$run/ctl.log" 2>&1
                wait_leader && [ "$leader" = "$1" ] && return 0
                sleep 0.2
        done
        return 1
}

# Every acknowledged grant is held, answered by the cluster's leader.
all_held() {
        local name missing=0
        while read -r name; do
                if ! ctl holder "$name" 2>/dev/null | grep -q .; then
                        say "acknowledged grant of $name is not held"
                        missing=$((missing + 1))
                fi
        done <"$run/acked"
        [ "$missing" = 0 ]
}

# Compare the apply logs with chaos-check, the chaos suite's checker
# (docs/chaos.md), into run/check.out: S9 compares every index that two
# nodes both applied, and a restarted node's second application of an
# index with its first; S1 checks that no two grants of a lock overlap;
# S16 that no node log has a digest mismatch. (L3 wants every lock free
# at the end: these grants are held on purpose.)
apply_logs_agree() {
        local i
        for i in 1 2 3; do
                mkdir -p "$run/check/nodes/n$i"
                ln -sf "$run/n$i/apply.log" "$run/check/nodes/n$i/apply.log"
                ln -sf "$run/n$i/node.log" "$run/check/nodes/n$i/node.log"
        done
        "$checker" "$run/check" >"$run/check.out" 2>&1
        [ "$(grep -c -E '^(S1|S9|S16) PASS' "$run/check.out")" = 3 ]
}

setup() {
        local i threshold
        run=$(mktemp -d /tmp/baton-sync-faults-XXXXXX)
        for i in 1 2 3; do
                # On the install paths node 3 takes no snapshot of its own:
                # the one whose write fails is the leader's.
                threshold=64
                [ "$i" = 3 ] && [[ "$path" == install* ]] && threshold=1000000
                mkdir -p "$run/n$i/data"
                cat >"$run/n$i.conf" <<EOF
id = $i
data-dir = $run/n$i/data
apply-log = $run/n$i/apply.log
metrics-address = 127.0.0.1:$((base + 200 + i))
tls = false
snapshot-threshold = $threshold
snapshot-trailing = $((threshold / 2))
digest-interval = 32
ready-max-lag = 0
member = 1 127.0.0.1:$((base + 1)) 127.0.0.1:$((base + 101))
member = 2 127.0.0.1:$((base + 2)) 127.0.0.1:$((base + 102))
member = 3 127.0.0.1:$((base + 3)) 127.0.0.1:$((base + 103))
EOF
        done
        mkdir -p "$run/n3/back"
        "$ff_bin" "$run/n3/back" "$run/n3/data" -f >"$run/forgetfs.out" 2>&1 </dev/null &
        ffpid=$!
        for i in $(seq 1 250); do
                [ -e "$run/n3/data/.forgetfs" ] && break
                sleep 0.02
        done
        [ -e "$run/n3/data/.forgetfs" ] || { fail "forgetfs did not mount"; return 1; }
        : >"$run/acked"
        start 1
        start 2
        start 3
        wait_leader || { fail "no leader after the start"; return 1; }
        # Node 3 follows, and node 1 leads, where the path needs it.
        [ "$leader" = 1 ] || transfer_to 1 || { fail "no transfer to node 1"; return 1; }
        for i in $(seq 1 10); do acquire "before-$i"; done
        [ "$(wc -l <"$run/acked")" = 10 ] || { fail "the cluster did not grant before the fault"; return 1; }
}

# The fault itself, per path. Sets `stopped` (the node stopped with
# SIGSTOP meanwhile, resumed by heal_and_restart).
fault_metadata() {
        disk "fail-fsync 600000 metadata"
        transfer_to 2 || { fail "no transfer to node 2"; return 1; }
        stopped=1
        kill -STOP "${pids[1]}"
        # The new leader's first append tells node 3 of term T+1.
        acquire_during during 10
}

fault_snapshot() {
        local what=$1
        stopped=2
        kill -STOP "${pids[2]}"
        disk "fail-fsync 600000 $what"
        acquire_during during 80
}

fault_install() {
        local what=$1 i
        kill -STOP "${pids[3]}"
        for i in $(seq 1 80); do acquire "behind-$i"; done
        disk "fail-fsync 600000 $what"
        stopped=2
        kill -STOP "${pids[2]}"
        kill -CONT "${pids[3]}"
        acquire_during during 10
}

# Heal, resume the stopped node, power-cut node 3 and start it again;
# then stop the other follower so that node 3's copy counts.
heal_and_restart() {
        local st
        disk heal
        kill -CONT "${pids[$stopped]}"
        # A node that runs on must not stay behind: libraft 0.22.1 left one
        # whose snapshot install failed "installing" for good.
        if alive 3 && ! ready 3 300; then
                problem "node 3 runs on, but has not caught up 30 s after the heal: $(curl -s -m 2 "http://127.0.0.1:$((base + 203))/ready")"
        fi
        if alive 3; then
                kill -KILL "${pids[3]}"
                wait "${pids[3]}" 2>/dev/null
        else
                wait "${pids[3]}" 2>/dev/null
        fi
        disk drop
        start 3
        if ! ready 3 300; then
                exits 3 1
                st=$?
                fail "node 3 did not become ready after the heal and the power cut (status $st): $(grep -a -E 'error|refus' "$run/n3/node.log" | tail -n 1)"
                return 1
        fi
        # Node 3 holds the log the survivors' majority needs.
        wait_leader || { fail "no leader after node 3's restart"; return 1; }
        for i in 1 2; do
                [ "$i" = "$leader" ] || { kill -STOP "${pids[$i]}"; stopped=$i; }
        done
        wait_leader || { fail "no leader with node 3 and node $leader"; return 1; }
}

run_path() {
        local st lines acked_during i
        stopped=""
        problems=""
        setup || return 1
        case "$path" in
        metadata) fault_metadata ;;
        snapshot) fault_snapshot "snapshot${lie:+-lie}" ;;
        snapshot-dir) fault_snapshot snapshot-dir ;;
        install) fault_install "snapshot${lie:+-lie}" ;;
        install-dir) fault_install snapshot-dir ;;
        esac
        [ -z "$verdict" ] || return 1
        say "forgetfs: $(cat "$run/n3/data/.forgetfs")"
        [ "$(counter failed_fsyncs)" -gt 0 ] || { fail "no sync of node 3 failed: the fault did not happen"; return 1; }
        acked_during=$(grep -c -v '^before-\|^behind-' "$run/acked")
        if alive 3; then
                say "node 3 still runs; $acked_during grants acknowledged during the fault"
        else
                wait "${pids[3]}"
                st=$?
                say "node 3 exited with status $st; $acked_during grants acknowledged during the fault"
                [ "$st" -lt 128 ] || { fail "node 3 died of signal $((st - 128))"; return 1; }
        fi
        # raft says a failed snapshot write only at its retry, and stallwatch
        # a second or two later: up to 10 s for the line.
        for i in $(seq 1 100); do
                lines=$(grep -a -c -E 'raft could not|raft cannot write' "$run/n3/node.log")
                [ "$lines" -ge 1 ] && break
                sleep 0.1
        done
        say "node 3's lines about the failure: $lines"
        grep -a -m 2 -E 'raft could not|raft cannot write' "$run/n3/node.log" | sed 's/^/#   /'
        [ "$lines" -ge 1 ] || problem "node 3's log names no failure"
        heal_and_restart || return 1
        all_held || problem "an acknowledged grant was lost"
        for i in $(seq 1 5); do
                acquire "after-$i" || { problem "node 3 and node $leader grant nothing after the restart"; break; }
        done
        apply_logs_agree ||
                problem "the apply logs disagree: $(grep -E '^(S1|S9|S16) ' "$run/check.out" | grep -v PASS | head -n 2 | tr '\n' ' ')"
        if grep -a -q 'digest MISMATCH' "$run"/n*/node.log; then
                problem "a digest differed: $(grep -a -h 'digest MISMATCH' "$run"/n*/node.log | head -n 1)"
        fi
        if [ -n "$problems" ]; then
                verdict="FAILED: $problems (run directory $run)"
                return 1
        fi
        verdict="passed: $(wc -l <"$run/acked") grants acknowledged, all held after node 3's power cut; node 3 ${st:+exited $st and }restarted cleanly"
}

failed=()
for path in "${paths[@]}"; do
        verdict=""
        run_path
        [ -n "$verdict" ] || fail "stopped early"
        cleanup
        echo "sync-faults $path: $verdict"
        case "$verdict" in
        passed*) [ "${BATON_OPS_KEEP:-0}" = 1 ] || rm -rf "$run" ;;
        *) failed+=("$path") ;;
        esac
done
if [ ${#failed[@]} -gt 0 ]; then
        echo "FAIL sync-faults: ${failed[*]} failed, of ${paths[*]}${lie:+ (--lie)}"
        exit 1
fi
echo "PASS sync-faults: ${paths[*]}${lie:+ (--lie)}: every acknowledged grant kept, the failure named, a clean restart"
exit 0
