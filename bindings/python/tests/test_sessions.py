"""Seeing the cluster's sessions: Client.sessions() pages by id,
Client.session_info() shows one with its locks and waits."""

from __future__ import annotations

import threading

import pytest

import baton

from conftest import wait_for


def test_sessions_list_pages_and_info(cluster, unique):
    name, other = unique("held"), unique("awaited")
    with baton.Client(ttl=8.0, client_name="py-a", lock_delay=0.25) as a, \
            baton.Client(ttl=6.0, client_name="py-b") as b, \
            baton.Client(ttl=5.0, timeout=5.0) as q:
        grant = a.lock(name).acquire()
        b_grant = b.lock(other).acquire()
        ids = {a.session_id: "py-a", b.session_id: "py-b"}

        # Every session, a page of one at a time.
        seen, after, pages = {}, 0, 0
        while True:
            page = q.sessions(after, limit=1)
            pages += 1
            assert len(page) <= 1
            for s in page:
                assert s.id > after
                seen[s.id] = s
            if page.next == 0:
                assert not page.more
                break
            assert page.more and page.next == page[-1].id
            after = page.next
        assert set(ids) <= set(seen) and pages >= 2
        assert {s.id for s in q.all_sessions()} >= set(ids)

        s = q.session_info(a.session_id)
        assert s.client_name == "py-a" and s.ttl_ms == 8000
        assert s.lock_delay_ms == 250 and s.grants == 1 and s.waits == 0
        assert 0 <= s.left_ms <= 8000 and s.left_ms + s.idle_ms == 8000
        assert s.identity == "admin" and s.address == "127.0.0.1"
        assert [(h.name, h.token, h.mode) for h in s.locks] == [
            (name, grant.token, baton.Mode.EXCLUSIVE)
        ]
        assert s.waiting == ()

        # A waiter shows as one.
        waiter = threading.Thread(target=lambda: a.lock(other, wait=30).acquire())
        waiter.start()
        assert wait_for(lambda: q.session_info(a.session_id).waits == 1, 10.0)
        w = q.session_info(a.session_id).waiting
        assert len(w) == 1 and w[0].name == other and w[0].wait_ms == 30000
        b_grant.release()
        waiter.join(10)

        b_id = b.session_id
    with baton.Client(ttl=5.0, timeout=5.0) as q:
        with pytest.raises((baton.ClosedError, baton.NoSessionError)):
            q.session_info(b_id)
        with pytest.raises(baton.NoSessionError):
            q.session_info(987654321)
        assert b_id not in {s.id for s in q.all_sessions()}


def test_holders_show_their_time_left(cluster, unique):
    """holder() and holders() give each holder's time left, the leader's
    lease of its session, as batonctl holder prints it; a free lock none."""
    name, pool, free = unique("held"), unique("pool"), unique("free")
    with baton.Client(ttl=8.0, client_name="py-left") as a, \
            baton.Client(ttl=6.0) as b, \
            baton.Client(ttl=5.0, timeout=5.0) as q:
        a.lock(name).acquire()
        a.semaphore(pool, 3).acquire()
        b.semaphore(pool, 3).acquire()

        h = q.holder(name)
        assert h.held and h.session == a.session_id
        assert h.left_ms is not None and 0 <= h.left_ms <= 8000

        grants = {g.session: g for g in q.holders(pool)}
        assert set(grants) == {a.session_id, b.session_id}
        assert 0 <= grants[a.session_id].left_ms <= 8000
        assert 0 <= grants[b.session_id].left_ms <= 6000

        f = q.holder(free)
        assert not f.held and f.left_ms is None
        assert list(q.holders(free)) == []


def test_time_left_of_many_sessions_walks_the_pages(cluster, unique):
    """Above 8 distinct holder sessions the binding reads the sessions'
    pages rather than one each; a session that is not live has none."""
    clients = [baton.Client(ttl=7.0) for _ in range(9)]
    try:
        for i, c in enumerate(clients):
            c.lock(unique(f"many-{i}")).acquire()  # each opens its session
        with baton.Client(ttl=5.0, timeout=5.0) as q:
            ids = [c.session_id for c in clients]
            left = q._sessions_left(ids + [987654321])
            assert set(left) == set(ids)
            assert all(0 <= ms <= 7000 for ms in left.values())
            assert q._sessions_left([987654321]) == {}
    finally:
        for c in clients:
            c.close()
