"""Elections: a lock with a value (libbaton's baton_campaign()).

An election has one leader at a time, fenced, queued and lost exactly as a
lock's grant is: `Leadership` is a Lease (its token, state, lost event,
guard(), lost callbacks) that also carries the value the leader advertises,
and can change it (proclaim()) or hand the leadership on (resign()).
libbaton reports a leadership lost with its session through the same
on_lock_lost callback as a lock, so the binding's lost-lock notification
covers it unchanged.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generator, Optional, Tuple, Type, cast

from . import _workers
from .errors import failure
from .lease import Lease
from .records import LeaseState, Mode
from .request import LockRequest, Value, encode_value

if TYPE_CHECKING:
    from .client import Client


class Leadership(Lease):
    """The leadership of an election, won by Client.campaign().

    A Lease whose `mode` is Mode.LEADER: `token` is the leadership's fencing
    token (higher than every earlier leader's of this election), `state`,
    `held`, `lost`, `remaining()`, `guard()`, `add_lost_callback()` and
    `wait_lost()` work as for a lock. `value` is what it advertises. Use it
    as a context manager (or `async with`) to resign on exit.
    """

    __slots__ = ("value",)

    _noun = "leadership"

    def __init__(
        self,
        client: "Client",
        encoded: Tuple[bytes, ...],
        token: int,
        owner: int,
        session: int,
        state: LeaseState,
        value: str,
    ) -> None:
        super().__init__(client, encoded, (Mode.LEADER,), token, owner, session, state)
        #: What the leader advertises (as campaigned with, or as last
        #: proclaimed through this object).
        self.value = value

    def __repr__(self) -> str:
        return (
            f"<baton.Leadership {self.name!r} token={self.token} "
            f"owner={self.owner:#x} session={self.session} value={self.value!r} "
            f"{self._tracked().name}>"
        )

    def proclaim(self, value: Value) -> None:
        """Advertise `value` from now on (baton_proclaim()), keeping the
        leadership and its token. Raises what guard() would for a
        leadership already resigned or lost (sending nothing), else
        libbaton's refusal: StaleTokenError or NotHolderError (the
        leadership was lost; the lost callback follows), ExpiredError,
        InvalidArgumentError (over 255 bytes, or a NUL), NoAnswerError."""
        data = encode_value(value)
        final = self._final
        if final is not None:
            raise self._error_for(final)
        client = self._client
        code = client._call(
            client._lib.baton_proclaim, self._encoded[0], self.owner, self.token, data
        )
        if code != 0:
            raise failure(code, f"proclaim {self._what()}")
        self.value = data.decode("utf-8", "surrogateescape")

    async def aproclaim(self, value: Value) -> None:
        """proclaim() without blocking the event loop."""
        await asyncio.wrap_future(_workers.pool().submit(self.proclaim, value))

    def resign(self) -> None:
        """Give the leadership up (baton_resign()): the next candidate leads,
        with a higher token. The same as release(), errors included."""
        self.release()

    async def aresign(self) -> None:
        """resign() without blocking the event loop."""
        await self.arelease()

    def _what(self) -> str:
        return f"election {self.name!r} token {self.token}"


class CampaignRequest(LockRequest):
    """A campaign to run: `with`, `async with`, or `await` it (as a
    LockRequest). `with client.campaign("db", "10.0.0.1:5432") as lead:`
    waits to lead (for the calling thread, unless an owner was given) and
    resigns on exit; `async with` does the same for the current asyncio
    task; `lead = await client.campaign(...)` leaves the resignation to
    you. One use only."""

    def acquire(self) -> Leadership:
        """Campaign now, blocking until leading; the Leadership."""
        return cast(Leadership, super().acquire())

    async def acquire_async(self) -> Leadership:
        """Campaign without blocking the event loop; the Leadership."""
        return cast(Leadership, await super().acquire_async())

    def __enter__(self) -> Leadership:
        return self.acquire()

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        super().__exit__(exc_type, exc, tb)

    async def __aenter__(self) -> Leadership:
        return await self.acquire_async()

    def __await__(self) -> Generator[Any, None, Leadership]:
        return self.acquire_async().__await__()
