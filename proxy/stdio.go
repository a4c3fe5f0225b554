package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mcpscope/transport"
)

// StdioConfig describes a stdio proxy: the server to spawn and the host's
// pipes.
type StdioConfig struct {
	Name    string
	Command string
	Args    []string
	Env     []string // added to the proxy's own environment (which the server inherits)
	Dir     string
	Shell   bool
	Grace   time.Duration // each step of the shutdown ladder; default 2s

	Journal   string // the journal's path; "" = none
	SocketDir string // "" = SocketDir(); "-" = no socket

	In  io.Reader // the host's messages (the proxy's stdin)
	Out io.Writer // to the host (the proxy's stdout): nothing but the server's bytes
	Err io.Writer // the server's stderr passes through here, and the proxy's rare notes

	// Signals are the signals the host sends the proxy: each is passed on
	// to the server's process group, then the shutdown ladder runs.
	Signals <-chan os.Signal
	// MaxLine is the longest line routed and journaled whole (default 64
	// MiB); a longer one is still forwarded whole, as it streams in.
	MaxLine int
	// Ready is called once the server runs and the socket listens.
	Ready func(Hello)
	// Records, when set, hears of each journal record as it is written
	// (the live OpenTelemetry exporter); it must return at once.
	Records func(line []byte)
}

// Result is how a proxy ended.
type Result struct {
	ExitCode int    // the server's exit code; 128+N when signal N ended it
	Signal   string // the signal that ended the server, if one did
	Journal  string
}

// Timeouts of the proxy's own waits (a viewer's command never waits longer).
const (
	lockWait     = 5 * time.Second
	maxInflight  = 1 << 16 // host calls tracked for cancel
	maxCancelled = 4096    // cancelled ids whose late answer is still awaited
	maxInjected  = 1024    // viewer requests awaiting their answer
)

// cancelCode and cancelMessage are what the host gets for a call cancelled
// from mcpscope (-32800 is "request cancelled" in LSP's numbering).
const (
	cancelCode    = -32800
	cancelMessage = "request cancelled from mcpscope"
)

type hostCall struct {
	id     []byte // as the host wrote it
	seq    uint64
	method string
}

type injectCall struct {
	v      *viewer
	ref    json.RawMessage
	wireID string // JSON text of the id on the wire
	key    string // idKey of wireID
	token  string // idKey of the wire progress token, "" if none
	seq    uint64
}

type stdioProxy struct {
	c       StdioConfig
	rec     *recorder
	st      *transport.Stdio
	pid     atomic.Int64
	prefix  string // injected ids are prefix + n
	sprefix string // idKey of such an id starts with it
	nextID  atomic.Uint64
	started time.Time
	maxLine int

	toServer wireLock // whole lines into the server's stdin
	toHost   wireLock // whole lines to the host, and the routing of server lines

	mu        sync.Mutex
	inflight  map[string]*hostCall
	cancelled map[string]bool
	cancOrder []string
	injected  map[string]*injectCall
	tokens    map[string]*injectCall
	untracked bool // noted once: too many host calls in flight to track
	// watch says whether the server's lines need routing at all: a call
	// is in flight, cancelled or injected (or ever was injected). Without
	// one, every line is the host's and no line is parsed. Set under mu.
	watch atomic.Bool
	// progress says whether a viewer's injected call awaits progress
	// (tokens is not empty). Set under mu.
	progress atomic.Bool

	hostGone atomic.Bool
	errMu    sync.Mutex
}

// RunStdio spawns the server and forwards between it and the host until the
// server exits; then it returns the server's exit status. The host's stdin
// reaching its end closes the server's stdin and runs the shutdown ladder.
func RunStdio(ctx context.Context, c StdioConfig) (Result, error) {
	if c.Err == nil {
		c.Err = io.Discard
	}
	p := &stdioProxy{c: c, started: time.Now(), maxLine: c.MaxLine,
		toServer: newWireLock(), toHost: newWireLock(),
		inflight: map[string]*hostCall{}, cancelled: map[string]bool{},
		injected: map[string]*injectCall{}, tokens: map[string]*injectCall{}}
	if p.maxLine <= 0 {
		p.maxLine = journalMax
	}
	var nonce [4]byte
	rand.Read(nonce[:])
	p.prefix = "mcpscope-" + hex.EncodeToString(nonce[:]) + "-"
	p.sprefix = "s" + p.prefix

	p.st = transport.NewStdio(transport.StdioOptions{Command: c.Command, Args: c.Args, Env: c.Env, Dir: c.Dir,
		Shell: c.Shell, Grace: c.Grace, Raw: p.raw})
	rec, err := newRecorder(c.Journal, p.st.Describe(), p.note, c.Records)
	if err != nil {
		return Result{}, err
	}
	p.rec = rec
	rec.hub.ctl = p
	rec.hub.hello = p.hello
	if err := p.st.Start(p.sink); err != nil {
		rec.close()
		return Result{ExitCode: 127, Journal: rec.journalPath()}, err
	}
	p.listen()
	if c.Ready != nil {
		c.Ready(p.hello())
	}
	go p.hostToServer()

	ctxDone := ctx.Done()
	// After the host's signal the proxy ends within the ladder (three steps
	// of grace) and the drain, whatever the journal does: past that, a
	// journal that takes nothing is abandoned, and a grace later the proxy
	// stops waiting for the server's pipes.
	var stuck, giveUp <-chan time.Time
	for waiting := true; waiting; {
		select {
		case <-p.st.Done():
			waiting = false
		case <-stuck:
			stuck = nil
			p.note("the server's output is still not drained after the shutdown ladder: the journal takes nothing; ending without it")
			p.rec.abandon()
			giveUp = time.After(p.grace())
		case <-giveUp:
			waiting = false
		case sig := <-c.Signals:
			s, ok := sig.(syscall.Signal)
			if !ok {
				continue
			}
			p.rec.eventNow(transport.EvNote, transport.Meta{PID: p.serverPID(),
				Detail: "the host sent " + signalName(s) + ": passed on to the server; the shutdown ladder follows if it stays"})
			if stuck == nil && giveUp == nil {
				stuck = time.After(4*p.grace() + 2*time.Second)
			}
			p.st.Signal(s)
			go func() {
				t := time.NewTimer(p.grace())
				defer t.Stop()
				select {
				case <-p.st.Done():
				case <-t.C:
				}
				p.st.Close()
			}()
		case <-ctxDone:
			ctxDone = nil
			p.rec.eventNow(transport.EvNote, transport.Meta{PID: p.serverPID(), Detail: "stopping: the shutdown ladder"})
			go p.st.Close()
		}
	}
	p.st.Close() // records how it ended; bounded, the process is gone
	code, sig, _ := p.st.ExitStatus()
	res := Result{ExitCode: code, Signal: sig, Journal: rec.journalPath()}
	if sig != "" {
		res.ExitCode = 128 + signalNumber(sig)
	}
	rec.close()
	rec.hub.close(fmt.Sprintf("the server exited (%s)", exitText(res)))
	return res, nil
}

func exitText(r Result) string {
	if r.Signal != "" {
		return "signal: " + r.Signal
	}
	return "code " + strconv.Itoa(r.ExitCode)
}

// listen opens the socket; a proxy without one still forwards and journals.
func (p *stdioProxy) listen() {
	if p.c.SocketDir == "-" {
		return
	}
	dir := p.c.SocketDir
	if dir == "" {
		dir = SocketDir()
	}
	if err := p.rec.hub.listen(SocketPath(dir, p.c.Name, os.Getpid())); err != nil {
		p.note("no socket for viewers (" + err.Error() + "); forwarding and journaling go on")
	}
}

func (p *stdioProxy) hello() Hello {
	return Hello{Name: p.c.Name, PID: os.Getpid(), Transport: "stdio", Target: p.st.Describe(),
		ServerPID: p.serverPID(), Journal: p.rec.journalPath(), Started: p.started,
		Can: []string{"inject", "cancel"}, IDPrefix: p.prefix}
}

func (p *stdioProxy) grace() time.Duration {
	if p.c.Grace > 0 {
		return p.c.Grace
	}
	return 2 * time.Second
}

func (p *stdioProxy) serverPID() int { return int(p.pid.Load()) }

// sink records the transport's own events (spawned, exited, closed, notes).
func (p *stdioProxy) sink(f transport.Frame) {
	if f.Kind == transport.Event && f.Meta.Event == transport.EvSpawned {
		p.pid.Store(int64(f.Meta.PID))
	}
	p.rec.record(f, false, nil)
}

// note tells the person something on stderr, between the server's lines.
func (p *stdioProxy) note(s string) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	fmt.Fprintf(p.c.Err, "mcpscope proxy: %s\n", s)
}

func (p *stdioProxy) meta(via string) transport.Meta {
	return transport.Meta{PID: p.serverPID(), Via: via}
}

// raw is the transport's hand-over of the server's pipes.
func (p *stdioProxy) raw(stream string, r io.Reader) {
	if stream == "stderr" {
		p.stderr(r)
		return
	}
	p.serverToHost(r)
}

// --- host → server ---

// pendingOut is a host line that needs tracking for cancel.
type pendingOut struct {
	line   int       // its index in the run
	call   *hostCall // a request to track, its seq filled in at record time
	key    string
	cancel string // the host cancels this id itself
}

func (p *stdioProxy) hostToServer() {
	var (
		run     = &lineRun{}
		pending []pendingOut
		failed  bool
	)
	write := func(b []byte) {
		if failed {
			return
		}
		if err := p.st.WriteRaw(b); err != nil {
			failed = true
			p.rec.event(transport.EvSendFailed, transport.Meta{PID: p.serverPID(), Via: transport.ViaHost,
				Detail: "the host's messages from here on are not delivered: " + err.Error()})
		}
	}
	flush := func() {
		if len(run.data) == 0 {
			return
		}
		p.toServer.lock()
		// Numbered and tracked before the server can answer them.
		first := p.rec.recordRun(run)
		for i := range pending {
			p.track(&pending[i], first+uint64(pending[i].line))
		}
		write(run.data)
		p.toServer.unlock()
		p.rec.signal()
		run = p.rec.nextRun(run)
		clear(pending)
		pending = pending[:0]
	}
	line := func(b []byte) {
		if len(run.data) == 0 {
			run.t, run.dir, run.pid = time.Now(), transport.Out, p.serverPID()
		}
		start := len(run.data)
		run.data = append(run.data, b...)
		data := trimEOL(run.data[start:])
		if len(data) == 0 {
			return
		}
		po := pendingOut{line: run.frames}
		run.lines = append(run.lines, runLine{start: start, end: start + len(data), via: transport.ViaHost})
		run.frames++
		if env, ok := scanEnvelope(data); ok {
			switch {
			case env.isRequest():
				if key, ok := idKey(env.id); ok {
					po.key = key
					po.call = &hostCall{id: bytes.Clone(env.id), method: unquote(env.method)}
				}
			case env.methodIs("notifications/cancelled"):
				if id, ok := member(env.params, `"requestId"`); ok {
					po.cancel, _ = idKey(id)
				}
			}
		}
		if po.call != nil || po.cancel != "" {
			pending = append(pending, po)
		}
		if len(run.data) >= 256<<10 {
			flush()
		}
	}
	long := longLine(p.toServer.lock, write, func(head []byte, total int) {
		p.recordLong(transport.Out, transport.Garbage, head, total, transport.ViaHost)
		p.toServer.unlock()
	})
	err := newLineReader(p.c.In, p.maxLine).run(line, long, flush)
	detail := "the host closed its stdin: closing the server's stdin (then SIGTERM, SIGKILL if it stays)"
	if !errors.Is(err, io.EOF) { // run ends only on a read error: io.EOF is the host closing stdin
		detail = "reading the host's stdin failed (" + err.Error() + "): closing the server's stdin"
	}
	p.rec.event(transport.EvNote, transport.Meta{PID: p.serverPID(), Via: transport.ViaHost, Detail: detail})
	p.st.Close()
}

// track remembers a host request until its answer, for cancel.
func (p *stdioProxy) track(po *pendingOut, seq uint64) {
	if po.call == nil && po.cancel == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.rewatch()
	if po.cancel != "" {
		delete(p.inflight, po.cancel)
		return
	}
	if p.cancelled[po.key] {
		// The host reuses an id we cancelled: this call's answer is its own.
		delete(p.cancelled, po.key)
	}
	if len(p.inflight) >= maxInflight {
		if !p.untracked {
			p.untracked = true
			go p.note(fmt.Sprintf("over %d host calls in flight: newer ones cannot be cancelled from mcpscope", maxInflight))
		}
		return
	}
	po.call.seq = seq
	p.inflight[po.key] = po.call
}

// rewatch updates watch; called with mu held after any change to the
// calls tracked.
func (p *stdioProxy) rewatch() {
	p.progress.Store(len(p.tokens) > 0)
	p.watch.Store(len(p.inflight) > 0 || len(p.cancelled) > 0 || len(p.injected) > 0 || len(p.tokens) > 0 || p.nextID.Load() > 0)
}

// longLine is a lineReader's long callback, the same for every stream: begin
// runs before a line's first piece (take the writer's lock), write forwards
// each piece as it arrives, and end gets the line's first journalHead bytes
// and its full length once the last piece is through.
func longLine(begin func(), write func([]byte), end func(head []byte, total int)) func(piece []byte, first, last bool) {
	var head []byte
	var total int
	return func(piece []byte, first, last bool) {
		if first {
			begin()
			head, total = nil, 0
		}
		write(piece)
		total += len(piece)
		if room := journalHead - len(head); room > 0 {
			head = append(head, piece[:min(room, len(piece))]...)
		}
		if last {
			end(head, total)
		}
	}
}

// recordLong journals a line over the limit: its head, and an event with its
// real length.
func (p *stdioProxy) recordLong(dir transport.Dir, kind transport.Kind, head []byte, total int, via string) {
	n := len(trimEOL(head))
	if n < len(head) && len(head) == total {
		head = head[:n]
	}
	p.rec.event(transport.EvLineTooLong, transport.Meta{PID: p.serverPID(), Via: via, Detail: fmt.Sprintf(
		"a %s line of %d bytes, over the %d-byte journal limit: forwarded whole, journaled its first %d bytes",
		dir, total, p.maxLine, len(head))})
	p.rec.record(transport.Frame{Time: time.Now(), Dir: dir, Kind: kind, Data: head, Meta: p.meta(via)}, false, nil)
}

// --- server → host ---

func (p *stdioProxy) serverToHost(r io.Reader) {
	var (
		run    = &lineRun{}
		out    []byte // what goes to the host when a line of run does not
		split  bool   // a line of run is not the host's: out holds the rest
		locked bool
	)
	writeHost := func(b []byte) {
		if len(b) == 0 || p.hostGone.Load() {
			return
		}
		if _, err := p.c.Out.Write(b); err != nil {
			p.hostGone.Store(true)
			p.rec.event(transport.EvNote, transport.Meta{PID: p.serverPID(), Via: transport.ViaHost,
				Detail: "writing to the host failed (" + err.Error() + "): the host is gone; stopping the server"})
			go p.st.Close()
		}
	}
	// send numbers the lines of run (so the host's answer to one of them
	// is journaled after it), writes them to the host and hands them to
	// the recorder; classifying, encoding and publishing them is its
	// writer's work. Called with toHost held.
	send := func() {
		p.rec.recordRun(run)
		if split {
			writeHost(out)
			out, split = out[:0], false
			if cap(out) > 1<<20 {
				out = nil
			}
		} else {
			writeHost(run.data)
		}
		p.rec.signal()
		run = p.rec.nextRun(run)
	}
	flush := func() {
		if !locked {
			return
		}
		send()
		p.toHost.unlock()
		locked = false
	}
	line := func(b []byte) {
		if !locked {
			p.toHost.lock()
			locked = true
		}
		if len(run.data) == 0 {
			run.t, run.dir, run.pid = time.Now(), transport.In, p.serverPID()
		}
		start := len(run.data)
		run.data = append(run.data, b...)
		data := trimEOL(run.data[start:])
		via := transport.ViaHost
		var after func(uint64)
		if len(data) > 0 && p.watch.Load() {
			via, after = p.route(data)
		}
		switch {
		case via != transport.ViaHost && !split:
			out, split = append(out[:0], run.data[:start]...), true
		case via == transport.ViaHost && split:
			out = append(out, b...)
		}
		if len(data) > 0 {
			run.lines = append(run.lines, runLine{start: start, end: start + len(data), via: via, after: after})
			run.frames++
		}
		if len(run.data) >= 256<<10 {
			send()
		}
	}
	// The lines buffered go whole (the writer cuts them apart) when none
	// needs routing: no call is tracked, or each of them has a method at a
	// glance while no viewer awaits progress.
	bulk := func(b []byte) bool {
		watch := p.watch.Load()
		if watch && p.progress.Load() {
			return false
		}
		n, ok := scanLines(b, watch)
		if !ok {
			return false
		}
		if !locked {
			p.toHost.lock()
			locked = true
		}
		if len(run.data) == 0 {
			run.t, run.dir, run.pid = time.Now(), transport.In, p.serverPID()
		}
		run.addLines(b, n, transport.ViaHost)
		if split {
			out = append(out, b...)
		}
		if len(run.data) >= 256<<10 {
			send()
		}
		return true
	}
	long := longLine(func() { flush(); p.toHost.lock() }, writeHost, func(head []byte, total int) {
		p.recordLong(transport.In, transport.Garbage, head, total, transport.ViaHost)
		p.toHost.unlock()
	})
	lr := newLineReader(r, p.maxLine)
	lr.bulk = bulk
	lr.run(line, long, flush)
}

// route decides where a server line goes: to the host (ViaHost), to the
// viewer that asked (ViaViewer), or nowhere (ViaDropped). Called with
// toHost held, so a cancel never slips between the decision and the write.
func (p *stdioProxy) route(data []byte) (string, func(uint64)) {
	// While no viewer awaits progress, a message with a method goes to
	// the host whatever else it holds: its first method is enough, and
	// the way most servers begin one says it has one.
	progress := p.progress.Load()
	if !progress && methodFirstLine(data) {
		return transport.ViaHost, nil
	}
	env, ok := scanMembers(data, progress)
	if !ok {
		return transport.ViaHost, nil
	}
	switch {
	case env.isResponse():
		key, ok := idKey(env.id)
		if !ok {
			return transport.ViaHost, nil
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		defer p.rewatch()
		if ic := p.injected[key]; ic != nil {
			delete(p.injected, key)
			if ic.token != "" {
				delete(p.tokens, ic.token)
			}
			return transport.ViaViewer, func(seq uint64) { ic.deliver("reply", seq, data) }
		}
		if strings.HasPrefix(key, p.sprefix) {
			return transport.ViaViewer, nil // a viewer's, whose answer nobody awaits any more
		}
		if p.cancelled[key] {
			delete(p.cancelled, key)
			return transport.ViaDropped, nil
		}
		delete(p.inflight, key)
	case env.methodIs("notifications/progress"):
		p.mu.Lock()
		defer p.mu.Unlock()
		if len(p.tokens) == 0 {
			return transport.ViaHost, nil
		}
		tok, ok := member(env.params, `"progressToken"`)
		if !ok {
			return transport.ViaHost, nil
		}
		key, _ := idKey(tok)
		if ic := p.tokens[key]; ic != nil {
			return transport.ViaViewer, func(seq uint64) { ic.deliver("progress", seq, data) }
		}
	}
	return transport.ViaHost, nil
}

// The usual beginnings of a message with a method.
var (
	methodFirst  = []byte(`{"method":"`)
	methodSecond = []byte(`{"jsonrpc":"2.0","method":"`)
)

// methodFirstLine says whether line begins the way most messages with a
// method (a string) do: then it is no response.
func methodFirstLine(line []byte) bool {
	return bytes.HasPrefix(line, methodSecond) || bytes.HasPrefix(line, methodFirst)
}

// scanLines counts the whole lines of b; ok is false when one is blank
// (forwarded, but no frame), or, with methods set, when one is not
// methodFirstLine.
func scanLines(b []byte, methods bool) (n int, ok bool) {
	for len(b) > 0 {
		if b[0] == '\n' || b[0] == '\r' && len(b) > 1 && b[1] == '\n' || methods && !methodFirstLine(b) {
			return n, false
		}
		k := bytes.IndexByte(b, '\n')
		if k < 0 {
			return n, false // not a whole line: never so from lineReader
		}
		n++
		b = b[k+1:]
	}
	return n, true
}

func (ic *injectCall) deliver(typ string, seq uint64, data []byte) {
	m := Message{Type: typ, Ref: ic.ref, ID: json.RawMessage(ic.wireID), Seq: seq}
	if json.Valid(data) {
		m.Message = data
	} else {
		m.Error = "the server's answer is not valid JSON; it is in the journal at seq " + strconv.FormatUint(seq, 10)
	}
	ic.v.send(m)
}

// --- stderr ---

func (p *stdioProxy) stderr(r io.Reader) {
	run := &lineRun{}
	flush := func() {
		if len(run.data) == 0 {
			return
		}
		p.rec.recordRun(run)
		p.errMu.Lock()
		p.c.Err.Write(run.data)
		p.errMu.Unlock()
		p.rec.signal()
		run = p.rec.nextRun(run)
	}
	begin := func() {
		if len(run.data) == 0 {
			run.t, run.dir, run.kind, run.pid = time.Now(), transport.In, transport.Stderr, p.serverPID()
		}
	}
	line := func(b []byte) {
		begin()
		run.addLine(b, "", nil)
		if len(run.data) >= 256<<10 {
			flush()
		}
	}
	bulk := func(b []byte) bool {
		n, ok := scanLines(b, false)
		if !ok {
			return false
		}
		begin()
		run.addLines(b, n, "")
		if len(run.data) >= 256<<10 {
			flush()
		}
		return true
	}
	long := longLine(func() { flush(); p.errMu.Lock() }, func(b []byte) { p.c.Err.Write(b) }, func(head []byte, total int) {
		p.errMu.Unlock()
		p.recordLong(transport.In, transport.Stderr, head, total, "")
	})
	lr := newLineReader(r, p.maxLine)
	lr.bulk = bulk
	lr.run(line, long, flush)
}

// --- viewers' commands ---

func (p *stdioProxy) inject(v *viewer, m *Message) {
	fail := func(format string, a ...any) {
		v.send(Message{Type: "error", Ref: m.Ref, Error: "inject: " + fmt.Sprintf(format, a...)})
	}
	msg := bytes.TrimSpace(m.Message)
	env, ok := scanEnvelope(msg)
	if !ok || !json.Valid(msg) || !env.isRequest() {
		fail("message must be a JSON-RPC request: an object with an id and a method")
		return
	}
	n := p.nextID.Add(1)
	wireID := strconv.Quote(p.prefix + strconv.FormatUint(n, 10))
	type edit struct {
		start, end int
		with       []byte
	}
	s, e := spanOf(msg, env.id)
	edits := []edit{{s, e, []byte(wireID)}}
	var tokenKey string
	if meta, ok := member(env.params, `"_meta"`); ok {
		if tok, ok := member(meta, `"progressToken"`); ok {
			wireTok := strconv.Quote(p.prefix + "p" + strconv.FormatUint(n, 10))
			tokenKey, _ = idKey([]byte(wireTok))
			s, e := spanOf(msg, tok)
			edits = append(edits, edit{s, e, []byte(wireTok)})
		}
	}
	if len(edits) == 2 && edits[1].start > edits[0].start {
		edits[0], edits[1] = edits[1], edits[0]
	}
	out := msg
	for _, ed := range edits { // from the end, so earlier offsets hold
		out = replaceSpan(out, ed.start, ed.end, ed.with)
	}
	if bytes.ContainsAny(out, "\r\n") {
		var b bytes.Buffer
		json.Compact(&b, out)
		out = b.Bytes()
	}
	key, _ := idKey([]byte(wireID))
	ic := &injectCall{v: v, ref: m.Ref, wireID: wireID, key: key, token: tokenKey}

	p.mu.Lock()
	if len(p.injected) >= maxInjected {
		p.mu.Unlock()
		fail("%d requests from viewers await their answers already", maxInjected)
		return
	}
	p.injected[key] = ic
	if tokenKey != "" {
		p.tokens[tokenKey] = ic
	}
	p.rewatch()
	p.mu.Unlock()
	unregister := func() {
		p.mu.Lock()
		delete(p.injected, key)
		if tokenKey != "" {
			delete(p.tokens, tokenKey)
		}
		p.rewatch()
		p.mu.Unlock()
	}

	if !p.toServer.lockWithin(lockWait) {
		unregister()
		fail("the server's stdin is busy (the host is writing a long line, or the server does not read); try again")
		return
	}
	meta := p.meta(transport.ViaViewer)
	meta.Detail = "injected by viewer " + strconv.Itoa(v.n)
	ic.seq = p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message, Data: out, Meta: meta}, false, nil)
	err := p.st.WriteRaw(append(bytes.Clone(out), '\n'))
	p.toServer.unlock()
	if err != nil {
		unregister()
		fail("%v", err)
		return
	}
	v.send(Message{Type: "injected", Ref: m.Ref, ID: json.RawMessage(wireID), Seq: ic.seq})
}

func (p *stdioProxy) cancel(v *viewer, m *Message) {
	fail := func(format string, a ...any) {
		v.send(Message{Type: "error", Ref: m.Ref, Error: "cancel: " + fmt.Sprintf(format, a...)})
	}
	var (
		key string
		hc  *hostCall
		ic  *injectCall
	)
	p.mu.Lock()
	switch {
	case m.Seq != 0:
		for k, c := range p.inflight {
			if c.seq == m.Seq {
				key, hc = k, c
			}
		}
		for k, c := range p.injected {
			if c.seq == m.Seq {
				key, ic = k, c
			}
		}
	case len(m.ID) > 0:
		key, _ = idKey(m.ID)
		hc, ic = p.inflight[key], p.injected[key]
	}
	p.mu.Unlock()
	what := "seq " + strconv.FormatUint(m.Seq, 10)
	if m.Seq == 0 {
		what = "id " + string(m.ID)
	}
	switch {
	case hc == nil && ic == nil:
		fail("no call in flight with %s (answered already, or never a request)", what)
		return
	case hc != nil && hc.method == "initialize":
		fail("initialize cannot be cancelled (the MCP spec forbids it)")
		return
	}
	reason := m.Reason
	if reason == "" {
		reason = "cancelled from mcpscope"
	}
	id := json.RawMessage(ic.wireIDOr(hc))
	var errSeq uint64
	if hc != nil {
		if !p.toHost.lockWithin(lockWait) {
			fail("the host is not reading its stdout; nothing was sent")
			return
		}
		p.mu.Lock()
		still := p.inflight[key] == hc
		if still {
			delete(p.inflight, key)
			p.addCancelled(key)
			p.rewatch()
		}
		p.mu.Unlock()
		if !still {
			p.toHost.unlock()
			fail("the server answered it meanwhile")
			return
		}
		errLine, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
			"error": map[string]any{"code": cancelCode, "message": cancelMessage}})
		meta := p.meta(transport.ViaMcpscope)
		meta.Detail = "the host's call ended: cancelled from viewer " + strconv.Itoa(v.n)
		errSeq = p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: errLine, Meta: meta}, false, nil)
		if !p.hostGone.Load() {
			if _, err := p.c.Out.Write(append(errLine, '\n')); err != nil {
				p.hostGone.Store(true)
			}
		}
		p.toHost.unlock()
	}
	note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": id, "reason": reason}})
	if !p.toServer.lockWithin(lockWait) {
		fail("the server's stdin is busy; the host got its error, but the server was not told")
		return
	}
	meta := p.meta(transport.ViaMcpscope)
	meta.Detail = "cancel from viewer " + strconv.Itoa(v.n)
	seq := p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message, Data: note, Meta: meta}, false, nil)
	err := p.st.WriteRaw(append(note, '\n'))
	p.toServer.unlock()
	if err != nil {
		fail("telling the server: %v", err)
		return
	}
	if errSeq != 0 {
		seq = errSeq
	}
	v.send(Message{Type: "cancelled", Ref: m.Ref, ID: id, Seq: seq})
}

func (ic *injectCall) wireIDOr(hc *hostCall) []byte {
	if hc != nil {
		return hc.id
	}
	return []byte(ic.wireID)
}

func (p *stdioProxy) addCancelled(key string) {
	p.cancelled[key] = true
	p.cancOrder = append(p.cancOrder, key)
	for len(p.cancOrder) > maxCancelled {
		delete(p.cancelled, p.cancOrder[0])
		p.cancOrder = p.cancOrder[1:]
	}
}

func unquote(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}

// signalNumber maps a signal's description (as os/exec reports it) back to
// its number.
func signalNumber(desc string) int {
	for i := 1; i < 65; i++ {
		if syscall.Signal(i).String() == desc {
			return i
		}
	}
	return 0
}
