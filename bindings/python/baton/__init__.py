"""Baton from Python: distributed locks with fencing tokens, elections and
watches, over libbaton.

    import baton

    with baton.Client() as client:                 # BATON_ENDPOINTS, BATON_CACERT...
        with client.lock("nightly-report", wait=5.0) as lease:
            print("token", lease.token)
            lease.guard()                          # raises if the lock was lost
        with client.campaign("db-primary", "10.0.0.1:5432") as lead:
            lead.guard()                           # a Lease: lost as a lock is
        for event in client.watch("jobs/", prefix=True):
            print(event.kind.name, event.name, event.position)

The binding calls libbaton (ctypes): the lease dated from the send time,
jeopardy, the lost-lock callback and exactly-once retries are the C
library's. See docs/python.md.
"""

from __future__ import annotations

from . import owners
from ._library import load as _load
from ._library import loaded_path as _loaded_path
from .client import Client
from .config import DEFAULT_ENDPOINTS, TLS
from .errors import (
    CODES,
    AlreadyWaitingError,
    BusyError,
    ClosedError,
    ClusterUnavailable,
    CompactedError,
    ConflictError,
    CorruptError,
    Error,
    ExpiredError,
    HeldError,
    InflightError,
    InvalidArgumentError,
    InvalidNameError,
    InvalidRequest,
    InvalidTTLError,
    JeopardyError,
    KindError,
    LimitError,
    LockDelayError,
    LockLost,
    MalformedError,
    MembershipChangeError,
    NoAnswerError,
    NoSessionError,
    NoSpaceError,
    NotFoundError,
    NotHolderError,
    NotLeaderError,
    NotWaitingError,
    OutOfMemoryError,
    PermissionDeniedError,
    PermitsError,
    ReentrancyOverflowError,
    RevokedError,
    SequenceError,
    ServerError,
    ServerIOError,
    ShuttingDownError,
    SlowError,
    StaleTokenError,
    TimedOutError,
    TLSError,
    TooBigError,
    TooManyConnectionsError,
    TooManyHoldersError,
    TooManyLocksError,
    TooManyNamesError,
    TooManyPermitsError,
    TooManySessionsError,
    TooManyWaitersError,
    TooManyWatchesError,
    NoBackupError,
    NotReadyError,
    NoMemberError,
    IdInUseError,
    IsLeaderError,
    UnreachableError,
    ConnectError,
    NotVoterError,
    AddressInUseError,
    QuotaError,
    UnavailableError,
    UnknownOutcomeError,
    UnsupportedError,
    UpgradeError,
    VersionError,
    WaitCancelledError,
    WatchEnded,
    error_for,
)
from .election import CampaignRequest, Leadership
from .fence import Fence, Fences
from .lease import Lease
from .request import LockRequest, Name, NameSpec, Value
from .admin import backup_inspect
from .records import (
    BackupInfo,
    Cause,
    DetachedSession,
    Event,
    EventKind,
    Grant,
    Holder,
    Leader,
    LeaderChange,
    LeaseState,
    LockInfo,
    Member,
    MemberRole,
    Mode,
    NodeRole,
    Page,
    Position,
    SessionHold,
    SessionInfo,
    SessionPage,
    SessionState,
    Status,
)
from .watch import AsyncObserver, AsyncWatch, CallbackWatch, Observer, Watch

__version__ = "0.3.0"


def library_version() -> str:
    """The version of the libbaton in use (baton_version())."""
    return str(_load().baton_version().decode())


def library_path() -> str:
    """Where libbaton was loaded from (loading it if needed)."""
    _load()
    path = _loaded_path()
    assert path is not None
    return path


__all__ = [
    "__version__",
    "AlreadyWaitingError",
    "AsyncObserver",
    "AsyncWatch",
    "BusyError",
    "CallbackWatch",
    "CampaignRequest",
    "Cause",
    "Client",
    "ClosedError",
    "ClusterUnavailable",
    "CODES",
    "CompactedError",
    "ConflictError",
    "CorruptError",
    "DEFAULT_ENDPOINTS",
    "DetachedSession",
    "Error",
    "error_for",
    "Event",
    "EventKind",
    "ExpiredError",
    "Fence",
    "Fences",
    "Grant",
    "HeldError",
    "Holder",
    "InflightError",
    "InvalidArgumentError",
    "InvalidNameError",
    "InvalidRequest",
    "InvalidTTLError",
    "JeopardyError",
    "KindError",
    "Leader",
    "LeaderChange",
    "Leadership",
    "Lease",
    "LeaseState",
    "library_path",
    "library_version",
    "LimitError",
    "LockDelayError",
    "LockInfo",
    "LockLost",
    "LockRequest",
    "MalformedError",
    "Member",
    "MemberRole",
    "MembershipChangeError",
    "Mode",
    "Name",
    "NameSpec",
    "NoAnswerError",
    "NodeRole",
    "NoSessionError",
    "NoSpaceError",
    "NotFoundError",
    "NotHolderError",
    "NotLeaderError",
    "NotWaitingError",
    "Observer",
    "OutOfMemoryError",
    "owners",
    "Page",
    "PermissionDeniedError",
    "PermitsError",
    "Position",
    "ReentrancyOverflowError",
    "RevokedError",
    "SequenceError",
    "ServerError",
    "ServerIOError",
    "SessionHold",
    "SessionInfo",
    "SessionPage",
    "SessionState",
    "ShuttingDownError",
    "SlowError",
    "StaleTokenError",
    "Status",
    "BackupInfo",
    "backup_inspect",
    "TimedOutError",
    "TLS",
    "TLSError",
    "TooBigError",
    "TooManyConnectionsError",
    "TooManyHoldersError",
    "TooManyLocksError",
    "TooManyNamesError",
    "TooManyPermitsError",
    "TooManySessionsError",
    "TooManyWaitersError",
    "TooManyWatchesError",
    "NoBackupError",
    "NotReadyError",
    "NoMemberError",
    "IdInUseError",
    "IsLeaderError",
    "UnreachableError",
    "ConnectError",
    "NotVoterError",
    "AddressInUseError",
    "QuotaError",
    "UnavailableError",
    "UnknownOutcomeError",
    "UnsupportedError",
    "UpgradeError",
    "Value",
    "VersionError",
    "WaitCancelledError",
    "Watch",
    "WatchEnded",
]
