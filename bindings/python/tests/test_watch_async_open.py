"""`watch_async()` and `observe_async()` watch from when they are
awaited: `w = await client.watch_async(name)` returns once the watch is
open on the cluster, so a grant made right after it is its first event,
as with the sync `watch()`, which returns watching. The open starts at the
call (on a daemon thread), and `async with` waits for it too."""

from __future__ import annotations

import asyncio

import baton

from conftest import wait_for

G = baton.EventKind.GRANTED


def test_awaited_watch_async_sees_what_follows(client, unique):
    name = unique()

    async def main():
        watch = await client.watch_async(name)
        assert watch.watch is not None  # open
        # Right after: blocking the loop on purpose, so that nothing of
        # the watch's can run in between.
        with client.lock(name) as lease:
            pass
        first = await watch.next(5.0)
        await watch.aclose()
        return lease, first

    lease, first = asyncio.run(main())
    assert first is not None, "the grant made right after the await was missed"
    assert (first.kind, first.token) == (G, lease.token)


def test_watch_async_opens_at_the_call(client, unique):
    name = unique()

    async def main():
        watch = client.watch_async(name)  # not awaited, not used
        opened = await asyncio.to_thread(
            wait_for, lambda: watch.watch is not None, 10.0
        )
        if opened:
            with client.lock(name) as lease:
                pass
            first = await watch.next(5.0)
        else:
            lease = first = None
        await watch.aclose()
        return opened, lease, first

    opened, lease, first = asyncio.run(main())
    assert opened, "watch_async() did not start opening until its first use"
    assert first is not None and (first.kind, first.token) == (G, lease.token)


def test_awaited_observe_async_sees_what_follows(client, unique):
    name = unique()

    async def main():
        observer = await client.observe_async(name)
        assert await observer.next(0.3) is None  # no one leads
        with client.campaign(name, "v1") as lead:
            change = await observer.next(5.0)
        await observer.aclose()
        return lead, change

    lead, change = asyncio.run(main())
    assert change is not None and (change.token, change.value) == (lead.token, "v1")
