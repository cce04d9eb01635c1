#!/usr/bin/env bash
# Test of scripts/certs, printing TAP: the files it makes, that they verify
# against the CA it made (and not against another one: the negative
# control), the identities and SANs nodes and clients need, key modes, and
# that a second run keeps the CA and adds only what is missing.
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
check "the directory is 0700" test "$(mode "$d")" = 700

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
fails "--nodes 0 is refused" "$script" "$tmp/x" --nodes 0
fails "a client name with a slash is refused" "$script" "$tmp/x" --nodes 1 --client a/b
check "--help" "$script" --help

echo "1..$n"
[ "$failed" -eq 0 ]
