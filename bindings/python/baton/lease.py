"""Lease: one grant held through a Client, and how it ends.

A Lease is what Client.lock() and its siblings give back: the fencing
token, the owner, the session, and a live view of whether the lock is still
held. libbaton's callbacks (on its background thread) mark a lease lost the
moment the library knows: its `lost` event is set and the callbacks added
with add_lost_callback() run, on that thread.
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import TracebackType
from typing import TYPE_CHECKING, Callable, List, Optional, Tuple, Type

from . import _callbacks, _workers
from .errors import (
    ClosedError,
    Error,
    ExpiredError,
    JeopardyError,
    NoAnswerError,
    NoSessionError,
    NotHolderError,
    RevokedError,
    StaleTokenError,
    failure,
)
from .records import LeaseState, Mode

if TYPE_CHECKING:
    from .client import Client
    from .request import Value

LostCallback = Callable[["Lease"], None]

# Transitions kept per lease: enough to read what happened to it.
_HISTORY = 64


class Lease:
    """A lock (or read lock, semaphore permits, multi-lock) held by `owner`
    in `session`, granted with `token`.

    Use it as a context manager to release it on exit; `async with` too.
    """

    __slots__ = (
        "_client",
        "modes",
        "token",
        "owner",
        "session",
        "permits",
        "limit",
        "_encoded",
        "_keys",
        "_final",
        "_releasing",
        "_lost_event",
        "_callbacks",
        "_enders",
        "_history",
        "__weakref__",
    )

    def __init__(
        self,
        client: "Client",
        encoded: Tuple[bytes, ...],
        modes: Tuple[Mode, ...],
        token: int,
        owner: int,
        session: int,
        state: LeaseState,
        permits: int = 0,
        limit: int = 0,
    ) -> None:
        self._client = client
        self._encoded = encoded
        #: How each name is held (EXCLUSIVE, SHARED or PERMITS).
        self.modes = modes
        #: The fencing token: the Raft index of the grant. Pass it to the
        #: resource, which should refuse anything older (baton.Fence).
        self.token = token
        #: The owner tag the grant belongs to (see baton.owners).
        self.owner = owner
        #: The session id the grant belongs to.
        self.session = session
        #: Semaphore permits held, and the semaphore's limit (0 for locks).
        self.permits = permits
        self.limit = limit
        self._keys = (
            ((encoded[0], token),)
            if len(encoded) == 1
            else tuple([(n, token) for n in encoded])
        )
        self._final: Optional[LeaseState] = None
        self._releasing = False
        self._lost_event: Optional[threading.Event] = None
        self._callbacks: List[LostCallback] = []  # add_lost_callback()
        self._enders: List[Callable[[LeaseState], None]] = []  # wait_lost()
        self._history: List[Tuple[float, LeaseState]] = [(time.monotonic(), state)]

    # --- What it is -------------------------------------------------------

    @property
    def names(self) -> Tuple[str, ...]:
        """The lock names, as given (str; bytes names decoded from UTF-8
        with surrogateescape, so .encode("utf-8", "surrogateescape") gives
        them back)."""
        return tuple(n.decode("utf-8", "surrogateescape") for n in self._encoded)

    @property
    def name(self) -> str:
        """The lock's name (the first one of a multi-lock)."""
        return self._encoded[0].decode("utf-8", "surrogateescape")

    @property
    def mode(self) -> Mode:
        """How the (first) name is held."""
        return self.modes[0]

    @property
    def is_multi(self) -> bool:
        """Whether this is a multi-lock (Client.lock_many())."""
        return len(self._encoded) > 1

    def __repr__(self) -> str:
        names = ",".join(self.names)
        return (
            f"<baton.Lease {names!r} token={self.token} owner={self.owner:#x} "
            f"session={self.session} {self._tracked().name}>"
        )

    # --- Whether it still holds -------------------------------------------

    @property
    def state(self) -> LeaseState:
        """The lease's state now.

        Once released or lost the state is final. While held it is the
        session's state as libbaton has it right now, brought up to date
        with the clock (baton_session_state()), so it can say EXPIRED a
        moment before the lost callback has run. From inside a libbaton
        callback it is the last state the callbacks reported.
        """
        if self._final is not None or _callbacks.in_callback():
            return self._tracked()
        return self._client._lease_state(self)

    @property
    def held(self) -> bool:
        """Whether the lock is still held (state LIVE or JEOPARDY)."""
        return self.state.held

    def remaining(self) -> float:
        """Seconds left of the session's local lease (0.0 when not held):
        dated from the send of the last acknowledged keepalive, minus a
        safety margin (baton_session_remaining_ms())."""
        if self._final is not None:
            return 0.0
        return self._client._lease_remaining(self)

    @property
    def lost(self) -> threading.Event:
        """Set once the lock is lost (EXPIRED or REVOKED), from libbaton's
        thread: `lease.lost.is_set()`, or `lease.lost.wait(timeout)`."""
        if self._lost_event is None:
            with self._client._tracker.lock:
                if self._lost_event is None:
                    event = threading.Event()
                    if self._final is not None and self._final.lost:
                        event.set()
                    self._lost_event = event
        return self._lost_event

    @property
    def transitions(self) -> List[Tuple[float, LeaseState]]:
        """(time.monotonic(), state): the state at the grant, each state the
        callbacks reported while the lease was held, and its final state
        (at most 64: the first and the latest)."""
        return list(self._history)

    def guard(self, *, need: float = 0.0, allow_jeopardy: bool = False) -> None:
        """Raise unless the lease is live, for loops that check before each
        step: JeopardyError (session in jeopardy, unless allow_jeopardy),
        ExpiredError, RevokedError, or NotHolderError (released, detached).
        With `need`, also JeopardyError when fewer than `need` seconds of
        the lease remain (the step would outlast it)."""
        state = self.state
        if state == LeaseState.LIVE or (
            state == LeaseState.JEOPARDY and allow_jeopardy
        ):
            if need > 0:
                left = self.remaining()
                if left < need:
                    raise JeopardyError(
                        context=f"{self._what()}: {left:.3f} s of the lease left, "
                        f"{need:.3f} s needed"
                    )
            return
        raise self._error_for(state)

    def add_lost_callback(self, fn: LostCallback) -> None:
        """Call fn(lease) when the lock is lost (EXPIRED or REVOKED).

        It runs on libbaton's background thread and must not call into the
        Client (that raises RuntimeError): note the loss, set a flag, hand
        work to another thread. If the lease is already lost it runs at
        once, in the calling thread. It never runs for a lease released or
        detached."""
        with self._client._tracker.lock:
            final = self._final
            if final is None:
                self._callbacks.append(fn)
                return
        if final.lost:
            fn(self)

    # --- Giving it up -----------------------------------------------------

    def release(self) -> None:
        """Release the grant (compare-and-delete with its token).

        Raises ExpiredError (the session ended: the lock was lost before
        it), RevokedError (an administrator took it, whether this client
        had heard of it yet or the cluster says so now: the grant is gone
        while the session lives), NotHolderError (released already),
        NoAnswerError (no answer in time: libbaton
        goes on releasing it in the background, and the lease counts as
        released), or what libbaton answers otherwise."""
        tracker = self._client._tracker
        with tracker.lock:
            final = self._final
            busy = final is not None or self._releasing
            if not busy:
                self._releasing = True
        if busy:
            raise self._error_for(final) if final is not None else NotHolderError(
                context=f"{self._what()}: being released by another thread"
            )
        try:
            code = self._client._release_native(self)
            # Read on this thread, before anything else calls libbaton.
            error = failure(code, f"release {self._what()}") if code else None
        except BaseException:
            self._releasing = False  # nothing was sent (a closed client)
            raise
        end = LeaseState.RELEASED if code == 0 else _ENDS.get(code)
        if end is None:
            self._releasing = False  # e.g. BATON_ENAME: nothing changed
        else:
            tracker.unfile(self)
            self._finish(end)
        if end == LeaseState.REVOKED:
            # The grant was taken away while the session lived, and the
            # release is the first to hear of it (the revoke reaches this
            # client only at its next keepalive): the same LockLost as
            # when the client heard first, with the cluster's code.
            raise RevokedError(
                code,
                f"release {self._what()}: the cluster no longer has this "
                "grant (an administrator revoked it, or another call "
                "released it)",
                error.detail if error is not None else "",
            )
        if error is not None:
            raise error

    async def arelease(self) -> None:
        """release() without blocking the event loop."""
        await asyncio.wrap_future(_workers.pool().submit(self.release))

    def set_value(self, value: "Value") -> None:
        """Set the grant's value (str or bytes, at most 255 bytes, no NUL;
        "" clears it), keeping the grant and its token
        (baton_set_value(); a multi-lock's, name by name). Fenced by the
        token: StaleTokenError or NotHolderError when the grant was lost
        (nothing changes), what guard() raises for a lease already
        released or lost (nothing is sent), InvalidArgumentError,
        ExpiredError, NoAnswerError."""
        # Imported here: request.py imports this module.
        from .request import encode_value

        self._each_name("baton_set_value", encode_value(value), "set value of")

    async def aset_value(self, value: "Value") -> None:
        """set_value() without blocking the event loop."""
        await asyncio.wrap_future(_workers.pool().submit(self.set_value, value))

    def extend(self, hold: float) -> None:
        """Restart the grant's hold time: from when the cluster applies
        this, it is held for at most `hold` seconds (baton_extend(); a
        multi-lock's, name by name). Only for a grant taken with `hold=`
        (else InvalidArgumentError); fenced by the token: StaleTokenError
        or NotHolderError when the grant was lost, its hold time run out
        included (nothing changes), what guard() raises for a lease already
        released or lost (nothing is sent), ExpiredError, NoAnswerError."""
        # Imported here: request.py imports this module.
        from .request import ms

        self._each_name(
            "baton_extend", ms(hold, "hold"), "extend the hold time of"
        )

    def _each_name(self, fn: str, arg: object, what: str) -> None:
        """libbaton's `fn` (name, owner, token, `arg`) for each name of the
        grant, unless the lease already ended (then what guard() raises,
        nothing sent); the first refusal raised."""
        final = self._final
        if final is not None:
            raise self._error_for(final)
        client = self._client
        call = getattr(client._lib, fn)
        for encoded in self._encoded:
            code = client._call(call, encoded, self.owner, self.token, arg)
            if code != 0:
                raise failure(code, f"{what} {self._what()}")

    async def aextend(self, hold: float) -> None:
        """extend() without blocking the event loop."""
        await asyncio.wrap_future(_workers.pool().submit(self.extend, hold))

    async def wait_lost(self) -> LeaseState:
        """Wait (in asyncio) until the lease ends; its final state: EXPIRED
        or REVOKED when lost, RELEASED or DETACHED otherwise."""
        loop = asyncio.get_running_loop()
        done: "asyncio.Future[LeaseState]" = loop.create_future()

        def wake(state: LeaseState) -> None:
            if not done.done():
                done.set_result(state)

        def ended(state: LeaseState) -> None:
            loop.call_soon_threadsafe(wake, state)

        with self._client._tracker.lock:
            final = self._final
            if final is None:
                self._enders.append(ended)
        if final is not None:
            return final
        return await done

    def __enter__(self) -> "Lease":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self._release_on_exit(exc is None)

    async def __aenter__(self) -> "Lease":
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await asyncio.wrap_future(
            _workers.pool().submit(self._release_on_exit, exc is None)
        )

    def _release_on_exit(self, clean: bool) -> None:
        """Release at the end of a with block. A lock lost during a block
        that ended normally raises (what the block did was not protected to
        its end); when the block raised, its exception goes on and a
        failed release is dropped."""
        if self._final == LeaseState.RELEASED:
            return  # released inside the block
        try:
            self.release()
        except Error:
            if clean:
                raise

    # --- From the Tracker (libbaton's thread) ------------------------------

    def _tracked(self) -> LeaseState:
        return self._final if self._final is not None else self._history[-1][1]

    def _observe(self, state: LeaseState) -> None:
        """The session changed state while this lease is held."""
        with self._client._tracker.lock:
            if self._final is None and self._history[-1][1] != state:
                self._remember(state)

    def _finish(self, state: LeaseState) -> None:
        """The lease ended: released, lost or detached. Once only."""
        with self._client._tracker.lock:
            if self._final is not None:
                return
            self._final = state
            if self._history[-1][1] != state:  # EXPIRED may be observed first
                self._remember(state)
            callbacks, self._callbacks = self._callbacks, []
            enders, self._enders = self._enders, []
            event = self._lost_event
        if state.lost:
            if event is not None:
                event.set()
            for fn in callbacks:
                try:
                    fn(self)
                except Exception as e:
                    _callbacks.report(e, "lost-lock")
        for end in enders:
            end(state)

    def _remember(self, state: LeaseState) -> None:
        if len(self._history) >= _HISTORY:
            del self._history[1]  # keep the first (the grant's) state
        self._history.append((time.monotonic(), state))

    #: What the lease holds, for error messages.
    _noun = "lock"

    def _what(self) -> str:
        return f"{','.join(self.names)!r} token {self.token}"

    def _error_for(self, state: LeaseState) -> Error:
        what = self._what()
        if state == LeaseState.JEOPARDY:
            return JeopardyError(context=f"{what}: session in jeopardy")
        if state == LeaseState.EXPIRED:
            return ExpiredError(
                context=f"{what}: the session ended, the {self._noun} is lost"
            )
        if state == LeaseState.REVOKED:
            return RevokedError(context=f"{what}: revoked by an administrator")
        if state == LeaseState.DETACHED:
            return NotHolderError(
                context=f"{what}: the session was detached (release it with release_in)"
            )
        return NotHolderError(context=f"{what}: already released")


# What a failed release says about the lease.
_ENDS = {
    ExpiredError.code: LeaseState.EXPIRED,
    ClosedError.code: LeaseState.EXPIRED,
    NoSessionError.code: LeaseState.EXPIRED,
    # The grant is gone while the session lives: taken away.
    NotHolderError.code: LeaseState.REVOKED,
    StaleTokenError.code: LeaseState.REVOKED,
    # libbaton goes on releasing it in the background, exactly once; a
    # second release from here could only take another hold.
    NoAnswerError.code: LeaseState.RELEASED,
}
