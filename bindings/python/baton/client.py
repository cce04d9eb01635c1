"""Client: one handle of libbaton, its session, and the calls made through it.

Every method is thread-safe (libbaton's calls are), blocks the calling
thread for at most the client's `timeout` (plus the wait asked for, for an
acquire or a campaign) and raises a baton.Error subclass on failure. Lock
acquisitions come in two forms: `lock()` and its siblings return a
LockRequest, which is a context manager for `with` and `async with` and can
be awaited; `acquire()` and its siblings take the lock at once and return
the Lease. `campaign()` is the same for an election (a CampaignRequest, its
Leadership a Lease). `watch()` and `observe()` return iterators over a
name's events and an election's leaderships.

The module is long because Client is one class whose lock, election and
watch calls share its handle's bookkeeping (the lease tracker, the calls in
flight, closing); the queries, the administration and health checks live in
their own mixins (queries.py, admin.py, health.py).
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import os
import threading
import warnings
import weakref
from ctypes import byref, c_uint64, c_void_p
from types import TracebackType
from typing import (
    Any,
    Callable,
    Iterable,
    List,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
    overload,
)

from . import _callbacks, _library, _structs, _workers, owners
from .admin import Admin
from .config import TLS, Endpoints, endpoints_from, tls_from
from .election import CampaignRequest, Leadership
from .errors import BusyError, check, failure
from .lease import Lease
from .health import Health
from .queries import Queries
from .records import DetachedSession, LeaseState, Mode, Position, SessionState
from .request import (
    U32_MAX,
    LockRequest,
    Name,
    NameSpec,
    Value,
    encode_name,
    encode_value,
    ms,
    release_granted,
    wait_ms,
)
from .watch import (
    AsyncObserver,
    AsyncWatch,
    CallbackWatch,
    EndCallback,
    EventCallback,
    Observer,
    Watch,
)

_EXCLUSIVE = (Mode.EXCLUSIVE,)
_LEADER = (Mode.LEADER,)
_U64 = 1 << 64
_MAIN_THREAD = threading.main_thread().ident


def _main_after_fork() -> None:
    # A child forked from another thread has that thread as its main one.
    global _MAIN_THREAD
    _MAIN_THREAD = threading.main_thread().ident


os.register_at_fork(after_in_child=_main_after_fork)


_open_clients: "weakref.WeakSet[Client]" = weakref.WeakSet()


class Client(Queries, Admin, Health):
    """A connection to a Baton cluster and the session locks are held in.

    Arguments (all optional):

    - endpoints: "host:port,host:port" or a list of them; default the
      environment variable BATON_ENDPOINTS, else the local cluster.
    - ttl: the session TTL in seconds (default 10). The cluster refuses a
      TTL below twice its election timeout (InvalidTTLError).
    - timeout: the deadline of each call, in seconds (default 5); an
      acquire may also wait as long as its `wait`.
    - tls: a baton.TLS (CA, certificate, key); None takes them from
      BATON_CACERT, BATON_CERT and BATON_KEY when set; False asks for plain
      text (ValueError while those variables are set).
    - client_name: the name holder queries show (default host:pid).
    - lock_delay: the session's lock-delay, in seconds (default 0).
    - on_session: fn(SessionState), on every session state change.
    - on_lock_lost: fn(name, token), for each lock (or election
      leadership) lost with its session or revoked.

    Both callbacks run on libbaton's background thread, one at a time, in
    event order; they must not call into this client (RuntimeError) and
    should return quickly (the thread also sends the keepalives).

    `with Client() as c:` closes the session on exit (releasing its locks
    and leaderships, and closing its watches); so does close().
    """

    def __init__(
        self,
        endpoints: Endpoints = None,
        *,
        ttl: float = 10.0,
        timeout: float = 5.0,
        tls: Union[TLS, bool, None] = None,
        client_name: Optional[str] = None,
        lock_delay: float = 0.0,
        on_session: Optional[Callable[[SessionState], None]] = None,
        on_lock_lost: Optional[Callable[[str, int], None]] = None,
    ) -> None:
        self._ptr: Optional[int] = None  # first: __del__ may see a failed init
        lib = _library.load()
        self._lib = lib
        #: The endpoints connected to ("host:port,...").
        self.endpoints = endpoints_from(endpoints)
        #: The TLS files in use (None: plain text).
        self.tls = tls_from(tls)
        self.ttl = ttl
        self.timeout = timeout
        self._tracker = _callbacks.Tracker(on_session, on_lock_lost)
        # ctypes frees a callback's trampoline with its Python object: these
        # live exactly as long as the handle.
        self._c_on_session = _structs.SESSION_CB(self._tracker.on_session)
        self._c_on_lock_lost = _structs.LOCK_LOST_CB(self._tracker.on_lock_lost)
        self._gate = threading.Lock()
        self._inflight = 0
        self._closing = False
        self._drained = threading.Event()
        self._closed = threading.Event()
        # Open watches, closed before the handle is freed (baton.h); the
        # callback ones kept alive here (nobody else need keep them).
        self._watches: "weakref.WeakSet[Union[Watch, CallbackWatch]]" = (
            weakref.WeakSet()
        )
        self._callback_watches: "set[CallbackWatch]" = set()

        buf = ctypes.create_string_buffer(
            ctypes.sizeof(_structs.Options) + _structs.OPTIONS_SLACK
        )
        lib.baton_options_init(buf)
        o = _structs.Options.from_buffer(buf)
        o.ttl_ms = ms(ttl, "ttl")
        o.request_timeout_ms = ms(timeout, "timeout")
        o.lock_delay_ms = ms(lock_delay, "lock_delay", zero_ok=True)
        if client_name is not None:
            o.client_name = client_name.encode("utf-8")
        o.on_session = self._c_on_session
        o.on_lock_lost = self._c_on_lock_lost
        if self.tls is not None:
            o.tls_ca = os.fsencode(self.tls.ca)
            o.tls_cert = os.fsencode(self.tls.cert)
            o.tls_key = os.fsencode(self.tls.key)
        handle = c_void_p()
        rv = lib.baton_client_create(byref(handle), self.endpoints.encode(), buf)
        check(rv, f"connect to {self.endpoints}")
        self._ptr = handle.value
        _open_clients.add(self)

    # --- Lifetime -----------------------------------------------------------

    def close(self) -> None:
        """Close the session (its locks are released and handed to their
        waiters, its leaderships to the next candidates) and free the
        handle. Closes every watch of the client first (their iterations
        end), then waits for calls still running on other threads,
        including acquires that wait for a lock, and then at most `timeout`
        for the close itself. Every Lease still held becomes RELEASED.
        Closing twice is harmless."""
        if _callbacks.in_callback():
            raise RuntimeError("a baton callback must not close its Client")
        self._close()

    def _close(self, drain_timeout: Optional[float] = None) -> bool:
        with self._gate:
            first = not self._closing
            self._closing = True
            if self._inflight == 0:
                self._drained.set()
            watches = list(self._watches) if first else []
            self._callback_watches.clear()
        if not first:
            self._closed.wait()
            return True
        # libbaton: close every watch before destroying its handle. A watch
        # opened from now on is closed by watch() itself (it sees _closing).
        for watch in watches:
            watch._close()
        if not self._drained.wait(drain_timeout):
            return False  # calls still running: the handle must stay
        ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._lib.baton_client_destroy(ptr)
        for lease in self._tracker.take_all():
            lease._finish(LeaseState.RELEASED)
        self._closed.set()
        _open_clients.discard(self)
        return True

    @property
    def closed(self) -> bool:
        """Whether close() has begun."""
        return self._closing

    def __enter__(self) -> "Client":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await asyncio.wrap_future(_workers.pool().submit(self.close))

    def __del__(self) -> None:
        if getattr(self, "_ptr", None) is None or getattr(self, "_closing", True):
            return
        warnings.warn(f"unclosed {self!r}", ResourceWarning, source=self)
        if _callbacks.in_callback():
            # libbaton's own thread cannot destroy its handle (it would
            # wait for itself): another thread does.
            threading.Thread(target=self._close, daemon=True).start()
        else:
            self._close()

    def __repr__(self) -> str:
        state = "closed" if self._closing else f"session {self.session_id}"
        return f"<baton.Client {self.endpoints} {state}>"

    # --- Entering libbaton ----------------------------------------------------

    def _enter(self) -> int:
        """The handle, counted as in use until _exit()."""
        if _callbacks.in_callback():
            raise RuntimeError(
                "a baton callback must not call into its Client (libbaton "
                "runs callbacks on the thread that serves the handle)"
            )
        with self._gate:
            if self._closing or self._ptr is None:
                raise ValueError("operation on a closed baton.Client")
            self._inflight += 1
            return self._ptr

    def _exit(self) -> None:
        with self._gate:
            self._inflight -= 1
            if self._closing and self._inflight == 0:
                self._drained.set()

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        ptr = self._enter()
        try:
            return fn(ptr, *args)
        finally:
            self._exit()

    # --- Locks --------------------------------------------------------------

    def lock(
        self,
        name: Name,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> LockRequest:
        """The exclusive lock `name`, to take with `with`/`async with`/
        `await`. `wait`: seconds to wait in the lock's FIFO queue (None:
        forever, 0: a try that raises BusyError). Reentrant per owner: the
        same owner taking it again gets the same token (each hold released
        on its own). TimedOutError when the wait runs out. `value` (str or
        bytes, at most 255 bytes, no NUL): the grant's value, which
        holders() and watches report while it lasts (Lease.set_value()
        changes it; a reentrant hold keeps the grant's). `hold`: seconds
        the grant may be held at most, from its grant (None: no limit);
        then the cluster ends it as a revoke would (Lease.extend()
        restarts it)."""
        return LockRequest(
            self,
            (encode_name(name),),
            (Mode.EXCLUSIVE,),
            wait_ms(wait),
            owners.check(owner),
            value=_grant_value(value),
            hold_ms=_hold_ms(hold),
        )

    def lock_shared(
        self,
        name: Name,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> LockRequest:
        """The read lock of the read/write lock `name` (shared with other
        readers; baton_acquire_shared()), each reader's grant with its own
        `value` and `hold`. As lock() otherwise."""
        return LockRequest(
            self,
            (encode_name(name),),
            (Mode.SHARED,),
            wait_ms(wait),
            owners.check(owner),
            value=_grant_value(value),
            hold_ms=_hold_ms(hold),
        )

    def semaphore(
        self,
        name: Name,
        limit: int,
        permits: int = 1,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> LockRequest:
        """`permits` of the `limit` permits of the semaphore `name`
        (baton_sem_acquire()). Not reentrant (HeldError); each grant has
        its own token, and its own `value` and `hold` (as lock()'s)."""
        if not 0 < limit <= U32_MAX or not 0 < permits <= U32_MAX:
            raise ValueError("limit and permits must be in 1..2**32-1")
        return LockRequest(
            self,
            (encode_name(name),),
            (Mode.PERMITS,),
            wait_ms(wait),
            owners.check(owner),
            limit,
            permits,
            _grant_value(value),
            _hold_ms(hold),
        )

    def lock_many(
        self,
        names: Iterable[NameSpec],
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
    ) -> LockRequest:
        """Several locks at once or none (baton_multi_acquire()), with one
        token: each name alone (exclusive) or as (name, Mode.SHARED). Waits
        holding none of them, so multi-lockers never deadlock."""
        encoded: List[bytes] = []
        modes: List[Mode] = []
        for spec in names:
            if isinstance(spec, tuple):
                name, mode = spec
                mode = Mode(mode)
            else:
                name, mode = spec, Mode.EXCLUSIVE
            encoded.append(encode_name(name))
            modes.append(mode)
        if not 0 < len(encoded) <= _structs.MULTI_MAX:
            raise ValueError(f"lock_many takes 1..{_structs.MULTI_MAX} names")
        return LockRequest(
            self, tuple(encoded), tuple(modes), wait_ms(wait), owners.check(owner)
        )

    def acquire(
        self,
        name: Name,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> Lease:
        """Take the exclusive lock `name` now (see lock()); the Lease."""
        tag = owners.thread_owner() if owner is None else owners.valid(owner)
        return self._acquire_blocking(
            tag,
            (encode_name(name),),
            _EXCLUSIVE,
            wait_ms(wait),
            0,
            0,
            _grant_value(value),
            _hold_ms(hold),
        )

    def acquire_shared(
        self,
        name: Name,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> Lease:
        """Take the read lock `name` now (see lock_shared()); the Lease."""
        return self.lock_shared(
            name, wait, owner=owner, value=value, hold=hold
        ).acquire()

    def acquire_semaphore(
        self,
        name: Name,
        limit: int,
        permits: int = 1,
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> Lease:
        """Take semaphore permits now (see semaphore()); the Lease."""
        return self.semaphore(
            name, limit, permits, wait, owner=owner, value=value, hold=hold
        ).acquire()

    def acquire_many(
        self,
        names: Iterable[NameSpec],
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
    ) -> Lease:
        """Take a multi-lock now (see lock_many()); the Lease."""
        return self.lock_many(names, wait, owner=owner).acquire()

    def try_lock(
        self,
        name: Name,
        *,
        owner: Optional[int] = None,
        value: Optional[Value] = None,
        hold: Optional[float] = None,
    ) -> Optional[Lease]:
        """The exclusive lock `name` if it is free (or held by this owner);
        None if another owner holds it. The Lease is a context manager:
        `if (lease := c.try_lock("job")) is not None: with lease: ...`."""
        try:
            return self.acquire(name, 0, owner=owner, value=value, hold=hold)
        except BusyError:
            return None

    def release(self, name: Name, token: int, *, owner: Optional[int] = None) -> None:
        """Release one hold of `name` granted with `token` to `owner` (default
        the calling thread). The Lease of that hold, if this client has it,
        is released through Lease.release(); Lease.release() is the usual
        way."""
        encoded = encode_name(name)
        tag = owners.thread_owner() if owner is None else owners.valid(owner)
        with self._tracker.lock:
            filed = [
                lease
                for lease in self._tracker.leases.get((encoded, token), [])
                if lease.owner == tag and not lease.is_multi
            ]
        if filed:
            filed[-1].release()  # the latest hold, as a stack unwinds
            return
        check(
            self._call(self._lib.baton_release, encoded, tag, token),
            f"release {name!r} token {token}",
        )

    def _acquire_blocking(
        self,
        owner: int,
        encoded: Tuple[bytes, ...],
        modes: Tuple[Mode, ...],
        wait_ms: int,
        limit: int,
        permits: int,
        value: Optional[bytes] = None,
        hold_ms: int = 0,
    ) -> Lease:
        args = (owner, encoded, modes, wait_ms, limit, permits, value, hold_ms)
        if wait_ms == 0 or threading.get_ident() != _MAIN_THREAD:
            return self._acquire(*args)
        # On the main thread a wait runs on a worker, so that Ctrl-C (and
        # any signal handler's exception) interrupts it; a grant that
        # comes after is given back.
        fut = _workers.pool().submit(self._acquire, *args)
        try:
            return fut.result()
        except BaseException:
            fut.add_done_callback(release_granted)
            raise

    async def _acquire_async(
        self,
        owner: int,
        encoded: Tuple[bytes, ...],
        modes: Tuple[Mode, ...],
        wait_ms: int,
        limit: int,
        permits: int,
        value: Optional[bytes] = None,
        hold_ms: int = 0,
    ) -> Lease:
        fut = _workers.pool().submit(
            self._acquire,
            owner,
            encoded,
            modes,
            wait_ms,
            limit,
            permits,
            value,
            hold_ms,
        )
        try:
            return await asyncio.wrap_future(fut)
        except asyncio.CancelledError:
            fut.add_done_callback(release_granted)
            raise

    def _acquire(
        self,
        owner: int,
        encoded: Tuple[bytes, ...],
        modes: Tuple[Mode, ...],
        wait_ms: int,
        limit: int,
        permits: int,
        value: Optional[bytes] = None,
        hold_ms: int = 0,
    ) -> Lease:
        """One acquire of any kind (a campaign too), on the calling thread."""
        lib = self._lib
        token = c_uint64()
        ptr = self._enter()
        try:
            if len(encoded) > 1:
                names = _lock_names(encoded, modes)
                rv = lib.baton_multi_acquire(
                    ptr, names, len(encoded), owner, wait_ms, byref(token)
                )
            elif modes[0] == Mode.LEADER:
                rv = lib.baton_campaign(
                    ptr, encoded[0], value, owner, wait_ms, byref(token)
                )
            elif value or hold_ms:  # a value or a hold time: version 4
                opts = _structs.AcquireOptions(
                    mode=int(modes[0]),
                    limit=limit,
                    permits=permits,
                    value=value,
                    hold_ms=hold_ms,
                )
                rv = lib.baton_acquire_with(
                    ptr, encoded[0], owner, wait_ms, byref(opts), byref(token)
                )
            elif modes[0] == Mode.PERMITS:
                rv = lib.baton_sem_acquire(
                    ptr, encoded[0], limit, permits, owner, wait_ms, byref(token)
                )
            elif modes[0] == Mode.SHARED:
                rv = lib.baton_acquire_shared(
                    ptr, encoded[0], owner, wait_ms, byref(token)
                )
            else:
                rv = lib.baton_acquire(ptr, encoded[0], owner, wait_ms, byref(token))
            if rv != 0:
                what = "campaign" if modes[0] == Mode.LEADER else "acquire"
                raise failure(rv, f"{what} {_show(encoded)}")
            session = lib.baton_session_id(ptr)
            now = self._tracker.state
            state = LeaseState(now) if now == SessionState.JEOPARDY else LeaseState.LIVE
            lease: Lease
            if modes[0] == Mode.LEADER:
                lease = Leadership(
                    self,
                    encoded,
                    token.value,
                    owner,
                    session,
                    state,
                    (value or b"").decode("utf-8", "surrogateescape"),
                )
            else:
                lease = Lease(
                    self,
                    encoded,
                    modes,
                    token.value,
                    owner,
                    session,
                    state,
                    permits,
                    limit,
                )
            # Filed before the handle is let go, so that close() finds it.
            self._tracker.file(lease)
            return lease
        finally:
            self._exit()

    def _release_native(self, lease: Lease) -> int:
        ptr = self._enter()
        try:
            if lease.is_multi:
                names = _lock_names(lease._encoded, lease.modes)
                return int(
                    self._lib.baton_multi_release(
                        ptr, names, len(lease._encoded), lease.owner, lease.token
                    )
                )
            release = (
                self._lib.baton_resign
                if lease.modes[0] == Mode.LEADER
                else self._lib.baton_release
            )
            return int(release(ptr, lease._encoded[0], lease.owner, lease.token))
        finally:
            self._exit()

    def _lease_state(self, lease: Lease) -> LeaseState:
        try:
            ptr = self._enter()
        except ValueError:
            return lease._tracked()
        try:
            same = self._lib.baton_session_id(ptr) == lease.session
            state = self._lib.baton_session_state(ptr) if same else SessionState.EXPIRED
        finally:
            self._exit()
        if lease._final is not None:
            return lease._final
        if state == SessionState.NONE:
            return LeaseState.DETACHED
        return LeaseState(state)

    def _lease_remaining(self, lease: Lease) -> float:
        try:
            ptr = self._enter()
        except ValueError:
            return 0.0
        try:
            if self._lib.baton_session_id(ptr) != lease.session:
                return 0.0
            left = self._lib.baton_session_remaining_ms(ptr)
        finally:
            self._exit()
        return 0.0 if lease._final is not None else float(left) / 1000.0

    # --- Elections ----------------------------------------------------------

    def campaign(
        self,
        name: Name,
        value: Value = "",
        wait: Optional[float] = None,
        *,
        owner: Optional[int] = None,
    ) -> CampaignRequest:
        """Campaign in the election `name` advertising `value` (str or
        bytes, at most 255 bytes, no NUL) once leading (baton_campaign()):
        to run with `with`/`async with`/`await`, or `.acquire()`; the
        Leadership. Leads at once if no one does, else waits in the
        election's FIFO queue of candidates: `wait` as lock()'s (None:
        forever, 0: BusyError while anyone leads). Not reentrant: a second
        campaign of the leader's owner is HeldError. KindError when `name`
        is a lock's or a semaphore's."""
        return CampaignRequest(
            self,
            (encode_name(name),),
            _LEADER,
            wait_ms(wait),
            owners.check(owner),
            value=encode_value(value),
        )

    # --- Watches ------------------------------------------------------------

    def watch(
        self,
        name: Name,
        prefix: bool = False,
        from_position: Optional[Tuple[int, int]] = None,
    ) -> Watch:
        """Watch the changes of the lock name `name` (with prefix=True, of
        every name that begins with it; "": every name), from now, or after
        `from_position` (an Event's or a Watch's position: (index, ord)).
        Needs no session. The Watch is an iterator of Events and a context
        manager. Raises CompactedError (the events after `from_position`
        are no longer kept), TooManyWatchesError, PermissionDeniedError."""
        encoded, index, ord_ = _watch_args(name, from_position)
        return self._open_watch(encoded, prefix, index, ord_)

    def watch_async(
        self,
        name: Name,
        prefix: bool = False,
        from_position: Optional[Tuple[int, int]] = None,
    ) -> AsyncWatch:
        """watch() for asyncio. The open starts now, on a daemon thread, as
        every wait for an event: the event loop never blocks. `w = await
        client.watch_async(n)` (or `async with client.watch_async(n) as
        w:`) returns once it is watching, so that nothing done after it is
        missed; then `async for event in w:`. Errors of the open come where
        it is awaited or first used."""
        encoded, index, ord_ = _watch_args(name, from_position)
        return AsyncWatch(
            lambda: self._open_watch(encoded, prefix, index, ord_),
            Position(index, ord_) if index else None,
        )

    def watch_callback(
        self,
        name: Name,
        on_event: EventCallback,
        *,
        prefix: bool = False,
        from_position: Optional[Tuple[int, int]] = None,
        on_end: Optional[EndCallback] = None,
    ) -> CallbackWatch:
        """watch(), with each Event handed to on_event(event) on libbaton's
        background thread (baton_watch_open_cb()), and on_end(error) if
        the watch ends on the cluster's side; see CallbackWatch. Open
        until closed (or the Client is)."""
        encoded, index, ord_ = _watch_args(name, from_position)
        watch = CallbackWatch(
            self,
            encoded,
            prefix,
            Position(index, ord_) if index else None,
            on_event,
            on_end,
        )
        self._open_watch(encoded, prefix, index, ord_, watch)
        return watch

    def observe(self, name: Name) -> Observer:
        """The leaderships of the election `name`: who leads now, then each
        new leader or proclaimed value (see Observer). The watch starts
        now, before who leads is read."""
        observer = Observer(self, encode_name(name))
        try:
            observer._start()
        except BaseException:
            observer.close()
            raise
        return observer

    def observe_async(self, name: Name) -> AsyncObserver:
        """observe() for asyncio: `o = await client.observe_async(name)`
        (or `async with`) returns once it is watching; then `async for
        change in o:`. Starts now, on a daemon thread."""
        encoded = encode_name(name)

        def start() -> Observer:
            observer = Observer(self, encoded)
            try:
                observer._start()
            except BaseException:
                observer.close()
                raise
            return observer

        return AsyncObserver(start)

    @overload
    def _open_watch(self, encoded: bytes, prefix: bool, index: int, ord_: int) -> Watch:
        ...

    @overload
    def _open_watch(
        self,
        encoded: bytes,
        prefix: bool,
        index: int,
        ord_: int,
        callback: CallbackWatch,
    ) -> CallbackWatch:
        ...

    def _open_watch(
        self,
        encoded: bytes,
        prefix: bool,
        index: int,
        ord_: int,
        callback: Optional[CallbackWatch] = None,
    ) -> Union[Watch, CallbackWatch]:
        raw = c_void_p()
        flags = _structs.WATCH_PREFIX if prefix else 0
        ptr = self._enter()
        try:
            if callback is None:
                rv = self._lib.baton_watch_open(
                    ptr, encoded, flags, index, ord_, byref(raw)
                )
            else:
                rv = self._lib.baton_watch_open_cb(
                    ptr, encoded, flags, index, ord_, callback._c_cb, None, byref(raw)
                )
            if rv != 0:
                where = f" after ({index}, {ord_})" if index else ""
                what = "prefix" if prefix else "name"
                raise failure(rv, f"watch {what} {_show((encoded,))}{where}")
            assert raw.value is not None
            watch: Union[Watch, CallbackWatch]
            if callback is None:
                watch = Watch(
                    self,
                    raw.value,
                    encoded,
                    prefix,
                    Position(index, ord_) if index else None,
                )
            else:
                watch = callback
            with self._gate:
                closing = self._closing
                if not closing:
                    self._watches.add(watch)
                    if callback is not None:
                        self._callback_watches.add(callback)
            if callback is not None:
                callback._opened(raw.value)
            if closing:  # close() began meanwhile and did not see it
                watch._close()
                raise ValueError("operation on a closed baton.Client")
            return watch
        finally:
            self._exit()

    def _forget_watch(self, watch: Union[Watch, CallbackWatch]) -> None:
        with self._gate:
            self._watches.discard(watch)
            if isinstance(watch, CallbackWatch):
                self._callback_watches.discard(watch)

    # --- The session --------------------------------------------------------

    @property
    def session_state(self) -> SessionState:
        """The session's state now, brought up to date with the clock."""
        return SessionState(self._call(self._lib.baton_session_state))

    @property
    def session_id(self) -> int:
        """The latest session's id (0 before the first); it may have ended."""
        if self._closing:
            return 0
        return int(self._call(self._lib.baton_session_id))

    def remaining(self) -> float:
        """Seconds left of the session's local lease; 0.0 when not live."""
        return int(self._call(self._lib.baton_session_remaining_ms)) / 1000.0

    def detach(self) -> DetachedSession:
        """Let the session outlive this client (batonctl acquire --detach):
        the client stops keeping it alive and forgets it; the cluster frees
        its locks one TTL later unless release_in() frees them first. Its
        leases become DETACHED. Take the locks with owner=baton.owners.
        DETACHED so that another process can name them."""
        session = c_uint64()
        secret = _structs.Secret()
        check(
            self._call(self._lib.baton_client_detach, byref(session), byref(secret)),
            "detach",
        )
        return DetachedSession(session.value, bytes(secret))

    def release_in(
        self,
        session: int,
        secret: bytes,
        name: Name,
        token: int,
        *,
        owner: int = owners.DETACHED,
    ) -> None:
        """Release `name` held with `token` by `owner` in ANOTHER session,
        given its secret (from detach()): baton_release_in()."""
        if len(secret) != _structs.SECRET_SIZE:
            raise ValueError(f"a session secret is {_structs.SECRET_SIZE} bytes")
        raw = _structs.Secret(*secret)
        check(
            self._call(
                self._lib.baton_release_in,
                session,
                byref(raw),
                encode_name(name),
                owner,
                token,
            ),
            f"release {name!r} token {token} in session {session}",
        )


def _lock_names(
    encoded: Sequence[bytes], modes: Sequence[Mode]
) -> "ctypes.Array[_structs.LockName]":
    """The struct baton_lock_name array of a multi-lock."""
    names = (_structs.LockName * len(encoded))()
    for i, (name, mode) in enumerate(zip(encoded, modes)):
        names[i].name = name
        names[i].mode = mode
    return names


def _watch_args(
    name: Name, from_position: Optional[Tuple[int, int]]
) -> Tuple[bytes, int, int]:
    """watch()'s name and position, checked."""
    encoded = encode_name(name)
    if from_position is None:
        return encoded, 0, 0
    index, ord_ = from_position
    for n, bound in ((index, _U64), (ord_, U32_MAX + 1)):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(
                f"from_position is (index, ord) ints, not {from_position!r}"
            )
        if not 0 <= n < bound:
            raise ValueError(f"from_position {from_position!r} out of range")
    return encoded, index, ord_


def _hold_ms(hold: Optional[float]) -> int:
    """A grant's hold time as libbaton takes it: 0 for none."""
    return 0 if hold is None else ms(hold, "hold")


def _grant_value(value: Optional[Value]) -> Optional[bytes]:
    """A grant's value as libbaton takes it: None (or empty) for none."""
    return encode_value(value) if value is not None else None


def _show(encoded: Sequence[bytes]) -> str:
    return ",".join(repr(n.decode("utf-8", "surrogateescape")) for n in encoded)


@atexit.register
def _close_at_exit() -> None:
    """Close what the program left open while the interpreter still runs
    (a callback into a finalizing interpreter would end libbaton's
    thread). A client with a call still waiting is left to the OS: its
    session expires one TTL later."""
    for client in list(_open_clients):
        try:
            client._close(drain_timeout=client.timeout)
        except Exception:
            pass
