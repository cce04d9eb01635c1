# What scripts/bench's experiments share: the clusters, baton-bench runs,
# readings of the nodes (memory, metrics, the disk) and the JSON lines
# written to the results file. Sourced by scripts/bench, which sets root,
# cluster, bench, out, tls, warmup, duration, twin_dir and load.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

die() {
        echo "bench: $*" >&2
        exit 1
}

# A command line scripts/bench refuses: status 2, as for usage errors
# elsewhere, so a caller can tell it from a run that failed.
usage_error() {
        echo "bench: $*" >&2
        exit 2
}

# check_settings FLAG FORM "A:B ...": each setting two numbers, or refuse
# (a lone number stands for both, as it always has).
check_settings() {
        local s
        for s in $3; do
                [[ ${s%%:*} =~ ^[0-9]+$ && ${s#*:} =~ ^[0-9]+$ ]] ||
                        usage_error "$1: $2, got $s"
        done
}

# calc FORMAT EXPR [NAME=VALUE...]: one awk expression over the values
# (bash has no fractions), printed with FORMAT, or with awk's print (six
# significant digits) when FORMAT is empty.
calc() {
        local fmt=$1 expr=$2 kv args=()
        shift 2
        for kv; do args+=(-v "$kv"); done
        if [ -z "$fmt" ]; then
                awk "${args[@]}" "BEGIN { print $expr }"
        else
                awk "${args[@]}" "BEGIN { printf \"$fmt\", $expr }"
        fi
}

# --- Clusters ----------------------------------------------------------

# The EXIT trap: the load, the cluster and --scale's twin go, whatever
# stopped the run.
stop_cluster() {
        [ -z "$load" ] || kill "$load" 2>/dev/null || true
        "$cluster" down --purge >/dev/null 2>&1 || true
        twin down --purge >/dev/null 2>&1 || true
}

# twin ARGS...: scripts/cluster for a second cluster beside the first
# (--scale's empty twin).
twin() {
        BATON_CLUSTER_DIR="$twin_dir" BATON_BASE_PORT=8000 "$cluster" "$@"
}

# run_bench NODES PREFIX ARGS...: baton-bench against the running cluster.
run_bench() {
        local n=$1 prefix=$2
        shift 2
        (
                eval "$("$cluster" env)"
                "$bench" --nodes "$n" --warmup "$warmup" --prefix "$prefix" "$@"
        )
}

# start_load PREFIX: 16 uncontended clients on 3 nodes in the background
# until stop_load. $load is baton-bench itself (the subshell execs it), so
# that stopping it stops the clients rather than a shell around them.
start_load() {
        (
                eval "$("$cluster" env)"
                exec "$bench" --nodes 3 --warmup "$warmup" --prefix "$1" \
                        --workload uncontended --clients 16 --duration 3600
        ) >/dev/null 2>&1 &
        load=$!
}

stop_load() {
        kill "$load" 2>/dev/null
        wait "$load" 2>/dev/null || true # killed: status 143
        load=
}

# follower_of LEADER: a node that is not LEADER (1, else 2).
follower_of() {
        if [ "$1" = 1 ]; then echo 2; else echo 1; fi
}

# kill_node ID: kill -9 node ID, as a crash would stop it.
kill_node() {
        kill -9 "$(cat "$BATON_CLUSTER_DIR/node$1.pid")"
}

# --- Readings of the nodes ---------------------------------------------

# rss_mib: the largest resident set over the nodes now, and the largest
# peak since each node started, in MiB: "<rss> <peak>".
rss_mib() {
        local f pid files=()
        for f in "$BATON_CLUSTER_DIR"/node*.pid; do
                pid=$(cat "$f" 2>/dev/null) || continue
                [ -r "/proc/$pid/status" ] && files+=("/proc/$pid/status")
        done
        awk '/^VmRSS:/ && $2 > rss { rss = $2 }
             /^VmHWM:/ && $2 > hwm { hwm = $2 }
             END { printf "%.1f %.1f\n", rss / 1024, hwm / 1024 }' "${files[@]}" /dev/null
}

# rss_kib: every node's resident set in KiB, space separated, by node id.
rss_kib() {
        local i
        for i in 1 2 3; do
                awk '/^VmRSS:/ { printf "%d ", $2 }' "/proc/$(cat "$BATON_CLUSTER_DIR/node$i.pid")/status"
        done
}

# pid_cpu_s PID: the user and system CPU time of process PID so far, every
# thread, in seconds (0 for a process that is gone).
pid_cpu_s() {
        local t
        # Fields after the ")" that ends the command name: utime and stime
        # are the 12th and 13th, in clock ticks.
        t=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }') || true
        calc '%.3f' 'a / b' a="${t:-0}" b="$(getconf CLK_TCK)"
}

# metric TEXT SERIES: the value of one series in Prometheus text, or 0.
metric() {
        awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print 0 }' <<<"$1"
}

# scrape HOST:PORT: GET /metrics (bash's /dev/tcp: no curl needed).
scrape() {
        local host=${1%:*} port=${1#*:}
        exec 3<>"/dev/tcp/$host/$port"
        printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$1" >&3
        tr -d '\r' <&3
        exec 3<&-
}

# metrics_address ID: where node ID serves /metrics, from its config.
metrics_address() {
        sed -n 's/^metrics-address = //p' "$BATON_CLUSTER_DIR/node$1.conf"
}

# node_metric ID NAME: one metric of node ID, scraped now.
node_metric() {
        metric "$(scrape "$(metrics_address "$1")")" "$2"
}

# applied ID: the last applied index of node ID, from its metrics.
applied() {
        node_metric "$1" baton_raft_applied_index | cut -d. -f1
}

# wait_applied ID INDEX: poll until node ID has applied INDEX.
wait_applied() {
        while [ "$(applied "$1")" -lt "$2" ]; do sleep 0.2; done
}

# max_ms METRIC: the largest value of a metric in seconds over the three
# nodes, in milliseconds.
max_ms() {
        local i worst=0 v
        for i in 1 2 3; do
                v=$(node_metric "$i" "$1")
                worst=$(calc '' '(b * 1000 > a) ? b * 1000 : a' a="$worst" b="${v:-0}")
        done
        printf '%.0f' "$worst"
}

# disk_probe: how fast the cluster's filesystem is right now, as "W M":
# W 4-KiB writes a second, each durable before the next (oflag=dsync, what
# a raft log append waits for), and M MiB/s for 32 MiB written and then
# flushed (what a node's snapshot of a million locks asks of it).
disk_probe() {
        local f="$BATON_CLUSTER_DIR/.disk-probe" w m
        w=$(dd_rate "$f" 500 bs=4k count=500 oflag=dsync)
        m=$(dd_rate "$f" 32 bs=1M count=32 conv=fdatasync)
        rm -f "$f"
        echo "${w:--} ${m:--}"
}

# dd_rate FILE N DD-OPERAND...: N divided by the seconds dd takes to write
# zeros into FILE as the operands say (nothing if dd fails).
dd_rate() {
        local f=$1 n=$2
        shift 2
        LC_ALL=C dd if=/dev/zero of="$f" "$@" 2>&1 |
                awk -F', ' -v n="$n" '/copied/ { split($(NF - 1), t, " "); if (t[1] > 0) printf "%.0f", n / t[1] }' || true
}

# --- The results file --------------------------------------------------

# emit LINE FILTER [JQ_ARGS...]: LINE through the jq FILTER, with "tls"
# added, appended to $out as one line.
emit() {
        local line=$1 filter=$2
        shift 2
        jq -c --arg tls "$tls" "$@" "$filter | . + {tls: \$tls}" <<<"$line" >>"$out"
}

# is_result LINE KEY: LINE is a JSON object with KEY, baton-bench's result.
# Empty is not (jq -e says yes to no input at all: a baton-bench that died
# printing nothing must not pass).
is_result() {
        [ -n "$1" ] && jq -e --arg k "$2" 'type == "object" and has($k)' >/dev/null 2>&1 <<<"$1"
}

# record LINE FILTER [JQ_ARGS...]: a baton-bench result with the nodes'
# memory now added (a line without a result becomes {"failed":true}, which
# the standard table counts).
record() {
        local line=$1 filter=$2 rss hwm
        shift 2
        read -r rss hwm < <(rss_mib)
        if ! is_result "$line" ops_per_s; then
                echo "bench: baton-bench printed no result" >&2
                line='{"failed":true}'
        fi
        emit "$line" "$filter | . + {rss_mib: \$rss, peak_rss_mib: \$hwm}" \
                --argjson rss "$rss" --argjson hwm "$hwm" "$@"
}

# pair_figures FIGURE_FN TAG FIGURES: for each cluster size a fresh
# cluster and, --reps times, each figure ("workload:clients") by
# baton-bench (client c) and the other client (TAG) back to back, the
# first of the two alternating from one repetition to the next:
# FIGURE_FN NODES WORKLOAD CLIENTS REP CLIENT records one.
pair_figures() {
        local fn=$1 tag=$2 figures=$3 n rep fig order client
        for n in $sizes; do
                stop_cluster
                echo "bench: $n nodes" >&2
                "$cluster" up --nodes "$n" >/dev/null
                for ((rep = 1; rep <= reps; rep++)); do
                        order="c $tag"
                        ((rep % 2 == 1)) || order="$tag c"
                        for fig in $figures; do
                                for client in $order; do
                                        echo "bench:   ${fig/:/ } clients, $client, repetition $rep" >&2
                                        "$fn" "$n" "${fig%%:*}" "${fig#*:}" "$rep" "$client"
                                done
                        done
                done
                stop_cluster
        done
}
