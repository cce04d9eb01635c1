# shellcheck shell=bash
# scripts/chaos: membership changes under load (docs/chaos.md, "Membership
# nemeses"), made with `batonctl member add/remove` as an operator would
# (docs/operations.md, "Replacing a member", "A wiped data directory").
#
# A run that may change its membership has NODES+1 node slots (SLOTS):
# each slot has its id, addresses, certificate and (netns) namespace from
# the start, but only nodes 1..NODES are members at first; the slot that is
# not a member is the spare. The current members are the ids in
# $ST/members, which all_nodes (nemesis.sh) reads, so every other nemesis
# strikes the current members. Every fault leaves NODES members: add then
# remove, or replace.
#
# A node joins with an empty data directory and join = true; its config's
# member lines are the current members' and its own. A removed node exits
# 0 by itself (announced as an expected exit); its slot's data directory
# is emptied before the slot joins again. Its apply log stays: a node
# that joins again appends to it what it applies from then on.

NEMESES+=(
        "member-add-remove|start the spare node empty (join = true), batonctl member add it, 2-4 s later member remove it (it exits 0)"
        "member-replace|start the spare node empty, member add it, member remove a member (the leader half the time): its slot becomes the spare"
        "member-replace-wiped|kill -9 a member, empty its data dir, start it (its peers must refuse it: exit 1), member remove it, start it empty with join = true, member add it back"
)

member_nemesis() { [[ "$1" == member-* ]]; }

# The slots of the run: NODES+1 when a membership nemesis may run.
member_slots() {
        SLOTS=$NODES
        if member_nemesis "$NEMESIS" || [[ " ${MIX_SET:-} " == *" member-"* ]]; then
                SLOTS=$((NODES + 1))
        fi
}

# The members at the start (start_cluster): nodes 1..NODES.
member_init() { seq 1 "$NODES" >"$ST/members"; }

member_list() { cat "$ST/members"; }

# SPARE = the slot that is not a member, "" when there is none.
member_spare() {
        local i
        SPARE=""
        for i in $(seq 1 "${SLOTS:-$NODES}"); do
                grep -qx "$i" "$ST/members" || { SPARE=$i; return 0; }
        done
        return 1
}

# batonctl ARGS from the control namespace, logged as ACTION FAULT TARGET;
# its output in CTL_OUT (and RUN/nemesis.out). Returns its status.
member_ctl() {
        local action=$1 fault=$2 target=$3 cmd st=0
        shift 3
        cmd="$(ns_exec ctl)$CTL --endpoints $ENDPOINTS --timeout 30000 $*"
        nemlog "$action" "$fault" "$target" "$cmd"
        CTL_OUT=$(eval "$cmd" 2>&1 </dev/null) || st=$?
        echo "$CTL_OUT" >>"$RUN/nemesis.out"
        if [ "$st" -ne 0 ]; then
                echo "chaos: $(elapsed)   (status $st: $(tail -n 1 <<<"$CTL_OUT"))"
        fi
        return "$st"
}

# A step of the operator's procedure that failed (a change not made
# within its tries, a removed node that runs on): one line in
# RUN/member-failures, which fails the run (scripts/chaos check_run).
member_failed() {
        echo "t=$(now_ns) severity=fail fault=$1 target=$2 what=$3" >>"$RUN/member-failures"
        nemlog info "$1" "$2" "FAILED: $3"
}

# What batond's own checks should have done and did not, but which
# docs/operations.md lists among what they cannot see (a wiped voter not
# refused): a line in RUN/member-failures that does not fail the run.
member_note() {
        echo "t=$(now_ns) severity=note fault=$1 target=$2 what=$3" >>"$RUN/member-failures"
        nemlog info "$1" "$2" "NOTE: $3"
}

# `member add` or `member remove` ($3 "add ID RAFT CLIENT" / "remove ID"),
# tried again while the leader is busy with another change, has no
# answer, or (add) the node does not answer yet: up to 8 tries in 60 s.
member_change() {
        local fault=$1 target=$2 what=$3 i end
        end=$(($(now_ns) + 60000000000))
        for i in $(seq 1 8); do
                member_ctl info "$fault" "$target" member "$what" && return 0
                [ "$(now_ns)" -lt "$end" ] || break
                case "$CTL_OUT" in
                *"not a member"* | *"no member"*) [[ "$what" == remove* ]] && return 0 ;;
                esac
                sleep_ms 1000
        done
        member_failed "$fault" "$target" "member $what"
        return 1
}

# Slot $1's config: node_conf's, with the current members' lines and its
# own, and join = $2 (true: to be added; false: as a voter is configured).
member_conf() {
        local i=$1 j
        node_conf "$i"
        {
                grep -v '^member = ' "$RUN/nodes/n$i/node.conf"
                for j in $( (member_list; echo "$i") | sort -nu); do
                        echo "member = $j $(node_raft_addr "$j") $(node_client_addr "$j") $(node_http_addr "$j")"
                done
                echo "join = $2"
        } >"$RUN/nodes/n$i/node.conf.new"
        mv "$RUN/nodes/n$i/node.conf.new" "$RUN/nodes/n$i/node.conf"
}

# Slot $1 joins: its data dir emptied (a tmpfs mount point stays), its
# join config, its start, then member add. The members then include it.
member_join() {
        local fault=$1 i=$2 d="$RUN/nodes/n$2/data"
        member_conf "$i" true
        nemrun info "$fault" "n$i" "find $d -mindepth 1 -delete"
        nemlog info "$fault" "n$i" "$(node_cmd "$i") >>$RUN/nodes/n$i/node.log 2>&1"
        node_start "$i" || { member_failed "$fault" "n$i" "start"; return 1; }
        if ! member_change "$fault" "n$i" "add $i $(node_raft_addr "$i") $(node_client_addr "$i")"; then
                # Undo: a spare left behind neither votes nor counts.
                member_change "$fault" "n$i" "remove $i"
                member_stopped "$fault" "$i"
                return 1
        fi
        echo "$i" >>"$ST/members"
}

# Wait up to 15 s for removed node $2 to stop by itself (exit 0); one that
# does not is a finding, and is killed.
member_stopped() {
        local fault=$1 i=$2 p
        p=$(pid_of "node$i")
        [ -n "$p" ] || return 0
        if ! wait_gone "$p" 15000; then
                member_failed "$fault" "n$i" "removed node still runs after 15 s"
                expect_exit "$p" 137
                kill -KILL "$p" 2>/dev/null
                wait_gone "$p" 3000
        fi
}

# Member $2 leaves: member remove, then it stops by itself.
member_leave() {
        local fault=$1 i=$2 p
        p=$(pid_of "node$i")
        [ -n "$p" ] && expect_exit "$p" "0"
        member_change "$fault" "n$i" "remove $i" || return 1
        grep -vx "$i" "$ST/members" >"$ST/members.new"
        mv "$ST/members.new" "$ST/members"
        member_stopped "$fault" "$i"
}

nem_member_add_remove() {
        member_spare || return 0
        local s=$SPARE
        nemlog start member-add-remove "n$s" "member add $s, then member remove $s"
        if member_join member-add-remove "$s"; then
                rnd_range 2000 4000
                sleep_ms "$R"
                member_leave member-add-remove "$s"
        fi
        nemlog end member-add-remove "n$s" "$(tr '\n' ' ' <"$ST/members")"
}

nem_member_replace() {
        member_spare || return 0
        local s=$SPARE k
        nemlog start member-replace "n$s" "member add $s, then member remove one"
        if member_join member-replace "$s"; then
                rnd_range 1000 2000
                sleep_ms "$R"
                # The leader half the time (pick_node), never the new node.
                k=$s
                for _ in 1 2 3 4 5 6 7 8; do
                        pick_node && [ "$TGT" != "$s" ] && { k=$TGT; break; }
                done
                [ "$k" != "$s" ] && member_leave member-replace "$k"
        fi
        nemlog end member-replace "n$s" "$(tr '\n' ' ' <"$ST/members")"
}

# The documented way back for a wiped voter (docs/operations.md, "A wiped
# data directory"), with the refusal it must meet first.
nem_member_replace_wiped() {
        pick_node || return 0
        local k=$TGT d="$RUN/nodes/n$TGT/data" p
        kill_nodes start member-replace-wiped "$k" || return 0
        nemrun info member-replace-wiped "n$k" "find $d -mindepth 1 -delete"
        # Started again as the voter it was (join = false), it must be
        # refused by a peer that knew its old directory, and exit 1.
        member_conf "$k" false
        echo 1 >"$ST/expect-name.node$k"
        restart_nodes info member-replace-wiped "$k"
        p=$(pid_of "node$k")
        # The pid's own note outlives the name's (removed below), should
        # its watcher log the exit after this sees it gone.
        [ -n "$p" ] && expect_exit "$p" 1
        if [ -n "$p" ] && ! wait_gone "$p" 15000; then
                member_note member-replace-wiped "n$k" "wiped voter not refused within 15 s"
                expect_exit "$p" 137
                kill -KILL "$p" 2>/dev/null
                wait_gone "$p" 3000
        fi
        rm -f "$ST/expect-name.node$k"
        if member_change member-replace-wiped "n$k" "remove $k"; then
                grep -vx "$k" "$ST/members" >"$ST/members.new"
                mv "$ST/members.new" "$ST/members"
                member_join member-replace-wiped "$k"
        fi
        nemlog end member-replace-wiped "n$k" "$(tr '\n' ' ' <"$ST/members")"
}
