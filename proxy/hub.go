package proxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Protocol names the socket protocol in every hello.
const Protocol = "mcpscope-proxy/1"

// Bounds of the socket side. None of them can slow the host: a viewer that
// falls behind loses frames (a "missed" message says which, and they are in
// the journal), and one that stops reading is dropped.
const (
	viewerFrames   = 8192     // frames queued for one viewer
	viewerBytes    = 16 << 20 // bytes queued for one viewer
	viewerCtl      = 1024     // control messages queued for one viewer
	maxViewers     = 32
	maxCommand     = 16 << 20 // one command line from a viewer
	ringFrames     = 4096     // recent records kept for subscribe-after
	ringBytes      = 8 << 20  // and the most its store grows to
	ringRecordMax  = 256 << 10
	byeWait        = time.Second
	listenPathMax  = 104 // sun_path, less room for the terminating NUL on every Unix
	socketSuffix   = ".sock"
	socketDirPerm  = 0o700
	socketFilePerm = 0o600
)

// viewerWrite is how long a write to a viewer may wait for it to read
// before the viewer is dropped. A variable only so that a test can keep a
// stuck viewer for as long as the host's traffic takes on a slow machine.
var viewerWrite = 10 * time.Second

// Hello is the first line a viewer reads.
type Hello struct {
	Type      string    `json:"type"` // "hello"
	Protocol  string    `json:"protocol"`
	Name      string    `json:"name"`
	PID       int       `json:"pid"`
	Transport string    `json:"transport"` // "stdio" or "http"
	Target    string    `json:"target"`    // the server, credentials redacted
	Listen    string    `json:"listen,omitempty"`
	ServerPID int       `json:"serverPid,omitempty"`
	Journal   string    `json:"journal,omitempty"`
	Started   time.Time `json:"started"`
	Seq       uint64    `json:"seq"`     // the last frame journaled so far
	Viewers   int       `json:"viewers"` // viewers subscribed now
	Can       []string  `json:"can,omitempty"`
	IDPrefix  string    `json:"idPrefix,omitempty"` // ids of injected requests start with it
}

// Message is every other line of the protocol, in both directions, except
// frames (which are journal records). Type says which fields matter.
type Message struct {
	Type    string          `json:"type"`
	Ref     json.RawMessage `json:"ref,omitempty"`     // the viewer's token, echoed in the answer
	After   *uint64         `json:"after,omitempty"`   // subscribe: frames with a greater seq
	Seq     uint64          `json:"seq,omitempty"`     // cancel: the request's frame; answers: the frame they are about
	ID      json.RawMessage `json:"id,omitempty"`      // cancel: the request's id; answers: the id on the wire
	Message json.RawMessage `json:"message,omitempty"` // inject: the request; reply, progress: the server's message
	Reason  string          `json:"reason,omitempty"`
	Error   string          `json:"error,omitempty"`
	From    uint64          `json:"from,omitempty"` // missed: first seq missed
	To      uint64          `json:"to,omitempty"`   // missed: last seq missed
	Count   uint64          `json:"count,omitempty"`
	Journal string          `json:"journal,omitempty"`
}

// controller is what a proxy does for its viewers' commands. Each method
// answers through v.send.
type controller interface {
	inject(v *viewer, m *Message)
	cancel(v *viewer, m *Message)
}

type hub struct {
	r     *recorder
	ctl   controller
	hello func() Hello

	mu      sync.Mutex
	ring    ring
	last    uint64 // last seq published
	viewers map[*viewer]struct{}
	subs    int
	nextV   int
	ln      net.Listener
	path    string
	closed  bool
	wg      sync.WaitGroup
}

func newHub(r *recorder) *hub {
	return &hub{r: r, viewers: map[*viewer]struct{}{}}
}

// publish hands a batch of journaled records (record i is
// buf[ends[i-1]:ends[i]], seq first+i) to the ring and every subscribed
// viewer. It never blocks on a viewer. buf stays the caller's: the ring
// copies what it keeps, and the viewers' queues get slices of one copy of
// buf made for them, just its size.
func (h *hub) publish(first uint64, buf []byte, ends []int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var shared []byte
	if h.subs > 0 {
		shared = bytes.Clone(buf)
	}
	start := 0
	for i, end := range ends {
		seq := first + uint64(i)
		h.last = seq
		h.ring.put(seq, buf[start:end])
		if shared != nil {
			rec := shared[start:end:end]
			for v := range h.viewers {
				if v.subscribed {
					v.pushFrame(seq, rec)
				}
			}
		}
		start = end
	}
}

// listen opens the socket at path (0600, its directory 0700) and serves
// viewers until close.
func (h *hub) listen(path string) error {
	if len(path) >= listenPathMax {
		return fmt.Errorf("socket path %s is %d bytes, over the %d a Unix socket allows", path, len(path), listenPathMax-1)
	}
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return err
	}
	os.Remove(path) // a leftover with our own pid is a dead process's
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := restrictSocket(path); err != nil {
		ln.Close()
		os.Remove(path)
		return err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	h.mu.Lock()
	h.ln, h.path = ln, path
	h.mu.Unlock()
	h.wg.Add(1)
	go h.accept(ln)
	return nil
}

func (h *hub) accept(ln net.Listener) {
	defer h.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		h.mu.Lock()
		if h.closed || len(h.viewers) >= maxViewers {
			closed := h.closed
			h.mu.Unlock()
			if !closed {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				b, _ := json.Marshal(Message{Type: "error", Error: fmt.Sprintf("this proxy serves at most %d viewers", maxViewers)})
				c.Write(append(b, '\n'))
			}
			c.Close()
			continue
		}
		h.nextV++
		v := &viewer{h: h, c: c, n: h.nextV, wake: make(chan struct{}, 1), gone: make(chan struct{})}
		h.viewers[v] = struct{}{}
		h.mu.Unlock()
		hello := h.hello()
		hello.Type, hello.Protocol = "hello", Protocol
		h.mu.Lock()
		hello.Seq, hello.Viewers = h.last, h.subs
		h.mu.Unlock()
		v.send(hello)
		h.wg.Add(2)
		go v.writer()
		go v.reader()
	}
}

// subscribe starts frames for v after seq after (nil: live from now): the
// ones still in the ring first, a missed message for older ones.
func (h *hub) subscribe(v *viewer, m *Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if v.subscribed {
		v.send(Message{Type: "error", Ref: m.Ref, Error: "already subscribed"})
		return
	}
	after := h.last
	if m.After != nil && *m.After < h.last {
		after = *m.After
	}
	v.send(Message{Type: "subscribed", Ref: m.Ref, After: &after, Seq: h.last, Journal: h.r.journalPath()})
	v.subscribed = true
	h.subs++
	if n := h.ring.len(); after < h.last && (n == 0 || h.ring.firstSeq() > after+1) {
		// Older than the ring: the viewer reads those from the journal.
		to := h.last
		if n > 0 {
			to = h.ring.firstSeq() - 1
		}
		v.pushMissedRange(after+1, to)
	}
	h.ring.each(after, func(seq uint64, rec []byte) {
		if rec == nil {
			v.pushMissedRange(seq, seq)
			return
		}
		v.pushFrame(seq, rec)
	})
}

func (h *hub) drop(v *viewer) {
	h.mu.Lock()
	if _, ok := h.viewers[v]; ok {
		delete(h.viewers, v)
		if v.subscribed {
			h.subs--
		}
	}
	h.mu.Unlock()
}

// close says bye to every viewer (reason), lets their queues drain for a
// moment, and removes the socket.
func (h *hub) close(reason string) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	ln := h.ln
	vs := make([]*viewer, 0, len(h.viewers))
	for v := range h.viewers {
		vs = append(vs, v)
	}
	last := h.last
	h.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	deadline := time.Now().Add(byeWait)
	for _, v := range vs {
		v.send(Message{Type: "bye", Reason: reason, Seq: last})
		v.finish()
	}
	for _, v := range vs {
		select {
		case <-v.gone:
		case <-time.After(time.Until(deadline)):
		}
		v.close()
	}
	h.wg.Wait()
}

// viewer is one connection on the socket.
type viewer struct {
	h    *hub
	c    net.Conn
	n    int
	wake chan struct{}
	gone chan struct{} // the writer stopped

	mu        sync.Mutex
	q         []qent
	qframes   int
	qbytes    int
	qctl      int
	finishing bool // write what is queued, then stop
	closed    bool
	closeOnce sync.Once

	subscribed bool // guarded by h.mu
}

// qent is one queued line: a record, a control message, or a run of frames
// this viewer missed.
type qent struct {
	b        []byte
	ctl      bool
	missed   bool
	from, to uint64
}

func (v *viewer) signal() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

func (v *viewer) pushFrame(seq uint64, rec []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || v.finishing {
		return
	}
	if v.qframes >= viewerFrames || v.qbytes+len(rec) > viewerBytes {
		v.missedLocked(seq)
		return
	}
	v.q = append(v.q, qent{b: rec})
	v.qframes++
	v.qbytes += len(rec)
	v.signal()
}

func (v *viewer) pushMissedRange(from, to uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.missedRangeLocked(from, to)
}

func (v *viewer) missedLocked(seq uint64) { v.missedRangeLocked(seq, seq) }

// missedRangeLocked queues frames from..to as missed, joined to a missed
// range just before them.
func (v *viewer) missedRangeLocked(from, to uint64) {
	if v.closed || v.finishing {
		return
	}
	if n := len(v.q); n > 0 && v.q[n-1].missed && v.q[n-1].to+1 == from {
		v.q[n-1].to = to
		return
	}
	v.q = append(v.q, qent{missed: true, from: from, to: to})
	v.signal()
}

// send queues a control message; these are never dropped, but a viewer
// that lets viewerCtl of them pile up is.
func (v *viewer) send(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	if v.qctl >= viewerCtl {
		v.mu.Unlock()
		v.close() // it does not read its answers
		return
	}
	v.q = append(v.q, qent{b: append(b, '\n'), ctl: true})
	v.qctl++
	v.signal()
	v.mu.Unlock()
}

// finish lets the writer drain what is queued and stop.
func (v *viewer) finish() {
	v.mu.Lock()
	v.finishing = true
	v.signal()
	v.mu.Unlock()
}

func (v *viewer) close() {
	v.closeOnce.Do(func() {
		v.mu.Lock()
		v.closed = true
		v.q = nil
		v.signal()
		v.mu.Unlock()
		v.c.Close()
	})
}

func (v *viewer) writer() {
	defer v.h.wg.Done()
	defer close(v.gone)
	defer v.h.drop(v)
	defer v.close()
	journal := v.h.r.journalPath()
	for {
		v.mu.Lock()
		for len(v.q) == 0 && !v.closed && !v.finishing {
			v.mu.Unlock()
			<-v.wake
			v.mu.Lock()
		}
		if v.closed || (len(v.q) == 0 && v.finishing) {
			v.mu.Unlock()
			return
		}
		q := v.q
		v.q = nil
		v.qframes, v.qbytes, v.qctl = 0, 0, 0
		v.mu.Unlock()

		bufs := make(net.Buffers, 0, len(q))
		for _, e := range q {
			if e.missed {
				b, _ := json.Marshal(Message{Type: "missed", From: e.from, To: e.to, Count: e.to - e.from + 1, Journal: journal})
				bufs = append(bufs, append(b, '\n'))
				continue
			}
			bufs = append(bufs, e.b)
		}
		v.c.SetWriteDeadline(time.Now().Add(viewerWrite))
		if _, err := bufs.WriteTo(v.c); err != nil {
			return // a viewer that does not read for viewerWrite is dropped
		}
	}
}

func (v *viewer) reader() {
	defer v.h.wg.Done()
	defer v.close()
	br := bufio.NewReaderSize(v.c, 64<<10)
	for {
		line, err := readLine(br, maxCommand)
		if len(bytes.TrimSpace(line)) > 0 {
			var m Message
			if jerr := json.Unmarshal(line, &m); jerr != nil {
				v.send(Message{Type: "error", Error: "not a JSON command: " + jerr.Error()})
			} else {
				v.command(&m)
			}
		}
		if errors.Is(err, errLineTooLong) {
			v.send(Message{Type: "error", Error: err.Error()})
			continue
		}
		if err != nil {
			// The viewer closed its side (or broke it): let the writer
			// finish what is queued, bounded by its write deadline.
			v.finish()
			return
		}
	}
}

func (v *viewer) command(m *Message) {
	switch m.Type {
	case "subscribe":
		v.h.subscribe(v, m)
	case "inject":
		v.h.ctl.inject(v, m)
	case "cancel":
		v.h.ctl.cancel(v, m)
	case "ping":
		v.send(Message{Type: "pong", Ref: m.Ref, Seq: v.h.r.lastSeq()})
	default:
		v.send(Message{Type: "error", Ref: m.Ref, Error: "unknown command " + strconv.Quote(m.Type) + "; the commands are subscribe, inject, cancel and ping"})
	}
}

var errLineTooLong = errors.New("command line too long")

// readLine reads one line (without its newline) of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var acc []byte
	for {
		frag, err := br.ReadSlice('\n')
		if err == nil && acc == nil {
			return frag[:len(frag)-1], nil
		}
		if len(acc)+len(frag) > limit {
			// Skip the rest of it.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w (over %d bytes)", errLineTooLong, limit)
		}
		acc = append(acc, frag...)
		switch {
		case err == nil:
			return acc[:len(acc)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			return acc, io.EOF
		default:
			return acc, err
		}
	}
}
