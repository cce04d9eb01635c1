# --peers: Baton side by side with etcd, ZooKeeper and Redis, in one run,
# through the shared peer harness (--harness DIR, default ../peers or
# ../shared/peers beside the checkout; its README says what it measures).
# The harness's run-all.sh runs Baton (3 nodes, TLS as users run it
# unless --tls off) and each peer as it runs by default (etcd:3,
# zookeeper:3, redis:durable) with its own drivers and workloads:
# uncontended 1, 16 and 64 clients, one lock at 16, and leader kills.
# Then each peer runs again with TLS, as rows with variant "tls": etcd
# with TLS on its client and peer ports (the harness's Go driver trusts
# the CA through SSL_CERT_FILE but cannot present a client certificate,
# so clients are not authenticated), ZooKeeper with secureClientPort and
# quorum TLS, both mutual (Curator's client through the ZooKeeper
# client's system properties), Redis with tls-port only and client
# certificates (redis-tls-lock.c here: the harness's recipe, hiredis's
# encoder and reader, OpenSSL underneath). A throwaway CA
# (scripts/certs) signs every certificate; TLS 1.3 everywhere.
# Installs the peers with the harness's scripts/install.sh (apt, root)
# unless SKIP_INSTALL=1. --reps (default 2), --duration, --warmup and
# --quick set the harness's REPS, DURATION, WARMUP and failover knobs;
# its other variables (CONFIGS, FIGURES, FO_REPS, FO_DURATION,
# FO_KILL_AFTER, FO_CLIENTS, FO_VARIANT_CONFIGS, KEEP_DATA) pass
# through, and TLS_PEERS ("etcd-tls:3 zookeeper-tls:3 redis-tls:durable"
# from CONFIGS; "" for none) names the TLS runs. Servers, data and logs
# live in .bench-peers/ (ports: etcd TLS 2479/2480 + 10000 per member,
# ZooKeeper TLS 21840+i, admin 21830+i, quorum 28890+i, election
# 38890+i, Redis TLS 6389). Prints the side-by-side table (medians over
# the repetitions; in brackets Baton ÷ that system), the versions and
# the fsync probe, and writes every JSON line to FILE. With the defaults
# a run took 17 minutes on a 2-core machine.
# shellcheck shell=bash disable=SC2154,SC2016 # globals: scripts/bench; jq filters

# --- The TLS peers (run in a process of their own: peers_tls_runner) ----
# Each speaks the harness's cluster actions (start stop endpoints leader
# kill-leader restart-dead) with the harness's lib.sh helpers (start_bg,
# alive, stop_pid, kill9_pid, wait_port, log); TLS_DIR holds the files.

# tls_dead BASE NAME...: true (with its last log lines) when the server
# NAME (pid file BASE/NAME.pid) has exited already: it will not come up.
tls_dead() {
        local base=$1 f
        shift
        for f; do
                if ! alive "$base/$f.pid"; then
                        log "$f exited:"
                        tail -n 5 "$base/$f.log" >&2 2>/dev/null || true
                        return 0
                fi
        done
        return 1
}

# etcd with TLS on its client and peer ports; member i (0-based): client
# https://127.0.0.1:(i*10000+2479), peer :(i*10000+2480).
etcd_tls_member() { # N I STATE
        local n=$1 i=$2 state=$3 base="$LB_ROOT/etcd-tls-$1" j ic="" k
        k=$((i + 1))
        for ((j = 0; j < n; j++)); do
                ic+="${ic:+,}m$j=https://127.0.0.1:$((j * 10000 + 2480))"
        done
        mkdir -p "$base/m$i"
        start_bg "$base/m$i.pid" "$base/m$i.log" etcd \
                --name "m$i" --data-dir "$base/m$i" --logger zap --log-outputs stderr \
                --listen-client-urls "https://127.0.0.1:$((i * 10000 + 2479))" \
                --advertise-client-urls "https://127.0.0.1:$((i * 10000 + 2479))" \
                --listen-peer-urls "https://127.0.0.1:$((i * 10000 + 2480))" \
                --initial-advertise-peer-urls "https://127.0.0.1:$((i * 10000 + 2480))" \
                --initial-cluster "$ic" --initial-cluster-token "baton-peers-tls-$n" \
                --initial-cluster-state "$state" \
                --cert-file "$TLS_DIR/node$k.crt" --key-file "$TLS_DIR/node$k.key" \
                --peer-cert-file "$TLS_DIR/node$k.crt" --peer-key-file "$TLS_DIR/node$k.key" \
                --peer-trusted-ca-file "$TLS_DIR/ca.crt" --peer-client-cert-auth
}

etcdctl_tls() {
        ETCDCTL_API=3 timeout 5 etcdctl --command-timeout=2s --cacert "$TLS_DIR/ca.crt" \
                --cert "$TLS_DIR/peer-client.crt" --key "$TLS_DIR/peer-client.key" "$@"
}

etcd_tls_leader() { # N
        local i ep st
        for ((i = 0; i < $1; i++)); do
                alive "$LB_ROOT/etcd-tls-$1/m$i.pid" || continue
                ep="https://127.0.0.1:$((i * 10000 + 2479))"
                st=$(etcdctl_tls --endpoints="$ep" endpoint status -w simple 2>/dev/null) || continue
                if [ "$(awk -F', ' '{ print $5 }' <<<"$st")" = true ]; then
                        echo "$i $ep"
                        return 0
                fi
        done
        return 1
}

etcd_tls_wait() { # N TIMEOUT_S
        local n=$1 k i pids=()
        for ((i = 0; i < n; i++)); do
                alive "$LB_ROOT/etcd-tls-$n/m$i.pid" && pids+=("m$i")
        done
        for ((k = 0; k < $2 * 5; k++)); do
                tls_dead "$LB_ROOT/etcd-tls-$n" "${pids[@]}" && return 1
                if etcdctl_tls --endpoints="$(tls_etcd endpoints "$n")" endpoint health \
                        >/dev/null 2>&1 && etcd_tls_leader "$n" >/dev/null; then
                        return 0
                fi
                sleep 0.2
        done
        return 1
}

tls_etcd() { # ACTION N
        local act=$1 n=$2 base="$LB_ROOT/etcd-tls-$2" i li lep t out=""
        case $act in
        start)
                rm -rf "$base"
                mkdir -p "$base"
                for ((i = 0; i < n; i++)); do etcd_tls_member "$n" "$i" new; done
                etcd_tls_wait "$n" 60 || return 1
                log "etcd-tls-$n up: $(tls_etcd endpoints "$n")"
                ;;
        stop) for ((i = 0; i < n; i++)); do stop_pid "$base/m$i.pid"; done ;;
        endpoints)
                for ((i = 0; i < n; i++)); do
                        out+="${out:+,}https://127.0.0.1:$((i * 10000 + 2479))"
                done
                echo "$out"
                ;;
        leader) etcd_tls_leader "$n" ;;
        kill-leader)
                read -r li lep < <(etcd_tls_leader "$n") || return 1
                t=$(date +%s%N)
                kill9_pid "$base/m$li.pid"
                echo "$li $lep $t"
                ;;
        restart-dead)
                for ((i = 0; i < n; i++)); do
                        alive "$base/m$i.pid" || etcd_tls_member "$n" "$i" existing
                done
                etcd_tls_wait "$n" 60
                ;;
        esac
}

# ZooKeeper with TLS: the Netty connection factory, secureClientPort
# 21840+i (the drivers' port) and a plain port 21830+i for the four-letter
# words only (srvr: who leads); quorum and election over TLS too
# (sslQuorum); clients must present a certificate (ssl.clientAuth's
# default, need). Otherwise as the harness's zk.sh.
zk_tls_conf() { # N I
        local n=$1 i=$2 d="$LB_ROOT/zookeeper-tls-$1/s$2" j
        mkdir -p "$d/data"
        echo "$i" >"$d/data/myid"
        cat "$TLS_DIR/node$i.key" "$TLS_DIR/node$i.crt" >"$d/node.pem"
        {
                echo "tickTime=2000"
                echo "initLimit=10"
                echo "syncLimit=5"
                echo "dataDir=$d/data"
                echo "clientPort=$((21830 + i))"
                echo "secureClientPort=$((21840 + i))"
                echo "clientPortAddress=127.0.0.1"
                echo "maxClientCnxns=0"
                echo "admin.enableServer=false"
                echo "4lw.commands.whitelist=srvr,stat,ruok"
                echo "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory"
                for p in ssl ssl.quorum; do
                        echo "$p.keyStore.location=$d/node.pem"
                        echo "$p.keyStore.type=PEM"
                        echo "$p.trustStore.location=$TLS_DIR/ca.crt"
                        echo "$p.trustStore.type=PEM"
                        echo "$p.protocol=TLSv1.3"
                        echo "$p.enabledProtocols=TLSv1.3"
                        echo "$p.ciphersuites=$zk_ciphers"
                done
                echo "sslQuorum=true"
                for ((j = 1; j <= n; j++)); do
                        echo "server.$j=127.0.0.1:$((28890 + j)):$((38890 + j))"
                done
        } >"$d/zoo.cfg"
}

# The Netty jars zookeeper.jar's manifest leaves out (Debian's), which its
# Netty connection factory and client socket need.
zk_netty=/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar
zk_netty+=:/usr/share/java/netty-transport-native-unix-common.jar

# TLS 1.3's suites: ZooKeeper's default list has TLS 1.2's only.
zk_ciphers=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256

zk_tls_server() { # N I
        local d="$LB_ROOT/zookeeper-tls-$1/s$2"
        start_bg "$LB_ROOT/zookeeper-tls-$1/s$2.pid" "$LB_ROOT/zookeeper-tls-$1/s$2.log" \
                java -Xmx512m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -Dorg.slf4j.simpleLogger.showDateTime=true -Dzookeeper.log.dir="$d" \
                -cp "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar:$zk_netty" \
                org.apache.zookeeper.server.quorum.QuorumPeerMain "$d/zoo.cfg"
}

zk_srvr() { # I
        timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$((21830 + $1)); echo srvr >&3; cat <&3" 2>/dev/null
}

zk_tls_leader() { # N
        local i
        for ((i = 1; i <= $1; i++)); do
                alive "$LB_ROOT/zookeeper-tls-$1/s$i.pid" || continue
                if zk_srvr "$i" | grep -q '^Mode: leader'; then
                        echo "$i 127.0.0.1:$((21840 + i))"
                        return 0
                fi
        done
        return 1
}

zk_tls_wait() { # N TIMEOUT_S
        local n=$1 k i ok pids=()
        for ((i = 1; i <= n; i++)); do
                alive "$LB_ROOT/zookeeper-tls-$n/s$i.pid" && pids+=("s$i")
        done
        for ((k = 0; k < $2 * 5; k++)); do
                tls_dead "$LB_ROOT/zookeeper-tls-$n" "${pids[@]}" && return 1
                ok=1
                for ((i = 1; i <= n; i++)); do
                        alive "$LB_ROOT/zookeeper-tls-$n/s$i.pid" || continue
                        zk_srvr "$i" | grep -qE '^Mode: (leader|follower)' || {
                                ok=0
                                break
                        }
                done
                if ((ok)) && zk_tls_leader "$n" >/dev/null &&
                        wait_port 127.0.0.1 $((21840 + 1)) 1; then
                        return 0
                fi
                sleep 0.2
        done
        return 1
}

tls_zookeeper() { # ACTION N
        local act=$1 n=$2 base="$LB_ROOT/zookeeper-tls-$2" i li lep t out=""
        case $act in
        start)
                rm -rf "$base"
                mkdir -p "$base"
                for ((i = 1; i <= n; i++)); do
                        zk_tls_conf "$n" "$i"
                        zk_tls_server "$n" "$i"
                done
                zk_tls_wait "$n" 90 || return 1
                log "zookeeper-tls-$n up: $(tls_zookeeper endpoints "$n")"
                ;;
        stop) for ((i = 1; i <= n; i++)); do stop_pid "$base/s$i.pid"; done ;;
        endpoints)
                for ((i = 1; i <= n; i++)); do out+="${out:+,}127.0.0.1:$((21840 + i))"; done
                echo "$out"
                ;;
        leader) zk_tls_leader "$n" ;;
        kill-leader)
                read -r li lep < <(zk_tls_leader "$n") || return 1
                t=$(date +%s%N)
                kill9_pid "$base/s$li.pid"
                echo "$li $lep $t"
                ;;
        restart-dead)
                for ((i = 1; i <= n; i++)); do
                        alive "$base/s$i.pid" || zk_tls_server "$n" "$i"
                done
                zk_tls_wait "$n" 90
                ;;
        esac
}

# Redis with TLS only (port 0, tls-port 6389), client certificates
# required; MODE durable (appendfsync always) or default, as redis.sh.
tls_redis() { # ACTION MODE
        local act=$1 mode=$2 dir="$LB_ROOT/redis-tls-$2" k args
        case $act in
        start)
                rm -rf "$dir"
                mkdir -p "$dir"
                args=(--bind 127.0.0.1 --port 0 --tls-port 6389
                        --tls-cert-file "$TLS_DIR/node1.crt" --tls-key-file "$TLS_DIR/node1.key"
                        --tls-ca-cert-file "$TLS_DIR/ca.crt" --tls-auth-clients yes
                        --tls-protocols TLSv1.3 --dir "$dir" --daemonize no
                        --logfile "$dir/redis.log" --pidfile "$dir/redis-self.pid")
                [ "$mode" != durable ] || args+=(--appendonly yes --appendfsync always)
                start_bg "$dir/s.pid" "$dir/s.log" redis-server "${args[@]}"
                for ((k = 0; k < 100; k++)); do
                        if ! alive "$dir/s.pid"; then
                                tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
                                return 1
                        fi
                        wait_port 127.0.0.1 6389 1 && break
                done
                redis-cli --tls --cacert "$TLS_DIR/ca.crt" --cert "$TLS_DIR/peer-client.crt" \
                        --key "$TLS_DIR/peer-client.key" -h 127.0.0.1 -p 6389 \
                        config get appendfsync | tr '\n' ' ' >&2 || return 1
                log "redis-tls-$mode up on 127.0.0.1:6389 (TLS only)"
                ;;
        stop) stop_pid "$dir/s.pid" ;;
        endpoints) echo 127.0.0.1:6389 ;;
        *) return 1 ;;
        esac
}

# peers_tls_runner: the TLS runs, each config of TLS_PEERS as run-all.sh
# runs a config (the repetitions interleaved, then the leader kills), its
# lines into RESULTS_JSONL with the harness's emit. The harness's bench.sh
# gives run_figure, run_failover and fsync_probe; ctl and driver_cmd learn
# the -tls systems here. Exit status 1 when a server did not come up.
peers_tls_runner() {
        local cfg sys arg nodes variant rep fig failed=0
        export PEERS_DIR=$PEERS_HARNESS
        # shellcheck source=/dev/null
        . "$PEERS_DIR/scripts/bench.sh"
        eval "harness_$(declare -f ctl)"
        ctl() {
                case $1 in
                *-tls) "tls_${1%-tls}" "$2" "$3" ;;
                *) harness_ctl "$@" ;;
                esac
        }
        eval "harness_$(declare -f driver_cmd)"
        driver_cmd() {
                local c=$TLS_DIR/peer-client
                case $1 in
                etcd-tls) echo "env SSL_CERT_FILE=$TLS_DIR/ca.crt $BIN_DIR/etcd_lock" ;;
                zookeeper-tls)
                        echo "java -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn" \
                                "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxn=error" \
                                "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.ClientCnxnSocketNetty=error" \
                                "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty" \
                                "-Dzookeeper.client.secure=true" \
                                "-Dzookeeper.ssl.keyStore.location=$c.pem -Dzookeeper.ssl.keyStore.type=PEM" \
                                "-Dzookeeper.ssl.trustStore.location=$TLS_DIR/ca.crt" \
                                "-Dzookeeper.ssl.trustStore.type=PEM -Dzookeeper.ssl.protocol=TLSv1.3" \
                                "-Dzookeeper.ssl.enabledProtocols=TLSv1.3 -Dzookeeper.ssl.ciphersuites=$zk_ciphers" \
                                "-cp $ZK_DRIVER_CP:$zk_netty ZkLock"
                        ;;
                redis-tls)
                        echo "env LB_TLS_CA=$TLS_DIR/ca.crt LB_TLS_CERT=$c.crt" \
                                "LB_TLS_KEY=$c.key $BIN_DIR/redis_tls_lock"
                        ;;
                *) harness_driver_cmd "$1" ;;
                esac
        }
        current=""
        trap 'rc=$?; [ -z "$current" ] || ctl "${current%%:*}" stop "${current#*:}" \
                >/dev/null 2>&1 || true; exit $rc' EXIT
        trap 'exit 130' INT TERM
        for cfg in $TLS_PEERS; do
                sys=${cfg%%:*} arg=${cfg#*:}
                log "== $sys $arg"
                current=$cfg
                if ! ctl "$sys" start "$arg"; then
                        echo "bench: ${sys%-tls} with TLS did not come up (logs in $LB_ROOT/$sys-$arg)" >&2
                        ctl "$sys" stop "$arg" >/dev/null 2>&1 || true
                        current=""
                        failed=1
                        continue
                fi
                if [ "$sys" = redis-tls ]; then nodes=1 variant=$arg; else nodes=$arg variant=""; fi
                for ((rep = 1; rep <= REPS; rep++)); do
                        for fig in $FIGURES; do
                                run_figure "$sys" "$nodes" "$variant" "${fig%%:*}" "${fig#*:}" "$rep"
                        done
                done
                if [ "$sys" != redis-tls ]; then
                        for ((rep = 1; rep <= FO_REPS; rep++)); do
                                run_failover "$sys" "$nodes" "$rep" 5000
                        done
                fi
                ctl "$sys" stop "$arg"
                current=""
                [ "${KEEP_DATA:-0}" = 1 ] || find "$LB_ROOT/$sys-$arg" -mindepth 1 -maxdepth 1 \
                        \( -type d -o -name '*.rdb' \) -exec rm -rf {} +
        done
        # The harness's probe once more, after the TLS runs.
        if [ "${FSYNC_END:-0}" = 1 ]; then
                log "== fsync probe (after the TLS runs)"
                fsync_probe 3
        fi
        exit "$failed"
}

# --- In scripts/bench ----------------------------------------------------

# peers_harness: the harness's directory: --harness's, else the first
# beside the checkout.
peers_harness() {
        local d
        if [ -n "$harness" ]; then
                [ -x "$harness/run-all.sh" ] && (cd "$harness" && pwd)
                return
        fi
        for d in "$root/../peers" "$root/../shared/peers"; do
                if [ -x "$d/run-all.sh" ]; then
                        (cd "$d" && pwd)
                        return
                fi
        done
        return 1
}

# peers_check: the settings --peers runs with, each checked before
# anything starts (exit 2 on a bad one); sets CONFIGS, TLS_PEERS, REPS,
# DURATION, WARMUP and the failover knobs.
peers_check() {
        local c v
        [[ " $given " != *" --nodes "* ]] || [ "$sizes" = 3 ] || [ "$sizes" = 5 ] ||
                usage_error "--peers: one cluster size, --nodes 3 or 5"
        [[ " $given " == *" --nodes "* ]] || sizes=3
        CONFIGS=${CONFIGS:-"fsync baton:$sizes etcd:$sizes zookeeper:$sizes redis:durable"}
        for c in $CONFIGS; do
                [[ $c =~ ^(fsync|(baton|etcd|zookeeper):(3|5)|redis:(durable|default))$ ]] ||
                        usage_error "--peers: CONFIGS: fsync, baton:N, etcd:N," \
                                "zookeeper:N (N 3 or 5), redis:durable or redis:default; got $c"
        done
        if [ -z "${TLS_PEERS+set}" ]; then
                TLS_PEERS=""
                for c in $CONFIGS; do
                        case $c in
                        etcd:* | zookeeper:* | redis:*)
                                TLS_PEERS+="${TLS_PEERS:+ }${c%%:*}-tls:${c#*:}"
                                ;;
                        esac
                done
        fi
        for c in $TLS_PEERS; do
                [[ $c =~ ^((etcd|zookeeper)-tls:(3|5)|redis-tls:(durable|default))$ ]] ||
                        usage_error "--peers: TLS_PEERS: etcd-tls:N, zookeeper-tls:N" \
                                "(N 3 or 5), redis-tls:durable or redis-tls:default; got $c"
        done
        # The flags say it, else the harness's variables, else its defaults
        # (--reps: 2, as the harness).
        if [[ " $given " == *" --quick "* ]]; then
                REPS=1 DURATION=1 WARMUP=0.5 FO_REPS=1 FO_DURATION=4 FO_KILL_AFTER=1
        fi
        [[ " $given " != *" --reps "* ]] || REPS=$reps
        [[ " $given " != *" --duration "* ]] || DURATION=$duration
        [[ " $given " != *" --warmup "* ]] || WARMUP=$warmup
        REPS=${REPS:-2} DURATION=${DURATION:-10} WARMUP=${WARMUP:-2}
        FO_REPS=${FO_REPS:-3} FO_DURATION=${FO_DURATION:-14} FO_KILL_AFTER=${FO_KILL_AFTER:-4}
        FO_CLIENTS=${FO_CLIENTS:-16} FO_VARIANT_CONFIGS=${FO_VARIANT_CONFIGS-}
        FIGURES=${FIGURES:-"uncontended:1 uncontended:16 uncontended:64 contended:16"}
        for v in REPS FO_REPS FO_CLIENTS; do
                [[ ${!v} =~ ^[1-9][0-9]*$ ]] || usage_error "--peers: $v: a positive number, got ${!v}"
        done
        for v in DURATION WARMUP FO_DURATION FO_KILL_AFTER; do
                [[ ${!v} =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--peers: $v: seconds, got ${!v}"
        done
        for c in $FIGURES; do
                [[ $c =~ ^(uncontended|contended):[1-9][0-9]*$ ]] ||
                        usage_error "--peers: FIGURES: uncontended:C or contended:C, got $c"
        done
        PEERS_HARNESS=$(peers_harness) ||
                usage_error "--peers: no peer harness (run-all.sh) in ${harness:-../peers or ../shared/peers}"
        [ -x "$bench" ] || die "--peers: $bench is missing: build Baton first (scripts/cluster up builds it)"
        command -v openssl >/dev/null || die "--peers: openssl is missing (scripts/setup installs it)"
        export CONFIGS TLS_PEERS REPS DURATION WARMUP FO_REPS FO_DURATION FO_KILL_AFTER \
                FO_CLIENTS FO_VARIANT_CONFIGS FIGURES PEERS_HARNESS
}

# peers_install: the harness's install.sh (apt) unless SKIP_INSTALL=1, then
# every program the configs need, or a named error.
peers_install() {
        local c miss=()
        if [ "${SKIP_INSTALL:-0}" != 1 ]; then
                "$PEERS_HARNESS/scripts/install.sh" ||
                        die "--peers: the peers are not installed and $PEERS_HARNESS/scripts/install.sh failed (it needs root and Debian's archive)"
        fi
        for c in $CONFIGS $TLS_PEERS; do
                case ${c%%:*} in
                etcd*) command -v etcd >/dev/null && command -v etcdctl >/dev/null || miss+=(etcd) ;;
                zookeeper*) [ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null || miss+=(zookeeper) ;;
                redis*) command -v redis-server >/dev/null && command -v redis-cli >/dev/null || miss+=(redis) ;;
                esac
        done
        [ ${#miss[@]} -eq 0 ] || die "--peers: not installed: $(printf '%s\n' "${miss[@]}" | sort -u | tr '\n' ' ')(SKIP_INSTALL=1 was set, or install.sh did not install them)"
}

# peers_build: the harness's drivers into .bench-peers/bin, this
# directory's TLS Redis driver beside them, the certificates.
peers_build() {
        local w=$1 c
        BIN_DIR=$w/bin LB_ROOT=$w/lockbench "$PEERS_HARNESS/scripts/build.sh" ||
                die "--peers: the harness's drivers did not build ($PEERS_HARNESS/scripts/build.sh)"
        if [[ " $TLS_PEERS " == *" redis-tls:"* ]]; then
                cc -O2 -Wall -I "$PEERS_HARNESS/drivers/common" -o "$w/bin/redis_tls_lock" \
                        "$lib/redis-tls-lock.c" -lhiredis -lssl -lcrypto -lpthread -lm ||
                        die "--peers: redis-tls-lock.c did not build (libhiredis-dev, libssl-dev)"
        fi
        "$root/scripts/certs" "$w/tls" --nodes 5 --client peer-client >/dev/null ||
                die "--peers: scripts/certs failed"
        cat "$w/tls/peer-client.key" "$w/tls/peer-client.crt" >"$w/tls/peer-client.pem"
        for c in "$w"/tls/node?.crt "$w/tls/peer-client.crt"; do
                openssl verify -CAfile "$w/tls/ca.crt" "$c" >/dev/null ||
                        die "--peers: $c does not verify against the run's CA"
        done
}

# peers_baton_bench: the baton-bench the harness will run (its own search:
# the first under BATON_DIR), which must be this checkout's build.
peers_baton_bench() {
        local f
        f=$(find "$root" -name baton-bench -type f -perm -u+x 2>/dev/null | head -1)
        case $f in
        "$root/build/baton-bench" | "$root/build/.libs/baton-bench" | "$root/build/.libs/lt-baton-bench") ;;
        *) die "--peers: the harness would run \"${f:-no baton-bench}\", not $bench (it takes the first baton-bench under the checkout)" ;;
        esac
}

# peers_harness_rows FILE: the harness's lines, each measured one with
# "tls": Baton's as the run's setting, the peers' off.
peers_harness_rows() {
        jq -c --arg tls "$tls" 'if .system == "baton" then . + {tls: $tls}
                elif .system == "meta" or .system == "fsync" then .
                else . + {tls: "off"} end' "$1"
}

# peers_tls_rows FILE: the TLS runner's lines as rows of the peer they
# measured: "etcd-tls" is etcd, its variant gains "tls" ("durable tls"
# for Redis), "tls" is on. The fsync probe's lines stay as they are.
peers_tls_rows() {
        jq -c 'if .system == "fsync" then . else
                .system |= sub("-tls$"; "")
                | .variant = ([.variant // "", "tls"] | map(select(. != "")) | join(" "))
                | . + {tls: "on"} end' "$1"
}

# The background runs (run-all.sh, the TLS runner), each the leader of a
# process group of its own, so that stopping one stops its drivers too;
# each stops its servers on the way out.
peers_pids=()

peers_stop() {
        local p f pid
        for p in "${peers_pids[@]}"; do
                kill -TERM -- "-$p" 2>/dev/null || true
        done
        for p in "${peers_pids[@]}"; do
                wait "$p" 2>/dev/null || true
        done
        peers_pids=()
        # Whatever a server left behind: every pid file under our own
        # directory whose process still runs from it.
        for f in "$peers_work"/lockbench/*/*.pid; do
                [ -f "$f" ] || continue
                pid=$(cat "$f" 2>/dev/null) || continue
                [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || continue
                if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$peers_work" ||
                        readlink "/proc/$pid/cwd" 2>/dev/null | grep -qF "$peers_work"; then
                        kill -KILL "$pid" 2>/dev/null || true
                fi
        done
}

# peers_bg NAME CMD...: CMD in the background, in a session of its own;
# waits for it and returns its status.
peers_bg() {
        local name=$1 rc=0
        shift
        setsid "$@" &
        peers_pids+=($!)
        wait $! || rc=$?
        peers_pids=("${peers_pids[@]:0:${#peers_pids[@]}-1}")
        [ "$rc" -eq 0 ] || echo "bench: $name exited with status $rc" >&2
        return "$rc"
}

experiment_peers() {
        local w="$root/.bench-peers" run_id rc_all=0 rc_tls=0 failed hres fsync_end tlsenv
        peers_work=$w
        trap 'peers_stop; stop_cluster' EXIT
        peers_install
        peers_stop # what an earlier run killed outright may have left
        rm -rf "$w"
        mkdir -p "$w/lockbench"
        peers_build "$w"
        peers_baton_bench
        run_id="baton-peers-$(date -u +%Y-%m-%d_%H%M%S)"
        hres="$PEERS_HARNESS/results/$run_id"
        jq -nc --arg run "$run_id" --arg commit "$(git -C "$root" rev-parse --short HEAD 2>/dev/null)" \
                --arg dirty "$(git -C "$root" status --porcelain -uno 2>/dev/null | head -1)" \
                --arg tls "$tls" --arg configs "$CONFIGS" --arg tlspeers "$TLS_PEERS" \
                --arg openssl "$(openssl version | cut -d" " -f1-2)" --arg harness "$PEERS_HARNESS" \
                '{system: "meta", source: "scripts/bench --peers", run: $run,
                  baton_commit: ($commit + (if $dirty != "" then "+changes" else "" end)),
                  baton_tls: $tls, configs: $configs, tls_peers: $tlspeers,
                  openssl: $openssl, harness: $harness}' >>"$out"

        echo "bench: the harness's run $run_id: $CONFIGS" >&2
        tlsenv=()
        if [ "$tls" = on ]; then
                tlsenv=("BATON_CACERT=$BATON_CLUSTER_DIR/tls/ca.crt"
                        "BATON_CERT=$BATON_CLUSTER_DIR/tls/admin.crt"
                        "BATON_KEY=$BATON_CLUSTER_DIR/tls/admin.key")
        fi
        peers_bg run-all.sh env RUN_ID="$run_id" BATON_DIR="$root" SKIP_INSTALL=1 \
                SKIP_BUILD=1 BIN_DIR="$w/bin" LB_ROOT="$w/lockbench" "${tlsenv[@]}" \
                LD_LIBRARY_PATH="$root/build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
                "$PEERS_HARNESS/run-all.sh" || rc_all=1
        if [ -f "$hres.jsonl" ]; then
                peers_harness_rows "$hres.jsonl" >>"$out"
                cp "$hres.md" "${out%.jsonl}.harness.md" 2>/dev/null || true
                cp "$hres.driver.log" "${out%.jsonl}.driver.log" 2>/dev/null || true
        else
                echo "bench: the harness wrote no $hres.jsonl" >&2
                rc_all=1
        fi

        if [ -n "$TLS_PEERS" ]; then
                echo "bench: the peers with TLS: $TLS_PEERS" >&2
                fsync_end=0
                [[ " $CONFIGS " != *" fsync "* ]] || fsync_end=1
                : >"$w/tls.jsonl"
                peers_bg "the TLS runs" env RUN_ID="$run_id" BIN_DIR="$w/bin" \
                        LB_ROOT="$w/lockbench" TLS_DIR="$w/tls" RESULTS_JSONL="$w/tls.jsonl" \
                        DRIVER_LOG="${out%.jsonl}.driver.log" FSYNC_END=$fsync_end \
                        bash "$lib/peers.sh" --tls-runner || rc_tls=1
                peers_tls_rows "$w/tls.jsonl" >>"$out"
        fi
        peers_stop
        trap stop_cluster EXIT

        summary_peers "$out"
        failed=$(count_failed "$out")
        echo "results: $out ($failed failed); the harness's: $hres.{jsonl,md,driver.log}"
        [ "$failed" -eq 0 ] && [ "$rc_all" -eq 0 ] && [ "$rc_tls" -eq 0 ]
}

# Run as a program (by experiment_peers, in a session of its own): the TLS
# runs.
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = --tls-runner ]; then
        set -euo pipefail
        peers_tls_runner
fi
