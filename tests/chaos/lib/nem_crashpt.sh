# shellcheck shell=bash
# scripts/chaos: the crash-point nemesis. Its runs start every node from
# batond-crashpoints (scripts/chaos sets SERVER_BIN), which kills itself at
# a named point of its code when started with BATON_CRASH_AT=NAME[:NTH]
# (src/server/base/crashpoint.h, docs/chaos.md "crash-point").

NEMESES+=("crash-point|restart a node (the leader half the time) with a crash point armed (a log append, a snapshot write or restore, a member entry applied, the snapshot image child, a background job): it dies there; restart it unarmed")

# The points, and how many hits of each to let by before the one that
# kills (a random 1..N): appends come by the hundred, so the crash falls
# at a random one; a restore is the snapshot loaded at start (1) or one a
# leader sent afterwards (2).
CRASH_POINTS=(
        "append-before|40"
        "append-after|40"
        "snapshot-put-before|2"
        "snapshot-put-after|2"
        "restore-before|2"
        "restore-after|2"
        "member-applied|1"
        "image-child|1"
        "bgjob-after|2"
)

CRASHPT_ORDER=() # the points still to come this turn

# How long an armed node may run without hitting its point before a plain
# kill -9 ends it (ms).
CRASHPT_BOUND_MS=15000

# How long a node whose image child died at image-child runs on before it
# is stopped (ms): time for raft to ask it for snapshots.
CRASHPT_IMAGE_RUN_MS=3000

# Stop node $1 with SIGTERM (SIGKILL after 10 s), logged as ACTION ($2).
crashpt_stop() {
        local n=$1 action=$2 p
        p=$(pid_of "node$n")
        [ -n "$p" ] || return 1
        expect_exit "$p" "0 143 137"
        nemrun "$action" crash-point "n$n" "kill -TERM $p"
        if ! wait_gone "$p" 10000; then
                nemrun info crash-point "n$n" "kill -9 $p"
                wait_gone "$p" 3000
        fi
}

# Start node $1 with BATON_CRASH_AT=$2, as node_start does otherwise.
crashpt_start_armed() {
        local n=$1 at=$2 cmd
        cmd="$(ns_exec "n$n")env BATON_CRASH_AT=$at $SERVER_BIN --config $RUN/nodes/n$n/node.conf"
        # It dies by its own SIGKILL: an exit the suite caused.
        echo 137 >"$ST/expect-name.node$n"
        nemlog info crash-point "n$n" "$cmd >>$RUN/nodes/n$n/node.log 2>&1"
        echo "=== scripts/chaos: t=$(now_ns) start: $cmd" >>"$RUN/nodes/n$n/node.log"
        spawn "node$n" "$RUN/nodes/n$n/node.log" "$cmd"
}

# Wait up to CRASHPT_BOUND_MS for node $1's log, past byte $2, to say that
# point $3 was hit, and (but for image-child, which kills the child alone)
# for the node to be gone. 0 when it was.
crashpt_wait_hit() {
        local n=$1 from=$2 pt=$3 end
        end=$(($(now_ns) + CRASHPT_BOUND_MS * 1000000))
        while [ "$(now_ns)" -lt "$end" ]; do
                if tail -c +"$((from + 1))" "$RUN/nodes/n$n/node.log" |
                        grep -q "^crash point $pt hit"; then
                        [ "$pt" = image-child ] && return 0
                        alive "node$n" || return 0
                fi
                sleep 0.05
        done
        return 1
}

# A membership change while node $1 runs armed with member-applied: a
# follower V other than it is removed (it stops by itself, exit 0). VICTIM
# = V, or "" when there is none to remove.
crashpt_member_remove() {
        local t=$1 i
        VICTIM=""
        find_leader
        for i in $(live_nodes); do
                [ "$i" != "$t" ] && [ "$i" != "$LEADER" ] && VICTIM=$i && break
        done
        if [ -z "$VICTIM" ]; then
                nemlog info crash-point none "none (no follower to remove)"
                return 1
        fi
        echo "0 137" >"$ST/expect-name.node$VICTIM"
        nemrun info crash-point "n$VICTIM" "$(ns_exec ctl)$CTL --endpoints $ENDPOINTS --timeout 10000 member remove $VICTIM"
}

# Node $1, removed, back as a new member: its data dir emptied, started
# with join = true, added (batonctl member add answers once it is a
# caught-up voter; tried up to 3 times), then join taken out of its config.
# The removed node must stop by itself within 15 s (exit 0, said in the
# log; member_stopped() fails the run otherwise); the new one must not
# exit: its exits are no longer expected.
crashpt_member_readd() {
        local v=$1 i conf="$RUN/nodes/n$1/node.conf"
        member_stopped crash-point "$v"
        nemlog info crash-point "n$v" "none (removed, it is gone)"
        sleep_ms 200 # its exit recorded while still expected
        rm -f "$ST/expect-name.node$v"
        nemrun info crash-point "n$v" "rm -rf $RUN/nodes/n$v/data/* ; echo 'join = true' >>$conf"
        restart_nodes info crash-point "$v"
        for i in 1 2 3; do
                nemrun info crash-point "n$v" "$(ns_exec ctl)$CTL --endpoints $ENDPOINTS --timeout 10000 member add $v $(node_raft_addr "$v") $(node_client_addr "$v")" && break
                alive "node$v" || nemlog info crash-point "n$v" "none (the new member exited during its add)"
                restart_nodes info crash-point "$v"
                sleep 1
        done
        nemrun info crash-point "n$v" "sed -i '/^join = true\$/d' $conf"
}

nem_crash_point() {
        local e pt max nth n from line v=""
        # Every point in turn, in a seeded order, so that a run of nine
        # rounds or more (90 s) crashes at each.
        # CHAOS_CRASH_POINTS="NAME ..." in the environment: those alone.
        if [ ${#CRASHPT_ORDER[@]} -eq 0 ]; then
                CRASHPT_ORDER=()
                for e in "${CRASH_POINTS[@]}"; do
                        [ -z "${CHAOS_CRASH_POINTS:-}" ] ||
                                [[ " $CHAOS_CRASH_POINTS " == *" ${e%%|*} "* ]] &&
                                CRASHPT_ORDER+=("$e")
                done
                [ ${#CRASHPT_ORDER[@]} -gt 0 ] || CRASHPT_ORDER=("${CRASH_POINTS[@]}")
                shuffle "${CRASHPT_ORDER[@]}"
                CRASHPT_ORDER=("${SHUFFLED[@]}")
        fi
        e=${CRASHPT_ORDER[0]}
        CRASHPT_ORDER=("${CRASHPT_ORDER[@]:1}")
        pt=${e%%|*}
        max=${e#*|}
        rnd "$max"
        nth=$((R + 1))
        pick_node || return 0
        n=$TGT
        crashpt_stop "$n" start || return 0
        # Down long enough that the others move on past the trailing
        # entries: back, it may need a leader's snapshot.
        rnd_range 1000 3000
        sleep_ms "$R"
        from=$(stat -c %s "$RUN/nodes/n$n/node.log")
        crashpt_start_armed "$n" "$pt:$nth"
        if [ "$pt" = member-applied ]; then
                sleep_ms 1000 # past the replay of its own log
                crashpt_member_remove "$n" && v=$VICTIM
        fi
        if crashpt_wait_hit "$n" "$from" "$pt"; then
                line=$(tail -c +"$((from + 1))" "$RUN/nodes/n$n/node.log" | grep -m1 "^crash point $pt hit")
                nemlog info crash-point "n$n" "hit $pt:$nth ($line)"
                # image-child kills the child alone: the node goes on, its
                # every image child dying there, for CRASHPT_IMAGE_RUN_MS,
                # past the snapshots raft asks of it meanwhile (threshold
                # 128), which it must not take from a dead child.
                if [ "$pt" = image-child ] && alive "node$n"; then
                        nemlog info crash-point "n$n" "none (runs on $((CRASHPT_IMAGE_RUN_MS / 1000)) s)"
                        sleep_ms "$CRASHPT_IMAGE_RUN_MS"
                fi
                alive "node$n" && crashpt_stop "$n" info
        else
                nemlog info crash-point "n$n" "not hit $pt:$nth within $((CRASHPT_BOUND_MS / 1000)) s"
                kill_nodes info crash-point "$n"
        fi
        rnd_range 500 1500
        # After image-child, a restart in place: back at once, the node
        # goes on from its own snapshot and log while the leader still
        # has the entries after them, rather than from a leader's
        # snapshot.
        [ "$pt" = image-child ] || sleep_ms "$R"
        rm -f "$ST/expect-name.node$n"
        if [ -z "$v" ]; then
                restart_nodes end crash-point "$n"
                return 0
        fi
        restart_nodes info crash-point "$n"
        crashpt_member_readd "$v"
        nemlog end crash-point "n$n" "none (n$v a member again)"
}
