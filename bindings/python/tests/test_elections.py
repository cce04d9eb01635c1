"""Elections against the live cluster: campaign, leader, proclaim, resign;
FIFO succession with increasing tokens; a leader deposed by the end of its
session (revoked, or expired while its process was stopped) is told so
exactly as a lock's holder is; the asyncio forms."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import baton
from baton import Cause, EventKind, LeaseState, Mode

from conftest import PACKAGE, wait_for

TTL = 2.0


def campaign_in_thread(client, name, value, got, wait=30.0):
    """Campaign on a thread of its own (it waits in the queue); the
    Leadership goes into `got`."""
    t = threading.Thread(
        target=lambda: got.append(client.campaign(name, value, wait=wait).acquire())
    )
    t.start()
    return t


def test_campaign_leader_proclaim_resign(client, unique):
    name = unique()
    nobody = client.leader(name)
    assert nobody == baton.Leader(False, 0, 0, 0, 0, 0, "", "")
    with client.campaign(name, "10.0.0.1:80", wait=5) as lead:
        assert isinstance(lead, baton.Leadership) and isinstance(lead, baton.Lease)
        assert lead.token > 0 and lead.name == name
        assert lead.mode == Mode.LEADER and lead.value == "10.0.0.1:80"
        assert lead.state == LeaseState.LIVE and lead.held
        assert 0 < lead.remaining() <= client.ttl
        assert lead.session == client.session_id
        lead.guard()
        now = client.leader(name)
        assert (now.held, now.session, now.owner, now.token, now.candidates) == (
            True,
            lead.session,
            lead.owner,
            lead.token,
            0,
        )
        assert now.value == "10.0.0.1:80" and now.client_name
        assert now.since_s == 0 or abs(now.since_s - time.time()) < 120
        lead.proclaim("10.0.0.2:80")
        assert lead.value == "10.0.0.2:80"
        again = client.leader(name)
        assert (again.value, again.token) == ("10.0.0.2:80", lead.token)
        grants = client.holders(name)
        assert [(g.mode, g.token) for g in grants] == [(Mode.LEADER, lead.token)]
    assert lead.state == LeaseState.RELEASED and not lead.held
    assert not client.leader(name).held
    with pytest.raises(baton.NotHolderError):
        lead.resign()  # refused here, sending nothing
    with pytest.raises(baton.NotHolderError):
        lead.proclaim("again")


def test_fifo_succession_with_increasing_tokens(client, unique):
    name = unique()
    with baton.Client(client_name="b") as b, baton.Client(client_name="c") as c:
        first = client.campaign(name, "a").acquire()
        got_b, got_c = [], []
        tb = campaign_in_thread(b, name, "b", got_b)
        assert wait_for(lambda: client.leader(name).candidates == 1, 5.0)
        tc = campaign_in_thread(c, name, "c", got_c)
        assert wait_for(lambda: client.leader(name).candidates == 2, 5.0)
        with pytest.raises(baton.BusyError):
            b.campaign(name, wait=0, owner=99).acquire()
        first.resign()
        tb.join(10)
        assert got_b and got_b[0].token > first.token
        now = client.leader(name)
        assert (now.session, now.value, now.client_name, now.candidates) == (
            b.session_id,
            "b",
            "b",
            1,
        )
        assert not got_c  # c comes after b
        got_b[0].resign()
        tc.join(10)
        assert got_c and got_c[0].token > got_b[0].token
        assert client.leader(name).session == c.session_id
        got_c[0].resign()
    assert not client.leader(name).held


def test_refusals(client, unique):
    name = unique()
    with client.campaign(name) as lead:
        with pytest.raises(baton.HeldError):  # not reentrant
            client.campaign(name, wait=0).acquire()
        with pytest.raises(baton.KindError):
            client.acquire(name, owner=7)
        with baton.Client() as other:
            with pytest.raises(baton.TimedOutError):
                other.campaign(name, wait=0.3).acquire()
        with pytest.raises(baton.InvalidArgumentError):
            lead.proclaim("x" * 256)
        assert lead.value == ""
    lock = unique("lock")
    with client.lock(lock):
        with pytest.raises(baton.KindError):
            client.campaign(lock, owner=7).acquire()
        with pytest.raises(baton.KindError):
            client.leader(lock)
    with pytest.raises(baton.InvalidArgumentError):
        client.campaign(unique(), "x" * 256).acquire()
    with pytest.raises(baton.InvalidArgumentError):
        client.campaign(unique(), "a\0b")
    with pytest.raises(TypeError):
        client.campaign(unique(), 5)  # type: ignore[arg-type]
    request = client.campaign(unique())
    with request:
        pass
    with pytest.raises(RuntimeError):
        request.acquire()  # one use only


def test_revoked_session_deposes_the_leader(client, unique):
    name = unique()
    lost = []
    with baton.Client(ttl=TTL, on_lock_lost=lambda n, t: lost.append((n, t))) as a:
        with baton.Client() as b, client.watch(name) as watch:
            lead = a.campaign(name, "a").acquire()
            seen = []
            lead.add_lost_callback(seen.append)
            got = []
            t = campaign_in_thread(b, name, "b", got)
            assert wait_for(lambda: client.leader(name).candidates == 1, 5.0)
            client.revoke_session(lead.session)  # the admin ends a's session
            assert lead.lost.wait(5.0)
            assert lead.state == LeaseState.EXPIRED and not lead.held
            assert wait_for(lambda: lost == [(name, lead.token)], 5.0)
            assert seen == [lead]
            with pytest.raises(baton.ExpiredError):
                lead.guard()
            with pytest.raises(baton.ExpiredError):
                lead.proclaim("still?")
            with pytest.raises(baton.ExpiredError):
                lead.resign()
            t.join(10)
            assert got and got[0].token > lead.token
            events = [watch.next(5.0) for _ in range(3)]
            got[0].resign()
    granted, revoked, next_one = events
    assert (granted.kind, granted.token, granted.value) == (
        EventKind.GRANTED,
        lead.token,
        "a",
    )
    assert (revoked.kind, revoked.cause, revoked.token, revoked.session) == (
        EventKind.RELEASED,
        Cause.REVOKE,
        lead.token,
        lead.session,
    )
    assert (next_one.kind, next_one.mode, next_one.token, next_one.value) == (
        EventKind.GRANTED,
        Mode.LEADER,
        got[0].token,
        "b",
    )


def test_paused_leader_is_deposed(cluster, unique):
    """As test_pause.py's lock: the leader's process is stopped past its
    TTL, the cluster expires its session, the next candidate leads with a
    higher token, and the old leader, resumed, learns it lost."""
    name = unique()
    env = dict(os.environ, PYTHONPATH=str(PACKAGE))
    child = subprocess.Popen(
        [
            sys.executable,
            str(PACKAGE / "tests" / "holder_child.py"),
            name,
            str(TTL),
            "campaign",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = json.loads(child.stdout.readline())
        with baton.Client() as other:
            assert other.leader(name).token == first["token"]
            assert other.leader(name).value == "child"
            os.kill(child.pid, signal.SIGSTOP)
            start = time.monotonic()
            lead = other.campaign(name, "other", wait=TTL * 5).acquire()
            waited = time.monotonic() - start
            assert lead.token > first["token"]
            assert other.leader(name).session == lead.session != first["session"]
            os.kill(child.pid, signal.SIGCONT)
            child.stdin.write("go\n")
            child.stdin.flush()
            report = json.loads(child.stdout.readline())
            assert (
                other.leader(name).token == lead.token
            )  # the child's resign did nothing
            lead.resign()
        assert child.wait(10) == 0
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
            child.wait()
    assert waited >= TTL * 0.5  # handed on by the expiry, not early
    assert report["state_at_resume"] == "EXPIRED"
    assert report["release"] == "ExpiredError" and report["release_code"] == -7
    assert report["lost_event"] is True
    assert report["lost"] == [[name, first["token"]]]
    assert report["state"] == "EXPIRED" and report["guard"] == "ExpiredError"
    assert report["transitions"][-1] == "EXPIRED"


def test_async_campaign(client, unique):
    name = unique()

    async def main():
        async with client.campaign(name, "x", wait=5) as lead:
            assert lead.owner & baton.owners.TASK_BIT
            await lead.aproclaim("y")
            now = await asyncio.to_thread(client.leader, name)
            assert (now.token, now.value, now.owner) == (lead.token, "y", lead.owner)
        again = await client.campaign(name, "z")
        await again.aresign()
        return lead, again

    lead, again = asyncio.run(main())
    assert lead.state == again.state == LeaseState.RELEASED
    assert again.token > lead.token
    assert not client.leader(name).held


def test_cancelled_candidate_never_leads(client, unique):
    name = unique()

    async def main():
        with baton.Client() as other:
            lead = await client.campaign(name)
            waiter = asyncio.create_task(
                other.campaign(name, "late", wait=10).acquire_async()
            )
            await asyncio.sleep(0.3)
            assert (await asyncio.to_thread(client.leader, name)).candidates == 1
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
            await lead.aresign()  # the cancelled candidate leads now...
            # ...and resigns at once.
            assert await asyncio.to_thread(
                wait_for, lambda: not client.leader(name).held, 5.0
            )

    asyncio.run(main())
