package baton

// Every error a call can return, raised by a real failure against the
// test cluster (provoke), or listed with the reason a Go client cannot
// meet it (unreachable); a test checks that the two cover the table, so a
// new code needs a decision. ErrJeopardy is provoked in baton_test.go and
// pause_test.go, ErrRevoked in features_test.go.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var unreachable = map[*Error]string{
	ErrNoMem:        "a node out of memory",
	ErrMalformed:    "the client sends only well-formed frames",
	ErrVersion:      "the client speaks the cluster's protocol and command versions",
	ErrUnsupported:  "the client sends only the modes it knows",
	ErrCancelled:    "CANCEL is the client's own, when a wait's ctx ends: the call returns ctx's error",
	ErrNotWaiting:   "as ErrCancelled: only the client's own CANCEL meets it",
	ErrWaiting:      "every call is an owner of its own, so no owner waits twice",
	ErrUpgrade:      "every call is an owner of its own, so no reader asks to write",
	ErrHeld:         "every call is an owner of its own, so no owner asks for what it holds",
	ErrInflight:     "the client keeps at most 31 requests out per session, the cluster allows 32",
	ErrSeq:          "the client withdraws a wait that meets it and asks again",
	ErrOverflow:     "2^32 reentrant holds: every call is an owner of its own",
	ErrCorrupt:      "a corrupt snapshot on a node",
	ErrNotFound:     "answers UNWATCH; a Watch ends by closing its connection",
	ErrNotLeader:    "the client follows NOT_LEADER to the leader",
	ErrUnknown:      "the client asks again under the same sequence number",
	ErrTooBig:       "the client never sends a frame over the limit",
	ErrTooManyConns: "a node over its limit closes the connection; the client tries the next",
	ErrUnavailable:  "a node installing a snapshot answers watches so; the Watch moves to another node",
	ErrShutdown:     "a node that shuts down closes; the client tries the next",
	ErrIO:           "answers backups, which this client does not offer",
	ErrNoSpace:      "a node's full disk (the chaos suite's nemesis)",
	ErrCantChange:   "answers membership changes, which this client does not offer",
	ErrNoBackup:     "answers backups, which this client does not offer",
	ErrNotReady:     "answers backups, which this client does not offer",
	ErrNoMember:     "answers membership changes, which this client does not offer",
	ErrIDInUse:      "answers membership changes, which this client does not offer",
	ErrIsLeader:     "answers TRANSFER, which this client does not offer",
	ErrUnreachable:  "answers membership changes, which this client does not offer",
	ErrNotVoter:     "answers membership changes, which this client does not offer",
	ErrQuota:        "needs a quota set, an administrator's change this client does not offer (tests/rules/two-teams provokes it with batonctl)",
	ErrAddrInUse:    "answers membership changes, which this client does not offer",
	ErrTooManyWatches: "each Watch has a connection of its own (so " +
		"max-watches-per-connection never applies), and the cluster-wide " +
		"max-watches is 65,536",
	ErrSlow: "a watch its reader does not drain stops reading its " +
		"connection: the node cuts it off once output-limit (at least " +
		"64 KiB) and both sockets' buffers (megabytes) are full",
}

// provoke: each raises its error through a call, which the test checks
// with errors.Is.
var provoke = map[*Error]func(t *testing.T) error{
	ErrInvalid: func(t *testing.T) error {
		_, err := dialT(t, 10*time.Second).TryAcquire(ctxT(t), "go/f/invalid", 0, 2)
		return err
	},
	ErrName: func(t *testing.T) error {
		_, _, err := dialT(t, 10*time.Second).List(ctxT(t), "a\x00b", 10)
		return err
	},
	ErrNoSession: func(t *testing.T) error {
		return dialT(t, 10*time.Second).Revoke(ctxT(t), 1<<62)
	},
	ErrExpired: func(t *testing.T) error {
		a, admin := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
		if err := admin.Revoke(ctxT(t), a.Session()); err != nil {
			t.Fatal(err)
		}
		_, err := a.TryLock(ctxT(t), "go/f/expired")
		return err
	},
	ErrClosed: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		if err := c.Close(ctxT(t)); err != nil {
			t.Fatal(err)
		}
		_, err := c.TryLock(ctxT(t), "go/f/closed")
		return err
	},
	ErrBusy: func(t *testing.T) error {
		a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
		if _, err := a.Lock(ctxT(t), "go/f/busy"); err != nil {
			t.Fatal(err)
		}
		_, err := b.TryLock(ctxT(t), "go/f/busy")
		return err
	},
	ErrNotHolder: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		return c.RevokeLock(ctxT(t), "go/f/notholder", c.Session(), 5)
	},
	ErrStale: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		l, err := c.Lock(ctxT(t), "go/f/stale")
		if err != nil {
			t.Fatal(err)
		}
		return c.Check(ctxT(t), "go/f/stale", l.Token()-1)
	},
	ErrTimedOut: func(t *testing.T) error {
		a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
		if _, err := a.Lock(ctxT(t), "go/f/timedout"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
		defer cancel()
		_, err := b.Lock(ctx, "go/f/timedout")
		return err
	},
	ErrTooManySessions: func(t *testing.T) error {
		for i := 0; i < 80; i++ { // the cluster allows 64
			c, err := dialE(t, 10*time.Second)
			if err != nil {
				return err
			}
			t.Cleanup(func() { c.Close(context.Background()) })
		}
		return nil
	},
	ErrTooManyLocks: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		for i := 0; i <= 64; i++ { // 64 per session
			if _, err := c.TryLock(ctxT(t), fmt.Sprintf("go/f/many/%d", i)); err != nil {
				return err
			}
		}
		return nil
	},
	ErrTooManyWaiters: func(t *testing.T) error {
		a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
		const name = "go/f/waiters"
		l, err := a.Lock(ctxT(t), name)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctxT(t))
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		for i := 0; i < 8; i++ { // 8 per lock
			wg.Add(1)
			go func() { defer wg.Done(); b.Lock(ctx, name) }()
		}
		for h, _ := a.Holder(ctxT(t), name); h == nil || h.Waiters < 8; h, _ = a.Holder(ctxT(t), name) {
			time.Sleep(10 * time.Millisecond)
		}
		_, err = b.Lock(ctx, name)
		l.Unlock(ctxT(t))
		return err
	},
	ErrTTL: func(t *testing.T) error {
		_, err := dialE(t, time.Millisecond)
		return err
	},
	ErrConnect: func(t *testing.T) error {
		cfg, _ := ConfigFromEnv()
		// Between the raft ports (base+1..) and the client ports
		// (base+101..): nothing listens there.
		cfg.Endpoints = []string{fmt.Sprintf("127.0.0.1:%d", basePort+99)}
		_, err := Dial(ctxT(t), cfg)
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("the error does not say why: %v", err)
		}
		return err
	},
	ErrTLS: func(t *testing.T) error {
		cfg, _ := ConfigFromEnv()
		cfg.TLS = &tls.Config{RootCAs: x509.NewCertPool(),
			Certificates: cfg.TLS.Certificates} // trusts no CA
		_, err := Dial(ctxT(t), cfg)
		return err
	},
	ErrPerm: func(t *testing.T) error {
		// A certificate of the cluster's CA with the default role, lock:
		// it may lock, not revoke.
		tlsDir := filepath.Join(stateDir, "tls")
		out, err := exec.Command(filepath.Join(root, "scripts", "certs"), tlsDir,
			"--nodes", "3", "--client", "go-lock-role").CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/certs: %v %s", err, out)
		}
		cfg, _ := ConfigFromEnv()
		pair, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "go-lock-role.crt"),
			filepath.Join(tlsDir, "go-lock-role.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLS.Certificates = []tls.Certificate{pair}
		user, err := Dial(ctxT(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer user.Close(ctxT(t))
		l, err := user.Lock(ctxT(t), "go/f/perm")
		if err != nil {
			t.Fatalf("a lock-role client locks: %v", err)
		}
		return user.RevokeLock(ctxT(t), "go/f/perm", user.Session(), l.Token())
	},
	ErrKind: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		if _, err := c.Acquire(ctxT(t), "go/f/kind", 1, 2); err != nil {
			t.Fatal(err)
		}
		_, err := c.TryLock(ctxT(t), "go/f/kind")
		return err
	},
	ErrPermits: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		if _, err := c.Acquire(ctxT(t), "go/f/permits", 1, 2); err != nil {
			t.Fatal(err)
		}
		_, err := c.TryAcquire(ctxT(t), "go/f/permits", 1, 3)
		return err
	},
	ErrTooManyPermits: func(t *testing.T) error {
		_, err := dialT(t, 10*time.Second).TryAcquire(ctxT(t), "go/f/permits17", 1, 17)
		return err
	},
	ErrTooManyHolders: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		for i := 0; i <= 4; i++ { // 4 per lock
			if _, err := c.TryRLock(ctxT(t), "go/f/holders"); err != nil {
				return err
			}
		}
		return nil
	},
	ErrTooManyNames: func(t *testing.T) error {
		var names []MultiName
		for i := 0; i < 5; i++ { // 4 per acquire
			names = append(names, MultiName{Name: fmt.Sprintf("go/f/names/%d", i)})
		}
		_, err := dialT(t, 10*time.Second).TryLockAll(ctxT(t), names...)
		return err
	},
	ErrDelay: func(t *testing.T) error {
		cfg, _ := ConfigFromEnv()
		cfg.LockDelay = 3 * time.Second // at most 2 s here
		_, err := Dial(ctxT(t), cfg)
		return err
	},
	ErrCompacted: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		const name = "go/f/compacted"
		w, err := c.Watch(ctxT(t), name, Now)
		if err != nil {
			t.Fatal(err)
		}
		// The nodes keep the last 64 events: 80 more push the first out.
		for i := 0; i < 41; i++ {
			l, err := c.Lock(ctxT(t), name)
			if err != nil {
				t.Fatal(err)
			}
			l.Unlock(ctxT(t))
		}
		first := <-w.Events()
		w.Close()
		_, err = c.Watch(ctxT(t), name, first.Position)
		return err
	},
	ErrNoAnswer: func(t *testing.T) error {
		c := dialT(t, 10*time.Second)
		if _, err := c.Holder(ctxT(t), "go/f/noanswer"); err != nil {
			t.Fatal(err)
		}
		pids := clusterPIDs(t)
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGSTOP)
		}
		defer func() {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGCONT)
			}
		}()
		ctx, cancel := context.WithTimeout(ctxT(t), 500*time.Millisecond)
		defer cancel()
		_, err := c.Holder(ctx, "go/f/noanswer")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("no answer by the deadline: %v, want "+
				"context.DeadlineExceeded too", err)
		}
		return err
	},
}

// dialE opens a session of the test cluster with `ttl`, or says why not.
func dialE(t *testing.T, ttl time.Duration) (*Client, error) {
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	cfg.TTL = ttl
	return Dial(ctxT(t), cfg)
}

// clusterPIDs are the test cluster's batond processes.
func clusterPIDs(t *testing.T) []int {
	var pids []int
	for i := 1; i <= 3; i++ {
		b, err := os.ReadFile(filepath.Join(stateDir,
			fmt.Sprintf("node%d.pid", i)))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

func TestEveryErrorProvokedOrExplained(t *testing.T) {
	for code, e := range errorTable {
		_, p := provoke[e]
		_, u := unreachable[e]
		if p == u {
			t.Errorf("%s (%d): provoked %v, explained %v; want exactly one",
				e.Name, code, p, u)
		}
	}
}

func TestRealFailureRaises(t *testing.T) {
	for e, fn := range provoke {
		t.Run(e.Name, func(t *testing.T) {
			if err := fn(t); !errors.Is(err, e) {
				t.Fatalf("got %v, want %s", err, e.Name)
			}
		})
	}
}
