"""Daemon threads that run blocking libbaton calls off the caller's thread.

Used by asyncio (so the event loop never blocks) and by waits on the main
thread (so Ctrl-C interrupts them). A waiting acquire can block its thread
for as long as the lock is held elsewhere, so this pool never queues a job
behind a busy thread: a job with no idle thread gets a new one. Idle
threads exit after a while. They are daemon threads, so a wait that never
ends does not keep the interpreter from exiting (unlike
concurrent.futures' pools, which are joined at exit).
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from concurrent.futures import Future
from typing import Any, Callable, List, Optional, Tuple, TypeVar

T = TypeVar("T")

_IDLE_S = 30.0  # an idle thread exits after this long

Job = Tuple["Future[Any]", Callable[..., Any], Tuple[Any, ...]]


class _Worker:
    def __init__(self, pool: "Workers") -> None:
        self.pool = pool
        self.jobs: "queue.SimpleQueue[Job]" = queue.SimpleQueue()


class Workers:
    """A growing pool of daemon threads; submit() never waits for one."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._idle: List[_Worker] = []
        self._count = itertools.count(1)

    def submit(self, fn: Callable[..., T], *args: Any) -> "Future[T]":
        """Run fn(*args) on a pool thread; its Future."""
        fut: "Future[T]" = Future()
        with self._lock:
            worker: Optional[_Worker] = self._idle.pop() if self._idle else None
        if worker is None:
            worker = _Worker(self)
            threading.Thread(
                target=self._run,
                args=(worker,),
                name=f"{self._name}-{next(self._count)}",
                daemon=True,
            ).start()
        worker.jobs.put((fut, fn, args))
        return fut

    def _run(self, worker: _Worker) -> None:
        while True:
            try:
                fut, fn, args = worker.jobs.get(timeout=_IDLE_S)
            except queue.Empty:
                with self._lock:
                    if worker in self._idle:
                        self._idle.remove(worker)
                        return
                # submit() took this worker just now: its job is coming.
                continue
            if fut.set_running_or_notify_cancel():
                try:
                    result = fn(*args)
                except BaseException as e:
                    fut.set_exception(e)
                else:
                    fut.set_result(result)
            del fut, fn, args  # drop references while idle
            with self._lock:
                self._idle.append(worker)


_pool: Optional[Workers] = None
_pool_lock = threading.Lock()


def pool() -> Workers:
    """The process's pool (made on first use)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = Workers("baton-call")
    return _pool


def _forget_after_fork() -> None:
    # A forked child has none of the parent's threads: start afresh.
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_after_fork)
