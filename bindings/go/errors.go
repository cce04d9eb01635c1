package baton

import (
	"errors"
	"fmt"
)

// Error is one of Baton's error codes (BATON_E* in include/baton/errors.h,
// the same numbers on the wire). Each code has one sentinel (ErrBusy,
// ErrExpired, ...); an error a call returns matches its sentinel with
// errors.Is, and carries what the call was doing in its message.
type Error struct {
	Code int32  // negative, as on the wire
	Name string // "BATON_EBUSY"
	Text string // what it means
}

func (e *Error) Error() string { return e.Text }

// codeError is an *Error with context: errors.Is matches the sentinel.
type codeError struct {
	code *Error
	what string
}

func (e *codeError) Error() string { return e.what + ": " + e.code.Text }
func (e *codeError) Unwrap() error { return e.code }

// ErrJeopardy is the cause of a lock's Context when the session's lease
// may have run out: no keepalive was answered in time, and the cluster may
// grant the lock elsewhere once the lease runs out. The lock may still be
// held; the work it guards must stop.
var ErrJeopardy = errors.New("baton: the session's lease is in jeopardy")

// ErrRevoked is the cause of a lock's Context when an administrator took
// the grant away (RevokeLock), or its hold time ran out (WithHold), while
// the session lives on.
var ErrRevoked = errors.New("baton: the grant was revoked")

// ErrUnlocked is the cause of a lock's Context after Unlock.
var ErrUnlocked = errors.New("baton: unlocked")

// withCtx is a code that a context's end also explains: it matches both
// (a wait that ran to its deadline is ErrTimedOut and
// context.DeadlineExceeded; a request without an answer by then,
// ErrNoAnswer and the context's error).
type withCtx struct {
	code *Error
	ctx  error
	what string
}

func (e *withCtx) Error() string   { return e.what + ": " + e.code.Text }
func (e *withCtx) Unwrap() []error { return []error{e.code, e.ctx} }

// errCode is the error for wire status `code` while doing `what`.
func errCode(code int32, what string) error {
	e, ok := errorTable[code]
	if !ok {
		e = &Error{Code: code, Name: fmt.Sprintf("BATON_E(%d)", code),
			Text: fmt.Sprintf("error %d", code)}
	}
	return &codeError{code: e, what: what}
}
