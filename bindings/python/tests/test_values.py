"""Values on grants against the live cluster: a lock's, each reader's and
a semaphore grant's value read back through holders(), changed by the
holder with set_value() (fenced by the token), cleared, kept by a
reentrant hold, ended with the grant, seen by a watch; and the refusals."""

from __future__ import annotations

import asyncio
import time

import pytest

import baton
from baton import Cause, EventKind, Mode

from conftest import wait_for


@pytest.fixture
def other(cluster):
    """A second Client: another session."""
    with baton.Client(ttl=5.0, timeout=5.0) as c:
        yield c


def values(client, name):
    return [(g.mode, g.value) for g in client.holders(name)]


def set_value(client, name, owner, token, value):
    """libbaton's baton_set_value() as it is, for tokens and owners a
    Lease never sends."""
    baton.errors.check(
        client._call(client._lib.baton_set_value, name.encode(), owner, token, value),
        f"set value of {name!r}",
    )


def test_lock_value_set_and_cleared(client, other, unique):
    name = unique()
    with client.lock(name, 5, value="10.0.0.7:8080") as lease:
        assert values(other, name) == [(Mode.EXCLUSIVE, "10.0.0.7:8080")]
        lease.set_value("job-42")
        (grant,) = other.holders(name)
        assert (grant.token, grant.value) == (lease.token, "job-42")
        (listed,) = other.list_locks(name)
        assert (listed.name, listed.token, listed.value) == (
            name,
            lease.token,
            "job-42",
        )
        # A reentrant hold keeps the grant's value and token.
        with client.lock(name, 5, value="ignored") as again:
            assert again.token == lease.token
            assert values(other, name) == [(Mode.EXCLUSIVE, "job-42")]
        lease.set_value(b"")
        assert values(other, name) == [(Mode.EXCLUSIVE, "")]
        with pytest.raises(baton.InvalidArgumentError):
            lease.set_value("v" * 256)
        with pytest.raises(baton.InvalidArgumentError):
            lease.set_value("nul\0")
        lease.set_value("v" * 255)
        assert values(other, name) == [(Mode.EXCLUSIVE, "v" * 255)]
    assert values(other, name) == []
    # Released: refused here, sending nothing.
    with pytest.raises(baton.NotHolderError):
        lease.set_value("late")
    # A lock taken without a value has none.
    with other.lock(name, 5):
        assert values(client, name) == [(Mode.EXCLUSIVE, "")]


def test_set_value_is_fenced_by_the_token(client, other, unique):
    name = unique()
    lease = client.acquire(name, 5, value="mine")
    # The same owner with another token: stale, nothing changes.
    with pytest.raises(baton.StaleTokenError):
        set_value(client, name, lease.owner, lease.token + 1, b"stale")
    # Another session, which holds nothing of it.
    other.acquire(unique(), 5).release()  # opens other's session
    with pytest.raises(baton.NotHolderError):
        set_value(other, name, lease.owner, lease.token, b"not mine")
    assert values(other, name) == [(Mode.EXCLUSIVE, "mine")]
    lease.release()


def test_readers_and_permits_carry_their_own(client, other, unique):
    rw, sem = unique("rw"), unique("sem")
    with client.lock_shared(rw, 5, value="reader-a"), other.lock_shared(
        rw, 5, value="reader-b"
    ) as b:
        assert values(client, rw) == [
            (Mode.SHARED, "reader-a"),
            (Mode.SHARED, "reader-b"),
        ]
        b.set_value("reader-b2")
        assert [g.value for g in client.holders(rw)] == ["reader-a", "reader-b2"]
    with client.semaphore(sem, 2, 1, 5, value="p1"), other.semaphore(
        sem, 2, 1, 5, value="p2"
    ):
        grants = client.holders(sem)
        assert [(g.mode, g.limit, g.value) for g in grants] == [
            (Mode.PERMITS, 2, "p1"),
            (Mode.PERMITS, 2, "p2"),
        ]
    lease = client.try_lock(rw, value="writer")
    assert lease is not None
    with lease:
        assert values(other, rw) == [(Mode.EXCLUSIVE, "writer")]


def test_refused_before_anything_is_sent(client, unique):
    name = unique()
    with pytest.raises(baton.InvalidArgumentError):
        client.acquire(name, 0, value="v" * 256)
    with pytest.raises(baton.InvalidArgumentError):
        client.lock(name, 0, value="nul\0")
    with pytest.raises(TypeError):
        client.lock(name, 0, value=42)
    assert client.holders(name).more is False and list(client.holders(name)) == []


def test_watch_sees_values(client, unique):
    name = unique()
    with client.watch(name) as watch:
        with client.lock(name, 5, value="first") as lease:
            lease.set_value("second")
        events = [watch.next(10) for _ in range(3)]
    seen = [(e.kind, e.cause, e.value) for e in events]
    assert seen == [
        (EventKind.GRANTED, Cause.ACQUIRE, "first"),
        (EventKind.PROCLAIMED, Cause.SET_VALUE, "second"),
        (EventKind.RELEASED, Cause.RELEASE, ""),
    ]


def test_async_set_value(client, unique):
    name = unique()

    async def run():
        async with client.lock(name, 5, value="a") as lease:
            await lease.aset_value("b")
            return [g.value for g in client.holders(name)]

    assert asyncio.run(run()) == ["b"]


def test_hold_time_ends_the_grant(client, other, unique):
    name = unique()
    lease = client.acquire(name, 5, hold=0.6)
    assert [g.session for g in other.holders(name)] == [client.session_id]
    # The cluster ends it, the session alive; the Lease hears of it.
    assert wait_for(lambda: list(other.holders(name)) == [], 10)
    assert wait_for(lambda: not lease.held, 10)
    assert client.session_state == baton.SessionState.LIVE
    with other.lock(name, 5) as after:
        assert after.token > lease.token


def test_extend_restarts_the_hold_time(client, other, unique):
    name, plain = unique("held"), unique("plain")
    lease = client.acquire(name, 5, hold=1.5)
    lease.extend(60)
    time.sleep(2.5)
    assert [g.token for g in other.holders(name)] == [lease.token]
    with pytest.raises(ValueError):
        lease.extend(0)
    lease.release()
    with client.lock(plain, 5) as p:
        with pytest.raises(baton.InvalidArgumentError):
            p.extend(1)
