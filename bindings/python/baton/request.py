"""LockRequest, what Client.lock() and its siblings return, and the
conversions every acquire shares: names to bytes, seconds to libbaton's
milliseconds.
"""

from __future__ import annotations

import math
from concurrent.futures import Future
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generator, Optional, Tuple, Type, Union

from . import _workers, owners
from .errors import InvalidArgumentError, InvalidNameError
from .lease import Lease
from .records import Mode

if TYPE_CHECKING:
    from .client import Client

#: A lock name: str (sent as UTF-8) or bytes; 1..255 bytes, no NUL.
Name = Union[str, bytes]
#: A name of a multi-lock, alone (exclusive) or with its mode.
NameSpec = Union[Name, Tuple[Name, Mode]]

U32_MAX = (1 << 32) - 1


def encode_name(name: Name) -> bytes:
    """The bytes libbaton gets for `name`. A NUL would silently cut a C
    string short, so it is refused here (the library checks the rest)."""
    if isinstance(name, str):
        data = name.encode("utf-8", "surrogateescape")
    elif isinstance(name, (bytes, bytearray, memoryview)):
        data = bytes(name)
    else:
        raise TypeError(f"a lock name is str or bytes, not {type(name).__name__}")
    if b"\0" in data:
        raise InvalidNameError(context=f"lock name {name!r} contains NUL")
    return data


#: An election's value: str (sent as UTF-8) or bytes; 0..255 bytes, no NUL.
Value = Union[str, bytes]


def encode_value(value: Value) -> bytes:
    """The bytes libbaton gets for an election's `value` (a NUL would cut
    the C string short; libbaton checks the length)."""
    if isinstance(value, str):
        data = value.encode("utf-8", "surrogateescape")
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    else:
        raise TypeError(f"a value is str or bytes, not {type(value).__name__}")
    if b"\0" in data:
        raise InvalidArgumentError(context=f"value {value!r} contains NUL")
    return data


def wait_ms(wait: Optional[float]) -> int:
    """wait_ms of baton_acquire(): None waits forever, 0 is a try."""
    if wait is None:
        return -1
    if wait < 0 or math.isnan(wait):
        raise ValueError(f"wait must be None (forever) or >= 0 seconds, not {wait}")
    if wait == 0:
        return 0
    ms = max(1, math.ceil(wait * 1000))
    if ms >= U32_MAX:
        raise ValueError("wait must be below 2**32 - 1 ms; None waits forever")
    return ms


def ms(seconds: float, what: str, zero_ok: bool = False) -> int:
    if seconds < 0 or (seconds == 0 and not zero_ok) or math.isnan(seconds):
        raise ValueError(f"{what} must be {'>=' if zero_ok else '>'} 0 seconds")
    ms = math.ceil(seconds * 1000)
    if ms > U32_MAX:
        raise ValueError(f"{what} must be below 2**32 ms")
    return ms


def release_granted(fut: "Future[Lease]") -> None:
    """A caller stopped waiting for an acquire that then succeeded (Ctrl-C,
    a cancelled task): give the lock back, off this thread."""
    if fut.cancelled() or fut.exception() is not None:
        return
    lease = fut.result()
    _workers.pool().submit(_release_quietly, lease)


def _release_quietly(lease: Lease) -> None:
    try:
        lease.release()
    except Exception:  # nobody is left to tell; the session ends it anyway
        pass


class LockRequest:
    """A lock to take: `with`, `async with`, or `await` it.

    `with client.lock("name") as lease:` takes the lock on entry (for the
    calling thread, unless an owner was given) and releases it on exit;
    `async with` does the same for the current asyncio task without
    blocking the event loop; `lease = await client.lock("name")` takes it
    and leaves the release to you. One use only.
    """

    def __init__(
        self,
        client: "Client",
        encoded: Tuple[bytes, ...],
        modes: Tuple[Mode, ...],
        wait_ms: int,
        owner: Optional[int],
        limit: int = 0,
        permits: int = 0,
        value: Optional[bytes] = None,
        hold_ms: int = 0,
    ) -> None:
        self._client = client
        self._args = (encoded, modes, wait_ms, limit, permits, value, hold_ms)
        self._owner = owner
        self._lease: Optional[Lease] = None
        self._used = False

    def _start(self) -> None:
        if self._used:
            raise RuntimeError(
                f"a {type(self).__name__} can be used once; make another one"
            )
        self._used = True

    def acquire(self) -> Lease:
        """Take the lock now, blocking; the Lease."""
        self._start()
        owner = self._owner if self._owner is not None else owners.thread_owner()
        self._lease = self._client._acquire_blocking(owner, *self._args)
        return self._lease

    async def acquire_async(self) -> Lease:
        """Take the lock without blocking the event loop; the Lease."""
        self._start()
        owner = self._owner if self._owner is not None else owners.task_owner()
        self._lease = await self._client._acquire_async(owner, *self._args)
        return self._lease

    def __enter__(self) -> Lease:
        return self.acquire()

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        assert self._lease is not None
        self._lease._release_on_exit(exc is None)

    async def __aenter__(self) -> Lease:
        return await self.acquire_async()

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        assert self._lease is not None
        await self._lease.__aexit__(exc_type, exc, tb)

    def __await__(self) -> Generator[Any, None, Lease]:
        return self.acquire_async().__await__()
