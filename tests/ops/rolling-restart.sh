#!/usr/bin/env bash
# Rolling restart under load, as an operator runs it (docs/operations.md,
# "Rolling restart"): a 3-node TLS cluster serves baton-bench's uncontended
# and contended workloads while every node in turn gets SIGTERM (a leader
# hands leadership over first), is waited for until it exits, is started
# again on its data directory, and is waited for until GET /ready answers
# 200, before the next; the followers first, the leader last. Passes only
# if baton-bench counts no failed operation and the nodes' apply logs
# agree (chaos-check). Prints each restart's timings and, last, one line:
#
#   PASS rolling-restart: ... longest gap N ms
#   FAIL rolling-restart: REASON
#
#   tests/ops/rolling-restart.sh [--duration S] [--clients N] [--break MODE]
#
#   --duration S   seconds of load measured (default 30); the restarts must
#                  end at least 3 s before it does
#   --clients N    clients of each workload (default 16)
#   --break MODE   done wrong on purpose, to see what the checks catch
#                  (docs/operations.md has what each gave):
#                  wipe     SIGKILL, the data directory removed, started
#                           again and the next node restarted at once
#                  no-wait  SIGTERM, but the next node is restarted as soon
#                           as this one has exited, without waiting for it
#                  kill     SIGKILL instead of SIGTERM (no leadership
#                           transfer), waiting for /ready as usual
#
# Needs a build in build/ (batond, batonctl, baton-bench and
# tests/chaos/chaos-check: make, then make check TESTS=). Ports: see
# tests/ops/lib.sh (BATON_BASE_PORT, default 23000).
set -euo pipefail
name=rolling-restart
duration=30
clients=16
mode=""
while [ $# -gt 0 ]; do
        case "$1" in
        --duration) duration=${2:?--duration S}; shift 2 ;;
        --clients) clients=${2:?--clients N}; shift 2 ;;
        --break) mode=${2:?--break MODE}; shift 2 ;;
        -h | --help) sed -n '2,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "rolling-restart: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
done
case "$mode" in
"" | wipe | no-wait | kill) ;;
*) echo "rolling-restart: --break wipe, no-wait or kill" >&2; exit 2 ;;
esac
# shellcheck source=tests/ops/lib.sh
. "$(dirname "$0")/lib.sh"
[ -z "$mode" ] || name="$name --break $mode"

cluster_up
# The followers first, the leader last: its restart is the one that hands
# leadership over, and it should happen once, not at every step.
order=()
for i in 1 2 3; do
        [ "$i" = "$leader" ] || order+=("$i")
done
order+=("$leader")
say "cluster up (leader $leader); load: $clients uncontended + $clients contended clients for ${duration} s; restart order ${order[*]}${mode:+; broken on purpose: $mode}"

bench_start "$clients" "$duration"
# Let the load settle before the first restart.
sleep $(((bench_window_start - $(now_ms)) / 1000 + 3))

timings=""
for i in "${order[@]}"; do
        pid=$(node_pid "$i")
        { [ -n "$pid" ] && running "$pid"; } || fail "node $i is not running before its restart"
        role=follower
        [ "$(leader_id)" = "$i" ] && role=leader
        t0=$(now_ms)
        case "$mode" in
        wipe | kill) kill -KILL "$pid" ;;
        *) kill -TERM "$pid" ;;
        esac
        # The unit's TimeoutStopSec is 30 s; batond bounds its own shutdown
        # well below that.
        wait_exit "$pid" 30000 || fail "node $i did not exit within 30 s of SIGTERM"
        t1=$(now_ms)
        [ "$mode" = wipe ] && rm -rf "$state/node$i/data"
        "$root/scripts/cluster" restart "$i" >>"$work/restarts.log" 2>&1 ||
                fail "node $i did not start again: $(tail -n 2 "$work/restarts.log" | tr '\n' ' ')"
        t2=$(now_ms)
        case "$mode" in
        wipe | no-wait) t3=$t2 ;;
        *)
                wait_ready "$i" 60000 || fail "node $i not ready within 60 s of its start"
                t3=$(now_ms)
                ;;
        esac
        now_leader=$(leader_id)
        at=$(awk -v t="$((t0 - bench_window_start))" 'BEGIN { printf "%.1f", t / 1000 }')
        line="at ${at} s node $i ($role): exit $((t1 - t0)) ms, start $((t2 - t1)) ms, ready $((t3 - t2)) ms, total $((t3 - t0)) ms, leader now ${now_leader:-none}"
        say "$line"
        timings="$timings${timings:+; }node $i ($role) $((t3 - t0)) ms"
        [ "$mode" = "" ] || [ "$mode" = kill ] || continue
        # A moment of load between steps, as an operator's pause.
        sleep 1
done
t_done=$(now_ms)
[ "$t_done" -le $((bench_window_end - 3000)) ] ||
        fail "the restarts ended $(((t_done - bench_window_end) / 1000 + 3)) s too late for the load's window; raise --duration"

bench_wait
say "baton-bench: $bench_summary"
wait_converged 60000 || fail "the nodes did not converge within 60 s after the load"
"$root/scripts/cluster" down >/dev/null 2>&1
verdict_under_load "3 nodes restarted in turn" "$timings" 1 2 3
