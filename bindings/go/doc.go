// Package baton is a client for Baton, the Raft-replicated lock service,
// written from its protocol document (docs/protocol.md) with Go's standard
// library alone.
//
// A Client is a session: Dial finds the cluster's leader, opens a session
// and keeps it alive every third of its TTL until Close. Lock and TryLock
// take exclusive locks, RLock and TryRLock shared ones, Acquire and
// TryAcquire permits of a semaphore; each Lock carries its fencing token (Token: the
// Raft index of the entry that granted it, larger for every later grant)
// and a Context that ends when the work it guards must stop: when the
// session's lease is in jeopardy (no keepalive answered in time, 200 ms
// before the lease could run out on the cluster), when the session is
// lost, or after Unlock.
//
// Behaviour, as libbaton's: every request goes to the leader. A follower's
// NOT_LEADER sends it to the leader the follower names, at once; a node
// that knows no leader, to the next endpoint about 40 ms later; a pass
// over the endpoints that found none, again after a pause doubling from
// 10 ms to 1 s. Each new connection first ATTACHes the session (proving it
// with the session's secret, whose hash the OPEN carried). A request whose
// connection is lost, or whose outcome the leader could not know
// (ErrUnknown), is sent again with the same sequence number, so the
// cluster applies it once. Errors match the BATON_E* codes:
// errors.Is(err, baton.ErrBusy).
package baton
