package baton

// Watches: every change of a lock name, or of the names under a prefix, in
// the log's order, each at its position. Any node serves them, so a watch
// has a connection of its own to whichever node answers (its events then
// never wait behind the session's requests, nor they behind a reader that
// does not keep up), and when that connection drops it asks again, from
// the last position delivered: no gap, no repeat.

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// Position orders events: the index of the entry that caused the event,
// and its order among that entry's events (from 1). A watch from a
// position gets every event after it.
type Position struct {
	Index uint64
	Ord   uint32
}

// Now is the position "from now": a watch from Now gets the events applied
// after it started.
var Now = Position{}

func (p Position) after(q Position) bool {
	return p.Index > q.Index || (p.Index == q.Index && p.Ord > q.Ord)
}

// EventKind is what an event says happened.
type EventKind uint8

const (
	Granted    EventKind = 1 // a grant began
	Released   EventKind = 2 // a grant ended (released, expired, closed, revoked)
	Proclaimed EventKind = 3 // a grant's value changed (Proclaim, SetValue)
)

func (k EventKind) String() string {
	switch k {
	case Granted:
		return "granted"
	case Released:
		return "released"
	case Proclaimed:
		return "proclaimed"
	}
	return "kind(" + string(rune('0'+k)) + ")"
}

// Event is one change of a watched name.
type Event struct {
	Position
	Kind EventKind
	// Cause is the type of the command that caused it (docs/protocol.md,
	// "Watches": 4 ACQUIRE, 5 RELEASE, 3 EXPIRE, 2 CLOSE, 12 REVOKE, 15
	// REVOKE_LOCK, 20 SET_VALUE, 22 EXPIRE_HOLD: a hold time ran out, ...).
	Cause   uint8
	Mode    Mode // the grant's
	Session uint64
	Owner   uint64
	Token   uint64
	Permits uint32 // a semaphore grant's
	Name    string
	Value   string // the grant's value (Granted, Proclaimed)
}

// Watch is a running watch: Events delivers, Err says why it ended.
type Watch struct {
	c      *Client
	name   string
	prefix bool
	events chan Event
	stop   context.CancelFunc

	mu  sync.Mutex
	pos Position
	err error
	cur *conn // the connection now: tests drop it
}

// Watch watches the lock `name` from position `from` (Now: from now on).
// The first node's refusal is returned (ErrCompacted: the events after
// `from` are no longer kept; read the state again and watch from Now).
// The watch ends when ctx does, on Close, or on a refusal (Err says which).
func (c *Client) Watch(ctx context.Context, name string, from Position) (
	*Watch, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	return c.watch(ctx, name, false, from)
}

// WatchPrefix watches every name that begins with `prefix` (empty: every
// name), as Watch.
func (c *Client) WatchPrefix(ctx context.Context, prefix string,
	from Position) (*Watch, error) {
	if len(prefix) > 255 || strings.IndexByte(prefix, 0) >= 0 {
		return nil, &codeError{code: ErrName, what: "watch prefix " + prefix}
	}
	return c.watch(ctx, prefix, true, from)
}

func (c *Client) watch(ctx context.Context, name string, prefix bool,
	from Position) (*Watch, error) {
	wctx, stop := context.WithCancel(ctx)
	w := &Watch{c: c, name: name, prefix: prefix, pos: from,
		events: make(chan Event, 16), stop: stop}
	started := make(chan error, 1)
	go w.run(wctx, started)
	if err := <-started; err != nil {
		stop()
		return nil, err
	}
	return w, nil
}

// Events delivers the watch's events in order; it is closed when the
// watch ends.
func (w *Watch) Events() <-chan Event { return w.events }

// Err is why the watch ended, once Events is closed: ctx's error,
// ErrClosed after Close, ErrCompacted or ErrSlow (the node cut off a
// reader that fell more than its output-limit behind: watch again from
// Position), ErrTooManyWatches.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Position is that of the last event delivered (the watch's start until
// one is): a watch from it goes on exactly after.
func (w *Watch) Position() Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pos
}

// Close ends the watch.
func (w *Watch) Close() {
	w.mu.Lock()
	if w.err == nil {
		w.err = &codeError{code: ErrClosed, what: "watch " + w.name}
	}
	w.mu.Unlock()
	w.stop()
}

// run keeps the watch open, connection after connection, until it ends;
// `started` gets the first WATCH's outcome: nil once a node is watching,
// else why none could (every node refused the connection, ctx ended, the
// cluster refused the WATCH).
func (w *Watch) run(ctx context.Context, started chan<- error) {
	defer close(w.events)
	defer func() {
		if started != nil {
			started <- w.Err()
		}
	}()
	pause := backoffBase
	next := 0
	for {
		cn, err := w.c.dialAny(ctx, &next)
		if err != nil && started != nil {
			w.end(err)
			return
		}
		if err == nil {
			err = w.serve(ctx, cn, &started)
			cn.end(ErrClosed)
		}
		if err == nil || ctx.Err() != nil {
			w.end(ctxErr(ctx))
			return
		}
		var ce *codeError
		if errors.As(err, &ce) && ce.code != ErrUnavailable &&
			ce.code != ErrConnect && ce.code != ErrTLS {
			// The cluster's refusal: final.
			w.end(err)
			return
		}
		// The connection was lost, or the node cannot serve watches now:
		// another node, from the last position.
		next++
		w.c.pause(ctx, pause)
		pause = min(pause*2, backoffMax)
	}
}

func (w *Watch) end(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// serve sends the WATCH on `cn` from the last position and delivers its
// events until the connection or the watch ends (nil: ctx ended).
func (w *Watch) serve(ctx context.Context, cn *conn,
	started *chan<- error) error {
	const id = 1 // the only request on the watch's connection
	var b builder
	if w.prefix {
		b.u8(1)
	} else {
		b.u8(0)
	}
	w.mu.Lock()
	w.cur = cn
	pos := w.pos
	w.mu.Unlock()
	b.u64(pos.Index)
	b.u32(pos.Ord)
	b.str(w.name)
	if err := cn.write(frameOf(tWatch, 0, id, b.b)); err != nil {
		return err
	}
	watching := false
	for {
		var f frame
		select {
		case f = <-cn.pushed:
		case <-cn.gone:
			return cn.err
		case <-ctx.Done():
			return nil
		}
		switch {
		case f.typ == tResult && f.id == id:
			res, err := w.c.resultOf(f, "watch "+w.name)
			if err != nil {
				return err
			}
			if !watching && res.kind == kWatching {
				watching = true
				if *started != nil {
					*started <- nil
					*started = nil
				}
			}
		case f.typ == tWatchEvent && watching && (f.id == id || f.id == 0):
			e, err := readEvent(f.body)
			if err != nil {
				return &codeError{code: ErrMalformed, what: "watch " + w.name}
			}
			if !e.Position.after(w.Position()) {
				continue // delivered already (a resume's overlap)
			}
			select {
			case w.events <- e:
			case <-ctx.Done():
				return nil
			}
			w.mu.Lock()
			w.pos = e.Position
			w.mu.Unlock()
		case f.typ == tError:
			st, msg, _ := readError(f.body)
			return errCode(st, "watch "+w.name+" ("+msg+")")
		default:
			return &codeError{code: ErrMalformed, what: "watch " + w.name}
		}
	}
}

// dialAny connects to the endpoints in turn from `*next`, as a watch
// needs no leader; ErrConnect (or ErrTLS) after a pass that found none.
func (c *Client) dialAny(ctx context.Context, next *int) (*conn, error) {
	var last error
	for range c.cfg.Endpoints {
		addr := c.cfg.Endpoints[*next%len(c.cfg.Endpoints)]
		dctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
		cn, err := dial(dctx, addr, c.cfg.TLS, true)
		cancel()
		if err == nil {
			return cn, nil
		}
		last = err
		*next++
	}
	if errors.Is(last, ErrTLS) {
		return nil, last
	}
	return nil, &codeError{code: ErrConnect, what: "watch: cannot " +
		"connect to any node (last: " + errString(last) + ")"}
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}
