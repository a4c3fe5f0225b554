package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LegacySSEOptions configures an HTTP+SSE (2024-11-05) transport.
type LegacySSEOptions struct {
	URL     string            // the SSE endpoint, usually …/sse
	Headers map[string]string // custom headers, sent on the GET and every POST
	Bearer  string            // Authorization: Bearer <token>
	Client  *http.Client      // nil = a default one with no overall timeout (the GET lives long)
	// AllowRedirects are origins ("https://host[:port]", or "*") a redirect
	// may lead to besides URL's own; credentials never go there.
	AllowRedirects []string
	// StartWait bounds Start: the GET answered and the endpoint event seen
	// (0 = 10s). The user's handshake limit, so --timeout holds here too.
	StartWait time.Duration
}

// LegacySSEStream names the one GET stream in frames' Meta.Stream.
const LegacySSEStream = "sse"

// lsseHint is what every Start failure that suggests the wrong transport
// adds, for a URL that ends in /sse (one that could be an HTTP+SSE
// endpoint); any other URL gets no hint about /sse.
func lsseHint(target string) string {
	u, err := url.Parse(target)
	if err != nil || !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
		return ""
	}
	return "is this really an HTTP+SSE server, of 2024-11-05? try the URL without /sse for Streamable HTTP"
}

const (
	lsseStartWait  = 10 * time.Second // GET answered and endpoint event seen
	lsseAnswerWait = 30 * time.Second // one POST answered (202 comes at once from real servers)
	lsseOrderWait  = 10 * time.Second // longest Send blocks to keep POSTs in order
	lsseCloseWait  = 3 * time.Second
)

var (
	errLSSEClosed     = errors.New("http+sse transport closed")
	errLSSENotStarted = errors.New("http+sse transport not started: no endpoint yet")
	errLSSEEnded      = errors.New("http+sse: the server's SSE stream has ended, so no answer could arrive; reconnect")
)

// LegacySSEError is a failed Start: what went wrong, and the underlying cause
// (often an *HTTPError) for errors.As.
type LegacySSEError struct {
	Msg  string
	Hint string
	Err  error
}

func (e *LegacySSEError) Error() string {
	s := "http+sse: " + e.Msg
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func (e *LegacySSEError) Unwrap() error { return e.Err }

// LegacySSE is the deprecated HTTP+SSE transport: one long GET carries every
// server→client message, and each client message is a POST to the URI the
// server names in its first ("endpoint") event.
type LegacySSE struct {
	o      LegacySSEOptions
	client *http.Client
	ownTr  *http.Transport // ours to close, nil with a caller's client
	target string          // SSE URL without credentials, for records
	sinkHolder
	ctx    context.Context // cancelled by Close: ends the GET and every POST
	cancel context.CancelFunc
	done   chan struct{}
	doneMu sync.Once
	wg     sync.WaitGroup

	// Bounds, fields so tests can shorten them.
	startWait, answerWait, orderWait time.Duration

	mu          sync.Mutex
	started     bool
	endpoint    string // POST URI as resolved, used for requests
	endpointRec string // the same, redacted, for records
	sessionID   string // the endpoint's sessionId query value, for error hints
	ended       bool   // the GET stream is over
	closed      bool
}

// NewLegacySSE makes a transport for o.URL. It does no I/O.
func NewLegacySSE(o LegacySSEOptions) *LegacySSE {
	l := &LegacySSE{o: o, target: RedactURL(o.URL), done: make(chan struct{}),
		startWait: lsseStartWait, answerWait: lsseAnswerWait, orderWait: lsseOrderWait}
	if o.StartWait > 0 {
		l.startWait = o.StartWait
	}
	l.client, l.ownTr = withRedirectPolicy(o.Client, o.AllowRedirects, l.emit)
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l
}

// Describe names the target without credentials.
func (l *LegacySSE) Describe() string { return "http+sse: " + l.target }

// Done is closed when the GET stream ends (no answer can arrive after that)
// or the transport is closed.
func (l *LegacySSE) Done() <-chan struct{} { return l.done }

// Endpoint is the POST URI the server named, redacted ("" before Start).
func (l *LegacySSE) Endpoint() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endpointRec
}

// Start opens the GET stream and waits (bounded) for the endpoint event.
// Messages then flow to sink until the stream ends.
func (l *LegacySSE) Start(sink Sink) error {
	if sink == nil {
		sink = func(Frame) {}
	}
	l.sink.Store(&sink)
	l.mu.Lock()
	switch {
	case l.closed:
		l.mu.Unlock()
		return errLSSEClosed
	case l.started:
		l.mu.Unlock()
		return errors.New("http+sse: already started")
	}
	l.started = true
	l.wg.Add(1)
	l.mu.Unlock()

	base, err := url.ParseRequestURI(l.o.URL)
	if err != nil {
		l.wg.Done()
		return &LegacySSEError{Msg: "bad URL " + l.target + ": " + URLParseReason(l.o.URL, err)}
	}
	ctx, cancel := context.WithCancel(l.ctx)
	var timedOut atomic.Bool
	timer := time.AfterFunc(l.startWait, func() { timedOut.Store(true); cancel() })
	fail := func(e *LegacySSEError) error {
		timer.Stop()
		cancel()
		if timedOut.Load() {
			// Out of time, not interrupted: the cause is the deadline (the
			// cancel that ended the GET is ours).
			e.Msg = fmt.Sprintf("GET %s: no endpoint event within %v", l.target, l.startWait)
			e.Hint, e.Err = lsseHint(l.target), context.DeadlineExceeded
		} else if l.ctx.Err() != nil {
			e.Msg, e.Hint = "GET "+l.target+": closed by client during start", ""
		}
		l.wg.Done()
		l.event(EvHTTPError, Meta{HTTPMethod: http.MethodGet, URL: l.target, Detail: e.Error()})
		return e
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.o.URL, nil)
	if err != nil {
		return fail(&LegacySSEError{Msg: "GET " + l.target + ": " + httpInner(err).Error(), Err: err})
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	l.setHeaders(req, nil)
	resp, err := l.client.Do(req)
	if err != nil {
		herr := &HTTPError{Method: http.MethodGet, URL: l.target, Err: err}
		return fail(&LegacySSEError{Msg: herr.Error(), Err: herr})
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body := readErrBody(resp.Body, cancel)
		resp.Body.Close()
		herr := &HTTPError{Method: http.MethodGet, URL: l.target, Status: resp.StatusCode, Body: httpExcerpt(body)}
		msg := "GET " + l.target + ": " + resp.Status
		if m := httpBodyMessage(herr.Body); m != "" {
			msg += " — " + strconv.Quote(m)
		}
		return fail(&LegacySSEError{Msg: msg, Hint: lsseHint(l.target), Err: herr})
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		resp.Body.Close()
		return fail(&LegacySSEError{Msg: fmt.Sprintf("GET %s: answered with Content-Type %q, not text/event-stream", l.target, ct), Hint: lsseHint(l.target)})
	}

	// The spec says the endpoint event comes first; anything before it is
	// still delivered rather than lost.
	sr := NewSSEReader(resp.Body)
	em := Meta{HTTPMethod: http.MethodGet, URL: l.target, Stream: LegacySSEStream}
	var endpoint *url.URL
	for endpoint == nil {
		ev, err := sr.Next()
		if err != nil {
			resp.Body.Close()
			msg := fmt.Sprintf("GET %s: the stream ended before an endpoint event (after %s)", l.target, httpCount(sr.Events(), "event"))
			if err != io.EOF {
				msg = fmt.Sprintf("GET %s: the stream broke before an endpoint event: %v", l.target, err)
			}
			return fail(&LegacySSEError{Msg: msg, Hint: lsseHint(l.target), Err: err})
		}
		if ev.Type != "endpoint" {
			l.deliver(ev, em)
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(string(ev.Data)))
		if err != nil || len(bytes.TrimSpace(ev.Data)) == 0 {
			resp.Body.Close()
			return fail(&LegacySSEError{Msg: fmt.Sprintf("GET %s: endpoint event data %q is not a URI", l.target, httpCut(string(ev.Data), 200)), Err: err})
		}
		endpoint = base.ResolveReference(ref)
		// Our credentials go with every POST: never to another origin.
		if origin(endpoint) != origin(base) {
			resp.Body.Close()
			return fail(&LegacySSEError{Msg: fmt.Sprintf("GET %s: endpoint %s is on another origin; refusing to send messages there", l.target, RedactURL(endpoint.String()))})
		}
	}
	if !timer.Stop() {
		resp.Body.Close()
		return fail(&LegacySSEError{})
	}

	l.mu.Lock()
	if l.closed { // Close ran meanwhile
		l.mu.Unlock()
		resp.Body.Close()
		return fail(&LegacySSEError{Msg: "GET " + l.target + ": closed by client during start"})
	}
	l.endpoint = endpoint.String()
	l.endpointRec = RedactURL(l.endpoint)
	l.sessionID = endpoint.Query().Get("sessionId")
	rec := l.endpointRec
	l.mu.Unlock()

	l.event(EvConnected, Meta{URL: l.target, Detail: rec})
	opened := em
	opened.Status, opened.Headers = resp.StatusCode, httpResponseHeaders(resp.Header)
	opened.Detail = "endpoint " + rec
	l.event(EvStreamOpened, opened)
	go func() {
		defer l.wg.Done()
		defer cancel()
		defer resp.Body.Close()
		l.read(sr, em)
	}()
	return nil
}

// read delivers events until the GET ends, then closes Done: with no stream
// left, no response can ever arrive, and the session should know at once.
func (l *LegacySSE) read(sr *SSEReader, em Meta) {
	for {
		ev, err := sr.Next()
		if err == nil {
			l.deliver(ev, em)
			continue
		}
		end := em
		switch {
		case l.ctx.Err() != nil:
			end.Event, end.Detail = EvStreamClosed, "closed by client"
		case err == io.EOF:
			end.Event = EvStreamClosed
			end.Detail = "the server ended the stream after " + httpCount(sr.Events(), "event") + ", " + httpCount(sr.Comments(), "comment")
		default:
			end.Event, end.Detail = EvStreamDropped, err.Error()
		}
		l.mu.Lock()
		l.ended = true
		l.mu.Unlock()
		l.emit(Frame{Dir: Local, Kind: Event, Meta: end})
		l.finish()
		return
	}
}

// deliver turns one SSE event into a frame.
func (l *LegacySSE) deliver(ev SSEEvent, em Meta) {
	m := em
	m.EventID, m.EventType, m.Retry = ev.ID, ev.Type, max(ev.Retry, 0)
	isJSON := json.Valid(ev.Data)
	switch {
	case ev.Type == "endpoint":
		m.Event, m.Detail = EvNote, "another endpoint event ("+RedactURL(httpCut(string(ev.Data), 200))+"); keeping the first"
		l.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	case ev.IsMessage() && (ev.Type == "" || ev.Type == "message"):
		kind := Message
		if !isJSON {
			kind = Garbage
		}
		l.emit(Frame{Dir: In, Kind: kind, Data: ev.Data, Meta: m})
	case ev.IsMessage() && isJSON:
		l.emit(Frame{Dir: In, Kind: Message, Data: ev.Data, Meta: m})
	case ev.IsMessage():
		m.Event, m.Detail = EvNote, "SSE event "+strconv.Quote(ev.Type)+": "+httpExcerpt(ev.Data)
		l.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	case ev.HasID || ev.Retry >= 0:
		m.Event = EvPrime
		l.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	default:
		m.Event, m.Detail = EvNote, "SSE event with empty data"
		l.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	}
}

// Send POSTs one message to the endpoint. It waits (bounded) for the POST's
// answer, which real servers give at once (202), so that messages reach the
// server in the order sent; the JSON-RPC response comes on the GET stream.
func (l *LegacySSE) Send(m Outgoing, done func(error)) {
	done = callOnce(done)
	l.mu.Lock()
	endpoint, rec, sid := l.endpoint, l.endpointRec, l.sessionID
	var refuse error
	switch {
	case l.closed:
		refuse = errLSSEClosed
	case l.ended:
		refuse = errLSSEEnded
	case endpoint == "":
		refuse = errLSSENotStarted
	}
	if refuse == nil {
		l.wg.Add(1)
	}
	l.mu.Unlock()
	if refuse != nil {
		l.event(EvSendFailed, Meta{HTTPMethod: http.MethodPost, URL: rec, Detail: refuse.Error()})
		done(refuse)
		return
	}

	ctx, cancel := context.WithTimeout(l.ctx, l.answerWait)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(m.Data))
	if err != nil {
		cancel()
		l.wg.Done()
		herr := &HTTPError{Method: http.MethodPost, URL: rec, SessionID: sid, Err: err}
		l.event(EvSendFailed, Meta{HTTPMethod: http.MethodPost, URL: rec, Detail: herr.Error()})
		done(herr)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	l.setHeaders(req, m.Headers)
	data := make([]byte, len(m.Data)) // the frame owns its bytes
	copy(data, m.Data)
	l.emit(Frame{Dir: Out, Kind: Message, Data: data, Meta: Meta{
		HTTPMethod: http.MethodPost, URL: rec, Headers: RecordHeaders(req.Header)}})

	answered := make(chan struct{})
	go func() {
		defer l.wg.Done()
		defer cancel()
		defer close(answered)
		l.post(ctx, cancel, req, rec, sid, done)
	}()
	limit := time.NewTimer(l.orderWait)
	defer limit.Stop()
	select {
	case <-answered:
	case <-limit.C:
		l.event(EvNote, Meta{HTTPMethod: http.MethodPost, URL: rec,
			Detail: "no answer after " + l.orderWait.String() + "; later messages may overtake this one"})
	}
}

// post performs one POST; done gets nil at 2xx, else an *HTTPError.
func (l *LegacySSE) post(ctx context.Context, abort context.CancelFunc, req *http.Request, rec, sid string, done func(error)) {
	base := Meta{HTTPMethod: http.MethodPost, URL: rec}
	resp, err := l.client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && l.ctx.Err() == nil {
			err = fmt.Errorf("no answer within %v (a server that no longer knows the session may never answer)", l.answerWait)
		}
		herr := &HTTPError{Method: http.MethodPost, URL: rec, SessionID: sid, Err: err}
		m := base
		if l.ctx.Err() != nil {
			m.Event, m.Detail = EvNote, "POST abandoned: closed by client"
		} else {
			m.Event, m.Detail = EvSendFailed, herr.Error()
		}
		l.emit(Frame{Dir: Local, Kind: Event, Meta: m})
		done(herr)
		return
	}
	defer resp.Body.Close()
	base.Status, base.Headers = resp.StatusCode, httpResponseHeaders(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body := readErrBody(resp.Body, abort)
		herr := &HTTPError{Method: http.MethodPost, URL: rec, Status: resp.StatusCode, Body: httpExcerpt(body), SessionID: sid}
		l.reportBadStatus(base, body, herr.Body)
		done(herr)
		return
	}
	done(nil)
	// The answer is normally "Accepted" or empty. A server that answers in
	// the POST body anyway is not lost: its JSON is delivered as it came.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, httpBodyMax))
	if t := bytes.TrimSpace(body); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		l.emit(Frame{Dir: In, Kind: Message, Data: body, Meta: base})
	}
}

// Close cancels the GET and any POST, then closes Done. Idempotent, bounded.
func (l *LegacySSE) Close() error { return l.CloseBy(time.Time{}) }

// CloseBy is Close that waits for exchanges to end no later than deadline.
func (l *LegacySSE) CloseBy(deadline time.Time) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	waited := make(chan struct{})
	go func() { l.wg.Wait(); close(waited) }()
	timer := time.NewTimer(max(closeWait(lsseCloseWait, deadline), endWait))
	defer timer.Stop()
	select {
	case <-waited:
	case <-timer.C:
		select {
		case <-waited:
		default:
			l.event(EvNote, Meta{URL: l.target, Detail: "some HTTP exchanges were still ending at close"})
		}
	}
	if l.ownTr != nil {
		l.ownTr.CloseIdleConnections()
	}
	l.event(EvClosed, Meta{URL: l.target})
	l.finish()
	return nil
}

func (l *LegacySSE) finish() { l.doneMu.Do(func() { close(l.done) }) }

// setHeaders applies the bearer, then custom and per-message headers, so an
// explicit header always wins.
func (l *LegacySSE) setHeaders(req *http.Request, extra map[string]string) {
	applyHeaders(req, l.o.Bearer, l.o.Headers, extra)
}
