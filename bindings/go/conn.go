package baton

// One connection to one node: frames written under a lock, a goroutine
// reading answers and handing each to the request that waits for its id.

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"sync"
)

type conn struct {
	nc   net.Conn
	addr string
	wmu  sync.Mutex

	mu      sync.Mutex
	waiting map[uint64]chan frame
	err     error         // why it ended; set once
	gone    chan struct{} // closed when it ended
	pushed  chan frame    // a watch's: the frames no request waits for
}

// dial connects to `addr` (TLS when cfg is not nil) and starts reading;
// a watch's connection (`watch`) hands the frames no request waits for to
// `pushed`, and stops reading while they are not taken.
func dial(ctx context.Context, addr string, cfg *tls.Config,
	watch bool) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		host, _, _ := net.SplitHostPort(addr)
		c := cfg.Clone()
		if c.ServerName == "" {
			c.ServerName = host
		}
		tc := tls.Client(nc, c)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, &codeError{code: ErrTLS, what: "TLS with " + addr +
				": " + err.Error()}
		}
		nc = tc
	}
	c := &conn{nc: nc, addr: addr, waiting: map[uint64]chan frame{},
		gone: make(chan struct{})}
	if watch {
		c.pushed = make(chan frame, 64)
	}
	go c.read()
	return c, nil
}

func (c *conn) read() {
	br := bufio.NewReaderSize(c.nc, 64*1024)
	hdr := make([]byte, headerSize)
	for {
		f, err := readFrame(br, hdr)
		if err != nil {
			c.end(err)
			return
		}
		c.mu.Lock()
		ch := c.waiting[f.id]
		delete(c.waiting, f.id)
		c.mu.Unlock()
		if ch != nil {
			ch <- f // buffered: never blocks
		} else if c.pushed != nil {
			select {
			case c.pushed <- f:
			case <-c.gone:
				return
			}
		}
		if f.typ == tError {
			c.end(errShort) // the node closes after an ERROR
			return
		}
	}
}

// end closes the connection once; every request still waiting sees gone.
func (c *conn) end(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		close(c.gone)
	}
	c.mu.Unlock()
	c.nc.Close()
}

// send writes `b` (a frame with request id `id`) and returns where its
// answer will come.
func (c *conn) send(id uint64, b []byte) (chan frame, error) {
	ch := make(chan frame, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	if err := c.write(b); err != nil {
		return nil, err
	}
	return ch, nil
}

// write writes `b`, whose answer no request waits for (a watch's, pushed).
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	_, err := c.nc.Write(b)
	c.wmu.Unlock()
	if err != nil {
		c.end(err)
	}
	return err
}

// forget drops the wait for `id` (its caller gave up).
func (c *conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}
