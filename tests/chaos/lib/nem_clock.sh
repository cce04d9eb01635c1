# shellcheck shell=bash
# scripts/chaos: clock and CPU faults on a running node. clock-jump and
# clock-strobe step a node's wall clock as an NTP step would, its
# monotonic clock running on; cpu-starve caps a node's CPU in a cgroup.
#
# The wall clock: under clock-jump and clock-strobe every node runs from
# its start under libfaketime with its own spec file,
# RUN/nodes/nI/faketime, read again at each clock call
# (FAKETIME_NO_CACHE=1, about 5 us a call) and faking CLOCK_REALTIME
# alone (FAKETIME_DONT_FAKE_MONOTONIC=1). The file says "+0" until the
# nemesis writes an offset ("+60", "-90") into it, with a rename, so a
# node never reads half a line.
#
# The CPU: cgroup v1's cpu controller (CPU_CGROUP): a cgroup of its own,
# chaos-PREFIX-nI, with a CFS quota of 2-6 % of one CPU per period (100 ms
# or 1 s), holds the node's process (every thread) while it starves.

NEMESES+=("clock-jump|step a node's wall clock (the leader half the time) 30-180 s forward or back for 4-7 s, then back to true time; CLOCK_MONOTONIC runs on")
NEMESES+=("clock-strobe|step a node's wall clock (the leader half the time) back and forth by 30-180 s every 100-300 ms for 3-5 s, then back to true time")
NEMESES+=("cpu-starve|cap a node (the leader half the time) at 2-6% of one CPU (cgroup v1 cpu quota, per 100 ms or 1 s period) for 5-8 s, then lift the cap")

CPU_CGROUP=/sys/fs/cgroup/cpu

# 0 when what nemesis $1 needs is here (libfaketime, cgroup v1's cpu
# controller), else a warning and 1.
clock_nemesis_ready() {
        if nemesis_clock_step "$1" && [ ! -e "$FAKETIME_LIB" ]; then
                warn "$FAKETIME_LIB missing (apt install faketime)"
                return 1
        fi
        if [ "$1" = cpu-starve ] && [ ! -w "$CPU_CGROUP/cpu.cfs_quota_us" ]; then
                warn "no writable cgroup v1 cpu controller at $CPU_CGROUP (run as root)"
                return 1
        fi
}

# The nemeses whose nodes run under the wall-clock preload.
nemesis_clock_step() { [ "$1" = clock-jump ] || [ "$1" = clock-strobe ]; }

clock_file() { echo "$RUN/nodes/n$1/faketime"; }

# The environment node_cmd puts before node $1's command line: the
# wall-clock preload under clock-jump and clock-strobe, nothing else.
# Creates the node's spec file ("+0") on first use.
clock_preload() {
        local f
        nemesis_clock_step "$NEMESIS" || return 0
        f=$(clock_file "$1")
        [ -e "$f" ] || echo "+0" >"$f"
        echo "env LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$f FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 "
}

# The command that sets node $1's wall-clock offset to $2 ("+60", "-90",
# "+0"), with a rename.
clock_set_cmd() {
        local f
        f=$(clock_file "$1")
        echo "echo $2 >$f.new && mv $f.new $f"
}

# What node $1's wall clock reads now, seen by a probe process under the
# same preload and spec file, and the true time: "wall=S true=S".
clock_probe() {
        local f w t
        f=$(clock_file "$1")
        w=$(env LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$f" \
                FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 date +%s)
        t=$(date +%s)
        echo "wall=$w true=$t"
}

# OFS = a step of 30-180 s, forward or back.
clock_offset() {
        rnd_range 30 180
        OFS=$R
        rnd 2
        if [ "$R" = 0 ]; then OFS="+$OFS"; else OFS="-$OFS"; fi
}

nem_clock_jump() {
        pick_node || return 0
        local n=$TGT
        clock_offset
        nemrun start clock-jump "n$n" "$(clock_set_cmd "$n" "$OFS")"
        nemlog info clock-jump "n$n" "probe: $(clock_probe "$n")"
        rnd_range 4000 7000
        sleep_ms "$R"
        nemrun end clock-jump "n$n" "$(clock_set_cmd "$n" +0)"
        nemlog info clock-jump "n$n" "probe: $(clock_probe "$n")"
}

# Back and forth: +X, -X, +X... around true time, a step every 100-300 ms.
nem_clock_strobe() {
        pick_node || return 0
        local n=$TGT end s x
        rnd_range 3000 5000
        end=$(($(now_ns) + R * 1000000))
        rnd_range 30 180
        x=$R
        nemrun start clock-strobe "n$n" "$(clock_set_cmd "$n" "+$x")"
        nemlog info clock-strobe "n$n" "probe: $(clock_probe "$n")"
        s=-
        while [ "$(now_ns)" -lt "$end" ]; do
                rnd_range 100 300
                sleep_ms "$R"
                nemrun info clock-strobe "n$n" "$(clock_set_cmd "$n" "$s$x")"
                if [ "$s" = - ]; then s=+; else s=-; fi
        done
        nemlog info clock-strobe "n$n" "probe: $(clock_probe "$n")"
        nemrun end clock-strobe "n$n" "$(clock_set_cmd "$n" +0)"
}

# The cpu cgroup process $1 is in (its path under CPU_CGROUP).
cpu_cgroup_of() {
        awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3; exit }' "/proc/$1/cgroup" 2>/dev/null
}

nem_cpu_starve() {
        pick_node || return 0
        local n=$TGT p d home q per
        p=$(pid_of "node$n")
        [ -n "$p" ] || return 0
        d="$CPU_CGROUP/chaos-$P-n$n"
        home=$(cpu_cgroup_of "$p")
        # A 100 ms period (the kernel's and Kubernetes' default) stalls the
        # node up to 94-98 ms at a time, below the election timeout; 1 s
        # (the most cgroup v1 allows) up to 940-980 ms, past it.
        rnd 2
        if [ "$R" = 0 ]; then per=100000; else per=1000000; fi
        rnd_range 2 6
        q=$((per / 100 * R))
        echo "$d" >>"$ST/cgroups"
        nemrun start cpu-starve "n$n" "mkdir -p $d && echo $per >$d/cpu.cfs_period_us && echo $q >$d/cpu.cfs_quota_us && echo $p >$d/cgroup.procs"
        rnd_range 5000 8000
        sleep_ms "$R"
        # The proof that it starved: the periods its cgroup was throttled
        # in, and for how long (ns).
        nemlog info cpu-starve "n$n" "$(tr '\n' ' ' <"$d/cpu.stat" 2>/dev/null)"
        nemrun end cpu-starve "n$n" "{ ! kill -0 $p 2>/dev/null || echo $p >$CPU_CGROUP${home%/}/cgroup.procs; } && rmdir $d"
}

# End every clock and CPU fault: every node's wall clock back to true
# time; every starved process back to the root cpu cgroup, and the
# cgroups removed. heal_all and the cleanup call it; it logs nothing when
# there is nothing to heal.
heal_clock() {
        local i d p cmds=() c=""
        if nemesis_clock_step "$NEMESIS"; then
                for i in $(all_nodes); do
                        [ "$(cat "$(clock_file "$i")" 2>/dev/null)" = "+0" ] ||
                                cmds+=("$(clock_set_cmd "$i" +0)")
                done
        fi
        for d in $(sort -u "$ST/cgroups" 2>/dev/null); do
                [ -d "$d" ] || continue
                for p in $(cat "$d/cgroup.procs" 2>/dev/null); do
                        cmds+=("echo $p >$CPU_CGROUP/cgroup.procs")
                done
                cmds+=("rmdir $d")
        done
        [ ${#cmds[@]} -gt 0 ] || return 0
        for p in "${cmds[@]}"; do
                c="$c${c:+ ; }$p"
        done
        nemrun info heal-all all "$c"
}
