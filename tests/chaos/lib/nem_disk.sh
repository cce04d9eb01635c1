# shellcheck shell=bash
# scripts/chaos: the disk nemeses: writes a node never synced forgotten (a
# power cut), and writes and syncs that fail. The nodes of these runs keep
# their data dirs on forgetfs (tests/chaos/forgetfs.c, docs/chaos.md): a
# FUSE pass-through file system that holds every unsynced write in its own
# cache and takes commands on DATA/.forgetfs.

NEMESES+=(
        "lose-unsynced|kill -9 a node, drop the writes it never synced (half the time torn: a random prefix kept), restart it 1-2 s later"
        "power-cut|kill -9 every node at once, drop every node's unsynced writes (half the time torn), restart them 1-3 s later"
        "fsync-eio|one node's syncs fail with EIO for 3-5 s while a minority of the others is stopped (its acks are needed); then, half the time, a power cut before the syncs work again"
        "write-eio|one node's writes fail with EIO for 3-5 s while a minority of the others is stopped; then, half the time, a power cut before they work again"
        "short-write|one node's writes store half their bytes for 3-5 s while a minority of the others is stopped; then, half the time, a power cut before they work again"
)

FORGETFS_BIN="$build/tests/chaos/forgetfs"

# The nemeses whose nodes run on forgetfs.
nemesis_forgetfs() {
        case "$1" in
        lose-unsynced | power-cut | fsync-eio | write-eio | short-write) return 0 ;;
        esac
        return 1
}

# Mount forgetfs over node $1's data dir, its files kept in data.back; its
# PID goes to $ST/forgetfs for forgetfs_stop.
forgetfs_mount() {
        local d="$RUN/nodes/n$1" i
        [ -x "$FORGETFS_BIN" ] || { warn "$FORGETFS_BIN is not built (libfuse3-dev)"; return 1; }
        mkdir -p "$d/data.back" "$d/data" || return 1
        "$FORGETFS_BIN" "$d/data.back" "$d/data" -f >>"$RUN/nemesis.out" 2>&1 </dev/null 3>&- &
        echo "$!" >>"$ST/forgetfs"
        echo "$d/data" >>"$ST/mounts"
        for i in $(seq 1 250); do
                [ -e "$d/data/.forgetfs" ] && break
                sleep 0.02
        done
        echo "seed $((SEED * 8 + $1))" >"$d/data/.forgetfs"
}

# After the unmounts (cleanup_all): the forgetfs processes end. A mount
# namespace made while a file system was mounted (ip netns exec, anyone's)
# keeps a copy of it, which keeps its process alive after our umount.
forgetfs_stop() {
        local p
        for p in $(cat "$ST/forgetfs" 2>/dev/null); do
                kill -TERM "$p" 2>/dev/null
        done
}

# Send forgetfs command $4 to node $2's data dir, logged as ACTION ($1) of
# FAULT ($3); its counters after it go to RUN/nemesis.out.
forgetfs_cmd() {
        local action=$1 i=$2 fault=$3 cmd=$4 ctl="$RUN/nodes/n$2/data/.forgetfs"
        nemrun "$action" "$fault" "n$i" "echo '$cmd' >$ctl"
        echo "n$i after '$cmd': $(cat "$ctl" 2>/dev/null)" >>"$RUN/nemesis.out"
}

# Forget the unsynced writes of the nodes $3.. (killed), torn half the
# time, as ACTION ($1) of FAULT ($2).
drop_unsynced() {
        local action=$1 fault=$2 i torn
        shift 2
        rnd 2
        torn=off
        [ "$R" = 0 ] && torn=on
        for i in "$@"; do
                forgetfs_cmd "$action" "$i" "$fault" "torn $torn; drop"
        done
}

nem_lose_unsynced() {
        pick_node || return 0
        local n=$TGT
        kill_nodes start lose-unsynced "$n" || return 0
        drop_unsynced info lose-unsynced "$n"
        rnd_range 1000 2000
        sleep_ms "$R"
        restart_nodes end lose-unsynced "$n"
}

nem_power_cut() {
        local all
        mapfile -t all < <(all_nodes)
        kill_nodes start power-cut "${all[@]}" || true
        drop_unsynced info power-cut "${all[@]}"
        rnd_range 1000 3000
        sleep_ms "$R"
        restart_nodes end power-cut "${all[@]}"
}

# A failing disk on one node X while (NODES-1)/2 of the others (never the
# leader unless X is) are stopped, so that every entry committed meanwhile
# needed X's acknowledgement: X must give none for what it could not
# store. Then, half the time, every node is killed and loses what it did
# not sync before X's disk works again (a power cut); else X's disk heals
# and the others continue. batond stops with exit status 1 when raft
# cannot write entries (stallwatch.c), or store its term and vote or a
# snapshot (storefail.h): X is restarted if it did. $3: what of X's syncs
# fail (forgetfs's fail-fsync WHAT, --fsync-what); with metadata the
# stopped nodes are the leader and the others but one, so that a new
# leader is elected while X's syncs fail and X must store its term.
disk_fault() {
        local fault=$1 cmd=$2 what=${3:-} x i l others=() stopped=() pids=() all p
        pick_node || return 0
        x=$TGT
        find_leader
        l=${LEADER:-}
        for i in $(live_nodes); do
                [ "$i" = "$x" ] || [ "$i" = "$l" ] || others+=("$i")
        done
        shuffle "${others[@]}"
        stopped=("${SHUFFLED[@]:0:$(((NODES - 1) / 2))}")
        if [ "$what" = metadata ] && [ -n "$l" ] && [ "$l" != "$x" ]; then
                stopped=("$l" "${SHUFFLED[@]:0:$(((NODES - 1) / 2 - 1))}")
        fi
        for i in "${stopped[@]}"; do
                p=$(pid_of "node$i")
                [ -n "$p" ] && pids+=("$p")
        done
        [ ${#pids[@]} -gt 0 ] && nemrun start "$fault" "$(targets "${stopped[@]}")" "kill -STOP ${pids[*]}"
        # batond stops (exit 1) when raft cannot write its entries.
        echo 1 >"$ST/expect-name.node$x"
        forgetfs_cmd start "$x" "$fault" "$cmd 60000${what:+ $what}"
        rnd_range 3000 5000
        sleep_ms "$R"
        rnd 2
        if [ "$R" = 0 ]; then
                mapfile -t all < <(all_nodes)
                kill_nodes info "$fault" "${all[@]}"
                drop_unsynced info "$fault" "${all[@]}"
                forgetfs_cmd end "$x" "$fault" heal
                [ ${#pids[@]} -gt 0 ] && nemlog end "$fault" "$(targets "${stopped[@]}")" "none (killed in the power cut)"
                rm -f "$ST/expect-name.node$x"
                restart_nodes info "$fault" "${all[@]}"
                return 0
        fi
        forgetfs_cmd end "$x" "$fault" heal
        rm -f "$ST/expect-name.node$x"
        [ ${#pids[@]} -gt 0 ] && nemrun end "$fault" "$(targets "${stopped[@]}")" "kill -CONT ${pids[*]}"
        alive "node$x" || restart_nodes info "$fault" "$x"
        return 0
}

nem_fsync_eio() { disk_fault fsync-eio fail-fsync "${FSYNC_WHAT:-}"; }
nem_write_eio() { disk_fault write-eio fail-write; }
nem_short_write() { disk_fault short-write short-write; }

# heal_all's part: every forgetfs failure window ended.
heal_disk() {
        local i
        for i in $(all_nodes); do
                [ -e "$RUN/nodes/n$i/data/.forgetfs" ] || continue
                echo heal >"$RUN/nodes/n$i/data/.forgetfs"
        done
}

# A mix (mix.sh) does not put the data dirs on forgetfs: these nemeses
# stay out of it.
mix_ok_lose_unsynced() {
        MIX_WHY="its data dirs on forgetfs are a per-run setup a mix does not make"
        return 1
}
mix_ok_power_cut() { mix_ok_lose_unsynced; }
mix_ok_fsync_eio() { mix_ok_lose_unsynced; }
mix_ok_write_eio() { mix_ok_lose_unsynced; }
mix_ok_short_write() { mix_ok_lose_unsynced; }
