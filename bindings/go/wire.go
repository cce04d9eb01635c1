package baton

// The wire protocol of docs/protocol.md: frames, the lock commands a
// COMMAND carries, and the answers. Little-endian throughout; strings are
// a u8 length and the bytes.

import (
	"encoding/binary"
	"errors"
	"io"
	"time"
)

const (
	protoVersion = 2
	headerSize   = 16
	maxBody      = 65536

	tCommand     = 1
	tKeepalive   = 2
	tQuery       = 3
	tCheck       = 4
	tStatus      = 5
	tPing        = 9
	tList        = 10
	tAttach      = 11
	tWatch       = 12
	tUnwatch     = 13
	tResult      = 64
	tNotLeader   = 65
	tError       = 66
	tStatusReply = 67
	tKeepaliveOK = 68
	tPong        = 69
	tListReply   = 70
	tWatchEvent  = 71

	flagNames    = 0x0001
	flagHolders  = 0x0002
	flagRevoked  = 0x0004
	flagValues   = 0x0008
	flagVersions = 0x0010

	cOpen     = 1
	cClose    = 2
	cAcquire  = 4
	cRelease  = 5
	cCancel   = 6
	cRevoke   = 12
	cMulti    = 14
	cRevokeL  = 15
	cProclaim = 17
	cSetValue = 20
	cExtend   = 21

	kOpened     = 1
	kClosed     = 2
	kGranted    = 4
	kReentered  = 5
	kReleased   = 7
	kCancelled  = 8
	kHolder     = 9
	kFree       = 10
	kCurrent    = 11
	kProclaimed = 14
	kWatching   = 15

	waitForever = 0xFFFFFFFF
)

type frame struct {
	typ   uint8
	flags uint16
	id    uint64
	body  []byte
}

// builder appends little-endian fields.
type builder struct{ b []byte }

func (w *builder) u8(v uint8)   { w.b = append(w.b, v) }
func (w *builder) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *builder) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *builder) bytes(p []byte) {
	w.b = append(w.b, p...)
}
func (w *builder) str(s string) {
	w.u8(uint8(len(s)))
	w.b = append(w.b, s...)
}

// frameOf is a whole frame: the header, then `body`.
func frameOf(typ uint8, flags uint16, id uint64, body []byte) []byte {
	w := builder{make([]byte, 0, headerSize+len(body))}
	w.u8(protoVersion)
	w.u8(typ)
	w.b = binary.LittleEndian.AppendUint16(w.b, flags)
	w.u32(uint32(len(body)))
	w.u64(id)
	w.bytes(body)
	return w.b
}

// command is a lock command's bytes: the command header (version, type,
// flags 0), the fields, and zero padding to a multiple of 8 bytes.
func command(version, typ uint8, fields func(w *builder)) []byte {
	w := builder{make([]byte, 0, 64)}
	w.u8(version)
	w.u8(typ)
	w.u8(0)
	w.u8(0)
	fields(&w)
	for len(w.b)%8 != 0 {
		w.u8(0)
	}
	return w.b
}

// cmdOpen is an OPEN: command version 3 when the session has a
// lock-delay of its own, else 2 (one encoding per command).
func cmdOpen(nonce uint64, ttlMs, delayMs uint32, hash [32]byte,
	name string) []byte {
	version := uint8(2)
	if delayMs != 0 {
		version = 3
	}
	return command(version, cOpen, func(w *builder) {
		w.u64(nonce)
		w.u32(ttlMs)
		w.bytes(hash[:])
		if version == 3 {
			w.u32(delayMs)
		}
		w.str(name)
	})
}

func cmdClose(session, seq, ack uint64) []byte {
	return command(2, cClose, func(w *builder) {
		w.session(session, seq, ack)
	})
}

// session is what every command of a session starts with.
func (w *builder) session(session, seq, ack uint64) {
	w.u64(session)
	w.u64(seq)
	w.u64(ack)
}

// cmdAcquire is an ACQUIRE: a lock's (modes 0 and 1, command version 2),
// a semaphore's (mode 2, version 3, with its permits and limit) or an
// election candidate's (mode 3, version 3, permits and limit 0, then its
// value); a lock's or a semaphore's with a value or a hold time is
// version 4, with permits and limit (0 for a lock), the value after the
// name (empty when it has none) and then its hold time (u32 ms, 0: none).
// A command has exactly one encoding (docs/protocol.md, "COMMAND"): an
// empty value and no hold time are sent as if there were neither.
func cmdAcquire(session, seq, ack, owner uint64, a lockArgs,
	name string) []byte {
	version := uint8(2)
	switch {
	case a.mode == Election:
		version = 3
	case a.value != "" || a.holdMs > 0:
		version = 4
	case a.mode == Semaphore:
		version = 3
	}
	return command(version, cAcquire, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(owner)
		w.u32(a.wait)
		w.u8(uint8(a.mode))
		if version >= 3 {
			w.u32(a.permits)
			w.u32(a.limit)
		}
		w.str(name)
		if a.mode == Election || version == 4 {
			w.str(a.value)
		}
		if version == 4 {
			w.u32(a.holdMs)
		}
	})
}

// cmdMulti is a MULTI: every name in `names` at once, each in its mode.
func cmdMulti(session, seq, ack, owner uint64, waitMs uint32,
	names []MultiName) []byte {
	return command(3, cMulti, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(owner)
		w.u32(waitMs)
		w.u8(uint8(len(names)))
		for _, n := range names {
			mode := Exclusive
			if n.Shared {
				mode = Shared
			}
			w.u8(uint8(mode))
			w.str(n.Name)
		}
	})
}

// cmdProclaim is a PROCLAIM (command version 3: an election leader's
// value) or, as `typ` cSetValue, a SET_VALUE (version 4: any grant's
// value); the two have the same fields.
func cmdProclaim(typ uint8, session, seq, ack, owner, token uint64, name,
	value string) []byte {
	version := uint8(3)
	if typ == cSetValue {
		version = 4
	}
	return command(version, typ, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(owner)
		w.u64(token)
		w.str(name)
		w.str(value)
	})
}

// cmdExtend is an EXTEND (command version 4): the grant `token` of `name`
// is held for at most `holdMs` (1..) more, from its entry.
func cmdExtend(session, seq, ack, owner, token uint64, name string,
	holdMs uint32) []byte {
	return command(4, cExtend, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(owner)
		w.u64(token)
		w.str(name)
		w.u32(holdMs)
	})
}

// cmdRevoke ends session `session`; the leader fills in the lock-delay
// and who revoked it.
func cmdRevoke(session uint64) []byte {
	return command(3, cRevoke, func(w *builder) {
		w.u64(session)
		w.u32(0)
		w.str("")
	})
}

// cmdRevokeLock takes the grant `token` of `name` from `session`.
func cmdRevokeLock(session, token uint64, name string) []byte {
	return command(3, cRevokeL, func(w *builder) {
		w.u64(session)
		w.u32(0)
		w.u64(token)
		w.str(name)
		w.str("")
	})
}

func cmdRelease(session, seq, ack, owner, token uint64, name string) []byte {
	return command(2, cRelease, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(owner)
		w.u64(token)
		w.str(name)
	})
}

func cmdCancel(session, seq, ack, target uint64, name string) []byte {
	return command(2, cCancel, func(w *builder) {
		w.session(session, seq, ack)
		w.u64(target)
		w.str(name)
	})
}

// result is a RESULT's body.
type result struct {
	status  int32
	kind    uint8
	index   uint64
	session uint64
	owner   uint64
	token   uint64
	count   uint32
	waiters uint32
}

var errShort = errors.New("baton: a frame from the node does not decode")

// reader reads little-endian fields, strictly.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) take(n int) []byte {
	if r.bad || len(r.b) < n {
		r.bad = true
		return make([]byte, n)
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}
func (r *reader) u8() uint8   { return r.take(1)[0] }
func (r *reader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *reader) u64() uint64 { return binary.LittleEndian.Uint64(r.take(8)) }
func (r *reader) str() string { return string(r.take(int(r.u8()))) }

// done: the whole body was read, exactly.
func (r *reader) done() bool { return !r.bad && len(r.b) == 0 }

func readResult(body []byte) (result, error) {
	r := reader{b: body}
	res := result{
		status:  int32(r.u32()),
		kind:    r.u8(),
		index:   r.u64(),
		session: r.u64(),
		owner:   r.u64(),
		token:   r.u64(),
		count:   r.u32(),
		waiters: r.u32(),
	}
	if !r.done() {
		return res, errShort
	}
	return res, nil
}

func readNotLeader(body []byte) (uint64, string, error) {
	r := reader{b: body}
	id, addr := r.u64(), r.str()
	if !r.done() {
		return 0, "", errShort
	}
	return id, addr, nil
}

func readError(body []byte) (int32, string, error) {
	r := reader{b: body}
	st, msg := int32(r.u32()), r.str()
	if !r.done() {
		return 0, "", errShort
	}
	return st, msg, nil
}

// readFrame reads one whole frame.
func readFrame(rd io.Reader, hdr []byte) (frame, error) {
	if _, err := io.ReadFull(rd, hdr[:headerSize]); err != nil {
		return frame{}, err
	}
	f := frame{
		typ:   hdr[1],
		flags: binary.LittleEndian.Uint16(hdr[2:]),
		id:    binary.LittleEndian.Uint64(hdr[8:]),
	}
	n := binary.LittleEndian.Uint32(hdr[4:])
	if hdr[0] != protoVersion || n > maxBody {
		return frame{}, errShort
	}
	f.body = make([]byte, n)
	if _, err := io.ReadFull(rd, f.body); err != nil {
		return frame{}, err
	}
	return f, nil
}

func (r *reader) u16() uint16 { return binary.LittleEndian.Uint16(r.take(2)) }

// readList reads a LIST_REPLY: a LIST's or a holders QUERY's, as `flags`
// (the request's, echoed in the header) shape each entry.
func readList(flags uint16, body []byte) ([]Grant, bool, error) {
	r := reader{b: body}
	n, more := r.u32(), r.u8()
	if r.bad || more > 1 || uint64(n)*35 > uint64(len(r.b)) {
		return nil, false, errShort
	}
	gs := make([]Grant, 0, n)
	for i := uint32(0); i < n; i++ {
		var g Grant
		g.Name = r.str()
		g.Session, g.Owner, g.Token = r.u64(), r.u64(), r.u64()
		g.Count, g.Waiters = r.u32(), r.u32()
		if flags&(flagNames|flagHolders) != 0 {
			g.ClientName = r.str()
		}
		if flags&flagHolders != 0 {
			g.Mode = Mode(r.u8())
			g.Permits, g.Limit = r.u32(), r.u32()
			if s := r.u32(); s != 0 {
				g.Granted = time.Unix(int64(s), 0)
			}
		}
		if flags&flagValues != 0 {
			g.Value = r.str()
		}
		gs = append(gs, g)
	}
	if !r.done() {
		return nil, false, errShort
	}
	return gs, more == 1, nil
}

// readStatus reads a STATUS_REPLY, with the versions when `flags` asked.
func readStatus(flags uint16, body []byte) (*Status, error) {
	r := reader{b: body}
	s := &Status{ID: r.u64(), Role: Role(r.u8()), Term: r.u64(),
		Leader: r.u64(), Commit: r.u64(), Applied: r.u64(), Last: r.u64(),
		Sessions: r.u64(), Locks: r.u64(), Waiters: r.u64()}
	n := r.u8()
	for i := uint8(0); i < n && !r.bad; i++ {
		s.Members = append(s.Members, Member{ID: r.u64(), Role: r.u8(),
			RaftAddress: r.str(), ClientAddress: r.str()})
	}
	if flags&flagVersions != 0 {
		s.Release = r.str()
		r.u16() // the command, snapshot and container formats
		r.u16()
		r.u16()
	}
	if !r.done() {
		return nil, errShort
	}
	return s, nil
}

// readEvent reads a WATCH_EVENT.
func readEvent(body []byte) (Event, error) {
	r := reader{b: body}
	e := Event{Position: Position{Index: r.u64(), Ord: r.u32()},
		Kind: EventKind(r.u8()), Cause: r.u8(), Mode: Mode(r.u8()),
		Session: r.u64(), Owner: r.u64(), Token: r.u64(), Permits: r.u32(),
		Name: r.str(), Value: r.str()}
	if !r.done() {
		return e, errShort
	}
	return e, nil
}
