"""A session bound to its owner's health: Client.health_check() and
Client.close_session(), over libbaton's baton_health_check() and
baton_session_close(). A mixin of Client.

The cluster sees keepalives, not whether the program behind them is well,
so the check runs in the client: libbaton calls it on a thread of its own
every interval while the client has a live session, and closes the
session when it reports ill health. The session's locks then go to their
next waiters at once, not a TTL later.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from . import _callbacks, _structs
from .errors import check

#: The type libbaton calls: int check(baton_client *c, void *data).
HEALTH_CB = _structs.HEALTH_CB


class Health:
    """Mixin: health checks and closing the session on demand."""

    _health_cb: Optional[Any] = None

    def close_session(self) -> None:
        """End the session now and keep the client: the cluster releases
        every lock it holds (each to its next waiter at once), its leases
        become EXPIRED, and the next call opens a new session. When the
        cluster cannot be told, the session is given up all the same (no
        more keepalives; the cluster frees the locks a TTL later) and the
        call raises. NoSessionError when no session is live."""
        check(self._call(self._lib.baton_session_close), "close_session")  # type: ignore[attr-defined]

    def health_check(self, fn: Optional[Callable[[], bool]], interval: float = 10.0) -> None:
        """Call `fn()` every `interval` seconds (at least 0.01) on
        libbaton's health thread while the client has a live session; when
        it returns false or raises, the session is closed as
        close_session() closes it. Return false only once the work done
        under the locks has stopped: nobody else is granted them before
        `fn` returns. An exception `fn` raises is passed to
        sys.unraisablehook and counts as ill health. One check per client:
        a second call replaces the first; `fn` None stops it."""
        if fn is None:
            check(self._call(self._lib.baton_health_check, HEALTH_CB(), 0, None), "health_check")  # type: ignore[attr-defined]
            self._health_cb = None
            return
        interval_ms = int(round(interval * 1000))
        if interval_ms < 10:
            raise ValueError(f"health_check: interval {interval} s is below 0.01 s")

        def run(_c: object, _data: object) -> int:
            try:
                return 0 if fn() else 1
            except BaseException as e:  # noqa: BLE001 - reported, then ill
                _callbacks.report(e, "health_check")
                return 1

        cb = HEALTH_CB(run)
        check(
            self._call(self._lib.baton_health_check, cb, interval_ms, None),  # type: ignore[attr-defined]
            "health_check",
        )
        # Kept while libbaton may call it: replaced only after the call
        # above stopped the previous check.
        self._health_cb = cb
