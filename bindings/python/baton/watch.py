"""Watches (libbaton's baton_watch_*()): every change of a lock name, or of
every name with a prefix, in the order of the cluster's log; and observers,
the leaderships of an election, built on a watch.

libbaton lets one thread at a time call baton_watch_next() on a watch, and
baton_watch_close() frees it, so each Watch serializes its calls with a
lock of its own and waits for events in slices of at most 0.2 s. Between
two slices it looks whether it was closed (by close() from another thread,
or by its Client's close(), which closes every watch of the client before
freeing the handle) and lets the main thread's Ctrl-C through.

The async forms run the same blocking waits on the binding's daemon
threads (baton._workers), so the event loop never blocks; an event taken
by a wait whose task was cancelled is kept for the next one.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
import warnings
from collections import deque
from concurrent.futures import Future
from ctypes import byref
from types import TracebackType
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Deque,
    Generator,
    Generic,
    Optional,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from . import _callbacks, _structs, _workers
from .errors import (
    CompactedError,
    Error,
    SlowError,
    TimedOutError,
    error_for,
    failure,
)
from .records import (
    Cause,
    Event,
    EventKind,
    LeaderChange,
    Mode,
    Position,
    open_enum,
)

if TYPE_CHECKING:
    from .client import Client

T = TypeVar("T")

# The longest one baton_watch_next() call waits: how soon a close() from
# another thread, or Ctrl-C on the main thread, takes effect.
_SLICE_S = 0.2


class _Closed:
    """What a wait returns when its watch was closed."""

    def __repr__(self) -> str:
        return "<closed>"


CLOSED = _Closed()


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _event(ev: _structs.Event) -> Event:
    return Event(
        kind=open_enum(EventKind, ev.kind),
        cause=open_enum(Cause, ev.cause),
        index=ev.index,
        ord=ev.ord,
        session=ev.session,
        owner=ev.owner,
        token=ev.token,
        mode=open_enum(Mode, ev.mode),
        permits=ev.permits,
        name=_decode(ev.name),
        value=_decode(ev.value),
    )


def _refuse_in_callback() -> None:
    if _callbacks.in_callback():
        raise RuntimeError(
            "a baton callback must not use a watch of its Client (libbaton "
            "runs callbacks on the thread that serves the handle)"
        )


class Watch:
    """The changes of a lock name (or of every name with a prefix), in the
    order of the cluster's log, from Client.watch().

    Iterate over it (`for event in watch:`) to take each Event as it comes;
    the iteration ends when the watch is closed (close(), the `with` block's
    end, or its Client's close()). next(timeout) takes one event, or None
    when none came in time. When the watch ends on the cluster's side, the
    iteration raises why, after every event before it: CompactedError (the
    events to resume from are no longer kept: read the state again and
    watch from now), SlowError (it fell too far behind and was cut off:
    watch again from `position`), TooManyWatchesError (the node it resumed
    on had no room for it).

    Iterate on one thread at a time (libbaton's rule); close() may come
    from any thread. Events are taken on the calling thread, not on
    libbaton's.
    """

    def __init__(
        self,
        client: "Client",
        raw: int,
        encoded: bytes,
        prefix: bool,
        position: Optional[Position],
    ) -> None:
        self._client = client
        self._lib = client._lib
        self._raw: Optional[int] = raw
        self._calls = threading.Lock()  # one libbaton call at a time
        self._closing = False
        self._encoded = encoded
        self._buf = _structs.Event()
        #: Whether `name` is a prefix (every name that begins with it).
        self.prefix = prefix
        #: The position of the last event taken: the watch has seen every
        #: event up to it; pass it as `from_position` to go on after it.
        #: Where it started when no event was taken yet (None: from now).
        self.position = position

    @property
    def name(self) -> str:
        """The lock name watched, or the prefix."""
        return _decode(self._encoded)

    @property
    def closed(self) -> bool:
        """Whether close() has begun (or the Client closed it)."""
        return self._closing

    def __repr__(self) -> str:
        what = "prefix" if self.prefix else "name"
        state = "closed" if self._closing else f"at {tuple(self.position or (0, 0))}"
        return f"<baton.Watch {what} {self.name!r} {state}>"

    # --- Taking events ----------------------------------------------------

    def next(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event, waiting at most `timeout` seconds (None: until
        one comes); None when none came in time, or when the watch was
        closed meanwhile (see `closed`). ValueError on a closed watch;
        CompactedError, SlowError, ... when the watch ended."""
        if self._closing:
            raise ValueError("operation on a closed baton.Watch")
        item = self._take(timeout)
        return item if isinstance(item, Event) else None

    def __iter__(self) -> "Watch":
        return self

    def __next__(self) -> Event:
        item = self._take(None)
        if isinstance(item, Event):
            return item
        raise StopIteration

    def _take(self, timeout: Optional[float]) -> Union[Event, None, _Closed]:
        """The next event, None when `timeout` ran out, CLOSED when the
        watch was closed."""
        _refuse_in_callback()
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            if self._closing:
                return CLOSED
            wait = _SLICE_S
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - time.monotonic()))
            with self._calls:
                raw = self._raw
                if raw is None or self._closing:
                    return CLOSED
                rv = self._lib.baton_watch_next(
                    raw, byref(self._buf), math.ceil(wait * 1000)
                )
                if rv == 0:
                    event = _event(self._buf)
                    self.position = event.position
                    return event
                if rv != TimedOutError.code:
                    # The detail is this thread's, of this call: read it
                    # now.
                    raise failure(rv, f"watch {self.name!r}")
            if deadline is not None and time.monotonic() >= deadline:
                return None

    # --- Closing ----------------------------------------------------------

    def close(self) -> None:
        """Stop the watch and free it (baton_watch_close()), with the events
        not taken. A wait on another thread returns within 0.2 s (its
        iteration ends). Closing twice is harmless."""
        _refuse_in_callback()
        self._close()

    def _close(self) -> None:
        self._closing = True
        with self._calls:
            raw, self._raw = self._raw, None
            if raw is not None:
                self._lib.baton_watch_close(raw)
        if raw is not None:
            self._client._forget_watch(self)

    def __enter__(self) -> "Watch":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_raw", None) is None or getattr(self, "_closing", True):
            return
        warnings.warn(f"unclosed {self!r}", ResourceWarning, source=self)
        if _callbacks.in_callback():
            threading.Thread(target=self._close, daemon=True).start()
        else:
            self._close()


EventCallback = Callable[[Event], None]
EndCallback = Callable[[Error], None]


def _keep(obj: object) -> None:
    """Nothing: a Timer's target that holds `obj` until it runs."""


class CallbackWatch:
    """A watch whose events come to a callback (baton_watch_open_cb()),
    from Client.watch_callback(): on_event(event) for each event, in
    order, then, if the watch ends on the cluster's side, on_end(error)
    once (CompactedError, SlowError, TooManyWatchesError...). Both run on
    libbaton's background thread, one at a time, like the Client's
    on_lock_lost: they should return quickly (the connection's traffic
    waits for them), must not call into the Client (RuntimeError), and may
    close() this watch. An exception they raise goes to
    sys.unraisablehook.

    `position` is the last event's; `ended` the error the watch ended
    with (None while it runs); wait() blocks until it ends or is closed.
    Open until close(), the `with` block's end, or the Client's close():
    the Client keeps it meanwhile, so it need not be kept by the caller.
    """

    def __init__(
        self,
        client: "Client",
        encoded: bytes,
        prefix: bool,
        position: Optional[Position],
        on_event: EventCallback,
        on_end: Optional[EndCallback],
    ) -> None:
        self._client = client
        self._lib = client._lib
        self._raw: Optional[int] = None
        self._lock = threading.Lock()
        self._closing = False
        self._encoded = encoded
        self._on_event = on_event
        self._on_end = on_end
        self._done = threading.Event()
        #: Whether `name` is a prefix.
        self.prefix = prefix
        #: The position of the last event delivered (see Watch.position).
        self.position = position
        #: Why the watch ended (a baton.Error), None while it runs.
        self.ended: Optional[Error] = None
        # ctypes frees the trampoline with this object, which lives as long
        # as the watch (the Client keeps it until it is closed).
        self._c_cb = _structs.WATCH_CB(self._deliver)

    @property
    def name(self) -> str:
        """The lock name watched, or the prefix."""
        return _decode(self._encoded)

    @property
    def closed(self) -> bool:
        return self._closing

    def __repr__(self) -> str:
        what = "prefix" if self.prefix else "name"
        state = (
            "closed"
            if self._closing
            else f"ended: {self.ended.name}"
            if self.ended is not None
            else f"at {tuple(self.position or (0, 0))}"
        )
        return f"<baton.CallbackWatch {what} {self.name!r} {state}>"

    def _deliver(self, _data: object, ev: Any, status: int) -> None:
        """libbaton's callback, on its thread."""
        _callbacks.enter_callback()
        try:
            if ev:
                event = _event(ev.contents)
                self.position = event.position
                self._on_event(event)
            else:
                error = error_for(status, f"watch {self.name!r}")
                self.ended = error
                self._done.set()
                if self._on_end is not None:
                    self._on_end(error)
        except BaseException as e:  # never into libbaton's thread
            _callbacks.report(e, "watch")
        finally:
            _callbacks.leave_callback()

    def _opened(self, raw: int) -> None:
        with self._lock:
            self._raw = raw
        if self._closing:  # closed from its callback before this
            self._close()

    def wait(self, timeout: Optional[float] = None) -> Optional[Error]:
        """Block until the watch ends or is closed, at most `timeout`
        seconds; the error it ended with, or None."""
        self._done.wait(timeout)
        return self.ended

    def close(self) -> None:
        """Stop the watch (baton_watch_close()): no callback runs after
        close() returns (from another thread it waits for a running one).
        From inside its own callback, libbaton frees it when the callback
        returns. Closing twice is harmless."""
        self._close()

    def _close(self) -> None:
        self._closing = True
        with self._lock:
            raw, self._raw = self._raw, None
        if raw is not None:
            self._lib.baton_watch_close(raw)
            self._client._forget_watch(self)
            if _callbacks.in_callback():
                # Maybe from inside our own callback, which libbaton is
                # still running: keep the trampoline a while past it.
                timer = threading.Timer(1.0, _keep, args=(self,))
                timer.daemon = True
                timer.start()
        self._done.set()

    def __enter__(self) -> "CallbackWatch":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


class Observer:
    """The leaderships of an election, from Client.observe(): who leads now
    first, then each new leader and each new value a leader proclaims, as
    LeaderChange records, each (token, value) once.

    It watches the election from now BEFORE reading who leads, so that no
    leadership begun in between is missed (one begun in between may be
    read and then seen as an event: it is not repeated). A watch that
    falls behind (SlowError) is resumed from its last event; one whose
    events are no longer kept (CompactedError) is opened again from now,
    and who leads is read again: the leadership of that moment comes next
    unless it is the one seen last, so a gap is never silent. When no one
    leads, nothing comes until someone does.

    Iterate over it, or call next(timeout); close() (or the `with` block's
    end, or the Client's close()) ends the iteration. One thread at a time
    iterates.
    """

    def __init__(self, client: "Client", encoded: bytes) -> None:
        self._client = client
        self._encoded = encoded
        self._lock = threading.Lock()  # _watch and _closing
        self._watch: Optional[Watch] = None
        self._ready: Deque[LeaderChange] = deque()
        self._last: Optional[Tuple[int, str]] = None  # (token, value) given last
        self._resume: Optional[Position] = None  # after a SlowError
        self._closing = False

    @property
    def name(self) -> str:
        """The election observed."""
        return _decode(self._encoded)

    @property
    def closed(self) -> bool:
        return self._closing

    def __repr__(self) -> str:
        state = "closed" if self._closing else "open"
        return f"<baton.Observer {self.name!r} {state}>"

    def next(self, timeout: Optional[float] = None) -> Optional[LeaderChange]:
        """The next leadership, waiting at most `timeout` seconds (None:
        until one comes); None when none came in time or the observer was
        closed meanwhile. ValueError on a closed observer."""
        if self._closing:
            raise ValueError("operation on a closed baton.Observer")
        item = self._take(timeout)
        return item if isinstance(item, LeaderChange) else None

    def __iter__(self) -> "Observer":
        return self

    def __next__(self) -> LeaderChange:
        item = self._take(None)
        if isinstance(item, LeaderChange):
            return item
        raise StopIteration

    def _take(self, timeout: Optional[float]) -> Union[LeaderChange, None, _Closed]:
        _refuse_in_callback()
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        while True:
            if self._closing:
                return CLOSED
            if self._ready:
                return self._ready.popleft()
            watch = self._watch
            if watch is None:
                self._start()
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                item = watch._take(left)
            except SlowError:
                # Cut off: go on from the last event seen (from now, and
                # read the leader again, when there was none).
                self._resume = watch.position
                self._drop(watch)
                continue
            except CompactedError:
                self._resume = None
                self._drop(watch)
                continue
            if item is None:
                return None
            if isinstance(item, _Closed):
                if not self._closing:  # the Client closed it
                    self.close()
                return CLOSED
            if item.mode == Mode.LEADER and item.kind != EventKind.RELEASED:
                self._offer(
                    LeaderChange(
                        name=item.name,
                        token=item.token,
                        session=item.session,
                        owner=item.owner,
                        value=item.value,
                        position=item.position,
                    )
                )
            elif deadline is not None and time.monotonic() >= deadline:
                return None

    def _start(self) -> None:
        """Open the watch (from now, or after the last event before a
        SlowError) and, from now, read who leads."""
        position = self._resume
        try:
            watch = self._client.watch(self._encoded, from_position=position)
        except CompactedError:
            if position is None:
                raise
            self._resume = None  # what came after it is gone: from now
            return
        with self._lock:
            if self._closing:
                closed = True
            else:
                closed = False
                self._watch = watch
        if closed:
            watch.close()
            return
        self._resume = None
        if position is not None:
            return
        try:
            leader = self._client.leader(self._encoded)
        except BaseException:
            self._drop(watch)  # the next call starts again, leader read included
            raise
        if leader.held:
            self._offer(
                LeaderChange(
                    name=self.name,
                    token=leader.token,
                    session=leader.session,
                    owner=leader.owner,
                    value=leader.value,
                )
            )

    def _offer(self, change: LeaderChange) -> None:
        last = self._last
        if last is not None and (
            change.token < last[0] or (change.token, change.value) == last
        ):
            return  # seen already, or older than what was seen
        self._last = (change.token, change.value)
        self._ready.append(change)

    def _drop(self, watch: Watch) -> None:
        with self._lock:
            if self._watch is watch:
                self._watch = None
        watch.close()

    def close(self) -> None:
        """Stop observing (closes the watch). Closing twice is harmless."""
        _refuse_in_callback()
        with self._lock:
            self._closing = True
            watch, self._watch = self._watch, None
        if watch is not None:
            watch.close()

    def __enter__(self) -> "Observer":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


Source = Union[Watch, Observer]
S = TypeVar("S", Watch, Observer)


class _AsyncSource(Generic[S, T]):
    """An async iterator over a Watch or an Observer, opened and waited on
    by the binding's daemon threads.

    The open starts when the object is made, on a daemon thread, and
    `await`ing the object (or entering `async with` it) waits until it is
    done: from then on every event is delivered. A watch from now watches
    from when its open reaches the cluster, so events between the call and
    that moment are not its events: await it before acting."""

    def __init__(self, opener: Callable[[], S]) -> None:
        self._opener: Callable[[], S] = opener
        self._source: Optional[S] = None
        self._pending: "Optional[Future[Union[T, None, _Closed]]]" = None
        self._closing = False
        self._opening: "Optional[Future[S]]" = _workers.pool().submit(opener)

    @property
    def closed(self) -> bool:
        return self._closing

    def _settled(self) -> Optional[S]:
        """The source, once its open has finished well (whether or not
        anyone awaited it yet); None before."""
        fut = self._opening
        if (
            self._source is None
            and fut is not None
            and fut.done()
            and not fut.cancelled()
            and fut.exception() is None
        ):
            self._source = fut.result()
            self._opening = None
        return self._source

    async def _open(self) -> S:
        if self._source is not None:
            return self._source
        if self._closing:
            raise ValueError(f"operation on a closed {type(self).__name__}")
        fut = self._opening
        if fut is None or fut.cancelled():
            fut = self._opening = _workers.pool().submit(self._opener)
        source = await asyncio.wrap_future(fut)
        if self._source is None:
            self._source = source
            self._opening = None
        return self._source

    async def _get(self, timeout: Optional[float]) -> Union[T, None, _Closed]:
        source = await self._open()
        fut = self._pending
        if fut is None or fut.cancelled():
            # Waits until an item comes or the source is closed; a caller
            # that stops waiting leaves it for the next call.
            take: Callable[[Optional[float]], Union[T, None, _Closed]]
            take = source._take  # type: ignore[assignment]
            fut = self._pending = _workers.pool().submit(take, None)
        waiter = asyncio.wrap_future(fut)
        try:
            done, _ = await asyncio.wait({waiter}, timeout=timeout)
        except BaseException:
            waiter.cancel()  # fut runs on; its item is taken next time
            raise
        if not done:
            waiter.cancel()
            return None
        if self._pending is fut:
            self._pending = None
        return waiter.result()

    async def next(self, timeout: Optional[float] = None) -> Optional[T]:
        """The next item, waiting at most `timeout` seconds (None: until
        one comes); None when none came in time or it was closed."""
        item = await self._get(timeout)
        return None if item is None or isinstance(item, _Closed) else item

    def __aiter__(self) -> "_AsyncSource[S, T]":
        return self

    async def __anext__(self) -> T:
        item = await self._get(None)
        if item is None or isinstance(item, _Closed):
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        """Close it, blocking (at most about 0.2 s); see aclose()."""
        self._closing = True
        source = self._source
        if source is not None:
            source.close()
        elif self._opening is not None:
            self._opening.add_done_callback(_close_opened)

    async def aclose(self) -> None:
        """Close it without blocking the event loop: the iteration ends."""
        await asyncio.wrap_future(_workers.pool().submit(self.close))

    async def __aenter__(self) -> "_AsyncSource[S, T]":
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.aclose()


def _close_opened(fut: "Future[Any]") -> None:
    """An async watch was closed while it was being opened: close what the
    opening gave."""
    if fut.cancelled() or fut.exception() is not None:
        return
    fut.result().close()


class AsyncWatch(_AsyncSource[Watch, Event]):
    """Client.watch_async(): a Watch for asyncio. `w = await
    client.watch_async(name)` returns once it is watching (`async with
    client.watch_async(name) as w:` too, and closes it on exit); then
    `async for event in w:`, `await w.next(timeout)`, `await w.aclose()`.
    The open starts at the call, on a daemon thread, and each event is
    waited for on one; the event loop never blocks. The open's errors and
    the iteration's (CompactedError, SlowError...) are raised where the
    watch is awaited or used, as a Watch's."""

    def __init__(
        self, opener: Callable[[], Watch], position: Optional[Position]
    ) -> None:
        super().__init__(opener)
        self._from = position

    @property
    def position(self) -> Optional[Position]:
        """The position of the last event taken (see Watch.position)."""
        source = self._settled()
        return source.position if source is not None else self._from

    @property
    def watch(self) -> Optional[Watch]:
        """The Watch underneath, once open (None while it opens)."""
        return self._settled()

    def __aiter__(self) -> "AsyncWatch":
        return self

    def __await__(self) -> Generator[Any, None, "AsyncWatch"]:
        return self._opened_watch().__await__()

    async def _opened_watch(self) -> "AsyncWatch":
        await self._open()
        return self

    async def __aenter__(self) -> "AsyncWatch":
        await self._open()
        return self


class AsyncObserver(_AsyncSource[Observer, LeaderChange]):
    """Client.observe_async(): an Observer for asyncio. `o = await
    client.observe_async(name)` returns once it is watching (as `async
    with` does); `async for change in o:`, `await o.next(timeout)`, `await
    o.aclose()`; blocking work runs on daemon threads, and the start
    begins at the call."""

    def __aiter__(self) -> "AsyncObserver":
        return self

    def __await__(self) -> Generator[Any, None, "AsyncObserver"]:
        return self._opened_observer().__await__()

    async def _opened_observer(self) -> "AsyncObserver":
        await self._open()
        return self

    async def __aenter__(self) -> "AsyncObserver":
        await self._open()
        return self
