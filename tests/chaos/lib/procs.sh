# shellcheck shell=bash
# scripts/chaos: the processes of a run: nodes, workers, the fenced
# register; their start, their exits (RUN/exits) and the final stop.
#
# Each process runs under a small watcher subshell that starts it, writes
# its PID to $ST/pid.NAME, waits for it and appends its exit to RUN/exits:
#   t=<ns> proc=<name> pid=<n> status=<n> expected=<0|1>
# expected=1 when the suite announced the exit before causing it
# (expect_exit PID STATUSES: the statuses it may end with; or the file
# $ST/expect-name.NAME, for whatever runs as NAME meanwhile), or when a
# worker exits 0 after the final file was created.

# Start NAME: run the command line CMD (eval'ed, then exec'ed, so $! is the
# process itself) with stdout+stderr appended to LOG. Sets SPAWNED to its PID.
#   spawn NAME LOG CMD
spawn() {
        local name=$1 log=$2 cmd=$3 i
        rm -f "$ST/pid.$name" "$ST/spawned.$name"
        (
                trap - EXIT INT TERM HUP
                eval "exec $cmd" >>"$log" 2>&1 </dev/null 3>&- &
                p=$!
                echo "$p" >"$ST/pid.$name.new"
                mv "$ST/pid.$name.new" "$ST/pid.$name"
                echo "$p" >"$ST/spawned.$name"
                wait "$p"
                st=$?
                t=$("$MONOTIME")
                exp=0
                if [ -f "$ST/expect.$p" ]; then
                        for a in $(cat "$ST/expect.$p"); do
                                [ "$a" = "$st" ] && exp=1
                        done
                fi
                if [ -f "$ST/expect-name.$name" ]; then
                        for a in $(cat "$ST/expect-name.$name"); do
                                [ "$a" = "$st" ] && exp=1
                        done
                fi
                if [ "${name#w}" != "$name" ] && [ -f "$ST/final" ] && [ "$st" = 0 ]; then
                        exp=1
                fi
                echo "t=$t proc=$name pid=$p status=$st expected=$exp" >>"$RUN/exits"
                if [ "$exp" = 0 ]; then
                        echo "chaos: UNEXPECTED EXIT: $name (pid $p) status $st" >&3
                        echo "t=$t proc=$name pid=$p status=$st" >>"$ST/unexpected"
                fi
                [ "$(cat "$ST/pid.$name" 2>/dev/null)" = "$p" ] && rm -f "$ST/pid.$name"
                exit 0
        ) >/dev/null 2>&1 &
        echo "$!" >>"$ST/watchers"
        for i in $(seq 1 500); do
                if [ -s "$ST/spawned.$name" ]; then
                        SPAWNED=$(cat "$ST/spawned.$name")
                        echo "$SPAWNED" >>"$ST/started"
                        return 0
                fi
                sleep 0.01
        done
        warn "$name did not start"
        SPAWNED=""
        return 1
}

# The PID of NAME while it runs, else nothing.
pid_of() { cat "$ST/pid.$1" 2>/dev/null || true; }
alive() {
        local p
        p=$(pid_of "$1")
        [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

# Announce that PID $1 is about to exit by our hand, with one of the
# statuses $2 (e.g. "137", "0 143").
expect_exit() { echo "$2" >"$ST/expect.$1"; }

# Wait up to $2 ms for PID $1 to be gone.
wait_gone() {
        local i
        for i in $(seq 1 $(($2 / 20))); do
                kill -0 "$1" 2>/dev/null || return 0
                sleep 0.02
        done
        return 1
}

# --- Nodes ------------------------------------------------------------------

node_conf() {
        local i=$1 j d
        d="$RUN/nodes/n$i"
        mkdir -p "$d/data"
        {
                echo "# Node $i of a chaos run; written by scripts/chaos."
                echo "id = $i"
                echo "data-dir = $d/data"
                echo "apply-log = $d/apply.log"
                echo "election-timeout-ms = $ELECTION_MS"
                echo "digest-interval = ${DIGEST_EVERY:-256}"
                if [ -n "$SNAP_THRESHOLD" ]; then
                        echo "snapshot-threshold = $SNAP_THRESHOLD"
                        echo "snapshot-trailing = $SNAP_TRAILING"
                fi
                # The HTTP API too (the http-counter workload's).
                echo "http-listen = $(node_http_addr "$i")"
                for j in $(seq 1 "$NODES"); do
                        echo "member = $j $(node_raft_addr "$j") $(node_client_addr "$j") $(node_http_addr "$j")"
                done
                # TLS, as users run it (tls_setup made the files).
                echo "tls-ca = $RUN/tls/ca.crt"
                echo "tls-cert = $RUN/tls/node$i.crt"
                echo "tls-key = $RUN/tls/node$i.key"
                echo "role = admin admin"
        } >"$d/node.conf"
}

# The run's certificates, with each node's client address as a SAN, and
# the admin client's files in the environment of every client this run
# starts (workers, batonctl), as `scripts/cluster env` does for a shell.
tls_setup() {
        local i sans=()
        for i in $(seq 1 "${SLOTS:-$NODES}"); do
                sans+=(--node-san "$i=IP:${NODE_HOSTS[$i]}")
        done
        "$CERTS" "$RUN/tls" --nodes "${SLOTS:-$NODES}" "${sans[@]}" || return 1
        export BATON_CACERT="$RUN/tls/ca.crt"
        export BATON_CERT="$RUN/tls/admin.crt"
        export BATON_KEY="$RUN/tls/admin.key"
}

# The command line of node $1; $2 = a FAKETIME spec to run it under
# (else the wall-clock preload of clock-jump and clock-strobe, nem_clock.sh).
node_cmd() {
        local i=$1 ft=${2:-}
        if [ -n "$ft" ]; then
                echo "$(ns_exec "n$i")env LD_PRELOAD=$FAKETIME_LIB FAKETIME=\"$ft\" $SERVER_BIN --config $RUN/nodes/n$i/node.conf"
        else
                echo "$(ns_exec "n$i")$(clock_preload "$i")$SERVER_BIN --config $RUN/nodes/n$i/node.conf"
        fi
}

# Start node $1 (optionally under FAKETIME spec $2), logging to node.log.
node_start() {
        local i=$1 cmd
        cmd=$(node_cmd "$i" "${2:-}")
        echo "=== scripts/chaos: t=$(now_ns) start: $cmd" >>"$RUN/nodes/n$i/node.log"
        spawn "node$i" "$RUN/nodes/n$i/node.log" "$cmd"
}

# The status lines of every node, asked from the control namespace
# (batonctl status): "ENDPOINT id=I role=R term=T leader=L ..." for a node
# that answers, "ENDPOINT error: ..." for one that does not.
cluster_status() {
        $(ns_exec ctl) "$CTL" --endpoints "$ENDPOINTS" --timeout 500 status 2>/dev/null || true
}

# LEADER = the id of the node that claims leadership with the highest term,
# or "" when none does.
find_leader() {
        LEADER=$(cluster_status | awk '
                { id = ""; role = ""; term = 0
                  for (i = 2; i <= NF; i++) {
                        split($i, a, "=")
                        if (a[1] == "id") id = a[2]
                        else if (a[1] == "role") role = a[2]
                        else if (a[1] == "term") term = a[2] + 0
                  }
                  if (role == "leader" && term > best) { best = term; l = id } }
                END { print l }')
}

# Poll up to $1 ms for a leader other than $2 (may be empty); sets LEADER.
wait_leader() {
        local end=$(($(now_ns) + $1 * 1000000))
        while :; do
                find_leader
                if [ -n "$LEADER" ] && [ "$LEADER" != "${2:-}" ]; then
                        return 0
                fi
                [ "$(now_ns)" -lt "$end" ] || break
                sleep 0.1
        done
        LEADER=""
        return 1
}

# --- Workers and the register ---------------------------------------------------

# The register follows every node's apply log: it fences a semaphore's
# holders by the ends of their grants there (docs/chaos.md).
register_start() {
        local cmd="$REGISTER_BIN --socket $SOCK --log $RUN/register.log" i
        [ "$FENCING" = off ] && cmd="$cmd --no-fencing"
        for i in $(seq 1 "${SLOTS:-$NODES}"); do
                cmd="$cmd --apply-log $RUN/nodes/n$i/apply.log"
        done
        # The transfers workload's accounts and their starting balances.
        for i in $(seq 0 $((ACCOUNTS - 1))); do
                cmd="$cmd --init acct-$i=$ACCOUNT_BALANCE"
        done
        spawn register "$RUN/register.err" "$cmd" || return 1
        local i
        for i in $(seq 1 250); do
                [ -S "$SOCK" ] && return 0
                sleep 0.02
        done
        warn "the register did not create $SOCK"
        return 1
}

# Worker $1 (workload $2, $3 keys). rwlock-bug is the rwlock workload with
# its writers holding only the read lock, transfers-bug the transfers
# workload locking only the source account (negative controls). A
# supervise worker is chaos-cmdworker: it runs $BATONCTL_BIN lock -- the
# unfenced register's writer, and keeps the running batonctl's pid in
# RUN/workers/wJ.batonctl for the nemeses that strike it alone.
worker_start() {
        local j=$1 w=$2 k=$3 cmd
        if [ "$w" = supervise ]; then
                cmd="$(ns_exec "w$j")$CMDWORKER_BIN --id $j --endpoints $ENDPOINTS"
                cmd="$cmd --history $RUN/history/w$j.log --batonctl $BATONCTL_BIN"
                cmd="$cmd --command $UNFENCED_BIN --log $RUN/unfenced.log"
                cmd="$cmd --pid-file $RUN/workers/w$j.batonctl --keys $k --ttl $TTL_MS"
                cmd="$cmd --seed $((SEED * 100 + j)) --final-file $RUN/final"
                echo "$cmd" >"$RUN/workers/w$j.cmd"
                spawn "w$j" "$RUN/workers/w$j.err" "$cmd"
                return
        fi
        cmd="$(ns_exec "w$j")$WORKER_BIN --id $j --endpoints $ENDPOINTS"
        if [ "$w" = http-counter ]; then
                # The counter workload over the HTTP API (httpclient.c).
                cmd="$(ns_exec "w$j")$HTTPWORKER_BIN --id $j --endpoints $HTTP_ENDPOINTS"
                cmd="$cmd --history $RUN/history/w$j.log --workload counter --keys $k"
        elif [ "$w" = rwlock-bug ]; then
                cmd="$cmd --history $RUN/history/w$j.log --workload rwlock --bug-writer-shared --keys $k"
        elif [ "$w" = transfers-bug ]; then
                cmd="$cmd --history $RUN/history/w$j.log --workload transfers --bug-one-lock --keys $k"
        else
                cmd="$cmd --history $RUN/history/w$j.log --workload $w --keys $k"
        fi
        cmd="$cmd --ttl $TTL_MS --seed $((SEED * 100 + j))"
        [ "$USE_REGISTER" = 1 ] && cmd="$cmd --register $SOCK"
        cmd="$cmd --final-file $RUN/final --epoch-ms $EPOCH_MS --epoch-base-ns $EPOCH_BASE"
        echo "$cmd" >"$RUN/workers/w$j.cmd"
        spawn "w$j" "$RUN/workers/w$j.err" "$cmd"
}

# --- Stopping -------------------------------------------------------------------

# SIGTERM the processes named $@ that run, then SIGKILL those still there
# after $STOP_MS.
stop_procs() {
        local name p pids=()
        for name in "$@"; do
                p=$(pid_of "$name")
                [ -n "$p" ] || continue
                kill -CONT "$p" 2>/dev/null
                expect_exit "$p" "0 143"
                kill -TERM "$p" 2>/dev/null && pids+=("$p")
        done
        for p in "${pids[@]}"; do
                if ! wait_gone "$p" "$STOP_MS"; then
                        warn "pid $p ignored SIGTERM for ${STOP_MS} ms: SIGKILL"
                        expect_exit "$p" "137"
                        kill -KILL "$p" 2>/dev/null
                fi
        done
}

# At exit: every process of ours goes, by the PIDs we started and the PIDs
# in our namespaces; then the namespaces and mounts go.
cleanup_all() {
        local ns p pids=()
        [ -n "${ST:-}" ] && [ -d "$ST" ] || return 0
        [ -f "$ST/cleaned" ] && return 0
        touch "$ST/cleaned"
        for p in $(cat "$ST/started" "$ST/helpers" 2>/dev/null); do
                kill -0 "$p" 2>/dev/null && pids+=("$p")
        done
        if [ "$NETWORK" = netns ] && [ -n "${P:-}" ]; then
                for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$P-"); do
                        for p in $(ip netns pids "$ns" 2>/dev/null); do
                                pids+=("$p")
                        done
                done
        fi
        for p in "${pids[@]}"; do
                expect_exit "$p" "137"
                kill -KILL "$p" 2>/dev/null
        done
        for p in "${pids[@]}"; do
                wait_gone "$p" 2000 || warn "pid $p survived SIGKILL"
        done
        # The watchers log the exits; give them a moment.
        for p in $(cat "$ST/watchers" 2>/dev/null); do
                wait_gone "$p" 1000
        done
        heal_clock 2>/dev/null || true
        [ "$NETWORK" = netns ] && net_teardown
        for p in $(cat "$ST/mounts" 2>/dev/null); do
                # Keep what the node wrote (the tmpfs goes with the mount).
                mkdir -p "$p.saved" && cp -a "$p/." "$p.saved/" 2>/dev/null
                rm -f "$p.saved/chaos-fill"
                umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null ||
                        warn "could not unmount $p"
        done
        forgetfs_stop 2>/dev/null || true
        [ "$SOCK" != "$RUN/register.sock" ] && rm -f "$SOCK"
}
