package baton

// Multi-locks, lock-delay, elections, watches, revokes and the reads,
// against the test cluster.

import (
	"context"
	"errors"
	"testing"
	"time"
)

// LockAll takes its names at once with one token, as one waiter on every
// name, and Unlock releases them all.
func TestLockAll(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	names := []MultiName{{Name: "go/multi/x"}, {Name: "go/multi/y", Shared: true}}
	m, err := a.LockAll(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Names()) != 2 || m.Name() != "go/multi/x" {
		t.Fatalf("names %+v", m.Names())
	}
	for _, n := range names {
		gs, err := b.Holders(ctx, n.Name)
		if err != nil || len(gs) != 1 || gs[0].Token != m.Token() ||
			gs[0].Session != a.Session() {
			t.Fatalf("holders of %s: %+v (%v), want token %d", n.Name, gs,
				err, m.Token())
		}
	}
	if _, err := b.TryLock(ctx, "go/multi/x"); !errors.Is(err, ErrBusy) {
		t.Fatalf("x beside the multi-lock: %v, want ErrBusy", err)
	}
	r, err := b.TryRLock(ctx, "go/multi/y")
	if err != nil {
		t.Fatalf("a reader of the shared name: %v", err)
	}
	r.Unlock(ctx)
	if _, err := b.TryLockAll(ctx, names[1], names[0]); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryLockAll of held names: %v, want ErrBusy", err)
	}
	// A waiting LockAll, in the other order, is granted when they are
	// free, with a larger token.
	got := make(chan *Lock, 1)
	go func() {
		l, err := b.LockAll(ctx, names[1], names[0])
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(200 * time.Millisecond)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	l := <-got
	if l == nil || l.Token() <= m.Token() {
		t.Fatalf("the waiting LockAll: %+v after token %d", l, m.Token())
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if gs, err := a.Holders(ctx, "go/multi/x"); err != nil || len(gs) != 0 {
		t.Fatalf("after Unlock: %+v %v", gs, err)
	}
	if _, err := a.TryLockAll(ctx); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no names: %v, want ErrInvalid", err)
	}
}

// A session with a lock-delay, revoked while it holds a lock: its lock's
// Context ends, and the lock goes to no one until the delay is over.
func TestLockDelay(t *testing.T) {
	cfg, _ := ConfigFromEnv()
	cfg.TTL, cfg.LockDelay = 10*time.Second, 1500*time.Millisecond
	ctx := ctxT(t)
	a, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	admin := dialT(t, 10*time.Second)
	l, err := a.Lock(ctx, "go/delay")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.Revoke(ctx, a.Session()); err != nil {
		t.Fatal(err)
	}
	if gs, err := admin.Holders(ctx, "go/delay"); err != nil || len(gs) != 0 {
		t.Fatalf("holders after the revoke: %+v %v", gs, err)
	}
	if _, err := admin.TryLock(ctx, "go/delay"); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryLock within the lock-delay: %v, want ErrBusy", err)
	}
	next, err := admin.Lock(ctx, "go/delay") // granted once the delay ends
	if err != nil {
		t.Fatal(err)
	}
	if next.Token() <= l.Token() {
		t.Fatalf("token %d after %d", next.Token(), l.Token())
	}
	next.Unlock(ctx)
	select {
	case <-l.Context().Done():
	case <-ctx.Done():
		t.Fatal("the revoked session's lock Context did not end")
	}
	if c := context.Cause(l.Context()); !errors.Is(c, ErrExpired) {
		t.Fatalf("cause %v, want ErrExpired", c)
	}
	if _, err := a.TryLock(ctx, "go/delay2"); !errors.Is(err, ErrExpired) {
		t.Fatalf("a call of the revoked session: %v, want ErrExpired", err)
	}
	cfg.LockDelay = 3 * time.Second // the test cluster allows 2 s
	if _, err := Dial(ctx, cfg); !errors.Is(err, ErrDelay) {
		t.Fatalf("a lock-delay over the cluster's maximum: %v, want ErrDelay", err)
	}
}

// Candidates lead in turn; Leader and Observe follow the leader and its
// proclaimed values.
func TestElection(t *testing.T) {
	a, b, o := dialT(t, 10*time.Second), dialT(t, 10*time.Second),
		dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/elect"
	la, err := a.Campaign(ctx, name, "a:1")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := o.Observe(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	expect := func(session uint64, value string) Grant {
		t.Helper()
		select {
		case g := <-seen:
			if g.Session != session || g.Value != value {
				t.Fatalf("observed %+v, want session %d value %q", g,
					session, value)
			}
			return g
		case <-ctx.Done():
			t.Fatalf("observed nothing; want session %d value %q", session,
				value)
		}
		return Grant{}
	}
	expect(a.Session(), "a:1")
	if _, err := b.TryCampaign(ctx, name, "b:1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryCampaign while a leads: %v, want ErrBusy", err)
	}
	got := make(chan *Lock, 1)
	go func() {
		l, err := b.Campaign(ctx, name, "b:1")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	if err := la.Proclaim(ctx, "a:2"); err != nil {
		t.Fatal(err)
	}
	expect(a.Session(), "a:2")
	if g, err := o.Leader(ctx, name); err != nil || g == nil ||
		g.Value != "a:2" || g.Token != la.Token() || g.Mode != Election {
		t.Fatalf("Leader: %+v %v", g, err)
	}
	if _, err := o.TryLock(ctx, name); !errors.Is(err, ErrKind) {
		t.Fatalf("an election locked as a lock: %v, want ErrKind", err)
	}
	lk, err := o.Lock(ctx, "go/elect-lock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Observe(ctx, "go/elect-lock"); !errors.Is(err, ErrKind) {
		t.Fatalf("Observe of a lock: %v, want ErrKind", err)
	}
	lk.Unlock(ctx)
	if err := la.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	expect(0, "") // the leadership ended...
	gb := expect(b.Session(), "b:1")
	lb := <-got
	if lb == nil || lb.Token() != gb.Token || lb.Token() <= la.Token() {
		t.Fatalf("b leads with %+v, observed token %d, a's %d", lb, gb.Token,
			la.Token())
	}
	if err := la.Proclaim(ctx, "a:3"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("a proclaims after resigning: %v, want ErrNotHolder", err)
	}
	lb.Resign(ctx)
	if g, err := o.Leader(ctx, name); err != nil || g != nil {
		t.Fatalf("Leader of an election no one leads: %+v %v", g, err)
	}
}

// A watch tells every grant and release in order, and carries on without
// a gap or a repeat when its connection drops; a new watch from its
// position goes on exactly after it.
func TestWatchResumes(t *testing.T) {
	c, w := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	wt, err := w.WatchPrefix(ctx, "go/watch/", Now)
	if err != nil {
		t.Fatal(err)
	}
	var tokens []uint64
	round := func(n int) {
		for i := 0; i < n; i++ {
			l, err := c.Lock(ctx, "go/watch/a")
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, l.Token())
			l.Unlock(ctx)
		}
	}
	expect := func(wt *Watch, from int) {
		t.Helper()
		var last Position
		for _, tok := range tokens[from:] {
			for _, kind := range []EventKind{Granted, Released} {
				select {
				case e := <-wt.Events():
					if e.Kind != kind || e.Token != tok || e.Name != "go/watch/a" ||
						e.Session != c.Session() || !e.Position.after(last) {
						t.Fatalf("event %+v, want %v of token %d after %v",
							e, kind, tok, last)
					}
					last = e.Position
				case <-ctx.Done():
					t.Fatalf("no %v event of token %d (watch: %v)", kind, tok,
						wt.Err())
				}
			}
		}
	}
	round(3)
	expect(wt, 0)
	wt.mu.Lock()
	wt.cur.end(errors.New("test: the connection dropped"))
	wt.mu.Unlock()
	round(3)
	expect(wt, 3)
	pos := wt.Position()
	wt.Close()
	if _, open := <-wt.Events(); open || !errors.Is(wt.Err(), ErrClosed) {
		t.Fatalf("a closed watch: open %v, err %v", open, wt.Err())
	}
	round(2)
	again, err := w.Watch(ctx, "go/watch/a", pos)
	if err != nil {
		t.Fatal(err)
	}
	expect(again, 6)
	select {
	case e := <-again.Events():
		t.Fatalf("an event more: %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
	again.Close()
}

// An administrator takes a grant away: the holder's Context ends with
// ErrRevoked at its next keepalive, and its session lives on.
func TestRevokeLock(t *testing.T) {
	a, admin := dialT(t, 1500*time.Millisecond), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	l, err := a.Lock(ctx, "go/revoked")
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.RevokeLock(ctx, "go/revoked", a.Session(), l.Token()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Context().Done():
	case <-ctx.Done():
		t.Fatal("the revoked lock's Context did not end")
	}
	if c := context.Cause(l.Context()); !errors.Is(c, ErrRevoked) {
		t.Fatalf("cause %v, want ErrRevoked", c)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Unlock of a revoked grant: %v, want ErrNotHolder", err)
	}
	l2, err := a.TryLock(ctx, "go/revoked")
	if err != nil {
		t.Fatalf("the session lives on: %v", err)
	}
	l2.Unlock(ctx)
	if err := admin.RevokeLock(ctx, "go/revoked", a.Session(), l.Token()); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("a revoke of no grant: %v, want ErrNotHolder", err)
	}
}

// Holders, List, Check and Status read what is there.
func TestReads(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	r1, err := a.RLock(ctx, "go/reads/x")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.RLock(ctx, "go/reads/x")
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Unlock(ctx)
	defer r2.Unlock(ctx)
	gs, err := a.Holders(ctx, "go/reads/x")
	if err != nil || len(gs) != 2 {
		t.Fatalf("holders: %+v %v", gs, err)
	}
	for i, want := range []*Lock{r1, r2} {
		g := gs[i]
		if g.Token != want.Token() || g.Mode != Shared || g.Count != 1 ||
			g.Granted.IsZero() || g.ClientName != t.Name() {
			t.Fatalf("holder %d: %+v, want token %d", i, g, want.Token())
		}
	}
	ls, more, err := b.List(ctx, "go/reads/", 10)
	if err != nil || more || len(ls) != 1 || ls[0].Name != "go/reads/x" ||
		ls[0].Token != r1.Token() || ls[0].ClientName != t.Name() {
		t.Fatalf("list: %+v %v %v", ls, more, err)
	}
	if err := b.Check(ctx, "go/reads/x", r2.Token()); err != nil {
		t.Fatalf("check of a current grant: %v", err)
	}
	if err := b.Check(ctx, "go/reads/x", r2.Token()+1000); !errors.Is(err, ErrStale) {
		t.Fatalf("check of another token: %v, want ErrStale", err)
	}
	s, err := a.Status(ctx)
	if err != nil || s.Role.String() != "leader" || s.Leader != s.ID ||
		len(s.Members) != 3 || s.Release == "" || s.Applied == 0 {
		t.Fatalf("status %+v %v", s, err)
	}
}

// Observe of a leader elected longer ago than the nodes keep events: it
// starts from the leader as read, and follows from there.
func TestObserveAfterCompaction(t *testing.T) {
	a, o := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/elect-old"
	la, err := a.Campaign(ctx, name, "old:1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 41; i++ { // 82 events: the nodes keep 64
		l, err := a.Lock(ctx, "go/elect-old/churn")
		if err != nil {
			t.Fatal(err)
		}
		l.Unlock(ctx)
	}
	if _, err := o.Watch(ctx, name, Position{Index: la.Token()}); !errors.Is(err, ErrCompacted) {
		t.Fatalf("a watch from the election: %v, want ErrCompacted", err)
	}
	seen, err := o.Observe(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if g := <-seen; g.Value != "old:1" || g.Token != la.Token() {
		t.Fatalf("observed %+v first, want old:1", g)
	}
	if err := la.Proclaim(ctx, "old:2"); err != nil {
		t.Fatal(err)
	}
	if g := <-seen; g.Value != "old:2" || g.Token != la.Token() {
		t.Fatalf("observed %+v, want old:2", g)
	}
	la.Resign(ctx)
}
