package baton

// A holder whose whole process is paused (SIGSTOP: a stalled VM, a long
// GC pause, a laptop lid) past its TTL: the cluster grants the lock
// elsewhere, and when the holder resumes, its lock's Context has ended
// before it does any more work under the lock.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holderChild is the test binary run as a holder (BATON_GO_TEST_HOLDER
// names the lock): it prints "held TOKEN", then "work UNIXNANO" every
// 20 ms while its lock's Context lives, and "stopped CAUSE" when it ends.
// BATON_GO_TEST_IGNORE=1 makes it a broken holder that never looks at
// the Context: the negative control.
func holderChild(name string) int {
	cfg, err := ConfigFromEnv()
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	cfg.TTL = 1500 * time.Millisecond
	ctx := context.Background()
	c, err := Dial(ctx, cfg)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	l, err := c.Lock(ctx, name)
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println("held", l.Token())
	ignore := os.Getenv("BATON_GO_TEST_IGNORE") == "1"
	for {
		if err := l.Context().Err(); err != nil && !ignore {
			fmt.Println("stopped", context.Cause(l.Context()))
			return 0
		}
		fmt.Println("work", time.Now().UnixNano())
		time.Sleep(20 * time.Millisecond)
	}
}

// pausedHolder runs a holder of `name`, pauses it until another client
// is granted the lock, resumes it, and returns what it printed after the
// resume and when it was paused.
func pausedHolder(t *testing.T, name string, ignore bool) (after []string,
	paused time.Time) {
	t.Helper()
	env := []string{"BATON_GO_TEST_HOLDER=" + name}
	if ignore {
		env = append(env, "BATON_GO_TEST_IGNORE=1")
	}
	cmd, lines := started(t, env, os.Args[0], "-test.run=^$")
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the holder exited")
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("the holder printed nothing for 20 s")
		}
		return ""
	}
	held := next()
	token, err := strconv.ParseUint(strings.TrimPrefix(held, "held "), 10, 64)
	if err != nil {
		t.Fatalf("the holder: %q", held)
	}
	for !strings.HasPrefix(next(), "work") {
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, cmd.Process.Pid)
	paused = time.Now() // it can print nothing later until SIGCONT
	other := dialT(t, 10*time.Second)
	l, err := other.Lock(ctxT(t), name) // once the paused session expires
	if err != nil {
		cmd.Process.Signal(syscall.SIGCONT)
		t.Fatal(err)
	}
	if l.Token() <= token {
		t.Fatalf("granted elsewhere with token %d after the holder's %d",
			l.Token(), token)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// What it prints for the next second after it resumed (it stops at
	// once, or works on).
	deadline := time.After(time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				l.Unlock(ctxT(t))
				return after, paused
			}
			after = append(after, line)
			if strings.HasPrefix(line, "stopped") {
				l.Unlock(ctxT(t))
				return after, paused
			}
		case <-deadline:
			l.Unlock(ctxT(t))
			return after, paused
		}
	}
}

// waitStopped returns once process `pid` is stopped (state T).
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		// "pid (comm) S ...": the state follows the last ')'.
		s := string(stat)
		if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 &&
			f[0] == "T" {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("SIGSTOP did not stop the holder")
}

// worked is the checker: an error when the holder did work after it was
// paused (so after the lock was granted elsewhere), or never stopped.
func worked(after []string, paused time.Time) error {
	for _, line := range after {
		if ns, ok := strings.CutPrefix(line, "work "); ok {
			at, _ := strconv.ParseInt(ns, 10, 64)
			if at > paused.UnixNano() {
				return fmt.Errorf("worked at %v, %v after it was paused "+
					"and the lock granted elsewhere", time.Unix(0, at),
					time.Unix(0, at).Sub(paused))
			}
		}
	}
	if len(after) == 0 || !strings.HasPrefix(after[len(after)-1], "stopped") {
		return fmt.Errorf("never stopped: %q", after)
	}
	return nil
}

func TestPausedHolderStopsBeforeWorkingOn(t *testing.T) {
	after, paused := pausedHolder(t, "go/paused", false)
	if err := worked(after, paused); err != nil {
		t.Fatal(err)
	}
	last := after[len(after)-1]
	if !strings.Contains(last, ErrJeopardy.Error()) &&
		!strings.Contains(last, ErrExpired.Text) {
		t.Fatalf("stopped for %q, want the lease in jeopardy or expired", last)
	}
	// The negative control: a holder that does not look at its lock's
	// Context works on under a lock granted elsewhere, and the checker
	// says so.
	after, paused = pausedHolder(t, "go/paused-broken", true)
	if err := worked(after, paused); err == nil {
		t.Fatalf("the checker passed a holder that ignores its Context: %q",
			after)
	}
}
