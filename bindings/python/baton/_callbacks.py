"""libbaton's two callbacks, and the leases they concern.

libbaton calls on_session and on_lock_lost from its background thread, one
at a time, in the order of the events, with no lock of its own held. The
Tracker turns them into lease state: each Lease of the client is filed
under (name, token), and a lost-lock event marks the leases filed there.

Two hazards shape this module:

- A callback must not call back into the handle (baton.h). The flag
  `in_callback()` lets the Client refuse such a call with a RuntimeError
  instead of deadlocking.
- A lock can be lost between the moment libbaton grants it and the moment
  the binding files its Lease. A lost event that finds no lease is kept
  (bounded) and matched when the lease is filed; (name, token) names one
  grant, since tokens never repeat for a lock.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from types import SimpleNamespace
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Tuple

from .records import LeaseState, SessionState

if TYPE_CHECKING:
    from .lease import Lease

Key = Tuple[bytes, int]

# Lost events kept while no lease matches them; far more than can happen in
# the moment between a grant and its filing.
_UNCLAIMED_MAX = 1024

_local = threading.local()


def in_callback() -> bool:
    """Whether the calling thread is running one of libbaton's callbacks."""
    return getattr(_local, "active", False)


def enter_callback() -> None:
    """The calling thread (libbaton's) starts running a callback."""
    _local.active = True


def leave_callback() -> None:
    _local.active = False


def report(exc: BaseException, what: str) -> None:
    """Hand an exception a user callback raised to sys.unraisablehook: it
    cannot propagate into libbaton's thread."""
    sys.unraisablehook(
        SimpleNamespace(  # type: ignore[arg-type]
            exc_type=type(exc),
            exc_value=exc,
            exc_traceback=exc.__traceback__,
            err_msg=f"Exception ignored in baton {what} callback",
            object=None,
        )
    )


class Tracker:
    """The leases of one Client and the session state libbaton reported."""

    def __init__(
        self,
        on_session: Optional[Callable[[SessionState], None]],
        on_lock_lost: Optional[Callable[[str, int], None]],
    ) -> None:
        self.lock = threading.Lock()
        self.leases: Dict[Key, List["Lease"]] = {}
        self.unclaimed: "OrderedDict[Key, LeaseState]" = OrderedDict()
        self.state = SessionState.NONE  # the last state libbaton reported
        self.closed = False
        self.user_on_session = on_session
        self.user_on_lock_lost = on_lock_lost

    # --- Filing ------------------------------------------------------------

    def file(self, lease: "Lease") -> None:
        """Track `lease` (just granted) until it is released or lost."""
        lost: Optional[LeaseState] = None
        with self.lock:
            if self.closed:
                lost = LeaseState.RELEASED
            for key in lease._keys:
                if lost is None and key in self.unclaimed:
                    lost = self.unclaimed.pop(key)
            if lost is None:
                for key in lease._keys:
                    self.leases.setdefault(key, []).append(lease)
        if lost is not None:
            lease._finish(lost)

    def unfile(self, lease: "Lease") -> None:
        with self.lock:
            if len(lease._keys) == 1:  # the common case, kept short
                held = self.leases.get(lease._keys[0])
                if held is not None and lease in held:
                    if len(held) == 1:
                        del self.leases[lease._keys[0]]
                    else:
                        held.remove(lease)
                return
            for key in lease._keys:
                held = self.leases.get(key)
                if held is None:
                    continue
                try:
                    held.remove(lease)
                except ValueError:
                    pass
                if not held:
                    del self.leases[key]

    def take_all(self) -> List["Lease"]:
        """Stop tracking: every lease, once each (the client is closing)."""
        with self.lock:
            self.closed = True
            seen: Dict[int, "Lease"] = {}
            for held in self.leases.values():
                for lease in held:
                    seen[id(lease)] = lease
            self.leases.clear()
            self.unclaimed.clear()
        return list(seen.values())

    # --- libbaton's callbacks (its background thread) ---------------------

    def on_session(self, _c: object, state: int, _data: object) -> None:
        _local.active = True
        try:
            self._session_changed(SessionState(state))
        except BaseException as e:  # never into libbaton's thread
            report(e, "on_session")
        finally:
            _local.active = False

    def on_lock_lost(self, _c: object, name: bytes, token: int, _data: object) -> None:
        _local.active = True
        try:
            self._lost(name, token)
        except BaseException as e:
            report(e, "on_lock_lost")
        finally:
            _local.active = False

    def _session_changed(self, state: SessionState) -> None:
        with self.lock:
            self.state = state
            leases = {id(x): x for held in self.leases.values() for x in held}
            if state == SessionState.NONE:
                # Detached: libbaton forgets the session's locks without
                # lost events, so the leases are let go here.
                self.leases.clear()
        for lease in leases.values():
            if state == SessionState.NONE:
                lease._finish(LeaseState.DETACHED)
            else:
                lease._observe(LeaseState(state))
        if self.user_on_session is not None:
            try:
                self.user_on_session(state)
            except Exception as e:
                report(e, "on_session")

    def _lost(self, name: bytes, token: int) -> None:
        key = (name, token)
        with self.lock:
            # libbaton reports EXPIRED before the locks the session loses;
            # a lock lost while the session lives was revoked.
            reason = (
                LeaseState.EXPIRED
                if self.state == SessionState.EXPIRED
                else LeaseState.REVOKED
            )
            leases = self.leases.pop(key, [])
            for lease in leases:
                # A multi-lock is filed under each of its names.
                for other in lease._keys:
                    if other != key and other in self.leases:
                        held = self.leases[other]
                        if lease in held:
                            held.remove(lease)
                        if not held:
                            del self.leases[other]
            if not leases:
                self.unclaimed[key] = reason
                while len(self.unclaimed) > _UNCLAIMED_MAX:
                    self.unclaimed.popitem(last=False)
        for lease in leases:
            lease._finish(reason)
        if self.user_on_lock_lost is not None:
            try:
                self.user_on_lock_lost(name.decode("utf-8", "surrogateescape"), token)
            except Exception as e:
                report(e, "on_lock_lost")
