package baton

// The client: the connection to the leader, found and kept as libbaton
// does, the session and its keepalives, and requests sent exactly once.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultEndpoints are the endpoints when neither Config nor
// BATON_ENDPOINTS names any: a local cluster of scripts/cluster.
const DefaultEndpoints = "127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003"

const (
	backoffBase   = 10 * time.Millisecond
	backoffMax    = time.Second
	noLeaderPause = 40 * time.Millisecond
	// maxInflight: requests out at once in the session, as libbaton
	// keeps them (the cluster's max_inflight is 32).
	maxInflight = 31
	// jeopardyMargin: a lock's Context ends this long before the lease
	// could run out, as libbaton's jeopardy does.
	jeopardyMargin = 200 * time.Millisecond
)

// Config says how to reach the cluster. Zero values take the defaults.
type Config struct {
	// Endpoints are the nodes' client addresses, "host:port".
	Endpoints []string
	// TLS is the client's TLS configuration: the cluster's CA in RootCAs
	// and the client's certificate. nil: plain TCP (a node with tls = off).
	TLS *tls.Config
	// TTL is the session's time to live (default 10 s): a client that
	// stops keeping it alive loses its locks this long after.
	TTL time.Duration
	// Name is the session's client name, for humans (batonctl list).
	Name string
	// DialTimeout bounds each connection attempt (default 1 s).
	DialTimeout time.Duration
	// LockDelay is the session's own lock-delay (Consul's LockDelay):
	// when the session is lost (it expires, or is revoked), its locks
	// stay granted to no one this long, so that a holder that did not
	// see the loss stops before anyone else can start. At most the
	// cluster's max-lock-delay-ms (ErrDelay); the cluster's own
	// lock-delay-ms applies when it is longer. 0: the cluster's alone.
	LockDelay time.Duration
}

// ConfigFromEnv is the configuration batonctl takes from the environment:
// BATON_ENDPOINTS (comma-separated; default DefaultEndpoints), and TLS
// from BATON_CACERT, BATON_CERT and BATON_KEY (all three, or none for
// plain TCP).
func ConfigFromEnv() (Config, error) {
	var cfg Config
	eps := os.Getenv("BATON_ENDPOINTS")
	if eps == "" {
		eps = DefaultEndpoints
	}
	cfg.Endpoints = strings.Split(eps, ",")
	ca, cert, key := os.Getenv("BATON_CACERT"), os.Getenv("BATON_CERT"),
		os.Getenv("BATON_KEY")
	if ca == "" && cert == "" && key == "" {
		return cfg, nil
	}
	if ca == "" || cert == "" || key == "" {
		return cfg, &codeError{code: ErrInvalid, what: "BATON_CACERT, " +
			"BATON_CERT and BATON_KEY go together"}
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return cfg, &codeError{code: ErrTLS, what: "BATON_CACERT: " +
			err.Error()}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return cfg, &codeError{code: ErrTLS, what: "BATON_CACERT " + ca +
			" holds no certificate"}
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return cfg, &codeError{code: ErrTLS, what: "BATON_CERT, " +
			"BATON_KEY: " + err.Error()}
	}
	cfg.TLS = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair},
		MinVersion: tls.VersionTLS13}
	return cfg, nil
}

// Client is a session with a Baton cluster: its locks live as long as it
// keeps the session alive, which it does by itself until Close. Safe for
// concurrent use by many goroutines.
type Client struct {
	cfg Config

	dialMu sync.Mutex // one goroutine finds the leader at a time
	mu     sync.Mutex
	cur    *conn
	hint   string // the leader a NOT_LEADER named
	next   int    // the endpoint to try next
	ids    atomic.Uint64
	owners atomic.Uint64

	session uint64
	secret  [16]byte
	seq     uint64
	open    map[uint64]bool // requests out that hold ack back
	room    chan struct{}   // closed when one of them is done
	lease   time.Time       // the session is surely alive until then
	lost    error           // the session ended (expired, closed)
	locks   map[*Lock]bool
	revoked uint32 // the KEEPALIVE_OK's count of revoked grants, last seen
	// kaPlain: a node refused PROTO_FLAG_REVOKED (an earlier release), so
	// keepalives go without it.
	kaPlain bool

	closed chan struct{}
	wg     sync.WaitGroup

	stopKeepalives atomic.Bool // tests: a client whose keepalives stop
}

// Dial opens a session with the cluster: it finds the leader, OPENs a
// session with the configured TTL and keeps it alive until Close. The
// context bounds finding the leader and the OPEN.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	if len(cfg.Endpoints) == 0 {
		cfg.Endpoints = strings.Split(DefaultEndpoints, ",")
	}
	if cfg.TTL == 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = time.Second
	}
	if cfg.LockDelay < 0 || cfg.LockDelay/time.Millisecond > 0xFFFFFFFF {
		return nil, &codeError{code: ErrInvalid, what: "Config.LockDelay"}
	}
	if len(cfg.Name) > 64 {
		return nil, &codeError{code: ErrInvalid, what: "Config.Name: at " +
			"most 64 bytes"}
	}
	c := &Client{cfg: cfg, open: map[uint64]bool{}, locks: map[*Lock]bool{},
		room: make(chan struct{}), closed: make(chan struct{})}
	if _, err := rand.Read(c.secret[:]); err != nil {
		return nil, err
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(nonce[:]) | 1
	sent := time.Now()
	res, err := c.command(ctx, cmdOpen(n, uint32(cfg.TTL/time.Millisecond),
		uint32(cfg.LockDelay/time.Millisecond), sha256.Sum256(c.secret[:]),
		cfg.Name), "open a session", nil)
	if err != nil {
		c.shut()
		return nil, err
	}
	c.mu.Lock()
	c.session = res.session
	c.lease = sent.Add(cfg.TTL)
	c.mu.Unlock()
	c.wg.Add(1)
	go c.keepalive()
	return c, nil
}

// Session is the session's id.
func (c *Client) Session() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// Close ends the session (its locks are released and its waits end) and
// the connection.
func (c *Client) Close(ctx context.Context) error {
	select {
	case <-c.closed:
		return nil
	default:
	}
	seq, ack, err := c.nextSeq(ctx)
	if err == nil {
		_, err = c.command(ctx, cmdClose(c.Session(), seq, ack),
			"close the session", nil)
		c.done(seq)
	}
	c.endLocks(ErrClosed)
	c.shut()
	return err
}

func (c *Client) shut() {
	select {
	case <-c.closed:
	default:
		close(c.closed)
	}
	c.wg.Wait()
	c.mu.Lock()
	if c.cur != nil {
		c.cur.end(ErrClosed)
	}
	c.mu.Unlock()
}

// nextSeq is a new sequence number and the ack to send with it. The
// request holds ack back until done(): every request until it is
// answered, but a blocking ACQUIRE only until it is first sent (sent()),
// so that a wait of minutes does not hold it (docs/protocol.md, "A
// waiting ACQUIRE should not hold ack back"), while no request sent
// after it can raise the floor past it before it reaches the cluster.
//
// At most maxInflight requests are out between the floor and the newest
// (the cluster remembers 32 unacknowledged outcomes per session, and
// refuses more with BATON_EINFLIGHT): a request past that waits here
// for room, or until ctx ends.
func (c *Client) nextSeq(ctx context.Context) (uint64, uint64, error) {
	c.mu.Lock()
	for {
		ack := c.seq + 1
		for s := range c.open {
			ack = min(ack, s)
		}
		if c.seq+1-ack < maxInflight {
			c.seq++
			seq := c.seq
			c.open[seq] = true
			c.mu.Unlock()
			return seq, ack, nil
		}
		room := c.room
		c.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-c.closed:
			return 0, 0, &codeError{code: ErrClosed, what: "the client is " +
				"closed"}
		}
		c.mu.Lock()
	}
}

func (c *Client) done(seq uint64) {
	c.mu.Lock()
	if c.open[seq] {
		delete(c.open, seq)
		close(c.room)
		c.room = make(chan struct{})
	}
	c.mu.Unlock()
}

// command sends a lock command and returns its RESULT; a refusal is an
// error naming `what`. `sent`, when not nil, runs once the command was
// first written to a connection.
func (c *Client) command(ctx context.Context, cmd []byte, what string,
	sent func()) (result, error) {
	f, err := c.do(ctx, tCommand, 0, cmd, sent)
	if err != nil {
		return result{}, err
	}
	return c.resultOf(f, what)
}

func (c *Client) resultOf(f frame, what string) (result, error) {
	if f.typ != tResult {
		return result{}, &codeError{code: ErrMalformed, what: what}
	}
	res, err := readResult(f.body)
	if err != nil {
		return res, &codeError{code: ErrMalformed, what: what}
	}
	if res.status < 0 {
		return res, errCode(res.status, what)
	}
	return res, nil
}

// do sends one request to the leader and waits for its answer, sending
// the same bytes again (the same seq: exactly once) on the next
// connection when one is lost or names another leader.
func (c *Client) do(ctx context.Context, typ uint8, flags uint16,
	body []byte, sent func()) (frame, error) {
	written := false
	for {
		cn, err := c.leader(ctx)
		if err != nil && written && ctx.Err() == nil &&
			(errors.Is(err, ErrConnect) || errors.Is(err, ErrTLS)) {
			// Out once already, its outcome unknown: asked again until
			// the caller's deadline, however the endpoints refuse.
			c.pause(ctx, backoffMax)
			continue
		}
		if err != nil && written && ctx.Err() != nil {
			return frame{}, &withCtx{code: ErrNoAnswer, ctx: ctx.Err(),
				what: "no answer before the deadline (" + err.Error() + ")"}
		}
		if err != nil {
			return frame{}, err
		}
		id := c.ids.Add(1)
		ch, err := cn.send(id, frameOf(typ, flags, id, body))
		if err != nil {
			c.drop(cn)
			continue
		}
		written = true
		if sent != nil {
			sent()
			sent = nil
		}
		select {
		case f := <-ch:
			switch f.typ {
			case tNotLeader:
				c.redirected(ctx, cn, f.body)
				continue
			case tError:
				st, msg, _ := readError(f.body)
				c.drop(cn)
				return frame{}, errCode(st, "the node refused the "+
					"request ("+msg+")")
			case tResult:
				if res, err := readResult(f.body); err == nil &&
					res.status == ErrUnknown.Code {
					// Leadership moved before the outcome was known:
					// the same seq again, to whoever leads next.
					c.pause(ctx, noLeaderPause)
					continue
				}
			}
			return f, nil
		case <-cn.gone:
			c.drop(cn)
		case <-ctx.Done():
			cn.forget(id)
			return frame{}, &withCtx{code: ErrNoAnswer, ctx: ctx.Err(),
				what: "no answer before the deadline"}
		case <-c.closed:
			cn.forget(id)
			return frame{}, &codeError{code: ErrClosed, what: "the client " +
				"is closed"}
		}
	}
}

func (c *Client) pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-c.closed:
	}
}

// drop gives up connection `cn`: the next request finds the leader again.
func (c *Client) drop(cn *conn) {
	cn.end(ErrNotLeader)
	c.mu.Lock()
	if c.cur == cn {
		c.cur = nil
	}
	c.mu.Unlock()
}

// redirected: a NOT_LEADER from `cn`. The leader it names is tried next;
// when it names none (an election runs), the next endpoint, in a while.
func (c *Client) redirected(ctx context.Context, cn *conn, body []byte) {
	c.drop(cn)
	c.notLeader(ctx, cn, body)
}

// notLeader notes where a NOT_LEADER from `cn` sends the client, and
// pauses when the node knows no leader.
func (c *Client) notLeader(ctx context.Context, cn *conn, body []byte) {
	leader, addr, err := readNotLeader(body)
	c.mu.Lock()
	if err == nil && leader != 0 && addr != "" && addr != cn.addr {
		c.hint = addr
	} else {
		c.hint = ""
		c.next++
	}
	c.mu.Unlock()
	if err != nil || leader == 0 {
		c.pause(ctx, noLeaderPause)
	}
}

// leader is the connection to the leader, found as libbaton does: the
// leader a NOT_LEADER named, else the endpoints in turn, pausing from
// 10 ms to 1 s between passes that found none; each new connection is
// ATTACHed to the session first. A pass in which every endpoint refused
// (no connection, or TLS failed) ends the search: at once with ErrTLS when
// TLS was the trouble somewhere, else with ErrConnect once such passes
// have gone on for a second (nodes that are starting refuse for a while),
// naming each endpoint's failure (docs/protocol.md, "Connection
// failures").
func (c *Client) leader(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	cn := c.cur
	c.mu.Unlock()
	if cn != nil {
		return cn, nil
	}
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	pause := backoffBase
	var p pass
	for tries := 1; ; tries++ {
		select {
		case <-c.closed:
			return nil, &codeError{code: ErrClosed, what: "the client is " +
				"closed"}
		default:
		}
		c.mu.Lock()
		if c.cur != nil {
			cn := c.cur
			c.mu.Unlock()
			return cn, nil
		}
		if c.lost != nil {
			err := c.lost
			c.mu.Unlock()
			return nil, err
		}
		addr := c.hint
		c.hint = ""
		if addr == "" {
			addr = c.cfg.Endpoints[c.next%len(c.cfg.Endpoints)]
		}
		session := c.session
		c.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
		cn, err := dial(dctx, addr, c.cfg.TLS, false)
		cancel()
		p.tried(addr, err)
		if err == nil && session != 0 {
			err = c.attach(ctx, cn, session)
		}
		if err == nil {
			c.mu.Lock()
			c.cur = cn
			c.mu.Unlock()
			return cn, nil
		}
		if cn != nil {
			cn.end(err)
		}
		var ce *codeError
		if errors.As(err, &ce) && (ce.code == ErrExpired ||
			ce.code == ErrClosed || ce.code == ErrNoSession ||
			ce.code == ErrPerm) {
			c.lose(err)
			return nil, err
		}
		if !errors.Is(err, errRedirected) {
			c.mu.Lock()
			c.next++
			c.mu.Unlock()
		}
		if tries%len(c.cfg.Endpoints) == 0 {
			if err := p.end(); err != nil {
				return nil, err
			}
			c.pause(ctx, pause)
			pause = min(pause*2, backoffMax)
		}
	}
}

var errRedirected = errors.New("baton: redirected")

// pass follows one pass over the endpoints: whether every one refused,
// and how, and since when passes have been refused everywhere.
type pass struct {
	answered bool     // a node answered (even "no leader")
	tls      bool     // TLS failed at some endpoint
	failures []string // "addr: why", in the pass's order
	since    time.Time
}

// tried notes what dialling `addr` gave.
func (p *pass) tried(addr string, err error) {
	if err == nil {
		p.answered = true
		return
	}
	p.tls = p.tls || errors.Is(err, ErrTLS)
	p.failures = append(p.failures, addr+": "+err.Error())
}

// end closes the pass: the error that ends the search, or nil to go on.
func (p *pass) end() error {
	defer func() { p.answered, p.tls, p.failures = false, false, nil }()
	if p.answered {
		p.since = time.Time{}
		return nil
	}
	why := strings.Join(p.failures, "; ")
	if p.tls {
		return &codeError{code: ErrTLS, what: "cannot connect to any " +
			"node: " + why}
	}
	if p.since.IsZero() {
		p.since = time.Now()
	}
	if time.Since(p.since) < time.Second {
		return nil
	}
	return &codeError{code: ErrConnect, what: "cannot connect to any node: " +
		why}
}

// attach proves the session on a new connection (ATTACH); a follower's
// NOT_LEADER sends the search on.
func (c *Client) attach(ctx context.Context, cn *conn, session uint64) error {
	var w builder
	w.u64(session)
	w.bytes(c.secret[:])
	id := c.ids.Add(1)
	ch, err := cn.send(id, frameOf(tAttach, 0, id, w.b))
	if err != nil {
		return err
	}
	select {
	case f := <-ch:
		switch f.typ {
		case tNotLeader:
			c.notLeader(ctx, cn, f.body)
			return errRedirected
		case tResult:
			_, err := c.resultOf(f, "attach the session")
			return err
		}
		return &codeError{code: ErrMalformed, what: "attach the session"}
	case <-cn.gone:
		return cn.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// keepalive keeps the session alive every third of its TTL; a lease not
// renewed in time puts the locks in jeopardy.
func (c *Client) keepalive() {
	defer c.wg.Done()
	every := c.cfg.TTL / 3
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c.mu.Lock()
		until := time.Until(c.lease.Add(-jeopardyMargin))
		c.mu.Unlock()
		jeopardy := time.NewTimer(max(until, 0))
		select {
		case <-c.closed:
			jeopardy.Stop()
			return
		case <-jeopardy.C:
			c.endLocks(ErrJeopardy)
			<-tick.C
		case <-tick.C:
			jeopardy.Stop()
		}
		c.renew(every)
	}
}

// renew sends one KEEPALIVE, waiting at most `wait`. It asks for the
// count of grants an administrator revoked; when that moves, the holds
// are verified, and a revoked one's Context ends.
func (c *Client) renew(wait time.Duration) {
	if c.stopKeepalives.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var w builder
	w.u64(c.Session())
	c.mu.Lock()
	flags := uint16(flagRevoked)
	if c.kaPlain {
		flags = 0
	}
	c.mu.Unlock()
	sent := time.Now()
	f, err := c.do(ctx, tKeepalive, flags, w.b, nil)
	if errors.Is(err, ErrMalformed) && flags != 0 {
		// A node of an earlier release: revokes show only as refused
		// releases from now on.
		c.mu.Lock()
		c.kaPlain = true
		c.mu.Unlock()
		return
	}
	if err != nil {
		return
	}
	if f.typ == tKeepaliveOK {
		r := reader{b: f.body}
		ttl := time.Duration(r.u32()) * time.Millisecond
		var revoked uint32
		if f.flags&flagRevoked != 0 {
			revoked = r.u32()
		}
		c.mu.Lock()
		c.lease = sent.Add(ttl)
		moved := !r.bad && revoked != c.revoked
		c.revoked = revoked
		c.mu.Unlock()
		if moved {
			c.verify(ctx)
		}
		return
	}
	if _, err := c.resultOf(f, "keep the session alive"); err != nil &&
		(errors.Is(err, ErrExpired) || errors.Is(err, ErrClosed) ||
			errors.Is(err, ErrNoSession)) {
		c.lose(err)
	}
}

// verify ends the Context of every lock whose grant is no longer among
// its lock's holders: an administrator revoked it.
func (c *Client) verify(ctx context.Context) {
	c.mu.Lock()
	locks := make([]*Lock, 0, len(c.locks))
	for l := range c.locks {
		locks = append(locks, l)
	}
	c.mu.Unlock()
	for _, l := range locks {
		g, err := c.grantOf(ctx, l.name, l.owner)
		if err == nil && (g == nil || g.Token != l.token) {
			c.forget(l, ErrRevoked)
		}
	}
}

// inJeopardy: the session's lease is within jeopardyMargin of running out
// (or has), by the clock.
func (c *Client) inJeopardy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !time.Now().Before(c.lease.Add(-jeopardyMargin))
}

// forget: lock `l` is not held any more, for `cause`.
func (c *Client) forget(l *Lock, cause error) {
	c.mu.Lock()
	delete(c.locks, l)
	c.mu.Unlock()
	l.ctx.cancel(cause)
}

// lose: the session ended; every lock's Context ends, every call fails.
func (c *Client) lose(err error) {
	c.mu.Lock()
	if c.lost == nil {
		c.lost = err
	}
	c.mu.Unlock()
	c.endLocks(err)
}

func (c *Client) endLocks(cause error) {
	c.mu.Lock()
	locks := c.locks
	c.locks = map[*Lock]bool{}
	c.mu.Unlock()
	for l := range locks {
		l.ctx.cancel(cause)
	}
}
