package baton

// Values on every grant: WithValue on a lock, a reader and semaphore
// permits, SetValue by the holder with its token, Holders returning each
// grant's value and List each lock's, against the test cluster.

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"
)

// The ACQUIRE and SET_VALUE bytes at docs/protocol.md's offsets: a value
// makes a lock's or a semaphore's ACQUIRE version 4 (permits and limit
// present, the value after the name); without one, or empty, it is the
// version 2 or 3 ACQUIRE it always was.
func TestValueEncoding(t *testing.T) {
	const name = "jobs"
	for _, tc := range []struct {
		a       lockArgs
		version uint8
		value   bool
	}{
		{lockArgs{mode: Exclusive}, 2, false},
		{lockArgs{mode: Exclusive, value: ""}, 2, false},
		{lockArgs{mode: Shared, value: "r"}, 4, true},
		{lockArgs{mode: Exclusive, value: "10.0.0.7:8080"}, 4, true},
		{lockArgs{mode: Semaphore, permits: 2, limit: 5}, 3, false},
		{lockArgs{mode: Semaphore, permits: 2, limit: 5, value: "p"}, 4, true},
		{lockArgs{mode: Election, value: ""}, 3, true},
		{lockArgs{mode: Election, value: "leader"}, 3, true},
	} {
		b := cmdAcquire(1, 2, 3, 4, tc.a, name)
		at := 49 // the name, after permits and limit
		if tc.version == 2 {
			at = 41
		}
		if b[0] != tc.version || b[1] != cAcquire || b[40] != uint8(tc.a.mode) ||
			len(b)%8 != 0 {
			t.Fatalf("%+v: % x, want version %d", tc.a, b, tc.version)
		}
		if tc.version >= 3 && (binary.LittleEndian.Uint32(b[41:]) != tc.a.permits ||
			binary.LittleEndian.Uint32(b[45:]) != tc.a.limit) {
			t.Fatalf("%+v: permits and limit in % x", tc.a, b)
		}
		if int(b[at]) != len(name) || string(b[at+1:at+1+len(name)]) != name {
			t.Fatalf("%+v: no name at %d in % x", tc.a, at, b)
		}
		rest := b[at+1+len(name):]
		if tc.value {
			if int(rest[0]) != len(tc.a.value) ||
				string(rest[1:1+len(tc.a.value)]) != tc.a.value {
				t.Fatalf("%+v: no value after the name in % x", tc.a, b)
			}
			rest = rest[1+len(tc.a.value):]
		}
		if tc.version == 4 {
			// hold_ms, after the value: 0, no hold time.
			if len(rest) < 4 || binary.LittleEndian.Uint32(rest) != 0 {
				t.Fatalf("%+v: no hold time after the value in % x", tc.a, b)
			}
			rest = rest[4:]
		}
		for _, p := range rest {
			if p != 0 {
				t.Fatalf("%+v: more than padding after the fields: % x", tc.a, b)
			}
		}
	}
	b := cmdProclaim(cSetValue, 1, 2, 3, 4, 5, name, "v")
	want := []byte{4, cSetValue, 0, 0}
	for _, v := range []uint64{1, 2, 3, 4, 5} {
		want = binary.LittleEndian.AppendUint64(want, v)
	}
	want = append(want, 4, 'j', 'o', 'b', 's', 1, 'v', 0, 0, 0, 0, 0)
	if string(b) != string(want) {
		t.Fatalf("SET_VALUE % x, want % x", b, want)
	}
}

// valuesOf reads the values of every grant of `name`, oldest first.
func valuesOf(t *testing.T, c *Client, name string) []string {
	t.Helper()
	gs, err := c.Holders(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	vs := []string{}
	for _, g := range gs {
		vs = append(vs, g.Value)
	}
	return vs
}

func expectValues(t *testing.T, c *Client, name string, want ...string) {
	t.Helper()
	got := valuesOf(t, c, name)
	if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
		t.Fatalf("values of %s: %q, want %q", name, got, want)
	}
}

// A lock taken with a value: Holders shows it; the holder changes it with
// its token, and clears it; a wrong token is ErrStale and a non-holder
// ErrNotHolder, and neither changes it.
func TestLockValue(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/values/lock"
	l, err := a.Lock(ctx, name, WithValue("10.0.0.7:8080"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := b.Holders(ctx, name)
	if err != nil || len(gs) != 1 || gs[0].Value != "10.0.0.7:8080" ||
		gs[0].Token != l.Token() || gs[0].Mode != Exclusive ||
		gs[0].Session != a.Session() {
		t.Fatalf("holders: %+v %v", gs, err)
	}
	if err := l.SetValue(ctx, "job 42"); err != nil {
		t.Fatal(err)
	}
	expectValues(t, b, name, "job 42")

	stale := *l
	stale.token = l.token + 1000
	if err := stale.SetValue(ctx, "stale"); !errors.Is(err, ErrStale) {
		t.Fatalf("SetValue with another token: %v, want ErrStale", err)
	}
	expectValues(t, b, name, "job 42")

	other := *l // b's session, a's owner and token: not b's grant
	other.c = b
	if err := other.SetValue(ctx, "other"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("SetValue by another session: %v, want ErrNotHolder", err)
	}
	expectValues(t, b, name, "job 42")

	full := strings.Repeat("v", 255)
	if err := l.SetValue(ctx, full); err != nil {
		t.Fatalf("a value of 255 bytes: %v", err)
	}
	expectValues(t, b, name, full)
	if err := l.SetValue(ctx, ""); err != nil {
		t.Fatal(err)
	}
	expectValues(t, b, name, "")
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.SetValue(ctx, "after"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("SetValue after Unlock: %v, want ErrNotHolder", err)
	}
	expectValues(t, b, name)

	// Without a value, as before: none.
	l2, err := a.TryLock(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, b, name, "")
	l2.Unlock(ctx)
}

// listed reads List under `prefix`: each lock's value by name.
func listed(t *testing.T, c *Client, prefix string) map[string]string {
	t.Helper()
	ls, more, err := c.List(ctxT(t), prefix, 10)
	if err != nil || more {
		t.Fatalf("list %s: %+v %v %v", prefix, ls, more, err)
	}
	vs := map[string]string{}
	for _, g := range ls {
		vs[g.Name] = g.Value
	}
	return vs
}

func expectListed(t *testing.T, c *Client, prefix string,
	want map[string]string) {
	t.Helper()
	got := listed(t, c, prefix)
	if len(got) != len(want) {
		t.Fatalf("list %s: %q, want %q", prefix, got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Fatalf("list %s: %q, want %q", prefix, got, want)
		}
	}
}

// List gives each lock's value: its first holder's grant's, "" when it
// has none, and the new one after SetValue; a reader's (the first) as
// session and token are.
func TestListValues(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const valued, plain, rw = "go/listvals/valued", "go/listvals/plain",
		"go/listvals/rw"
	l, err := a.Lock(ctx, valued, WithValue("10.0.0.7:8080"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(ctx)
	p, err := b.Lock(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Unlock(ctx)
	ls, _, err := b.List(ctx, valued, 10)
	if err != nil || len(ls) != 1 || ls[0].Value != "10.0.0.7:8080" ||
		ls[0].Token != l.Token() || ls[0].Session != a.Session() ||
		ls[0].ClientName != t.Name() {
		t.Fatalf("list: %+v %v", ls, err)
	}
	expectListed(t, b, "go/listvals/",
		map[string]string{valued: "10.0.0.7:8080", plain: ""})
	if err := l.SetValue(ctx, "job 42"); err != nil {
		t.Fatal(err)
	}
	expectListed(t, a, "go/listvals/",
		map[string]string{valued: "job 42", plain: ""})

	r1, err := a.RLock(ctx, rw, WithValue("reader 1"))
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Unlock(ctx)
	r2, err := b.RLock(ctx, rw, WithValue("reader 2"))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Unlock(ctx)
	ls, _, err = a.List(ctx, rw, 10)
	if err != nil || len(ls) != 1 || ls[0].Token != r1.Token() ||
		ls[0].Value != "reader 1" {
		t.Fatalf("list of two readers: %+v %v, want the first's", ls, err)
	}
}

// A leader that refuses the listing with values (as one of a release
// before it does: ERROR BATON_EMALFORMED, the connection dropped) gets
// the listing without them, each Value "", and the client carries on.
func TestListFromAnEarlierLeader(t *testing.T) {
	a := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/listvals/earlier"
	l, err := a.Lock(ctx, name, WithValue("v"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(ctx)
	defer func(f uint16) { listFlags = f }(listFlags)
	listFlags = flagNames | flagValues | 0x0100 // no server knows 0x0100
	ls, more, err := a.List(ctx, name, 10)
	if err != nil || more || len(ls) != 1 || ls[0].Token != l.Token() ||
		ls[0].ClientName != t.Name() || ls[0].Value != "" {
		t.Fatalf("list: %+v %v %v, want the lock without its value", ls,
			more, err)
	}
	if err := l.SetValue(ctx, "w"); err != nil || l.Context().Err() != nil {
		t.Fatalf("the lock after the refused listing: %v %v", err,
			l.Context().Err())
	}
	expectValues(t, a, name, "w")
}

// A value too long, or with a NUL, fails with ErrInvalid before anything
// is sent: no request took a sequence number, and the lock stays free
// (or its value as it was).
func TestValueRefusedLocally(t *testing.T) {
	a := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/values/local"
	seq := func() uint64 {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.seq
	}
	long := strings.Repeat("x", 256)
	before := seq()
	for _, v := range []string{long, "a\x00b"} {
		for what, take := range map[string]func() (*Lock, error){
			"Lock":       func() (*Lock, error) { return a.Lock(ctx, name, WithValue(v)) },
			"TryLock":    func() (*Lock, error) { return a.TryLock(ctx, name, WithValue(v)) },
			"RLock":      func() (*Lock, error) { return a.RLock(ctx, name, WithValue(v)) },
			"TryRLock":   func() (*Lock, error) { return a.TryRLock(ctx, name, WithValue(v)) },
			"Acquire":    func() (*Lock, error) { return a.Acquire(ctx, name, 1, 2, WithValue(v)) },
			"TryAcquire": func() (*Lock, error) { return a.TryAcquire(ctx, name, 1, 2, WithValue(v)) },
		} {
			if l, err := take(); !errors.Is(err, ErrInvalid) || l != nil {
				t.Fatalf("%s with a value of %d bytes: %v, want ErrInvalid",
					what, len(v), err)
			}
		}
	}
	if s := seq(); s != before {
		t.Fatalf("seq went from %d to %d: a request was sent", before, s)
	}
	expectValues(t, a, name)

	l, err := a.Lock(ctx, name, WithValue("kept"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(ctx)
	before = seq()
	for _, v := range []string{long, "a\x00b"} {
		if err := l.SetValue(ctx, v); !errors.Is(err, ErrInvalid) {
			t.Fatalf("SetValue of %d bytes: %v, want ErrInvalid", len(v), err)
		}
	}
	if s := seq(); s != before {
		t.Fatalf("seq went from %d to %d: a SET_VALUE was sent", before, s)
	}
	expectValues(t, a, name, "kept")
}

// Readers and semaphore permits carry values of their own, and SetValue
// changes only its own grant's.
func TestSharedAndSemaphoreValues(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const rw, sem = "go/values/rw", "go/values/sem"
	r1, err := a.RLock(ctx, rw, WithValue("reader 1"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.TryRLock(ctx, rw, WithValue("reader 2"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := a.Holders(ctx, rw)
	if err != nil || len(gs) != 2 || gs[0].Mode != Shared ||
		gs[0].Token != r1.Token() || gs[1].Token != r2.Token() {
		t.Fatalf("holders: %+v %v", gs, err)
	}
	expectValues(t, a, rw, "reader 1", "reader 2")
	if err := r2.SetValue(ctx, "reader 2b"); err != nil {
		t.Fatal(err)
	}
	expectValues(t, a, rw, "reader 1", "reader 2b")
	if err := r1.SetValue(ctx, ""); err != nil {
		t.Fatal(err)
	}
	expectValues(t, a, rw, "", "reader 2b")
	r1.Unlock(ctx)
	r2.Unlock(ctx)

	s1, err := a.Acquire(ctx, sem, 1, 3, WithValue("permit a"))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.TryAcquire(ctx, sem, 2, 3, WithValue("permits b"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err = b.Holders(ctx, sem)
	if err != nil || len(gs) != 2 || gs[0].Mode != Semaphore ||
		gs[0].Permits != 1 || gs[1].Permits != 2 || gs[1].Limit != 3 {
		t.Fatalf("holders: %+v %v", gs, err)
	}
	expectValues(t, b, sem, "permit a", "permits b")
	if err := s1.SetValue(ctx, "permit a2"); err != nil {
		t.Fatal(err)
	}
	expectValues(t, b, sem, "permit a2", "permits b")
	stale := *s2
	stale.token = s1.token // a's grant's token, b's owner
	if err := stale.SetValue(ctx, "x"); !errors.Is(err, ErrStale) {
		t.Fatalf("SetValue with another grant's token: %v, want ErrStale", err)
	}
	expectValues(t, b, sem, "permit a2", "permits b")
	s1.Unlock(ctx)
	s2.Unlock(ctx)
}

// A waiter's value is its grant's once granted; the watch sees it in the
// Granted event, and SetValue's change as a Proclaimed one.
func TestWaiterValueAndWatch(t *testing.T) {
	a, b, w := dialT(t, 10*time.Second), dialT(t, 10*time.Second),
		dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/values/wait"
	wt, err := w.Watch(ctx, name, Now)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	la, err := a.Lock(ctx, name, WithValue("first"))
	if err != nil {
		t.Fatal(err)
	}
	type taken struct {
		l   *Lock
		err error
	}
	got := make(chan taken, 1)
	go func() {
		l, err := b.Lock(ctx, name, WithValue("second"))
		got <- taken{l, err}
	}()
	for {
		gs, err := a.Holders(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(gs) == 1 && gs[0].Waiters == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	expectValues(t, a, name, "first") // a waiter's value is not shown
	la.Unlock(ctx)
	tb := <-got
	if tb.err != nil {
		t.Fatal(tb.err)
	}
	lb := tb.l
	expectValues(t, a, name, "second")
	if err := lb.SetValue(ctx, "second, moved"); err != nil {
		t.Fatal(err)
	}
	lb.Unlock(ctx)
	for _, want := range []struct {
		kind  EventKind
		token uint64
		value string
	}{
		{Granted, la.Token(), "first"},
		{Released, la.Token(), ""},
		{Granted, lb.Token(), "second"},
		{Proclaimed, lb.Token(), "second, moved"},
		{Released, lb.Token(), ""},
	} {
		select {
		case e := <-wt.Events():
			if e.Kind != want.kind || e.Token != want.token ||
				(want.kind != Released && e.Value != want.value) {
				t.Fatalf("event %+v, want %v of token %d with %q", e,
					want.kind, want.token, want.value)
			}
		case <-ctx.Done():
			t.Fatalf("no %v event (watch: %v)", want.kind, wt.Err())
		}
	}
}

// SetValue on an election's leadership changes the leader's value as
// Proclaim does; on a LockAll's grant, every name's.
func TestSetValueElectionAndLockAll(t *testing.T) {
	a := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	le, err := a.Campaign(ctx, "go/values/elect", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := le.SetValue(ctx, "v2"); err != nil {
		t.Fatal(err)
	}
	if g, err := a.Leader(ctx, "go/values/elect"); err != nil || g == nil ||
		g.Value != "v2" {
		t.Fatalf("leader %+v %v, want value v2", g, err)
	}
	le.Resign(ctx)

	names := []MultiName{{Name: "go/values/m1"}, {Name: "go/values/m2",
		Shared: true}}
	lm, err := a.LockAll(ctx, names...)
	if err != nil {
		t.Fatal(err)
	}
	defer lm.Unlock(ctx)
	if err := lm.SetValue(ctx, "both"); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		expectValues(t, a, n.Name, "both")
	}
	lk, err := a.Lock(ctx, "go/values/plain", WithValue("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock(context.Background())
	if err := lk.Proclaim(ctx, "y"); !errors.Is(err, ErrKind) {
		t.Fatalf("Proclaim on a lock: %v, want ErrKind (SetValue is a lock's)",
			err)
	}
	expectValues(t, a, "go/values/plain", "x")
}
