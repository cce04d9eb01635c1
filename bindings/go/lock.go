package baton

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Lock is a grant held by the client's session: a lock, exclusive (Lock,
// TryLock) or shared (RLock, TryRLock), permits of a semaphore (Acquire),
// several locks at once (LockAll), or an election's leadership
// (Campaign).
type Lock struct {
	c     *Client
	name  string
	names []MultiName // LockAll's; nil otherwise
	owner uint64
	token uint64
	mode  Mode
	ctx   *leaseCtx
}

// Token is the lock's fencing token: the Raft index of the entry that
// granted it. Every later grant of the name has a larger one, so a
// resource that remembers the largest token it saw can refuse a holder
// that was superseded.
func (l *Lock) Token() uint64 { return l.token }

// Name is the lock's name (LockAll's: its first).
func (l *Lock) Name() string { return l.name }

// Names are the names a LockAll holds, in its order; a single name
// otherwise.
func (l *Lock) Names() []MultiName {
	if l.names != nil {
		return append([]MultiName(nil), l.names...)
	}
	return []MultiName{{Name: l.name, Shared: l.mode == Shared}}
}

// Context ends when the work the lock guards must stop, with the reason
// as its cause (context.Cause):
//   - ErrJeopardy: no keepalive was answered in time, and the session's
//     lease is within 200 ms of running out, so the cluster may soon grant
//     the lock elsewhere;
//   - ErrExpired, ErrClosed: the session ended;
//   - ErrRevoked: an administrator took the grant away (RevokeLock), or
//     its hold time ran out (WithHold);
//   - ErrUnlocked: after Unlock (Resign).
//
// Its Err reads the clock, so a process that was paused (SIGSTOP, a
// stalled VM) past its lease sees ErrJeopardy at its first check after
// it resumes, before its timers have run: check Err (or ctx.Done) before
// each step of the work, not only on a timer.
func (l *Lock) Context() context.Context { return l.ctx }

// Shared says whether the lock is a reader's (RLock).
func (l *Lock) Shared() bool { return l.mode == Shared }

// Mode is how the lock is held.
func (l *Lock) Mode() Mode { return l.mode }

// leaseCtx is a lock's Context: cancelled by the client's keepalive loop
// and by Unlock, and also by Err itself once the session's lease is in
// jeopardy by the clock, whatever the timers say.
type leaseCtx struct {
	context.Context
	cancel context.CancelCauseFunc
	c      *Client
}

func (x *leaseCtx) Err() error {
	if x.Context.Err() == nil && x.c.inJeopardy() {
		x.cancel(ErrJeopardy)
	}
	return x.Context.Err()
}

// lockArgs are what an ACQUIRE asks for beyond its name.
type lockArgs struct {
	wait           uint32 // 0: a try; waitForever: until ctx ends
	mode           Mode
	permits, limit uint32
	value          string        // the grant's (WithValue), a candidate's (Election)
	hold           time.Duration // the grant's hold time (WithHold); 0: none
	holdMs         uint32        // hold, as the ACQUIRE carries it
	multi          []MultiName   // a MULTI's names
}

// MultiName is one name of a LockAll, and whether it is taken shared.
type MultiName struct {
	Name   string
	Shared bool
}

// Lock waits until the session holds `name` exclusively, or ctx ends (the
// wait is then withdrawn, and ctx's error returned). Each call is its own
// owner: two goroutines of one client wait for each other. WithValue gives
// the grant a value, WithHold a hold time.
func (c *Client) Lock(ctx context.Context, name string,
	opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{wait: waitForever}, opts))
}

// TryLock takes `name` if it is free, else fails with ErrBusy at once.
func (c *Client) TryLock(ctx context.Context, name string,
	opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{}, opts))
}

// RLock waits until the session holds `name` shared, as one of its
// readers: readers hold it together, a writer (Lock) alone, in arrival
// order (docs/fsm.md, "Read/write locks"). Each reader's grant has its own
// token, and its own value (WithValue).
func (c *Client) RLock(ctx context.Context, name string,
	opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{wait: waitForever,
		mode: Shared}, opts))
}

// TryRLock takes `name` shared if no writer holds or waits for it, else
// fails with ErrBusy at once.
func (c *Client) TryRLock(ctx context.Context, name string,
	opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{mode: Shared}, opts))
}

// Acquire waits until the session holds `permits` of the semaphore
// `name`, which has `limit` permits in all (set by the first Acquire of
// it; every later one must name the same, else ErrPermits). The Lock it
// returns is released with Unlock, its own token and Context as a lock's.
// A semaphore's name is not a lock's (ErrKind), and an owner holds one
// grant of it at a time (ErrHeld). Each grant of permits has its own
// value (WithValue).
func (c *Client) Acquire(ctx context.Context, name string, permits,
	limit uint32, opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{wait: waitForever,
		mode: Semaphore, permits: permits, limit: limit}, opts))
}

// TryAcquire takes `permits` of the semaphore if they are free, else
// fails with ErrBusy at once.
func (c *Client) TryAcquire(ctx context.Context, name string, permits,
	limit uint32, opts ...LockOption) (*Lock, error) {
	return c.acquire(ctx, name, withOptions(lockArgs{mode: Semaphore,
		permits: permits, limit: limit}, opts))
}

// LockAll waits until the session holds every one of `names` at once,
// each exclusive or shared as it says (1..16 distinct names; the cluster's
// max-names-per-acquire may allow fewer, ErrTooManyNames): one entry
// grants them all, with one token, and a wait is one waiter on every name,
// so two LockAll calls of the same names in any order never deadlock.
// Unlock releases every name.
func (c *Client) LockAll(ctx context.Context, names ...MultiName) (*Lock,
	error) {
	return c.lockAll(ctx, names, waitForever)
}

// TryLockAll takes every one of `names` if all are free now, else fails
// with ErrBusy and takes none.
func (c *Client) TryLockAll(ctx context.Context, names ...MultiName) (*Lock,
	error) {
	return c.lockAll(ctx, names, 0)
}

func (c *Client) lockAll(ctx context.Context, names []MultiName,
	wait uint32) (*Lock, error) {
	if len(names) == 0 || len(names) > 16 {
		return nil, &codeError{code: ErrInvalid, what: "LockAll: 1..16 " +
			"names"}
	}
	for _, n := range names {
		if err := checkName(n.Name); err != nil {
			return nil, err
		}
	}
	names = append([]MultiName(nil), names...)
	return c.acquire(ctx, names[0].Name, lockArgs{wait: wait, multi: names})
}

func (c *Client) acquire(ctx context.Context, name string, a lockArgs) (*Lock, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := checkValue(a.value); err != nil {
		return nil, err
	}
	var err error
	if a.holdMs, err = holdMs(a.hold); err != nil {
		return nil, err
	}
	if a.wait != 0 {
		a.wait = waitOf(ctx)
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
		l := &Lock{c: c, name: name, names: a.multi, owner: owner,
			token: res.token, mode: a.mode}
		inner, cancel := context.WithCancelCause(context.Background())
		l.ctx = &leaseCtx{Context: inner, cancel: cancel, c: c}
		c.mu.Lock()
		c.locks[l] = true
		c.mu.Unlock()
		if ctx.Err() != nil {
			// Granted as the wait was withdrawn: not wanted any more.
			_ = l.Unlock(context.Background())
			return nil, ctxErr(ctx)
		}
		return l, nil
	}
}

// waitOf is a blocking ACQUIRE's wait_ms: until ctx's deadline, so that
// the cluster ends the wait itself (BATON_ETIMEDOUT) even when the client
// cannot reach it then; forever without one (the client CANCELs it when
// ctx ends).
func waitOf(ctx context.Context) uint32 {
	d, ok := ctx.Deadline()
	if !ok {
		return waitForever
	}
	ms := (time.Until(d) + time.Millisecond - 1) / time.Millisecond
	return uint32(min(max(ms, 1), waitForever-1))
}

// ctxErr is the error of a wait that ctx ended: one that ran to its
// deadline matches both ErrTimedOut and context.DeadlineExceeded,
// whichever of the cluster and the client's clock ended it first.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &withCtx{code: ErrTimedOut, ctx: ctx.Err(), what: "wait"}
	}
	return ctx.Err()
}

// request is the ACQUIRE (or MULTI) that `a` asks for.
func (c *Client) request(name string, seq, ack, owner uint64,
	a lockArgs) []byte {
	if a.multi != nil {
		return cmdMulti(c.Session(), seq, ack, owner, a.wait, a.multi)
	}
	return cmdAcquire(c.Session(), seq, ack, owner, a, name)
}

// acquireOnce sends one ACQUIRE under a new seq; `again` when it must be
// asked again under another (its wait was withdrawn after BATON_ESEQ).
func (c *Client) acquireOnce(ctx context.Context, name string, owner uint64,
	a lockArgs) (result, bool, error) {
	blocking := a.wait != 0
	seq, ack, err := c.nextSeq(ctx)
	if err != nil {
		return result{}, false, ctxErr(ctx)
	}
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
		// No goroutine of its own (one per request costs the scheduler
		// more than the request's own code): the CANCEL's starts only if
		// ctx ends while the ACQUIRE waits.
		unwatch := context.AfterFunc(ctx, func() {
			c.cancelWait(wctx, seq, name)
		})
		defer unwatch()
	} else {
		wctx = ctx
	}
	var res result
	res, err = c.command(wctx, c.request(name, seq, ack, owner, a),
		"lock "+name, sent)
	switch {
	case err == nil:
		return res, false, nil
	case errors.Is(err, ErrTimedOut):
		return res, false, &withCtx{code: ErrTimedOut,
			ctx: context.DeadlineExceeded, what: "lock " + name}
	case errors.Is(err, ErrCancelled) && ctx.Err() != nil:
		return res, false, ctxErr(ctx)
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
	seq, ack, err := c.nextSeq(ctx)
	if err != nil {
		return err
	}
	defer c.done(seq)
	_, err = c.command(ctx, cmdCancel(c.Session(), seq, ack, target, name),
		"cancel the wait for "+name, nil)
	return err
}

// afterSeq: the wait of seq `target` is withdrawn; if it was resolved
// instead, the lock's holders say whether it was granted to this owner.
func (c *Client) afterSeq(ctx context.Context, target uint64, name string,
	owner uint64) (result, bool, error) {
	err := c.cancelWait(ctx, target, name)
	if err == nil {
		return result{}, true, nil
	}
	if !errors.Is(err, ErrNotWaiting) {
		return result{}, false, err
	}
	g, err := c.grantOf(ctx, name, owner)
	if err != nil || g == nil {
		return result{}, err == nil, err
	}
	return result{token: g.Token, count: g.Count}, false, nil
}

// grantOf is the grant `owner` of this session holds of `name`, or nil.
func (c *Client) grantOf(ctx context.Context, name string,
	owner uint64) (*Grant, error) {
	gs, _, err := c.holders(ctx, name)
	if err != nil {
		return nil, err
	}
	session := c.Session()
	for i := range gs {
		if gs[i].Session == session && gs[i].Owner == owner {
			return &gs[i], nil
		}
	}
	return nil, nil
}

// Unlock releases the lock (every name of a LockAll; resigns an election's
// leadership). ErrNotHolder or ErrStale: it was not held any more (the
// session was lost, or an administrator revoked it).
func (l *Lock) Unlock(ctx context.Context) error {
	c := l.c
	var first error
	for _, n := range l.Names() {
		seq, ack, err := c.nextSeq(ctx)
		if err == nil {
			_, err = c.command(ctx, cmdRelease(c.Session(), seq, ack,
				l.owner, l.token, n.Name), "unlock "+n.Name, nil)
			c.done(seq)
		}
		if first == nil {
			first = err
		}
	}
	c.forget(l, ErrUnlocked)
	return first
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

// query is a plain QUERY's RESULT: HOLDER (the first grant) or FREE, and
// the index it was read at.
func (c *Client) query(ctx context.Context, name string) (result, error) {
	if err := checkName(name); err != nil {
		return result{}, err
	}
	var w builder
	w.str(name)
	f, err := c.do(ctx, tQuery, 0, w.b, nil)
	if err != nil {
		return result{}, err
	}
	return c.resultOf(f, "query "+name)
}

// Holder reads who holds `name` now, linearizably (from the leader, after
// everything acknowledged before the call); nil when it is free.
func (c *Client) Holder(ctx context.Context, name string) (*Holder, error) {
	res, err := c.query(ctx, name)
	if err != nil || res.kind != kHolder {
		return nil, err
	}
	return &Holder{Session: res.session, Owner: res.owner, Token: res.token,
		Count: res.count, Waiters: res.waiters}, nil
}
