# shellcheck shell=bash disable=SC2034,SC2154
# Shared by the operator procedures in tests/ops/: a local TLS cluster
# (scripts/cluster in a directory of the run's own), baton-bench as the
# users' load, node restarts timed step by step, and the verdict line.
# Sourced by the scripts, never run; they set `name` before sourcing it.
#
# Every procedure prints one last line, "PASS NAME: ..." or "FAIL NAME:
# REASON", and exits 0 or 1. Whatever stops a script early (a command
# that fails under set -e, Ctrl-C) still ends with a FAIL line, and the
# EXIT trap stops every process the script started.
#
# Environment (each script's --help lists its own flags):
#   BATON_BASE_PORT   ports: raft BASE+ID, clients BASE+100+ID, metrics
#                     BASE+200+ID (default 23000)
#   BATON_OPS_KEEP=1  keep the run directory (configs, node logs, apply
#                     logs, baton-bench's output) after a PASS too; a FAIL
#                     always keeps it

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$root/build"
ctl="$build/batonctl"
bench="$build/baton-bench"
checker="$build/tests/chaos/chaos-check"

# The cluster is Baton as users run it: TLS on, the default settings, and
# an apply log per node for comparing what each applied.
unset BATON_TLS BATON_NODE_CONFIG
export BATON_BASE_PORT=${BATON_BASE_PORT:-23000}
export BATON_APPLY_LOG=1
work=$(mktemp -d "${TMPDIR:-/tmp}/baton-ops-$name.XXXXXX")
export BATON_CLUSTER_DIR="$work/cluster"
state=$BATON_CLUSTER_DIR
bench_pids=()
extra_pids=()
verdict=""

now_ms() { date +%s%3N; }

say() { echo "$name: $*"; }

# The verdict: printed once, last.
pass() {
        verdict="PASS $name: $*"
        exit 0
}

fail() {
        verdict="FAIL $name: $*"
        exit 1
}

on_exit() {
        local rc=$? pid
        trap - EXIT INT TERM
        for pid in "${bench_pids[@]}" "${extra_pids[@]}"; do
                kill -TERM "$pid" 2>/dev/null || true
        done
        wait 2>/dev/null || true
        if [ -f "$state/nodes" ]; then
                "$root/scripts/cluster" down >/dev/null 2>&1 || true
        fi
        for pid in "${extra_pids[@]}"; do
                kill -KILL "$pid" 2>/dev/null || true
        done
        if [ -z "$verdict" ]; then
                verdict="FAIL $name: stopped early (exit status $rc; see $work)"
                rc=1
        fi
        if [ "$rc" -eq 0 ] && [ "${BATON_OPS_KEEP:-0}" != 1 ]; then
                rm -rf "$work"
        else
                echo "$name: run directory kept: $work"
        fi
        echo "$verdict"
        exit "$rc"
}
trap on_exit EXIT
trap 'fail "interrupted"' INT TERM

need_build() {
        local f
        for f in "$build/batond" "$ctl" "$bench" "$checker"; do
                [ -x "$f" ] || fail "$f is not built (./autogen.sh; cd build; ../configure; make; make check TESTS=)"
        done
}

metrics_url() { echo "http://127.0.0.1:$((BATON_BASE_PORT + 200 + $1))"; }
client_address() { echo "127.0.0.1:$((BATON_BASE_PORT + 100 + $1))"; }
raft_address() { echo "127.0.0.1:$((BATON_BASE_PORT + $1))"; }

# Build if needed, start the 3-node TLS cluster, point this shell's
# clients at it, and set $leader to its leader's id.
cluster_up() {
        need_build
        "$root/scripts/cluster" up >"$work/cluster-up.log" 2>&1 ||
                fail "scripts/cluster up failed: $(tail -n 3 "$work/cluster-up.log" | tr '\n' ' ')"
        eval "$("$root/scripts/cluster" env)"
        export BATON_ENDPOINTS
        leader=$(leader_id)
        [ -n "$leader" ] || fail "no leader after scripts/cluster up"
}

node_pid() { cat "$state/node$1.pid" 2>/dev/null || true; }

# Whether process $1 still runs. A zombie whose other threads still run
# does: after SIGKILL the main thread is a zombie at once, while a thread
# of libuv's pool may still be in an fsync, and the process's sockets
# (its ports) close only when the last thread has gone.
running() {
        local st tasks
        st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
        [ -n "$st" ] || return 1
        [ "$st" = Z ] || return 0
        tasks=$(find "/proc/$1/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
        [ "$tasks" -gt 1 ]
}

# Wait up to $2 ms for process $1 to exit.
wait_exit() {
        local end=$(($(now_ms) + $2))
        while running "$1"; do
                [ "$(now_ms)" -lt "$end" ] || return 1
                sleep 0.02
        done
}

# Wait up to $2 ms for node $1's GET /ready to answer 200.
wait_ready() {
        local end=$(($(now_ms) + $2))
        until curl -fsS -m 1 "$(metrics_url "$1")/ready" >/dev/null 2>&1; do
                [ "$(now_ms)" -lt "$end" ] || return 1
                sleep 0.05
        done
}

# The id of the node that leads, from STATUS (empty if none is known).
leader_id() {
        "$ctl" --json --timeout 1000 status 2>/dev/null |
                jq -r '[.[] | select(.role == "leader") | .id] | first // empty' 2>/dev/null || true
}

# Wait up to $1 ms until every endpoint answers STATUS naming one leader
# and has applied what that leader had committed when the wait began.
wait_converged() {
        local end=$(($(now_ms) + $1)) target="" out
        while :; do
                out=$("$ctl" --json --timeout 1000 status 2>/dev/null || true)
                if [ -z "$target" ]; then
                        target=$(jq -r '[.[] | select(.role == "leader") | .commit] | first // empty' <<<"$out" 2>/dev/null || true)
                fi
                if [ -n "$target" ] && jq -e --argjson t "$target" '
                        length > 0 and
                        ([.[] | .leader] | unique | length == 1 and .[0] != 0) and
                        all(.[]; .applied != null and .applied >= $t)' \
                        <<<"$out" >/dev/null 2>&1; then
                        return 0
                fi
                [ "$(now_ms)" -lt "$end" ] || return 1
                sleep 0.2
        done
}

# Start the users' load: baton-bench's uncontended workload (each client a
# lock of its own) and its contended one (every client on one lock), each
# with $1 clients for $2 seconds of measurement after a 1 s warmup, in the
# background. Sets bench_window_start and bench_window_end (epoch ms).
bench_start() {
        local clients=$1 duration=$2 w t0
        t0=$(now_ms)
        for w in uncontended contended; do
                "$bench" --workload "$w" --clients "$clients" \
                        --duration "$duration" --warmup 1 \
                        --prefix "ops-$name-$w" \
                        >"$work/bench-$w.json" 2>"$work/bench-$w.err" &
                bench_pids+=($!)
        done
        bench_window_start=$((t0 + 1000))
        bench_window_end=$((t0 + 1000 + duration * 1000))
}

# Wait for baton-bench to finish; sets bench_ops, bench_errors,
# bench_gap_ms (the longest any client went without completing an
# operation) and bench_summary.
bench_wait() {
        local pid w f rc=0
        for pid in "${bench_pids[@]}"; do
                wait "$pid" || rc=$?
        done
        bench_pids=()
        [ "$rc" -eq 0 ] || fail "baton-bench exited with status $rc ($(cat "$work"/bench-*.err | head -n 3 | tr '\n' ' '))"
        bench_ops=0 bench_errors=0 bench_gap_ms=0 bench_summary=""
        for w in uncontended contended; do
                f="$work/bench-$w.json"
                jq -e '.errors != null' "$f" >/dev/null 2>&1 ||
                        fail "baton-bench $w printed no result ($f)"
                read -r ops errors gap sys_gap sys_at < <(jq -r \
                        '"\(.ops) \(.errors) \(.max_gap_ms) \(.sys_gap_ms) \(.sys_gap_at_s)"' "$f")
                bench_ops=$((bench_ops + ops))
                bench_errors=$((bench_errors + errors))
                bench_gap_ms=$(awk -v a="$bench_gap_ms" -v b="$gap" 'BEGIN { print (b > a ? b : a) }')
                bench_summary="$bench_summary${bench_summary:+; }$w: $ops ops, $errors errors, longest client gap ${gap} ms, no client completed for ${sys_gap} ms at ${sys_at} s"
        done
}

# The first errors baton-bench logged, on one line.
bench_first_errors() {
        cat "$work"/bench-*.err 2>/dev/null | grep -m 3 'failed' | tr '\n' ';' || true
}

# Compare the apply logs of the nodes named in $@ with chaos-check, the
# chaos suite's checker (docs/chaos.md): S9 compares every index that two
# nodes both applied, event by event, and a restarted node's second
# application of an index with its first; the checkers that read apply
# logs alone (S1 no two grants of a lock overlap, S8 queue order, S10,
# L3) run too. Sets applylog_verdict; returns chaos-check's status.
compare_apply_logs() {
        local run="$work/check" i st=0
        rm -rf "$run"
        for i in "$@"; do
                mkdir -p "$run/nodes/n$i"
                ln -s "$state/node$i/apply.log" "$run/nodes/n$i/apply.log"
        done
        "$checker" "$run" >"$work/check.out" 2>&1 || st=$?
        applylog_verdict=$(grep -m 1 '^S9 ' "$work/check.out" || echo "S9: no verdict")
        return "$st"
}

# The verdict of a procedure run under load, once baton-bench is done and
# the cluster down: FAIL on any failed operation or any disagreement
# between the apply logs of the nodes named after the first two
# arguments, else PASS. $1 says what was done, $2 how each step went.
verdict_under_load() {
        local what=$1 steps=$2 applylog_ok=1
        shift 2
        compare_apply_logs "$@" || applylog_ok=0
        say "apply logs of nodes $*: $applylog_verdict"
        if [ "$bench_errors" -ne 0 ]; then
                fail "$bench_errors failed operations ($(bench_first_errors)); $steps; longest gap $bench_gap_ms ms"
        fi
        if [ "$applylog_ok" -ne 1 ]; then
                fail "the apply logs disagree or a checker failed: $(check_failures); longest gap $bench_gap_ms ms"
        fi
        pass "$what under load, $bench_ops operations, 0 failed, apply logs agree; $steps; longest gap $bench_gap_ms ms"
}

# The first checker that failed, for a FAIL line.
check_failures() {
        grep -E '^[SL][0-9]+ (FAIL|UNKNOWN)' "$work/check.out" | head -n 2 | tr '\n' ' '
}
