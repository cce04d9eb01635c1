# shellcheck shell=bash
# scripts/chaos: small helpers every other library file uses: console
# output, the CLOCK_MONOTONIC clock, the seeded random numbers and the
# nemesis log.
#
# Random numbers come only from bash's $RANDOM in the main shell, seeded
# once with RANDOM=$seed: a command substitution runs in a subshell, which
# bash reseeds, so the helpers here set the global R instead of printing.

say() { echo "chaos: $*"; }
warn() { echo "chaos: $*" >&2; }

# CLOCK_MONOTONIC in ns (tests/chaos/monotime): the clock of every log.
now_ns() { "$MONOTIME"; }

# Seconds since the run started, for console lines.
elapsed() {
        local t
        t=$(now_ns)
        printf '%5.1fs' "$(((t - T0) / 100000000))e-1"
}

# R = a number in [0, $1).
rnd() { R=$((RANDOM % $1)); }

# R = a number in [$1, $2].
rnd_range() { R=$(($1 + RANDOM % ($2 - $1 + 1))); }

# SHUFFLED = the arguments in a seeded random order (Fisher-Yates).
shuffle() {
        local i j tmp
        SHUFFLED=("$@")
        for ((i = ${#SHUFFLED[@]} - 1; i > 0; i--)); do
                j=$((RANDOM % (i + 1)))
                tmp=${SHUFFLED[i]}
                SHUFFLED[i]=${SHUFFLED[j]}
                SHUFFLED[j]=$tmp
        done
}

# Sleep $1 milliseconds; a trapped signal interrupts it at once (wait
# returns, the trap runs; the sleep process ends on its own).
sleep_ms() {
        sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))" &
        wait $!
}

# Sleep $1 ms, but never past the end of the fault schedule (END_NS).
sleep_ms_bounded() {
        local left
        left=$(((END_NS - $(now_ns)) / 1000000))
        [ "$left" -gt 0 ] || return 0
        [ "$1" -lt "$left" ] && left=$1
        sleep_ms "$left"
}

# One line of RUN/nemesis.log (docs/chaos.md, "Nemesis log"):
#   nemlog ACTION FAULT TARGET CMD [T]   (T: the time, when taken earlier)
nemlog() {
        local t=${5:-}
        [ -n "$t" ] || t=$(now_ns)
        echo "t=$t action=$1 fault=$2 target=$3 cmd=$4" >>"$RUN/nemesis.log"
        echo "chaos: $(elapsed) $1 $2 $3: $4"
}

# Log ACTION FAULT TARGET CMD, then run CMD (a shell command line, run with
# eval, so the logged line is exactly what ran). Its output goes to
# RUN/nemesis.out. Returns CMD's status.
nemrun() {
        local st=0
        nemlog "$1" "$2" "$3" "$4"
        eval "$4" >>"$RUN/nemesis.out" 2>&1 </dev/null || st=$?
        if [ "$st" -ne 0 ]; then
                echo "chaos: $(elapsed)   (status $st: $4)"
        fi
        return "$st"
}
