"""Watches and observers against the live cluster: events in log order
with increasing positions, prefixes, resuming from a position, closing from
another thread or with the Client, observe()'s leaderships, the asyncio
forms, and how a watch that ends raises."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import baton
from baton import Cause, EventKind, Mode

from conftest import wait_for

G, R = EventKind.GRANTED, EventKind.RELEASED


def cycles(client, name, n):
    """Take and release `name` n times; the tokens."""
    tokens = []
    for _ in range(n):
        with client.lock(name) as lease:
            tokens.append(lease.token)
    return tokens


def test_watch_sees_grants_and_releases_in_order(client, unique):
    name = unique()
    with client.watch(name) as watch:
        assert watch.position is None and not watch.prefix and watch.name == name
        tokens = cycles(client, name, 3)
        events = [watch.next(5.0) for _ in range(6)]
        start = time.monotonic()
        assert watch.next(0.3) is None  # nothing more, after the timeout
        assert 0.25 <= time.monotonic() - start < 2.0
        assert watch.position == events[-1].position
    assert watch.closed
    with pytest.raises(ValueError):
        watch.next()
    assert [(e.kind, e.cause) for e in events] == [
        (G, Cause.ACQUIRE),
        (R, Cause.RELEASE),
    ] * 3
    assert [e.token for e in events] == [t for t in tokens for _ in (1, 2)]
    assert events[0].index == tokens[0]  # a grant's token is its entry's index
    for e in events:
        assert (e.name, e.session, e.mode, e.value, e.permits) == (
            name,
            client.session_id,
            Mode.EXCLUSIVE,
            "",
            0,
        )
        assert e.owner == baton.owners.thread_owner()
    positions = [e.position for e in events]
    assert positions == sorted(positions) and len(set(positions)) == 6
    assert all(isinstance(p, baton.Position) and p.ord >= 1 for p in positions)


def test_resume_from_a_position_gives_exactly_the_later_events(client, unique):
    name = unique()
    with client.watch(name) as watch:
        cycles(client, name, 3)
        events = [watch.next(5.0) for _ in range(6)]
    with client.watch(name, from_position=events[1].position) as again:
        assert again.position == events[1].position
        later = [again.next(5.0) for _ in range(4)]
        assert again.next(0.3) is None
    assert later == events[2:]
    # A plain (index, ord) tuple does as well.
    with client.watch(name, from_position=tuple(events[4].position)) as again:
        assert again.next(5.0) == events[5]
        assert again.next(0.3) is None
    with pytest.raises(ValueError):
        client.watch(name, from_position=(-1, 0))
    with pytest.raises(TypeError):
        client.watch(name, from_position=("1", 0))  # type: ignore[arg-type]


def test_prefix_watch(client, unique):
    prefix = unique() + "/"
    a, b, s = prefix + "a", prefix + "b", prefix + "sem"
    with client.watch(prefix, prefix=True) as watch, client.watch(a) as only_a:
        assert watch.prefix
        with client.lock(a), client.lock(b), client.lock(unique("elsewhere")):
            pass
        with client.semaphore(s, limit=3, permits=2):
            pass
        events = [watch.next(5.0) for _ in range(6)]
        assert watch.next(0.3) is None
        of_a = [only_a.next(5.0) for _ in range(2)]
        assert only_a.next(0.3) is None
    assert [(e.kind, e.name) for e in events] == [
        (G, a),
        (G, b),
        (R, b),
        (R, a),
        (G, s),
        (R, s),
    ]
    assert (events[4].mode, events[4].permits) == (Mode.PERMITS, 2)
    assert of_a == [events[0], events[3]]
    with pytest.raises(baton.InvalidNameError):
        client.watch("")  # "" is a prefix only
    with client.watch("", prefix=True):  # every name
        pass


def test_iterating_until_closed_from_another_thread(client, unique):
    name = unique()
    watch = client.watch(name)
    seen = []
    t = threading.Thread(target=lambda: seen.extend(watch))
    t.start()
    cycles(client, name, 2)
    assert wait_for(lambda: len(seen) == 4, 5.0)
    start = time.monotonic()
    watch.close()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - start < 1.0
    assert [e.kind for e in seen] == [G, R, G, R]
    watch.close()  # twice is harmless


def test_client_close_closes_its_watches(cluster, unique):
    c = baton.Client()
    watch = c.watch(unique())
    seen = []
    t = threading.Thread(target=lambda: seen.extend(watch))
    t.start()
    time.sleep(0.1)
    c.close()
    t.join(5)
    assert not t.is_alive() and watch.closed and seen == []
    with pytest.raises(ValueError):
        c.watch(unique())


def test_watch_needs_no_session(client, unique):
    name = unique()
    with baton.Client() as fresh, fresh.watch(name) as watch:
        cycles(client, name, 1)
        assert watch.next(5.0).kind == G
        assert fresh.session_id == 0  # watching opened none


def test_observe_yields_the_leader_then_each_new_one(client, unique):
    name = unique()
    with baton.Client() as a, baton.Client() as b:
        lead = a.campaign(name, "a1").acquire()
        with client.observe(name) as observer:
            first = observer.next(5.0)
            assert (first.token, first.session, first.owner, first.value) == (
                lead.token,
                lead.session,
                lead.owner,
                "a1",
            )
            assert first.position is None and first.name == name  # read, not an event
            lead.proclaim("a2")
            second = observer.next(5.0)
            assert (second.token, second.value) == (lead.token, "a2")
            assert second.position is not None
            lead.proclaim("a2")  # the same token and value: nothing new
            assert observer.next(0.5) is None
            got = []
            t = threading.Thread(
                target=lambda: got.append(b.campaign(name, "b", wait=30).acquire())
            )
            t.start()
            assert wait_for(lambda: client.leader(name).candidates == 1, 5.0)
            lead.resign()
            t.join(10)
            third = observer.next(5.0)
            assert (third.token, third.session, third.value) == (
                got[0].token,
                b.session_id,
                "b",
            )
            assert third.token > lead.token and third.position > second.position
            got[0].resign()
            assert observer.next(0.5) is None  # no one leads: nothing to say
            with a.campaign(name, "a3") as again:
                fourth = observer.next(5.0)
                assert (fourth.token, fourth.value) == (again.token, "a3")
    assert observer.closed


def test_observe_starts_with_no_leader_and_iterates(client, unique):
    name = unique()
    observer = client.observe(name)
    seen = []

    def run():
        for change in observer:
            seen.append(change)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    assert seen == []
    with client.campaign(name, "v") as lead:
        assert wait_for(lambda: len(seen) == 1, 5.0)
    observer.close()
    t.join(5)
    assert not t.is_alive()
    assert [(c.token, c.value) for c in seen] == [(lead.token, "v")]


def test_observe_after_a_compaction_reads_the_leader_again(client, unique):
    """A watch whose events are gone ends with CompactedError (forced here:
    the cluster's would need a reconnect past 64 events); the observer opens
    a new one from now and reads who leads, so the change made in the gap
    comes next."""
    name = unique()
    with client.campaign(name, "before") as lead, client.observe(name) as observer:
        assert observer.next(5.0).value == "before"
        old = observer._watch

        def compacted(timeout):
            raise baton.CompactedError()

        old._take = compacted
        lead.proclaim("during the gap")
        change = observer.next(5.0)
        assert (change.token, change.value, change.position) == (
            lead.token,
            "during the gap",
            None,
        )
        assert old.closed and observer._watch is not old
        lead.proclaim("after")
        assert observer.next(5.0).value == "after"


def test_callback_watch(client, unique):
    name = unique()
    got = []
    refused = []
    threads = set()

    def on_event(event):
        got.append(event)
        threads.add(threading.get_ident())
        try:
            client.holder(name)  # as in on_lock_lost: not from here
        except RuntimeError:
            refused.append(event)

    with client.watch(name) as plain:
        watch = client.watch_callback(name, on_event)
        tokens = cycles(client, name, 2)
        events = [plain.next(5.0) for _ in range(4)]
    assert wait_for(lambda: len(got) == 4, 5.0)
    assert got == events and watch.position == events[-1].position
    assert [e.token for e in got] == [t for t in tokens for _ in (1, 2)]
    assert threading.get_ident() not in threads  # libbaton's thread
    assert refused == got and watch.ended is None and not watch.closed
    watch.close()
    assert watch.closed and watch.wait(0) is None
    cycles(client, name, 1)
    time.sleep(0.3)
    assert len(got) == 4  # none after close()
    watch.close()  # twice is harmless


def test_callback_watch_closes_itself_and_with_its_client(cluster, unique):
    name = unique()
    with baton.Client() as c:
        got = []

        def first_only(event):
            got.append(event)
            watch.close()  # from inside its own callback

        watch = c.watch_callback(name, first_only)
        cycles(c, name, 2)
        assert wait_for(lambda: watch.closed, 5.0)
        time.sleep(0.3)
        assert [e.kind for e in got] == [G]
        later = []
        resumed = c.watch_callback(name, later.append, from_position=got[0].position)
        assert wait_for(lambda: len(later) == 3, 5.0)  # exactly the ones after
        assert [e.kind for e in later] == [R, G, R]
        assert min(e.position for e in later) > got[0].position
    assert resumed.closed and resumed.wait(1.0) is None  # the Client closed it


def test_callback_watch_end(client, unique):
    """How the end reaches on_end (the end code given to the callback by
    hand: a real one needs a cluster that cuts the watch off)."""
    ends = []
    watch = client.watch_callback(unique(), lambda e: None, on_end=ends.append)
    watch._deliver(None, None, baton.CompactedError.code)
    assert [type(e) for e in ends] == [baton.CompactedError]
    assert isinstance(watch.wait(0), baton.CompactedError)
    watch.close()


class EndingLib:
    """libbaton with a baton_watch_next() that answers `code`."""

    def __init__(self, lib, code):
        self._lib, self._code = lib, code

    def baton_watch_next(self, w, ev, wait_ms):
        return self._code

    def __getattr__(self, name):
        return getattr(self._lib, name)


@pytest.mark.parametrize(
    "cls", [baton.CompactedError, baton.SlowError, baton.TooManyWatchesError]
)
def test_a_watch_ending_raises_from_iteration(client, unique, cls):
    """The mapping of baton_watch_next()'s end codes, each returned by a
    stand-in for the library's baton_watch_next(); test_failures.py provokes
    BATON_ECOMPACTED and BATON_ETOOMANYWATCHES from the cluster itself, at
    baton_watch_open()."""
    with client.watch(unique()) as watch:
        watch._lib = EndingLib(watch._lib, cls.code)
        with pytest.raises(cls) as e:
            next(iter(watch))
        assert e.value.code == cls.code
        assert isinstance(
            e.value,
            baton.LimitError if cls is baton.TooManyWatchesError else baton.WatchEnded,
        )


def test_async_watch(client, unique):
    name = unique()
    ticks = 0

    async def ticker(stop):
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0.005)

    async def produce():
        for _ in range(3):
            async with client.lock(name):
                await asyncio.sleep(0.01)

    async def main():
        stop = asyncio.Event()
        tick = asyncio.create_task(ticker(stop))
        events = []
        async with client.watch_async(name) as watch:
            producer = asyncio.create_task(produce())
            async for event in watch:
                events.append(event)
                if len(events) == 6:
                    break
            await producer
            assert await watch.next(0.2) is None
            # A wait cancelled midway loses nothing: its event comes next.
            waiting = asyncio.create_task(watch.next())
            await asyncio.sleep(0.1)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            async with client.lock(name) as lease:
                pass
            late = await watch.next(5.0)
            assert (late.kind, late.token) == (G, lease.token)
            assert watch.position == late.position
        stop.set()
        await tick
        assert watch.closed and watch.watch.closed
        return events

    start = time.monotonic()
    events = asyncio.run(main())
    took = time.monotonic() - start
    assert [e.kind for e in events] == [G, R] * 3
    assert ticks >= took / 0.005 * 0.2  # the loop ran while the waits blocked


def test_async_watch_resume_and_plain_async_for(client, unique):
    name = unique()
    with client.watch(name) as watch:
        cycles(client, name, 2)
        events = [watch.next(5.0) for _ in range(4)]

    async def main():
        got = []
        resumed = client.watch_async(name, from_position=events[0].position)
        assert resumed.position == events[0].position
        async for event in resumed:  # opened by the first step
            got.append(event)
            if len(got) == 3:
                break
        await resumed.aclose()
        return got

    assert asyncio.run(main()) == events[1:]


def test_async_observe(client, unique):
    name = unique()

    async def main():
        async with client.observe_async(name) as observer:
            assert await observer.next(0.3) is None  # no one leads
            lead = await client.campaign(name, "v1")
            first = await observer.next(5.0)
            await lead.aproclaim("v2")
            second = None
            async for change in observer:
                second = change
                break
            await lead.aresign()
        return lead, first, second

    lead, first, second = asyncio.run(main())
    assert (first.token, first.value) == (lead.token, "v1")
    assert (second.token, second.value) == (lead.token, "v2")
