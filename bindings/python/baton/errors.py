"""Baton's exceptions: one class per BATON_E* code, from one table.

Every failure of a libbaton call raises a subclass of `Error` carrying the
code (`e.code`, negative as in C), its name (`e.name`, "BATON_EBUSY"), the
library's text for it (`e.message`, baton_strerror()) and what the library
knew of the cause (`e.detail`, baton_errmsg(): which endpoint refused and
why, the TLS verification result, what the nodes answered). Related codes
share a base class, so that `except baton.LockLost` catches every way of
losing a lock, and classes that mean what a builtin exception means also
derive from it (`TimedOutError` is a `TimeoutError`, `InvalidNameError` a
`ValueError`, `PermissionDeniedError` a `PermissionError`).

`CODES` below is the one table of codes: it copies BATON_ERROR_MAP of
include/baton.h, and tests/test_errors.py checks it against the header and
against baton_errname() and baton_strerror() for every code.
"""

from __future__ import annotations

from typing import Dict, NamedTuple, Optional, Tuple, Type


class Error(Exception):
    """A Baton call failed. Base of every exception this package raises for
    a BATON_E* code.

    Attributes: `code` (the negative BATON_E* number), `name`
    ("BATON_EBUSY"), `message` (baton_strerror()'s text), `detail`
    (baton_errmsg()'s: what libbaton knew of the cause, e.g. "cannot
    connect to any node: 127.0.0.1:7101: connection refused"; `message`
    when it knew no more) and `context` (what was being done, e.g.
    "acquire 'jobs'"; may be empty). The text is the context, the detail
    and the name.
    """

    #: The code this class stands for; 0 for a group of codes.
    code: int = 0

    def __init__(
        self, code: Optional[int] = None, context: str = "", detail: str = ""
    ) -> None:
        if code is None:
            code = type(self).code
        self.code = code
        self.name = errname(code)
        self.message = strerror(code)
        self.detail = detail or self.message
        self.context = context
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.context}: " if self.context else ""
        return f"{where}{self.detail} ({self.name})"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Picklable (multiprocessing): rebuild from the code, context and
        # detail.
        return (type(self), (self.code, self.context, self.detail))


# --- Groups: one base for related codes ----------------------------------


class LockLost(Error):
    """The lock is gone or can no longer be trusted: the session ended, an
    administrator revoked the grant, or (from Lease.guard()) the session is
    in jeopardy."""


class InvalidRequest(Error, ValueError):
    """The request itself is wrong (a bad name, argument, TTL...)."""


class ConflictError(Error):
    """The lock's current state forbids the request (another kind of lock
    under this name, an upgrade others block, a second wait...)."""


class LimitError(Error):
    """A limit of the library or the cluster was reached."""


class ClusterUnavailable(Error):
    """The cluster could not serve the call: no answer in time, no leader,
    a node shutting down. Retries of libbaton are exhausted by then."""


class ServerError(Error):
    """A node failed on its side (memory, disk, a corrupt snapshot)."""


class WatchEnded(Error):
    """A watch ended before it was closed, after every event before the end
    was delivered: open it again (from the last event's position, or from
    now after reading the state again)."""


# --- One class per code ----------------------------------------------------


class OutOfMemoryError(ServerError):
    """BATON_ENOMEM."""


class InvalidArgumentError(InvalidRequest):
    """BATON_EINVAL."""


class MalformedError(InvalidRequest):
    """BATON_EMALFORMED."""


class VersionError(InvalidRequest):
    """BATON_EVERSION."""


class InvalidNameError(InvalidRequest):
    """BATON_ENAME: a lock name must be 1..255 bytes without NUL."""


class NoSessionError(LockLost):
    """BATON_ENOSESSION."""


class ExpiredError(LockLost):
    """BATON_EEXPIRED: the session expired; its locks are lost."""


class ClosedError(LockLost):
    """BATON_ECLOSED."""


class BusyError(Error):
    """BATON_EBUSY: a try found the lock held by another owner."""


class NotHolderError(Error):
    """BATON_ENOTHOLDER: not the holder of this lock (already released, or
    taken away)."""


class StaleTokenError(Error):
    """BATON_ESTALE: the token is not the current grant (fencing)."""


class TimedOutError(Error, TimeoutError):
    """BATON_ETIMEDOUT: the wait for the lock ran out."""


class WaitCancelledError(ConflictError):
    """BATON_ECANCELLED."""


class NotWaitingError(ConflictError):
    """BATON_ENOTWAITING."""


class AlreadyWaitingError(ConflictError):
    """BATON_EWAITING: the owner already waits for this lock in another
    thread."""


class TooManySessionsError(LimitError):
    """BATON_ETOOMANYSESSIONS."""


class TooManyLocksError(LimitError):
    """BATON_ETOOMANYLOCKS."""


class TooManyWaitersError(LimitError):
    """BATON_ETOOMANYWAITERS."""


class InflightError(LimitError):
    """BATON_EINFLIGHT."""


class SequenceError(ConflictError):
    """BATON_ESEQ."""


class InvalidTTLError(InvalidRequest):
    """BATON_ETTL: the session TTL is outside the cluster's range."""


class UnsupportedError(InvalidRequest):
    """BATON_EUNSUPPORTED."""


class ReentrancyOverflowError(LimitError):
    """BATON_EOVERFLOW: the reentrancy count would overflow."""


class CorruptError(ServerError):
    """BATON_ECORRUPT."""


class NotFoundError(Error, LookupError):
    """BATON_ENOTFOUND."""


class NotLeaderError(ClusterUnavailable):
    """BATON_ENOTLEADER."""


class UnknownOutcomeError(ClusterUnavailable):
    """BATON_EUNKNOWN."""


class TooBigError(LimitError):
    """BATON_ETOOBIG."""


class TooManyConnectionsError(LimitError):
    """BATON_ETOOMANYCONNS."""


class UnavailableError(ClusterUnavailable):
    """BATON_EUNAVAILABLE: no leader."""


class ShuttingDownError(ClusterUnavailable):
    """BATON_ESHUTDOWN."""


class ServerIOError(ServerError):
    """BATON_EIO: an I/O error (for baton_status(): no connection)."""


class NoSpaceError(ServerError):
    """BATON_ENOSPC."""


class MembershipChangeError(ConflictError):
    """BATON_ECANTCHANGE: a membership change is already in progress."""


class NoAnswerError(ClusterUnavailable, TimeoutError):
    """BATON_ENOANSWER: no answer from the cluster in time; the outcome is
    unknown (libbaton finishes the request in the background)."""


class TLSError(Error):
    """BATON_ETLS: a TLS file cannot be read, or a handshake was refused."""


class PermissionDeniedError(Error, PermissionError):
    """BATON_EPERM: the client's role (or a wrong secret) does not allow it."""


class UpgradeError(ConflictError):
    """BATON_EUPGRADE: other readers hold the lock, so this reader cannot
    take the write lock."""


class KindError(ConflictError):
    """BATON_EKIND: the name is in use by another kind of lock."""


class PermitsError(ConflictError):
    """BATON_EPERMITS: the semaphore exists with another number of permits."""


class TooManyPermitsError(LimitError):
    """BATON_ETOOMANYPERMITS."""


class HeldError(ConflictError):
    """BATON_EHELD: the owner already holds this semaphore, or a name of
    the multi-lock."""


class TooManyHoldersError(LimitError):
    """BATON_ETOOMANYHOLDERS."""


class TooManyNamesError(LimitError):
    """BATON_ETOOMANYNAMES."""


class LockDelayError(InvalidRequest):
    """BATON_EDELAY: the lock-delay asked for is above the cluster's
    max-lock-delay-ms."""


class CompactedError(WatchEnded):
    """BATON_ECOMPACTED: the node no longer keeps the events after the
    position asked for (its watch-history): read the state again
    (holders(), leader()) and watch from now."""


class SlowError(WatchEnded):
    """BATON_ESLOW: the watcher fell too far behind and was cut off (by
    the server's output-limit, or libbaton's 65,536 undelivered events):
    resume from the last event taken."""


class TooManyWatchesError(LimitError):
    """BATON_ETOOMANYWATCHES: the node's max-watches or the connection's
    max-watches-per-connection."""


class NoBackupError(Error, LookupError):
    """BATON_ENOBACKUP: the node no longer holds the backup being read
    (finished, idle for a minute, or another connection's)."""


class NotReadyError(ClusterUnavailable):
    """BATON_ENOTREADY: the node is making a snapshot or serving other
    backups; ask again shortly."""


class NoMemberError(InvalidRequest, LookupError):
    """BATON_ENOMEMBER: no member has that id (a transfer or a removal)."""


class IdInUseError(ConflictError):
    """BATON_EIDINUSE: a member with that id exists already, with other
    addresses."""


class IsLeaderError(ConflictError):
    """BATON_EISLEADER: the transfer's target leads already."""


class UnreachableError(ClusterUnavailable):
    """BATON_EUNREACHABLE: the member cannot be reached (a node being added
    did not answer at its raft address, or a transfer's target is down)."""


class ConnectError(ClusterUnavailable, ConnectionError):
    """BATON_ECONNECT: no node of the cluster could be reached; the message
    says what each endpoint answered."""


class NotVoterError(InvalidRequest):
    """BATON_ENOTVOTER: the transfer's target is a spare or a standby, which
    cannot lead (or no other member votes)."""


class AddressInUseError(ConflictError):
    """BATON_EADDRINUSE: a member being added names a raft or client address
    that another member has."""


class QuotaError(LimitError):
    """BATON_EQUOTA: a quota of the client certificate's identity (sessions,
    locks, waiters, watches or requests per second) is used up; it frees as
    the identity's sessions release and end, or (requests per second) as
    time passes."""


# --- Raised by the binding itself, never by libbaton ------------------------


class RevokedError(LockLost, NotHolderError):
    """An administrator revoked this grant (baton_revoke()); the session
    lives on. Carries BATON_ENOTHOLDER, what a release of it answers (or
    BATON_ESTALE, when the release found the owner holding the lock again
    under a newer token). Lease.release() and leaving a `with`/`async
    with` raise it whether the revoke reached this client first or the
    release learnt it from the cluster."""


class JeopardyError(LockLost):
    """Lease.guard() found the session in jeopardy: no keepalive has been
    acknowledged for over half the TTL, so the lock may be lost before the
    next step ends. Carries BATON_ENOANSWER, which is what it is."""


class Code(NamedTuple):
    """One row of the table: BATON_<name> = number, with its text and class."""

    name: str
    number: int
    text: str
    cls: Type[Error]


# The one table of codes: BATON_ERROR_MAP of include/baton.h, in its order.
# New codes are appended there, and here.
CODES: Tuple[Code, ...] = (
    Code("ENOMEM", -1, "out of memory", OutOfMemoryError),
    Code("EINVAL", -2, "invalid argument", InvalidArgumentError),
    Code("EMALFORMED", -3, "malformed command or frame", MalformedError),
    Code("EVERSION", -4, "unsupported encoding version", VersionError),
    Code(
        "ENAME",
        -5,
        "invalid lock name (must be 1..255 bytes without NUL)",
        InvalidNameError,
    ),
    Code("ENOSESSION", -6, "no such session", NoSessionError),
    Code("EEXPIRED", -7, "session expired", ExpiredError),
    Code("ECLOSED", -8, "session closed", ClosedError),
    Code("EBUSY", -9, "lock is held by another owner", BusyError),
    Code("ENOTHOLDER", -10, "not the holder of this lock", NotHolderError),
    Code("ESTALE", -11, "stale token: not the current grant", StaleTokenError),
    Code("ETIMEDOUT", -12, "wait timed out", TimedOutError),
    Code("ECANCELLED", -13, "wait cancelled", WaitCancelledError),
    Code("ENOTWAITING", -14, "not waiting for this lock", NotWaitingError),
    Code("EWAITING", -15, "already waiting for this lock", AlreadyWaitingError),
    Code("ETOOMANYSESSIONS", -16, "too many sessions", TooManySessionsError),
    Code(
        "ETOOMANYLOCKS",
        -17,
        "too many locks held or awaited by this session",
        TooManyLocksError,
    ),
    Code("ETOOMANYWAITERS", -18, "too many waiters for this lock", TooManyWaitersError),
    Code(
        "EINFLIGHT",
        -19,
        "too many unacknowledged requests in this session",
        InflightError,
    ),
    Code("ESEQ", -20, "sequence number already acknowledged", SequenceError),
    Code("ETTL", -21, "session TTL out of range", InvalidTTLError),
    Code("EUNSUPPORTED", -22, "lock mode not supported", UnsupportedError),
    Code("EOVERFLOW", -23, "reentrancy count overflow", ReentrancyOverflowError),
    Code("ECORRUPT", -24, "snapshot corrupt or truncated", CorruptError),
    Code("ENOTFOUND", -25, "no such lock", NotFoundError),
    Code("ENOTLEADER", -26, "not the leader", NotLeaderError),
    Code(
        "EUNKNOWN",
        -27,
        "outcome unknown: retry with the same sequence number",
        UnknownOutcomeError,
    ),
    Code("ETOOBIG", -28, "frame too large", TooBigError),
    Code("ETOOMANYCONNS", -29, "too many connections", TooManyConnectionsError),
    Code("EUNAVAILABLE", -30, "cluster unavailable: no leader", UnavailableError),
    Code("ESHUTDOWN", -31, "node is shutting down", ShuttingDownError),
    Code("EIO", -32, "I/O error", ServerIOError),
    Code("ENOSPC", -33, "no space left on device", NoSpaceError),
    Code(
        "ECANTCHANGE",
        -34,
        "a membership change is already in progress",
        MembershipChangeError,
    ),
    Code("ENOANSWER", -35, "timed out waiting for an answer", NoAnswerError),
    Code("ETLS", -36, "TLS handshake failed or certificate refused", TLSError),
    Code("EPERM", -37, "permission denied", PermissionDeniedError),
    Code(
        "EUPGRADE",
        -38,
        "cannot upgrade to the write lock: other readers hold it",
        UpgradeError,
    ),
    Code("EKIND", -39, "the name is in use by another kind of lock", KindError),
    Code(
        "EPERMITS",
        -40,
        "the semaphore exists with another number of permits",
        PermitsError,
    ),
    Code(
        "ETOOMANYPERMITS",
        -41,
        "more permits than the cluster allows (max-permits)",
        TooManyPermitsError,
    ),
    Code(
        "EHELD",
        -42,
        "the owner already holds this semaphore, or a name of the multi-lock",
        HeldError,
    ),
    Code(
        "ETOOMANYHOLDERS",
        -43,
        "too many holders of this lock (max-holders-per-lock)",
        TooManyHoldersError,
    ),
    Code(
        "ETOOMANYNAMES",
        -44,
        "more names in one multi-lock than the cluster allows (max-names-per-acquire)",
        TooManyNamesError,
    ),
    Code(
        "EDELAY",
        -45,
        "lock-delay above the cluster's max-lock-delay-ms",
        LockDelayError,
    ),
    Code(
        "ECOMPACTED",
        -46,
        "the watch's events from there on are no longer kept: read the state again",
        CompactedError,
    ),
    Code("ESLOW", -47, "the watcher fell too far behind and was cut off", SlowError),
    Code(
        "ETOOMANYWATCHES",
        -48,
        "too many watches on this connection or node (max-watches-per-connection, "
        "max-watches)",
        TooManyWatchesError,
    ),
    Code(
        "ENOBACKUP",
        -49,
        "no such backup on this node: finished, idle for a minute, or another "
        "connection's",
        NoBackupError,
    ),
    Code(
        "ENOTREADY",
        -50,
        "not ready: the node is making a snapshot or serving other backups; ask "
        "again shortly",
        NotReadyError,
    ),
    Code("ENOMEMBER", -51, "no such member", NoMemberError),
    Code("EIDINUSE", -52, "a member with this id exists already", IdInUseError),
    Code("EISLEADER", -53, "that member is the leader already", IsLeaderError),
    Code("EUNREACHABLE", -54, "the member cannot be reached", UnreachableError),
    Code(
        "ECONNECT",
        -55,
        "cannot connect to any node of the cluster",
        ConnectError,
    ),
    Code(
        "ENOTVOTER",
        -56,
        "that member does not vote, so it cannot lead",
        NotVoterError,
    ),
    Code("EADDRINUSE", -57, "another member has this address", AddressInUseError),
    Code("EQUOTA", -58, "a quota of this client's identity is used up", QuotaError),
)

BY_NUMBER: Dict[int, Code] = {row.number: row for row in CODES}

# The table gives each class its code, so a class is never out of step with
# its row.
for _row in CODES:
    _row.cls.code = _row.number
del _row
RevokedError.code = NotHolderError.code
JeopardyError.code = NoAnswerError.code


def errname(code: int) -> str:
    """ "BATON_EBUSY" for -9, "BATON_OK" for 0, "BATON_E?" for an unknown
    code; as baton_errname()."""
    if code == 0:
        return "BATON_OK"
    row = BY_NUMBER.get(code)
    return "BATON_" + row.name if row is not None else "BATON_E?"


def strerror(code: int) -> str:
    """The library's text for `code` (baton_strerror()), or the table's when
    libbaton is not loaded."""
    from . import _library

    lib = _library._lib
    if lib is not None:
        text = lib.baton_strerror(code)
        return str(text.decode("utf-8", "replace")) if text else ""
    row = BY_NUMBER.get(code)
    return row.text if row is not None else "unknown error"


def last_detail(code: int) -> str:
    """What the calling thread's last libbaton call that failed with `code`
    knew of the cause (baton_errmsg()); "" when it knew no more than the
    code says. As errno, it belongs to the thread that made the call: ask
    on that thread, before it makes another call."""
    from . import _library

    lib = _library._lib
    if lib is None or code == 0:
        return ""
    text = lib.baton_errmsg(code)
    detail = str(text.decode("utf-8", "replace")) if text else ""
    return "" if detail == strerror(code) else detail


def error_for(code: int, context: str = "", detail: str = "") -> Error:
    """The exception for a negative BATON_E* `code` (a plain `Error` for a
    code this table does not know, e.g. a newer server's), with `detail`
    (see Error)."""
    row = BY_NUMBER.get(code)
    cls: Type[Error] = row.cls if row is not None else Error
    return cls(code, context, detail)


def failure(code: int, context: str = "") -> Error:
    """The exception for a libbaton call that has just returned `code` on
    this thread, with libbaton's detail of it (last_detail())."""
    return error_for(code, context, last_detail(code))


def check(code: int, context: str = "") -> None:
    """Raise the exception for `code` unless it is 0. For the result of a
    libbaton call, on the thread that made it, right after it: the
    exception carries libbaton's detail of the failure."""
    if code != 0:
        raise failure(code, context)
