# The standard figures (no experiment flag): for each cluster size
# (--nodes, default 3, then 5) a fresh cluster, then baton-bench with the
# workloads of the shared peer harness: uncontended at 1, 16 and 64
# clients, contended at 16, and Baton's other kinds of lock at 16 (shared:
# one writer and 15 readers of one read/write lock; semaphore: a semaphore
# of 4 permits, one each; multi: multi-locks of two neighbouring names on
# a ring of one name per client, the dining philosophers; election: 16
# candidates of one election, each leader resigning at once), and failover
# at 16 (the leader is killed with kill -9 four seconds into the window,
# and restarted afterwards), --reps times (default 1), for --duration
# seconds (default 10) after --warmup (default 2). After every figure it
# reads each node's resident memory from /proc. It prints one Markdown
# table (medians over the repetitions) and writes every baton-bench line,
# with the RSS figures added, to FILE; exit status 1 if any figure failed.
#
# --quick: 1 s windows, 1 repetition, 3 nodes only: checks that everything
# runs (scripts/test does this), measures nothing worth quoting.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# The figures of one repetition, in the table's order: WORKLOAD:CLIENTS.
standard_figures="uncontended:1 uncontended:16 uncontended:64 contended:16
        shared:16 semaphore:16 multi:16 election:16"

# figure NODES WORKLOAD CLIENTS REP: one figure, recorded.
figure() {
        local n=$1 workload=$2 clients=$3 rep=$4 line
        line=$(run_bench "$n" "bench-$n-$workload-$clients-$rep" \
                --workload "$workload" --clients "$clients" \
                --duration "$duration" 2>/dev/null || true)
        record "$line" '. + {rep: $rep}' --argjson rep "$rep"
}

# failover NODES REP: 16 clients for fo_duration seconds with the leader
# killed fo_kill_after seconds after the warmup; recorded with the id of
# the node killed; the killed node restarted.
failover() {
        local n=$1 rep=$2 pid tmp kill_line line
        tmp=$(mktemp)
        run_bench "$n" "bench-$n-failover-$rep" --workload failover \
                --clients 16 --duration "$fo_duration" >"$tmp" 2>/dev/null &
        pid=$!
        sleep "$(calc '' 'a + b' a="$warmup" b="$fo_kill_after")"
        kill_line=$("$cluster" kill-leader 2>/dev/null || true)
        wait "$pid" || true
        line=$(tail -n 1 "$tmp")
        rm -f "$tmp"
        record "$line" '. + {rep: $rep, killed: $killed}' \
                --argjson rep "$rep" --arg killed "${kill_line%% *}"
        "$cluster" restart-dead >/dev/null || die "the cluster did not recover after a leader kill"
}

experiment_standard() {
        local n rep fig failed
        for n in $sizes; do
                stop_cluster
                echo "bench: $n nodes" >&2
                "$cluster" up --nodes "$n" >/dev/null
                for ((rep = 1; rep <= reps; rep++)); do
                        for fig in $standard_figures; do
                                echo "bench:   ${fig/:/ } clients, repetition $rep" >&2
                                figure "$n" "${fig%%:*}" "${fig#*:}" "$rep"
                        done
                        echo "bench:   failover, repetition $rep" >&2
                        failover "$n" "$rep"
                done
                stop_cluster
        done
        summary_standard "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed)"
        [ "$failed" -eq 0 ]
}
