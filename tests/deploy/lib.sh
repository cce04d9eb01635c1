# tests/deploy's hosts, blocks and TAP, sourced by tests/deploy/run.
#
# A host is a network namespace (its own interface on the switch's bridge,
# its own address) plus a mount namespace of its own in which /etc and
# /usr/local are overlays of the machine's (so useradd, /etc/hosts,
# /etc/baton, /etc/systemd/system and /usr/local/bin change only there) and
# /var/lib is an empty directory of the run's. A holder process (sleep) keeps
# both namespaces; every command on the host is nsenter'd into them.
# Namespace names carry the run's prefix and pid: parallel runs and the
# machine's own network are untouched.

# --- TAP ----------------------------------------------------------------
tap_n=0
tap_failed=0

# ok NAME / not_ok NAME: one TAP line each; every case prints exactly one.
ok() {
        tap_n=$((tap_n + 1))
        echo "ok $tap_n - $*"
}
not_ok() {
        tap_n=$((tap_n + 1))
        tap_failed=$((tap_failed + 1))
        echo "not ok $tap_n - $*"
}
# check NAME CMD...: ok when CMD exits 0; its output is shown as TAP
# comments before the case's line when it fails (and always with
# DEPLOYTEST_VERBOSE=1), where scripts/test looks for a case's diagnostics.
check() {
        local name=$1 out rc
        shift
        out=$("$@" 2>&1)
        rc=$?
        if [ "$rc" -eq 0 ]; then
                [ "${DEPLOYTEST_VERBOSE:-0}" = 1 ] && diag "$out"
                ok "$name"
        else
                diag "$out"
                diag "(exit $rc)"
                not_ok "$name"
        fi
        return "$rc"
}
diag() {
        [ -n "$1" ] && sed 's/^/# /' <<<"$1" | tail -n 40
        return 0
}
# note TEXT: a TAP comment on the test's own stdout (fd 3), also from
# inside a case, whose output check captures: what a case measured.
exec 3>&1
note() { echo "# $*" >&3; }

# --- hosts --------------------------------------------------------------
# host_ns NAME: the network namespace of host NAME.
host_ns() { echo "$dt_prefix-$1"; }

# switch_up: the switch namespace and its bridge.
switch_up() {
        ip netns add "$(host_ns sw)" || return 1
        ip -n "$(host_ns sw)" link add br0 type bridge &&
                ip -n "$(host_ns sw)" link set br0 up &&
                ip -n "$(host_ns sw)" link set lo up
}

# host_up NAME ADDRESS: a host on the switch at ADDRESS/24.
host_up() {
        local name=$1 addr=$2 ns d
        ns=$(host_ns "$name")
        d="$dt/$name"
        mkdir -p "$d/etc.up" "$d/etc.work" "$d/usr.up" "$d/usr.work" "$d/varlib" "$d/units" || return 1
        chmod 755 "$d" "$d/units" "$d/varlib"
        ip netns add "$ns" || return 1
        ip -n "$(host_ns sw)" link add "v-$name" type veth peer name eth0 netns "$ns" || return 1
        ip -n "$(host_ns sw)" link set "v-$name" master br0 up &&
                ip -n "$ns" link set lo up &&
                ip -n "$ns" addr add "$addr/24" dev eth0 &&
                ip -n "$ns" link set eth0 up || return 1
        ip netns exec "$ns" unshare --mount --propagation private bash -c '
                d=$1
                mount -t overlay overlay -o "lowerdir=/etc,upperdir=$d/etc.up,workdir=$d/etc.work" /etc &&
                mount -t overlay overlay -o "lowerdir=/usr/local,upperdir=$d/usr.up,workdir=$d/usr.work" /usr/local &&
                mount --bind "$d/varlib" /var/lib || exit 1
                : >"$d/mounted"
                exec sleep infinity' bash "$d" </dev/null >"$d/holder.log" 2>&1 &
        echo $! >"$d/holder"
        local i
        for i in $(seq 100); do
                [ -e "$d/mounted" ] && return 0
                kill -0 "$(cat "$d/holder")" 2>/dev/null || break
                sleep 0.05
        done
        cat "$d/holder.log" >&2
        return 1
}

# on HOST SCRIPT [ARGS...]: runs bash SCRIPT on HOST, as root, with the
# host's environment: the operator's shell state of earlier blocks on that
# host ($dt/HOST/env), PATH with the run's sudo/systemctl/journalctl
# stand-ins first, HOME the operator's home (shared by every host: the
# certificates made on the client host are copied to a node by reading
# them there, as scp would). The working directory is $on_cwd if set, else
# HOME. It is stopped after $on_timeout seconds (default 300).
on() {
        local host=$1 script=$2
        shift 2
        timeout -k 5 "${on_timeout:-300}" nsenter -t "$(cat "$dt/$host/holder")" -n -m -- env -i \
                PATH="$dt/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
                HOME="$dt/home" LANG=C.UTF-8 TERM=dumb \
                DEPLOYTEST_DIR="$dt" DEPLOYTEST_HOST="$host" DEPLOYTEST_HOSTDIR="$dt/$host" \
                DEPLOYTEST_CWD="${on_cwd:-}" \
                bash -c '[ -f "$DEPLOYTEST_HOSTDIR/env" ] && . "$DEPLOYTEST_HOSTDIR/env"
                         cd "${DEPLOYTEST_CWD:-$HOME}" || exit 1
                         '"$script" bash "$@"
}

# --- documented blocks ----------------------------------------------------
# block FILE NAME: the lines of the fenced block that the marker
# "<!-- deploy-test: NAME ... -->" in FILE (relative to the source tree)
# stands right before, its fence's indentation taken off. Fails unless
# exactly one marker has that name.
block() {
        awk -v name="$2" '
                function strip(s) { return substr(s, ind + 1) }
                /^[ \t]*<!-- deploy-test: / {
                        split($0, w, " ")
                        for (i = 1; i <= length(w); i++) if (w[i] == "deploy-test:") break
                        if (w[i + 1] == name) { want = 1; found++ } else want = 0
                        next
                }
                want && /^[ \t]*```/ { inb = 1; want = 0; match($0, /^[ \t]*/); ind = RLENGTH; next }
                want && !/^[ \t]*$/ { want = 0 }
                inb && /^[ \t]*```/ { inb = 0; next }
                inb { print strip($0) }
                END { if (found != 1) { print "no single marker named " name > "/dev/stderr"; exit 1 } }
        ' "$root/$1"
}

# block_hosts FILE NAME: the HOST= key of the block's marker.
block_hosts() {
        grep -E "<!-- deploy-test: $2( |-->)" "$root/$1" | sed -n 's/.*HOST=\([^ ]*\).*/\1/p'
}

# steps FROM TO: of a block on stdin, the lines from the comment
# "# FROM." to the one before "# TO+1." (the procedures number their steps).
steps() {
        awk -v a="$1" -v b="$(($2 + 1))" '
                $0 ~ "^# " a "\\." { on = 1 }
                $0 ~ "^# " b "\\." { on = 0 }
                on' 
}

# run_block HOST FILE NAME [--steps A-B] [--grep RE] [--sub FROM=TO]...:
# runs the block (or the steps or lines chosen) on HOST in one bash -e,
# printing it as TAP comments first; the marker's HOST= must name HOST
# (nodeN stands for any node). The substitutions are the test's explicit
# table (tests/deploy/run's header says why each is needed).
run_block() {
        local host=$1 file=$2 name=$3 text hosts sel="" grepre="" from to
        shift 3
        text=$(block "$file" "$name") || return 1
        hosts=$(block_hosts "$file" "$name")
        case ",$hosts," in
        *",$host,"* | *",any,"*) ;;
        *",nodeN,"*) [[ "$host" == node[0-9] ]] || { echo "block $name is for $hosts, not $host"; return 1; } ;;
        *) echo "block $name is marked HOST=$hosts, run on $host"; return 1 ;;
        esac
        while [ $# -gt 0 ]; do
                case "$1" in
                --steps) sel=$2; text=$(steps "${sel%-*}" "${sel#*-}" <<<"$text"); shift 2 ;;
                --grep) grepre=$2; text=$(grep -E -- "$grepre" <<<"$text"); shift 2 ;;
                --sub)
                        from=${2%%=*}; to=${2#*=}
                        [[ "$text" == *"$from"* ]] || { echo "block $name has no '$from' to substitute"; return 1; }
                        text=${text//"$from"/"$to"}
                        shift 2
                        ;;
                *) echo "run_block: $1?"; return 1 ;;
                esac
        done
        # The table every block gets: /backups is not in a host's private
        # mounts, so it is the run's directory.
        text=${text//\/backups\//$dt/backups/}
        [ -n "$text" ] || { echo "block $name: nothing selected"; return 1; }
        echo "\$ on $host: $file, block $name${sel:+, steps $sel}${grepre:+, lines /$grepre/}"
        sed 's/^/  /' <<<"$text"
        on_timeout=${block_timeout:-120} on "$host" 'set -eo pipefail
                '"$text"'
                export -p | grep -vE "^declare -x (DEPLOYTEST_[A-Z]*|PATH|HOME|PWD|OLDPWD|SHLVL|_)=" \
                        >"$DEPLOYTEST_HOSTDIR/env"'
}
