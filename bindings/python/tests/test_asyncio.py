"""asyncio: tasks contending for one lock, each its own owner, and the
event loop never blocked."""

from __future__ import annotations

import asyncio
import time

import pytest

import baton
from baton import LeaseState


def test_tasks_contend_for_one_lock(client, unique):
    name = unique()
    tokens = []
    inside = 0
    overlaps = 0
    ticks = 0

    async def ticker(stop):
        # Counts while the tasks wait: a blocked loop would not tick.
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    async def task(i):
        nonlocal inside, overlaps
        for _ in range(5):
            async with client.lock(name, wait=30) as lease:
                inside += 1
                overlaps += inside > 1
                tokens.append(lease.token)
                assert lease.owner & baton.owners.TASK_BIT
                await asyncio.sleep(0.01)
                inside -= 1

    async def main():
        stop = asyncio.Event()
        tick = asyncio.create_task(ticker(stop))
        start = time.monotonic()
        await asyncio.gather(*(task(i) for i in range(6)))
        stop.set()
        await tick
        return time.monotonic() - start

    took = asyncio.run(main())
    assert overlaps == 0
    assert len(tokens) == 30 and tokens == sorted(set(tokens))
    # 30 holds of >= 10 ms each, one at a time: the loop ticked throughout.
    assert ticks >= took / 0.005 * 0.3
    assert not client.holder(name).held


def test_await_and_arelease(client, unique):
    name = unique()

    async def main():
        lease = await client.lock(name, wait=5)
        assert lease.state == LeaseState.LIVE
        assert client.holder(name).owner == lease.owner
        await lease.arelease()
        return lease

    lease = asyncio.run(main())
    assert lease.state == LeaseState.RELEASED
    assert not client.holder(name).held


def test_reentrant_within_a_task_not_across_tasks(client, unique):
    name = unique()

    async def other_task():
        with pytest.raises(baton.BusyError):
            await client.lock(name, wait=0)

    async def main():
        async with client.lock(name) as outer:
            async with client.lock(name, wait=0) as inner:
                assert inner.token == outer.token
            await asyncio.create_task(other_task())

    asyncio.run(main())
    assert not client.holder(name).held


def test_cancelled_waiter_holds_nothing(client, unique):
    name = unique()

    async def main():
        holder = await client.lock(name)
        waiter = asyncio.create_task(client.lock(name, wait=10).acquire_async())
        await asyncio.sleep(0.3)
        assert client.holder(name).waiters == 1
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        await holder.arelease()  # the cancelled wait is granted now...

    asyncio.run(main())
    from conftest import wait_for

    # ...and given back at once, so the lock ends free.
    assert wait_for(lambda: not client.holder(name).held, 5.0)


def test_wait_lost_reports_the_end(client, unique):
    name = unique()

    async def main():
        lease = await client.lock(name)
        waiting = asyncio.create_task(lease.wait_lost())
        await asyncio.sleep(0.05)
        assert not waiting.done()
        await lease.arelease()
        return await asyncio.wait_for(waiting, 5)

    assert asyncio.run(main()) == LeaseState.RELEASED


def test_async_client_context(cluster, unique):
    name = unique()

    async def main():
        async with baton.Client() as c:
            async with c.lock(name) as lease:
                assert lease.held
        return c, lease

    c, lease = asyncio.run(main())
    assert c.closed and lease.state == LeaseState.RELEASED
