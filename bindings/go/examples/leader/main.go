// Command leader campaigns in a Baton election with a value (say, the
// address it serves on), and prints each leader of the election as it
// changes while it waits; once it leads, it serves until the leadership's
// Context ends (the session's lease in jeopardy, or lost) or it is
// interrupted, and then resigns so that the next candidate leads at once.
//
//	eval "$(scripts/cluster env)"
//	go run ./examples/leader db 10.0.0.1:80
//	go run ./examples/leader db 10.0.0.2:80   # in another shell: it follows
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"baton.dev/baton"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: leader ELECTION VALUE")
		os.Exit(2)
	}
	name, value := os.Args[1], os.Args[2]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt,
		syscall.SIGTERM)
	defer stop()
	cfg, err := baton.ConfigFromEnv()
	if err != nil {
		fail(err)
	}
	c, err := baton.Dial(ctx, cfg)
	if err != nil {
		fail(err)
	}
	defer c.Close(context.Background())

	// Follow the election while campaigning.
	leaders, err := c.Observe(ctx, name)
	if err != nil {
		fail(err)
	}
	go func() {
		for g := range leaders {
			if g.Token == 0 {
				fmt.Println("no leader")
				continue
			}
			fmt.Printf("leader: %q (session %d, token %d)\n", g.Value,
				g.Session, g.Token)
		}
	}()

	l, err := c.Campaign(ctx, name, value)
	if err != nil && ctx.Err() != nil {
		return // interrupted while a candidate: the wait is withdrawn
	}
	if err != nil {
		fail(err)
	}
	fmt.Printf("leading %s as %q, token %d\n", name, value, l.Token())
	select {
	case <-l.Context().Done():
		fmt.Fprintln(os.Stderr, "leader: stepping down:",
			context.Cause(l.Context()))
	case <-ctx.Done():
	}
	if err := l.Resign(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "leader: resign:", err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "leader:", err)
	os.Exit(1)
}
