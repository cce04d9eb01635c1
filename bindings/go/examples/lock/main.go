// Command lock takes a Baton lock, prints its fencing token, holds it
// while it sleeps, and releases it; it stops early, and says why, if the
// lock's Context ends (the session's lease in jeopardy, or lost).
//
//	eval "$(scripts/cluster env)"
//	go run ./examples/lock jobs 5s
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"baton.dev/baton"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: lock NAME DURATION")
		os.Exit(2)
	}
	hold, err := time.ParseDuration(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(2)
	}
	cfg, err := baton.ConfigFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(1)
	}
	ctx := context.Background()
	c, err := baton.Dial(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(1)
	}
	defer c.Close(ctx)
	l, err := c.Lock(ctx, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(1)
	}
	fmt.Printf("holding %s, token %d\n", l.Name(), l.Token())
	select {
	case <-time.After(hold):
	case <-l.Context().Done():
		fmt.Fprintln(os.Stderr, "lock: stopping:", context.Cause(l.Context()))
		os.Exit(1)
	}
	if err := l.Unlock(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(1)
	}
}
