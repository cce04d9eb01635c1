package baton

import (
	"context"
	"errors"
	"strings"
)

// Lock is a lock held by the client's session: exclusive (Lock, TryLock)
// or shared (RLock, TryRLock).
type Lock struct {
	c      *Client
	name   string
	owner  uint64
	token  uint64
	shared bool
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Token is the lock's fencing token: the Raft index of the entry that
// granted it. Every later grant of the name has a larger one, so a
// resource that remembers the largest token it saw can refuse a holder
// that was superseded.
func (l *Lock) Token() uint64 { return l.token }

// Name is the lock's name.
func (l *Lock) Name() string { return l.name }

// Context ends when the work the lock guards must stop: when the session's
// lease is in jeopardy (cause ErrJeopardy: no keepalive answered in time,
// ended before the lease can run out on the cluster), when the session is
// lost (ErrExpired, ErrClosed), or after Unlock (ErrUnlocked).
// context.Cause says which.
func (l *Lock) Context() context.Context { return l.ctx }

// Shared says whether the lock is a reader's (RLock).
func (l *Lock) Shared() bool { return l.shared }

const (
	modeExclusive = 0
	modeShared    = 1
	modeSemaphore = 2
)

// lockArgs are what an ACQUIRE asks for beyond its name.
type lockArgs struct {
	wait           uint32
	mode           uint8
	permits, limit uint32
}

// Lock waits until the session holds `name` exclusively, or ctx ends (the
// wait is then withdrawn, and ctx's error returned). Each call is its own
// owner: two goroutines of one client wait for each other.
func (c *Client) Lock(ctx context.Context, name string) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{wait: waitForever})
}

// TryLock takes `name` if it is free, else fails with ErrBusy at once.
func (c *Client) TryLock(ctx context.Context, name string) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{})
}

// RLock waits until the session holds `name` shared, as one of its
// readers: readers hold it together, a writer (Lock) alone, in arrival
// order (docs/fsm.md, "Read/write locks"). Each reader's grant has its own
// token.
func (c *Client) RLock(ctx context.Context, name string) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{wait: waitForever, mode: modeShared})
}

// TryRLock takes `name` shared if no writer holds or waits for it, else
// fails with ErrBusy at once.
func (c *Client) TryRLock(ctx context.Context, name string) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{mode: modeShared})
}

// Acquire waits until the session holds `permits` of the semaphore
// `name`, which has `limit` permits in all (set by the first Acquire of
// it; every later one must name the same, else ErrPermits). The Lock it
// returns is released with Unlock, its own token and Context as a lock's.
// A semaphore's name is not a lock's (ErrKind), and an owner holds one
// grant of it at a time (ErrHeld).
func (c *Client) Acquire(ctx context.Context, name string, permits,
	limit uint32) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{wait: waitForever,
		mode: modeSemaphore, permits: permits, limit: limit})
}

// TryAcquire takes `permits` of the semaphore if they are free, else
// fails with ErrBusy at once.
func (c *Client) TryAcquire(ctx context.Context, name string, permits,
	limit uint32) (*Lock, error) {
	return c.acquire(ctx, name, lockArgs{mode: modeSemaphore,
		permits: permits, limit: limit})
}

func (c *Client) acquire(ctx context.Context, name string, a lockArgs) (*Lock, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	owner := c.owners.Add(1)
	for {
		res, again, err := c.acquireOnce(ctx, name, owner, a)
		if again {
			continue
		}
		if err != nil {
			return nil, err
		}
		l := &Lock{c: c, name: name, owner: owner, token: res.token,
			shared: a.mode == modeShared}
		l.ctx, l.cancel = context.WithCancelCause(context.Background())
		c.mu.Lock()
		c.locks[l] = true
		c.mu.Unlock()
		if ctx.Err() != nil {
			// Granted as the wait was withdrawn: not wanted any more.
			_ = l.Unlock(context.Background())
			return nil, ctx.Err()
		}
		return l, nil
	}
}

// acquireOnce sends one ACQUIRE under a new seq; `again` when it must be
// asked again under another (its wait was withdrawn after BATON_ESEQ).
func (c *Client) acquireOnce(ctx context.Context, name string, owner uint64,
	a lockArgs) (result, bool, error) {
	blocking := a.wait != 0
	seq, ack := c.nextSeq()
	defer c.done(seq)
	var sent func()
	if blocking {
		sent = func() { c.done(seq) }
	}
	// A blocking wait is withdrawn with a CANCEL when ctx ends; its own
	// answer (ECANCELLED, or a grant that won the race) still comes.
	wctx, stop := context.WithCancel(context.Background())
	defer stop()
	if blocking {
		go func() {
			select {
			case <-ctx.Done():
				c.cancelWait(wctx, seq, name)
			case <-wctx.Done():
			}
		}()
	} else {
		wctx = ctx
	}
	res, err := c.command(wctx, cmdAcquire(c.Session(), seq, ack, owner,
		a.wait, a.mode, a.permits, a.limit, name), "lock "+name, sent)
	switch {
	case err == nil:
		return res, false, nil
	case errors.Is(err, ErrCancelled) && ctx.Err() != nil:
		return res, false, ctx.Err()
	case errors.Is(err, ErrSeq) && blocking:
		// A resend after a lost connection arrived behind requests that
		// raised the floor past it (docs/protocol.md, "A waiting ACQUIRE
		// should not hold ack back"): withdraw the wait, and ask again,
		// unless it was granted meanwhile.
		return c.afterSeq(ctx, seq, name, owner)
	}
	return res, false, err
}

func (c *Client) cancelWait(ctx context.Context, target uint64, name string) error {
	seq, ack := c.nextSeq()
	defer c.done(seq)
	_, err := c.command(ctx, cmdCancel(c.Session(), seq, ack, target, name),
		"cancel the wait for "+name, nil)
	return err
}

// afterSeq: the wait of seq `target` is withdrawn; if it was resolved
// instead, the lock's holder says whether it was granted to this owner.
func (c *Client) afterSeq(ctx context.Context, target uint64, name string,
	owner uint64) (result, bool, error) {
	err := c.cancelWait(ctx, target, name)
	if err == nil {
		return result{}, true, nil
	}
	if !errors.Is(err, ErrNotWaiting) {
		return result{}, false, err
	}
	var w builder
	w.str(name)
	f, err := c.do(ctx, tQuery, 0, w.b, nil)
	if err != nil {
		return result{}, false, err
	}
	res, err := c.resultOf(f, "query "+name)
	if err != nil {
		return res, false, err
	}
	if res.kind == kHolder && res.session == c.Session() && res.owner == owner {
		return res, false, nil
	}
	return result{}, true, nil
}

// Unlock releases the lock. ErrNotHolder or ErrStale: it was not held any
// more (the session was lost, or an administrator revoked it).
func (l *Lock) Unlock(ctx context.Context) error {
	c := l.c
	seq, ack := c.nextSeq()
	defer c.done(seq)
	_, err := c.command(ctx, cmdRelease(c.Session(), seq, ack, l.owner,
		l.token, l.name), "unlock "+l.name, nil)
	c.mu.Lock()
	delete(c.locks, l)
	c.mu.Unlock()
	l.cancel(ErrUnlocked)
	return err
}

// checkName: a lock's name is 1..255 bytes without NUL (ErrName, sent
// nowhere), as libbaton checks it.
func checkName(name string) error {
	if len(name) == 0 || len(name) > 255 || strings.IndexByte(name, 0) >= 0 {
		return &codeError{code: ErrName, what: "lock " + name}
	}
	return nil
}

// Holder is who holds a lock: its first grant (the writer if one holds,
// else the oldest reader).
type Holder struct {
	Session uint64 // the holder's session
	Owner   uint64 // the owner tag within it
	Token   uint64 // the grant's fencing token
	Count   uint32 // holds (reentrant acquires) of that grant
	Waiters uint32 // clients waiting for the lock
}

// Holder reads who holds `name` now, linearizably (from the leader, after
// everything acknowledged before the call); nil when it is free.
func (c *Client) Holder(ctx context.Context, name string) (*Holder, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	var w builder
	w.str(name)
	f, err := c.do(ctx, tQuery, 0, w.b, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.resultOf(f, "query "+name)
	if err != nil || res.kind != kHolder {
		return nil, err
	}
	return &Holder{Session: res.session, Owner: res.owner, Token: res.token,
		Count: res.count, Waiters: res.waiters}, nil
}
