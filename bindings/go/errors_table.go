// The error table of include/baton/errors.h (BATON_ERROR_MAP), written out
// for Go. TestErrorTableIsTheHeader fails when the two differ.

package baton

// The BATON_E* codes, one sentinel each: errors.Is(err, baton.ErrBusy).
var (
	// ErrNoMem is BATON_ENOMEM (-1): out of memory.
	ErrNoMem = &Error{Code: -1, Name: "BATON_ENOMEM", Text: "out of memory"}
	// ErrInvalid is BATON_EINVAL (-2): invalid argument.
	ErrInvalid = &Error{Code: -2, Name: "BATON_EINVAL", Text: "invalid argument"}
	// ErrMalformed is BATON_EMALFORMED (-3): malformed command or frame.
	ErrMalformed = &Error{Code: -3, Name: "BATON_EMALFORMED", Text: "malformed command or frame"}
	// ErrVersion is BATON_EVERSION (-4): unsupported encoding version.
	ErrVersion = &Error{Code: -4, Name: "BATON_EVERSION", Text: "unsupported encoding version"}
	// ErrName is BATON_ENAME (-5): invalid lock name (must be 1..255 bytes without NUL).
	ErrName = &Error{Code: -5, Name: "BATON_ENAME", Text: "invalid lock name (must be 1..255 bytes without NUL)"}
	// ErrNoSession is BATON_ENOSESSION (-6): no such session.
	ErrNoSession = &Error{Code: -6, Name: "BATON_ENOSESSION", Text: "no such session"}
	// ErrExpired is BATON_EEXPIRED (-7): session expired.
	ErrExpired = &Error{Code: -7, Name: "BATON_EEXPIRED", Text: "session expired"}
	// ErrClosed is BATON_ECLOSED (-8): session closed.
	ErrClosed = &Error{Code: -8, Name: "BATON_ECLOSED", Text: "session closed"}
	// ErrBusy is BATON_EBUSY (-9): lock is held by another owner.
	ErrBusy = &Error{Code: -9, Name: "BATON_EBUSY", Text: "lock is held by another owner"}
	// ErrNotHolder is BATON_ENOTHOLDER (-10): not the holder of this lock.
	ErrNotHolder = &Error{Code: -10, Name: "BATON_ENOTHOLDER", Text: "not the holder of this lock"}
	// ErrStale is BATON_ESTALE (-11): stale token: not the current grant.
	ErrStale = &Error{Code: -11, Name: "BATON_ESTALE", Text: "stale token: not the current grant"}
	// ErrTimedOut is BATON_ETIMEDOUT (-12): wait timed out.
	ErrTimedOut = &Error{Code: -12, Name: "BATON_ETIMEDOUT", Text: "wait timed out"}
	// ErrCancelled is BATON_ECANCELLED (-13): wait cancelled.
	ErrCancelled = &Error{Code: -13, Name: "BATON_ECANCELLED", Text: "wait cancelled"}
	// ErrNotWaiting is BATON_ENOTWAITING (-14): not waiting for this lock.
	ErrNotWaiting = &Error{Code: -14, Name: "BATON_ENOTWAITING", Text: "not waiting for this lock"}
	// ErrWaiting is BATON_EWAITING (-15): already waiting for this lock.
	ErrWaiting = &Error{Code: -15, Name: "BATON_EWAITING", Text: "already waiting for this lock"}
	// ErrTooManySessions is BATON_ETOOMANYSESSIONS (-16): too many sessions.
	ErrTooManySessions = &Error{Code: -16, Name: "BATON_ETOOMANYSESSIONS", Text: "too many sessions"}
	// ErrTooManyLocks is BATON_ETOOMANYLOCKS (-17): too many locks held or awaited by this session.
	ErrTooManyLocks = &Error{Code: -17, Name: "BATON_ETOOMANYLOCKS", Text: "too many locks held or awaited by this session"}
	// ErrTooManyWaiters is BATON_ETOOMANYWAITERS (-18): too many waiters for this lock.
	ErrTooManyWaiters = &Error{Code: -18, Name: "BATON_ETOOMANYWAITERS", Text: "too many waiters for this lock"}
	// ErrInflight is BATON_EINFLIGHT (-19): too many unacknowledged requests in this session.
	ErrInflight = &Error{Code: -19, Name: "BATON_EINFLIGHT", Text: "too many unacknowledged requests in this session"}
	// ErrSeq is BATON_ESEQ (-20): sequence number already acknowledged.
	ErrSeq = &Error{Code: -20, Name: "BATON_ESEQ", Text: "sequence number already acknowledged"}
	// ErrTTL is BATON_ETTL (-21): session TTL out of range.
	ErrTTL = &Error{Code: -21, Name: "BATON_ETTL", Text: "session TTL out of range"}
	// ErrUnsupported is BATON_EUNSUPPORTED (-22): lock mode not supported.
	ErrUnsupported = &Error{Code: -22, Name: "BATON_EUNSUPPORTED", Text: "lock mode not supported"}
	// ErrOverflow is BATON_EOVERFLOW (-23): reentrancy count overflow.
	ErrOverflow = &Error{Code: -23, Name: "BATON_EOVERFLOW", Text: "reentrancy count overflow"}
	// ErrCorrupt is BATON_ECORRUPT (-24): snapshot corrupt or truncated.
	ErrCorrupt = &Error{Code: -24, Name: "BATON_ECORRUPT", Text: "snapshot corrupt or truncated"}
	// ErrNotFound is BATON_ENOTFOUND (-25): no such lock.
	ErrNotFound = &Error{Code: -25, Name: "BATON_ENOTFOUND", Text: "no such lock"}
	// ErrNotLeader is BATON_ENOTLEADER (-26): not the leader.
	ErrNotLeader = &Error{Code: -26, Name: "BATON_ENOTLEADER", Text: "not the leader"}
	// ErrUnknown is BATON_EUNKNOWN (-27): outcome unknown: retry with the same sequence number.
	ErrUnknown = &Error{Code: -27, Name: "BATON_EUNKNOWN", Text: "outcome unknown: retry with the same sequence number"}
	// ErrTooBig is BATON_ETOOBIG (-28): frame too large.
	ErrTooBig = &Error{Code: -28, Name: "BATON_ETOOBIG", Text: "frame too large"}
	// ErrTooManyConns is BATON_ETOOMANYCONNS (-29): too many connections.
	ErrTooManyConns = &Error{Code: -29, Name: "BATON_ETOOMANYCONNS", Text: "too many connections"}
	// ErrUnavailable is BATON_EUNAVAILABLE (-30): cluster unavailable: no leader.
	ErrUnavailable = &Error{Code: -30, Name: "BATON_EUNAVAILABLE", Text: "cluster unavailable: no leader"}
	// ErrShutdown is BATON_ESHUTDOWN (-31): node is shutting down.
	ErrShutdown = &Error{Code: -31, Name: "BATON_ESHUTDOWN", Text: "node is shutting down"}
	// ErrIO is BATON_EIO (-32): I/O error.
	ErrIO = &Error{Code: -32, Name: "BATON_EIO", Text: "I/O error"}
	// ErrNoSpace is BATON_ENOSPC (-33): no space left on device.
	ErrNoSpace = &Error{Code: -33, Name: "BATON_ENOSPC", Text: "no space left on device"}
	// ErrCantChange is BATON_ECANTCHANGE (-34): a membership change is already in progress.
	ErrCantChange = &Error{Code: -34, Name: "BATON_ECANTCHANGE", Text: "a membership change is already in progress"}
	// ErrNoAnswer is BATON_ENOANSWER (-35): timed out waiting for an answer.
	ErrNoAnswer = &Error{Code: -35, Name: "BATON_ENOANSWER", Text: "timed out waiting for an answer"}
	// ErrTLS is BATON_ETLS (-36): TLS handshake failed or certificate refused.
	ErrTLS = &Error{Code: -36, Name: "BATON_ETLS", Text: "TLS handshake failed or certificate refused"}
	// ErrPerm is BATON_EPERM (-37): permission denied.
	ErrPerm = &Error{Code: -37, Name: "BATON_EPERM", Text: "permission denied"}
	// ErrUpgrade is BATON_EUPGRADE (-38): cannot upgrade to the write lock: other readers hold it.
	ErrUpgrade = &Error{Code: -38, Name: "BATON_EUPGRADE", Text: "cannot upgrade to the write lock: other readers hold it"}
	// ErrKind is BATON_EKIND (-39): the name is in use by another kind of lock.
	ErrKind = &Error{Code: -39, Name: "BATON_EKIND", Text: "the name is in use by another kind of lock"}
	// ErrPermits is BATON_EPERMITS (-40): the semaphore exists with another number of permits.
	ErrPermits = &Error{Code: -40, Name: "BATON_EPERMITS", Text: "the semaphore exists with another number of permits"}
	// ErrTooManyPermits is BATON_ETOOMANYPERMITS (-41): more permits than the cluster allows (max-permits).
	ErrTooManyPermits = &Error{Code: -41, Name: "BATON_ETOOMANYPERMITS", Text: "more permits than the cluster allows (max-permits)"}
	// ErrHeld is BATON_EHELD (-42): the owner already holds this semaphore, or a name of the multi-lock.
	ErrHeld = &Error{Code: -42, Name: "BATON_EHELD", Text: "the owner already holds this semaphore, or a name of the multi-lock"}
	// ErrTooManyHolders is BATON_ETOOMANYHOLDERS (-43): too many holders of this lock (max-holders-per-lock).
	ErrTooManyHolders = &Error{Code: -43, Name: "BATON_ETOOMANYHOLDERS", Text: "too many holders of this lock (max-holders-per-lock)"}
	// ErrTooManyNames is BATON_ETOOMANYNAMES (-44): more names in one multi-lock than the cluster allows (max-names-per-acquire).
	ErrTooManyNames = &Error{Code: -44, Name: "BATON_ETOOMANYNAMES", Text: "more names in one multi-lock than the cluster allows (max-names-per-acquire)"}
	// ErrDelay is BATON_EDELAY (-45): lock-delay above the cluster's max-lock-delay-ms.
	ErrDelay = &Error{Code: -45, Name: "BATON_EDELAY", Text: "lock-delay above the cluster's max-lock-delay-ms"}
	// ErrCompacted is BATON_ECOMPACTED (-46): the watch's events from there on are no longer kept: read the state again.
	ErrCompacted = &Error{Code: -46, Name: "BATON_ECOMPACTED", Text: "the watch's events from there on are no longer kept: read the state again"}
	// ErrSlow is BATON_ESLOW (-47): the watcher fell too far behind and was cut off.
	ErrSlow = &Error{Code: -47, Name: "BATON_ESLOW", Text: "the watcher fell too far behind and was cut off"}
	// ErrTooManyWatches is BATON_ETOOMANYWATCHES (-48): too many watches on this connection or node (max-watches-per-connection, max-watches).
	ErrTooManyWatches = &Error{Code: -48, Name: "BATON_ETOOMANYWATCHES", Text: "too many watches on this connection or node (max-watches-per-connection, max-watches)"}
	// ErrNoBackup is BATON_ENOBACKUP (-49): no such backup on this node: finished, idle for a minute, or another connection's.
	ErrNoBackup = &Error{Code: -49, Name: "BATON_ENOBACKUP", Text: "no such backup on this node: finished, idle for a minute, or another connection's"}
	// ErrNotReady is BATON_ENOTREADY (-50): not ready: the node is making a snapshot or serving other backups; ask again shortly.
	ErrNotReady = &Error{Code: -50, Name: "BATON_ENOTREADY", Text: "not ready: the node is making a snapshot or serving other backups; ask again shortly"}
	// ErrNoMember is BATON_ENOMEMBER (-51): no such member.
	ErrNoMember = &Error{Code: -51, Name: "BATON_ENOMEMBER", Text: "no such member"}
	// ErrIDInUse is BATON_EIDINUSE (-52): a member with this id exists already.
	ErrIDInUse = &Error{Code: -52, Name: "BATON_EIDINUSE", Text: "a member with this id exists already"}
	// ErrIsLeader is BATON_EISLEADER (-53): that member is the leader already.
	ErrIsLeader = &Error{Code: -53, Name: "BATON_EISLEADER", Text: "that member is the leader already"}
	// ErrUnreachable is BATON_EUNREACHABLE (-54): the member cannot be reached.
	ErrUnreachable = &Error{Code: -54, Name: "BATON_EUNREACHABLE", Text: "the member cannot be reached"}
	// ErrConnect is BATON_ECONNECT (-55): cannot connect to any node of the cluster.
	ErrConnect = &Error{Code: -55, Name: "BATON_ECONNECT", Text: "cannot connect to any node of the cluster"}
	// ErrNotVoter is BATON_ENOTVOTER (-56): that member does not vote, so it cannot lead.
	ErrNotVoter = &Error{Code: -56, Name: "BATON_ENOTVOTER", Text: "that member does not vote, so it cannot lead"}
	// ErrAddrInUse is BATON_EADDRINUSE (-57): another member has this address.
	ErrAddrInUse = &Error{Code: -57, Name: "BATON_EADDRINUSE", Text: "another member has this address"}
	// ErrQuota is BATON_EQUOTA (-58): a quota of this client's identity is used up.
	ErrQuota = &Error{Code: -58, Name: "BATON_EQUOTA", Text: "a quota of this client's identity is used up"}
)

// errorTable maps a code to its sentinel.
var errorTable = map[int32]*Error{
	-1:  ErrNoMem,
	-2:  ErrInvalid,
	-3:  ErrMalformed,
	-4:  ErrVersion,
	-5:  ErrName,
	-6:  ErrNoSession,
	-7:  ErrExpired,
	-8:  ErrClosed,
	-9:  ErrBusy,
	-10: ErrNotHolder,
	-11: ErrStale,
	-12: ErrTimedOut,
	-13: ErrCancelled,
	-14: ErrNotWaiting,
	-15: ErrWaiting,
	-16: ErrTooManySessions,
	-17: ErrTooManyLocks,
	-18: ErrTooManyWaiters,
	-19: ErrInflight,
	-20: ErrSeq,
	-21: ErrTTL,
	-22: ErrUnsupported,
	-23: ErrOverflow,
	-24: ErrCorrupt,
	-25: ErrNotFound,
	-26: ErrNotLeader,
	-27: ErrUnknown,
	-28: ErrTooBig,
	-29: ErrTooManyConns,
	-30: ErrUnavailable,
	-31: ErrShutdown,
	-32: ErrIO,
	-33: ErrNoSpace,
	-34: ErrCantChange,
	-35: ErrNoAnswer,
	-36: ErrTLS,
	-37: ErrPerm,
	-38: ErrUpgrade,
	-39: ErrKind,
	-40: ErrPermits,
	-41: ErrTooManyPermits,
	-42: ErrHeld,
	-43: ErrTooManyHolders,
	-44: ErrTooManyNames,
	-45: ErrDelay,
	-46: ErrCompacted,
	-47: ErrSlow,
	-48: ErrTooManyWatches,
	-49: ErrNoBackup,
	-50: ErrNotReady,
	-51: ErrNoMember,
	-52: ErrIDInUse,
	-53: ErrIsLeader,
	-54: ErrUnreachable,
	-55: ErrConnect,
	-56: ErrNotVoter,
	-57: ErrAddrInUse,
	-58: ErrQuota,
}
