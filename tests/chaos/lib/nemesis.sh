# shellcheck shell=bash
# scripts/chaos: the nemeses. Each nem_<name> injects its fault once and
# heals it before returning; nemesis_loop repeats it on the seeded schedule
# until the run's time is up; heal_all ends every fault.
#
# Every command that injects or heals a fault is logged to RUN/nemesis.log
# (docs/chaos.md, "Nemesis log") just before it runs: "start" opens a
# fault, "info" is a step inside it, "end" closes it.

# The nemeses: name, then what it does (scripts/chaos --list).
NEMESES=(
        "none|no faults: the baseline"
        "kill-leader|kill -9 the leader (highest term that claims it), restart it from its data dir 3-5 s later"
        "kill-random|kill -9 a random node, restart it 3-5 s later"
        "kill-majority|kill -9 a majority of the nodes at once, restart them 3-5 s later"
        "pause-node|SIGSTOP a node (the leader half the time) for TTL+0.5-1.5 s, then SIGCONT"
        "pause-client|SIGSTOP a worker (a counter, rwlock, semaphore, transfers or election worker holding its lock or leadership if one can be caught) for TTL+1-2 s, then SIGCONT"
        "partition-leader|cut the leader from every other node for 4-7 s; clients still reach it"
        "partition-majority|cut a random minority from the majority for 4-7 s"
        "partition-bridge|split the nodes into two sides joined only by one bridge node, 4-7 s"
        "partition-ring|5 nodes in a random ring, each seeing only its two neighbours, 4-7 s"
        "client-cut-short|cut one worker from every node for TTL/2"
        "client-cut-long|cut one worker from every node for 2xTTL"
        "packet-loss|drop 30% of the packets to one node (the leader half the time), 5-8 s"
        "clock-skew|restart a node under libfaketime at x2 or x0.5 clock rate for 6-10 s, then normally"
        "disk-full|fill one node's data dir (a 64 MiB tmpfs) for 3-5 s, then free it"
        "slow-fsync|strace-inject a 300 ms delay into one node's io_submit/fdatasync/fsync for 3-5 s"
        "snapshot-crash|nodes snapshot every 128 entries; kill a follower, restart it, kill it again while it catches up"
        "partition+kill|isolate the leader, then kill -9 the new leader; heal and restart 2-4 s later"
        "kill-batonctl|kill -9 a supervise worker's batonctl alone (not its command) while the command runs"
        "pause-batonctl|SIGSTOP a supervise worker's batonctl alone (not its command) while the command runs, for TTL+1-2 s, then SIGCONT"
)

# Nemeses that strike only the supervise workload's batonctl (the
# matrices run them with that workload alone).
nemesis_batonctl() { [ "$1" = kill-batonctl ] || [ "$1" = pause-batonctl ]; }

# Nemeses that need the netns topology.
NET_NEMESES=" partition-leader partition-majority partition-bridge partition-ring client-cut-short client-cut-long packet-loss partition+kill "

nemesis_known() {
        local e
        for e in "${NEMESES[@]}"; do
                [ "${e%%|*}" = "$1" ] && return 0
        done
        return 1
}

nemesis_needs_net() { [[ "$NET_NEMESES" == *" $1 "* ]]; }

# "n1,n3" from "1 3".
targets() {
        local out="" i
        for i in "$@"; do
                out="$out${out:+,}n$i"
        done
        echo "${out:-none}"
}

# The current members: nodes 1..NODES, or those of $ST/members in a run
# that changes its membership (nem_member.sh).
all_nodes() {
        if [ -s "$ST/members" ]; then
                sort -n "$ST/members"
        else
                seq 1 "$NODES"
        fi
}

# SHUFFLED = every node id, in a seeded random order.
shuffle_nodes() {
        local ids
        mapfile -t ids < <(all_nodes)
        shuffle "${ids[@]}"
}

# The nodes that run, as a list of ids.
live_nodes() {
        local i
        for i in $(all_nodes); do
                alive "node$i" && echo "$i"
        done
}

# TGT = a random running node; the leader instead with probability 1/2.
pick_node() {
        local live
        mapfile -t live < <(live_nodes)
        TGT=""
        [ ${#live[@]} -gt 0 ] || return 1
        rnd 2
        if [ "$R" = 0 ] && find_leader && [ -n "$LEADER" ]; then
                TGT=$LEADER
                return 0
        fi
        rnd ${#live[@]}
        TGT=${live[$R]}
}

# SIGKILL the nodes $3.. and log it as ACTION ($1) of FAULT ($2).
kill_nodes() {
        local action=$1 fault=$2 i p pids=() ids=()
        shift 2
        for i in "$@"; do
                p=$(pid_of "node$i")
                [ -n "$p" ] || continue
                expect_exit "$p" 137
                pids+=("$p")
                ids+=("$i")
        done
        if [ ${#pids[@]} -eq 0 ]; then
                nemlog info "$fault" "$(targets "$@")" "none (not running)"
                return 1
        fi
        nemrun "$action" "$fault" "$(targets "${ids[@]}")" "kill -9 ${pids[*]}"
        for p in "${pids[@]}"; do
                wait_gone "$p" 3000 || warn "pid $p survived kill -9"
        done
}

# Start the nodes $3.. that do not run (under FAKETIME spec $FT when set),
# logged as ACTION ($1) of FAULT ($2).
restart_nodes() {
        local action=$1 fault=$2 i cmds="" dead=()
        shift 2
        for i in "$@"; do
                alive "node$i" && continue
                dead+=("$i")
                cmds="$cmds${cmds:+ ; }$(node_cmd "$i" "${FT:-}") >>$RUN/nodes/n$i/node.log 2>&1"
        done
        nemlog "$action" "$fault" "$(targets "$@")" "${cmds:-none (running)}"
        for i in "${dead[@]}"; do
                node_start "$i" "${FT:-}"
        done
}

# --- The nemeses: one fault each -------------------------------------------------

nem_none() { sleep_ms_bounded 1000; }

nem_kill_leader() {
        if ! wait_leader 5000; then
                nemlog info kill-leader none "none (no leader within 5 s)"
                return 0
        fi
        local l=$LEADER
        kill_nodes start kill-leader "$l" || return 0
        rnd_range 3000 5000
        sleep_ms "$R"
        restart_nodes end kill-leader "$l"
}

nem_kill_random() {
        pick_node || return 0
        local n=$TGT
        kill_nodes start kill-random "$n" || return 0
        rnd_range 3000 5000
        sleep_ms "$R"
        restart_nodes end kill-random "$n"
}

nem_kill_majority() {
        shuffle_nodes
        local victims=("${SHUFFLED[@]:0:$((NODES / 2 + 1))}")
        kill_nodes start kill-majority "${victims[@]}" || return 0
        rnd_range 3000 5000
        sleep_ms "$R"
        restart_nodes end kill-majority "${victims[@]}"
}

nem_pause_node() {
        pick_node || return 0
        local n=$TGT p
        p=$(pid_of "node$n")
        [ -n "$p" ] || return 0
        nemrun start pause-node "n$n" "kill -STOP $p"
        rnd_range $((TTL_MS + 500)) $((TTL_MS + 1500))
        sleep_ms "$R"
        nemrun end pause-node "n$n" "kill -CONT $p"
}

# Pause a counter or election worker caught between its fenced read and its
# write (the window where a paused holder or leader writes on stale data: a
# fencing save, or a lost update without fencing), or an rwlock, semaphore
# or transfers worker caught inside
# the register (after its enter), polled for up to 3 s; else a random one of those
# workers; else a random worker. The SIGSTOP follows the sighting within
# ~2 ms.
nem_pause_client() {
        local counters=() j i p t="" line sign
        for j in $(seq 1 "$NWORKERS"); do
                case "${WORKLOAD_OF[$j]}" in
                counter | http-counter | rwlock | rwlock-bug | semaphore | transfers | transfers-bug | election | hold) alive "w$j" && counters+=("$j") ;;
                esac
        done
        if [ ${#counters[@]} -gt 0 ]; then
                shuffle "${counters[@]}"
                for i in $(seq 1 300); do
                        for j in "${SHUFFLED[@]}"; do
                                line=$(tail -n 1 "$RUN/history/w$j.log" 2>/dev/null)
                                sign=" type=ok f=read "
                                case "${WORKLOAD_OF[$j]}" in
                                counter | http-counter | election | hold) ;;
                                *) sign=" type=ok f=enter " ;;
                                esac
                                [[ "$line" == *"$sign"* ]] || continue
                                p=$(pid_of "w$j")
                                [ -n "$p" ] || continue
                                t=$(now_ns)
                                kill -STOP "$p"
                                nemlog start pause-client "w$j" "kill -STOP $p" "$t"
                                break 2
                        done
                done
                if [ -z "$t" ]; then
                        rnd ${#counters[@]}
                        j=${counters[$R]}
                fi
        else
                rnd "$NWORKERS"
                j=$((R + 1))
        fi
        if [ -z "$t" ]; then
                p=$(pid_of "w$j")
                [ -n "$p" ] || return 0
                nemrun start pause-client "w$j" "kill -STOP $p"
        fi
        rnd_range $((TTL_MS + 1000)) $((TTL_MS + 2000))
        sleep_ms "$R"
        nemrun end pause-client "w$j" "kill -CONT $p"
}

# A supervise worker's batonctl whose command runs (the worker's last
# history line is the command's ok of the acquire: the hold has not been
# ended yet), polled for up to 3 s: BCTL (its pid) and BW (w<j>). The pid
# is the worker's pid file's, checked to be a batonctl's.
pick_batonctl() {
        local ws=() j i line p
        BCTL=""
        BW=""
        for j in $(seq 1 "$NWORKERS"); do
                [ "${WORKLOAD_OF[$j]}" = supervise ] && alive "w$j" && ws+=("$j")
        done
        [ ${#ws[@]} -gt 0 ] || return 1
        shuffle "${ws[@]}"
        for i in $(seq 1 300); do
                for j in "${SHUFFLED[@]}"; do
                        line=$(tail -n 1 "$RUN/history/w$j.log" 2>/dev/null)
                        [[ "$line" == *" type=ok f=acquire "* ]] || continue
                        p=$(cat "$RUN/workers/w$j.batonctl" 2>/dev/null)
                        if [ -z "$p" ] || ! grep -qa batonctl "/proc/$p/cmdline" 2>/dev/null; then
                                continue
                        fi
                        BCTL=$p
                        BW="w$j"
                        return 0
                done
                sleep 0.01
        done
        return 1
}

# kill -9 batonctl alone, as the OOM killer or a unit with
# KillMode=process would: its command must be dead before the lease ends
# (S15). The worker goes on with its next run.
nem_kill_batonctl() {
        if ! pick_batonctl; then
                nemlog info kill-batonctl none "none (no batonctl with a running command within 3 s)"
                return 0
        fi
        nemrun start kill-batonctl "$BW" "kill -9 $BCTL"
        nemlog end kill-batonctl "$BW" "none (the worker starts its next batonctl)"
}

# SIGSTOP batonctl alone for TTL + 1-2 s: its watchdog must stop the
# command before the lease ends (S15); after SIGCONT it exits 121.
nem_pause_batonctl() {
        if ! pick_batonctl; then
                nemlog info pause-batonctl none "none (no batonctl with a running command within 3 s)"
                return 0
        fi
        local p=$BCTL w=$BW
        # heal_all continues it and the cleanup kills it, should the run end
        # meanwhile.
        echo "$p" >>"$ST/started"
        nemrun start pause-batonctl "$w" "kill -STOP $p"
        rnd_range $((TTL_MS + 1000)) $((TTL_MS + 2000))
        sleep_ms "$R"
        nemrun end pause-batonctl "$w" "kill -CONT $p"
}

# Cut the pairs "a:b" given as FAULT ($1) on TARGET ($2), hold 4-7 s
# (or $HOLD_MS), heal.
partition() {
        local fault=$1 target=$2 hold
        shift 2
        nemrun start "$fault" "$target" "$(cut_pairs_cmd "$@")"
        if [ -n "${HOLD_MS:-}" ]; then
                hold=$HOLD_MS
        else
                rnd_range 4000 7000
                hold=$R
        fi
        sleep_ms "$hold"
        nemrun end "$fault" "$target" "$(heal_cmd)"
}

nem_partition_leader() {
        if ! wait_leader 5000; then
                nemlog info partition-leader none "none (no leader within 5 s)"
                return 0
        fi
        local l=$LEADER i pairs=()
        for i in $(all_nodes); do
                [ "$i" = "$l" ] || pairs+=("n$l:n$i")
        done
        partition partition-leader "n$l" "${pairs[@]}"
}

nem_partition_majority() {
        shuffle_nodes
        local k=$((NODES / 2)) a b pairs=()
        for a in "${SHUFFLED[@]:0:$k}"; do
                for b in "${SHUFFLED[@]:$k}"; do
                        pairs+=("n$a:n$b")
                done
        done
        partition partition-majority "$(targets "${SHUFFLED[@]:0:$k}")|$(targets "${SHUFFLED[@]:$k}")" "${pairs[@]}"
}

nem_partition_bridge() {
        shuffle_nodes
        local bridge=${SHUFFLED[0]} rest=("${SHUFFLED[@]:1}") k a b pairs=()
        k=$((${#rest[@]} / 2))
        for a in "${rest[@]:0:$k}"; do
                for b in "${rest[@]:$k}"; do
                        pairs+=("n$a:n$b")
                done
        done
        partition partition-bridge "$(targets "${rest[@]:0:$k}")|n$bridge|$(targets "${rest[@]:$k}")" "${pairs[@]}"
}

nem_partition_ring() {
        shuffle_nodes
        local ring=("${SHUFFLED[@]}") n=${#SHUFFLED[@]} a b d pairs=()
        for ((a = 0; a < n; a++)); do
                for ((b = a + 1; b < n; b++)); do
                        d=$((b - a))
                        [ "$d" -eq 1 ] || [ "$d" -eq $((n - 1)) ] && continue
                        pairs+=("n${ring[a]}:n${ring[b]}")
                done
        done
        partition partition-ring "ring:$(targets "${ring[@]}")" "${pairs[@]}"
}

client_cut() {
        local fault=$1 hold=$2 j i pairs=()
        rnd "$NWORKERS"
        j=$((R + 1))
        for i in $(all_nodes); do
                pairs+=("w$j:n$i")
        done
        HOLD_MS=$hold partition "$fault" "w$j" "${pairs[@]}"
}
nem_client_cut_short() { client_cut client-cut-short $((TTL_MS / 2)); }
nem_client_cut_long() { client_cut client-cut-long $((TTL_MS * 2)); }

nem_packet_loss() {
        pick_node || return 0
        local n=$TGT
        nemrun start packet-loss "n$n" \
                "$(nft_cmd "add rule bridge chaos cut oifname \"$P""n$n\" numgen random mod 100 < 30 drop")"
        rnd_range 5000 8000
        sleep_ms "$R"
        nemrun end packet-loss "n$n" "$(heal_cmd)"
}

nem_clock_skew() {
        pick_node || return 0
        local n=$TGT rate
        rnd 2
        if [ "$R" = 0 ]; then rate=x2; else rate=x0.5; fi
        kill_nodes start clock-skew "$n" || return 0
        FT="+0 $rate" restart_nodes info clock-skew "$n"
        rnd_range 6000 10000
        sleep_ms "$R"
        kill_nodes info clock-skew "$n"
        restart_nodes end clock-skew "$n"
}

# Fill the node's data dir (its own tmpfs); 2-3 s later kill -9 it and
# restart it on the full disk, where it must either run or refuse to start
# with exit status 1 (a clean "not enough space"), never crash; 1-2 s later
# free the disk and start it again if it is down. The nodes run with a low
# snapshot threshold, so a running node also writes snapshots meanwhile.
nem_disk_full() {
        pick_node || return 0
        local n=$TGT f="$RUN/nodes/n$TGT/data/chaos-fill"
        nemrun start disk-full "n$n" "dd if=/dev/zero of=$f bs=1M status=none"
        rnd_range 2000 3000
        sleep_ms "$R"
        echo 1 >"$ST/expect-name.node$n"
        kill_nodes info disk-full "$n"
        restart_nodes info disk-full "$n"
        rnd_range 1000 2000
        sleep_ms "$R"
        nemrun end disk-full "n$n" "rm -f $f"
        rm -f "$ST/expect-name.node$n"
        if ! alive "node$n"; then
                restart_nodes info disk-full "$n"
        fi
}

nem_slow_fsync() {
        pick_node || return 0
        local n=$TGT p sp
        p=$(pid_of "node$n")
        [ -n "$p" ] || return 0
        nemrun start slow-fsync "n$n" "strace -f -qq -o /dev/null -p $p -e trace=io_submit,fdatasync,fsync -e inject=io_submit,fdatasync,fsync:delay_enter=300000 &"
        sp=$!
        echo "$sp" >>"$ST/helpers"
        rnd_range 3000 5000
        sleep_ms "$R"
        nemrun end slow-fsync "n$n" "kill -INT $sp"
        if ! wait_gone "$sp" 3000; then
                warn "strace (pid $sp) did not detach: SIGKILL"
                kill -KILL "$sp" 2>/dev/null
        fi
}

nem_snapshot_crash() {
        find_leader
        local l=$LEADER i followers=() n
        for i in $(live_nodes); do
                [ "$i" = "$l" ] || followers+=("$i")
        done
        [ ${#followers[@]} -gt 0 ] || return 0
        rnd ${#followers[@]}
        n=${followers[$R]}
        kill_nodes start snapshot-crash "$n" || return 0
        rnd_range 2000 4000 # the others move on by more than the trailing entries
        sleep_ms "$R"
        restart_nodes info snapshot-crash "$n"
        rnd_range 100 800 # while it installs the snapshot and catches up
        sleep_ms "$R"
        kill_nodes info snapshot-crash "$n"
        rnd_range 1000 2000
        sleep_ms "$R"
        restart_nodes end snapshot-crash "$n"
}

nem_partition_kill() {
        if ! wait_leader 5000; then
                nemlog info partition+kill none "none (no leader within 5 s)"
                return 0
        fi
        local l=$LEADER i pairs=() l2
        for i in $(all_nodes); do
                [ "$i" = "$l" ] || pairs+=("n$l:n$i")
        done
        nemrun start partition-leader "n$l" "$(cut_pairs_cmd "${pairs[@]}")"
        if wait_leader 5000 "$l"; then
                l2=$LEADER
                kill_nodes start kill-leader "$l2"
        else
                nemlog info partition+kill none "none (no new leader within 5 s)"
        fi
        rnd_range 2000 4000
        sleep_ms "$R"
        nemrun end partition-leader "n$l" "$(heal_cmd)"
        [ -n "${l2:-}" ] && restart_nodes end kill-leader "$l2"
        return 0
}

# --- Schedule and heal --------------------------------------------------------------

# Repeat the nemesis until END_NS: a 2-3 s warm-up, then fault, 2-4 s gap,
# fault... Every fault is healed before the next one starts. A mix
# (mix.sh) draws each fault's nemesis.
nemesis_loop() {
        local fn="nem_${NEMESIS//[-+]/_}"
        rnd_range 2000 3000
        sleep_ms_bounded "$R"
        while [ "$(now_ns)" -lt "$END_NS" ]; do
                if [ "$NEMESIS" = mix ]; then
                        mix_pick
                        fn="nem_${NEXT//[-+]/_}"
                fi
                "$fn"
                rnd_range 2000 4000
                sleep_ms_bounded "$R"
        done
}

# 0 when PID $1 is stopped (SIGSTOP).
stopped() {
        local st
        st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
        [ "$st" = T ]
}

# End every fault: flush the cut chain, SIGCONT every process, stop the
# fault helpers (strace), remove fill files, restart every node that is down.
heal_all() {
        local cmds=() c p i dead=() rcmds=""
        [ "$NETWORK" = netns ] && cmds+=("$(heal_cmd)")
        for p in $(cat "$ST/started" 2>/dev/null); do
                stopped "$p" && cmds+=("kill -CONT $p")
        done
        for p in $(cat "$ST/helpers" 2>/dev/null); do
                kill -0 "$p" 2>/dev/null && cmds+=("kill -INT $p")
        done
        for i in $(all_nodes); do
                [ -e "$RUN/nodes/n$i/data/chaos-fill" ] && cmds+=("rm -f $RUN/nodes/n$i/data/chaos-fill")
        done
        c=""
        for p in "${cmds[@]}"; do
                c="$c${c:+ ; }$p"
        done
        nemrun start heal-all all "${c:-true}"
        heal_clock 2>/dev/null || true
        heal_disk 2>/dev/null || true
        heal_links 2>/dev/null || true
        for i in $(all_nodes); do
                if ! alive "node$i"; then
                        dead+=("$i")
                        rcmds="$rcmds${rcmds:+ ; }$(node_cmd "$i") >>$RUN/nodes/n$i/node.log 2>&1"
                fi
        done
        nemlog end heal-all all "${rcmds:-true}"
        for i in "${dead[@]}"; do
                node_start "$i"
        done
}
