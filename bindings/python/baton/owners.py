"""Owner tags: who holds a lock within one session.

libbaton keys reentrancy and ownership on (session, owner tag). Its default,
BATON_OWNER_THREAD, is the calling thread's id with the top bit set. The
binding always passes an explicit tag instead, computed the same way, so
that a Lease can be released from any thread (and from the worker threads
that asyncio calls run in) and still name the owner that took it.

- a thread (the default in synchronous code): 2**63 | its native id, the
  very tag libbaton gives BATON_OWNER_THREAD, so C and Python code on one
  thread share their holds;
- an asyncio task (the default in `async with`/`await`): 2**63 | 2**62 |
  a number drawn once per task; thread ids stay below 2**32, so these
  never meet a thread's tag;
- a tag the program chooses: any int in 2..2**63 - 1 (0 means "the
  thread" and 1 is BATON_OWNER_DETACHED in baton.h).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from typing import Optional

THREAD_BIT = 1 << 63
TASK_BIT = 1 << 62

#: BATON_OWNER_DETACHED: the fixed tag of a detached acquire, which another
#: process names to Client.release_in().
DETACHED = 1

_task_tags: "weakref.WeakKeyDictionary[asyncio.Task[object], int]" = (
    weakref.WeakKeyDictionary()
)
_task_counter = itertools.count(1)
_task_lock = threading.Lock()


def thread_owner() -> int:
    """The calling thread's tag (libbaton's BATON_OWNER_THREAD)."""
    return THREAD_BIT | (threading.get_native_id() & 0xFFFFFFFF)


def task_owner() -> int:
    """The current asyncio task's tag; the thread's outside a task."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    if task is None:
        return thread_owner()
    with _task_lock:
        tag = _task_tags.get(task)
        if tag is None:
            tag = THREAD_BIT | TASK_BIT | next(_task_counter)
            _task_tags[task] = tag
        return tag


def valid(owner: int) -> int:
    """`owner` if it is a valid explicit tag; TypeError or ValueError if not."""
    if isinstance(owner, bool) or not isinstance(owner, int):
        raise TypeError(f"owner must be an int, not {type(owner).__name__}")
    if not 0 < owner < 1 << 64:
        raise ValueError(
            "owner must be a tag in 1..2**64-1 (0 would mean the calling "
            "thread, which is the default already)"
        )
    return owner


def check(owner: Optional[int]) -> Optional[int]:
    """valid(owner), letting None (the default owner) through."""
    return None if owner is None else valid(owner)
