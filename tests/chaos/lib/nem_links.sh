# shellcheck shell=bash
# scripts/chaos: link faults (docs/chaos.md, "Link faults"). One-way drops
# and flapping cuts are nft rules in the switch's cut chain (net.sh); a slow
# link is chaos-delayer reading an NFQUEUE that iptables rules in the node's
# namespace feed (delay, jitter that reorders, duplicates); a narrow link
# is a tbf qdisc on both ends of the node's veth. heal_links ends the last
# two; heal_all stops the delayers (their pids are helpers).

NEMESES+=(
        "partition-oneway|drop one direction only between a node (the leader half the time) and the others: it hears them and they do not hear it, or the reverse, 4-7 s"
        "partition-flap|cut one node (the leader half the time) or a minority from the others and heal, again and again every 0.2-1 s, for 5-8 s"
        "slow-link|hold every packet of one node, both ways, for D +- J ms (D 40-80, J from D/2 to D-10, drawn per packet: they reorder) and send 5-15% twice, 5-8 s"
        "narrow-link|limit one node's veth to 64, 128 or 256 kbit/s in both directions (tbf), 5-8 s"
)
NET_NEMESES+="partition-oneway partition-flap slow-link narrow-link "

# The mark chaos-delayer puts on its duplicates, which the rules let by.
LINKS_MARK=0x62

# The iptables binary that takes NFQUEUE rules: the legacy backend (the
# nft backend would need nftables' queue expression).
links_ipt() {
        if command -v iptables-legacy >/dev/null 2>&1; then
                echo iptables-legacy
        else
                echo iptables
        fi
}

# The nft rule dropping the IPv4 packets $1 sends to $2 (names: n1), one
# way only. ARP passes: dropped one way, it would fail neighbour
# resolution both ways once the cached entries expire, and turn the
# one-way fault into a two-way cut.
oneway_rule() { echo "add rule bridge chaos cut iifname \"$P$1\" oifname \"$P$2\" ether type ip counter drop"; }

# The command making node $1's links slow: its packets go to queue $1,
# which chaos-delayer (delay $2 ms, jitter $3 ms, duplicates $4 %, its
# report in $5, seed $6) holds, in the background.
slow_cmd() {
        local n=$1 ns="ip netns exec $P-n$1" ipt
        ipt=$(links_ipt)
        echo "$ns $ipt -A OUTPUT -o eth0 -m mark ! --mark $LINKS_MARK -j NFQUEUE --queue-num $n --queue-bypass" \
                "&& $ns $ipt -A INPUT -i eth0 -j NFQUEUE --queue-num $n --queue-bypass" \
                "&& { $ns $DELAYER_BIN --queue $n --delay-ms $2 --jitter-ms $3 --dup-pct $4" \
                "--seed $6 --mark $LINKS_MARK 2>$5 & }"
}

# Node $1's rules of slow_cmd, removed.
unslow_cmd() { echo "ip netns exec $P-n$1 $(links_ipt) -F"; }

# tbf at $2 kbit on both ends of node $1's veth, and its removal.
narrow_cmd() {
        local q="tbf rate ${2}kbit burst 4kb latency 400ms"
        echo "tc -n $P-n$1 qdisc add dev eth0 root $q" \
                "&& tc -n $P-sw qdisc add dev $P""n$1 root $q"
}
unnarrow_cmd() { echo "tc -n $P-n$1 qdisc del dev eth0 root ; tc -n $P-sw qdisc del dev $P""n$1 root"; }

# The command saving what the fault did before it is healed (nft rule
# counters, tbf statistics) to RUN/links/$1.log.
links_stats_cmd() {
        echo "{ echo \"== \$($MONOTIME)\"; $2; } >>$RUN/links/$1.log 2>&1"
}

# Log (info) the leader the cluster has while fault $1 on $2 lasts.
log_leader_during() {
        find_leader
        nemlog info "$1" "$2" "none (leader while it lasts: ${LEADER:+n}${LEADER:-none})"
}

# After the heal of fault $1 on $2: poll (15 s at most) until every node
# reports the same term and leader, and log (info) how long that took: how
# long the node cut stays deaf after the heal.
log_rejoin() {
        local t0 t agreed
        t0=$(now_ns)
        while :; do
                agreed=$(cluster_status | awk -v n="$NODES" '
                        / error/ { bad = 1 }
                        { for (i = 2; i <= NF; i++) { split($i, a, "="); f[a[1]] = a[2] }
                          k = f["term"] " " f["leader"]; seen[k] = 1; c++
                          if (f["leader"] == "" || f["leader"] == 0) bad = 1 }
                        END { m = 0; for (k in seen) { m++; last = k }
                              if (!bad && c == n && m == 1) print last }')
                t=$(now_ns)
                if [ -n "$agreed" ]; then
                        nemlog info "$1" "$2" "none (every node follows n${agreed#* } in term ${agreed% *}, $(((t - t0) / 1000000)) ms after the heal)"
                        return 0
                fi
                if [ $((t - t0)) -gt 15000000000 ]; then
                        nemlog info "$1" "$2" "none (the nodes do not agree on a leader 15 s after the heal)"
                        return 0
                fi
                sleep 0.1
        done
}

# A node (the leader half the time) stops hearing the others, or they stop
# hearing it; the majority still talks both ways.
nem_partition_oneway() {
        pick_node || return 0
        local n=$TGT i rules=() target
        rnd 2
        for i in $(all_nodes); do
                [ "$i" = "$n" ] && continue
                if [ "$R" = 0 ]; then
                        rules+=("$(oneway_rule "n$n" "n$i")")
                else
                        rules+=("$(oneway_rule "n$i" "n$n")")
                fi
        done
        if [ "$R" = 0 ]; then target="n$n-x->others"; else target="others-x->n$n"; fi
        mkdir -p "$RUN/links"
        nemrun start partition-oneway "$target" "$(nft_cmd "${rules[@]}")"
        rnd_range 4000 7000
        sleep_ms $((R - 1000))
        log_leader_during partition-oneway "$target"
        sleep_ms 1000
        nemrun end partition-oneway "$target" \
                "$(links_stats_cmd oneway "ip netns exec $P-sw nft list chain bridge chaos cut") ; $(heal_cmd)"
        log_rejoin partition-oneway "$target"
}

# Cut a node or a minority from the rest both ways and heal it, each for
# 0.2-1 s, for 5-8 s.
nem_partition_flap() {
        local k a b pairs=() end cmd target i
        shuffle_nodes
        rnd $((NODES / 2))
        k=$((R + 1))
        # One node: the leader half the time, first in SHUFFLED.
        if [ "$k" = 1 ] && pick_node; then
                SHUFFLED=("$TGT")
                for i in $(all_nodes); do
                        [ "$i" = "$TGT" ] || SHUFFLED+=("$i")
                done
        fi
        for a in "${SHUFFLED[@]:0:$k}"; do
                for b in "${SHUFFLED[@]:$k}"; do
                        pairs+=("n$a:n$b")
                done
        done
        target="$(targets "${SHUFFLED[@]:0:$k}")|$(targets "${SHUFFLED[@]:$k}")"
        cmd=$(cut_pairs_cmd "${pairs[@]}")
        rnd_range 5000 8000
        end=$(($(now_ns) + R * 1000000))
        while [ "$(now_ns)" -lt "$end" ]; do
                nemrun start partition-flap "$target" "$cmd"
                rnd_range 200 1000
                sleep_ms "$R"
                nemrun end partition-flap "$target" "$(heal_cmd)"
                rnd_range 200 1000
                sleep_ms "$R"
        done
}

nem_slow_link() {
        if [ ! -x "$DELAYER_BIN" ]; then
                nemlog info slow-link none "none ($DELAYER_BIN is not built: libnetfilter-queue-dev)"
                return 0
        fi
        pick_node || return 0
        local n=$TGT delay jitter dup sp rep seed
        rnd_range 40 80
        delay=$R
        rnd_range $((delay / 2)) $((delay - 10))
        jitter=$R
        rnd_range 5 15
        dup=$R
        rnd 32768
        seed=$R
        mkdir -p "$RUN/links"
        rep="$RUN/links/delayer-n$n-$(now_ns).log"
        nemrun start slow-link "n$n" "$(slow_cmd "$n" "$delay" "$jitter" "$dup" "$rep" "$seed")"
        sp=$!
        echo "$sp" >>"$ST/helpers"
        rnd_range 5000 8000
        sleep_ms "$R"
        nemrun end slow-link "n$n" "$(unslow_cmd "$n") ; kill -INT $sp"
        if ! wait_gone "$sp" 3000; then
                warn "chaos-delayer (pid $sp) did not stop: SIGKILL"
                kill -KILL "$sp" 2>/dev/null
        fi
}

nem_narrow_link() {
        pick_node || return 0
        local n=$TGT rates=(64 128 256)
        rnd 3
        mkdir -p "$RUN/links"
        nemrun start narrow-link "n$n" "$(narrow_cmd "$n" "${rates[$R]}")"
        rnd_range 5000 8000
        sleep_ms "$R"
        nemrun end narrow-link "n$n" "$(links_stats_cmd "tbf-n$n" "tc -s -n $P-n$n qdisc show dev eth0 ; tc -s -n $P-sw qdisc show dev $P""n$n") ; $(unnarrow_cmd "$n")"
}

# heal_all's part: every node's NFQUEUE rules and tbf qdiscs removed (the
# delayers, helpers, are stopped by heal_all after this).
heal_links() {
        local i c=""
        [ "$NETWORK" = netns ] || return 0
        for i in $(all_nodes); do
                if ip netns exec "$P-n$i" "$(links_ipt)" -S 2>/dev/null | grep -q NFQUEUE; then
                        c="$c${c:+ ; }$(unslow_cmd "$i")"
                fi
                if tc -n "$P-n$i" qdisc show dev eth0 2>/dev/null | grep -q tbf; then
                        c="$c${c:+ ; }$(unnarrow_cmd "$i")"
                fi
        done
        [ -z "$c" ] || nemrun info heal-all links "$c"
}
