# --election-crash N: how long an election is without a leader when the
# process that leads crashes (docs/history/performance.md, "Elections and
# watches"). A fresh 3-node cluster; three candidates, each `batonctl elect
# --ttl 2000 -- CMD` whose CMD, once it leads, appends its token and the
# time to a file (its first write as leader) and sleeps; N times, the
# leading batonctl is killed with kill -9, and the time from the kill to
# the next leader's write is recorded; the killed candidate campaigns
# again. Prints min, median and max over the N crashes; the session's TTL
# (2 s) bounds it from below, as it bounds every lock's handover after a
# crash.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# candidate I DIR: campaign for the election crash-demo; once leading,
# append "NS TOKEN I" (the time in ns) to DIR/writes, then hold on.
# Prints the pid of batonctl.
candidate() {
        (
                eval "$("$cluster" env)"
                exec "$root/build/batonctl" elect crash-demo --value "c$1" \
                        --ttl 2000 -- sh -c \
                        "echo \"\$(date +%s%N) \$BATON_TOKEN $1\" >>$2/writes; exec sleep 3600"
        ) >/dev/null 2>&1 &
        echo $!
}

# wait_write DIR TOKEN: wait (up to 30 s) for a write of a token above
# TOKEN; prints it ("NS TOKEN I").
wait_write() {
        local i line
        for ((i = 0; i < 3000; i++)); do
                line=$(tail -n 1 "$1/writes" 2>/dev/null || true)
                if [ -n "$line" ] && [ "$(cut -d' ' -f2 <<<"$line")" -gt "$2" ]; then
                        echo "$line"
                        return 0
                fi
                sleep 0.01
        done
        return 1
}

experiment_election_crash() {
        local dir c k line token who orphans t0 t1 token2 who2 gaps=()
        local -A cand
        stop_cluster
        "$cluster" up --nodes 3 >/dev/null
        dir=$(mktemp -d)
        : >"$dir/writes"
        for c in 1 2 3; do
                cand[$c]=$(candidate "$c" "$dir")
        done
        line=$(wait_write "$dir" 0) || die "no candidate led"
        for ((k = 1; k <= crashes; k++)); do
                read -r _ token who <<<"$line"
                # sh and its sleep outlive a batonctl killed with -9.
                orphans=$(pgrep -P "${cand[$who]}" || true)
                t0=$(date +%s%N)
                kill -9 "${cand[$who]}"
                line=$(wait_write "$dir" "$token") || die "no new leader after crash $k"
                read -r t1 token2 who2 <<<"$line"
                gaps+=("$(((t1 - t0) / 1000000))")
                echo "bench: crash $k: candidate $who (token $token) killed; candidate $who2 wrote token $token2 after ${gaps[-1]} ms" >&2
                # shellcheck disable=SC2086 # one pid per word
                [ -z "$orphans" ] || kill $orphans 2>/dev/null || true
                cand[$who]=$(candidate "$who" "$dir")
        done
        for c in 1 2 3; do
                # shellcheck disable=SC2046 # one pid per word
                kill $(pgrep -P "${cand[$c]}") "${cand[$c]}" 2>/dev/null || true
        done
        summary_crashes "${gaps[@]}"
        emit "$(printf '%s\n' "${gaps[@]}" | jq -s .)" \
                '{workload: "election-crash", ttl_ms: 2000, gaps_ms: .}'
        rm -rf "$dir"
        echo "results: $out"
}
