package baton

// Against a real 3-node TLS cluster that TestMain starts with
// scripts/cluster (ports BATON_GO_TEST_BASE_PORT+1.., default 27600) and
// removes at the end, as the Python binding's tests do.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	root       string // the repository
	clusterEnv []string
	basePort   int    // the test cluster's BATON_BASE_PORT
	stateDir   string // its BATON_CLUSTER_DIR
)

func cluster(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(root, "scripts", "cluster"), args...)
	cmd.Env = clusterEnv
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The test cluster's limits are small, so that each limit's error takes a
// handful of calls (as the Python binding's tests have them).
const clusterConfig = `max-sessions = 64
max-locks-per-session = 64
max-waiters-per-lock = 8
max-holders-per-lock = 4
max-permits = 16
max-names-per-acquire = 4
max-lock-delay-ms = 2000
watch-history = 64
max-watches-per-connection = 4`

func TestMain(m *testing.M) {
	if name := os.Getenv("BATON_GO_TEST_HOLDER"); name != "" {
		os.Exit(holderChild(name)) // pause_test.go
	}
	wd, _ := os.Getwd()
	root = filepath.Clean(filepath.Join(wd, "..", ".."))
	base := os.Getenv("BATON_GO_TEST_BASE_PORT")
	if base == "" {
		base = "27600"
	}
	basePort, _ = strconv.Atoi(base)
	state, err := os.MkdirTemp("", "baton-gotest-")
	stateDir = state
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			clusterEnv = append(clusterEnv, kv)
		}
	}
	clusterEnv = append(clusterEnv, "BATON_BASE_PORT="+base,
		"BATON_CLUSTER_DIR="+state, "BATON_NODE_CONFIG="+clusterConfig)
	if out, err := cluster("up"); err != nil {
		fmt.Fprintf(os.Stderr, "scripts/cluster up: %v\n%s", err, out)
		os.Exit(1)
	}
	out, err := cluster("env")
	if err != nil {
		fmt.Fprintf(os.Stderr, "scripts/cluster env: %v\n%s", err, out)
		os.Exit(1)
	}
	for _, line := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, strings.Trim(v, "'"))
		}
	}
	code := m.Run()
	cluster("down", "--purge")
	os.RemoveAll(state)
	os.Exit(code)
}

func dialT(t *testing.T, ttl time.Duration) *Client {
	t.Helper()
	cfg, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TLS == nil {
		t.Fatal("the test cluster runs with TLS: BATON_CACERT is not set")
	}
	cfg.TTL = ttl
	cfg.Name = t.Name()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The Go table of errors is include/baton/errors.h's, code for code.
func TestErrorTableIsTheHeader(t *testing.T) {
	h, err := os.ReadFile(filepath.Join(root, "include", "baton", "errors.h"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`X\((E[A-Z]+),\s*(-\d+),\s*"((?:[^"\\]|\\.)*)"\)`)
	rows := re.FindAllStringSubmatch(string(h), -1)
	if len(rows) < 50 {
		t.Fatalf("read %d codes from errors.h", len(rows))
	}
	for _, r := range rows {
		code, _ := strconv.Atoi(r[2])
		e, ok := errorTable[int32(code)]
		if !ok || e.Name != "BATON_"+r[1] || e.Text != r[3] {
			t.Errorf("BATON_%s (%d, %q): Go has %+v", r[1], code, r[3], e)
		}
	}
	if len(errorTable) != len(rows) {
		t.Errorf("Go has %d codes, errors.h %d", len(errorTable), len(rows))
	}
}

func TestLockUnlockTokensRise(t *testing.T) {
	c := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	var last uint64
	for i := 0; i < 3; i++ {
		l, err := c.Lock(ctx, "go/rise")
		if err != nil {
			t.Fatal(err)
		}
		if l.Token() <= last {
			t.Fatalf("token %d after %d", l.Token(), last)
		}
		last = l.Token()
		if l.Context().Err() != nil {
			t.Fatal("a held lock's Context ended")
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(context.Cause(l.Context()), ErrUnlocked) {
			t.Fatalf("after Unlock the cause is %v", context.Cause(l.Context()))
		}
	}
}

func TestTryLockBusyAndWaiting(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	la, err := a.Lock(ctx, "go/busy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.TryLock(ctx, "go/busy"); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryLock of a held lock: %v, want ErrBusy", err)
	}
	// A wait that its context ends is withdrawn...
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(short, "go/busy"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past its context: %v", err)
	}
	// ...and a wait that its holder ends is granted, with a larger token.
	got := make(chan *Lock)
	go func() {
		l, err := b.Lock(ctx, "go/busy")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	time.Sleep(200 * time.Millisecond)
	if err := la.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	lb := <-got
	if lb == nil || lb.Token() <= la.Token() {
		t.Fatalf("granted after the unlock: %+v", lb)
	}
	if err := lb.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.TryLock(ctx, ""); !errors.Is(err, ErrName) {
		t.Fatalf("an empty name: %v, want ErrName", err)
	}
}

// Goroutines of one client are separate owners: they wait for each other,
// and each grant's token is larger than the one before.
func TestOneClientManyGoroutines(t *testing.T) {
	c := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	var mu sync.Mutex
	var tokens []uint64
	inside := 0
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				l, err := c.Lock(ctx, "go/many")
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				inside++
				if inside != 1 {
					t.Errorf("%d holders at once", inside)
				}
				tokens = append(tokens, l.Token())
				mu.Unlock()
				mu.Lock()
				inside--
				mu.Unlock()
				if err := l.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("token %d after %d", tokens[i], tokens[i-1])
		}
	}
	if len(tokens) != 40 {
		t.Fatalf("%d grants, want 40", len(tokens))
	}
}

// Go and C (batonctl) clients on one lock: each waits for the other, in
// arrival order, and the tokens rise.
func TestGoAndCInterleave(t *testing.T) {
	c := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	l, err := c.Lock(ctx, "go/mixed")
	if err != nil {
		t.Fatal(err)
	}
	ctl := exec.Command(filepath.Join(root, "build", "batonctl"), "lock",
		"go/mixed", "--", "sh", "-c", "echo token $BATON_TOKEN")
	ctl.Env = os.Environ()
	out, _ := ctl.StdoutPipe()
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // batonctl queues behind us
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if err := ctl.Wait(); err != nil {
		t.Fatalf("batonctl lock: %v (%q)", err, line)
	}
	var ctok uint64
	if _, err := fmt.Sscanf(line, "token %d", &ctok); err != nil ||
		ctok <= l.Token() {
		t.Fatalf("batonctl's token %q after Go's %d", line, l.Token())
	}
	l2, err := c.Lock(ctx, "go/mixed")
	if err != nil {
		t.Fatal(err)
	}
	if l2.Token() <= ctok {
		t.Fatalf("Go's token %d after batonctl's %d", l2.Token(), ctok)
	}
	l2.Unlock(ctx)
}

// A session whose keepalives stop: its lock's Context ends (ErrJeopardy)
// before another client can be granted the lock.
func TestJeopardyBeforeTheLockMoves(t *testing.T) {
	a, b := dialT(t, 1500*time.Millisecond), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	la, err := a.Lock(ctx, "go/jeopardy")
	if err != nil {
		t.Fatal(err)
	}
	a.stopKeepalives.Store(true)
	granted := make(chan time.Time, 1)
	go func() {
		lb, err := b.Lock(ctx, "go/jeopardy")
		if err != nil {
			t.Error(err)
			granted <- time.Time{}
			return
		}
		granted <- time.Now()
		lb.Unlock(ctx)
	}()
	<-la.Context().Done()
	ended := time.Now()
	if !errors.Is(context.Cause(la.Context()), ErrJeopardy) {
		t.Fatalf("cause %v, want ErrJeopardy", context.Cause(la.Context()))
	}
	at := <-granted
	if at.IsZero() || !ended.Before(at) {
		t.Fatalf("jeopardy at %v, the lock granted elsewhere at %v", ended, at)
	}
}

// The leader killed while a lock is held: the session carries on with the
// next leader (the same lock released with its token), and the next grant
// has a larger token.
func TestFailoverTokensRise(t *testing.T) {
	c := dialT(t, 10*time.Second)
	ctx := ctxT(t)
	l, err := c.Lock(ctx, "go/failover")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cluster("kill-leader"); err != nil {
		t.Fatalf("kill-leader: %v %s", err, out)
	}
	defer func() {
		if out, err := cluster("restart-dead"); err != nil {
			t.Errorf("restart-dead: %v %s", err, out)
		}
	}()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("unlock after the leader died: %v", err)
	}
	l2, err := c.Lock(ctx, "go/failover")
	if err != nil {
		t.Fatal(err)
	}
	if l2.Token() <= l.Token() {
		t.Fatalf("token %d after %d", l2.Token(), l.Token())
	}
	if err := l2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Readers hold a lock together; a writer waits for them, and Holder says
// who holds it.
func TestSharedLocksAndHolder(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	r1, err := a.RLock(ctx, "go/rw")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := b.TryRLock(ctx, "go/rw")
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	if !r1.Shared() || !r2.Shared() || r2.Token() <= r1.Token() {
		t.Fatalf("readers %+v %+v", r1, r2)
	}
	if _, err := b.TryLock(ctx, "go/rw"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a writer beside readers: %v, want ErrBusy", err)
	}
	h, err := b.Holder(ctx, "go/rw")
	if err != nil || h == nil || h.Session != a.Session() || h.Token != r1.Token() {
		t.Fatalf("holder %+v (%v), want session %d token %d", h, err,
			a.Session(), r1.Token())
	}
	r1.Unlock(ctx)
	r2.Unlock(ctx)
	if h, err := a.Holder(ctx, "go/rw"); err != nil || h != nil {
		t.Fatalf("holder of a free lock: %+v, %v", h, err)
	}
	w, err := b.TryLock(ctx, "go/rw")
	if err != nil || w.Shared() {
		t.Fatalf("the writer once the readers left: %v", err)
	}
	w.Unlock(ctx)
}

// A semaphore of 2 permits: two holders at once, a third refused; it is
// not a lock's name, and every Acquire names the same limit.
func TestSemaphore(t *testing.T) {
	a, b := dialT(t, 10*time.Second), dialT(t, 10*time.Second)
	ctx := ctxT(t)
	s1, err := a.Acquire(ctx, "go/sem", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.TryAcquire(ctx, "go/sem", 1, 2)
	if err != nil {
		t.Fatalf("the second permit: %v", err)
	}
	if _, err := b.TryAcquire(ctx, "go/sem", 1, 2); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third permit of two: %v, want ErrBusy", err)
	}
	if _, err := b.TryAcquire(ctx, "go/sem", 1, 3); !errors.Is(err, ErrPermits) {
		t.Fatalf("another limit: %v, want ErrPermits", err)
	}
	if _, err := b.TryLock(ctx, "go/sem"); !errors.Is(err, ErrKind) {
		t.Fatalf("a semaphore locked as a lock: %v, want ErrKind", err)
	}
	if s2.Token() <= s1.Token() {
		t.Fatalf("tokens %d then %d", s1.Token(), s2.Token())
	}
	s1.Unlock(ctx)
	s3, err := b.TryAcquire(ctx, "go/sem", 1, 2)
	if err != nil {
		t.Fatalf("a permit given back: %v", err)
	}
	s2.Unlock(ctx)
	s3.Unlock(ctx)
}
