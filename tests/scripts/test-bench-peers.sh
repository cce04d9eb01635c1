#!/usr/bin/env bash
# Test of scripts/bench --peers without the peers, printing TAP: --help
# names --peers and --harness; a bad setting (a cluster size, a config,
# a TLS run, a number, a harness that is not there) is refused with exit
# status 2 and a message naming it, before anything is installed or
# started and before the results file is made; a harness whose install
# fails stops the run at once with status 1, naming install.sh. Every
# case runs against a stand-in harness in a temporary directory, whose
# run-all.sh and install.sh only fail, so nothing here can reach a real
# one. And the pieces that need no server: the TLS peers' endpoints and
# ZooKeeper's TLS settings, the TLS rows' labels, and the side-by-side
# table from made-up lines.
# shellcheck disable=SC2016 # jq filters in single quotes
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
script=${BENCH:-$root/scripts/bench}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-bench-peers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tests/lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# The stand-in harness: nothing in it runs anything.
mkdir -p "$tmp/harness/scripts"
printf '#!/bin/sh\necho "stand-in run-all.sh" >&2\nexit 97\n' >"$tmp/harness/run-all.sh"
printf '#!/bin/sh\necho "stand-in install.sh: no apt here" >&2\nexit 1\n' \
        >"$tmp/harness/scripts/install.sh"
chmod +x "$tmp/harness/run-all.sh" "$tmp/harness/scripts/install.sh"
unset CONFIGS TLS_PEERS REPS DURATION WARMUP FIGURES FO_REPS FO_DURATION \
        FO_KILL_AFTER FO_CLIENTS SKIP_INSTALL

help=$("$script" --help 2>&1)
tap_check "--help names --peers" grep -qF -- "--peers" <<<"$help"
tap_check "--help names --harness" grep -qF -- "--harness DIR" <<<"$help"
tap_check "--help says the TLS rows are variant \"tls\"" \
        grep -qF 'rows with variant "tls"' <<<"$help"

# refused WHAT NAMED ENV... -- ARGS...: scripts/bench --peers ARGS with
# the environment ENV exits 2, its message contains NAMED, and it made no
# results file.
refused() {
        local what=$1 named=$2 err rc envs=()
        shift 2
        while [ "$1" != -- ]; do
                envs+=("$1")
                shift
        done
        shift
        err=$(env "${envs[@]}" "$script" --peers --harness "$tmp/harness" \
                --out "$tmp/out.jsonl" "$@" 2>&1 >/dev/null)
        rc=$?
        echo "# ${envs[*]} scripts/bench --peers $* -> exit $rc: $err"
        tap_check "$what: exit 2" test "$rc" -eq 2
        tap_check "$what: the message names $named" grep -qF -- "$named" <<<"$err"
        tap_check "$what: no results file" test ! -e "$tmp/out.jsonl"
}

refused "two cluster sizes" "--peers: one cluster size" -- --nodes "3 5"
refused "--nodes 4" "--nodes: 3, 5" -- --nodes 4
refused "--reps 0" "--reps" -- --reps 0
refused "a system the harness lacks" "CONFIGS: fsync, baton:N" \
        CONFIGS="baton:3 mysql:3" --
refused "a peer of 4 nodes" "got etcd:4" CONFIGS="baton:3 etcd:4" --
refused "a TLS run of no peer" "TLS_PEERS: etcd-tls:N" \
        TLS_PEERS="etcd-tls:3 mongodb-tls:3" --
refused "REPS 0" "REPS: a positive number, got 0" REPS=0 --
refused "a duration in words" "DURATION: seconds, got ten" DURATION=ten --
refused "a workload the harness lacks" "FIGURES: uncontended:C or contended:C" \
        FIGURES="uncontended:1 shared:4" --
err=$("$script" --peers --harness "$tmp/no-harness" --out "$tmp/out.jsonl" 2>&1 >/dev/null)
rc=$?
echo "# --harness $tmp/no-harness -> exit $rc: $err"
tap_check "a harness that is not there: exit 2" test "$rc" -eq 2
tap_check "a harness that is not there: named" grep -qF -- "no peer harness (run-all.sh) in $tmp/no-harness" <<<"$err"
tap_check "a harness that is not there: no results file" test ! -e "$tmp/out.jsonl"

# The peers cannot be installed: status 1 at once, install.sh named, and
# the stand-in run-all.sh never ran.
start=$(date +%s%N)
err=$(SKIP_INSTALL=0 "$script" --peers --harness "$tmp/harness" --out "$tmp/out.jsonl" 2>&1 >/dev/null)
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "# install fails -> exit $rc after $ms ms: $(tr "\n" " " <<<"$err")"
tap_check "install fails: exit 1" test "$rc" -eq 1
if [ -x "$root/build/baton-bench" ]; then
        tap_check "install fails: the message names install.sh" \
                grep -qF "the peers are not installed and $tmp/harness/scripts/install.sh failed" <<<"$err"
else # no build here: that is named first
        tap_check "no baton-bench: the message names it" \
                grep -qF "baton-bench is missing: build Baton first" <<<"$err"
fi
tap_check "install fails: within 5 s" test "$ms" -lt 5000
tap_check "install fails: run-all.sh did not run" \
        bash -c '! grep -qF "stand-in run-all.sh" <<<"$1"' _ "$err"

# The TLS peers' addresses and ZooKeeper's settings, from the functions
# that start them (no server starts: only what they would be told).
(
        # shellcheck disable=SC2034 # read by the library
        LB_ROOT="$tmp/lb" TLS_DIR="$tmp/tls" root=$root lib=$root/scripts/bench.d
        mkdir -p "$TLS_DIR"
        for f in node1.key node1.crt ca.crt; do echo "$f" >"$TLS_DIR/$f"; done
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/peers.sh"
        tls_etcd endpoints 3 >"$tmp/etcd.ep"
        tls_zookeeper endpoints 3 >"$tmp/zk.ep"
        tls_redis endpoints durable >"$tmp/redis.ep"
        zk_tls_conf 3 1
)
echo "# etcd TLS: $(cat "$tmp/etcd.ep"); ZooKeeper TLS: $(cat "$tmp/zk.ep"); Redis TLS: $(cat "$tmp/redis.ep")"
tap_check "etcd with TLS: https endpoints of its own ports" grep -qxF \
        "https://127.0.0.1:2479,https://127.0.0.1:12479,https://127.0.0.1:22479" "$tmp/etcd.ep"
tap_check "ZooKeeper with TLS: the secure client ports" grep -qxF \
        "127.0.0.1:21841,127.0.0.1:21842,127.0.0.1:21843" "$tmp/zk.ep"
tap_check "Redis with TLS: its TLS port" grep -qxF "127.0.0.1:6389" "$tmp/redis.ep"
cfg="$tmp/lb/zookeeper-tls-3/s1/zoo.cfg"
for line in secureClientPort=21841 sslQuorum=true \
        serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory \
        ssl.protocol=TLSv1.3 ssl.quorum.protocol=TLSv1.3 \
        "ssl.trustStore.location=$tmp/tls/ca.crt"; do
        tap_check "ZooKeeper with TLS: zoo.cfg has $line" grep -qxF -- "$line" "$cfg"
done
tap_check "ZooKeeper with TLS: its key and certificate in one PEM file" \
        diff <(printf 'node1.key\nnode1.crt\n') "$tmp/lb/zookeeper-tls-3/s1/node.pem"

# The TLS rows take the peer's name, "tls" in their variant, and "tls":
# "on"; the harness's rows say "tls" too (Baton's as the run's setting).
cat >"$tmp/tls.jsonl" <<'LINES'
{"system":"etcd-tls","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":150,"variant":""}
{"system":"redis-tls","nodes":1,"workload":"uncontended","clients":1,"ops_per_s":1200,"variant":"durable"}
{"system":"fsync","workload":"dd-oflag-dsync-4k","rep":3}
LINES
cat >"$tmp/harness.jsonl" <<'LINES'
{"system":"meta","run":"r"}
{"system":"baton","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":600,"variant":""}
{"system":"etcd","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":200,"variant":""}
LINES
rows=$(
        # shellcheck disable=SC2034 # read by the library
        tls=on
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/peers.sh"
        peers_tls_rows "$tmp/tls.jsonl"
        peers_harness_rows "$tmp/harness.jsonl"
)
echo "$rows" | sed 's/^/# /'
tap_check "a TLS row of etcd: etcd, variant tls, tls on" grep -qxF \
        '{"system":"etcd","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":150,"variant":"tls","tls":"on"}' <<<"$rows"
tap_check "a TLS row of durable Redis: variant \"durable tls\"" \
        grep -qF '"system":"redis",' <<<"$(grep -F '"variant":"durable tls","tls":"on"' <<<"$rows")"
tap_check "the fsync probe's line stays as it was" \
        grep -qxF '{"system":"fsync","workload":"dd-oflag-dsync-4k","rep":3}' <<<"$rows"
tap_check "the harness's Baton row: tls as the run's" grep -qF '"system":"baton",' \
        <<<"$(grep -F '"tls":"on"' <<<"$rows")"
tap_check "the harness's etcd row: tls off" grep -qF '"system":"etcd",' \
        <<<"$(grep -F '"tls":"off"' <<<"$rows")"

# The side-by-side table: medians (the mean of the middle two, as the
# harness's), Baton ÷ each, the failover of the 5 s timeout only, failed
# runs left out; reps counts the figures' repetitions, not the failovers'.
cat >"$tmp/side.jsonl" <<'LINES'
{"system":"meta","source":"scripts/bench --peers","baton_commit":"abc1234","baton_tls":"on","openssl":"OpenSSL 3.0.19"}
{"system":"meta","run":"r","host":"Linux","cpus":"2","loadavg_at_start":"1","datadir_fs":"ext4","etcd":"etcd Version: 3.4.23","zookeeper":"3.8.0","curator":"5.4.0","redis":"7.0.15","hiredis":"0.14.1","java":"openjdk 17","go":"go1.19"}
{"system":"fsync","workload":"pwrite-fdatasync-4k","ops_per_s":3000,"p50_us":300,"p99_us":900,"rep":1,"variant":""}
{"system":"baton","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":600,"variant":"","rep":1,"tls":"on"}
{"system":"baton","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":500,"variant":"","rep":2,"tls":"on"}
{"system":"baton","nodes":3,"workload":"contended","clients":16,"ops_per_s":800,"variant":"","rep":1,"tls":"on"}
{"system":"baton","nodes":3,"workload":"failover","clients":16,"max_gap_ms":500,"variant":"","rep":1,"tls":"on"}
{"system":"baton","nodes":3,"workload":"failover","clients":16,"max_gap_ms":500,"variant":"","rep":3,"tls":"on"}
{"system":"etcd","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":200,"variant":"tls","rep":1,"tls":"on"}
{"system":"etcd","nodes":3,"workload":"uncontended","clients":1,"ops_per_s":240,"variant":"tls","rep":2,"tls":"on"}
{"system":"etcd","nodes":3,"workload":"contended","clients":16,"ops_per_s":160,"variant":"tls","rep":1,"tls":"on"}
{"system":"etcd","nodes":3,"workload":"contended","clients":16,"variant":"tls","rep":2,"failed":true}
{"system":"etcd","nodes":3,"workload":"failover","clients":16,"max_gap_ms":5000,"variant":"tls","rep":1,"tls":"on"}
{"system":"etcd","nodes":3,"workload":"failover","clients":16,"max_gap_ms":2000,"variant":"op-timeout-1000ms tls","rep":1,"tls":"on"}
LINES
table=$(
        # shellcheck source=/dev/null
        . "$root/scripts/bench.d/summaries.sh"
        summary_peers "$tmp/side.jsonl"
)
echo "$table" | sed 's/^/# /'
tap_check "the table's Baton row: medians" grep -qxF \
        "| Baton (TLS on) | 3 | 2 | 550 | 800 | 500 |" <<<"$table"
tap_check "the table's etcd TLS row: medians and Baton ÷ etcd" grep -qxF \
        "| etcd tls | 3 | 2 | 220 (2.5) | 160 (5) | 5000 (0.1) |" <<<"$table"
tap_check "the table names the versions" grep -qF \
        "Versions: Baton abc1234 (TLS on), etcd 3.4.23, ZooKeeper 3.8.0 + Curator 5.4.0" <<<"$table"
tap_check "the table shows the fsync probe" grep -qxF \
        "| pwrite-fdatasync-4k | 1 | 3000 | – | 300 | 900 |" <<<"$table"

tap_end
