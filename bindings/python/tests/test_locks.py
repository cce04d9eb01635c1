"""Every kind of lock against the live cluster: exclusive, try, timeout,
reentrancy, read/write, semaphores, multi-locks, and the queries."""

from __future__ import annotations

import threading
import time

import pytest

import baton
from baton import LeaseState, Mode

from conftest import wait_for


def test_lock_gives_a_token_and_releases(client, unique):
    name = unique()
    with client.lock(name, wait=5.0) as lease:
        assert lease.token > 0
        assert lease.state == LeaseState.LIVE and lease.held
        assert 0 < lease.remaining() <= client.ttl
        assert lease.session == client.session_id
        h = client.holder(name)
        assert (h.held, h.token, h.session, h.owner) == (
            True,
            lease.token,
            lease.session,
            lease.owner,
        )
        assert client.check(name, lease.token)
    assert lease.state == LeaseState.RELEASED and not lease.held
    assert lease.remaining() == 0.0
    assert not client.holder(name).held
    with pytest.raises(baton.NotHolderError):
        lease.release()  # a second release is refused here, sending nothing


def test_tokens_increase_per_lock(client, unique):
    name = unique()
    tokens = []
    for _ in range(5):
        with client.lock(name) as lease:
            tokens.append(lease.token)
    assert tokens == sorted(set(tokens))


def test_try_lock_busy_and_free(client, cluster, unique):
    name = unique()
    with baton.Client() as other:
        held = other.acquire(name)
        assert client.try_lock(name) is None
        with pytest.raises(baton.BusyError) as e:
            client.acquire(name, wait=0)
        assert e.value.code == baton.BusyError.code == -9
        held.release()
    lease = client.try_lock(name)
    assert lease is not None and lease.token > held.token
    with lease:
        pass
    assert lease.state == LeaseState.RELEASED


def test_wait_times_out(client, unique):
    name = unique()
    with baton.Client() as other, other.lock(name):
        start = time.monotonic()
        with pytest.raises(baton.TimedOutError):
            client.acquire(name, wait=0.3)
        took = time.monotonic() - start
    assert 0.25 <= took < 3.0


def test_waiter_gets_the_lock_on_release(client, unique):
    name = unique()
    with baton.Client() as other:
        first = other.acquire(name)
        got = []
        t = threading.Thread(target=lambda: got.append(client.acquire(name, wait=10)))
        t.start()
        time.sleep(0.2)
        assert client.holder(name).waiters == 1
        first.release()
        t.join(10)
    assert got and got[0].token > first.token
    got[0].release()


def test_reentrancy_per_thread(client, unique):
    name = unique()
    outer = client.acquire(name)
    inner = client.acquire(name, wait=0)  # same thread: reentrant, not busy
    assert inner.token == outer.token and inner.owner == outer.owner
    assert client.holder(name).count == 2
    inner.release()
    assert client.holder(name).count == 1 and outer.held
    # Another thread is another owner.
    seen = []
    t = threading.Thread(target=lambda: seen.append(client.try_lock(name)))
    t.start()
    t.join()
    assert seen == [None]
    outer.release()
    assert not client.holder(name).held


def test_explicit_owner_and_release_from_another_thread(client, unique):
    name = unique()
    lease = client.acquire(name, owner=42)
    assert lease.owner == 42 and client.holder(name).owner == 42
    assert client.acquire(name, wait=0, owner=42).token == lease.token  # reentrant
    errors = []

    def release_both():
        try:
            client.release(name, lease.token, owner=42)
            lease.release()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=release_both)
    t.start()
    t.join()
    assert errors == [] and not client.holder(name).held


def test_name_rules(client):
    with pytest.raises(baton.InvalidNameError):
        client.acquire("a\0b")
    with pytest.raises(baton.InvalidNameError):
        client.acquire("x" * 256)
    with pytest.raises(baton.InvalidNameError):
        client.acquire("")
    with pytest.raises(TypeError):
        client.acquire(12)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        client.acquire("x", wait=-1)


def test_bytes_and_unicode_names(client, unique):
    name = unique("é☃")
    with client.lock(name) as lease:
        assert lease.name == name
        assert name in [i.name for i in client.list_locks(name[:20])]
    raw = b"py-raw-\xff-" + str(time.monotonic_ns()).encode()
    with client.lock(raw) as lease:
        assert lease.name.encode("utf-8", "surrogateescape") == raw
        assert client.holder(raw).held


def test_read_write_lock(client, unique):
    name = unique()
    with baton.Client() as other:
        r1 = client.acquire_shared(name)
        r2 = other.acquire_shared(name, wait=0)
        assert {g.mode for g in client.holders(name)} == {Mode.SHARED}
        assert len(client.holders(name)) == 2
        assert other.try_lock(name, owner=5) is None  # a writer waits for readers
        r1.release()
        r2.release()
        with other.lock(name, wait=0) as w:
            assert w.mode == Mode.EXCLUSIVE
            with pytest.raises(baton.BusyError):
                client.acquire_shared(name, wait=0)


def test_semaphore(client, unique):
    name = unique()
    with baton.Client() as other:
        a = client.acquire_semaphore(name, limit=3, permits=2)
        b = other.acquire_semaphore(name, limit=3, permits=1, wait=0)
        assert a.token != b.token or a.session != b.session
        assert (a.permits, a.limit, a.mode) == (2, 3, Mode.PERMITS)
        grants = client.holders(name)
        assert sorted(g.permits for g in grants) == [1, 2]
        assert all(g.limit == 3 for g in grants)
        with pytest.raises(baton.BusyError):
            other.acquire_semaphore(name, limit=3, permits=1, wait=0, owner=7)
        a.release()
        with other.semaphore(name, limit=3, permits=2, wait=0, owner=7) as c:
            assert c.token > a.token
        b.release()


def test_multi_lock(client, unique):
    a, b, c = unique("a"), unique("b"), unique("c")
    with client.lock_many([a, (b, Mode.SHARED), c], wait=5) as lease:
        assert lease.is_multi and lease.names == (a, b, c)
        assert lease.modes == (Mode.EXCLUSIVE, Mode.SHARED, Mode.EXCLUSIVE)
        for n in (a, b, c):
            assert client.holders(n)[0].token == lease.token
        with baton.Client() as other:
            with pytest.raises(baton.BusyError):
                other.acquire_many([c, a], wait=0)
            assert not other.holder(b).held or other.holder(b).token == lease.token
    for n in (a, b, c):
        assert not client.holder(n).held


def test_list_and_pages(client, unique):
    prefix = unique("list")
    leases = [client.acquire(f"{prefix}-{i}") for i in range(5)]
    page = client.list_locks(prefix, limit=3)
    assert len(page) == 3 and page.more
    page = client.list_locks(prefix)
    assert [i.name for i in page] == [
        f"{prefix}-{i}" for i in range(5)
    ] and not page.more
    assert [i.token for i in page] == [lease.token for lease in leases]
    for lease in leases:
        lease.release()
    assert client.list_locks(prefix) == []


def test_check_says_stale_after_a_new_grant(client, unique):
    name = unique()
    with client.lock(name) as first:
        pass
    with client.lock(name) as second:
        assert client.check(name, second.token)
        assert not client.check(name, first.token)


def test_status_and_membership_view(client, cluster):
    s = client.status()
    assert s.role == baton.NodeRole.LEADER and s.leader_id == s.id
    assert len(s.members) == 3
    assert {m.role for m in s.members} == {baton.MemberRole.VOTER}
    assert s.endpoint in cluster.endpoints
    follower = next(m for m in s.members if m.id != s.id)
    f = client.status(follower.client_address)
    assert f.role == baton.NodeRole.FOLLOWER and f.leader_id == s.id
    # Every node says what it runs: this build's release and formats.
    assert s.version == f.version == baton.library_version()
    assert s.protocol == 2 and s.command_format == 5
    assert s.snapshot_format >= 12 and s.container_format == 2
    # And what is wrong with it: nothing, on a healthy cluster.
    assert s.alarms == () and f.alarms == ()
    assert s.diverged_index == 0


def test_session_state_and_id(cluster):
    states = []
    with baton.Client(on_session=states.append) as c:
        assert c.session_state == baton.SessionState.NONE and c.session_id == 0
        with c.lock("py-session-state"):
            assert c.session_state == baton.SessionState.LIVE
            assert c.session_id > 0 and 0 < c.remaining() <= c.ttl
    assert states[:1] == [baton.SessionState.LIVE]
    assert c.closed
    with pytest.raises(ValueError):
        c.acquire("x")


def test_close_releases_held_leases(cluster, unique):
    name = unique()
    c = baton.Client()
    lease = c.acquire(name)
    c.close()
    assert lease.state == LeaseState.RELEASED and not lease.lost.is_set()
    with baton.Client() as other:
        assert not other.holder(name).held
    c.close()  # twice is harmless


def test_detach_and_release_in(client, unique):
    name = unique()
    c = baton.Client()
    lease = c.acquire(name, owner=baton.owners.DETACHED)
    detached = c.detach()
    assert detached.session == lease.session and len(detached.secret) == 16
    assert lease.state == LeaseState.DETACHED
    assert wait_for(lambda: lease._final == LeaseState.DETACHED, 2.0)  # the callback
    c.close()  # does not close the detached session
    assert client.holder(name).held
    with pytest.raises(baton.PermissionDeniedError):
        client.release_in(detached.session, bytes(16), name, lease.token)
    client.release_in(detached.session, detached.secret, name, lease.token)
    assert not client.holder(name).held
