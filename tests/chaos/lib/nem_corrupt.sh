# shellcheck shell=bash
# scripts/chaos: the corruption nemeses. A stopped minority node's file is
# damaged (tests/chaos/damage.c, chaos-damage) before it starts again; a
# node that refuses its data directory (batond's exit status 3) is brought
# back by the procedure docs/operations.md gives ("A damaged data
# directory"): member remove, wipe, join = true, start, member add.

NEMESES+=(
        "corrupt-minority|kill -9 a follower, damage one of its files (a bit flipped, a truncation, a zeroed block or an older copy of it; a closed or the open segment, a snapshot or its .meta, metadata1/2), all chosen with the seed, restart it; one that refuses (exit 3) is removed, wiped and added back"
        "corrupt-acked|stop a follower, let the others commit for 1.5 s, kill -9 the other follower and the leader, zero a batch the follower stored meanwhile (valid ones after it), restart: it must refuse, not lead without the entries it acknowledged; then removed, wiped and added back"
)

# shellcheck disable=SC2154 # build: set by scripts/chaos
DAMAGE_BIN="$build/tests/chaos/chaos-damage"

# The names of the files of directory $1 that match the pattern $2.
corrupt_names() { find "$1" -maxdepth 1 -type f -printf '%f\n' | grep -E "$2" | sort; }

# Run batonctl against the cluster from the control namespace.
corrupt_ctl() { $(ns_exec ctl) "$CTL" --endpoints "$ENDPOINTS" "$@"; }

# FILE = a file of node $1's data dir of the kind KIND ($2: segment,
# open, snapshot, meta, metadata), picked with the seed; "" if none.
# ("open" is the newest open segment with entries, "snapshot" the newest.)
corrupt_pick_file() {
        local d="$RUN/nodes/n$1/data" files=() f
        case "$2" in
        segment) mapfile -t files < <(corrupt_names "$d" '^[0-9]{16}-[0-9]{16}$') ;;
        open) f=$("$DAMAGE_BIN" open "$d" | awk '{print $1}'); [ -n "$f" ] && files=("$f") ;;
        # The newest snapshot: the one raft loads (an older one is never
        # read again, and goes at the next snapshot).
        snapshot) mapfile -t files < <(corrupt_names "$d" '^snapshot-[0-9-]+$' | sort -t- -k3,3n | tail -n 1) ;;
        meta) mapfile -t files < <(corrupt_names "$d" '^snapshot-.*\.meta$') ;;
        metadata) mapfile -t files < <(corrupt_names "$d" '^metadata[12]$') ;;
        esac
        FILE=""
        [ ${#files[@]} -gt 0 ] || return 1
        rnd ${#files[@]}
        FILE=${files[$R]}
}

# Wait up to 10 s until every node but $1 runs and has applied the
# leader's commit index as it is now (the configuration without node $1):
# a node that comes back after a `member remove` still knows the removed
# member's old directory until it applies it, and would refuse the new one
# (docs/operations.md, "What this does not see").
corrupt_wait_applied() {
        local n=$1 i st want
        for i in $(seq 1 100); do
                st=$(cluster_status)
                [ -n "${want:-}" ] || want=$(awk '/ role=leader / { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == "commit") print a[2] } }' <<<"$st" | sort -n | tail -n 1)
                if [ -n "$want" ] && awk -v n="$n" -v want="$want" -v nodes="$NODES" '
                        { id = ""; ap = -1
                          for (i = 2; i <= NF; i++) { split($i, a, "=")
                                  if (a[1] == "id") id = a[2]; else if (a[1] == "applied") ap = a[2] + 0 }
                          if (id != "" && id != n && ap >= want) ok++ }
                        END { exit !(ok == nodes - 1) }' <<<"$st"; then
                        return 0
                fi
                sleep 0.1
        done
        return 1
}

# Node $1 refused its directory (exit 3, announced): take it out, wipe its
# directory, start it with join = true and add it back, as
# docs/operations.md says. Logged as info lines of FAULT ($2). A peer
# that had not applied the removal yet refuses the new directory and the
# node exits 1 (announced): then remove and add it again, as the same
# section says, up to 3 times.
corrupt_rejoin() {
        local n=$1 fault=$2 i d="$RUN/nodes/n$1"
        nemlog info "$fault" "n$n" "refused its damaged data dir: $(grep -a 'is damaged' "$d/node.log" | tail -n 1 | sed 's/.* is damaged: //; s/; this node refuses.*//')"
        for _ in 1 2 3; do
                for i in $(seq 1 20); do
                        nemrun info "$fault" "n$n" "corrupt_ctl --timeout 5000 member remove $n" && break
                        sleep 1
                done
                corrupt_wait_applied "$n" || nemlog info "$fault" "n$n" "none (the others did not all apply the removal within 10 s)"
                # The directory's contents, not the directory: under a mix
                # it may be a mount point (disk-full's tmpfs).
                nemrun info "$fault" "n$n" "find $d/data -mindepth 1 -delete && (grep -q '^join = true' $d/node.conf || echo 'join = true' >>$d/node.conf)"
                echo 1 >"$ST/expect-name.node$n"
                restart_nodes info "$fault" "$n"
                for i in $(seq 1 6); do
                        if nemrun info "$fault" "n$n" "corrupt_ctl --timeout 10000 member add $n $(node_raft_addr "$n") $(node_client_addr "$n")"; then
                                rm -f "$ST/expect-name.node$n"
                                return 0
                        fi
                        alive "node$n" || break
                        sleep 1
                done
                rm -f "$ST/expect-name.node$n"
                alive "node$n" && break
                nemlog info "$fault" "n$n" "exited: $(grep -a 'refused by' "$d/node.log" | tail -n 1 | cut -c1-200)"
        done
        warn "n$n was not added back"
}

# Start node $1 after its damage (exit 3 announced): 0 when it refused
# its directory (then it is down), 1 when it runs. FAULT: $2.
corrupt_start() {
        local n=$1 fault=$2 i
        echo 3 >"$ST/expect-name.node$n"
        restart_nodes info "$fault" "$n"
        for i in $(seq 1 30); do
                alive "node$n" || break
                sleep 0.1
        done
        sleep 0.2
        rm -f "$ST/expect-name.node$n"
        ! alive "node$n" && grep "proc=node$n " "$RUN/exits" | tail -n 1 | grep -q " status=3 "
}

# The followers (not the leader), shuffled: FOLLOWERS.
corrupt_followers() {
        local i
        FOLLOWERS=()
        find_leader
        for i in $(live_nodes); do
                [ "$i" = "$LEADER" ] || FOLLOWERS+=("$i")
        done
        [ ${#FOLLOWERS[@]} -gt 0 ] && shuffle "${FOLLOWERS[@]}" && FOLLOWERS=("${SHUFFLED[@]}")
}

nem_corrupt_minority() {
        local kinds=(segment open snapshot meta metadata) damages=(flip truncate zero rollback)
        local n kind dmg d old what
        corrupt_followers
        [ ${#FOLLOWERS[@]} -gt 0 ] || return 0
        n=${FOLLOWERS[0]}
        d="$RUN/nodes/n$n/data"
        old="$ST/corrupt-old/n$n"
        kill_nodes start corrupt-minority "$n" || return 0
        if [ ! -d "$old" ]; then
                # The first fault of this node keeps a copy: the older copies
                # later rollbacks put back.
                nemrun info corrupt-minority "n$n" "mkdir -p $old && cp -a $d/. $old/"
        fi
        rnd ${#kinds[@]}
        kind=${kinds[$R]}
        rnd ${#damages[@]}
        dmg=${damages[$R]}
        if ! corrupt_pick_file "$n" "$kind"; then
                nemlog info corrupt-minority "n$n" "none (no $kind file)"
        elif [ "$dmg" = rollback ]; then
                if [ -f "$old/$FILE" ] && ! cmp -s "$old/$FILE" "$d/$FILE"; then
                        nemrun info corrupt-minority "n$n" "cp $old/$FILE $d/$FILE"
                        nemlog info corrupt-minority "n$n" "rollback $kind $FILE: an older copy (valid checksums; batond sees it only through metadata versions and terms)"
                else
                        nemlog info corrupt-minority "n$n" "none (no older copy of $kind $FILE that differs)"
                fi
        else
                rnd 32768
                what=$("$DAMAGE_BIN" "$dmg" "$d/$FILE" "$R")
                nemlog info corrupt-minority "n$n" "$dmg $kind $FILE: chaos-damage $dmg $d/$FILE $R: $what"
        fi
        corrupt_start "$n" corrupt-minority && corrupt_rejoin "$n" corrupt-minority
        nemlog end corrupt-minority "n$n" "$(alive "node$n" && echo running || echo down)"
}

nem_corrupt_acked() {
        local l f g pg name0 used0 name1 from what
        corrupt_followers
        l=$LEADER
        if [ -z "$l" ] || [ ${#FOLLOWERS[@]} -lt 2 ]; then
                nemlog info corrupt-acked none "none (no leader with two followers)"
                return 0
        fi
        f=${FOLLOWERS[0]}
        g=${FOLLOWERS[1]}
        pg=$(pid_of "node$g")
        read -r name0 used0 < <("$DAMAGE_BIN" open "$RUN/nodes/n$f/data")
        nemrun start corrupt-acked "n$g" "kill -STOP $pg"
        sleep_ms 1500
        kill_nodes info corrupt-acked "$f" "$l"
        read -r name1 _ < <("$DAMAGE_BIN" open "$RUN/nodes/n$f/data")
        if [ -z "${name1:-}" ]; then
                what="none (no open segment with entries)"
        else
                from=8
                [ "$name1" = "${name0:-}" ] && from=$used0
                rnd 32768
                what="$name1: $("$DAMAGE_BIN" batch "$RUN/nodes/n$f/data/$name1" "$R" "$from")"
        fi
        nemlog info corrupt-acked "n$f" "chaos-damage batch (entries stored while n$g was stopped): $what"
        nemrun info corrupt-acked "n$g" "kill -CONT $pg"
        local refused=0
        corrupt_start "$f" corrupt-acked && refused=1
        rnd_range 3000 5000
        sleep_ms "$R"
        # The leader back: with the refused follower out, the stopped one
        # and the leader are the majority that removes it.
        restart_nodes info corrupt-acked "$l"
        [ "$refused" = 1 ] && corrupt_rejoin "$f" corrupt-acked
        nemlog end corrupt-acked "n$f" "$(alive "node$f" && echo running || echo down)"
}
