# --freeze "THRESHOLD:TRAILING ...": for each snapshot setting, the
# longest event-loop freeze of a follower that restarts and then installs a
# snapshot (docs/raft.md): a fresh 3-node cluster with that setting, 16
# clients of load, a follower killed once it applied --kill-at (default
# 1.9) times the threshold, restarted once the leader is two snapshots
# past it, and its baton_loop_lag_max_seconds read when it has caught up.
# One Markdown row per setting; nothing is written to FILE.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# freeze_one THRESHOLD TRAILING: one setting's row.
freeze_one() {
        local t=$1 r=$2 leader f target killed goal t0 t1 lag
        stop_cluster
        # For `up` only: restart-dead keeps each node's config (this
        # setting) when BATON_NODE_CONFIG is unset.
        BATON_NODE_CONFIG="snapshot-threshold = $t
snapshot-trailing = $r" "$cluster" up --nodes 3 >/dev/null
        read -r leader _ < <("$cluster" leader)
        f=$(follower_of "$leader")
        start_load freeze
        target=$(calc '%d' 't * k' t="$t" k="$kill_at")
        wait_applied "$f" "$target"
        killed=$(applied "$f")
        kill_node "$f"
        goal=$(((target / t + 2) * t + r + 1000))
        wait_applied "$leader" "$goal"
        t0=$(date +%s.%N)
        "$cluster" restart-dead >/dev/null || die "node $f did not catch up"
        t1=$(date +%s.%N)
        sleep 1
        lag=$(node_metric "$f" baton_loop_lag_max_seconds)
        stop_load
        summary_freeze "$t" "$r" "$killed" "$t0" "$t1" "$lag"
}

experiment_freeze() {
        local setting
        echo "| snapshot threshold | trailing | follower killed at applied | restart to caught up, s | longest loop freeze of the follower, ms |"
        echo "|---|---|---|---|---|"
        for setting in $freeze; do
                freeze_one "${setting%%:*}" "${setting#*:}"
        done
}
