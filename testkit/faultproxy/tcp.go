package faultproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// TCP relays connections to an upstream (a Redis, say) and can partition
// them: while cut, nothing passes either way and new connections are
// accepted but go nowhere, as when a network drops packets. The client
// learns of it only by its own timeouts, never from a refusal. What was
// sent meanwhile is delivered once the link heals, as TCP would, if the
// client still listens.
type TCP struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	open  chan struct{} // closed while the link is up
	conns map[net.Conn]struct{}
	cuts  int
}

// StartTCP relays a loopback port to upstream until the test ends.
func StartTCP(t testing.TB, upstream string) *TCP {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &TCP{ln: ln, upstream: upstream, open: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	close(p.open)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is where clients connect (host:port).
func (p *TCP) Addr() string { return p.ln.Addr().String() }

// Cut partitions the link until Heal.
func (p *TCP) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
		p.cuts++
	default: // already cut
	}
}

// Heal lets traffic through again.
func (p *TCP) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Cuts counts the partitions so far, for a test to show it made them.
func (p *TCP) Cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cuts
}

func (p *TCP) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.open
}

func (p *TCP) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *TCP) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.relay(c)
	}
}

func (p *TCP) relay(c net.Conn) {
	if !p.track(c, true) {
		c.Close()
		return
	}
	defer p.track(c, false)
	defer c.Close()
	<-p.gate() // a connection made during a cut goes nowhere until it heals
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	if !p.track(up, true) {
		up.Close()
		return
	}
	defer p.track(up, false)
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { p.pump(up, c); done <- struct{}{} }()
	go func() { p.pump(c, up); done <- struct{}{} }()
	<-done
}

// pump copies src to dst a read at a time, holding each read while cut.
func (p *TCP) pump(dst io.WriteCloser, src io.Reader) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			<-p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *TCP) close() {
	p.Heal()
	p.ln.Close()
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}
