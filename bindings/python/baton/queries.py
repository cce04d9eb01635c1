"""The read-only calls of a Client: who holds what, token checks, the
cluster's status. Linearizable (served by the leader after a barrier) and
needing no session. A mixin of Client, kept apart to keep client.py small.
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_int, c_size_t, c_uint64
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Tuple

from . import _structs
from .errors import Error, StaleTokenError, check
from .records import (
    Grant,
    Holder,
    Leader,
    LockInfo,
    Member,
    MemberRole,
    Mode,
    NodeRole,
    Page,
    SessionHold,
    SessionInfo,
    SessionPage,
    Status,
)
from .request import Name, encode_name

PAGE_MAX = 1000  # what one holders() or list reply carries at most
SESSIONS_MAX = 100  # BATON_SESSIONS_MAX: sessions in one page
WAIT_FOREVER = 0xFFFFFFFF  # a wait's wait_ms until granted
ASK_EACH = 8  # holder sessions asked for one at a time; more walk the pages


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _alarm_names(bits: int) -> Tuple[str, ...]:
    """A node's alarm bits as names: "diverged", and a bit this binding
    does not know as "0x4", as batonctl status says them."""
    return tuple(
        "diverged" if bit == _structs.ALARM_DIVERGED else hex(bit)
        for bit in (1 << i for i in range(32))
        if bits & bit
    )


def _hold(h: Any) -> SessionHold:
    return SessionHold(
        name=h.name.decode("utf-8", "surrogateescape"),
        mode=Mode(h.mode),
        owner=h.owner,
        token=h.token,
        count=h.count,
        permits=h.permits,
        wait_ms=(None if h.wait_ms == WAIT_FOREVER else h.wait_ms)
        if h.waiting
        else None,
    )


def _session(s: Any) -> SessionInfo:
    holds = [(bool(s.holds[i].waiting), _hold(s.holds[i])) for i in range(s.n_holds)]
    return SessionInfo(
        id=s.id,
        client_name=_text(s.client_name),
        identity=_text(s.identity),
        address=_text(s.address),
        ttl_ms=s.ttl_ms,
        lock_delay_ms=s.lock_delay_ms,
        left_ms=None if s.left_ms < 0 else s.left_ms,
        idle_ms=None if s.idle_ms < 0 else s.idle_ms,
        revoked=s.revoked,
        grants=s.n_grants,
        waits=s.n_waits,
        locks=tuple(h for waiting, h in holds if not waiting),
        waiting=tuple(h for waiting, h in holds if waiting),
    )


class Queries:
    """Client's queries (see Client)."""

    _lib: Any
    _call: Callable[..., Any]

    def holder(self, name: Name) -> Holder:
        """Who holds `name` (linearizable; needs no session)."""
        out = _structs.Holder()
        check(
            self._call(self._lib.baton_holder, encode_name(name), byref(out)),
            f"holder {name!r}",
        )
        return Holder(
            held=bool(out.held),
            session=out.session,
            owner=out.owner,
            token=out.token,
            count=out.count,
            waiters=out.waiters,
            index=out.index,
            client_name=_text(out.client_name),
            left_ms=self._sessions_left([out.session]).get(out.session)
            if out.held
            else None,
        )

    def leader(self, name: Name) -> Leader:
        """Who leads the election `name` (baton_leader(); linearizable;
        needs no session). Always a Leader record: `held` is False when no
        one leads (every other field then 0 or ""). KindError when `name`
        is a lock's or a semaphore's."""
        out = _structs.Leader()
        check(
            self._call(self._lib.baton_leader, encode_name(name), byref(out)),
            f"leader {name!r}",
        )
        return Leader(
            held=bool(out.held),
            session=out.session,
            owner=out.owner,
            token=out.token,
            candidates=out.candidates,
            since_s=out.since_s,
            client_name=_text(out.client_name),
            value=out.value.decode("utf-8", "surrogateescape"),
        )

    def holders(self, name: Name, limit: int = PAGE_MAX) -> Page[Grant]:
        """Every grant of the lock or semaphore `name`, oldest first (at
        most `limit`, at most 1000; `.more` says if there were more), each
        with its value."""
        cap = max(1, min(limit, PAGE_MAX))
        out = (_structs.GrantValue * cap)()
        n, more = c_size_t(), c_int()
        check(
            self._call(
                self._lib.baton_holders_values,
                encode_name(name),
                out,
                cap,
                byref(n),
                byref(more),
            ),
            f"holders {name!r}",
        )
        left = self._sessions_left(gv.grant.session for gv in out[: n.value])
        return Page(
            (
                Grant(
                    session=g.session,
                    owner=g.owner,
                    token=g.token,
                    count=g.count,
                    mode=Mode(g.mode),
                    permits=g.permits,
                    limit=g.limit,
                    waiters=g.waiters,
                    client_name=_text(g.client_name),
                    granted_s=g.granted_s,
                    left_ms=left.get(g.session),
                    value=gv.value.decode("utf-8", "surrogateescape"),
                )
                for gv in out[: n.value]
                for g in (gv.grant,)
            ),
            bool(more.value),
        )

    def list_locks(self, prefix: Name = "", limit: int = PAGE_MAX) -> Page[LockInfo]:
        """The held locks whose name starts with `prefix`, oldest first (at
        most `limit`, at most 1000; `.more` says if there were more), each
        with its holder's value (a cluster of release 0.3.0 or later)."""
        cap = max(1, min(limit, PAGE_MAX))
        out = (_structs.LockValue * cap)()
        n, more = c_size_t(), c_int()
        check(
            self._call(
                self._lib.baton_list_values,
                encode_name(prefix) if prefix else None,
                out,
                cap,
                byref(n),
                byref(more),
            ),
            f"list {prefix!r}",
        )
        return Page(
            (
                LockInfo(
                    name=i.name.decode("utf-8", "surrogateescape"),
                    session=i.session,
                    owner=i.owner,
                    token=i.token,
                    count=i.count,
                    waiters=i.waiters,
                    client_name=_text(i.client_name),
                    value=lv.value.decode("utf-8", "surrogateescape"),
                )
                for lv in out[: n.value]
                for i in (lv.lock,)
            ),
            bool(more.value),
        )

    def sessions(self, after: int = 0, limit: int = SESSIONS_MAX) -> SessionPage:
        """A page of the live sessions whose id is above `after` (0: from
        the first), by id, at most `limit` (1..100) (baton_sessions();
        linearizable; needs the read role, no session). The page's `next`
        is the `after` of the next page, 0 on the last."""
        out = POINTER(_structs.Session)()
        n, nxt = c_size_t(), c_uint64()
        check(
            self._call(
                self._lib.baton_sessions,
                after,
                max(1, min(limit, SESSIONS_MAX)),
                byref(out),
                byref(n),
                byref(nxt),
            ),
            f"sessions after {after}",
        )
        try:
            return SessionPage([_session(out[i]) for i in range(n.value)], nxt.value)
        finally:
            self._lib.baton_sessions_free(out, n.value)

    def all_sessions(self) -> Iterator[SessionInfo]:
        """Every live session, by id, a page at a time (sessions())."""
        after = 0
        while True:
            page = self.sessions(after)
            yield from page
            if page.next == 0:
                return
            after = page.next

    def session_info(self, id: int) -> SessionInfo:
        """The live session `id` (baton_session_info(); linearizable; needs
        the read role). NoSessionError when there is none, ExpiredError or
        ClosedError when it ended."""
        out = POINTER(_structs.Session)()
        check(
            self._call(self._lib.baton_session_info, id, byref(out)),
            f"session info {id}",
        )
        try:
            return _session(out[0])
        finally:
            self._lib.baton_sessions_free(out, 1)

    def _sessions_left(self, ids: Iterable[int]) -> Dict[int, Optional[int]]:
        """The leader's time left of each holder session in `ids`, as
        batonctl holder asks for it: session_info() of each for a few,
        a walk through every page (all_sessions()) for more. A session
        that ended or could not be asked about (the read role, no answer)
        is left out, so that the holder's answer still comes."""
        wanted = set(ids)
        left: Dict[int, Optional[int]] = {}
        try:
            if len(wanted) > ASK_EACH:
                for s in self.all_sessions():
                    if s.id in wanted:
                        left[s.id] = s.left_ms
                return left
            for id in wanted:
                try:
                    left[id] = self.session_info(id).left_ms
                except Error:
                    pass
        except Error:
            pass
        return left

    def check(self, name: Name, token: int) -> bool:
        """Whether `token` is still the current grant of `name`
        (linearizable; Chubby's CheckSequencer). False for a stale token."""
        rv = self._call(self._lib.baton_check, encode_name(name), token)
        if rv == StaleTokenError.code:  # an answer, not a failure
            return False
        check(rv, f"check {name!r} token {token}")
        return True

    def status(self, endpoint: Optional[str] = None) -> Status:
        """One node's view of the cluster: `endpoint`'s, or the leader's,
        with its release, formats and alarms (baton_status_alarms())."""
        out = _structs.Status()
        version = _structs.NodeVersion()
        alarms = _structs.NodeAlarms()
        check(
            self._call(
                self._lib.baton_status_alarms,
                endpoint.encode() if endpoint is not None else None,
                byref(out),
                byref(version),
                byref(alarms),
            ),
            f"status of {endpoint or 'the leader'}",
        )
        members = tuple(
            Member(
                id=m.id,
                role=MemberRole(m.role),
                raft_address=_text(m.raft_address),
                client_address=_text(m.client_address),
            )
            for m in out.members[: min(out.n_members, _structs.STATUS_MAX_MEMBERS)]
        )
        return Status(
            endpoint=_text(out.endpoint),
            id=out.id,
            role=NodeRole(out.role),
            term=out.term,
            leader_id=out.leader_id,
            commit_index=out.commit_index,
            applied_index=out.applied_index,
            last_index=out.last_index,
            sessions=out.sessions,
            locks=out.locks,
            waiters=out.waiters,
            members=members,
            version=_text(version.release),
            protocol=version.protocol,
            command_format=version.command,
            snapshot_format=version.snapshot,
            container_format=version.container,
            alarms=_alarm_names(alarms.alarms) if alarms.known else None,
            diverged_index=alarms.diverged_index,
            digest=alarms.digest,
            leader_digest=alarms.leader_digest,
        )
