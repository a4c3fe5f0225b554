package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/transport"
)

// HTTPConfig describes an HTTP reverse proxy in front of one MCP server.
type HTTPConfig struct {
	Name      string
	Listen    string // host:port to serve the host on (127.0.0.1:PORT)
	Upstream  string // the server's URL
	Journal   string // "" = none
	SocketDir string // "" = SocketDir(); "-" = no socket
	Err       io.Writer
	Ready     func(Hello) // Hello.Listen is the URL a host uses
	// Records, when set, hears of each journal record as it is written
	// (the live OpenTelemetry exporter); it must return at once.
	Records func(line []byte)
}

// Events of the HTTP proxy's own (Meta.Event), beside transport's.
const (
	EvRequest  = "request"  // a host request without a body (GET, DELETE): method, URL, headers, stream
	EvResponse = "response" // an answer without a body to journal (202 and friends): status, headers
)

const (
	httpCancelWait  = 2 * time.Second // a cancel waits this long for the SSE event in flight to end
	httpNotifyWait  = 10 * time.Second
	httpShutdown    = 2 * time.Second
	httpErrBodyMax  = 1 << 20
	cancelledStream = "closed: cancelled from mcpscope"
)

type httpProxy struct {
	c        HTTPConfig
	up       *url.URL
	target   string // upstream, redacted
	loopback bool   // the upstream is on this machine: Host passes through as the host sent it
	rec      *recorder
	tr       *http.Transport
	upstream *upstream
	started  time.Time
	listen   string
	seq      atomic.Int64 // numbers streams
	mu       sync.Mutex
	inflight map[uint64]*exchange // by the seq of the request's frame
	sessions map[string]bool      // session ids seen (bounded)
}

// exchange is one host POST carrying a request, while its answer is open.
type exchange struct {
	seq    uint64
	id     json.RawMessage
	key    string // stream key
	header http.Header
	url    string
	cancel context.CancelFunc

	mu         sync.Mutex
	state      int // exWaiting, exSSE, exAnswered
	tail       []byte
	cancelReq  bool
	cancelDone chan error // the handler's verdict on a cancel
}

const (
	exWaiting = iota
	exSSE
	exAnswered
)

// RunHTTP serves the host until ctx ends.
func RunHTTP(ctx context.Context, c HTTPConfig) error {
	if c.Err == nil {
		c.Err = io.Discard
	}
	up, err := url.Parse(c.Upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return fmt.Errorf("proxy: %s is not an http(s) URL", transport.RedactURL(c.Upstream))
	}
	p := &httpProxy{c: c, up: up, target: transport.RedactURL(c.Upstream), started: time.Now(),
		inflight: map[uint64]*exchange{}, sessions: map[string]bool{}}
	p.loopback = isLoopback(up.Hostname())
	p.tr = http.DefaultTransport.(*http.Transport).Clone()
	p.tr.DisableCompression = true // Accept-Encoding and the bytes pass as they are
	p.tr.MaxIdleConnsPerHost = 64
	probe, _ := http.NewRequest(http.MethodPost, up.String(), nil)
	p.upstream = newUpstream(p.tr, probe)
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("proxy: listen on %s: %w", c.Listen, err)
	}
	path := up.EscapedPath()
	if path == "" {
		path = "/"
	}
	p.listen = "http://" + ln.Addr().String() + path
	rec, err := newRecorder(c.Journal, "http: "+p.target, p.note, c.Records)
	if err != nil {
		ln.Close()
		return err
	}
	rec.batchWakes()
	p.rec = rec
	rec.hub.ctl = p
	rec.hub.hello = p.hello
	rec.event(transport.EvConnected, transport.Meta{URL: p.target, Detail: "proxy " + p.listen + " → " + p.target})
	if c.SocketDir != "-" {
		dir := c.SocketDir
		if dir == "" {
			dir = SocketDir()
		}
		if err := rec.hub.listen(SocketPath(dir, c.Name, os.Getpid())); err != nil {
			p.note("no socket for viewers (" + err.Error() + "); forwarding and journaling go on")
		}
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if c.Ready != nil {
		c.Ready(p.hello())
	}
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	sctx, cancel := context.WithTimeout(context.Background(), httpShutdown)
	srv.Shutdown(sctx) // open SSE streams do not end by themselves:
	cancel()
	srv.Close() // cut them
	p.upstream.closeIdle()
	rec.event(transport.EvClosed, transport.Meta{URL: p.target, Detail: "the proxy stopped"})
	rec.close()
	rec.hub.close("the proxy stopped")
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (p *httpProxy) hello() Hello {
	return Hello{Name: p.c.Name, PID: os.Getpid(), Transport: "http", Target: "http: " + p.target, Listen: p.listen,
		Journal: p.rec.journalPath(), Started: p.started, Can: []string{"cancel"}}
}

func (p *httpProxy) note(s string) { fmt.Fprintf(p.c.Err, "mcpscope proxy: %s\n", s) }

// upstreamURL is where a host request goes: the upstream's origin with the
// request's own path and query (so an HTTP+SSE server's relative message
// endpoint stays behind the proxy); "/" means the upstream's path.
func (p *httpProxy) upstreamURL(r *http.Request) *url.URL {
	u := *p.up
	u.User = p.up.User
	if r.URL.Path != "/" && r.URL.Path != "" {
		u.Path, u.RawPath = r.URL.Path, r.URL.RawPath
	}
	if r.URL.RawQuery != "" || u.RawQuery == "" {
		u.RawQuery = r.URL.RawQuery
	}
	return &u
}

// readBody reads the host's request body up to journalMax+1 bytes, into
// one buffer of the size the host declared when it declared one (no
// growing and copying, as io.ReadAll does from 512 bytes).
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > journalMax {
		return io.ReadAll(io.LimitReader(r.Body, journalMax+1))
	}
	body := make([]byte, r.ContentLength, r.ContentLength+1)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return nil, err // a short body included: it broke
	}
	return body, nil
}

// hopHeaders belong to one connection, not to the message (RFC 9110 §7.6.1).
var hopHeaders = map[string]bool{"Connection": true, "Proxy-Connection": true, "Keep-Alive": true,
	"Proxy-Authenticate": true, "Proxy-Authorization": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true}

// copyHeader copies src's end-to-end headers into dst. The value slices
// are shared, capped so that an append to either copies (neither side
// changes a value in place): a request's headers are not copied twice.
func copyHeader(dst, src http.Header) {
	var skip map[string]bool
	for _, v := range src["Connection"] {
		for _, n := range strings.Split(v, ",") {
			if skip == nil {
				skip = map[string]bool{}
			}
			skip[http.CanonicalHeaderKey(strings.TrimSpace(n))] = true
		}
	}
	for k, vs := range src {
		if !hopHeaders[k] && !skip[k] {
			dst[k] = vs[:len(vs):len(vs)]
		}
	}
}

func (p *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u := p.upstreamURL(r)
	shown := transport.RedactURL(u.String())
	body, err := readBody(r)
	if err != nil {
		p.rec.event(transport.EvNote, transport.Meta{HTTPMethod: r.Method, URL: shown, Via: transport.ViaHost,
			Detail: "the host's request body broke: " + err.Error()})
		return
	}
	var rest io.Reader
	if len(body) > journalMax {
		rest = r.Body // forwarded as it comes, journaled only in part
		// The answer's headers may go out to the host before the rest has
		// been forwarded (an upstream may answer early, and the transport's
		// writer reads once more for the end). HTTP/1's server would then
		// discard what is left of the host's body, or close it: the
		// upstream would get it short, or the write fail and close the
		// connection under the answer. HTTP/2 reads and writes at once
		// anyway (ErrNotSupported).
		http.NewResponseController(w).EnableFullDuplex()
	}

	n := p.seq.Add(1)
	key := strings.ToLower(r.Method) + ":#" + strconv.FormatInt(n, 10)
	var reqID json.RawMessage
	if r.Method == http.MethodPost {
		if env, ok := scanEnvelope(body); ok && env.isRequest() {
			reqID = bytes.Clone(env.id)
			key = "post:" + string(reqID)
		}
	}
	meta := transport.Meta{HTTPMethod: r.Method, URL: shown, Headers: transport.RecordHeaders(r.Header), Stream: key, Via: transport.ViaHost}
	var seq uint64
	switch {
	case len(body) > 0 && rest == nil:
		seq = p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Out, Data: body, Meta: meta}, true, nil)
	case len(body) > 0:
		m := meta
		m.Detail = fmt.Sprintf("a request body over %d bytes: forwarded whole, journaled its first %d bytes", journalMax, journalHead)
		m.Event = transport.EvLineTooLong
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		seq = p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Garbage, Data: bytes.Clone(body[:journalHead]), Meta: meta}, false, nil)
	default:
		m := meta
		m.Event = EvRequest
		seq = p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	var reqBody io.Reader = bytes.NewReader(body)
	if rest != nil {
		reqBody = io.MultiReader(reqBody, rest)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), reqBody)
	if err != nil {
		http.Error(w, "mcpscope proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	out.ContentLength = r.ContentLength
	if len(body) == 0 && rest == nil {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	copyHeader(out.Header, r.Header)
	if p.loopback {
		// A local server's DNS-rebinding protection judges the Host header:
		// it must see the host's. A remote one needs its own name (virtual
		// hosts), which is what out has by default.
		out.Host = r.Host
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // net/http would add its own
	}

	var ex *exchange
	if reqID != nil {
		ex = &exchange{seq: seq, id: reqID, key: key, header: r.Header, url: u.String(), cancel: cancel}
		p.mu.Lock()
		p.inflight[seq] = ex
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.inflight, seq)
			p.mu.Unlock()
		}()
	}

	resp, err := p.upstream.RoundTrip(out, rest != nil)
	if err != nil {
		if ex != nil && ex.cancelled() {
			p.answerCancelled(w, ex, meta)
			return
		}
		m := transport.Meta{HTTPMethod: r.Method, URL: shown, Stream: key, Via: transport.ViaHost}
		if r.Context().Err() != nil {
			m.Event, m.Detail = transport.EvStreamClosed, "the host went away before the answer"
		} else {
			m.Event, m.Detail = transport.EvSendFailed, "upstream: "+err.Error()
			http.Error(w, "mcpscope proxy: upstream "+p.target+": "+err.Error(), http.StatusBadGateway)
		}
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		return
	}
	defer resp.Body.Close()
	p.noteSession(resp, shown)
	copyHeader(w.Header(), resp.Header)
	base := transport.Meta{HTTPMethod: r.Method, URL: shown, Status: resp.StatusCode, Headers: responseHeaders(resp.Header), Stream: key, Via: transport.ViaHost}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := ct == "text/event-stream" && resp.StatusCode/100 == 2
	if ex != nil {
		ex.mu.Lock()
		if ex.cancelReq { // the cancel came just as the answer did: answer it ourselves
			ex.mu.Unlock()
			p.answerCancelled(w, ex, meta)
			return
		}
		ex.state = exAnswered
		if sse {
			ex.state = exSSE
		}
		ex.mu.Unlock()
	}
	if sse {
		w.WriteHeader(resp.StatusCode)
		flush(w) // the host learns at once that a stream is open
		p.relaySSE(w, resp.Body, ex, base)
		return
	}
	p.relayBody(w, resp, base)
}

// relayBuffers are relayBody's read buffers, reused: a fresh 32 KiB for
// every request was most of the proxy's garbage.
var relayBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// relayBody forwards a non-stream answer chunk by chunk and journals it
// whole (its head, over journalMax).
func (p *httpProxy) relayBody(w http.ResponseWriter, resp *http.Response, base transport.Meta) {
	var acc []byte
	total := 0
	pb := relayBuffers.Get().(*[]byte)
	defer relayBuffers.Put(pb)
	buf := *pb
	var rerr error
	// The status line and headers go out with the first chunk of the body
	// (one write, one wake-up of the host, not two), or alone at its end.
	headed := false
	head := func() {
		if !headed {
			w.WriteHeader(resp.StatusCode)
			headed = true
		}
	}
	defer func() { head(); flush(w) }()
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			head()
			w.Write(buf[:n])
			flush(w)
			if len(acc) < journalMax {
				acc = append(acc, buf[:min(n, journalMax-len(acc))]...)
			}
			total += n
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		base.Detail = "Content-Encoding " + enc + ": journaled as sent"
	}
	switch {
	case resp.StatusCode/100 != 2:
		m := base
		m.Event = transport.EvHTTPError
		if m.Detail == "" {
			m.Detail = strings.ToValidUTF8(string(acc[:min(len(acc), 512)]), "\uFFFD")
		}
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		if len(bytes.TrimSpace(acc)) > 0 && json.Valid(acc) {
			p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: acc, Meta: base}, false, nil)
		}
	case len(bytes.TrimSpace(acc)) == 0:
		m := base
		m.Event = EvResponse
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
	default:
		if total > len(acc) {
			m := base
			m.Event, m.Detail = transport.EvLineTooLong, fmt.Sprintf("an answer of %d bytes: forwarded whole, journaled its first %d", total, len(acc))
			p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		}
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Data: acc, Meta: base}, true, nil)
	}
	if rerr != nil {
		m := base
		m.Event, m.Detail = transport.EvStreamDropped, fmt.Sprintf("the answer broke after %d bytes: %v", total, rerr)
		p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		panic(http.ErrAbortHandler) // so the host sees it broken too
	}
}

// sseTap forwards every byte read from upstream to the host at once (and
// flushes), before the parser sees it: the journal never holds the host up.
type sseTap struct {
	r   io.Reader
	w   http.ResponseWriter
	ex  *exchange
	err error // the host's side broke
}

var errCancelStream = errors.New("cancelled from mcpscope")

func (t *sseTap) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if n > 0 {
		chunk := b[:n]
		stop := false
		if t.ex != nil {
			t.ex.mu.Lock()
			if t.ex.cancelReq {
				// Cancelled: the host gets the rest of the event in flight
				// and nothing after it (the server may answer the cancel).
				if i, ok := boundaryIn(t.ex.tail, chunk); ok {
					chunk, stop = chunk[:i], true
				}
			}
		}
		if len(chunk) > 0 {
			if _, werr := t.w.Write(chunk); werr != nil && t.err == nil {
				t.err = werr
			}
			flush(t.w)
		}
		if t.ex != nil {
			t.ex.tail = appendTail(t.ex.tail, chunk)
			t.ex.mu.Unlock()
		}
		if stop {
			t.ex.cancel()
			return len(chunk), errCancelStream
		}
	}
	if err == nil && t.err != nil {
		err = t.err
	}
	return n, err
}

// boundaryIn is how much of b may still go to the host before the stream
// is between events (0 when it is already); ok is false when b ends inside
// the event.
func boundaryIn(tail, b []byte) (int, bool) {
	t := append([]byte(nil), tail...)
	if atBoundary(t) {
		return 0, true
	}
	for i := range b {
		t = appendTail(t, b[i:i+1])
		if atBoundary(t) {
			return i + 1, true
		}
	}
	return len(b), false
}

func appendTail(tail, b []byte) []byte {
	tail = append(tail, b[max(0, len(b)-4):]...)
	if len(tail) > 4 {
		tail = append(tail[:0], tail[len(tail)-4:]...)
	}
	return tail
}

// atBoundary reports whether the bytes forwarded so far end between two
// SSE events (after a blank line), where an event of our own can go.
func atBoundary(tail []byte) bool {
	if len(tail) == 0 {
		return true
	}
	switch {
	case bytes.HasSuffix(tail, []byte("\r\n")):
		tail = tail[:len(tail)-2]
	case tail[len(tail)-1] == '\n' || tail[len(tail)-1] == '\r':
		tail = tail[:len(tail)-1]
	default:
		return false
	}
	return len(tail) == 0 || tail[len(tail)-1] == '\n' || tail[len(tail)-1] == '\r'
}

func (p *httpProxy) relaySSE(w http.ResponseWriter, body io.Reader, ex *exchange, base transport.Meta) {
	p.rec.event(transport.EvStreamOpened, base)
	tap := &sseTap{r: body, w: w, ex: ex}
	sr := transport.NewSSEReader(tap)
	em := transport.Meta{HTTPMethod: base.HTTPMethod, URL: base.URL, Stream: base.Stream, Via: transport.ViaHost}
	for {
		ev, err := sr.Next()
		if err != nil {
			end := em
			switch {
			case ex != nil && ex.cancelled():
				end.Event, end.Detail = transport.EvStreamClosed, cancelledStream
			case err == io.EOF:
				end.Event, end.Detail = transport.EvStreamClosed, fmt.Sprintf("after %d events", sr.Events())
			case tap.err != nil:
				end.Event, end.Detail = transport.EvStreamClosed, "the host closed it"
			default:
				end.Event, end.Detail = transport.EvStreamDropped, err.Error()
			}
			p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: end}, false, nil)
			if ex != nil && ex.cancelled() {
				p.finishCancel(w, ex)
			}
			return
		}
		m := em
		m.EventID, m.EventType, m.Retry = ev.ID, ev.Type, max(ev.Retry, 0)
		switch {
		case ev.IsMessage():
			p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Data: ev.Data, Meta: m}, true, nil)
		case ev.HasID || ev.Retry >= 0:
			m.Event = transport.EvPrime
			p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
		}
	}
}

func (ex *exchange) cancelled() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.cancelReq
}

// cancelError is the JSON-RPC error the host gets for its cancelled call.
func cancelError(id json.RawMessage) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": cancelCode, "message": cancelMessage}})
	return b
}

// answerCancelled answers a cancelled request whose answer had not begun:
// 200 with the error as JSON.
func (p *httpProxy) answerCancelled(w http.ResponseWriter, ex *exchange, meta transport.Meta) {
	b := cancelError(ex.id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	m := transport.Meta{HTTPMethod: meta.HTTPMethod, URL: meta.URL, Status: http.StatusOK, Stream: ex.key, Via: transport.ViaMcpscope,
		Detail: "the host's call ended: cancelled from mcpscope", Headers: map[string]string{"Content-Type": "application/json"}}
	p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: b, Meta: m}, false, nil)
	ex.verdict(nil)
}

// finishCancel ends a cancelled SSE answer with the error as one last event,
// when the stream stopped between events.
func (p *httpProxy) finishCancel(w http.ResponseWriter, ex *exchange) {
	ex.mu.Lock()
	at := atBoundary(ex.tail)
	ex.mu.Unlock()
	if !at {
		ex.verdict(errors.New("the server was in the middle of an event that did not end within " + httpCancelWait.String() + ": the host's stream was cut without the error event"))
		return
	}
	b := cancelError(ex.id)
	w.Write([]byte("event: message\ndata: " + string(b) + "\n\n"))
	flush(w)
	m := transport.Meta{HTTPMethod: http.MethodPost, Stream: ex.key, Via: transport.ViaMcpscope, EventType: "message",
		Detail: "the host's call ended: cancelled from mcpscope"}
	p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.In, Kind: transport.Message, Data: b, Meta: m}, false, nil)
	ex.verdict(nil)
}

func (ex *exchange) verdict(err error) {
	select {
	case ex.cancelDone <- err:
	default:
	}
}

func (p *httpProxy) noteSession(resp *http.Response, shown string) {
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	p.mu.Lock()
	seen := p.sessions[id]
	if !seen {
		if len(p.sessions) > 1024 {
			clear(p.sessions)
		}
		p.sessions[id] = true
	}
	p.mu.Unlock()
	if !seen {
		p.rec.event(transport.EvSessionID, transport.Meta{URL: shown, Detail: id, Via: transport.ViaHost})
	}
}

// responseHeaders keeps the answer headers that matter to MCP, redacted.
func responseHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, k := range answerHeaders {
		if vs := h[k.canonical]; len(vs) > 0 && vs[0] != "" {
			if out == nil {
				out = make(map[string]string, 4)
			}
			out[k.name] = transport.RedactHeader(k.name, vs[0])
		}
	}
	return out
}

// answerHeaders are the names responseHeaders keeps, as the journal
// spells them, and as http.Header keys them (no canonicalising per answer).
var answerHeaders = func() []struct{ name, canonical string } {
	var out []struct{ name, canonical string }
	for _, k := range []string{"Content-Type", "Content-Encoding", "Mcp-Session-Id", "MCP-Protocol-Version", "Allow", "Www-Authenticate", "Location", "Set-Cookie"} {
		out = append(out, struct{ name, canonical string }{k, http.CanonicalHeaderKey(k)})
	}
	return out
}()

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// --- viewers' commands ---

func (p *httpProxy) inject(v *viewer, m *Message) {
	v.send(Message{Type: "error", Ref: m.Ref, Error: "inject: over HTTP a viewer calls the server in a session of its own " +
		"(mcpscope's own client), not inside the host's; only a stdio proxy injects"})
}

// cancel ends a host call whose answer is still open: the server gets
// notifications/cancelled in the host's session, the request's upstream
// exchange is closed, and the host gets a JSON-RPC error as the answer (as
// JSON when the answer had not begun, as the last event of its SSE stream
// otherwise).
func (p *httpProxy) cancel(v *viewer, m *Message) {
	fail := func(format string, a ...any) {
		v.send(Message{Type: "error", Ref: m.Ref, Error: "cancel: " + fmt.Sprintf(format, a...)})
	}
	var ex *exchange
	p.mu.Lock()
	if m.Seq != 0 {
		ex = p.inflight[m.Seq]
	} else if key, ok := idKey(m.ID); ok {
		n := 0
		for _, e := range p.inflight {
			if k, _ := idKey(e.id); k == key {
				ex = e
				n++
			}
		}
		if n > 1 {
			p.mu.Unlock()
			fail("several host calls have id %s (one per session): name the request's seq", m.ID)
			return
		}
	}
	p.mu.Unlock()
	if ex == nil {
		fail("no host call with an open answer at that seq or id (answered already; over HTTP+SSE answers travel on the shared GET stream, which the proxy cannot end for one call)")
		return
	}
	ex.mu.Lock()
	switch {
	case ex.cancelReq:
		ex.mu.Unlock()
		fail("already being cancelled")
		return
	case ex.state == exAnswered:
		ex.mu.Unlock()
		fail("the server has answered it already")
		return
	}
	ex.cancelReq = true
	ex.cancelDone = make(chan error, 1)
	cut := ex.state == exWaiting || atBoundary(ex.tail)
	ex.mu.Unlock()
	if cut {
		ex.cancel()
	} else {
		// In the middle of an event: let it end (the tap stops at the next
		// boundary), but not for long.
		time.AfterFunc(httpCancelWait, ex.cancel)
	}
	reason := m.Reason
	if reason == "" {
		reason = "cancelled from mcpscope"
	}
	// The server is told once the host's answer has ended, so nothing it
	// sends about the cancel can reach the host.
	select {
	case err := <-ex.cancelDone:
		go p.notifyCancelled(ex, reason)
		if err != nil {
			fail("%v", err)
			return
		}
	case <-time.After(lockWait):
		go p.notifyCancelled(ex, reason)
		fail("the host's answer did not end within %v", lockWait)
		return
	}
	v.send(Message{Type: "cancelled", Ref: m.Ref, ID: ex.id, Seq: ex.seq})
}

// notifyCancelled tells the server, in the host's session, with the host's
// own headers (they stay in memory; the journal has them redacted).
func (p *httpProxy) notifyCancelled(ex *exchange, reason string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": ex.id, "reason": reason}})
	ctx, cancel := context.WithTimeout(context.Background(), httpNotifyWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ex.url, bytes.NewReader(body))
	if err != nil {
		return
	}
	copyHeader(req.Header, ex.header)
	req.Header.Del("Content-Length")
	req.Header.Del("Last-Event-ID")
	shown := transport.RedactURL(ex.url)
	meta := transport.Meta{HTTPMethod: http.MethodPost, URL: shown, Headers: transport.RecordHeaders(req.Header), Via: transport.ViaMcpscope,
		Detail: "cancel of " + ex.key}
	p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Out, Kind: transport.Message, Data: body, Meta: meta}, false, nil)
	resp, err := p.tr.RoundTrip(req)
	m := transport.Meta{HTTPMethod: http.MethodPost, URL: shown, Via: transport.ViaMcpscope}
	if err != nil {
		m.Event, m.Detail = transport.EvSendFailed, "notifications/cancelled: "+err.Error()
	} else {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, httpErrBodyMax))
		resp.Body.Close()
		m.Event, m.Status, m.Detail = EvResponse, resp.StatusCode, "notifications/cancelled: "+resp.Status
		if len(bytes.TrimSpace(b)) > 0 {
			m.Detail += " " + strings.ToValidUTF8(string(b[:min(len(b), 256)]), "\uFFFD")
		}
	}
	p.rec.record(transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
}
