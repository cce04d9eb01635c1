// Package baton is a client for Baton, the Raft-replicated lock service,
// written from its protocol document (docs/protocol.md) with Go's standard
// library alone.
//
// A Client is a session: Dial finds the cluster's leader, opens a session
// and keeps it alive every third of its TTL until Close.
//
//   - Locks: Lock and TryLock take exclusive locks, RLock and TryRLock
//     shared ones, Acquire and TryAcquire permits of a semaphore, LockAll
//     and TryLockAll several locks at once (one entry, one token).
//   - Values: every grant can carry up to 255 bytes (where its holder is,
//     what it does): WithValue gives a Lock, RLock or Acquire (and their
//     Try forms) one, Lock.SetValue changes it, fenced by the grant's
//     token, Holders reads each grant's, List each lock's, and watches
//     see it.
//   - Hold times: WithHold bounds how long a grant may be held, however
//     alive the session (a stuck holder cannot keep a lock for ever); the
//     cluster then ends it as a revoke would, unless Lock.Extend, fenced
//     by the token, restarted the time.
//   - Elections: Campaign and TryCampaign lead an election with a value,
//     Lock.Proclaim changes it, Lock.Resign ends the leadership; Leader
//     reads who leads, Observe follows it.
//   - Watches: Watch and WatchPrefix deliver every grant, release and
//     proclamation in the log's order, each at its Position, and resume
//     from the last one when a connection drops.
//   - Reads: Holder, Holders, List, Check, Status. An administrator's:
//     Revoke (a session), RevokeLock (one grant).
//
// Each Lock carries its fencing token (Token: the Raft index of the entry
// that granted it, larger for every later grant) and a Context that ends
// when the work it guards must stop: when the session's lease is in
// jeopardy (no keepalive answered in time, 200 ms before the lease could
// run out on the cluster), when the session is lost, when an
// administrator revokes the grant or its hold time runs out, or after
// Unlock. Its Err reads the
// clock, so a process paused past its lease sees the jeopardy at its
// first check after it resumes. Config.LockDelay gives the session a
// lock-delay, so that its locks go to no one for a while after it is lost.
//
// Behaviour, as libbaton's: every request goes to the leader. A follower's
// NOT_LEADER sends it to the leader the follower names, at once; a node
// that knows no leader, to the next endpoint about 40 ms later; a pass
// over the endpoints that found none, again after a pause doubling from
// 10 ms to 1 s. A pass in which every endpoint refused the connection
// fails a call that has sent nothing yet with ErrConnect (after a second
// of such passes, while nodes start) or ErrTLS (at once). Each new
// connection first ATTACHes the session (proving it with the session's
// secret, whose hash the OPEN carried). A request whose connection is
// lost, or whose outcome the leader could not know (ErrUnknown), is sent
// again with the same sequence number, so the cluster applies it once,
// until the caller's context ends: then the call fails with an error that
// matches both ErrNoAnswer and the context's error. At most 31 requests of
// a session are out at once (the cluster remembers 32 outcomes); more
// wait for room. A blocking call's wait is sent with the context's
// deadline, so the cluster ends it even when the client cannot reach it
// then (ErrTimedOut, which also matches context.DeadlineExceeded), and is
// withdrawn (CANCEL) when the context is cancelled. Errors match the
// BATON_E* codes: errors.Is(err, baton.ErrBusy).
//
// Each call that takes a lock is an owner of its own: goroutines of one
// Client wait for each other as separate clients would, and a lock is not
// reentrant.
package baton
