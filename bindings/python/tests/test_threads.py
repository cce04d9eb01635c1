"""Threads sharing one Client: each thread is its own owner."""

from __future__ import annotations

import threading

import baton


def test_threads_share_one_client_exclusively(client, unique):
    name = unique()
    inside = 0
    overlaps = 0
    tokens = []
    guard = threading.Lock()
    errors = []

    def worker():
        nonlocal inside, overlaps
        try:
            for _ in range(15):
                with client.lock(name, wait=20) as lease:
                    with guard:
                        inside += 1
                        overlaps += inside > 1
                        tokens.append(lease.token)
                    lease.guard()
                    with guard:
                        inside -= 1
        except Exception as e:  # pragma: no cover - asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert overlaps == 0
    assert len(tokens) == 120 and len(set(tokens)) == 120
    # Grants are made in log order: the order tokens were recorded in is
    # the order of the grants, since each was recorded while held.
    assert tokens == sorted(tokens)
    assert not client.holder(name).held


def test_threads_on_their_own_locks(client, unique):
    prefix = unique()
    done = []

    def worker(i):
        for _ in range(20):
            with client.lock(f"{prefix}-{i}", wait=5) as lease:
                assert lease.owner == baton.owners.thread_owner()
        done.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(done) == list(range(16))
    assert client.list_locks(prefix) == []


def test_callback_may_not_call_back_into_the_client(cluster, unique):
    name = unique()
    seen = []

    def on_session(state):
        try:
            c.session_id  # must refuse, not deadlock libbaton's thread
        except RuntimeError as e:
            seen.append(str(e))

    c = baton.Client(on_session=on_session)
    try:
        with c.lock(name):
            pass
        from conftest import wait_for

        assert wait_for(lambda: seen, 2.0)
        assert "callback" in seen[0]
    finally:
        c.close()
