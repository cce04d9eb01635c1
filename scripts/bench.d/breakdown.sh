# --breakdown: where one acquire's time goes. One client runs
# acquire/release pairs for --duration seconds on a 3-node cluster; the
# leader's metrics before and after give the mean time a command spent
# queued for the next raft_apply, in raft (the leader's disk write and a
# majority's acknowledgements) and in the whole server; the rest of the
# client's mean round trip is the network and libbaton.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

experiment_breakdown() {
        local id maddr before after line
        stop_cluster
        "$cluster" up --nodes 3 >/dev/null
        read -r id _ < <("$cluster" leader)
        maddr=$(metrics_address "$id")
        before=$(scrape "$maddr")
        line=$(run_bench 3 breakdown --workload uncontended --clients 1 \
                --duration "$duration")
        after=$(scrape "$maddr")
        record "$line" '. + {breakdown: true}'
        summary_breakdown "$line" "$id" "$before" "$after"
        echo "results: $out"
}
