# --tls-cost: what TLS costs. For each cluster size (--nodes, default 3,
# then 5), --reps rounds (default 1; four or more for a figure worth
# quoting); each round starts a fresh cluster
# with TLS and one with tls = off, in alternating order (on off, off on,
# ...), and runs uncontended at 1, 16 and 64 clients on each. Besides
# throughput it measures the CPU an operation costs, every process
# together: each node's user and system time from /proc over the measured
# window, plus baton-bench's own (its client_cpu_s), divided by the
# window's operations. It prints one Markdown table (medians over the
# rounds, and TLS ÷ off) and writes every line, with the nodes' CPU added,
# to FILE.
# shellcheck shell=bash disable=SC2154,SC2016 # globals: scripts/bench; jq filters

# nodes_cpu_s: the user and system CPU time of every running node of the
# cluster so far, in seconds, added up.
nodes_cpu_s() {
        local f pid total=0
        for f in "$BATON_CLUSTER_DIR"/node*.pid; do
                pid=$(cat "$f" 2>/dev/null) || continue
                total=$(calc '%.3f' 'a + b' a="$total" b="$(pid_cpu_s "$pid")")
        done
        echo "$total"
}

# cost_figure NODES CLIENTS ROUND: one uncontended figure with the nodes'
# CPU read at the start and the end of baton-bench's window, recorded.
cost_figure() {
        local n=$1 clients=$2 round=$3 tmp pid before after line
        tmp=$(mktemp)
        run_bench "$n" "tlscost-$n-$clients-$round-$tls" \
                --workload uncontended --clients "$clients" \
                --duration "$duration" >"$tmp" 2>/dev/null &
        pid=$!
        sleep "$warmup"
        before=$(nodes_cpu_s)
        sleep "$duration"
        after=$(nodes_cpu_s)
        wait "$pid" || true
        line=$(tail -n 1 "$tmp")
        rm -f "$tmp"
        record "$line" '. + {rep: $rep, tls_cost: true,
                server_cpu_s: $server, cpu_us_per_op:
                (if .ops > 0 then ($server + .client_cpu_s) * 1e6 / .ops
                 else null end)}' \
                --argjson rep "$round" \
                --argjson server "$(calc '%.3f' 'a - b' a="$after" b="$before")"
}

experiment_tls_cost() {
        local n round mode modes clients failed
        for n in $sizes; do
                for ((round = 1; round <= reps; round++)); do
                        modes="on off"
                        ((round % 2 == 1)) || modes="off on"
                        for mode in $modes; do
                                stop_cluster
                                tls=$mode
                                export BATON_TLS=$mode
                                echo "bench: $n nodes, TLS $mode, round $round" >&2
                                "$cluster" up --nodes "$n" >/dev/null
                                for clients in 1 16 64; do
                                        cost_figure "$n" "$clients" "$round"
                                done
                        done
                done
                stop_cluster
        done
        summary_tls_cost "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed)"
        [ "$failed" -eq 0 ]
}
