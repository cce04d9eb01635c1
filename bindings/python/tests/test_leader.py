"""Leader kills: tokens keep increasing, held locks survive, and no leader
at all is BATON_EUNAVAILABLE."""

from __future__ import annotations

import threading

import pytest

import baton

from conftest import wait_for


def test_token_increases_across_a_leader_kill(cluster, client, unique):
    name = unique()
    before = client.acquire(name)
    got = []
    with baton.Client() as other:
        waiter = threading.Thread(
            target=lambda: got.append(other.acquire(name, wait=30))
        )
        waiter.start()
        assert wait_for(lambda: client.holder(name).waiters == 1, 5.0)
        try:
            cluster.run("kill-leader")
            # The grant lives on under the new leader, with its token.
            h = client.holder(name)
            assert h.held and h.token == before.token and h.session == before.session
            assert before.held
            before.release()  # through the new leader
            waiter.join(30)
            assert got and got[0].token > before.token
            got[0].release()
            with client.lock(name, wait=5) as after:
                assert after.token > got[0].token
            status = client.status()
            assert status.role == baton.NodeRole.LEADER
        finally:
            cluster.run("restart-dead")


def test_no_leader_is_unavailable(cluster, client):
    seen = []

    def unavailable() -> bool:
        try:
            client.status()
        except baton.UnavailableError:
            return True
        except (baton.ConnectError, baton.ServerIOError, baton.NoAnswerError) as e:
            seen.append(type(e))  # the dead leader, for a moment
        return False

    try:
        cluster.run("kill-leader")
        cluster.run("kill-leader")  # one node left: no majority, no leader
        assert wait_for(unavailable, 10.0, step=0.1)
        with pytest.raises(baton.UnavailableError) as e:
            client.status()
        assert e.value.code == -30
    finally:
        cluster.run("restart-dead")
    assert client.status().role == baton.NodeRole.LEADER
