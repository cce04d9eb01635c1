"""Connection and credential mistakes raise at once, and say what they are.

Nothing listening, a name that does not resolve, the raft port given as the
endpoint, no TLS files against TLS nodes, an expired certificate, another
CA's, a wrong CA file, TLS against a tls = off node and a certificate for
another host name each raise baton.ConnectError or baton.TLSError within
5 s of a 15 s timeout, with the endpoint and the reason in the exception's
text (libbaton's detail, read on the thread that made the call, asyncio's
worker threads included). A cluster that lost its majority still waits out
the timeout, and says "no leader".
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, Union

import pytest

import baton

from conftest import ROOT, Cluster, wait_for
from test_failures import free_endpoint

LONG = 15.0  # the timeout of the failing calls
PROMPT = 5.0  # they must end well before it
# A resolver that loses a query asks again after resolv.conf's timeout, 5 s
# by default: a name lookup may take that long on its own.
RESOLVER = 5.0
BATOND = ROOT / "build" / "batond"


def raises_at_once(
    cls, call: Callable[[], object], *words: str, extra: float = 0.0
) -> baton.Error:
    """`call()` raises `cls` within PROMPT (+ `extra`) s, its text saying
    every one of `words`; the exception."""
    start = time.monotonic()
    with pytest.raises(cls) as caught:
        call()
    took = time.monotonic() - start
    text = str(caught.value)
    assert took < PROMPT + extra, f"{took:.1f} s of a {LONG} s timeout: {text}"
    for word in words:
        assert word in text, f"{word!r} not in {text!r}"
    assert caught.value.detail in text
    return caught.value


def try_lock_raises(
    cls,
    unique: Callable[[str], str],
    *words: str,
    endpoints: Optional[str] = None,
    tls: Union[baton.TLS, bool, None] = None,
    extra: float = 0.0,
) -> baton.Error:
    """A new client of `endpoints` with `tls` and a LONG timeout: its
    try_lock() raises `cls` at once, saying every one of `words`
    (raises_at_once); the exception."""
    with baton.Client(endpoints, tls=tls, timeout=LONG) as c:
        return raises_at_once(cls, lambda: c.try_lock(unique()), *words, extra=extra)


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60)


def signed(cluster: Cluster, name: str, cn: str, days: int, san: str = "") -> baton.TLS:
    """A certificate for `cn` signed by the cluster's CA, valid for `days`
    (negative: expired), with the subject alternative names `san`."""
    tls = cluster.dir / "tls"
    out = cluster.dir / "failfast"
    out.mkdir(exist_ok=True)
    key, csr, crt = out / f"{name}.key", out / f"{name}.csr", out / f"{name}.crt"
    openssl(
        "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", str(key), "-subj", f"/CN={cn}", "-out", str(csr),
    )  # fmt: skip
    extra = []
    if san:
        ext = out / f"{name}.ext"
        ext.write_text(f"subjectAltName = {san}\n")
        extra = ["-extfile", str(ext)]
    openssl(
        "x509", "-req", "-in", str(csr), "-CA", str(tls / "ca.crt"),
        "-CAkey", str(tls / "ca.key"), "-days", str(days), "-out", str(crt),
        *extra,
    )  # fmt: skip
    return baton.TLS(str(tls / "ca.crt"), str(crt), str(key))


@contextmanager
def lone_node(cluster: Cluster, port: int, *flags: str) -> Iterator[str]:
    """A one-node cluster of its own (batond with `flags`) on 127.0.0.1:
    raft `port`, clients `port` + 1; its client endpoint."""
    data = cluster.dir / f"lone-{port}"
    shutil.rmtree(data, ignore_errors=True)
    endpoint = f"127.0.0.1:{port + 1}"
    with open(cluster.dir / f"lone-{port}.log", "w") as log:
        node = subprocess.Popen(
            [
                str(BATOND), "--id", "1", "--data-dir", str(data),
                "--member", f"1 127.0.0.1:{port} {endpoint}", *flags,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def listening() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port + 1), timeout=1).close()
            return True
        except OSError:
            return False

    try:
        assert wait_for(listening, 20.0), f"batond did not listen on {endpoint}"
        yield endpoint
    finally:
        node.terminate()
        try:
            node.wait(10)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()


# --- Nothing to connect to ---------------------------------------------------


def test_nothing_listening(cluster, unique):
    a = free_endpoint(cluster)
    b = f"127.0.0.1:{cluster.base + 98}"
    with baton.Client(f"{a},{b}", timeout=LONG) as c:
        e = raises_at_once(
            baton.ConnectError,
            lambda: c.try_lock(unique()),
            "cannot connect to any node",
            f"{a}: connection refused",
            f"{b}: connection refused",
            "BATON_ECONNECT",
        )
        assert isinstance(e, ConnectionError)
        assert e.code == baton.ConnectError.code
        # A read, which opens no session, the same.
        raises_at_once(
            baton.ConnectError, lambda: c.holder(unique()), f"{a}: connection refused"
        )


def test_name_does_not_resolve(cluster, unique):
    try_lock_raises(
        baton.ConnectError,
        unique,
        "nosuchhost.invalid:8601: name does not resolve",
        endpoints="nosuchhost.invalid:8601",
        extra=RESOLVER,
    )


def test_raft_port(cluster, unique):
    raft = f"127.0.0.1:{cluster.base + 1}"
    try_lock_raises(baton.ConnectError, unique, raft, "did not answer", endpoints=raft)


def test_asyncio_says_why(cluster, unique):
    """The detail of a call run on a worker thread is read there."""
    a = free_endpoint(cluster)

    async def main() -> None:
        async with baton.Client(a, timeout=LONG) as c:
            await c.lock(unique())

    raises_at_once(
        baton.ConnectError, lambda: asyncio.run(main()), f"{a}: connection refused"
    )


def test_status_of_a_dead_node(client, cluster):
    a = free_endpoint(cluster)
    raises_at_once(
        baton.ConnectError,
        lambda: client.status(a),
        f"cannot connect to {a}: connection refused",
    )


# --- TLS ---------------------------------------------------------------------


def test_no_tls_files(cluster, unique, monkeypatch):
    for var in ("BATON_CACERT", "BATON_CERT", "BATON_KEY"):
        monkeypatch.delenv(var, raising=False)
    try_lock_raises(
        baton.TLSError,
        unique,
        f"127.0.0.1:{cluster.base + 101}",
        "the node requires TLS",
        "BATON_ETLS",
        endpoints=cluster.endpoints,
        tls=False,
    )


def test_expired_certificate(cluster, unique):
    tls = signed(cluster, "expired", "admin", -1)
    try_lock_raises(
        baton.TLSError,
        unique,
        f"127.0.0.1:{cluster.base + 102}",
        "the node refused this client's certificate",
        "certificate expired",
        tls=tls,
    )


def test_certificate_of_another_ca(cluster, unique):
    other = cluster.other_ca("failfast-other-ca")
    mine = cluster.dir / "tls" / "ca.crt"
    tls = baton.TLS(str(mine), str(other / "admin.crt"), str(other / "admin.key"))
    try_lock_raises(baton.TLSError, unique, "unknown CA", tls=tls)
    # And trusting that CA instead: the client refuses the nodes.
    wrong = baton.TLS(
        str(other / "ca.crt"),
        str(cluster.dir / "tls" / "admin.crt"),
        str(cluster.dir / "tls" / "admin.key"),
    )
    try_lock_raises(
        baton.TLSError,
        unique,
        f"127.0.0.1:{cluster.base + 103}",
        "the node's certificate is refused here",
        tls=wrong,
    )


def test_tls_against_a_plain_node(cluster, unique):
    with lone_node(cluster, cluster.base + 140, "--tls", "false") as ep:
        try_lock_raises(
            baton.TLSError,
            unique,
            ep,
            "the node speaks plain TCP (tls = off) but this client uses TLS",
            endpoints=ep,
        )


def test_certificate_for_another_host(cluster, unique):
    # Its own address alone (batond does not start with a certificate that
    # lacks it), dialled by a name it does not have.
    node = signed(cluster, "elsewhere", "node-1", 30, "IP:127.0.0.1")
    flags = ("--tls", "true", "--tls-ca", node.ca, "--tls-cert", node.cert)
    with lone_node(cluster, cluster.base + 142, *flags, "--tls-key", node.key) as ep:
        port = ep.rsplit(":", 1)[1]
        try_lock_raises(
            baton.TLSError,
            unique,
            f"localhost:{port}",
            "hostname mismatch",
            endpoints=f"localhost:{port}",
        )


# --- What must still wait ----------------------------------------------------


def test_lost_majority_waits_and_says_no_leader(cluster, unique):
    """Two nodes stopped (SIGSTOP): the third knows no leader. The call
    waits out its timeout."""
    pids = cluster.pids()[:2]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        with baton.Client(timeout=3.0) as c:
            start = time.monotonic()
            with pytest.raises(baton.NoAnswerError) as e:
                c.try_lock(unique())
            took = time.monotonic() - start
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
    assert took >= 2.9
    assert "no leader" in str(e.value)
    assert f"127.0.0.1:{cluster.base + 103}" in str(e.value)
    # The cluster comes back for the tests after this one.
    with baton.Client(timeout=5.0) as c:
        assert wait_for(lambda: _answers(c, unique()), 30.0, step=0.2)


def _answers(c: baton.Client, name: str) -> bool:
    try:
        c.holder(name)
        return True
    except baton.Error:
        return False


def test_exception_keeps_its_detail_when_pickled():
    import pickle

    e = baton.errors.error_for(-55, "acquire 'x'", "cannot connect to any node: a: b")
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is baton.ConnectError
    assert str(again) == str(e)
    assert again.detail == "cannot connect to any node: a: b"
