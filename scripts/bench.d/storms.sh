# --storms SESSIONS: sessions by the hundred thousand (docs/performance.md,
# "Storms"). For each of --reps rounds (default 1), a fresh 3-node cluster
# allowing them, and on it:
#   the expiry storm: baton-bench --workload expiry-storm opens SESSIONS
#   sessions with a 15 s TTL, keeps every one alive once, all together, 3 s
#   into a 26 s window of 16 uncontended clients, and then never again, so
#   that all of them expire within the burst's length of each other; it
#   tells how long the leader took to apply the last expiry, whether
#   leadership moved, and the clients' p99 before the burst and during the
#   storm;
#   the keepalive load: 16 uncontended clients alone, and 16 beside
#   SESSIONS sessions kept alive at a 10 s TTL (each every 3.3 s, evenly
#   spread: baton-bench --workload keepalives), in alternating order, the
#   leader's CPU read from /proc over each measured window;
#   the reconnect storm (--reconnects N, default 10000): on a fresh
#   cluster allowing them, baton-bench --workload reconnects opens N
#   connections, each holding its session and lock; a second into the hold
#   the leader is killed (kill -9), and every client finds the next
#   leader, ATTACHes its session and is served again; the surviving
#   nodes' CPU is read from the kill to the last client served.
# One Markdown table for each (every round a row).
# shellcheck shell=bash disable=SC2154,SC2016 # globals: scripts/bench; jq filters

# leader_pid: the process of the serving leader.
leader_pid() {
        local id
        read -r id _ < <("$cluster" leader)
        cat "$BATON_CLUSTER_DIR/node$id.pid"
}

# storm_expiry ROUND: one expiry storm, recorded.
storm_expiry() {
        local line
        line=$(run_bench 3 "storm-e$1" --workload expiry-storm \
                --sessions "$storms" --ttl-ms 15000 --storm-at 3 \
                --clients 16 --duration 26 2>/dev/null) || true
        record "$line" '. + {rep: $rep, storm: "expiry"}' --argjson rep "$1"
}

# storm_keepalive ROUND WHAT: 16 uncontended clients alone (WHAT quiet) or
# beside the keepalive load (WHAT keepalives), with the leader's CPU over
# the measured window, recorded.
storm_keepalive() {
        local round=$1 what=$2 tmp pid lpid before after line args
        tmp=$(mktemp)
        args=(--workload uncontended)
        [ "$what" = quiet ] ||
                args=(--workload keepalives --sessions "$storms" --ttl-ms 10000)
        lpid=$(leader_pid)
        run_bench 3 "storm-k$round-$what" "${args[@]}" --clients 16 \
                --duration "$duration" >"$tmp" 2>"$tmp.err" &
        pid=$!
        # The window opens a warmup after the sessions are open.
        if [ "$what" != quiet ]; then
                while kill -0 "$pid" 2>/dev/null && ! grep -q 'sessions opened' "$tmp.err"; do
                        sleep 0.05
                done
        fi
        sleep "$warmup"
        before=$(pid_cpu_s "$lpid")
        sleep "$duration"
        after=$(pid_cpu_s "$lpid")
        wait "$pid" || true
        line=$(tail -n 1 "$tmp")
        rm -f "$tmp" "$tmp.err"
        record "$line" '. + {rep: $rep, storm: $what,
                leader_cpu_s: $cpu, leader_cpu_per_s: ($cpu / .seconds)}' \
                --argjson rep "$round" --arg what "$what" \
                --argjson cpu "$(calc '%.3f' 'a - b' a="$after" b="$before")"
}

# storm_reconnect ROUND: one reconnect storm on a fresh cluster, recorded
# with the surviving nodes' CPU from the kill to the end of the run.
storm_reconnect() {
        local round=$1 tmp pid killed id f line lead=0 lead_cpu=0 other_cpu=0
        local -A cpu0
        stop_cluster
        BATON_NODE_CONFIG="max-connections = $((reconnects + 100))
max-connections-per-address = $((reconnects + 100))" \
                "$cluster" up --nodes 3 >/dev/null
        tmp=$(mktemp)
        run_bench 3 "storm-r$round" --workload reconnects \
                --connections "$reconnects" --window 128 --hold-s 5 \
                --ttl-ms 60000 >"$tmp" 2>"$tmp.err" &
        pid=$!
        while kill -0 "$pid" 2>/dev/null && ! grep -q ' connections holding$' "$tmp.err"; do
                sleep 0.2
        done
        sleep 1
        read -r killed _ < <("$cluster" leader)
        for f in "$BATON_CLUSTER_DIR"/node*.pid; do
                id=${f##*/node}
                id=${id%.pid}
                [ "$id" = "$killed" ] || cpu0[$id]=$(pid_cpu_s "$(cat "$f")")
        done
        kill_node "$killed"
        # Read before the run ends and the script stops the cluster.
        while kill -0 "$pid" 2>/dev/null && ! grep -q '"workload":"reconnects"' "$tmp"; do
                sleep 0.1
        done
        read -r lead _ < <("$cluster" leader 2>/dev/null) || lead=0
        for id in "${!cpu0[@]}"; do
                f=$(calc '%.3f' 'a - b' a="$(pid_cpu_s "$(cat "$BATON_CLUSTER_DIR/node$id.pid")")" b="${cpu0[$id]}")
                if [ "$id" = "$lead" ]; then lead_cpu=$f; else other_cpu=$f; fi
        done
        wait "$pid" || true
        line=$(tail -n 1 "$tmp")
        rm -f "$tmp" "$tmp.err"
        is_result "$line" served_again || line='{"failed":true}'
        emit "$line" '. + {rep: $rep, storm: "reconnect", new_leader: $l,
                leader_cpu_s: $lc, follower_cpu_s: $fc}' \
                --argjson rep "$round" --argjson l "$lead" \
                --argjson lc "$lead_cpu" --argjson fc "$other_cpu"
}

experiment_storms() {
        local round order what failed
        # Restarts rewrite the configs: the limit must hold for them too.
        export BATON_NODE_CONFIG="max-sessions = $((2 * storms + 1000))"
        for ((round = 1; round <= reps; round++)); do
                stop_cluster
                echo "bench: storms, round $round" >&2
                "$cluster" up --nodes 3 >/dev/null
                storm_expiry "$round"
                order="quiet keepalives"
                ((round % 2 == 1)) || order="keepalives quiet"
                for what in $order; do
                        storm_keepalive "$round" "$what"
                done
                storm_reconnect "$round"
        done
        stop_cluster
        summary_storms "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed)"
        [ "$failed" -eq 0 ]
}
