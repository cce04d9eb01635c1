# shellcheck shell=bash
# scripts/chaos --mix: each nemesis period runs one nemesis drawn (seeded)
# from a set (docs/chaos.md, "Mixed runs"): by default every nemesis of
# the NEMESES table that the run can carry, or the list given
# (--mix a,b,c). The plan says nemesis=mix and mix=<the set>; the
# nemesis log has, before each fault, "action=info fault=mix target=NAME",
# then the fault's own lines under its own name.
#
# How a nemesis says what it needs (its nem_*.sh file defines these):
#   - NET_NEMESES: needs the netns network (left out on loopback);
#   - mix_ok_<fn> (fn: the name with - and + as _, as nem_<fn>): a
#     function run once the network, NODES, WORKLOADS and MIX_SET are
#     known; nonzero leaves the nemesis out of the mix, MIX_WHY saying why
#     (e.g. it needs a workload the run does not have);
#   - MIX_EXCLUDE: names a default mix leaves out (a nemesis whose
#     per-run setup would change every other nemesis' run); they still run
#     when the --mix list names them;
#   - run_has NAME: what a per-run setup hook (plan_run, start_cluster)
#     tests instead of [ "$NEMESIS" = NAME ], so that a mix that includes
#     NAME gets the setup too (snapshot thresholds, tmpfs data dirs, the
#     clock-fault flag).

MIX_EXCLUDE=" none "

# 0 when this run is nemesis $1 or a mix that includes it.
run_has() { [ "$NEMESIS" = "$1" ] || [[ " ${MIX_SET:-} " == *" $1 "* ]]; }

# The supervise workload's nemeses strike only its batonctl.
mix_ok_kill_batonctl() {
        MIX_WHY="needs the supervise workload"
        [[ ",$WORKLOADS" == *,supervise* ]]
}
mix_ok_pause_batonctl() { mix_ok_kill_batonctl; }
mix_ok_clock_skew() {
        MIX_WHY="$FAKETIME_LIB missing (apt install faketime)"
        [ -e "$FAKETIME_LIB" ]
}
mix_ok_partition_ring() {
        MIX_WHY="needs 5 nodes"
        [ "$NODES" -ge 5 ]
}

# 0 when the run can carry nemesis $1; else MIX_WHY says why not. A
# nemesis without a mix_ok_<fn> whose name scripts/chaos or a library
# file tests as [ "$NEMESIS" = NAME ] has a per-run setup a mix would not
# make: it is left out until that test becomes run_has NAME (or it
# declares mix_ok_<fn>).
mix_can() {
        local f="mix_ok_${1//[-+]/_}"
        MIX_WHY=""
        if [ "$NETWORK" = loopback ] && nemesis_needs_net "$1"; then
                MIX_WHY="needs network namespaces"
                return 1
        fi
        if declare -F "$f" >/dev/null; then
                "$f" && return 0
                MIX_WHY=${MIX_WHY:-"$f says no"}
                return 1
        fi
        if grep -qF "\"\$NEMESIS\" = $1 " "$self" "$lib"/*.sh 2>/dev/null; then
                MIX_WHY="a per-run setup tests [ \"\$NEMESIS\" = $1 ]: make it run_has $1"
                return 1
        fi
        return 0
}

# Check the names of the --mix list ($1, comma-separated): 0, or 1 with
# a message.
mix_check_list() {
        local n names
        IFS=',' read -ra names <<<"$1"
        [ ${#names[@]} -gt 0 ] || { warn "--mix: a comma-separated list of nemeses"; return 1; }
        for n in "${names[@]}"; do
                [ "$n" != mix ] && nemesis_known "$n" ||
                        { warn "--mix: unknown nemesis '$n' (scripts/chaos --list)"; return 1; }
        done
}

# MIX_SET: the nemeses of MIX_LIST (or, empty, of the NEMESES table less
# MIX_EXCLUDE) that this run can carry; exit 77 (skipped) if none.
mix_resolve() {
        local e n names=() set=""
        if [ -n "${MIX_LIST:-}" ]; then
                IFS=',' read -ra names <<<"$MIX_LIST"
        else
                for e in "${NEMESES[@]}"; do
                        n=${e%%|*}
                        [[ "$MIX_EXCLUDE" == *" $n "* ]] || names+=("$n")
                done
        fi
        for n in "${names[@]}"; do
                if ! mix_can "$n"; then
                        say "mix: without $n ($MIX_WHY)"
                        continue
                fi
                [[ " $set " == *" $n "* ]] || set="$set${set:+ }$n"
        done
        if [ -z "$set" ]; then
                say "SKIP mix: no nemesis of the set can run here"
                exit 77
        fi
        MIX_SET=$set
        say "mix of: $MIX_SET"
}

# The nemesis of the next period (NEXT), drawn from MIX_SET and logged.
mix_pick() {
        local set
        read -ra set <<<"$MIX_SET"
        rnd ${#set[@]}
        NEXT=${set[$R]}
        nemlog info mix "$NEXT" "nem_${NEXT//[-+]/_}"
}
