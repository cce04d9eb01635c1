# shellcheck shell=bash
# scripts/chaos: the network of a run (docs/chaos.md, "Processes").
#
# netns mode: a switch namespace $P-sw with a bridge br0; one namespace per
# node ($P-nI, 10.199.0.I), per worker ($P-wJ, 10.199.0.100+J) and a control
# namespace ($P-ctl, 10.199.0.250, never cut) from which the suite asks the
# nodes for their status. Each is joined to the bridge by a veth pair whose
# switch end is named $P<name> (e.g. bc1f2an1, at most 15 characters). All
# faults are rules in the nft chain "bridge chaos cut" of the switch
# namespace; healing is one flush.
#
# loopback mode: everything on 127.0.0.1, no namespaces, no network faults.

# 0 when this machine lets us create network namespaces.
net_probe() {
        local ns="$P-probe"
        ip netns add "$ns" >/dev/null 2>&1 || return 1
        ip netns del "$ns" >/dev/null 2>&1
        return 0
}

# Pick a prefix "bc" + 4 hex digits that no namespace uses yet.
net_pick_prefix() {
        local n=$(($$ % 65536)) k
        for k in $(seq 0 64); do
                P=$(printf 'bc%04x' $(((n + k * 7919) % 65536)))
                if ! ip netns list 2>/dev/null | grep -q "^$P-"; then
                        return 0
                fi
        done
        return 1
}

# Join namespace $P-$1 to the bridge with address $2.
net_attach() {
        local name=$1 addr=$2 ns="$P-$1" port="$P$1"
        ip netns add "$ns" &&
                ip -n "$P-sw" link add "$port" type veth peer name eth0 netns "$ns" &&
                ip -n "$P-sw" link set "$port" master br0 up &&
                ip -n "$ns" addr add "$addr/24" dev eth0 &&
                ip -n "$ns" link set eth0 up &&
                ip -n "$ns" link set lo up
}

# Build the topology for SLOTS (NODES, or one more: nem_member.sh) nodes
# and NWORKERS workers.
net_setup() {
        local i
        ip netns add "$P-sw" || return 1
        ip -n "$P-sw" link set lo up &&
                ip -n "$P-sw" link add br0 type bridge &&
                ip -n "$P-sw" link set br0 up || return 1
        for i in $(seq 1 "${SLOTS:-$NODES}"); do
                net_attach "n$i" "10.199.0.$i" || return 1
        done
        for i in $(seq 1 "$NWORKERS"); do
                net_attach "w$i" "10.199.0.$((100 + i))" || return 1
        done
        net_attach ctl 10.199.0.250 || return 1
        ip netns exec "$P-sw" nft add table bridge chaos &&
                ip netns exec "$P-sw" nft add chain bridge chaos cut \
                        '{ type filter hook forward priority 0; policy accept; }'
}

# Addresses, and the command prefixes that run a process in its namespace.
node_raft_addr() {
        if [ "$NETWORK" = netns ]; then
                echo "10.199.0.$1:7001"
        else
                echo "127.0.0.1:$((PORT_BASE + $1))"
        fi
}
node_client_addr() {
        if [ "$NETWORK" = netns ]; then
                echo "10.199.0.$1:7101"
        else
                echo "127.0.0.1:$((PORT_BASE + 100 + $1))"
        fi
}
# The HTTP API's: between the client ports and the next run's base.
node_http_addr() {
        if [ "$NETWORK" = netns ]; then
                echo "10.199.0.$1:7301"
        else
                echo "127.0.0.1:$((PORT_BASE + 150 + $1))"
        fi
}
# "ip netns exec NS " for process $1 (n3, w2, ctl), or nothing on loopback.
ns_exec() {
        [ "$NETWORK" = netns ] && echo "ip netns exec $P-$1 "
}

# Loopback: a port base whose 2x5 ports are free.
net_pick_ports() {
        local k b i busy
        for k in $(seq 0 99); do
                b=$((20000 + ((($$ + k) % 200) * 200)))
                busy=0
                for i in $(seq 1 "${SLOTS:-$NODES}"); do
                        if ss -Htln "sport = :$((b + i))" 2>/dev/null | grep -q . ||
                                ss -Htln "sport = :$((b + 100 + i))" 2>/dev/null | grep -q . ||
                                ss -Htln "sport = :$((b + 150 + i))" 2>/dev/null | grep -q .; then
                                busy=1
                        fi
                done
                if [ $busy -eq 0 ]; then
                        PORT_BASE=$b
                        return 0
                fi
        done
        return 1
}

# The nft command line that applies rules $@ (each "add rule ..." text).
nft_cmd() {
        local body="" r
        for r in "$@"; do
                body="$body${body:+; }$r"
        done
        echo "ip netns exec $P-sw nft '$body'"
}

# Rules cutting $1 from $2 in both directions (names: n1, w3).
cut_rules() {
        echo "add rule bridge chaos cut iifname \"$P$1\" oifname \"$P$2\" drop"
        echo "add rule bridge chaos cut iifname \"$P$2\" oifname \"$P$1\" drop"
}

# The nft command line that cuts every pair "a:b" given.
cut_pairs_cmd() {
        local rules=() pair line
        for pair in "$@"; do
                while IFS= read -r line; do
                        rules+=("$line")
                done < <(cut_rules "${pair%%:*}" "${pair##*:}")
        done
        nft_cmd "${rules[@]}"
}

heal_cmd() { echo "ip netns exec $P-sw nft flush chain bridge chaos cut"; }

# Remove everything of ours: namespaces named $P-*.
net_teardown() {
        local ns
        [ -n "${P:-}" ] || return 0
        for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P-"); do
                ip netns del "$ns" 2>/dev/null || warn "could not delete namespace $ns"
        done
}
