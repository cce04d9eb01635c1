"""Fencing for resources written in Python (libbaton's baton_fence_*).

A resource that remembers the highest token it has admitted turns away a
former holder that was paused or cut off and still believes it holds the
lock: its token is older than the current holder's. The comparison is
libbaton's own (baton_fence_admit()); these classes add the locking that
struct baton_fence leaves to its user.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from ctypes import byref
from typing import Dict, Iterator

from . import _library, _structs
from .errors import check


class Fence:
    """The highest token admitted for one resource. Thread-safe.

    `fence.admit(token)` raises StaleTokenError for a token below one
    admitted before. To make the check and the write one step (so that an
    older holder cannot write between a newer one's check and write), do
    the write inside `with fence.admitting(token):`, which holds the
    fence's lock throughout.
    """

    def __init__(self) -> None:
        self._lib = _library.load()
        self._raw = _structs.Fence()
        self._lib.baton_fence_init(byref(self._raw))
        self._lock = threading.Lock()

    @property
    def highest(self) -> int:
        """The highest token admitted so far (0: none)."""
        return int(self._raw.highest)

    def admit(self, token: int) -> None:
        """Admit `token` if it is not lower than any admitted before, and
        remember it; StaleTokenError otherwise."""
        with self._lock:
            self._admit(token)

    def admits(self, token: int) -> bool:
        """admit() as a bool: True if admitted."""
        with self._lock:
            return bool(self._lib.baton_fence_admit(byref(self._raw), token) == 0)

    @contextmanager
    def admitting(self, token: int) -> Iterator[None]:
        """Admit `token` and hold the fence for the body (the write)."""
        with self._lock:
            self._admit(token)
            yield

    def _admit(self, token: int) -> None:
        check(
            self._lib.baton_fence_admit(byref(self._raw), token),
            f"fence: token {token} is below {self._raw.highest}",
        )


class Fences:
    """A Fence per name, for a resource that guards several lock names."""

    def __init__(self) -> None:
        self._fences: Dict[str, Fence] = {}
        self._lock = threading.Lock()

    def __getitem__(self, name: str) -> Fence:
        with self._lock:
            fence = self._fences.get(name)
            if fence is None:
                fence = self._fences[name] = Fence()
            return fence

    def admit(self, name: str, token: int) -> None:
        """Fence `name` admits `token` (StaleTokenError if older)."""
        self[name].admit(token)
