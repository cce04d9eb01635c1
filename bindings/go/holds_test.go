package baton

// Hold times: WithHold on a lock, a reader and semaphore permits, Extend
// by the holder with its token, and a short hold that the cluster ends on
// its own, against the test cluster.

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
)

// The ACQUIRE and EXTEND bytes at docs/protocol.md's offsets: a hold time
// makes a lock's or a semaphore's ACQUIRE version 4 (permits and limit
// present, the value after the name, empty when there is none, then
// hold_ms); a campaign carries none; an EXTEND is version 4 with the
// token, the name and hold_ms.
func TestHoldEncoding(t *testing.T) {
	const name = "jobs"
	for _, tc := range []struct {
		a       lockArgs
		version uint8
		hold    uint32
	}{
		{lockArgs{mode: Exclusive, holdMs: 1500}, 4, 1500},
		{lockArgs{mode: Shared, value: "r", holdMs: 1}, 4, 1},
		{lockArgs{mode: Semaphore, permits: 2, limit: 5, holdMs: 70000}, 4,
			70000},
		{lockArgs{mode: Exclusive, holdMs: math.MaxUint32}, 4, math.MaxUint32},
		{lockArgs{mode: Election, value: "leader", holdMs: 10}, 3, 0},
	} {
		b := cmdAcquire(1, 2, 3, 4, tc.a, name)
		if b[0] != tc.version || b[1] != cAcquire || len(b)%8 != 0 {
			t.Fatalf("%+v: % x, want version %d", tc.a, b, tc.version)
		}
		if binary.LittleEndian.Uint32(b[41:]) != tc.a.permits ||
			binary.LittleEndian.Uint32(b[45:]) != tc.a.limit ||
			int(b[49]) != len(name) || string(b[50:54]) != name {
			t.Fatalf("%+v: permits, limit and name in % x", tc.a, b)
		}
		rest := b[54:]
		if int(rest[0]) != len(tc.a.value) ||
			string(rest[1:1+len(tc.a.value)]) != tc.a.value {
			t.Fatalf("%+v: no value after the name in % x", tc.a, b)
		}
		rest = rest[1+len(tc.a.value):]
		if tc.version == 4 {
			if len(rest) < 4 || binary.LittleEndian.Uint32(rest) != tc.hold {
				t.Fatalf("%+v: hold time %d not after the value in % x",
					tc.a, tc.hold, b)
			}
			rest = rest[4:]
		}
		for _, p := range rest {
			if p != 0 {
				t.Fatalf("%+v: more than padding after the fields: % x", tc.a, b)
			}
		}
	}
	b := cmdExtend(1, 2, 3, 4, 5, name, 30000)
	want := []byte{4, cExtend, 0, 0}
	for _, v := range []uint64{1, 2, 3, 4, 5} {
		want = binary.LittleEndian.AppendUint64(want, v)
	}
	want = append(want, 4, 'j', 'o', 'b', 's')
	want = binary.LittleEndian.AppendUint32(want, 30000)
	want = append(want, 0, 0, 0) // to 56 bytes
	if string(b) != string(want) {
		t.Fatalf("EXTEND % x, want % x", b, want)
	}
}

// WithHold's duration in ms as the ACQUIRE carries it: rounded up, 0 for
// none; a negative one or one past a u32 of ms is refused.
func TestHoldMs(t *testing.T) {
	for _, tc := range []struct {
		d  time.Duration
		ms uint32
		ok bool
	}{
		{0, 0, true},
		{time.Nanosecond, 1, true},
		{1500 * time.Millisecond, 1500, true},
		{1500*time.Millisecond + 1, 1501, true},
		{math.MaxUint32 * time.Millisecond, math.MaxUint32, true},
		{math.MaxUint32*time.Millisecond + 1, 0, false},
		{-time.Millisecond, 0, false},
	} {
		ms, err := holdMs(tc.d)
		if (err == nil) != tc.ok || ms != tc.ms ||
			(err != nil && !errors.Is(err, ErrInvalid)) {
			t.Fatalf("holdMs(%v) = %d, %v; want %d (ok %v)", tc.d, ms, err,
				tc.ms, tc.ok)
		}
	}
	a := withOptions(lockArgs{}, []LockOption{WithValue("v"),
		WithHold(2 * time.Second)})
	if a.hold != 2*time.Second || a.value != "v" {
		t.Fatalf("options: %+v", a)
	}
}

// A lock taken with a hold time: Holders shows the grant; the holder
// extends it with its token; another token is ErrStale, another session
// ErrNotHolder; a hold over the cluster's max-hold-ms, 0 or a grant
// without one is ErrInvalid; a reader's and a semaphore's grants take
// one too.
func TestLockHold(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/holds/lock"
	l, err := a.Lock(ctx, name, WithHold(time.Minute), WithValue("job 1"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(context.Background())
	gs, err := b.Holders(ctx, name)
	if err != nil || len(gs) != 1 || gs[0].Token != l.Token() ||
		gs[0].Session != a.Session() || gs[0].Value != "job 1" {
		t.Fatalf("holders: %+v %v", gs, err)
	}
	if err := l.Extend(ctx, 90*time.Second); err != nil {
		t.Fatal(err)
	}
	stale := *l
	stale.token = l.token + 1000
	if err := stale.Extend(ctx, time.Minute); !errors.Is(err, ErrStale) {
		t.Fatalf("Extend with another token: %v, want ErrStale", err)
	}
	other := *l // b's session, a's owner and token: not b's grant
	other.c = b
	if err := other.Extend(ctx, time.Minute); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Extend by another session: %v, want ErrNotHolder", err)
	}
	for _, d := range []time.Duration{0, -time.Second, 25 * time.Hour} {
		if err := l.Extend(ctx, d); !errors.Is(err, ErrInvalid) {
			t.Fatalf("Extend(%v): %v, want ErrInvalid", d, err)
		}
	}
	if gs, err := b.Holders(ctx, name); err != nil || len(gs) != 1 ||
		gs[0].Token != l.Token() {
		t.Fatalf("holders after the refused extends: %+v %v", gs, err)
	}

	for _, d := range []time.Duration{25 * time.Hour, -time.Second} {
		if _, err := b.TryLock(ctx, "go/holds/over",
			WithHold(d)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("TryLock WithHold(%v): %v, want ErrInvalid", d, err)
		}
	}
	if h, err := b.Holder(ctx, "go/holds/over"); err != nil || h != nil {
		t.Fatalf("a refused hold took the lock: %+v %v", h, err)
	}
	plain, err := b.TryLock(ctx, "go/holds/plain")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Unlock(context.Background())
	if err := plain.Extend(ctx, time.Second); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Extend of a grant without a hold time: %v, want "+
			"ErrInvalid", err)
	}

	r, err := a.TryRLock(ctx, "go/holds/rw", WithHold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Unlock(context.Background())
	s, err := b.TryAcquire(ctx, "go/holds/sem", 2, 3, WithHold(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unlock(context.Background())
	if err := r.Extend(ctx, 2*time.Minute); err != nil {
		t.Fatalf("a reader's Extend: %v", err)
	}
	if err := s.Extend(ctx, 2*time.Minute); err != nil {
		t.Fatalf("a semaphore holder's Extend: %v", err)
	}
}

// A short hold ends on its own: the waiter gets the lock with a higher
// token, the holder's Context ends with ErrRevoked, its Extend comes too
// late (ErrNotHolder), and the watch's Released event says Cause 22
// (EXPIRE_HOLD). A short hold extended at once to a long one outlives it.
// Every wait is a generous deadline, not a measurement.
func TestHoldRunsOut(t *testing.T) {
	a, b, w := dialT(t, 10*time.Second), dialT(t, 10*time.Second),
		dialT(t, 10*time.Second)
	ctx := ctxT(t)
	const name = "go/holds/short"
	wt, err := w.Watch(ctx, name, Now)
	if err != nil {
		t.Fatal(err)
	}
	defer wt.Close()
	kept, err := a.Lock(ctx, "go/holds/kept", WithHold(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Unlock(context.Background())
	if err := kept.Extend(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	l, err := a.Lock(ctx, name, WithHold(1500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Lock(ctx, name) // waits for the hold to run out
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Unlock(context.Background())
	if lb.Token() <= l.Token() {
		t.Fatalf("the waiter's token %d is not above the holder's %d",
			lb.Token(), l.Token())
	}
	select {
	case <-l.Context().Done():
		if cause := context.Cause(l.Context()); !errors.Is(cause, ErrRevoked) {
			t.Fatalf("the holder's Context ended with %v, want ErrRevoked",
				cause)
		}
	case <-ctx.Done():
		t.Fatal("the holder's Context did not end once its hold ran out")
	}
	if err := l.Extend(ctx, time.Minute); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("Extend after the hold ran out: %v, want ErrNotHolder", err)
	}
	if kept.Context().Err() != nil {
		t.Fatalf("the extended hold ended: %v", context.Cause(kept.Context()))
	}
	if g, err := b.Holders(ctx, "go/holds/kept"); err != nil || len(g) != 1 ||
		g[0].Token != kept.Token() {
		t.Fatalf("the extended hold is not held: %+v %v", g, err)
	}
	for _, want := range []struct {
		kind  EventKind
		token uint64
		cause uint8
	}{
		{Granted, l.Token(), cAcquire},
		{Released, l.Token(), 22}, // EXPIRE_HOLD
		{Granted, lb.Token(), 0},  // by the lock-delay's end or at once
	} {
		select {
		case e := <-wt.Events():
			if e.Kind != want.kind || e.Token != want.token ||
				(want.cause != 0 && e.Cause != want.cause) {
				t.Fatalf("event %+v, want %v of token %d, cause %d", e,
					want.kind, want.token, want.cause)
			}
		case <-ctx.Done():
			t.Fatalf("no %v event (watch: %v)", want.kind, wt.Err())
		}
	}
}
