package baton

// Reads: who holds what (every grant of a lock, the locks under a prefix),
// whether a token is current, and a node's view of the cluster. QUERY,
// CHECK and LIST are linearizable (the leader answers from state a
// committed entry proves current); STATUS is the answering node's own
// view.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Mode is how a grant holds its lock.
type Mode uint8

const (
	Exclusive Mode = 0 // a writer (Lock)
	Shared    Mode = 1 // a reader (RLock)
	Semaphore Mode = 2 // permits of a semaphore (Acquire)
	Election  Mode = 3 // an election's leader (Campaign)
)

func (m Mode) String() string {
	switch m {
	case Exclusive:
		return "exclusive"
	case Shared:
		return "shared"
	case Semaphore:
		return "semaphore"
	case Election:
		return "election"
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// Grant is one grant of a lock, as Holders and List read it. List gives
// one per lock: its first holder's grant.
type Grant struct {
	Name       string
	Session    uint64 // the holder's session
	Owner      uint64 // the owner tag within it
	Token      uint64 // the grant's fencing token
	Count      uint32 // holds (reentrant acquires)
	Waiters    uint32 // clients waiting for the lock
	ClientName string // the holder session's Config.Name
	// Value is the grant's value (WithValue, Campaign; SetValue): "" when
	// it has none, and in a List from a cluster whose leader predates
	// values in listings.
	Value string

	// Holders only (List leaves them zero):
	Mode           Mode
	Permits, Limit uint32    // a semaphore grant's permits, and its limit
	Granted        time.Time // by the leader's clock, to a second; zero if unknown
}

// Holders reads every grant of `name`, oldest first, each with its value
// (empty when it has none): the writer, or every reader, or every
// semaphore grant, or the election's leader. None when it is free.
func (c *Client) Holders(ctx context.Context, name string) ([]Grant, error) {
	gs, _, err := c.holders(ctx, name)
	return gs, err
}

// holders: every grant of `name`, and whether there were more than fit
// one answer (1000).
func (c *Client) holders(ctx context.Context, name string) ([]Grant, bool,
	error) {
	if err := checkName(name); err != nil {
		return nil, false, err
	}
	var w builder
	w.str(name)
	return c.list(ctx, tQuery, flagHolders|flagValues, w.b, "holders of "+name)
}

// listFlags is what List asks with first. A test adds a flag no server
// knows, refused as a leader of an earlier release refuses flagValues.
var listFlags uint16 = flagNames | flagValues

// List reads the held locks whose names start with `prefix` (empty: every
// lock), oldest lock first, at most `limit` (1..1000) of them; `more` says
// whether more matched. Each is its first holder's grant, with its Value.
func (c *Client) List(ctx context.Context, prefix string, limit int) (
	locks []Grant, more bool, err error) {
	if limit < 1 || limit > 1000 {
		return nil, false, &codeError{code: ErrInvalid, what: "List: limit " +
			"is 1..1000"}
	}
	if len(prefix) > 255 {
		return nil, false, &codeError{code: ErrName, what: "List: prefix"}
	}
	var w builder
	w.str(prefix)
	w.u32(uint32(limit))
	ls, more, err := c.list(ctx, tList, listFlags, w.b, "list "+prefix)
	if errors.Is(err, ErrMalformed) {
		// A leader of a release before values in listings refuses the
		// flag (and drops the connection): the listing without them.
		return c.list(ctx, tList, flagNames, w.b, "list "+prefix)
	}
	return ls, more, err
}

func (c *Client) list(ctx context.Context, typ uint8, flags uint16,
	body []byte, what string) ([]Grant, bool, error) {
	f, err := c.do(ctx, typ, flags, body, nil)
	if err != nil {
		return nil, false, err
	}
	if f.typ != tListReply {
		_, err := c.resultOf(f, what)
		if err == nil {
			err = &codeError{code: ErrMalformed, what: what}
		}
		return nil, false, err
	}
	gs, more, err := readList(f.flags, f.body)
	if err != nil || f.flags != flags {
		return nil, false, &codeError{code: ErrMalformed, what: what}
	}
	return gs, more, nil
}

// Check says whether `token` is still the current grant of `name`: nil if
// so, else an error matching ErrStale. For resources that cannot keep the
// largest token they saw themselves.
func (c *Client) Check(ctx context.Context, name string, token uint64) error {
	if err := checkName(name); err != nil {
		return err
	}
	var w builder
	w.u64(token)
	w.str(name)
	f, err := c.do(ctx, tCheck, 0, w.b, nil)
	if err != nil {
		return err
	}
	_, err = c.resultOf(f, fmt.Sprintf("check token %d of %s", token, name))
	return err
}

// Role is a node's Raft role.
type Role uint8

func (r Role) String() string {
	switch r {
	case 0:
		return "unavailable"
	case 1:
		return "follower"
	case 2:
		return "candidate"
	case 3:
		return "leader"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// Status is one node's view of the cluster.
type Status struct {
	ID      uint64 // the node's id
	Role    Role
	Term    uint64
	Leader  uint64 // the leader's id; 0: none known
	Commit  uint64 // its commit index
	Applied uint64 // its applied index
	Last    uint64 // its last log index
	// Sessions, Locks, Waiters: in its state machine.
	Sessions, Locks, Waiters uint64
	Members                  []Member
	Release                  string // its Baton release, "0.3.0"
}

// Member is one member of the cluster.
type Member struct {
	ID            uint64
	Role          uint8 // raft's: 0 standby, 1 voter, 2 spare
	RaftAddress   string
	ClientAddress string
}

// Status reads the view of the node the client talks to (the leader).
func (c *Client) Status(ctx context.Context) (*Status, error) {
	f, err := c.do(ctx, tStatus, flagVersions, nil, nil)
	if err != nil {
		return nil, err
	}
	if f.typ != tStatusReply || f.flags != flagVersions {
		_, err := c.resultOf(f, "status")
		if err == nil {
			err = &codeError{code: ErrMalformed, what: "status"}
		}
		return nil, err
	}
	s, err := readStatus(f.flags, f.body)
	if err != nil {
		return nil, &codeError{code: ErrMalformed, what: "status"}
	}
	return s, nil
}
