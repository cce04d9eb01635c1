#!/usr/bin/env bash
# The documents name one set of ports, printing TAP. On several hosts every
# node uses raft 7001, clients 7101, metrics 7201 and the HTTP API 7301
# (deploy/README.md, docs/http.md); a cluster on one host (scripts/cluster,
# deploy/'s example configs) uses 7001-7005, 7101-7105, 7201-7205 and
# 7301-7305, one of each per node; README.md's batond example runs on
# 7501-7503 and 7601-7603 beside a scripts/cluster cluster, and says so;
# batonctl console listens on the operator's loopback, 7400 by default.
#
# Checked, in README.md, docs/*.md, deploy/README.md and man/*: every
# HOST:PORT with a port in 7000..7999 (Baton's), and any other port on a
# line about Baton's addresses (member lines, endpoints, metrics-address,
# client-listen, raft-listen, /metrics, /health, /ready). A host that is
# not loopback (127.0.0.0/8, localhost, [::1]) is another host, or a
# wildcard bind (0.0.0.0, [::]) on one: its port must be 7001, 7101,
# 7201 or 7301. Names under .invalid are deliberate mistakes and skipped; values
# of other programs (a database address in an election) carry other
# ports on other lines. A case first runs the check on a text with a
# wrong port of each kind, which must fail: the check can fail.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-docs-ports.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Print "FILE:LINE: ADDRESS: why" for each address off the documented set
# in FILE; exit status 1 when there is one.
scan() {
        awk -v file="$1" -v readme="$(basename "$1")" '
        function off(host, port, local) {
                if (host ~ /\.invalid$/) {
                        return ""
                }
                local = host ~ /^127\./ || host == "localhost" ||
                        host == "[::1]"
                if (!local) {
                        if (port == 7001 || port == 7101 || port == 7201 ||
                            port == 7301) {
                                return ""
                        }
                        return "another host (or a wildcard bind) uses raft 7001, clients 7101, metrics 7201, HTTP 7301"
                }
                if ((port >= 7001 && port <= 7005) ||
                    (port >= 7101 && port <= 7105) ||
                    (port >= 7201 && port <= 7205) ||
                    (port >= 7301 && port <= 7305) || port == 7400) {
                        return ""
                }
                if (readme == "README.md" && file !~ /deploy/ &&
                    ((port >= 7501 && port <= 7503) ||
                     (port >= 7601 && port <= 7603))) {
                        return ""
                }
                return "a one-host cluster uses 7001-7005, 7101-7105, 7201-7205, 7301-7305 (and batonctl console 7400)"
        }
        {
                line = $0
                ctx = line ~ /member|endpoints|ENDPOINTS|(metrics|client|raft)(\\)?[-_]?(address|listen)|\/metrics|\/health|\/ready/
                while (match(line, /(\[[0-9A-Fa-f:]*\]|[A-Za-z0-9][A-Za-z0-9.-]*):[1-9][0-9]*/)) {
                        addr = substr(line, RSTART, RLENGTH)
                        line = substr(line, RSTART + RLENGTH)
                        if (line ~ /^([0-9A-Za-z]|\.[0-9])/) {
                                continue
                        }
                        i = length(addr)
                        while (substr(addr, i, 1) != ":") {
                                i--
                        }
                        host = substr(addr, 1, i - 1)
                        port = substr(addr, i + 1) + 0
                        if ((port < 7000 || port > 7999) && !ctx) {
                                continue
                        }
                        why = off(host, port)
                        if (why != "") {
                                printf "%s:%d: %s: %s\n", file, NR, addr, why
                                bad = 1
                        }
                }
        }
        END { exit bad }' "$1"
}

cd "$root" || exit 1
docs=(README.md deploy/README.md docs/*.md man/*.[0-9])
echo "1..$((2 + ${#docs[@]}))"
n=0
failed=0
report() { # description, status, output
        n=$((n + 1))
        if [ "$2" -eq 0 ]; then
                echo "ok $n - $1"
        else
                failed=$((failed + 1))
                echo "not ok $n - $1"
                printf '%s\n' "$3" | sed 's/^/# /'
        fi
}

# The negative control: each line of this text is off the set.
cat >"$tmp/wrong.md" <<'END'
batonctl member add 4 10.0.0.4:7004 10.0.0.4:7104
export BATON_ENDPOINTS=10.0.0.1:7101,10.0.0.2:7102,10.0.0.3:7103
client-listen = 0.0.0.0:7102
curl http://baton1.example.net:9101/metrics
metrics-address = 127.0.0.1:9101
member = 1 127.0.0.1:7501 127.0.0.1:7601
END
out=$(scan "$tmp/wrong.md")
got=$(printf '%s\n' "$out" | grep -c .)
if [ "$got" -eq 9 ]; then
        report "the check finds all 9 wrong ports of a text made wrong" 0 ""
else
        report "the check finds all 9 wrong ports of a text made wrong" 1 \
                "found $got of 9:
$out"
fi
# And the right ones pass.
cat >"$tmp/right.md" <<'END'
member = 2 10.0.0.2:7001 baton2.example.net:7101
client-listen = 0.0.0.0:7101
raft-listen = [::]:7001
curl -sf http://10.0.0.2:7201/ready
batonctl --endpoints 127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103 status
curl http://127.0.0.1:7203/metrics
with client.campaign("db-primary", "10.0.0.1:5432") as lead:
cannot connect to any node: nosuchhost.invalid:8601: name does not resolve
END
out=$(scan "$tmp/right.md")
report "the check passes a text with the documented ports" $? "$out"

for f in "${docs[@]}"; do
        out=$(scan "$f")
        report "$f names only the documented ports" $? "$out"
done
[ "$failed" -eq 0 ]
