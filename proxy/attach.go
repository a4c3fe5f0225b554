package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// Attach is a viewer of a running proxy as a session.Feed: the session of
// mcpscope attach. It reads the proxy's journal from the start, then
// subscribes after the last frame it read, so the session sees the host's
// whole session and goes on live with it. Frames the socket reports
// missed are read from the journal; those the journal cannot give back
// become one visible gap event. The session's own requests go to the
// server as inject commands (stdio proxies: they run inside the host's
// server process and their answers never reach the host), a cancel of one
// of them or of a host's call as cancel commands.
type Attach struct {
	conn  *Conn
	hello Hello

	done    chan struct{}
	endOnce sync.Once
	why     string // why it ended

	mu      sync.Mutex
	nextRef int
	waits   map[string]*waiter // commands awaiting their answer, by ref
	wire    map[string]string  // own request key → its id on the wire
	injects int                // inject commands not answered yet: frames are held meanwhile
	held    []session.Fed
	heldAt  time.Time
}

type waiter struct {
	key   string // inject: the request's key in the session
	done  func(error)
	timer *time.Timer
}

// Bounds of a viewer's own waits.
const (
	// AttachAnswerWait bounds how long a command (inject, cancel) waits
	// for the proxy's answer.
	AttachAnswerWait = 10 * time.Second
	// attachSilence is how long the proxy may say nothing (it answers a
	// ping every attachPing) before the viewer takes it for gone.
	attachPing    = 5 * time.Second
	attachSilence = 20 * time.Second
	// heldMax bounds the frames held while an inject is unanswered.
	heldMax = 8192
)

// NewAttach makes the Feed over a connection Dial opened (the hello read).
func NewAttach(c *Conn) *Attach {
	return &Attach{conn: c, hello: c.Hello, done: make(chan struct{}), waits: map[string]*waiter{}, wire: map[string]string{}}
}

// Hello is what the proxy said when the viewer connected.
func (a *Attach) Hello() Hello { return a.hello }

// JournalPath is the proxy's journal ("" when it keeps none).
func (a *Attach) JournalPath() string { return a.hello.Journal }

// Describe names the proxy and what it forwards to.
func (a *Attach) Describe() string {
	return fmt.Sprintf("proxy %s (pid %d): %s", a.hello.Name, a.hello.PID, a.hello.Target)
}

// CanInject reports whether the proxy takes the viewer's requests (a stdio
// proxy does; an HTTP proxy has no session of its own to put them in).
func (a *Attach) CanInject() bool { return slices.Contains(a.hello.Can, "inject") }

// Start is not how a Feed starts.
func (a *Attach) Start(transport.Sink) error {
	return errors.New("proxy.Attach is a session.Feed: start it with StartFeed")
}

// Done is closed once the proxy is gone (it said bye, the socket broke, or
// it stopped answering) or Close ran.
func (a *Attach) Done() <-chan struct{} { return a.done }

// Ended says why the viewer stopped ("" while it runs).
func (a *Attach) Ended() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.why
}

// Close leaves the proxy (it goes on for the host).
func (a *Attach) Close() error {
	a.end("closed by mcpscope")
	return nil
}

func (a *Attach) end(why string) {
	a.endOnce.Do(func() {
		a.mu.Lock()
		a.why = why
		ws := a.waits
		a.waits = map[string]*waiter{}
		a.mu.Unlock()
		a.conn.Close()
		for _, w := range ws {
			w.timer.Stop()
			w.done(fmt.Errorf("the proxy is gone (%s)", why))
		}
		close(a.done)
	})
}

// StartFeed reads the journal, subscribes after it and delivers frames
// from one goroutine until the proxy is gone (another reads the socket).
func (a *Attach) StartFeed(fn func(session.Fed), wire func(key string, id json.RawMessage)) error {
	r := &attachReader{a: a, fn: fn, wireFn: wire, off: -1}
	if p := a.hello.Journal; p != "" {
		f, err := os.Open(p)
		if err != nil {
			a.end("journal unreadable")
			return fmt.Errorf("read the proxy's journal %s: %w", p, err)
		}
		r.file = f
	}
	go func() {
		if r.file != nil {
			if err := r.fillTo(0, 0); err != nil {
				r.off = -1 // the socket's frames come on; what the journal holds is not read back
			}
		}
		after := r.last
		if err := a.conn.Send(Message{Type: "subscribe", After: &after}); err != nil {
			if r.file != nil {
				r.file.Close()
			}
			a.end("the socket broke: " + err.Error())
			return
		}
		go a.pinger()
		r.run()
	}()
	return nil
}

// pinger asks the proxy for a sign of life now and then, so a proxy that
// hangs is noticed (the reader's deadline).
func (a *Attach) pinger() {
	t := time.NewTicker(attachPing)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-t.C:
			if a.conn.Send(Message{Type: "ping"}) != nil {
				a.end("the socket broke")
				return
			}
		}
	}
}

// attachReader is the one goroutine that delivers: the socket's frames
// (read by the inbox's goroutine) and the journal's.
type attachReader struct {
	a      *Attach
	fn     func(session.Fed)
	wireFn func(string, json.RawMessage)
	file   *os.File
	last   uint64 // the last seq delivered
	off    int64  // where the next frame's line starts in the journal (-1: not known)
}

var errStopFill = errors.New("stop")

// fillTo delivers the journal's frames after r.last from offset from, up
// to seq upTo (0: to its end). It stops before a frame past upTo, and at
// a torn last line (the proxy is writing it: it comes on the socket).
func (r *attachReader) fillTo(from int64, upTo uint64) error {
	errStop := errStopFill
	r.off = from
	_, err := journal.ReadAt(r.file, from, func(seq uint64, f transport.Frame, off int64, n int) error {
		if upTo != 0 && seq > upTo {
			r.off = off
			return errStop
		}
		r.off = off + int64(n)
		if seq <= r.last {
			return nil
		}
		r.deliver(session.Fed{Seq: seq, Frame: f, Off: off, Len: n})
		return nil
	})
	var damage *journal.Damage
	switch {
	case err == nil, errors.Is(err, errStop):
		return nil
	case errors.As(err, &damage):
		if damage.Count > 0 {
			r.off = -1 // lines that are not records: offsets after them are not to be trusted
		}
		return nil
	}
	return err
}

func (r *attachReader) run() {
	a := r.a
	defer func() {
		if r.file != nil {
			r.file.Close()
		}
	}()
	q := &inbox{wake: make(chan struct{}, 1)}
	go q.fill(a)
	for {
		for _, it := range q.take() {
			switch {
			case it.err != nil:
				why := "the socket broke: " + it.err.Error()
				var ne net.Error // As, not a type assertion: a wrapped timeout is one too
				if errors.Is(it.err, io.EOF) {
					why = "the proxy closed the socket"
				} else if errors.As(it.err, &ne) && ne.Timeout() {
					why = fmt.Sprintf("the proxy said nothing for %s", attachSilence)
				}
				r.release()
				a.end(why)
				return
			case it.to > 0:
				r.catchUp(it.from, it.to) // dropped while delivery was behind
			case it.frame:
				r.record(it.line)
			default:
				var m Message
				if json.Unmarshal(it.line, &m) != nil {
					continue
				}
				if m.Type == "bye" {
					r.release()
					reason := m.Reason
					if reason == "" {
						reason = "no reason given"
					}
					a.end("the proxy ended: " + reason)
					return
				}
				r.control(&m)
			}
		}
	}
}

// attachQueueBytes bounds the socket's frames waiting for delivery. Past
// it the socket's reader drops frames and notes their seqs, which delivery
// then reads back from the journal (else shows as a gap): the socket is
// always read, so a viewer busy catching up (millions of frames from the
// journal) is never one the proxy drops for not reading.
var attachQueueBytes = 1 << 20

// inbox hands the socket's lines from its reader to delivery, in order.
type inbox struct {
	mu       sync.Mutex
	items    []inItem
	bytes    int
	from, to uint64 // frames dropped since the last item queued
	wake     chan struct{}
}

// inItem is a line (a journal line, frame true, or a control message), a
// run of frames dropped (to > 0), or the socket's end (err). The reader
// tells frames from control messages once: frame and seq say what it saw.
type inItem struct {
	line     []byte
	frame    bool   // a journal line: it starts {"seq":
	seq      uint64 // its seq (0: none could be read)
	from, to uint64
	err      error
}

// fill reads the socket until it ends, never waiting on delivery.
func (q *inbox) fill(a *Attach) {
	for {
		a.conn.c.SetReadDeadline(time.Now().Add(attachSilence))
		b, err := readLine(a.conn.br, 2*journalMax)
		if err != nil && len(b) == 0 {
			q.put(inItem{err: err})
			return
		}
		it := inItem{line: bytes.Clone(b)}
		if rest, ok := bytes.CutPrefix(b, []byte(`{"seq":`)); ok {
			it.frame, it.seq = true, leadingSeq(rest)
		}
		q.put(it)
	}
}

// put queues it; a frame (seq > 0) that does not fit is dropped and noted.
func (q *inbox) put(it inItem) {
	q.mu.Lock()
	switch {
	case it.seq > 0 && q.bytes+len(it.line) > attachQueueBytes:
		if q.to == 0 {
			q.from = it.seq
		}
		q.to = it.seq
	default:
		q.flushDropped()
		q.items = append(q.items, it)
		q.bytes += len(it.line)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// flushDropped queues the frames dropped since the last item as a run.
func (q *inbox) flushDropped() {
	if q.to > 0 {
		q.items = append(q.items, inItem{from: q.from, to: q.to})
		q.from, q.to = 0, 0
	}
}

// take waits for items and takes them all.
func (q *inbox) take() []inItem {
	for {
		q.mu.Lock()
		q.flushDropped() // the frames dropped last are delivered now, not with the next line
		if items := q.items; len(items) > 0 {
			q.items, q.bytes = nil, 0
			q.mu.Unlock()
			return items
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// leadingSeq reads the digits a journal line's seq starts with (0: none).
func leadingSeq(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

// record delivers one frame the socket sent (a journal line).
func (r *attachReader) record(b []byte) {
	seq, f, err := journal.ParseRecord(b)
	if err != nil || seq <= r.last {
		return
	}
	if seq > r.last+1 {
		r.catchUp(r.last+1, seq-1)
	}
	fd := session.Fed{Seq: seq, Frame: f, Off: -1}
	if r.off >= 0 {
		fd.Off, fd.Len = r.off, len(b)+1
		r.off += int64(len(b) + 1)
	}
	r.deliver(fd)
}

// catchUp delivers frames from..to the socket did not send: from the
// journal, else as one gap event.
func (r *attachReader) catchUp(from, to uint64) {
	if to < from || to <= r.last {
		return
	}
	if r.file != nil && r.off >= 0 {
		if err := r.fillTo(r.off, to); err != nil {
			r.off = -1
		}
	}
	if r.last >= to {
		return
	}
	from = r.last + 1
	why := "they are not in a journal (the proxy runs with --no-journal)"
	if r.file != nil {
		why = "the journal could not give them back either"
	}
	detail := fmt.Sprintf("missed frames #%d–#%d (%d): this viewer fell behind the proxy and %s", from, to, to-from+1, why)
	r.deliver(session.Fed{Seq: from, Off: -1, Frame: transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event,
		Meta: transport.Meta{Event: transport.EvNote, Detail: detail}}})
	r.last = to
	r.off = -1 // where the journal goes on is not known past a gap
}

// deliver hands a frame to the session, or holds it while an inject is
// unanswered (its request frame must find the call under its wire id).
func (r *attachReader) deliver(fd session.Fed) {
	a := r.a
	if fd.Seq > r.last {
		r.last = fd.Seq
	}
	a.mu.Lock()
	if a.injects > 0 && len(a.held) < heldMax && (a.heldAt.IsZero() || time.Since(a.heldAt) < AttachAnswerWait) {
		if len(a.held) == 0 {
			a.heldAt = time.Now()
		}
		a.held = append(a.held, fd)
		a.mu.Unlock()
		return
	}
	held := a.held
	a.held, a.heldAt = nil, time.Time{}
	a.mu.Unlock()
	for _, h := range held {
		r.fn(h)
	}
	r.fn(fd)
}

// release delivers the frames held.
func (r *attachReader) release() {
	a := r.a
	a.mu.Lock()
	held := a.held
	a.held, a.heldAt = nil, time.Time{}
	a.mu.Unlock()
	for _, h := range held {
		r.fn(h)
	}
}

// control handles the proxy's answers and notices.
func (r *attachReader) control(m *Message) {
	a := r.a
	switch m.Type {
	case "missed":
		r.catchUp(m.From, m.To)
		return
	case "injected", "cancelled", "error":
	case "pong":
		r.releaseIfIdle() // an inject that timed out held frames: they go now
		return
	default:
		return // subscribed, reply and progress (the frames say it all)
	}
	a.mu.Lock()
	w := a.waits[string(m.Ref)]
	delete(a.waits, string(m.Ref))
	inject := w != nil && w.key != ""
	if inject {
		a.injects--
		if m.Type == "injected" {
			a.wire[w.key] = string(m.ID)
		}
	}
	a.mu.Unlock()
	if w == nil {
		return
	}
	w.timer.Stop()
	if m.Type == "injected" {
		r.wireFn(w.key, m.ID)
	}
	if inject {
		r.releaseIfIdle()
	}
	if m.Type == "error" {
		w.done(errors.New(strings.TrimSpace(m.Error)))
		return
	}
	w.done(nil)
}

// releaseIfIdle delivers the held frames once no inject is unanswered.
func (r *attachReader) releaseIfIdle() {
	r.a.mu.Lock()
	idle := r.a.injects == 0
	r.a.mu.Unlock()
	if idle {
		r.release()
	}
}

// command registers a waiter for ref and sends m; done hears the answer,
// or that none came within AttachAnswerWait.
func (a *Attach) command(m Message, key string, done func(error)) {
	a.mu.Lock()
	if a.why != "" {
		why := a.why
		a.mu.Unlock()
		done(fmt.Errorf("the proxy is gone (%s)", why))
		return
	}
	a.nextRef++
	ref := strconv.Itoa(a.nextRef)
	m.Ref = json.RawMessage(ref)
	w := &waiter{key: key, done: done}
	// claim takes the wait back, once: whoever claims it answers done.
	claim := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		_, still := a.waits[ref]
		delete(a.waits, ref)
		if still && key != "" {
			a.injects--
		}
		return still
	}
	w.timer = time.AfterFunc(AttachAnswerWait, func() {
		if claim() {
			done(fmt.Errorf("proxy %s did not answer the %s command within %s", a.hello.Name, m.Type, AttachAnswerWait))
		}
	})
	a.waits[ref] = w
	if key != "" {
		a.injects++
	}
	a.mu.Unlock()
	if err := a.conn.Send(m); err != nil {
		if claim() {
			w.timer.Stop()
			done(fmt.Errorf("write to proxy %s: %w", a.hello.Name, err))
		}
	}
}

// Send takes the session's messages: a request is injected (stdio
// proxies), a notifications/cancelled for one of the session's own
// requests becomes a cancel command; nothing else is sent into the host's
// session.
func (a *Attach) Send(m transport.Outgoing, done func(error)) {
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		} `json:"params"`
	}
	if json.Unmarshal(m.Data, &env) != nil {
		done(errors.New("not a JSON-RPC message"))
		return
	}
	switch {
	case env.Method != "" && len(env.ID) > 0 && string(env.ID) != "null":
		if !a.CanInject() {
			done(fmt.Errorf("proxy %s forwards %s: it puts no viewer's request into the host's session; mcpscope sends it through a session of its own instead",
				a.hello.Name, a.hello.Transport))
			return
		}
		key := m.Key
		if key == "" {
			key = string(env.ID)
		}
		a.command(Message{Type: "inject", Message: json.RawMessage(m.Data)}, key, done)
	case env.Method == "notifications/cancelled":
		a.mu.Lock()
		wire, ok := a.wire[requestKey(env.Params.RequestID)]
		a.mu.Unlock()
		if !ok {
			done(errors.New("a cancel reaches the proxy only for this viewer's own calls (a host's call: CancelForeign)"))
			return
		}
		a.command(Message{Type: "cancel", ID: json.RawMessage(wire), Reason: env.Params.Reason}, "", done)
	default:
		done(errors.New("mcpscope attach sends nothing into the host's session but its own requests and their cancels"))
	}
}

// requestKey is the session's key of a JSON-RPC id (the forms a session
// makes: numbers, and strings as strconv.Quote writes them).
func requestKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	var s string
	if len(id) > 0 && id[0] == '"' && json.Unmarshal(id, &s) == nil {
		return strconv.Quote(s)
	}
	return string(id)
}

// CancelForeign cancels a host's call by the seq of its request frame: the
// host gets a JSON-RPC error at once, the server notifications/cancelled.
func (a *Attach) CancelForeign(seq uint64, id json.RawMessage, reason string, done func(error)) {
	m := Message{Type: "cancel", Seq: seq, Reason: reason}
	if seq == 0 {
		m.ID = id
	}
	a.command(m, "", done)
}
