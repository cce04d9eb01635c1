# How scripts/bench turns its readings into figures: one function per
# table or row an experiment prints, so that every median, mean, ratio and
# per-item cost is computed here and nowhere else. Sourced by scripts/bench.
# shellcheck shell=bash disable=SC2154,SC2016,SC2178 # globals: scripts/bench; jq filters

# --- standard ------------------------------------------------------------

# summary_standard FILE: the standard table, medians over the repetitions
# of each (nodes, workload, clients) in the JSON lines of FILE; the sum of
# errors; the largest RSS and peak. Failed runs are left out (and counted
# by count_failed).
summary_standard() {
        jq -rs '
  def median: sort | if length == 0 then null
                     else .[(length - 1) / 2 | floor] end;
  "| nodes | workload | clients | ops/s | p50 µs | p99 µs | max client gap ms | system gap ms | errors | RSS MiB (peak) |",
  "|---|---|---|---|---|---|---|---|---|---|",
  (map(select(.failed != true))
   | group_by([.nodes, (.workload | if . == "uncontended" then 0
                                    elif . == "contended" then 1
                                    elif . == "shared" then 2
                                    elif . == "semaphore" then 3
                                    elif . == "multi" then 4
                                    elif . == "election" then 5 else 6 end),
               .clients])[]
   | "| \(.[0].nodes) | \(.[0].workload) | \(.[0].clients) | \(map(.ops_per_s) | median | floor) | \(map(.p50_us) | median) | \(map(.p99_us) | median) | \(map(.max_gap_ms) | median) | \(map(.sys_gap_ms) | median) | \(map(.errors) | add) | \(map(.rss_mib) | max) (\(map(.peak_rss_mib) | max)) |")
' "$1"
}

# count_failed FILE: how many lines of FILE are {"failed":true}.
count_failed() {
        jq -s 'map(select(.failed == true)) | length' "$1"
}

# --- breakdown -----------------------------------------------------------

# mean_us BEFORE AFTER SERIES LABELS: the mean of a histogram over the run,
# in µs, from the metrics text scraped before and after it ("-" when no
# observation fell in the run). The differences are taken to six
# significant digits, as awk prints them, as they always were.
mean_us() {
        awk -v sa="$(metric "$2" "$3_sum{$4}")" -v sb="$(metric "$1" "$3_sum{$4}")" \
                -v ca="$(metric "$2" "$3_count{$4}")" -v cb="$(metric "$1" "$3_count{$4}")" 'BEGIN {
                s = ((sa - sb) "") + 0; c = ((ca - cb) "") + 0
                if (c > 0) printf "%.0f", s * 1e6 / c; else print "-" }'
}

# summary_breakdown LINE LEADER BEFORE AFTER: where one request's time goes,
# from the baton-bench result LINE and the leader's metrics text before
# and after the run. The server's stages come from its histograms; the
# client's round trip from ops/s (one op is an acquire and a release); the
# rest is outside the leader.
summary_breakdown() {
        local line=$1 id=$2 b=$3 a=$4 queued raft acquire release ops
        queued=$(mean_us "$b" "$a" baton_command_stage_seconds 'stage="queued"')
        raft=$(mean_us "$b" "$a" baton_command_stage_seconds 'stage="raft"')
        acquire=$(mean_us "$b" "$a" baton_request_duration_seconds 'type="acquire"')
        release=$(mean_us "$b" "$a" baton_request_duration_seconds 'type="release"')
        ops=$(jq -r .ops_per_s <<<"$line")
        awk -v q="$queued" -v r="$raft" -v a="$acquire" -v rel="$release" -v ops="$ops" -v id="$id" 'BEGIN {
                op = 1e6 / ops; req = op / 2; srv = (a + rel) / 2
                printf "One client, acquire/release pairs back to back: %.0f ops/s; leader: node %s\n\n", ops, id
                print "| stage (mean per request) | µs |"
                print "|---|---|"
                printf "| client round trip (1/ops/s, halved: an op is two requests) | %.0f |\n", req
                printf "| in the leader, arrival to answer (acquire %s, release %s) | %.0f |\n", a, rel, srv
                printf "|   queued for the next raft_apply | %s |\n", q
                printf "|   raft: leader disk write and majority acknowledgement, apply | %s |\n", r
                printf "|   the rest: decode, state machine, reply | %.0f |\n", srv - q - r
                printf "| outside the leader: loopback TCP both ways, libbaton | %.0f |\n", req - srv
        }'
}

# --- freeze --------------------------------------------------------------

# summary_freeze THRESHOLD TRAILING KILLED T0 T1 LAG: one row; T0 and T1
# bracket the follower's restart (seconds since the epoch), LAG is its
# longest loop lag in seconds.
summary_freeze() {
        awk -v t="$1" -v r="$2" -v k="$3" -v a="$4" -v b="$5" -v l="$6" \
                'BEGIN { printf "| %d | %d | %d | %.1f | %.0f |\n", t, r, k, b - a, l * 1000 }'
}

# --- scale ---------------------------------------------------------------

# per_node_growth BEFORE AFTER COUNT: bytes per item, largest over the nodes.
per_node_growth() {
        awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN {
                k = split(a, x, " "); split(b, y, " "); w = 0
                for (i = 1; i <= k; i++) { g = (y[i] - x[i]) * 1024 / n; if (g > w) w = g }
                printf "%.0f", w }'
}

# per_lock_growth R0 R1 R2 R3 LOCKS: bytes per lock, largest over the
# nodes, where R0 -> R1 added N sessions and R2 -> R3 another N sessions
# and LOCKS locks: the second step less the first.
per_lock_growth() {
        awk -v a="$1" -v b="$2" -v c="$3" -v d="$4" -v n="$5" 'BEGIN {
                k = split(a, x, " "); split(b, y, " "); split(c, z, " "); split(d, u, " "); w = 0
                for (i = 1; i <= k; i++) { g = ((u[i] - z[i]) - (y[i] - x[i])) * 1024 / n; if (g > w) w = g }
                printf "%.0f", w }'
}

# summary_ratio "FULL_OPS..." "EMPTY_OPS...": the interleaved pairs'
# ratio, the sum of the full runs' ops/s over the empty ones' (their means'
# ratio: as many runs each), "-" without empty runs. Each running sum is
# kept as awk prints a number (six significant digits), as the figures
# quoted in docs/performance.md were summed.
summary_ratio() {
        awk -v f="$1" -v e="$2" '
          function sum(list, x, n, i, s) {
                n = split(list, x, " "); s = 0
                for (i = 1; i <= n; i++) s = (s + x[i]) ""
                return s + 0
          }
          BEGIN { a = sum(f); b = sum(e); if (b > 0) printf "%.2f", a / b; else print "-" }'
}

# summary_scale NAME: one row of the --scale table from the readings the
# experiment gathered in the associative array NAME (see scale.sh: the
# baton-bench results empty, full, f1, f2; the RSS lists r0 r1 r1s r2 r3;
# the times t0..t3; the metrics and probes).
summary_scale() {
        local -n v=$1
        local ns=${v[ns]} nl=${v[nl]} locks rss snap back flag iback ilag idec
        locks=$((ns * nl))
        # The largest node's RSS in MiB, the snapshot in MiB, the
        # follower's two returns in s and its lags in ms, its decode in s.
        read -r rss snap back flag iback ilag idec < <(awk -v r="${v[r2]}" -v snap="${v[snap]}" \
                -v t0="${v[t0]}" -v t1="${v[t1]}" -v t2="${v[t2]}" -v t3="${v[t3]}" \
                -v flag="${v[flag]}" -v ilag="${v[ilag]}" -v idec="${v[idec]}" 'BEGIN {
                n = split(r, x, " "); m = 0
                for (i = 1; i <= n; i++) if (x[i] > m) m = x[i]
                printf "%.0f %.1f %.1f %.0f %.1f %.0f %.1f\n", m / 1024, snap / 1048576,
                        t1 - t0, flag * 1000, t3 - t2, ilag * 1000, idec }')
        jq -rn --argjson e "${v[empty]}" --argjson u "${v[full]}" \
                --argjson a "${v[f1]:-{\}}" --argjson b "${v[f2]:-{\}}" \
                --arg ns "$ns" --arg nl "$nl" \
                --arg ps "$(per_node_growth "${v[r0]}" "${v[r1]}" "$ns")" \
                --arg pl "$(per_lock_growth "${v[r0]}" "${v[r1]}" "${v[r1s]}" "${v[r2]}" "$locks")" \
                --arg pss "$(per_node_growth "${v[r0]}" "${v[r1s]}" "$ns")" \
                --arg pls "$(per_lock_growth "${v[r0]}" "${v[r1s]}" "${v[r1s]}" "${v[r3]}" "$locks")" \
                --arg rss "$rss" --arg snap "$snap" --arg lag "${v[lag]}" --arg fork "${v[fork]}" \
                --arg back "$back" --arg flag "$flag" --arg iback "$iback" --arg ilag "$ilag" \
                --arg idec "$idec" --arg ratio "${v[ratio]}" \
                --arg disk_w "${v[dw0]}–${v[dw1]}" --arg disk_m "${v[dm0]}–${v[dm1]}" '
          "| \($ns) | \(($ns | tonumber) * ($nl | tonumber)) | \((($a.open_s // 0) + ($b.open_s // 0) + ($b.lock_s // 0)) * 1000 | round / 1000) | \(($a.errors // -1) + ($b.errors // -1)) | \(($b.term_before // 0) == ($b.term_after // -1) and ($a.term_before // 0) == ($b.term_after // -1)) | \($ps) | \($pl) | \($rss) | \($snap) | \($e.ops_per_s | floor) | \($u.ops_per_s | floor) | \(($u.ops_per_s / $e.ops_per_s * 100 | round) / 100) | \($e.sys_gap_ms) | \($u.sys_gap_ms) | \($lag) | \($fork) | \($back) | \($flag) | \($iback) | \($ilag) | \($idec) | \($ratio) | \($pss) | \($pls) | \($disk_w) | \($disk_m) |"'
}

# --- connections ---------------------------------------------------------

# summary_connections N R0 R1 LINE LAG: one row. R0 and R1 are every
# node's RSS in KiB before and while the N connections are held; the
# leader (from LINE, the baton-bench result) holds the connections, the
# followers only their sessions and locks.
summary_connections() {
        local n=$1 r0=$2 r1=$3 line=$4 lag=$5 leader lb fb lr
        leader=$(jq -r '.leader_before // 1' <<<"$line")
        read -r lb fb lr < <(awk -v a="$r0" -v b="$r1" -v n="$n" -v l="$leader" 'BEGIN {
                k = split(a, x, " "); split(b, y, " "); f = 0
                for (i = 1; i <= k; i++) if (i != l) { g = (y[i] - x[i]) * 1024 / n; if (g > f) f = g }
                printf "%.0f %.0f %.0f\n", (y[l] - x[l]) * 1024 / n, f, y[l] / 1024 }')
        jq -rn --argjson r "$line" --arg n "$n" --arg lb "$lb" --arg fb "$fb" --arg lr "$lr" --arg lag "$lag" '
          "| \($n) | \($r.held // 0) | \($r.errors // -1) | \(($r.term_before // 0) == ($r.term_after // -1)) | \($r.setup_s // 0) | \(if ($r.setup_s // 0) > 0 then ($r.connected / $r.setup_s | floor) else 0 end) | \(($r.round_p50_us // 0) / 1000 | round) | \(($r.round_p99_us // 0) / 1000 | round) | \($r.round_s // 0) | \($lb) | \($fb) | \($lr) | \($lag) |"'
}

# --- election-crash ------------------------------------------------------

# summary_crashes GAP_MS...: min, median and max of the gaps.
summary_crashes() {
        printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
                printf "crashes %d, ms from kill -9 to the next leader'"'"'s first write: min %d, median %d, max %d\n", NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
}

# --- tls-cost ------------------------------------------------------------

# summary_tls_cost FILE: per size and client count, the medians with TLS
# and without, throughput and CPU per operation, and TLS ÷ off.
summary_tls_cost() {
        jq -rs '
  def median: sort | if length == 0 then null
                     else .[(length - 1) / 2 | floor] end;
  def r(x): if x == null then "-" else (x * 100 | round) / 100 end;
  "| nodes | clients | ops/s TLS | ops/s off | TLS ÷ off | CPU µs/op TLS | CPU µs/op off | TLS ÷ off | rounds |",
  "|---|---|---|---|---|---|---|---|---|",
  (map(select(.failed != true and .tls_cost == true))
   | group_by([.nodes, .clients])[]
   | (map(select(.tls == "on")) | [(map(.ops_per_s) | median), (map(.cpu_us_per_op) | median), length]) as $on
   | (map(select(.tls == "off")) | [(map(.ops_per_s) | median), (map(.cpu_us_per_op) | median), length]) as $off
   | "| \(.[0].nodes) | \(.[0].clients) | \($on[0] | floor? // "-") | \($off[0] | floor? // "-") | \(if $on[0] and $off[0] then r($on[0] / $off[0]) else "-" end) | \($on[1] | floor? // "-") | \($off[1] | floor? // "-") | \(if $on[1] and $off[1] then r($on[1] / $off[1]) else "-" end) | \([$on[2], $off[2]] | min) |")
' "$1"
}

# --- go ------------------------------------------------------------------

# summary_pair FILE TAG LABEL MARK: per size, workload and client count,
# the medians of baton-bench's ("client": "c") and the other client's
# ("client": TAG, lines with MARK true) ops/s, LABEL ÷ C of the medians,
# the lowest and highest LABEL ÷ C of one repetition's pair, the medians
# of each one's p50 and p99 and of its client process's CPU per op
# (client_cpu_s over the window's ops), the errors, and the repetitions
# with both. summary_go: the Go client's (--go); summary_http: HTTP's
# (--http).
summary_pair() {
        jq -rs --arg tag "$2" --arg who "$3" --arg mark "$4" '
  def median: sort | if length == 0 then null
                     else .[(length - 1) / 2 | floor] end;
  def r(x): if x == null then "-" else (x * 100 | round) / 100 end;
  def n(x): if x == null then "-" else x | floor end;
  def cpu: if .ops > 0 then .client_cpu_s * 1e6 / .ops else null end;
  "| nodes | workload | clients | C ops/s | \($who) ops/s | \($who) ÷ C | \($who) ÷ C, per repetition | C p50 / p99 µs | \($who) p50 / p99 µs | client CPU µs/op C / \($who) | errors C / \($who) | repetitions |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  (map(select(.failed != true and .[$mark] == true))
   | group_by([.nodes, .workload != "uncontended", .workload, .clients])[]
   | map(select(.client == "c")) as $c
   | map(select(.client == $tag)) as $g
   | [$c[] as $x | $g[] | select(.rep == $x.rep) | .ops_per_s / $x.ops_per_s] as $pairs
   | ($c | map(.ops_per_s) | median) as $co
   | ($g | map(.ops_per_s) | median) as $go
   | "| \(.[0].nodes) | \(.[0].workload) | \(.[0].clients) | \(n($co)) | \(n($go)) | \(if $co and $go then r($go / $co) else "-" end) | \(if ($pairs | length) > 0 then "\(r($pairs | min))–\(r($pairs | max))" else "-" end) | \(n($c | map(.p50_us) | median)) / \(n($c | map(.p99_us) | median)) | \(n($g | map(.p50_us) | median)) / \(n($g | map(.p99_us) | median)) | \(n($c | map(cpu) | median)) / \(n($g | map(cpu) | median)) | \($c | map(.errors) | add // 0) / \($g | map(.errors) | add // 0) | \($pairs | length) |")
' "$1"
}

summary_go() { summary_pair "$1" go Go go_cmp; }
summary_http() { summary_pair "$1" http HTTP http_cmp; }

# --- storms ---------------------------------------------------------------

# summary_storms FILE: --storms' three tables, a row per round. The
# keepalives' own CPU is the leader's CPU beside them less what the
# clients' operations cost it alone (its CPU per operation in the quiet
# run, times the operations beside the keepalives).
summary_storms() {
        jq -rs '
  def r(x): if x == null then "-" else (x * 100 | round) / 100 end;
  def ms(x): if x == null then "-" else (x / 10 | round) / 100 end;
  map(select(.failed != true)) as $all
  | "| round | sessions | burst s | first expiry, s after the first lease ran out | last expiry applied, s after the first lease ran out | leader kept | quiet p99 ms | storm p99 ms | storm ÷ quiet | errors |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ($all[] | select(.storm == "expiry")
     | "| \(.rep) | \(.opened) | \(r(.burst_s)) | \(r(.first_gone_s - .burst_at_s - .storm_ttl_ms / 1000)) | \(if .all_gone_s < 0 then "not within 30 s" else r(.expiry_lag_max_s) end) | \(if .term_before == .term_after then "yes" else "no (term \(.term_before) → \(.term_after))" end) | \(ms(.quiet_p99_us)) | \(ms(.storm_p99_us)) | \(if .quiet_p99_us > 0 then r(.storm_p99_us / .quiet_p99_us) else "-" end) | \(.errors + .storm_errors) |"),
    "",
    "| round | sessions | keepalives/s | 16 clients alone, ops/s | beside the keepalives | ratio | leader CPU s/s alone | beside | leader CPU µs per keepalive | errors |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ($all | map(select(.storm == "quiet" or .storm == "keepalives")) | group_by(.rep)[]
     | (map(select(.storm == "quiet"))[0]) as $q
     | (map(select(.storm == "keepalives"))[0]) as $k
     | select($q != null and $k != null)
     | (($k.leader_cpu_s - $k.ops * $q.leader_cpu_s / $q.ops) / ($k.keepalives_per_s * $k.seconds)) as $per
     | "| \($q.rep) | \($k.opened) | \($k.keepalives_per_s | floor) | \($q.ops_per_s | floor) | \($k.ops_per_s | floor) | \(r($k.ops_per_s / $q.ops_per_s)) | \(r($q.leader_cpu_per_s)) | \(r($k.leader_cpu_per_s)) | \(r($per * 1e6)) | \($q.errors + $k.errors + $k.storm_errors) |"),
    "",
    "| round | clients | lost | served again | last served, s after the first loss | a client'"'"'s gap p50 / p99 ms | leadership after the first change | new leader CPU s | per client, ms | other node'"'"'s per client, ms | dials per client | errors |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ($all[] | select(.storm == "reconnect")
     | "| \(.rep) | \(.connections) | \(.lost) | \(.served_again) | \(r(.reconnect_s)) | \(.gap_p50_ms) / \(.gap_p99_ms) | \(if .served_by > 1 then "moved: \(.served_by) nodes served clients again" elif .term_first != 0 and (.leader_first != .leader_after or .term_first != .term_after) then "moved (node \(.leader_first), term \(.term_first) → node \(.leader_after), term \(.term_after))" else "kept" end) | \(r(.leader_cpu_s)) | \(if .served_again > 0 then r(.leader_cpu_s * 1000 / .served_again) else "-" end) | \(if .served_again > 0 then r(.follower_cpu_s * 1000 / .served_again) else "-" end) | \(if .lost > 0 then r(.redials / .lost) else "-" end) | \(.errors) |")
' "$1"
}

# --- peers ---------------------------------------------------------------

# summary_peers FILE: Baton beside each peer, default and with TLS, from
# the harness's lines in FILE: medians over the repetitions (the mean of
# the middle two for an even count, as the harness's summarize.sh) of
# ops/s at each uncontended client count, handoffs/s on one lock and the
# longest gap a client saw in a leader kill (the 5 s client timeout's
# runs only); in brackets Baton ÷ that system, against the Baton row of
# the same size (Redis: 3 nodes, else the first). Then the versions and
# the fsync probe.
summary_peers() {
        jq -rs '
  def median: sort | if length == 0 then null
                     elif length % 2 == 1 then .[(length - 1) / 2]
                     else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def fmt: if . == null then "–" elif . >= 100 then round | tostring
           else (. * 10 | round) / 10 | tostring end;
  def ratio($b; $p): if $b == null or $p == null or $p == 0 then ""
                     else " (\(($b / $p * 100 | round) / 100))" end;
  def order: {"baton": 0, "etcd": 1, "zookeeper": 2, "redis": 3}[.system] // 9;
  def lbl: ({"baton": "Baton", "etcd": "etcd", "zookeeper": "ZooKeeper",
               "redis": "Redis"}[.system] // .system)
             + (if (.variant // "") != "" then " " + .variant else "" end)
             + (if .system == "baton" then " (TLS \(.tls // "on"))" else "" end);
  (map(select(.system == "meta" and .source == null)) | .[0]) as $meta
  | (map(select(.system == "meta" and .source != null)) | .[0]) as $ours
  | map(select(.failed != true and .system != "meta" and .system != "fsync")) as $ok
  | (map(select(.system == "fsync" and .failed != true))) as $fsync
  | ($ok | map(select(.workload == "uncontended") | .clients) | unique) as $cs
  | [$ok | map(select(.workload != "failover" or
                      ((.variant // "") | test("op-timeout") | not)))
     | group_by([order, .system, .nodes, (.variant // "")])[]
     | {label: (.[0] | lbl), system: .[0].system, nodes: .[0].nodes,
        u: [$cs[] as $c | map(select(.workload == "uncontended" and .clients == $c)
                              | .ops_per_s) | median],
        c: (map(select(.workload == "contended") | .ops_per_s) | median),
        g: (map(select(.workload == "failover") | .max_gap_ms) | median),
        reps: (map(select(.workload != "failover") | .rep) | max)}] as $rows
  | ($rows | map(select(.system == "baton"))) as $batons
  | "| system | nodes | reps | \($cs | map("\(.) client\(if . > 1 then "s" else "" end) ops/s") | join(" | ")) | one lock, 16: handoffs/s | leader kill: max gap ms |",
    "|---|---|---|\($cs | map("---|") | join(""))---|---|",
    ($rows[] as $r
     | (($batons | map(select(.nodes == $r.nodes)) | .[0])
        // ($batons | map(select(.nodes == 3)) | .[0]) // $batons[0]) as $b
     | (if $r.system == "baton" then null else $b end) as $b
     | "| \($r.label) | \($r.nodes) | \($r.reps) | \([range(0; $cs | length) as $i
         | "\($r.u[$i] | fmt)\(ratio($b.u[$i]; $r.u[$i]))"] | join(" | ")) | \($r.c | fmt)\(ratio($b.c; $r.c)) | \($r.g | fmt)\(ratio($b.g; $r.g)) |"),
    "",
    "In brackets: Baton ÷ that system (throughput: above 1 Baton does more; gap: below 1 Baton'"'"'s is shorter). Medians over the repetitions.",
    "",
    (if $meta then
       "Versions: Baton \($ours.baton_commit // "?") (TLS \($ours.baton_tls // "?")), \($meta.etcd | sub("etcd Version: "; "etcd ")), ZooKeeper \($meta.zookeeper) + Curator \($meta.curator), Redis \($meta.redis) + hiredis \($meta.hiredis) (TLS rows: hiredis'"'"'s reader over \($ours.openssl // "OpenSSL")), \($meta.java), \($meta.go). Host: \($meta.host), \($meta.cpus) CPUs, load at start \($meta.loadavg_at_start); data on \($meta.datadir_fs)."
     else "Versions: no harness meta line." end),
    "",
    "| fsync probe | rep | writes/s | mean µs | p50 µs | p99 µs |",
    "|---|---|---|---|---|---|",
    ($fsync | sort_by(.workload, .rep)[]
     | "| \(.workload) | \(.rep) | \(.ops_per_s | fmt) | \((.mean_us // null) | fmt) | \((.p50_us // null) | fmt) | \((.p99_us // null) | fmt) |")
' "$1"
}
