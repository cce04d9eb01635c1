"""The values Baton's calls return: enums and read-only records.

Numbers of the enums are those of include/baton.h, so they compare equal
to what libbaton reports.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, Iterable, List, NamedTuple, Optional, Tuple, Type, TypeVar

T = TypeVar("T")
E = TypeVar("E", bound=enum.IntEnum)


def open_enum(cls: Type[E], value: int) -> E:
    """cls(value), or for a number this binding does not know (a newer
    cluster's) a member made for it, named UNKNOWN_<value>, that compares
    equal to the number: an event is never refused for its numbers."""
    try:
        return cls(value)
    except ValueError:
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        return member


class SessionState(enum.IntEnum):
    """enum baton_session_state: the state of a client's session."""

    NONE = 0  #: no session opened yet (or it was detached)
    LIVE = 1  #: keepalives are acknowledged
    JEOPARDY = 2  #: no keepalive acknowledged for over TTL/2
    EXPIRED = 3  #: the lease ran out or the cluster ended the session


class LeaseState(enum.IntEnum):
    """The state of one lease (a grant held through a Client).

    LIVE, JEOPARDY and EXPIRED are its session's states and have their
    numbers (baton_session_state()); the others are the lease's own.
    """

    LIVE = 1  #: held, the session's keepalives are acknowledged
    JEOPARDY = 2  #: held, but the session may expire soon
    EXPIRED = 3  #: lost: the session ended (expired, closed, revoked)
    REVOKED = 4  #: lost: an administrator took this grant away
    RELEASED = 5  #: released by this program, or its Client was closed
    DETACHED = 6  #: the session was detached (Client.detach())

    @property
    def held(self) -> bool:
        """Whether the lock is still held (LIVE or JEOPARDY)."""
        return self in (LeaseState.LIVE, LeaseState.JEOPARDY)

    @property
    def lost(self) -> bool:
        """Whether the lock was lost rather than given up."""
        return self in (LeaseState.EXPIRED, LeaseState.REVOKED)


class Mode(enum.IntEnum):
    """enum baton_mode: how a grant holds its lock."""

    EXCLUSIVE = 0  #: a writer (Client.lock())
    SHARED = 1  #: a reader (Client.lock_shared())
    PERMITS = 2  #: permits of a semaphore (Client.semaphore())
    LEADER = 3  #: an election's leader (Client.campaign())


class EventKind(enum.IntEnum):
    """enum baton_event_kind: what a watch's event tells."""

    GRANTED = 1  #: a grant, or an election's leadership
    RELEASED = 2  #: a grant ended; the event's `cause` says how
    PROCLAIMED = 3  #: a grant's value changed (set_value(), proclaim())


class Cause(enum.IntEnum):
    """enum baton_cause: the kind of log entry that made an event."""

    CLOSE = 2  #: the holder's session closed
    EXPIRE = 3  #: its session expired
    ACQUIRE = 4  #: granted at once
    RELEASE = 5  #: released (or handed on by a release)
    CANCEL = 6  #: handed on as a waiter left
    TIMEOUT = 7  #: handed on as a waiter's wait ran out
    ENTRY = 11  #: handed on at an entry's start
    REVOKE = 12  #: an administrator ended the session
    UNBLOCK = 13  #: granted as a lock-delay ended
    MULTI = 14  #: a multi-lock granted at once
    REVOKE_LOCK = 15  #: an administrator took the grant away
    PROCLAIM = 17  #: an election's leader proclaimed
    SET_VALUE = 20  #: the holder changed its grant's value
    EXPIRE_HOLD = 22  #: the grant's hold time ran out


class MemberRole(enum.IntEnum):
    """enum baton_member_role."""

    STANDBY = 0
    VOTER = 1
    SPARE = 2


class NodeRole(enum.IntEnum):
    """enum baton_node_role."""

    UNAVAILABLE = 0
    FOLLOWER = 1
    CANDIDATE = 2
    LEADER = 3


@dataclass(frozen=True)
class Holder:
    """Who holds a lock (Client.holder()); `held` is False when it is free."""

    held: bool
    session: int
    owner: int
    token: int
    count: int
    waiters: int
    index: int  #: the Raft index the answer was read at
    client_name: str
    #: The leader's lease of the holder's session: ms until it expires the
    #: session unless a keepalive comes; None when free or not known.
    left_ms: Optional[int] = None


@dataclass(frozen=True)
class Grant:
    """One grant of a lock or semaphore (Client.holders())."""

    session: int
    owner: int
    token: int
    count: int
    mode: Mode
    permits: int
    limit: int
    waiters: int
    client_name: str
    granted_s: int  #: leader's wall clock at the grant, s; 0 if unknown
    #: The leader's lease of the holder's session, as Holder.left_ms.
    left_ms: Optional[int] = None
    #: The grant's value (Client.lock(value=...), Lease.set_value(), an
    #: election's); "" when it has none.
    value: str = ""


@dataclass(frozen=True)
class LockInfo:
    """One held lock, as Client.list_locks() lists it."""

    name: str
    session: int
    owner: int
    token: int
    count: int
    waiters: int
    client_name: str
    #: The value of the grant it describes (its session and token); ""
    #: when it has none.
    value: str = ""


@dataclass(frozen=True)
class Member:
    """One member of the cluster (Status.members)."""

    id: int
    role: MemberRole
    raft_address: str
    client_address: str


@dataclass(frozen=True)
class Status:
    """One node's view of the cluster (Client.status())."""

    endpoint: str
    id: int
    role: NodeRole
    term: int
    leader_id: int
    commit_index: int
    applied_index: int
    last_index: int
    sessions: int
    locks: int
    waiters: int
    members: Tuple[Member, ...]
    #: the node's Baton release ("0.3.0"); "" from a node before 0.2.0,
    #: which does not say
    version: str = ""
    #: the client protocol version it answered in
    protocol: int = 0
    #: log entries: it reads command versions 1..command_format
    command_format: int = 0
    #: snapshots: it reads versions 1..snapshot_format and writes that one
    snapshot_format: int = 0
    #: the snapshot container (image and tail) it reads and writes
    container_format: int = 0
    #: what the node says is wrong with it ("diverged": its state machine
    #: is not the leader's); None from a node before 0.3.0, which does not
    #: say
    alarms: Optional[Tuple[str, ...]] = None
    #: with "diverged": the log index at which its digest of its state
    #: differed from the leader's, and the two digests
    diverged_index: int = 0
    digest: int = 0
    leader_digest: int = 0


@dataclass(frozen=True)
class BackupInfo:
    """What an online backup holds (Client.backup(), backup_inspect()).
    Tokens are the indexes of the entries that granted them, so every token
    handed out up to the backup is at most `index`."""

    index: int  #: the last entry the state includes
    term: int  #: the leader's term when it was taken
    made_ms: int  #: the leader's wall clock then, ms since the Unix epoch
    size: int  #: bytes of snapshot in the file
    sessions: int
    locks: int
    grants: int
    waiters: int


@dataclass(frozen=True)
class Leader:
    """Who leads an election (Client.leader()). When no one leads, `held`
    is False and every other field is 0 or empty."""

    held: bool
    session: int  #: the leader's session id
    owner: int  #: its owner tag
    token: int  #: the leadership's fencing token
    candidates: int  #: candidates waiting to lead after it
    since_s: int  #: the leader's wall clock when it became leader, s; 0 if unknown
    client_name: str  #: the leader session's client name
    value: str  #: what the leader advertises


class Position(NamedTuple):
    """Where an event is in the cluster's log: the Raft index of the entry
    that made it, and its order among that entry's events (from 1).
    Events come in Position order; pass one to Client.watch() as
    `from_position` to go on after it."""

    # A field named like tuple.index(), which it hides: a position's index
    # is the field.
    index: int  # type: ignore[assignment]
    ord: int


@dataclass(frozen=True)
class Event:
    """One change of a lock name, as a watch reports it (Client.watch())."""

    kind: EventKind
    cause: Cause
    index: int  #: the Raft index of the entry that made it
    ord: int  #: its order among that entry's events (from 1)
    session: int  #: the grant's session
    owner: int  #: its owner tag
    token: int  #: its fencing token
    mode: Mode  #: how the grant holds its name (LEADER: an election)
    permits: int  #: a semaphore grant's permits
    name: str  #: the lock name (bytes decoded as UTF-8, surrogateescape)
    value: str  #: the grant's value (GRANTED, PROCLAIMED); else ""

    @property
    def position(self) -> Position:
        """(index, ord): resume a watch after this event with it."""
        return Position(self.index, self.ord)


@dataclass(frozen=True)
class LeaderChange:
    """One leadership as Client.observe() reports it: who leads the
    election `name` and what it advertises, each new leader or new value
    once."""

    name: str
    token: int  #: the leadership's fencing token
    session: int  #: the leader's session id
    owner: int  #: its owner tag
    value: str  #: what it advertises
    #: The event's position; None when read with Client.leader() (the
    #: leader at the start, or after the watch had to start again).
    position: Optional[Position] = None


@dataclass(frozen=True)
class DetachedSession:
    """A session handed over by Client.detach(): what Client.release_in()
    needs to release its locks from another process."""

    session: int
    secret: bytes


class Page(List[T], Generic[T]):
    """A list of results, with `more` True when the cluster had more than
    it returned (at most 1000 per call)."""

    def __init__(self, items: Iterable[T] = (), more: bool = False) -> None:
        super().__init__(items)
        self.more = more


@dataclass(frozen=True)
class SessionHold:
    """A lock one session holds or waits for (SessionInfo.locks and
    .waiting)."""

    name: str
    mode: Mode
    owner: int
    token: int  #: a grant's fencing token; 0 for a wait
    count: int  #: a grant's reentrant holds; 0 for a wait
    permits: int  #: a semaphore's grant or wait: its permits
    #: A wait's: how long it asked to wait in ms; None until granted.
    wait_ms: Optional[int] = None


@dataclass(frozen=True)
class SessionInfo:
    """A live session, as the leader sees it (Client.sessions(),
    Client.session_info()). client_name, ttl_ms, lock_delay_ms, revoked,
    grants, waits, locks and waiting are the replicated state's; left_ms,
    idle_ms, identity and address only the leader knows."""

    id: int
    client_name: str
    #: The certificate identity and source address of the connection its
    #: client talks to the leader over; "" when none is attached there.
    identity: str
    address: str
    ttl_ms: int
    lock_delay_ms: int
    #: ms until the leader expires it unless a keepalive comes, and since
    #: it last renewed its lease; None when the leader keeps no lease.
    left_ms: Optional[int]
    idle_ms: Optional[int]
    revoked: int  #: its grants an administrator revoked (wrapping)
    grants: int  #: every grant it holds, listed or not
    waits: int  #: every wait it has queued, listed or not
    locks: Tuple[SessionHold, ...]  #: its grants, by token (200 at most)
    waiting: Tuple[SessionHold, ...]  #: its waits, as queued


class SessionPage(Page[SessionInfo]):
    """A page of Client.sessions(): `next` is the `after` of the next page,
    0 when this is the last (`more` is then False)."""

    def __init__(self, items: Iterable[SessionInfo] = (), next: int = 0) -> None:
        super().__init__(items, next != 0)
        self.next = next
