package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// HTTPOptions configures a Streamable HTTP transport.
type HTTPOptions struct {
	URL     string
	Headers map[string]string // custom -H "Name: value" headers, sent on every request
	Bearer  string            // Authorization: Bearer <token> (resolved by the caller)
	Client  *http.Client      // nil = a default one with no overall timeout (streams are long)
	// AllowRedirects are origins ("https://host[:port]", or "*") a redirect
	// may lead to besides URL's own; credentials never go there.
	AllowRedirects []string
}

// HTTPError is a failed HTTP exchange: a non-2xx answer (Status > 0) or no
// answer at all (Status == 0, Err says why).
type HTTPError struct {
	Method, URL string
	Status      int
	Body        string // excerpt of the answer, at most 512 bytes
	SessionID   string // the Mcp-Session-Id we sent, "" if none
	Err         error  // the network error when Status == 0
}

func (e *HTTPError) Unwrap() error { return e.Err }

func (e *HTTPError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method + " " + e.URL + ": ")
	if e.Status == 0 {
		b.WriteString(httpNetReason(e.Err))
		return b.String()
	}
	b.WriteString(strconv.Itoa(e.Status))
	if t := http.StatusText(e.Status); t != "" {
		b.WriteString(" " + t)
	}
	if msg := httpBodyMessage(e.Body); msg != "" {
		b.WriteString(" — " + strconv.Quote(msg))
	}
	if hint := e.hint(); hint != "" {
		b.WriteString(" (" + hint + ")")
	}
	return b.String()
}

func (e *HTTPError) hint() string {
	switch s := e.Status; {
	case s == 401:
		return "the server wants credentials"
	case s == 403:
		return "the server refused these credentials, this origin or this host"
	case s == 404 && e.SessionID != "":
		return "the server no longer knows session " + e.SessionID + "; re-initialize"
	case s == 404:
		return "nothing answers MCP at this URL; check the path (often /mcp)"
	case s == 405:
		return "the server does not allow " + e.Method + " here"
	case s == 406:
		return "the server did not accept our Accept header"
	case s == 409:
		return "the server allows only one such stream at a time"
	case s == 415:
		return "the server refused Content-Type application/json"
	case s >= 500:
		return "server error; see its logs"
	}
	return ""
}

// httpBodyMessage picks what to show of an error body: a JSON-RPC error's
// message when there is one, else the text itself, shortened.
func httpBodyMessage(body string) string {
	var rpc struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &rpc) == nil && rpc.Error != nil && rpc.Error.Message != "" {
		return rpc.Error.Message
	}
	body = strings.TrimSpace(body)
	if len(body) > 200 {
		body = httpCut(body, 200) + "…"
	}
	return body
}

// httpNetReason says in plain words why no answer came.
func httpNetReason(err error) string {
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var nerr net.Error
	switch {
	case err == nil:
		return "no answer"
	case errors.Is(err, context.Canceled):
		return "closed by client"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused — is the server running?"
	case errors.As(err, &dns):
		return "cannot resolve host " + strconv.Quote(dns.Name) + " — check the URL"
	case errors.As(err, &cert), errors.As(err, &unknownCA), errors.As(err, &hostname):
		return "TLS certificate not accepted — " + httpInner(err).Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "the server closed the connection without answering"
	case errors.As(err, &nerr) && nerr.Timeout():
		return "timed out — " + httpInner(err).Error()
	}
	return httpInner(err).Error()
}

// httpInner drops net/http's "Post \"url\": " prefix: we print our own.
func httpInner(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// errHTTPClosed answers sends after Close.
var errHTTPClosed = errors.New("http transport closed")

const (
	httpExcerptMax  = 512
	httpErrBodyMax  = 1 << 20                // non-2xx bodies: error pages, not payloads
	httpErrBodyWait = 500 * time.Millisecond // a non-2xx body still coming after this is cut: the status has said it
	httpBodyMax     = MaxSSEEvent            // a single JSON answer
	httpDeleteGrace = 5 * time.Second
	httpCloseWait   = 3 * time.Second
	httpOrderWait   = 10 * time.Second // longest Send blocks to keep messages in order
)

// HTTP is the Streamable HTTP transport (2025-03-26 … 2025-11-25 shape; the
// modern shape is the same POSTs without session or GET).
type HTTP struct {
	o      HTTPOptions
	client *http.Client
	ownTr  *http.Transport // ours to close, nil with a caller's client
	target string          // URL without credentials, for records
	sinkHolder
	ctx    context.Context // cancelled by Close: ends every exchange
	cancel context.CancelFunc
	done   chan struct{}
	wg     sync.WaitGroup

	mu        sync.Mutex
	sessionID string
	streamSID map[string]string // streams living in another MCP session (SetStreamSession)
	version   string
	streams   map[string]*httpStream
	lastIDs   map[string]string
	seq       int    // numbers "get:N" and keyless "post:#N"
	listen    string // key of the open standalone GET
	closed    bool
	keep      bool // Close leaves the server session alive (calls were detached)
}

// httpStream is one in-flight exchange that may be closed on purpose.
type httpStream struct {
	key, resumes string
	cancel       context.CancelFunc
	byClient     atomic.Bool
}

// NewHTTP makes a transport for o.URL. It does no I/O.
func NewHTTP(o HTTPOptions) *HTTP {
	h := &HTTP{o: o, target: RedactURL(o.URL),
		done: make(chan struct{}), streams: map[string]*httpStream{}, lastIDs: map[string]string{}}
	h.client, h.ownTr = withRedirectPolicy(o.Client, o.AllowRedirects, h.emit)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// Start records where frames go. No network I/O happens until Send.
func (h *HTTP) Start(sink Sink) error {
	if sink == nil {
		sink = func(Frame) {}
	}
	h.sink.Store(&sink)
	if _, err := url.ParseRequestURI(h.o.URL); err != nil {
		return fmt.Errorf("http: bad URL %s: %s", h.target, URLParseReason(h.o.URL, err))
	}
	h.event(EvConnected, Meta{URL: h.target, Detail: h.Describe()})
	return nil
}

// Describe names the target without credentials.
func (h *HTTP) Describe() string { return "http: " + h.target }

// Done is closed by Close only: HTTP has no process that can vanish.
func (h *HTTP) Done() <-chan struct{} { return h.done }

// SetProtocolVersion makes later requests carry MCP-Protocol-Version.
func (h *HTTP) SetProtocolVersion(v string) {
	h.mu.Lock()
	h.version = v
	h.mu.Unlock()
}

// SessionID is the Mcp-Session-Id in use ("" before one is issued).
func (h *HTTP) SessionID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessionID
}

// SetSessionID seeds the session id (rejoin after a restart) or clears it
// before a fresh initialize.
func (h *HTTP) SetSessionID(id string) {
	h.mu.Lock()
	h.sessionID = id
	h.mu.Unlock()
}

// LastEventID is the last SSE id seen on a stream; a resume GET also updates
// the stream it resumes, so this is always the cursor to resume from.
func (h *HTTP) LastEventID(stream string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastIDs[stream]
}

// httpExchange describes one HTTP request and what its frames say.
type httpExchange struct {
	method  string
	key     string // stream key, "" for a keyless POST until it turns out to stream
	resumes string
	listen  bool
	sentSID string
	foreign bool // sent in another MCP session than h's own: its answer never changes h.sessionID
	st      *httpStream
}

// Send POSTs one message. A request returns once its body is on the wire (so
// messages sent in sequence arrive in order) and the answer is read in the
// background; a notification or response waits for the answer (usually 202)
// so that, e.g., notifications/initialized is ahead of the next request.
func (h *HTTP) Send(m Outgoing, done func(error)) {
	done = callOnce(done)
	var key string
	if m.Key != "" {
		key = "post:" + m.Key
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.event(EvSendFailed, Meta{HTTPMethod: http.MethodPost, URL: h.target, Stream: key, Detail: errHTTPClosed.Error()})
		done(errHTTPClosed)
		return
	}
	sid, ver := h.sessionID, h.version
	if m.SessionID != "" {
		sid = m.SessionID
	}
	ctx, cancel := context.WithCancel(h.ctx)
	x := &httpExchange{method: http.MethodPost, key: key, sentSID: sid, foreign: m.SessionID != "", st: &httpStream{key: key, cancel: cancel}}
	if key != "" {
		h.streams[key] = x.st
	}
	h.wg.Add(1)
	h.mu.Unlock()

	wrote := make(chan struct{})
	var wroteOnce sync.Once
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wroteOnce.Do(func() { close(wrote) }) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.o.URL, bytes.NewReader(m.Data))
	if err != nil {
		h.forget(x)
		cancel()
		h.wg.Done()
		herr := &HTTPError{Method: http.MethodPost, URL: h.target, SessionID: sid, Err: err}
		h.event(EvSendFailed, Meta{HTTPMethod: http.MethodPost, URL: h.target, Stream: key, Detail: herr.Error()})
		done(herr)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	h.setHeaders(req, "application/json, text/event-stream", sid, ver, m.Headers)

	data := make([]byte, len(m.Data)) // the frame owns its bytes
	copy(data, m.Data)
	h.emit(Frame{Dir: Out, Kind: Message, Data: data, Meta: Meta{
		HTTPMethod: http.MethodPost, URL: h.target, Stream: key, Headers: RecordHeaders(req.Header)}})

	answered := make(chan struct{})
	go func() {
		defer h.wg.Done()
		defer cancel()
		defer h.forget(x)
		var once sync.Once
		h.run(req, x, func(err error) { done(err); once.Do(func() { close(answered) }) })
	}()
	// The wait is capped: a server that never reads or answers must not stall
	// the caller's send loop (done still comes, later).
	limit := time.NewTimer(httpOrderWait)
	defer limit.Stop()
	bodyOut := (<-chan struct{})(wrote)
	if m.Key == "" {
		bodyOut = nil // a notification or response waits for its answer
	}
	select {
	case <-bodyOut:
	case <-answered:
	case <-limit.C:
		h.event(EvNote, Meta{HTTPMethod: http.MethodPost, URL: h.target, Stream: key,
			Detail: "no answer after " + httpOrderWait.String() + "; later messages may overtake this one"})
	}
}

// OpenListen opens the standalone GET stream for server-initiated messages.
// A 405 (the server offers none) is a quiet note; one listen stream at a time.
func (h *HTTP) OpenListen(done func(error)) {
	done = callOnce(done)
	h.mu.Lock()
	if h.closed || h.listen != "" {
		open := h.listen
		h.mu.Unlock()
		if open != "" {
			h.event(EvNote, Meta{Stream: open, Detail: "listen stream already open"})
			done(nil)
		} else {
			done(errHTTPClosed)
		}
		return
	}
	h.seq++
	key := "get:" + strconv.Itoa(h.seq)
	h.listen = key
	h.mu.Unlock()
	h.get(key, "", "", true, done)
}

// Resume GETs the endpoint with Last-Event-ID to continue stream (a
// "post:K" or "get:N" key). One attempt: retry policy belongs to the caller.
// done gets nil once 2xx headers arrive; frames carry Meta.Resumes = stream.
func (h *HTTP) Resume(stream, lastEventID string, done func(error)) {
	done = callOnce(done)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		done(errHTTPClosed)
		return
	}
	h.seq++
	key := "get:" + strconv.Itoa(h.seq)
	h.mu.Unlock()
	h.get(key, stream, lastEventID, false, done)
}

func (h *HTTP) get(key, resumes, lastEventID string, listen bool, done func(error)) {
	if done == nil {
		done = func(error) {}
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		done(errHTTPClosed)
		return
	}
	sid, ver := h.sessionID, h.version
	foreign := h.streamSID[resumes] != ""
	if foreign {
		sid = h.streamSID[resumes]
	}
	ctx, cancel := context.WithCancel(h.ctx)
	x := &httpExchange{method: http.MethodGet, key: key, resumes: resumes, listen: listen, sentSID: sid, foreign: foreign,
		st: &httpStream{key: key, resumes: resumes, cancel: cancel}}
	h.streams[key] = x.st
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		defer cancel()
		defer h.forget(x)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.o.URL, nil)
		if err != nil {
			h.fail(x, &HTTPError{Method: x.method, URL: h.target, SessionID: sid, Err: err}, done)
			return
		}
		h.setHeaders(req, "text/event-stream", sid, ver, nil)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		h.run(req, x, done)
	}()
}

// CloseStream closes the stream of request key (its POST, and any resume GET
// continuing that POST) and nothing else. A stream key ("post:7", "get:2")
// is accepted as well; request keys are JSON text, so they never clash.
func (h *HTTP) CloseStream(key string) {
	if !strings.HasPrefix(key, "post:") && !strings.HasPrefix(key, "get:") {
		key = "post:" + key
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, st := range h.streams {
		if k == key || st.resumes == key {
			st.byClient.Store(true)
			st.cancel()
		}
	}
}

// SetStreamSession makes resumes of stream use sessionID (another MCP
// session than h's own).
func (h *HTTP) SetStreamSession(stream, sessionID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streamSID == nil {
		h.streamSID = map[string]string{}
	}
	h.streamSID[stream] = sessionID
}

// KeepSession makes Close skip the DELETE, so calls detached from this
// session can be rejoined later by another process.
func (h *HTTP) KeepSession() {
	h.mu.Lock()
	h.keep = true
	h.mu.Unlock()
}

// Close ends every stream, then DELETEs the session if there is one (any
// answer is recorded and tolerated). Bounded by a few seconds.
func (h *HTTP) Close() error { return h.CloseBy(time.Time{}) }

// CloseBy is Close that waits on the server (the DELETE, exchanges still
// ending) no later than deadline; with no time left the session is left
// to the server's own expiry, and the journal says so.
func (h *HTTP) CloseBy(deadline time.Time) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	sid, ver, keep := h.sessionID, h.version, h.keep
	for _, st := range h.streams {
		st.byClient.Store(true)
	}
	h.mu.Unlock()
	h.cancel()

	if sid != "" && !keep && closeWait(httpDeleteGrace, deadline) == 0 {
		h.event(EvNote, Meta{URL: h.target, HTTPMethod: http.MethodDelete,
			Detail: "no time left to DELETE session " + sid + ": the server ends it when it expires"})
	} else if sid != "" && !keep {
		h.deleteSession(sid, ver, closeWait(httpDeleteGrace, deadline))
	} else if sid != "" {
		h.event(EvNote, Meta{URL: h.target, Detail: "left session " + sid + " open on the server: detached calls live in it"})
	}
	waited := make(chan struct{})
	go func() { h.wg.Wait(); close(waited) }()
	wait := time.NewTimer(max(closeWait(httpCloseWait, deadline), endWait))
	defer wait.Stop()
	select {
	case <-waited:
	case <-wait.C:
		select {
		case <-waited:
		default:
			h.event(EvNote, Meta{URL: h.target, Detail: "some HTTP exchanges were still ending at close"})
		}
	}
	if h.ownTr != nil {
		h.ownTr.CloseIdleConnections()
	}
	h.event(EvClosed, Meta{URL: h.target})
	close(h.done)
	return nil
}

func (h *HTTP) deleteSession(sid, ver string, grace time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	meta := Meta{Event: EvNote, HTTPMethod: http.MethodDelete, URL: h.target}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, h.o.URL, nil)
	if err == nil {
		h.setHeaders(req, "application/json, text/event-stream", sid, ver, nil)
		var resp *http.Response
		resp, err = h.client.Do(req)
		if err == nil {
			body := readErrBody(resp.Body, cancel)
			resp.Body.Close()
			meta.Status = resp.StatusCode
			meta.Detail = "DELETE session " + sid + ": " + resp.Status
			if ex := httpExcerpt(body); ex != "" {
				meta.Detail += " — " + strconv.Quote(ex)
			}
		}
	}
	if err != nil {
		meta.Detail = (&HTTPError{Method: http.MethodDelete, URL: h.target, SessionID: sid, Err: err}).Error()
	}
	h.emit(Frame{Dir: Local, Kind: Event, Meta: meta})
}

// readErrBody reads the body of a non-2xx answer, at most httpErrBodyMax
// bytes and for at most httpErrBodyWait: the status already says the
// request failed, and a body that never ends (a 404 on a stream that stays
// open) must not hold the failure until a timeout. Past the wait, abort
// (the request's cancel) ends the read; the body keeps what came.
func readErrBody(body io.Reader, abort func()) []byte {
	var (
		mu  sync.Mutex
		got []byte
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		r := io.LimitReader(body, httpErrBodyMax)
		for {
			n, err := r.Read(buf)
			mu.Lock()
			got = append(got, buf[:n]...)
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	cut := time.NewTimer(httpErrBodyWait)
	defer cut.Stop()
	select {
	case <-done:
	case <-cut.C:
		abort()
		select { // a cancelled request's read ends at once; bounded all the same
		case <-done:
		case <-time.After(httpErrBodyWait):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]byte(nil), got...)
}

// run performs one exchange and turns its answer into frames. done is called
// once: nil at 2xx headers, else an *HTTPError.
func (h *HTTP) run(req *http.Request, x *httpExchange, done func(error)) {
	resp, err := h.client.Do(req)
	if err != nil {
		h.fail(x, &HTTPError{Method: x.method, URL: h.target, SessionID: x.sentSID, Err: err}, done)
		return
	}
	defer resp.Body.Close()
	if !x.foreign {
		h.noteSession(resp)
	}
	hdr := httpResponseHeaders(resp.Header)
	base := Meta{HTTPMethod: x.method, URL: h.target, Status: resp.StatusCode, Headers: hdr, Stream: x.key, Resumes: x.resumes}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body := readErrBody(resp.Body, x.st.cancel)
		herr := &HTTPError{Method: x.method, URL: h.target, Status: resp.StatusCode, Body: httpExcerpt(body), SessionID: x.sentSID}
		h.forget(x)
		if x.listen && resp.StatusCode == http.StatusMethodNotAllowed {
			m := base
			m.Detail = "the server offers no standalone GET stream (405)"
			h.event(EvNote, m)
			done(herr)
			return
		}
		h.reportBadStatus(base, body, herr.Body)
		done(herr)
		return
	}
	done(nil)

	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		if x.key == "" {
			// A keyless POST answered with a stream: name it so its frames group.
			h.mu.Lock()
			h.seq++
			x.key = "post:#" + strconv.Itoa(h.seq)
			h.mu.Unlock()
			base.Stream = x.key
		}
		h.readSSE(resp.Body, x, base)
		return
	}
	h.readBody(resp, x, base, ct)
}

// readBody delivers a non-stream 2xx answer as one frame, exactly as sent (a
// batch array stays one frame: the session splits it).
func (h *HTTP) readBody(resp *http.Response, x *httpExchange, base Meta, ct string) {
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= httpBodyMax {
		buf.Grow(int(n))
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, httpBodyMax+1))
	body := buf.Bytes()
	if err == nil && len(body) > httpBodyMax {
		err = fmt.Errorf("response body larger than %d MiB", httpBodyMax>>20)
		body = body[:httpBodyMax]
	}
	if err != nil {
		m := base
		if x.st.byClient.Load() || h.ctx.Err() != nil {
			m.Detail = "closed by client"
			h.event(EvStreamClosed, m)
		} else {
			m.Detail = fmt.Sprintf("response body broke after %d bytes: %v", len(body), err)
			h.event(EvStreamDropped, m)
		}
		if len(body) > 0 { // what did arrive is kept
			kind := Message
			if !json.Valid(body) {
				kind = Garbage
			}
			h.emit(Frame{Dir: In, Kind: kind, Data: body, Meta: base})
		}
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return // 202 Accepted and friends: nothing to show beyond the Out frame
	}
	kind := Message
	if !json.Valid(body) {
		kind = Garbage
		if ct != "application/json" && ct != "" {
			base.Detail = "unexpected Content-Type " + ct
		}
	}
	h.emit(Frame{Dir: In, Kind: kind, Data: body, Meta: base})
}

// readSSE delivers one frame per event until the stream ends.
func (h *HTTP) readSSE(body io.Reader, x *httpExchange, base Meta) {
	opened := base
	if x.resumes != "" {
		opened.Detail = "resumed " + x.resumes
		h.event(EvStreamResumed, opened)
	} else {
		h.event(EvStreamOpened, opened)
	}
	em := Meta{HTTPMethod: base.HTTPMethod, URL: base.URL, Stream: x.key, Resumes: x.resumes}
	sr := NewSSEReader(body)
	for {
		ev, err := sr.Next()
		if err != nil {
			end := em
			switch {
			case x.st.byClient.Load() || h.ctx.Err() != nil:
				end.Event, end.Detail = EvStreamClosed, "closed by client"
			case err == io.EOF:
				end.Event = EvStreamClosed
				end.Detail = "after " + httpCount(sr.Events(), "event") + ", " + httpCount(sr.Comments(), "comment")
			default:
				end.Event, end.Detail = EvStreamDropped, err.Error()
			}
			h.forget(x) // before the end frame: a consumer may reopen at once
			h.emit(Frame{Dir: Local, Kind: Event, Meta: end})
			return
		}
		m := em
		m.EventID, m.EventType, m.Retry = ev.ID, ev.Type, max(ev.Retry, 0)
		if ev.HasID {
			h.setLastID(x, ev.ID)
		}
		switch {
		case ev.IsMessage():
			kind := Message // by its shape; the session's one pass validates it
			if !LooksJSON(ev.Data) {
				kind = Garbage
			}
			h.emit(Frame{Dir: In, Kind: kind, Data: ev.Data, Meta: m})
		case ev.HasID || ev.Retry >= 0:
			m.Event = EvPrime
			h.emit(Frame{Dir: Local, Kind: Event, Meta: m})
		default:
			m.Event, m.Detail = EvNote, "SSE event with empty data"
			h.emit(Frame{Dir: Local, Kind: Event, Meta: m})
		}
	}
}

func (h *HTTP) setLastID(x *httpExchange, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range []string{x.key, x.resumes} {
		switch {
		case k == "":
		case id == "": // an empty id resets the cursor (WHATWG)
			delete(h.lastIDs, k)
		default:
			h.lastIDs[k] = id
		}
	}
}

// fail reports an exchange that got no answer.
func (h *HTTP) fail(x *httpExchange, herr *HTTPError, done func(error)) {
	h.forget(x)
	m := Meta{HTTPMethod: x.method, URL: h.target, Stream: x.key, Resumes: x.resumes}
	switch {
	case x.st.byClient.Load() || h.ctx.Err() != nil:
		m.Event, m.Detail = EvStreamClosed, "closed by client"
	case x.method == http.MethodPost:
		m.Event, m.Detail = EvSendFailed, herr.Error()
	default:
		m.Event, m.Detail = EvHTTPError, herr.Error()
	}
	h.emit(Frame{Dir: Local, Kind: Event, Meta: m})
	done(herr)
}

// forget drops a finished exchange from the stream table (idempotent).
func (h *HTTP) forget(x *httpExchange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if x.key != "" && h.streams[x.key] == x.st {
		delete(h.streams, x.key)
	}
	if x.listen && h.listen == x.key {
		h.listen = ""
	}
}

// noteSession captures Mcp-Session-Id from any answer that carries one.
func (h *HTTP) noteSession(resp *http.Response) {
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		return
	}
	h.mu.Lock()
	changed := id != h.sessionID
	h.sessionID = id
	h.mu.Unlock()
	if changed {
		h.event(EvSessionID, Meta{URL: h.target, Detail: id})
	}
}

// setHeaders applies protocol headers, then the bearer, then custom and
// per-message headers, so an explicit header always wins.
func (h *HTTP) setHeaders(req *http.Request, accept, sid, ver string, extra map[string]string) {
	req.Header.Set("Accept", accept)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if ver != "" {
		req.Header.Set("MCP-Protocol-Version", ver)
	}
	applyHeaders(req, h.o.Bearer, h.o.Headers, extra)
}

// RecordHeaders are headers as a journal keeps them: one value per name,
// credentials redacted (nil for none). What we send, what a proxied host
// sends and the bench's journaling relay all go through it.
func RecordHeaders(hd http.Header) map[string]string {
	if len(hd) == 0 {
		return nil
	}
	out := make(map[string]string, len(hd))
	for k, vs := range hd {
		out[k] = RedactHeader(k, strings.Join(vs, ", "))
	}
	return out
}

// httpResponseHeaders keeps the answer headers that matter to MCP.
func httpResponseHeaders(hd http.Header) map[string]string {
	out := map[string]string{}
	for _, k := range []string{"Content-Type", "Mcp-Session-Id", "MCP-Protocol-Version", "Allow"} {
		if v := hd.Get(k); v != "" {
			out[k] = RedactHeader(k, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// httpExcerpt is the head of a body: trimmed, ≤ 512 bytes, valid UTF-8 cut.
func httpExcerpt(b []byte) string {
	s := strings.TrimSpace(string(b[:min(len(b), httpExcerptMax+8)]))
	if len(s) > httpExcerptMax {
		s = httpCut(s, httpExcerptMax)
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// httpCut shortens s to at most n bytes without splitting a rune.
func httpCut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func httpCount(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// SessionGone reports whether err says the server no longer knows the session
// we sent: 404 by the spec; 400 naming the session from servers that answer
// so (server-everything does).
func SessionGone(err error) (*HTTPError, bool) {
	var he *HTTPError
	if !errors.As(err, &he) || he.SessionID == "" {
		return nil, false
	}
	if he.Status == 404 {
		return he, true
	}
	if he.Status == 400 && strings.Contains(strings.ToLower(he.Body), "session") {
		return he, true
	}
	return nil, false
}
