package baton

// Values (docs/protocol.md, "Values"; docs/fsm.md, "Values"): every grant
// can carry up to 255 bytes that say where its holder is or what it does
// ("10.0.0.7:8080", a job id). An ACQUIRE with one is command version 4;
// the holder changes it with a SET_VALUE (type 20, PROCLAIM's fields) and
// its token; Holders reads it, and the GRANTED and PROCLAIMED watch events
// carry it.

import (
	"context"
	"strings"
)

// A LockOption changes how Lock, TryLock, RLock, TryRLock, Acquire and
// TryAcquire take their grant.
type LockOption func(*lockArgs)

// WithValue gives the grant `value`, 0..255 bytes without NUL (else the
// call fails with ErrInvalid and sends nothing): Holders returns it with
// the grant, and watches see it in the Granted event. A waiter's value is
// the grant's once it is granted; the holder changes it with SetValue, and
// it ends with the grant. Empty: no value.
func WithValue(value string) LockOption {
	return func(a *lockArgs) { a.value = value }
}

func withOptions(a lockArgs, opts []LockOption) lockArgs {
	for _, o := range opts {
		if o != nil {
			o(&a)
		}
	}
	return a
}

// checkValue: a grant's value is 0..255 bytes without NUL (ErrInvalid,
// sent nowhere), as libbaton checks an election's.
func checkValue(value string) error {
	if len(value) > 255 || strings.IndexByte(value, 0) >= 0 {
		return &codeError{code: ErrInvalid, what: "value: at most 255 " +
			"bytes, no NUL"}
	}
	return nil
}

// SetValue replaces the grant's value with `value` (0..255 bytes without
// NUL, else ErrInvalid and nothing is sent; empty clears it), keeping the
// grant and its token: a lock's, a reader's, a semaphore's permits or an
// election's leadership (as Proclaim does). A LockAll's grant changes
// on each of its names in turn. ErrNotHolder or ErrStale: the grant is
// over (unlocked, the session lost, or revoked); the value did not change.
func (l *Lock) SetValue(ctx context.Context, value string) error {
	if err := checkValue(value); err != nil {
		return err
	}
	return l.eachName(ctx, "set the value of ", func(s, seq, ack uint64,
		name string) []byte {
		return cmdProclaim(cSetValue, s, seq, ack, l.owner, l.token, name,
			value)
	})
}

// eachName sends, for each of the grant's names in turn, the numbered
// write of the session that `cmd` builds (session, seq, ack, name),
// stopping at the first error; `what` and the name say what failed.
func (l *Lock) eachName(ctx context.Context, what string,
	cmd func(session, seq, ack uint64, name string) []byte) error {
	c := l.c
	for _, n := range l.Names() {
		seq, ack, err := c.nextSeq(ctx)
		if err != nil {
			return err
		}
		_, err = c.command(ctx, cmd(c.Session(), seq, ack, n.Name),
			what+n.Name, nil)
		c.done(seq)
		if err != nil {
			return err
		}
	}
	return nil
}
