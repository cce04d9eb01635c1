#!/usr/bin/env bash
# Replacing a member under load, as an operator does it (docs/operations.md,
# "Replacing a member"): a 3-node TLS cluster serves baton-bench's
# uncontended and contended workloads, whose clients know only the three
# original endpoints, while a fourth node gets its certificate, starts with
# join = true, is added (batonctl member add, which answers once it is a
# caught-up voter) and waited for until GET /ready answers 200; then the
# old node to replace (the leader, the hard case) hands leadership to the
# new node (batonctl transfer), is removed (batonctl member remove) and
# stopped. Passes only if baton-bench counts no failed operation and the
# apply logs of all four nodes agree where they overlap (chaos-check).
# Prints each step's timing and, last, one line:
#
#   PASS replace-member: ... longest gap N ms
#   FAIL replace-member: REASON
#
#   tests/ops/replace-member.sh [--duration S] [--clients N] [--remove leader|follower]
#                               [--break MODE]
#
#   --duration S   seconds of load measured (default 30); the replacement
#                  must end at least 3 s before it does
#   --clients N    clients of each workload (default 16)
#   --remove WHO   the original node to replace: the leader (default) or a
#                  follower
#   --transfer-to original|new
#                  where the leader to replace hands leadership: an original
#                  node (default), or the new one (its clients then reach a
#                  node they were never told of, through NOT_LEADER; a
#                  leader that joined by catching up is the case that
#                  libraft 0.22.1 broke, see docs/raft.md)
#   --break MODE   done wrong on purpose, to see what the checks catch
#                  (docs/operations.md has what each gave):
#                  no-transfer  member remove of the leader itself, with no
#                               transfer first
#                  endpoints    the clients know only the endpoint of the
#                               node that is replaced
#                  early        the old node is stopped (SIGKILL) while the
#                               new one is still being added, before it
#                               has caught up, and removed afterwards
#                  quorum       a second original node is down too while
#                               the old one is replaced: both are paused
#                               (SIGSTOP) for 8 s before member add, longer
#                               than baton-bench's 5 s operation timeout;
#                               the negative control, which must FAIL
#
# Needs a build in build/ (batond, batonctl, baton-bench and
# tests/chaos/chaos-check). Ports: see tests/ops/lib.sh (BATON_BASE_PORT,
# default 23000; node 4 takes BASE+4, BASE+104, BASE+204).
set -euo pipefail
name=replace-member
duration=30
clients=16
remove=leader
transfer_to=original
mode=""
while [ $# -gt 0 ]; do
        case "$1" in
        --duration) duration=${2:?--duration S}; shift 2 ;;
        --clients) clients=${2:?--clients N}; shift 2 ;;
        --remove) remove=${2:?--remove leader|follower}; shift 2 ;;
        --transfer-to) transfer_to=${2:?--transfer-to original|new}; shift 2 ;;
        --break) mode=${2:?--break MODE}; shift 2 ;;
        -h | --help) sed -n '2,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "replace-member: unknown argument $1 (see --help)" >&2; exit 2 ;;
        esac
done
case "$remove" in leader | follower) ;; *) echo "replace-member: --remove leader or follower" >&2; exit 2 ;; esac
case "$mode" in
"" | no-transfer | endpoints | early | quorum) ;;
*) echo "replace-member: --break no-transfer, endpoints, early or quorum" >&2; exit 2 ;;
esac
# shellcheck source=tests/ops/lib.sh
. "$(dirname "$0")/lib.sh"
[ -z "$mode" ] || name="$name --break $mode"

cluster_up
new=4
if [ "$remove" = leader ]; then
        old=$leader
else
        old=$((leader % 3 + 1))
fi
original_endpoints=$BATON_ENDPOINTS
all_endpoints="$original_endpoints,$(client_address $new)"
final_endpoints=""
for i in 1 2 3 $new; do
        [ "$i" = "$old" ] || final_endpoints="$final_endpoints${final_endpoints:+,}$(client_address "$i")"
done
# What the users' clients know: the three original endpoints (or, broken
# on purpose, only the one that goes away).
if [ "$mode" = endpoints ]; then
        BATON_ENDPOINTS=$(client_address "$old")
fi
say "cluster up (leader $leader); replacing node $old ($remove) with node $new; load: $clients uncontended + $clients contended clients for ${duration} s on $BATON_ENDPOINTS${mode:+; broken on purpose: $mode}"
bench_start "$clients" "$duration"
export BATON_ENDPOINTS=$all_endpoints
sleep $(((bench_window_start - $(now_ms)) / 1000 + 3))

# The new node: a certificate from the cluster's CA, a config naming
# itself among the members, join = true, an empty data directory.
t0=$(now_ms)
"$root/scripts/certs" "$state/tls" --nodes $new >>"$work/certs.log" 2>&1 ||
        fail "scripts/certs could not make node $new's certificate"
{
        sed -e "s/^id = .*/id = $new/" \
                -e "s|node1/|node$new/|g" \
                -e "s|node1\.|node$new.|g" \
                -e "s|^metrics-address = .*|metrics-address = 127.0.0.1:$((BATON_BASE_PORT + 200 + new))|" \
                -e '/^# /d' "$state/node1.conf"
        echo "member = $new $(raft_address $new) $(client_address $new)"
        echo "join = true"
} >"$state/node$new.conf"
mkdir -p "$state/node$new"
setsid env ${BATON_OPS_TRACE:+LIBRAFT_TRACE=1} "$build/batond" --config "$state/node$new.conf" \
        >>"$state/node$new.log" 2>&1 </dev/null &
new_pid=$!
extra_pids+=("$new_pid")
end=$(($(now_ms) + 20000))
until curl -fsS -m 1 "$(metrics_url $new)/health" >/dev/null 2>&1; do
        running "$new_pid" || fail "node $new exited at start: $(tail -n 2 "$state/node$new.log" | tr '\n' ' ')"
        [ "$(now_ms)" -lt "$end" ] || fail "node $new not healthy within 20 s of its start"
        sleep 0.05
done
t1=$(now_ms)
say "at $(((t0 - bench_window_start) / 1000)) s node $new started (join = true), healthy after $((t1 - t0)) ms"

if [ "$mode" = early ]; then
        kill -KILL "$(node_pid "$old")"
        say "node $old stopped (SIGKILL) before node $new was added"
fi
if [ "$mode" = quorum ]; then
        # One voter of three left: no leader, so every operation waits.
        other=$((old % 3 + 1))
        kill -STOP "$(node_pid "$old")" "$(node_pid "$other")"
        say "nodes $old and $other paused (SIGSTOP) for 8 s before node $new was added"
        sleep 8
        kill -CONT "$(node_pid "$old")" "$(node_pid "$other")"
fi
"$ctl" --timeout 60000 member add $new "$(raft_address $new)" "$(client_address $new)" \
        >>"$work/member.log" 2>&1 || fail "member add $new failed: $(tail -n 1 "$work/member.log")"
t2=$(now_ms)
wait_ready $new 60000 || fail "node $new not ready within 60 s of member add"
t3=$(now_ms)
voter=$("$ctl" --timeout 2000 member list 2>/dev/null | awk -v id=$new '$1 == id { print $2 }')
[ "$voter" = voter ] || fail "node $new is '$voter' after member add, not a voter"
say "member add $new: answered after $((t2 - t1)) ms (a voter), ready $((t3 - t2)) ms later"

steps="start $((t1 - t0)) ms, add $((t2 - t1)) ms, ready $((t3 - t2)) ms"
if [ "$(leader_id)" = "$old" ] && [ "$mode" != no-transfer ] && [ "$mode" != early ]; then
        # To a node that stays: an original one, unless asked for the new.
        to=$new
        [ "$transfer_to" = new ] || to=$((old % 3 + 1))
        t4=$(now_ms)
        "$ctl" --timeout 10000 transfer $to >>"$work/member.log" 2>&1 ||
                fail "transfer $to failed: $(tail -n 1 "$work/member.log")"
        end=$(($(now_ms) + 10000))
        until [ "$(leader_id)" = "$to" ]; do
                [ "$(now_ms)" -lt "$end" ] || fail "node $to did not lead within 10 s of transfer"
                sleep 0.02
        done
        t5=$(now_ms)
        say "transfer to $to: node $to leads after $((t5 - t4)) ms"
        steps="$steps, transfer $((t5 - t4)) ms"
fi
t6=$(now_ms)
tries=0
until "$ctl" --timeout 10000 member remove "$old" >>"$work/member.log" 2>&1; do
        tries=$((tries + 1))
        if ! grep -q "already in progress" <(tail -n 1 "$work/member.log") ||
                [ "$(now_ms)" -ge $((t6 + 15000)) ]; then
                fail "member remove $old failed: $(tail -n 1 "$work/member.log")"
        fi
        sleep 0.1
done
t7=$(now_ms)
[ "$tries" -eq 0 ] || say "member remove $old: refused $tries times (a membership change in progress)"
pid=$(node_pid "$old")
if [ -n "$pid" ] && running "$pid"; then
        kill -TERM "$pid"
        wait_exit "$pid" 30000 || fail "node $old did not exit within 30 s of SIGTERM"
fi
t8=$(now_ms)
export BATON_ENDPOINTS=$final_endpoints
say "member remove $old: answered after $((t7 - t6)) ms; stopped after $((t8 - t7)) ms; leader now $(leader_id)"
steps="$steps, remove $((t7 - t6)) ms, stop $((t8 - t7)) ms"
[ "$t8" -le $((bench_window_end - 3000)) ] ||
        fail "the replacement ended $(((t8 - bench_window_end) / 1000 + 3)) s too late for the load's window; raise --duration"

bench_wait
say "baton-bench: $bench_summary"
# Did the clients, which know only the original endpoints, reach the new
# node? Its request counters say.
reqs=$(curl -fsS -m 2 "$(metrics_url $new)/metrics" 2>/dev/null |
        awk '/^baton_requests_total\{type="(acquire|release)",result="ok"\}/ { s += $2 } END { print s + 0 }')
say "node $new served $reqs acquires and releases (only a leader serves them)"
wait_converged 60000 || fail "the final members did not converge within 60 s after the load"
kill -TERM "$new_pid" 2>/dev/null || true
wait_exit "$new_pid" 30000 || true
"$root/scripts/cluster" down >/dev/null 2>&1
verdict_under_load "node $old ($remove) replaced by node $new" \
        "$steps; node $new served $reqs requests" 1 2 3 $new
