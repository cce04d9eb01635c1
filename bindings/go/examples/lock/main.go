// Command lock takes a Baton lock, prints its fencing token, holds it
// while it sleeps, and releases it; it stops early, and says why, if the
// lock's Context ends (the session's lease in jeopardy, or lost). With a
// VALUE, the lock carries it (what the holder does, where it is: others
// read it with Holders or `batonctl holder NAME --all`), and the example
// prints the value as the cluster has it.
//
//	eval "$(scripts/cluster env)"
//	go run ./examples/lock jobs 5s
//	go run ./examples/lock jobs 5s "nightly report on $(hostname)"
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"baton.dev/baton"
)

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: lock NAME DURATION [VALUE]")
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
	var opts []baton.LockOption
	if len(os.Args) == 4 {
		opts = append(opts, baton.WithValue(os.Args[3]))
	}
	l, err := c.Lock(ctx, os.Args[1], opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lock:", err)
		os.Exit(1)
	}
	fmt.Printf("holding %s, token %d\n", l.Name(), l.Token())
	if len(os.Args) == 4 {
		holders, err := c.Holders(ctx, l.Name())
		if err != nil {
			fmt.Fprintln(os.Stderr, "lock:", err)
			os.Exit(1)
		}
		for _, h := range holders {
			if h.Token == l.Token() {
				fmt.Printf("its value: %q\n", h.Value)
			}
		}
	}
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
