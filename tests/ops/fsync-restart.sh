#!/usr/bin/env bash
# A restart after a failed sync, with no power cut in between, then a power
# cut (docs/chaos.md, what fsync-eio seed 27 found; docs/raft.md): one node
# (TLS off, loopback) on the chaos suite's forgetfs. Lock requests until
# its syncs fail and batond exits 1; the disk heals; batond starts again
# on the same directory (libraft's load then closes the open segment on
# what reads return) and serves more requests; kill -9, every unsynced
# write dropped, and a last start. Passes only if the last start serves,
# which needs every byte the second start's raft read to be on the disk.
# Before batond settled raft's files that start exited 3 ("... at byte N:
# entry count zero"). Prints one line:
#
#   PASS fsync-restart: ...
#   FAIL fsync-restart: REASON
#
#   tests/ops/fsync-restart.sh [--server PATH] [--still-failing]
#
#   --server PATH     the batond to run (default build/batond), e.g. an
#                     older build, to see the failure
#   --still-failing   also start batond once while syncs still fail: it
#                     must exit 1 with "cannot make raft's files durable"
#
# Needs root or FUSE rights, and a build in build/ (batond, batonctl and
# tests/chaos/forgetfs, which configure builds when it finds fuse3).
# Ports: BATON_BASE_PORT (default 23000) and the next one.
set -uo pipefail
name=fsync-restart
top=$(cd "$(dirname "$0")/../.." && pwd)
server=$top/build/batond
still=""
while [ $# -gt 0 ]; do
        case "$1" in
        --server) server=${2:?--server PATH}; shift 2 ;;
        --still-failing) still=1; shift ;;
        *) echo "usage: $0 [--server PATH] [--still-failing]" >&2; exit 2 ;;
        esac
done
ctl_bin=$top/build/batonctl
ff_bin=$top/build/tests/chaos/forgetfs
port=${BATON_BASE_PORT:-23000}
run=$(mktemp -d /tmp/baton-fsync-restart-XXXXXX)
pid=""
ffpid=""

fail() {
        echo "FAIL $name: $*"
        echo "  (run directory $run; node.log there)"
        exit 1
}

cleanup() {
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
        fi
        fusermount3 -u "$run/data" 2>/dev/null || umount "$run/data" 2>/dev/null
        if [ -n "$ffpid" ]; then
                kill -TERM "$ffpid" 2>/dev/null
                wait "$ffpid" 2>/dev/null
        fi
}
trap cleanup EXIT

for b in "$server" "$ctl_bin" "$ff_bin"; do
        [ -x "$b" ] || fail "$b is not built"
done
mkdir -p "$run/back" "$run/data"
"$ff_bin" "$run/back" "$run/data" -f >"$run/forgetfs.out" 2>&1 </dev/null &
ffpid=$!
for _ in $(seq 1 250); do
        [ -e "$run/data/.forgetfs" ] && break
        sleep 0.02
done
[ -e "$run/data/.forgetfs" ] || fail "forgetfs did not mount on $run/data"
cat >"$run/node.conf" <<EOF
id = 1
data-dir = $run/data
apply-log = $run/apply.log
member = 1 127.0.0.1:$port 127.0.0.1:$((port + 1))
tls = false
EOF

# forgetfs command $1; its counters go to run/forgetfs.log.
disk() {
        echo "$1" >"$run/data/.forgetfs"
        echo "after '$1': $(cat "$run/data/.forgetfs")" >>"$run/forgetfs.log"
}

start() {
        "$server" --config "$run/node.conf" >>"$run/node.log" 2>&1 &
        pid=$!
}

# Until the node's log says "serving" for the $1-th time (0), or it exits
# (its status) or 20 s pass (-1, still running).
serves() {
        local i
        for i in $(seq 1 200); do
                [ "$(grep -c 'serving as leader' "$run/node.log")" -ge "$1" ] && return 0
                if ! kill -0 "$pid" 2>/dev/null; then
                        wait "$pid"
                        return $?
                fi
                sleep 0.1
        done
        return 255
}

# Until the node exits, up to 10 s: its status, or 255.
exits() {
        local i
        for i in $(seq 1 100); do
                if ! kill -0 "$pid" 2>/dev/null; then
                        wait "$pid"
                        return $?
                fi
                sleep 0.1
        done
        return 255
}

acquire() {
        timeout 3 "$ctl_bin" --endpoints "127.0.0.1:$((port + 1))" \
                acquire "$1" --ttl 60000 >/dev/null 2>&1
}

start
serves 1 || fail "the first start did not serve (status $?)"
for i in $(seq 1 20); do acquire "a$i"; done
disk "fail-fsync 60000"
# Each request writes entries; the first failed sync stops batond.
for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        acquire "f$i"
done
exits
st=$?
[ "$st" = 1 ] || fail "batond did not exit 1 at the failed sync (status $st)"
if [ -n "$still" ]; then
        start
        exits
        st=$?
        [ "$st" = 1 ] || fail "a start while syncs fail: status $st, not 1"
        grep -q "cannot make raft's files durable before raft loads them: .*: fdatasync: Input/output error" "$run/node.log" ||
                fail "a start while syncs fail: no settle line in node.log"
fi
disk heal
start
serves 2 || fail "the restart after the heal did not serve (status $?)"
for i in $(seq 1 20); do acquire "b$i"; done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
disk drop
start
serves 3
st=$?
if [ "$st" != 0 ]; then
        fail "the start after the power cut: status $st: $(grep -a -o 'is damaged: [^;]*' "$run/node.log" | tail -n 1)"
fi
kill -TERM "$pid"
exits || fail "batond did not stop on SIGTERM"
cleanup
pid=""
ffpid=""
rm -rf "$run"
echo "PASS $name: exit 1 at the failed sync${still:+, exit 1 while syncs failed}, served after the heal and after the power cut"
