package baton

// The examples, built and run against the test cluster as the README
// shows them.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildExample builds ./examples/NAME into the test's temporary directory.
func buildExample(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build",
		"-o", bin, "./examples/"+name)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/%s: %v\n%s", name, err, out)
	}
	return bin
}

// started runs `bin` with `args` and the environment with `env` added,
// returns its lines (stdout and stderr) as they come, and kills it when
// the test ends.
func started(t *testing.T, env []string, bin string, args ...string) (*exec.Cmd,
	<-chan string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

// await reads `lines` until one contains `want`.
func await(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("exited before printing %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("did not print %q in 20 s", want)
		}
	}
}

func TestExampleLock(t *testing.T) {
	bin := buildExample(t, "lock")
	cmd, lines := started(t, nil, bin, "go/example-lock", "100ms")
	await(t, lines, "holding go/example-lock, token ")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("examples/lock: %v", err)
	}
}

// With a value: the lock carries it, as the example reads it back and
// another client does while it holds the lock.
func TestExampleLockValue(t *testing.T) {
	bin := buildExample(t, "lock")
	cmd, lines := started(t, nil, bin, "go/example-value", "2s",
		"nightly report on host-7")
	await(t, lines, "holding go/example-value, token ")
	await(t, lines, `its value: "nightly report on host-7"`)
	gs, err := dialT(t, 10*time.Second).Holders(ctxT(t), "go/example-value")
	if err != nil || len(gs) != 1 || gs[0].Value != "nightly report on host-7" {
		t.Fatalf("holders while it holds: %+v %v", gs, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("examples/lock: %v", err)
	}
}

// Two candidates: the first leads, the second follows it, and leads once
// the first is stopped (it resigns on SIGTERM).
func TestExampleLeader(t *testing.T) {
	bin := buildExample(t, "leader")
	first, a := started(t, nil, bin, "go/example-db", "10.0.0.1:80")
	await(t, a, `leading go/example-db as "10.0.0.1:80"`)
	_, b := started(t, nil, bin, "go/example-db", "10.0.0.2:80")
	await(t, b, `leader: "10.0.0.1:80"`)
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	await(t, b, `leading go/example-db as "10.0.0.2:80"`)
	if err := first.Wait(); err != nil {
		t.Fatalf("the first leader, stopped: %v", err)
	}
}
