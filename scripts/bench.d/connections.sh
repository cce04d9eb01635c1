# --connections "N ...": what client connections cost (docs/
# history/performance.md, "Many connections"). For each N, a fresh 3-node cluster
# allowing N connections (from this one address, too); baton-bench
# --workload connections opens N connections to the leader, each with its
# session and lock, holds them all with keepalives while every node's RSS
# is read, then releases every lock at once (the round) and closes. One
# Markdown row per N: bytes per connection on the leader (the connection,
# its TLS state, its session and lock) and on a follower (the session and
# lock alone), and every node's longest event-loop lag.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# connections_one N: one N's row, its result line (with every node's RSS
# before and while held) recorded.
connections_one() {
        local n=$1 r0 r1 tmp pid line lag
        stop_cluster
        export BATON_NODE_CONFIG="max-connections = $((n + 100))
max-connections-per-address = $((n + 100))"
        "$cluster" up --nodes 3 >/dev/null
        # Warm: the first connections allocate what every one shares.
        run_bench 3 conns-warm --workload connections --connections 100 >/dev/null 2>&1 || true
        r0=$(rss_kib)
        tmp=$(mktemp)
        run_bench 3 conns --workload connections --connections "$n" \
                --window 128 --hold-s 6 --ttl-ms 60000 >"$tmp" 2>"$tmp.err" &
        pid=$!
        while kill -0 "$pid" 2>/dev/null && ! grep -q ' connections holding$' "$tmp.err"; do
                sleep 0.2
        done
        # The keepalives sent as the hold starts are answered, and a
        # second later the quiet connections are at rest.
        sleep 3
        r1=$(rss_kib)
        wait "$pid" || true
        line=$(tail -n 1 "$tmp")
        rm -f "$tmp" "$tmp.err"
        lag=$(max_ms baton_loop_lag_max_seconds)
        is_result "$line" held || line='{"failed":true}'
        emit "$line" '. + {rss_kib_before: $r0, rss_kib_held: $r1}' --arg r0 "$r0" --arg r1 "$r1"
        summary_connections "$n" "$r0" "$r1" "$line" "$lag"
}

experiment_connections() {
        local n
        echo "| connections | held | errors | leader kept | setup s | handshakes/s | round p50 ms | round p99 ms | round s | leader bytes/connection | follower bytes/connection | leader RSS MiB | longest loop lag ms |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for n in $conns; do
                connections_one "$n"
        done
        echo "results: $out"
}
