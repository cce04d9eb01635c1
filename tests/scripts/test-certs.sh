#!/usr/bin/env bash
# Test of scripts/certs, printing TAP: the files it makes, that they verify
# against the CA it made (and not against another one: the negative
# control), the identities and SANs nodes and clients need, key modes, and
# that a second run keeps the CA and adds only what is missing, makes again
# a certificate that lacks a SAN asked for, keeps every node's SANs when it
# makes one again (and says what it made and why), and refuses a half-gone
# CA. Every certificate starts an hour before it was made (--backdate), so
# that it verifies on a host whose clock is behind (openssl verify -attime,
# with a time before the start as the negative control), its validity
# still counted from when it was made; and the serial numbers follow ca.srl.
set -u

script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/certs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-certs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
check() { # description, then a command that must succeed
        local what=$1
        shift
        n=$((n + 1))
        if "$@" >/dev/null 2>&1; then
                echo "ok $n - $what"
        else
                failed=$((failed + 1))
                echo "not ok $n - $what"
        fi
}
fails() { # description, then a command that must fail
        local what=$1
        shift
        n=$((n + 1))
        if "$@" >/dev/null 2>&1; then
                failed=$((failed + 1))
                echo "not ok $n - $what"
        else
                echo "ok $n - $what"
        fi
}
subject() { openssl x509 -in "$1" -noout -subject -nameopt RFC2253; }
sans() { openssl x509 -in "$1" -noout -ext subjectAltName; }
mode() { stat -c %a "$1"; }

d=$tmp/tls
t0=$(date +%s)
check "makes a 3-node set" "$script" "$d" --nodes 3 --node-san 2=IP:10.0.0.2 --client app
for f in ca.crt ca.key node1.crt node1.key node2.crt node3.key admin.crt admin.key app.crt app.key; do
        check "$f exists" test -s "$d/$f"
done
check "node2 verifies against the CA" openssl verify -CAfile "$d/ca.crt" "$d/node2.crt"
check "admin verifies against the CA" openssl verify -CAfile "$d/ca.crt" "$d/admin.crt"
check "node2's CN is node-2" grep -q "^subject=CN=node-2$" <(subject "$d/node2.crt")
check "admin's CN is admin" grep -q "^subject=CN=admin$" <(subject "$d/admin.crt")
check "node2 has the loopback and its extra SAN" \
        grep -q "DNS:node-2, IP Address:127.0.0.1, DNS:localhost, IP Address:10.0.0.2" <(sans "$d/node2.crt")
fails "node1 has no other node's SAN" grep -q "10.0.0.2" <(sans "$d/node1.crt")
check "keys are 0600" test "$(mode "$d/node1.key")$(mode "$d/ca.key")$(mode "$d/admin.key")" = 600600600
check "every key is 0600" test -z "$(find "$d" -name '*.key' ! -perm 0600)"
check "a run that makes nothing prints nothing" test -z "$("$script" "$d" --nodes 3 --node-san 2=IP:10.0.0.2 --client app 2>&1)"
ca_days=$((($(date -d "$(openssl x509 -in "$d/ca.crt" -noout -enddate | cut -d= -f2)" +%s) - $(date +%s)) / 86400))
check "the CA is good for 10 years ($ca_days days)" test "$ca_days" -ge 3649 -a "$ca_days" -le 3651
check "node certificates serve and are clients (raft peers)" \
        grep -q "TLS Web Server Authentication, TLS Web Client Authentication" \
        <(openssl x509 -in "$d/node1.crt" -noout -ext extendedKeyUsage)
check "the directory is 0700" test "$(mode "$d")" = 700

# Each certificate starts an hour before it was made (between t0 and now),
# so that a host whose clock is behind this one's by less than that (a
# clock stepped back, skewed hosts) accepts it at once; its validity is
# still counted from when it was made.
epoch() { date -d "$(openssl x509 -in "$1" -noout "-$2" | cut -d= -f2)" +%s; }
now=$(date +%s)
for f in ca node2 admin; do
        nb=$(epoch "$d/$f.crt" startdate)
        echo "# $f.crt starts $((now - nb)) s before now, made $((now - t0)) s or less ago"
        check "$f.crt starts an hour before it was made" \
                test "$nb" -ge $((t0 - 3600 - 2)) -a "$nb" -le $((now - 3600 + 2))
done
check "the CA is good for 3650 days from when it was made" \
        test $(($(epoch "$d/ca.crt" enddate) - $(epoch "$d/ca.crt" startdate))) = $((3650 * 86400 + 3600))
check "node2 is good for 825 days from when it was made" \
        test $(($(epoch "$d/node2.crt" enddate) - $(epoch "$d/node2.crt" startdate))) = $((825 * 86400 + 3600))
check "node2 and its CA verify on a clock 10 minutes behind" \
        openssl verify -attime $((now - 600)) -CAfile "$d/ca.crt" "$d/node2.crt"
check "and admin" openssl verify -attime $((now - 600)) -CAfile "$d/ca.crt" "$d/admin.crt"
fails "but not on a clock two hours behind (before their start)" \
        openssl verify -attime $((now - 7200)) -CAfile "$d/ca.crt" "$d/node2.crt"
check "a set made with --backdate 0" "$script" "$tmp/now" --nodes 1 --backdate 0
fails "starts now: it does not verify on a clock 10 minutes behind" \
        openssl verify -attime $(($(date +%s) - 600)) -CAfile "$tmp/now/ca.crt" "$tmp/now/node1.crt"
check "and verifies now" openssl verify -CAfile "$tmp/now/ca.crt" "$tmp/now/node1.crt"
fails "--backdate -5 is refused" "$script" "$tmp/x" --nodes 1 --backdate -5
fails "--days 1x is refused" "$script" "$tmp/x" --nodes 1 --days 1x

# Serial numbers: each certificate the CA signs has its own, one past the
# last, which ca.srl keeps (app's, made last), as openssl x509
# -CAcreateserial kept it in directories made before.
serial() { openssl x509 -in "$1" -noout -serial | cut -d= -f2; }
serials=$(for f in "$d"/*.crt; do serial "$f"; done)
check "every certificate has its own serial (of 6)" \
        test "$(sort -u <<<"$serials" | wc -l)" = 6 -a "$(wc -l <<<"$serials")" = 6
check "ca.srl holds the last one given (app's)" test "$(cat "$d/ca.srl")" = "$(serial "$d/app.crt")"
cp -a "$d" "$tmp/serial"
echo 01FF >"$tmp/serial/ca.srl"
check "a client added after ca.srl 01FF" "$script" "$tmp/serial" --nodes 3 --client next
check "has serial 0200" test "$(serial "$tmp/serial/next.crt")" = 0200
check "and ca.srl says so" test "$(cat "$tmp/serial/ca.srl")" = 0200

# The negative control: another CA's certificates do not verify here.
check "a second set in another directory" "$script" "$tmp/other" --nodes 1
fails "another CA's node1 does not verify against this CA" \
        openssl verify -CAfile "$d/ca.crt" "$tmp/other/node1.crt"

ca_before=$(openssl x509 -in "$d/ca.crt" -noout -fingerprint -sha256)
node1_before=$(openssl x509 -in "$d/node1.crt" -noout -fingerprint -sha256)
check "a second run with a 4th node" "$script" "$d" --nodes 4
check "keeps the CA" test "$(openssl x509 -in "$d/ca.crt" -noout -fingerprint -sha256)" = "$ca_before"
check "keeps node1" test "$(openssl x509 -in "$d/node1.crt" -noout -fingerprint -sha256)" = "$node1_before"
check "node4 verifies against the same CA" openssl verify -CAfile "$d/ca.crt" "$d/node4.crt"

# A SAN added later (a node's host address) makes that node's certificate
# again, by the same CA; the others stay.
node2_before=$(openssl x509 -in "$d/node2.crt" -noout -fingerprint -sha256)
check "a run adding a SAN to node1" "$script" "$d" --nodes 4 --node-san 1=DNS:baton1.example
check "node1 now has it" grep -q "DNS:baton1.example" <(sans "$d/node1.crt")
check "and still verifies against the same CA" openssl verify -CAfile "$d/ca.crt" "$d/node1.crt"
check "its new key matches it" test "$(openssl x509 -in "$d/node1.crt" -noout -pubkey)" = \
        "$(openssl pkey -in "$d/node1.key" -pubout)"
check "node2 is kept" test "$(openssl x509 -in "$d/node2.crt" -noout -fingerprint -sha256)" = "$node2_before"
check "the CA is kept" test "$(openssl x509 -in "$d/ca.crt" -noout -fingerprint -sha256)" = "$ca_before"

# What each node was given is kept: a run that names only another node's
# SAN (operations.md's "Replacing a member") makes again the certificates
# expiring within 30 days with the SANs they had, and says so.
r=$tmp/renew
check "a set whose node certificates expire in 20 days" \
        "$script" "$r" --nodes 3 --days 20 \
        --node-san 1=DNS:baton1.example.net,IP:10.0.0.1 --node-san 2=IP:10.0.0.2
check "node1.san records node1's SANs" grep -qx "IP:10.0.0.1" "$r/node1.san"
out=$("$script" "$r" --nodes 4 --node-san 4=IP:10.0.0.4 2>&1)
echo "# the run for node 4 said:"
sed 's/^/#   /' <<<"$out"
check "node1 made again keeps its host name" \
        grep -q "DNS:baton1.example.net" <(sans "$r/node1.crt")
check "and its address" grep -q "IP Address:10.0.0.1" <(sans "$r/node1.crt")
check "node2 made again keeps its address" \
        grep -q "IP Address:10.0.0.2" <(sans "$r/node2.crt")
check "node1 is good for 825 days now" \
        openssl x509 -in "$r/node1.crt" -noout -checkend $((800 * 86400))
check "the run says it made node1 again, why, and with which SANs" \
        grep -q "^certs: made node1.crt (expires within 30 days): CN node-1, SAN DNS:node-1,IP:127.0.0.1,DNS:localhost,DNS:baton1.example.net,IP:10.0.0.1$" <<<"$out"
check "and node4, new, with its SAN" \
        grep -q "^certs: made node4.crt (missing): CN node-4, SAN .*IP:10.0.0.4$" <<<"$out"
check "one line per certificate made: nodes 1 to 4" \
        test "$(grep -c "^certs: made node" <<<"$out")" = 4
fails "node3's line has no other node's SAN" grep -q "^certs: made node3.crt.*10.0.0" <<<"$out"
check "a run with nothing to make says nothing" \
        test -z "$("$script" "$r" --nodes 4 2>&1)"

# A directory made before the SAN files existed: the certificate's own
# SANs are kept when it is made again.
rm -f "$r/node1.san"
"$script" "$r" --nodes 4 --node-san 1=DNS:extra.example >/dev/null 2>&1
check "without node1.san, node1 made again keeps the SANs it had" \
        grep -q "DNS:baton1.example.net, IP Address:10.0.0.1, DNS:extra.example" \
        <(sans "$r/node1.crt")
check "and node1.san records them" grep -qx "DNS:baton1.example.net" "$r/node1.san"
fails "a --node-san for a node past --nodes is refused" \
        "$script" "$r" --nodes 2 --node-san 3=IP:10.0.0.3
check "a --node-san written 02 is node 2's" \
        "$script" "$tmp/zero" --nodes 2 --node-san 02=IP:10.0.0.2
check "and node2 has it" grep -q "IP Address:10.0.0.2" <(sans "$tmp/zero/node2.crt")

# An IPv6 SAN, which openssl prints in another form, is found in the
# certificate: a second run keeps the certificate.
check "a node with an IPv6 SAN" "$script" "$tmp/v6" --nodes 1 --node-san 1=IP:2001:db8::1
v6_before=$(openssl x509 -in "$tmp/v6/node1.crt" -noout -fingerprint -sha256)
check "a second run keeps it" test -z "$("$script" "$tmp/v6" --nodes 1 --node-san 1=IP:2001:db8::1 2>&1)"
check "the same certificate" test "$(openssl x509 -in "$tmp/v6/node1.crt" -noout -fingerprint -sha256)" = "$v6_before"

# A CA whose key is gone is refused: a new CA would leave every node
# certificate already made unverifiable.
cp -a "$d" "$tmp/nokey"
rm "$tmp/nokey/ca.key"
fails "a CA certificate without its key is refused" "$script" "$tmp/nokey" --nodes 5
check "and nothing was replaced" cmp -s "$d/ca.crt" "$tmp/nokey/ca.crt"
fails "--nodes 0 is refused" "$script" "$tmp/x" --nodes 0
fails "a client name with a slash is refused" "$script" "$tmp/x" --nodes 1 --client a/b
check "--help" "$script" --help

echo "1..$n"
[ "$failed" -eq 0 ]
