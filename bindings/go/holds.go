package baton

// Hold times (docs/protocol.md, "Hold times"; docs/fsm.md, "Hold times"):
// a grant acquired with one is held for at most that long, however alive
// its session, so a holder that is alive but stuck cannot keep a lock for
// ever. The ACQUIRE carries it as hold_ms (command version 4, after the
// value); the leader ends the grant when it runs out (EXPIRE_HOLD, a
// watch event's Cause 22), as a revoke ends one; the holder restarts it
// with an EXTEND (type 21) and its token.

import (
	"context"
	"math"
	"time"
)

// WithHold gives the grant a hold time: the cluster ends it `hold` after
// it was granted (a waiter's clock starts with its grant), unless Extend
// restarted the time, as RevokeLock would end it: the lock enters its
// lock-delay and the next waiter gets it with a higher token, and the
// Lock's Context ends with ErrRevoked at the next keepalive, after the
// fact: time the work from the call, and Extend well before the hold time
// runs out (or stop the work first). Rounded up to whole milliseconds; 0:
// no hold time (held until Unlock or the session ends). Negative, or over
// 2^32-1 ms, is ErrInvalid and nothing is sent; over the cluster's
// max-hold-ms (a day by default) the cluster refuses it with ErrInvalid.
func WithHold(hold time.Duration) LockOption {
	return func(a *lockArgs) { a.hold = hold }
}

// holdMs is a hold time in ms as the wire carries it: rounded up, so
// that no hold is shorter than asked; ErrInvalid for a negative one or
// one past a u32.
func holdMs(hold time.Duration) (uint32, error) {
	ms := (hold + time.Millisecond - 1) / time.Millisecond
	if hold < 0 || ms > math.MaxUint32 {
		return 0, &codeError{code: ErrInvalid, what: "hold time: 0.." +
			"4294967295 ms"}
	}
	return uint32(ms), nil
}

// Extend restarts the grant's hold time (WithHold): from the moment the
// cluster applies it, the grant is held for at most `hold` more. The
// grant and its token stay. `hold` must be positive (ErrInvalid, nothing
// sent), at most the cluster's max-hold-ms (ErrInvalid); a grant acquired
// without a hold time cannot be given one (ErrInvalid). ErrNotHolder or
// ErrStale: the grant is over (its hold time ran out, unlocked, the
// session lost, or revoked). A LockAll's grant has no hold time.
func (l *Lock) Extend(ctx context.Context, hold time.Duration) error {
	ms, err := holdMs(hold)
	if err == nil && ms == 0 {
		err = &codeError{code: ErrInvalid, what: "Extend: a hold time " +
			"of at least 1 ms"}
	}
	if err != nil {
		return err
	}
	return l.eachName(ctx, "extend the hold of ", func(s, seq, ack uint64,
		name string) []byte {
		return cmdExtend(s, seq, ack, l.owner, l.token, name, ms)
	})
}
