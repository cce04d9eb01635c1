# --scale "SESSIONS:LOCKS ...": how cost grows with the state held
# (docs/performance.md, "At scale"). For each setting, a fresh 3-node
# cluster: 16 uncontended clients on the empty cluster; baton-bench
# --workload fill of SESSIONS sessions alone, then of SESSIONS more with
# LOCKS locks each (every node's RSS read after each, so that a session
# and a lock each get their own figure; right after a fill the raft log
# still holds its commands, so the session fill is followed by 16 clients
# for --duration, and the RSS read again, and the lock figure is read
# again once the runs below have moved the log past it: the two "settled"
# columns); 16 uncontended clients again with all of it held; the same
# against a second, empty cluster started beside it, --pairs runs each
# (default 4), alternating, so that the disk's drift falls on both alike
# (the "interleaved" column; a single pair's ratio moves by ±20 % on this
# kind of machine, so more pairs tighten it), with the filesystem's speed
# probed just before and after them (4-KiB durable writes a second, and
# MiB/s for 32 MiB flushed: a slow disk costs the full cluster, which
# writes large snapshots, more than its twin); then a follower killed and
# restarted (seconds until it has applied what the leader had), and killed
# again and restarted once the leader is two snapshots past it, so that it
# installs the leader's snapshot of the whole state. One Markdown row per
# setting, with every node's longest event-loop lag and the follower's
# after each return.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# interleaved PAIRS SETTING: throughput with the state held against an
# empty cluster, measured so that the disk's drift falls on both alike: a
# twin cluster that holds nothing runs beside the full one, and each runs
# PAIRS 16-client uncontended runs, alternating (full, empty, empty,
# full, ...). Prints the ratio of the full runs' mean to the empty ones'.
interleaved() {
        local k line order side v fulls="" empties=""
        twin up --nodes 3 >/dev/null || die "the twin cluster did not start"
        for k in $(seq "$1"); do
                order="full empty"
                [ $((k % 2)) = 0 ] && order="empty full"
                for side in $order; do
                        if [ "$side" = full ]; then
                                line=$(run_bench 3 "scale-if$k" --workload uncontended --clients 16 --duration "$duration" 2>/dev/null)
                        else
                                line=$(BATON_CLUSTER_DIR="$twin_dir" run_bench 3 "scale-ie$k" --workload uncontended --clients 16 --duration "$duration" 2>/dev/null)
                        fi
                        emit "$line" '. + {scale: $s, interleaved: $side}' \
                                --arg s "$2" --arg side "$side" 2>/dev/null || true
                        v=$(jq '.ops_per_s // 0' <<<"$line" 2>/dev/null || echo 0)
                        if [ "$side" = full ]; then fulls+=" $v"; else empties+=" $v"; fi
                done
        done
        twin down --purge >/dev/null 2>&1 || true
        summary_ratio "$fulls" "$empties"
}

# scale_fill NAME: the empty cluster's figure, the two fills with every
# node's RSS after each, and the full cluster's figure, into the
# associative array NAME (keys as summary_scale reads them).
scale_fill() {
        local -n s=$1
        s[empty]=$(run_bench 3 scale-empty --workload uncontended --clients 16 --duration "$duration" 2>/dev/null)
        record "${s[empty]}" '. + {scale: $s, held: false}' --arg s "${s[setting]}"
        s[r0]=$(rss_kib)
        s[f1]=$(run_bench 3 scale-s --workload fill --sessions "${s[ns]}" --locks-per-session 0 --ttl-ms 3600000 2>/dev/null || true)
        s[r1]=$(rss_kib)
        # The log moves past the fill's commands (and the heap's
        # free memory goes back to the kernel after snapshots).
        run_bench 3 scale-settle --workload uncontended --clients 16 --duration "$duration" >/dev/null 2>&1 || true
        s[r1s]=$(rss_kib)
        s[f2]=$(run_bench 3 scale-l --workload fill --sessions "${s[ns]}" --locks-per-session "${s[nl]}" --ttl-ms 3600000 2>/dev/null || true)
        s[r2]=$(rss_kib)
        echo "${s[f1]}" >>"$out"
        echo "${s[f2]}" >>"$out"
        s[full]=$(run_bench 3 scale-full --workload uncontended --clients 16 --duration "$duration" 2>/dev/null)
        record "${s[full]}" '. + {scale: $s, held: true}' --arg s "${s[setting]}"
}

# scale_held NAME: with the state held: the loop lag and fork so far, the
# largest snapshot, the interleaved pairs between two disk probes.
scale_held() {
        local -n s=$1
        local w m
        s[lag]=$(max_ms baton_loop_lag_max_seconds)
        s[fork]=$(max_ms baton_snapshot_fork_max_seconds)
        s[snap]=$(find "$BATON_CLUSTER_DIR"/node*/data -name 'snapshot-*' ! -name '*.meta' -printf '%s\n' 2>/dev/null | sort -n | tail -1)
        read -r w m < <(disk_probe)
        s[dw0]=$w s[dm0]=$m
        s[ratio]=$(interleaved "$pairs" "${s[setting]}")
        read -r w m < <(disk_probe)
        s[dw1]=$w s[dm1]=$m
        jq -nc --arg s "${s[setting]}" --arg w "${s[dw0]} ${s[dw1]}" --arg m "${s[dm0]} ${s[dm1]}" \
                '{scale: $s, disk_dsync_writes_per_s: ($w | split(" ")), disk_flush_mib_per_s: ($m | split(" "))}' >>"$out"
        s[r3]=$(rss_kib)
}

# scale_follower NAME: a follower killed and restarted (t0..t1), then
# killed again and restarted once the leader is two snapshots past it
# (t2..t3, until its installed snapshot is adopted).
scale_follower() {
        local -n s=$1
        local leader f killed
        read -r leader _ < <("$cluster" leader)
        f=$(follower_of "$leader")
        kill_node "$f"
        sleep 1
        s[t0]=$(date +%s.%N)
        "$cluster" restart-dead >/dev/null || die "node $f did not come back"
        s[t1]=$(date +%s.%N)
        s[flag]=$(node_metric "$f" baton_loop_lag_max_seconds)
        # Again, but down while the leader goes two snapshots (at the
        # default 4096 / 2048) past it: back, it must install the
        # leader's snapshot of the whole state.
        killed=$(applied "$f")
        kill_node "$f"
        start_load scale-install
        wait_applied "$leader" $((killed + 2 * 4096 + 2048 + 1000))
        stop_load
        s[t2]=$(date +%s.%N)
        "$cluster" restart-dead >/dev/null || die "node $f did not come back"
        # Back means its state taken too: the snapshot it installed is
        # decoded off the loop and adopted when ready.
        for _ in $(seq 1200); do
                [ "$(node_metric "$f" baton_snapshot_restoring)" = 0 ] && break
                sleep 0.05
        done
        s[t3]=$(date +%s.%N)
        s[ilag]=$(node_metric "$f" baton_loop_lag_max_seconds)
        s[idec]=$(node_metric "$f" baton_snapshot_restore_seconds)
}

experiment_scale() {
        local setting ns nl
        local -A fig
        echo "| sessions | locks | fill s | errors | leader kept | bytes/session | bytes/lock | RSS MiB | snapshot MiB | empty 16c ops/s | full 16c ops/s | full/empty | empty gap ms | full gap ms | longest loop lag ms | longest fork ms | follower back s | its longest lag ms | installed back s | its longest lag ms | its decode s | full/empty, interleaved | bytes/session, settled | bytes/lock, settled | disk 4k dsync writes/s | disk MiB/s flushed |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for setting in $scale; do
                ns=${setting%%:*} nl=${setting#*:}
                # shellcheck disable=SC2034 # read through namerefs
                fig=([setting]="$setting" [ns]="$ns" [nl]="$nl")
                stop_cluster
                # Restarts rewrite the configs: the limit must hold for them too.
                export BATON_NODE_CONFIG="max-sessions = $((2 * ns + 1000))"
                "$cluster" up --nodes 3 >/dev/null
                scale_fill fig
                scale_held fig
                scale_follower fig
                summary_scale fig
        done
        echo "results: $out"
}
