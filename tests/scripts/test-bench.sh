#!/usr/bin/env bash
# Test of scripts/bench's command line, printing TAP: --help describes
# every experiment (each scripts/bench.d/<experiment>.sh, by the first
# line of its header) and names each experiment's flag; an unknown
# experiment and a bad value for each experiment are refused with exit
# status 2 and a message naming what was refused, before any cluster
# starts or the results file is made. No cluster runs: the refusals come
# first. And the results file: a baton-bench that printed nothing is
# recorded as a failed figure. BENCH=path runs another scripts/bench (an
# older one, say) for the command-line cases.
# shellcheck disable=SC2016 # jq filters in single quotes
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
script=${BENCH:-$root/scripts/bench}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

help=$("$script" --help 2>&1)
rc=$?
tap_check "--help exits 0" test "$rc" -eq 0
for f in "$root"/scripts/bench.d/*.sh; do
        name=$(basename "$f" .sh)
        case $name in lib | summaries) continue ;; esac
        first=$(sed -n '/^# shellcheck /d; s/^# \{0,1\}//p; q' "$f")
        tap_check "--help describes the experiment $name" grep -qF -- "$first" <<<"$help"
done
for flag in --quick --breakdown --freeze --scale --connections --election-crash \
        --tls-cost --storms --go; do
        tap_check "--help names $flag" grep -qF -- "$flag" <<<"$help"
done

# refused WHAT NAMED ARGS...: scripts/bench ARGS exits 2, its message
# contains NAMED, and it made no results file.
refused() {
        local what=$1 named=$2 err rc
        shift 2
        err=$("$script" --out "$tmp/out.jsonl" "$@" 2>&1 >/dev/null)
        rc=$?
        echo "# scripts/bench $* -> exit $rc: $err"
        tap_check "$what: exit 2" test "$rc" -eq 2
        tap_check "$what: the message names $named" grep -qF -- "$named" <<<"$err"
        tap_check "$what: no results file" test ! -e "$tmp/out.jsonl"
}

refused "an unknown experiment" 'unknown experiment or flag "--no-such-experiment"' \
        --no-such-experiment
refused "a word that is no flag" 'unknown experiment or flag "scale"' scale 1:0
refused "--nodes 4" "--nodes" --nodes 4
refused "--reps 0" "--reps" --reps 0
refused "--tls maybe" "--tls" --tls maybe
refused "--freeze without its settings" "--freeze needs" --freeze
refused "--freeze with a bad last setting" "--freeze: THRESHOLD:TRAILING, got x" \
        --freeze "4096:2048 x"
refused "--scale with a bad last setting" "--scale: SESSIONS:LOCKS, got 1:y" \
        --scale "1:0 1:y"
refused "--scale with --pairs 0" "--pairs" --scale 1:0 --pairs 0
refused "--connections 0" "--connections: a positive number, got 0" \
        --connections "10 0"
refused "--election-crash 0" "--election-crash" --election-crash 0
refused "--storms 0" "--storms: a number of sessions, 1 to 1000000, got 0" \
        --storms 0
refused "--storms without its number" "--storms needs" --storms
refused "--reconnects 0" "--reconnects: a number of connections, 1 to 100000, got 0" \
        --storms 10 --reconnects 0
GOBENCH="$tmp/no-such-gobench" refused "--go with a GOBENCH that is not there" \
        "--go: GOBENCH=$tmp/no-such-gobench is no executable" --go

# A baton-bench that died printing nothing is a failed figure: the
# standard table counts it, and the run's exit status says so.
(
        # shellcheck disable=SC2034 # read by the library
        out="$tmp/record.jsonl" tls=on BATON_CLUSTER_DIR="$tmp/no-cluster"
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/lib.sh"
        : >"$out"
        record "" '. + {rep: $rep}' --argjson rep 1 2>/dev/null
        record '{"ops_per_s":5}' '. + {rep: $rep}' --argjson rep 2 2>/dev/null
)
echo "# recorded: $(tr '\n' ' ' <"$tmp/record.jsonl")"
tap_check "an empty baton-bench output is recorded as failed" \
        grep -q '^{"failed":true,"rep":1,' "$tmp/record.jsonl"
tap_check "a result is recorded as it came, with its RSS and tls" \
        grep -q '^{"ops_per_s":5,"rep":2,"rss_mib":0,"peak_rss_mib":0,"tls":"on"}$' "$tmp/record.jsonl"

# --tls-cost's table: medians with TLS and without and their ratios, from
# lines made up here; and the nodes' CPU, read from /proc for each pid
# file (a busy loop stands in for a node: its CPU time is not zero).
cat >"$tmp/cost.jsonl" <<'LINES'
{"nodes":3,"clients":16,"ops_per_s":900,"cpu_us_per_op":220,"tls":"on","tls_cost":true}
{"nodes":3,"clients":16,"ops_per_s":1000,"cpu_us_per_op":200,"tls":"off","tls_cost":true}
{"nodes":3,"clients":16,"ops_per_s":800,"cpu_us_per_op":260,"tls":"on","tls_cost":true}
{"nodes":3,"clients":16,"ops_per_s":1100,"cpu_us_per_op":180,"tls":"off","tls_cost":true}
{"nodes":3,"clients":16,"ops_per_s":850,"cpu_us_per_op":240,"tls":"on","tls_cost":true}
{"nodes":3,"clients":16,"ops_per_s":1050,"cpu_us_per_op":190,"tls":"off","tls_cost":true}
{"failed":true,"tls":"on"}
LINES
table=$(
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/summaries.sh"
        summary_tls_cost "$tmp/cost.jsonl"
)
echo "$table" | sed 's/^/# /'
tap_check "--tls-cost's table: medians, TLS ÷ off for throughput and CPU" \
        grep -qxF "| 3 | 16 | 850 | 1050 | 0.81 | 240 | 190 | 1.26 | 3 |" <<<"$table"
mkdir -p "$tmp/cost-cluster"
bash -c 'while :; do :; done' &
spin=$!
echo "$spin" >"$tmp/cost-cluster/node1.pid"
sleep 0.5
cpu=$(
        # shellcheck disable=SC2034 # read by the library
        BATON_CLUSTER_DIR="$tmp/cost-cluster"
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/lib.sh"
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/tls-cost.sh"
        nodes_cpu_s
)
kill "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
echo "# nodes_cpu_s with a busy loop as the node: $cpu"
tap_check "--tls-cost reads a node's CPU seconds from /proc" \
        grep -qE '^[0-9]+\.[0-9]{3}$' <<<"$cpu"
tap_check "--tls-cost: a busy node has used CPU" test "$cpu" != 0.000

# --go's table, from lines made up here: per figure the medians of C and
# Go, Go ÷ C of the medians and the range of one repetition's pair; a
# failed Go line leaves its repetition out of the pairs.
cat >"$tmp/go.jsonl" <<'LINES'
{"nodes":3,"workload":"uncontended","clients":1,"ops":9000,"ops_per_s":900,"p50_us":1000,"p99_us":2000,"client_cpu_s":1.35,"errors":0,"rep":1,"client":"c","go_cmp":true}
{"nodes":3,"workload":"uncontended","clients":1,"ops":8100,"ops_per_s":810,"p50_us":1100,"p99_us":2400,"client_cpu_s":1.62,"errors":0,"rep":1,"client":"go","go_cmp":true}
{"nodes":3,"workload":"uncontended","clients":1,"ops":10000,"ops_per_s":1000,"p50_us":950,"p99_us":1800,"client_cpu_s":1.5,"errors":0,"rep":2,"client":"c","go_cmp":true}
{"nodes":3,"workload":"uncontended","clients":1,"ops":10500,"ops_per_s":1050,"p50_us":900,"p99_us":1900,"client_cpu_s":2.1,"errors":1,"rep":2,"client":"go","go_cmp":true}
{"nodes":3,"workload":"uncontended","clients":1,"ops":9500,"ops_per_s":950,"p50_us":980,"p99_us":1900,"client_cpu_s":1.425,"errors":0,"rep":3,"client":"c","go_cmp":true}
{"failed":true,"rep":3,"client":"go","go_cmp":true}
{"nodes":3,"workload":"contended","clients":16,"ops":15000,"ops_per_s":1500,"p50_us":9000,"p99_us":15000,"client_cpu_s":1.8,"errors":0,"rep":1,"client":"c","go_cmp":true}
{"nodes":3,"workload":"contended","clients":16,"ops":14000,"ops_per_s":1400,"p50_us":10000,"p99_us":17000,"client_cpu_s":1.96,"errors":0,"rep":1,"client":"go","go_cmp":true}
{"nodes":3,"workload":"uncontended","clients":16,"ops":50000,"ops_per_s":5000,"p50_us":3000,"p99_us":7000,"client_cpu_s":4,"errors":0,"rep":1,"tls":"on"}
LINES
table=$(
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/summaries.sh"
        summary_go "$tmp/go.jsonl"
)
echo "# ${table//$'\n'/$'\n'# }"
tap_check "--go's table: medians, Go ÷ C and the repetitions' range, CPU per op" \
        grep -qxF "| 3 | uncontended | 1 | 950 | 810 | 0.85 | 0.9–1.05 | 980 / 1900 | 900 / 1900 | 150 / 200 | 0 / 1 | 2 |" <<<"$table"
tap_check "--go's table: contended after uncontended" \
        grep -qxF "| 3 | contended | 16 | 1500 | 1400 | 0.93 | 0.93–0.93 | 9000 / 15000 | 10000 / 17000 | 120 / 140 | 0 / 0 | 1 |" <<<"$table"
tap_check "--go's table: lines of other experiments are left out" \
        test "$(grep -c '^| 3 | uncontended | 16 ' <<<"$table")" -eq 0

# --storms' tables, from lines made up here: the expiry storm's times
# counted from the first lease running out (burst_at_s + the TTL), and the
# keepalives' own CPU: the leader's beside them less its CPU per operation
# alone times the operations beside them, per keepalive.
cat >"$tmp/storms.jsonl" <<'LINES'
{"storm":"expiry","rep":1,"opened":100000,"burst_s":0.49,"burst_at_s":3.0,"storm_ttl_ms":15000,"first_gone_s":18.04,"all_gone_s":19.86,"expiry_lag_max_s":1.86,"term_before":2,"term_after":2,"quiet_p99_us":6000,"storm_p99_us":12000,"errors":0,"storm_errors":0}
{"storm":"expiry","rep":2,"opened":100000,"burst_s":0.5,"burst_at_s":3.0,"storm_ttl_ms":15000,"first_gone_s":18.1,"all_gone_s":-1,"expiry_lag_max_s":-1,"term_before":2,"term_after":3,"quiet_p99_us":6000,"storm_p99_us":600000,"errors":7,"storm_errors":0}
{"storm":"quiet","rep":1,"ops":50000,"ops_per_s":5000,"seconds":10,"leader_cpu_s":5.0,"leader_cpu_per_s":0.5,"errors":0}
{"storm":"keepalives","rep":1,"opened":100000,"ops":40000,"ops_per_s":4000,"keepalives_per_s":30000,"seconds":10,"leader_cpu_s":7.0,"leader_cpu_per_s":0.7,"errors":0,"storm_errors":0}
{"failed":true,"storm":"quiet","rep":2}
{"storm":"reconnect","rep":1,"connections":1000,"lost":1000,"served_again":1000,"reconnect_s":2.214,"gap_p50_ms":1731,"gap_p99_ms":2186,"leader_first":3,"term_first":3,"leader_after":3,"term_after":3,"served_by":1,"leader_cpu_s":0.5,"follower_cpu_s":1.0,"redials":2000,"errors":0}
{"storm":"reconnect","rep":2,"connections":1000,"lost":1000,"served_again":1000,"reconnect_s":9.5,"gap_p50_ms":5000,"gap_p99_ms":9000,"leader_first":1,"term_first":4,"leader_after":2,"term_after":6,"served_by":1,"leader_cpu_s":2.0,"follower_cpu_s":1.0,"redials":3000,"errors":0}
{"storm":"reconnect","rep":3,"connections":1000,"lost":1000,"served_again":1000,"reconnect_s":9.5,"gap_p50_ms":5000,"gap_p99_ms":9000,"leader_first":0,"term_first":0,"leader_after":2,"term_after":6,"served_by":2,"leader_cpu_s":2.0,"follower_cpu_s":1.0,"redials":3000,"errors":0}
LINES
table=$(
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/summaries.sh"
        summary_storms "$tmp/storms.jsonl"
)
echo "$table" | sed 's/^/# /'
tap_check "--storms' expiry table: times from the first lease, leader kept" \
        grep -qxF "| 1 | 100000 | 0.49 | 0.04 | 1.86 | yes | 6 | 12 | 2 | 0 |" <<<"$table"
tap_check "--storms' expiry table: a storm that moved leadership and never ended says so" \
        grep -qxF "| 2 | 100000 | 0.5 | 0.1 | not within 30 s | no (term 2 → 3) | 6 | 600 | 100 | 7 |" <<<"$table"
tap_check "--storms' keepalive table: ratio and the keepalives' own CPU" \
        grep -qxF "| 1 | 100000 | 30000 | 5000 | 4000 | 0.8 | 0.5 | 0.7 | 10 | 0 |" <<<"$table"
tap_check "--storms' keepalive table: a round without its quiet run has no row" \
        test "$(grep -c '^| 2 | 100000 | 30000' <<<"$table")" -eq 0
tap_check "--storms' reconnect table: times, leadership kept, CPU and dials per client" \
        grep -qxF "| 1 | 1000 | 1000 | 1000 | 2.21 | 1731 / 2186 | kept | 0.5 | 0.5 | 1 | 2 | 0 |" <<<"$table"
tap_check "--storms' reconnect table: leadership that moved again says where" \
        grep -qxF "| 2 | 1000 | 1000 | 1000 | 9.5 | 5000 / 9000 | moved (node 1, term 4 → node 2, term 6) | 2 | 2 | 1 | 3 | 0 |" <<<"$table"
tap_check "--storms' reconnect table: two nodes serving clients again is a move" \
        grep -qxF "| 3 | 1000 | 1000 | 1000 | 9.5 | 5000 / 9000 | moved: 2 nodes served clients again | 2 | 2 | 1 | 3 | 0 |" <<<"$table"

tap_end
