package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// upstream sends the host's requests to a plain-HTTP upstream on the
// handler's own goroutine: it writes the request on a kept-alive
// connection and reads the answer from it, where net/http's Transport
// hands each request to a writer goroutine and each answer over from a
// reader goroutine (and the end of the body back to it), four goroutine
// hand-offs a request that were most of what the proxy added to a quick
// answer. What it cannot do as the Transport does (https, a proxy from the
// environment, a request body streamed past what was read) goes to tr.
type upstream struct {
	tr    *http.Transport
	plain bool // http:// and no proxy in between: the direct path applies

	mu   sync.Mutex
	idle []*upConn // kept-alive connections, the last one used on top
}

// upIdleMax bounds the idle connections kept.
const upIdleMax = 64

// upDialTimeout bounds a connection to the upstream, as the Transport's.
const upDialTimeout = 30 * time.Second

type upConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func newUpstream(tr *http.Transport, up *http.Request) *upstream {
	u := &upstream{tr: tr}
	if up.URL.Scheme == "http" {
		if tr.Proxy == nil {
			u.plain = true
		} else if p, err := tr.Proxy(up); err == nil && p == nil {
			u.plain = true
		}
	}
	return u
}

// RoundTrip sends req, whose body (when streamed is false) is all in
// memory, and returns the answer; its body must be closed.
func (u *upstream) RoundTrip(req *http.Request, streamed bool) (*http.Response, error) {
	if !u.plain || streamed {
		return u.tr.RoundTrip(req)
	}
	for attempt := 0; ; attempt++ {
		c, reused, err := u.get(req.Context(), req.URL.Host)
		if err != nil {
			return nil, err
		}
		resp, sent, err := u.exchange(c, req)
		if err == nil {
			return resp, nil
		}
		c.c.Close()
		// A kept-alive connection the server had closed fails before any
		// answer: the request goes again on a fresh one, as the
		// Transport does.
		if reused && !sent && attempt == 0 && req.Context().Err() == nil {
			if req.GetBody != nil {
				if req.Body, err = req.GetBody(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if cerr := req.Context().Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
}

// get returns an idle connection, or dials one.
func (u *upstream) get(ctx context.Context, host string) (*upConn, bool, error) {
	u.mu.Lock()
	if n := len(u.idle); n > 0 {
		c := u.idle[n-1]
		u.idle[n-1] = nil
		u.idle = u.idle[:n-1]
		u.mu.Unlock()
		return c, true, nil
	}
	u.mu.Unlock()
	d := net.Dialer{Timeout: upDialTimeout, KeepAlive: 30 * time.Second}
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "80")
	}
	nc, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, false, err
	}
	return &upConn{c: nc, r: bufio.NewReaderSize(nc, 32<<10), w: bufio.NewWriterSize(nc, 4<<10)}, false, nil
}

func (u *upstream) put(c *upConn) {
	u.mu.Lock()
	if len(u.idle) < upIdleMax {
		u.idle = append(u.idle, c)
		c = nil
	}
	u.mu.Unlock()
	if c != nil {
		c.c.Close()
	}
}

// closeIdle closes the kept-alive connections.
func (u *upstream) closeIdle() {
	u.mu.Lock()
	idle := u.idle
	u.idle = nil
	u.mu.Unlock()
	for _, c := range idle {
		c.c.Close()
	}
	u.tr.CloseIdleConnections()
}

// exchange writes req and reads the answer's status and headers; sent
// reports whether any of the answer arrived. The request's context ends
// the exchange at any point, the body's reading included (the connection
// is closed).
func (u *upstream) exchange(c *upConn, req *http.Request) (resp *http.Response, sent bool, err error) {
	stop := context.AfterFunc(req.Context(), func() { c.c.SetDeadline(time.Unix(1, 0)) })
	if err := req.Write(c.w); err != nil {
		stop()
		return nil, false, err
	}
	if err := c.w.Flush(); err != nil {
		stop()
		return nil, false, err
	}
	for {
		if _, err := c.r.Peek(1); err != nil {
			stop()
			return nil, false, err
		}
		resp, err = http.ReadResponse(c.r, req)
		if err != nil {
			stop()
			return nil, true, err
		}
		// 1xx are interim (100 Continue, 103 Early Hints): the answer
		// follows. 101 would switch protocols, which MCP never asks for.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	resp.Body = &upBody{r: resp.Body, c: c, up: u, stop: stop, keep: !resp.Close, ctx: req.Context()}
	return resp, true, nil
}

// upBody is an answer's body: read to its end, it gives the connection
// back for the next request; closed before, it closes the connection.
type upBody struct {
	r    io.ReadCloser
	c    *upConn
	up   *upstream
	stop func() bool
	keep bool
	ctx  context.Context
	done bool
	eof  bool
}

func (b *upBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil && b.ctx.Err() != nil {
		err = b.ctx.Err() // the deadline set to end the exchange
	}
	return n, err
}

func (b *upBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	stopped := b.stop()
	if !b.eof {
		// Not read to its end: the body's own Close would read the rest
		// (an SSE stream never ends); closing the connection ends it.
		return b.c.c.Close()
	}
	b.r.Close()
	if b.keep && stopped && b.c.r.Buffered() == 0 {
		b.up.put(b.c)
		return nil
	}
	return b.c.c.Close()
}
