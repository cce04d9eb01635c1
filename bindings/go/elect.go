package baton

// Elections (docs/fsm.md, "Elections"): a lock whose holder, the leader,
// advertises a value. Campaigning is an ACQUIRE of mode 3 with the value,
// resigning a RELEASE of the leadership's token, and the leader changes
// its value with a PROCLAIM.

import (
	"context"
	"errors"
)

// Campaign waits until the session leads the election `name`, then
// advertises `value` (0..255 bytes) as its leader. Candidates lead in the
// order they campaigned. The Lock it returns is the leadership: its Token
// is the leadership's fencing token, its Context ends when the leadership
// may be lost, Proclaim changes the value and Resign (Unlock) ends it. A
// name that is a lock or a semaphore is ErrKind.
func (c *Client) Campaign(ctx context.Context, name, value string) (*Lock,
	error) {
	return c.acquire(ctx, name, lockArgs{wait: waitForever, mode: Election,
		value: value})
}

// TryCampaign leads the election `name` if no one leads it now, else
// fails with ErrBusy.
func (c *Client) TryCampaign(ctx context.Context, name, value string) (*Lock,
	error) {
	return c.acquire(ctx, name, lockArgs{mode: Election, value: value})
}

// Proclaim advertises `value` in place of the leader's current one,
// keeping the leadership and its token. ErrNotHolder or ErrStale: this
// leadership is over.
func (l *Lock) Proclaim(ctx context.Context, value string) error {
	if err := checkValue(value); err != nil {
		return err
	}
	c := l.c
	seq, ack, err := c.nextSeq(ctx)
	if err != nil {
		return err
	}
	defer c.done(seq)
	_, err = c.command(ctx, cmdProclaim(cProclaim, c.Session(), seq, ack, l.owner,
		l.token, l.name, value), "proclaim in "+l.name, nil)
	return err
}

// Resign ends the leadership (Unlock); the next candidate leads.
func (l *Lock) Resign(ctx context.Context) error { return l.Unlock(ctx) }

// Leader reads the leader of election `name` and its value
// (linearizably); nil when no one leads it. ErrKind: the name is a lock's
// or a semaphore's.
func (c *Client) Leader(ctx context.Context, name string) (*Grant, error) {
	gs, _, err := c.holders(ctx, name)
	if err != nil || len(gs) == 0 {
		return nil, err
	}
	if gs[0].Mode != Election {
		return nil, &codeError{code: ErrKind, what: "leader of " + name +
			": held as a " + gs[0].Mode.String()}
	}
	return &gs[0], nil
}

// Observe delivers the leaders of election `name` as they change: the
// current one first (if any), then each new leader and each value a
// leader proclaims, and a zero Grant (Token 0) when a leadership ends
// (before the successor's, if one follows). The channel is closed when ctx ends or the watch
// under it does (a node that no longer keeps the events it needs:
// observe again). ErrKind: the name is a lock's or a semaphore's.
func (c *Client) Observe(ctx context.Context, name string) (<-chan Grant,
	error) {
	// The current leader's grant, and the events from its entry on, tell
	// its value and everything after; with no leader, the events after
	// the entry the read saw.
	res, err := c.query(ctx, name)
	if err != nil {
		return nil, err
	}
	from := Position{Index: res.index, Ord: ^uint32(0)}
	if res.kind == kHolder {
		// The plain answer does not say the mode: a lock's or a
		// semaphore's name is refused as Leader refuses it.
		if _, err := c.Leader(ctx, name); err != nil {
			return nil, err
		}
		from = Position{Index: res.token}
	}
	wt, err := c.Watch(ctx, name, from)
	var first *Grant
	if errors.Is(err, ErrCompacted) {
		// The nodes no longer keep the events since the leader was
		// elected: from now on, and the leader as read after the watch
		// began (so nothing after is missed; a value proclaimed as it
		// starts may come twice).
		if wt, err = c.Watch(ctx, name, Now); err == nil {
			if first, err = c.Leader(ctx, name); err != nil {
				wt.Close()
			} else if first != nil {
				*first = Grant{Name: first.Name, Session: first.Session,
					Owner: first.Owner, Token: first.Token, Mode: Election,
					Value: first.Value}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	out := make(chan Grant, 1)
	if first != nil {
		out <- *first
	}
	go func() {
		defer close(out)
		defer wt.Close()
		var last Grant
		if first != nil {
			last = *first
		}
		for e := range wt.Events() {
			g := Grant{Name: e.Name, Session: e.Session, Owner: e.Owner,
				Token: e.Token, Mode: Election, Value: e.Value}
			switch {
			case e.Mode != Election || e.Token < last.Token:
				continue
			case e.Kind == Released && e.Token == last.Token:
				g = Grant{Name: e.Name}
			case e.Kind == Released:
				continue
			}
			if g == last {
				continue
			}
			last = g
			select {
			case out <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
