package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/loopback"
)

func httpIsEvent(name, stream string) func(Frame) bool {
	return func(f Frame) bool { return f.Kind == Event && f.Meta.Event == name && f.Meta.Stream == stream }
}

// httpIsMsg matches an In message on stream whose bytes contain sub.
func httpIsMsg(stream, sub string) func(Frame) bool {
	return func(f Frame) bool {
		return f.Dir == In && f.Kind == Message && f.Meta.Stream == stream && strings.Contains(string(f.Data), sub)
	}
}

// ---- real server: the Go SDK ------------------------------------------------

// httpSDKServer is a go-sdk server with three tools: progress (3 progress
// notifications then a result), slow (progress, wait for gate, progress,
// result) and big (a 20 MB text result).
type httpSDKServer struct {
	URL  string
	gate chan struct{}

	mu    sync.Mutex
	ended map[string]chan struct{} // by request id: closed when its POST's handler has returned
}

// postEnded is closed once the server is done with the POST that carried
// request id (its handler returned: a cut stream is free to resume).
func (s *httpSDKServer) postEnded(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ended[id]
	if c == nil {
		c = make(chan struct{})
		s.ended[id] = c
	}
	return c
}

func httpStartSDK(t *testing.T, opts *mcp.StreamableHTTPOptions) *httpSDKServer {
	t.Helper()
	s := &httpSDKServer{gate: make(chan struct{}), ended: map[string]chan struct{}{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdk-peer", Version: "1.0.0"}, nil)
	schema := json.RawMessage(`{"type":"object"}`)
	progress := func(ctx context.Context, req *mcp.CallToolRequest, n float64) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: n, Total: 3})
		}
	}
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			progress(ctx, req, float64(i))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "slow", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		progress(ctx, req, 1)
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		progress(ctx, req, 2)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", 20<<20)}}}, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, opts)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			json.Unmarshal(body, &m)
		}
		sdk.ServeHTTP(w, r)
		if len(m.ID) > 0 {
			c := s.postEnded(string(m.ID))
			select {
			case <-c: // an id used again (another session)
			default:
				close(c)
			}
		}
	}))
	// Cut what is still open first: the SDK keeps a session's streams (the
	// listen GET) alive, and a plain Close would wait for them forever.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	s.URL = ts.URL + "/mcp"
	return s
}

// ---- client-side wire log -----------------------------------------------------

type httpWireEntry struct {
	Method string
	Header http.Header
	Status int
}

// httpWireLog wraps a RoundTripper to see exactly what went out and what status
// came back, without touching the server.
type httpWireLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	log  []httpWireEntry
}

func (w *httpWireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	e := httpWireEntry{Method: req.Method, Header: req.Header.Clone()}
	if err == nil {
		e.Status = resp.StatusCode
	}
	w.mu.Lock()
	w.log = append(w.log, e)
	w.mu.Unlock()
	return resp, err
}

func (w *httpWireLog) entries() []httpWireEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]httpWireEntry(nil), w.log...)
}

// ---- raw JSON-RPC helpers -----------------------------------------------------

const httpInitParams = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpscope-test","version":"0"}}`

func httpRequest(id int, method, params string) Outgoing {
	return Outgoing{Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params),
		Key: fmt.Sprint(id), Method: method}
}

func httpNotification(method string) Outgoing {
	return Outgoing{Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":%q}`, method), Method: method}
}

// httpSend sends m and waits for done; the error is returned.
func httpSend(t *testing.T, h *HTTP, m Outgoing) error {
	t.Helper()
	ch := make(chan error, 1)
	h.Send(m, func(err error) { ch <- err })
	select {
	case err := <-ch:
		return err
	case <-sseDeadline(t):
		t.Fatalf("no answer to %s", m.Data)
	}
	return nil
}

func httpMustSend(t *testing.T, h *HTTP, m Outgoing) {
	t.Helper()
	if err := httpSend(t, h, m); err != nil {
		t.Fatalf("send %s: %v", m.Method, err)
	}
}

// httpInitialize runs the legacy handshake and returns after initialized is in.
func httpInitialize(t *testing.T, h *HTTP, rec *frameRec) {
	t.Helper()
	httpMustSend(t, h, httpRequest(1, "initialize", httpInitParams))
	rec.wait(t, "initialize result", func(f Frame) bool {
		return f.Dir == In && f.Kind == Message && strings.Contains(string(f.Data), `"protocolVersion"`)
	})
	h.SetProtocolVersion("2025-11-25")
	httpMustSend(t, h, httpNotification("notifications/initialized"))
}

func httpClose(t *testing.T, h *HTTP) {
	t.Helper()
	h.Close()
	select {
	case <-h.Done():
	case <-sseDeadline(t):
		t.Fatal("Done not closed after Close")
	}
}

// ---- tests against the Go SDK -------------------------------------------------

func TestHTTPGoSDKStreams(t *testing.T) {
	srv := httpStartSDK(t, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	wire := &httpWireLog{base: http.DefaultTransport.(*http.Transport).Clone()}
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: srv.URL, Client: &http.Client{Transport: wire},
		Headers: map[string]string{"X-Trace": "t1"}, Bearer: "s3cret-token"})
	if err := h.Start(rec.sink); err != nil {
		t.Fatal(err)
	}

	// initialize: SSE answer with a priming event, session id issued.
	httpMustSend(t, h, httpRequest(1, "initialize", httpInitParams))
	iRes, res := rec.wait(t, "initialize result", httpIsMsg("post:1", `"protocolVersion"`))
	iSID, sidF := rec.wait(t, "session id", func(f Frame) bool { return f.Meta.Event == EvSessionID })
	sid := h.SessionID()
	if sid == "" || sidF.Meta.Detail != sid || iSID > iRes {
		t.Fatalf("session id %q, event %+v at %d (result at %d)", sid, sidF.Meta, iSID, iRes)
	}
	iOpen, _ := rec.wait(t, "post:1 opened", httpIsEvent(EvStreamOpened, "post:1"))
	iPrime, prime := rec.wait(t, "priming event", httpIsEvent(EvPrime, "post:1"))
	if !(iOpen < iPrime && iPrime < iRes) || prime.Meta.EventType != "prime" || prime.Meta.EventID == "" {
		t.Fatalf("priming: %+v (open %d prime %d result %d)", prime.Meta, iOpen, iPrime, iRes)
	}
	if res.Meta.EventID == "" || res.Meta.EventType != "message" {
		t.Fatalf("result meta %+v", res.Meta)
	}
	iEnd, _ := rec.wait(t, "post:1 closed", httpIsEvent(EvStreamClosed, "post:1"))
	if iEnd < iRes || h.LastEventID("post:1") != res.Meta.EventID {
		t.Fatalf("stream end %d / result %d; last id %q vs %q", iEnd, iRes, h.LastEventID("post:1"), res.Meta.EventID)
	}

	// notifications/initialized: Send waits for the 202.
	h.SetProtocolVersion("2025-11-25")
	var doneBeforeReturn bool
	var got error = errors.New("not called")
	h.Send(httpNotification("notifications/initialized"), func(err error) { got, doneBeforeReturn = err, true })
	if !doneBeforeReturn || got != nil {
		t.Fatalf("notification: done before return %v, err %v", doneBeforeReturn, got)
	}
	if w := wire.entries(); w[len(w)-1].Status != http.StatusAccepted {
		t.Fatalf("notification status %d", w[len(w)-1].Status)
	}

	// tools/list, then the headers every later request carried.
	httpMustSend(t, h, httpRequest(2, "tools/list", `{}`))
	rec.wait(t, "tools/list result", httpIsMsg("post:2", `"progress"`))
	for i, e := range wire.entries() {
		if e.Method != http.MethodPost {
			continue
		}
		if e.Header.Get("Authorization") != "Bearer s3cret-token" || e.Header.Get("X-Trace") != "t1" ||
			e.Header.Get("Accept") != "application/json, text/event-stream" || e.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("request %d headers %v", i, e.Header)
		}
		if wantSID := i > 0; (e.Header.Get("Mcp-Session-Id") == sid) != wantSID {
			t.Fatalf("request %d session header %q", i, e.Header.Get("Mcp-Session-Id"))
		}
		if i > 0 && e.Header.Get("MCP-Protocol-Version") != "2025-11-25" {
			t.Fatalf("request %d version header %q", i, e.Header.Get("MCP-Protocol-Version"))
		}
	}

	// Progress arrives on the call's own stream before its result, each with an id.
	httpMustSend(t, h, httpRequest(3, "tools/call", `{"name":"progress","arguments":{},"_meta":{"progressToken":"p3"}}`))
	iRes3, res3 := rec.wait(t, "progress result", httpIsMsg("post:3", `"done"`))
	var prog []int
	for i, f := range rec.all() {
		if httpIsMsg("post:3", "notifications/progress")(f) {
			if f.Meta.EventID == "" {
				t.Fatalf("progress without id: %+v", f.Meta)
			}
			prog = append(prog, i)
		}
	}
	if len(prog) != 3 || prog[2] > iRes3 {
		t.Fatalf("progress frames at %v, result at %d", prog, iRes3)
	}
	if h.LastEventID("post:3") != res3.Meta.EventID {
		t.Fatalf("last id %q, result id %q", h.LastEventID("post:3"), res3.Meta.EventID)
	}

	// Standalone GET stream opens.
	h.OpenListen(nil)
	_, listen := rec.wait(t, "listen opened", func(f Frame) bool {
		return f.Meta.Event == EvStreamOpened && strings.HasPrefix(f.Meta.Stream, "get:")
	})
	if listen.Meta.Status != 200 || listen.Meta.HTTPMethod != http.MethodGet {
		t.Fatalf("listen %+v", listen.Meta)
	}

	// Cut a slow call's stream, then resume it with the last event id: the
	// server replays what was missed, then the result, then ends the stream.
	httpMustSend(t, h, httpRequest(4, "tools/call", `{"name":"slow","arguments":{},"_meta":{"progressToken":"p4"}}`))
	_, p1 := rec.wait(t, "slow progress 1", httpIsMsg("post:4", `"progress":1`))
	h.CloseStream("4")
	_, closed := rec.wait(t, "post:4 closed", httpIsEvent(EvStreamClosed, "post:4"))
	if closed.Meta.Detail != "closed by client" {
		t.Fatalf("close detail %q", closed.Meta.Detail)
	}
	last := h.LastEventID("post:4")
	if last != p1.Meta.EventID {
		t.Fatalf("last id %q, progress id %q", last, p1.Meta.EventID)
	}
	if rec.find(httpIsEvent(EvStreamClosed, listen.Meta.Stream)) >= 0 {
		t.Fatal("CloseStream closed the listen stream too")
	}
	close(srv.gate)
	// Until the server notices the cut, it answers a resume with 409 (the
	// stream is still someone's): wait until the cut POST's handler returned.
	select {
	case <-srv.postEnded("4"):
	case <-time.After(testWait):
		t.Fatal("the server did not notice the cut stream")
	}
	resumed := make(chan error, 1)
	h.Resume("post:4", last, func(err error) { resumed <- err })
	if err := recvWithin(t, resumed, "resumed"); err != nil {
		t.Fatalf("resume: %v", err)
	}
	isResumed := func(sub string) func(Frame) bool {
		return func(f Frame) bool {
			return f.Dir == In && f.Meta.Resumes == "post:4" && strings.Contains(string(f.Data), sub)
		}
	}
	iR, rs := rec.wait(t, "resumed event", func(f Frame) bool { return f.Meta.Event == EvStreamResumed && f.Meta.Resumes == "post:4" })
	iP2, _ := rec.wait(t, "replayed progress 2", isResumed(`"progress":2`))
	iRes4, res4 := rec.wait(t, "resumed result", isResumed(`"slow done"`))
	rec.wait(t, "resume stream closed", httpIsEvent(EvStreamClosed, rs.Meta.Stream))
	if !(iR < iP2 && iP2 < iRes4) || !strings.HasPrefix(rs.Meta.Stream, "get:") {
		t.Fatalf("resume order %d %d %d, stream %q", iR, iP2, iRes4, rs.Meta.Stream)
	}
	if rec.find(func(f Frame) bool {
		return f.Meta.Resumes == "post:4" && strings.Contains(string(f.Data), `"progress":1`)
	}) >= 0 {
		t.Fatal("resume replayed an event before Last-Event-ID")
	}
	if h.LastEventID("post:4") != res4.Meta.EventID || h.LastEventID(rs.Meta.Stream) != res4.Meta.EventID {
		t.Fatalf("cursor after resume %q / %q, want %q", h.LastEventID("post:4"), h.LastEventID(rs.Meta.Stream), res4.Meta.EventID)
	}
	var sawResumeHeader bool
	for _, e := range wire.entries() {
		if e.Method == http.MethodGet && e.Header.Get("Last-Event-ID") == last && e.Header.Get("Mcp-Session-Id") == sid {
			sawResumeHeader = true
		}
	}
	if !sawResumeHeader {
		t.Fatal("resume GET lacked Last-Event-ID or Mcp-Session-Id")
	}

	// A resume the server cannot serve is one typed failure, no retry.
	resumed = make(chan error, 1)
	h.Resume("post:9", "bogus", func(err error) { resumed <- err })
	var bad *HTTPError
	if err := recvWithin(t, resumed, "resumed"); !errors.As(err, &bad) || bad.Status != 400 || bad.Method != http.MethodGet {
		t.Fatalf("bad resume: %v", err)
	}
	rec.wait(t, "bad resume frame", func(f Frame) bool { return f.Meta.Event == EvHTTPError && f.Meta.Resumes == "post:9" })

	// A 20 MB result on an SSE stream comes through whole.
	httpMustSend(t, h, httpRequest(5, "tools/call", `{"name":"big","arguments":{}}`))
	_, big := rec.wait(t, "big result", func(f Frame) bool { return f.Dir == In && f.Meta.Stream == "post:5" && len(f.Data) > 20<<20 })
	if !json.Valid(big.Data) {
		t.Fatal("big result is not valid JSON")
	}

	// Close: streams end as closed by client, DELETE answered 204.
	httpClose(t, h)
	if _, f := rec.wait(t, "listen closed", httpIsEvent(EvStreamClosed, listen.Meta.Stream)); f.Meta.Detail != "closed by client" {
		t.Fatalf("listen end %+v", f.Meta)
	}
	_, del := rec.wait(t, "DELETE note", func(f Frame) bool { return f.Meta.HTTPMethod == http.MethodDelete })
	if del.Meta.Status != http.StatusNoContent {
		t.Fatalf("DELETE %+v", del.Meta)
	}
	rec.wait(t, "closed event", func(f Frame) bool { return f.Meta.Event == EvClosed })
	if err := httpSend(t, h, httpRequest(6, "ping", `{}`)); !errors.Is(err, errHTTPClosed) {
		t.Fatalf("send after close: %v", err)
	}

	// The secret never reached any record.
	for _, f := range rec.all() {
		m, _ := json.Marshal(f.Meta)
		if strings.Contains(string(m), "s3cret") {
			t.Fatalf("token leaked into meta: %s", m)
		}
	}
	if out := rec.all()[rec.find(func(f Frame) bool { return f.Dir == Out })]; out.Meta.Headers["Authorization"] != "Bearer [redacted]" || out.Meta.Stream != "post:1" {
		t.Fatalf("out frame meta %+v", out.Meta)
	}

	// Rejoin the deleted session: 404, typed error naming the session.
	rec2 := newFrameRec()
	h2 := NewHTTP(HTTPOptions{URL: srv.URL})
	h2.Start(rec2.sink)
	h2.SetSessionID(sid)
	err := httpSend(t, h2, httpRequest(7, "tools/list", `{}`))
	var herr *HTTPError
	if !errors.As(err, &herr) || herr.Status != 404 || herr.SessionID != sid || herr.Method != http.MethodPost {
		t.Fatalf("reuse after DELETE: %v", err)
	}
	if !strings.Contains(err.Error(), "no longer knows session "+sid+"; re-initialize") || !strings.Contains(err.Error(), "404 Not Found") {
		t.Fatalf("message: %v", err)
	}
	_, he := rec2.wait(t, "http error frame", func(f Frame) bool { return f.Meta.Event == EvHTTPError })
	if he.Meta.Status != 404 || !strings.Contains(he.Meta.Detail, "session not found") {
		t.Fatalf("http error frame %+v", he.Meta)
	}
	httpClose(t, h2)
}

// With JSONResponse the answer is one application/json body, and the server
// routes the call's progress to the standalone GET stream.
func TestHTTPGoSDKJSONResponse(t *testing.T) {
	srv := httpStartSDK(t, &mcp.StreamableHTTPOptions{JSONResponse: true})
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: srv.URL})
	h.Start(rec.sink)
	defer httpClose(t, h)
	httpInitialize(t, h, rec)
	_, res := rec.wait(t, "init result", httpIsMsg("post:1", `"protocolVersion"`))
	if res.Meta.Status != 200 || res.Meta.Headers["Content-Type"] != "application/json" || res.Meta.Headers["Mcp-Session-Id"] != h.SessionID() {
		t.Fatalf("json result meta %+v", res.Meta)
	}
	if rec.find(func(f Frame) bool { return f.Meta.Event == EvStreamOpened }) >= 0 {
		t.Fatal("a JSON answer was reported as a stream")
	}

	h.OpenListen(nil)
	_, listen := rec.wait(t, "listen", func(f Frame) bool { return f.Meta.Event == EvStreamOpened })
	h.OpenListen(nil) // a second one is refused locally, not sent
	rec.wait(t, "second listen note", func(f Frame) bool { return f.Meta.Event == EvNote && f.Meta.Stream == listen.Meta.Stream })

	httpMustSend(t, h, httpRequest(2, "tools/call", `{"name":"progress","arguments":{},"_meta":{"progressToken":7}}`))
	iRes, _ := rec.wait(t, "result", httpIsMsg("post:2", `"done"`))
	iProg, _ := rec.wait(t, "progress on listen", httpIsMsg(listen.Meta.Stream, "notifications/progress"))
	_ = iRes
	_ = iProg // order across two connections is the server's business

	httpMustSend(t, h, httpRequest(3, "tools/call", `{"name":"big","arguments":{}}`))
	_, big := rec.wait(t, "big json", func(f Frame) bool { return f.Dir == In && f.Meta.Stream == "post:3" })
	if len(big.Data) < 20<<20 || !json.Valid(big.Data) || big.Kind != Message {
		t.Fatalf("big json: %d bytes, kind %v", len(big.Data), big.Kind)
	}
}

// A stateless Go SDK server answers the standalone GET with 405: a quiet note.
func TestHTTPGoSDKStatelessListen405(t *testing.T) {
	srv := httpStartSDK(t, &mcp.StreamableHTTPOptions{Stateless: true})
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: srv.URL})
	h.Start(rec.sink)
	defer httpClose(t, h)
	httpInitialize(t, h, rec)
	if h.SessionID() != "" {
		t.Fatalf("stateless server issued session %q", h.SessionID())
	}
	h.OpenListen(nil)
	_, n := rec.wait(t, "405 note", func(f Frame) bool { return f.Meta.Event == EvNote && f.Meta.Status == 405 })
	if !strings.HasPrefix(n.Meta.Stream, "get:") || rec.find(func(f Frame) bool { return f.Meta.Event == EvHTTPError }) >= 0 {
		t.Fatalf("405 handling: %s", rec.dump())
	}
	// No session: Close sends no DELETE.
	h.Close()
	if rec.find(func(f Frame) bool { return f.Meta.HTTPMethod == http.MethodDelete }) >= 0 {
		t.Fatal("DELETE sent without a session")
	}
}

// The Go SDK's DNS-rebinding guard answers a foreign Host with 403.
func TestHTTPGoSDKForbiddenHost(t *testing.T) {
	srv := httpStartSDK(t, nil)
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: srv.URL, Headers: map[string]string{"Host": "evil.example"}})
	h.Start(rec.sink)
	defer httpClose(t, h)
	err := httpSend(t, h, httpRequest(1, "initialize", httpInitParams))
	var herr *HTTPError
	if !errors.As(err, &herr) || herr.Status != 403 || !strings.Contains(err.Error(), "refused these credentials") {
		t.Fatalf("got %v", err)
	}
}

// ---- cases no real server produces: plain handlers ------------------------------

func httpPlain(t *testing.T, fn http.HandlerFunc) string {
	t.Helper()
	ts := httptest.NewServer(fn)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestHTTPErrorsAndOddBodies(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		sid     string
		check   func(t *testing.T, err error, rec *frameRec)
	}{
		{"500 text", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "database on fire", 500)
		}, "", func(t *testing.T, err error, rec *frameRec) {
			var herr *HTTPError
			if !errors.As(err, &herr) || herr.Status != 500 || herr.Body != "database on fire" ||
				err.Error() != `POST `+herr.URL+`: 500 Internal Server Error — "database on fire" (server error; see its logs)` {
				t.Fatalf("got %v", err)
			}
			_, f := rec.wait(t, "http error", func(f Frame) bool { return f.Meta.Event == EvHTTPError })
			if f.Meta.Detail != "database on fire\n" || rec.find(func(f Frame) bool { return f.Dir == In }) >= 0 {
				t.Fatalf("frames: %s", rec.dump())
			}
		}},
		{"400 json-rpc error kept as protocol data", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`))
		}, "", func(t *testing.T, err error, rec *frameRec) {
			if err == nil || !strings.Contains(err.Error(), `400 Bad Request — "Bad Request: Server not initialized"`) {
				t.Fatalf("got %v", err)
			}
			_, f := rec.wait(t, "json error body", func(f Frame) bool { return f.Dir == In && f.Kind == Message })
			if f.Meta.Status != 400 || f.Meta.Stream != "post:1" {
				t.Fatalf("meta %+v", f.Meta)
			}
		}},
		{"404 without session", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		}, "", func(t *testing.T, err error, rec *frameRec) {
			if err == nil || !strings.Contains(err.Error(), "check the path") {
				t.Fatalf("got %v", err)
			}
		}},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
		}, "", func(t *testing.T, err error, rec *frameRec) {
			if err == nil || !strings.HasSuffix(err.Error(), "401 Unauthorized (the server wants credentials)") {
				t.Fatalf("got %v", err)
			}
		}},
		{"garbage 200", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("<html>proxy login</html>"))
		}, "", func(t *testing.T, err error, rec *frameRec) {
			if err != nil {
				t.Fatal(err)
			}
			_, f := rec.wait(t, "garbage", func(f Frame) bool { return f.Dir == In })
			if f.Kind != Garbage || string(f.Data) != "<html>proxy login</html>" {
				t.Fatalf("frame %v %q", f.Kind, f.Data)
			}
		}},
		{"batch answer is one frame", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"x"}]`))
		}, "", func(t *testing.T, err error, rec *frameRec) {
			_, f := rec.wait(t, "batch", func(f Frame) bool { return f.Dir == In })
			if f.Kind != Message || !strings.HasPrefix(string(f.Data), "[") {
				t.Fatalf("frame %v %q", f.Kind, f.Data)
			}
		}},
		{"stream cut by the server", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: a1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"half"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}, "", func(t *testing.T, err error, rec *frameRec) {
			if err != nil {
				t.Fatal(err)
			}
			_, f := rec.wait(t, "dropped", httpIsEvent(EvStreamDropped, "post:1"))
			if f.Meta.Detail == "" || rec.find(httpIsEvent(EvStreamClosed, "post:1")) >= 0 {
				t.Fatalf("drop: %s", rec.dump())
			}
		}},
		{"server-initiated close with retry (SEP-1699)", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(": hello\nid: event-1\nretry: 500\ndata: \n\n"))
		}, "", func(t *testing.T, err error, rec *frameRec) {
			_, p := rec.wait(t, "prime", httpIsEvent(EvPrime, "post:1"))
			_, c := rec.wait(t, "closed", httpIsEvent(EvStreamClosed, "post:1"))
			if p.Meta.EventID != "event-1" || p.Meta.Retry != 500 || c.Meta.Detail != "after 1 event, 1 comment" {
				t.Fatalf("prime %+v close %+v", p.Meta, c.Meta)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := newFrameRec()
			h := NewHTTP(HTTPOptions{URL: httpPlain(t, c.handler)})
			h.Start(rec.sink)
			h.SetSessionID(c.sid)
			err := httpSend(t, h, httpRequest(1, "initialize", httpInitParams))
			c.check(t, err, rec)
			h.Close()
		})
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	addr, err := loopback.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: "http://" + addr + "/mcp"})
	h.Start(rec.sink)
	defer h.Close()
	err = httpSend(t, h, httpRequest(1, "initialize", httpInitParams))
	want := "POST http://" + addr + "/mcp: connection refused — is the server running?"
	var herr *HTTPError
	if !errors.As(err, &herr) || herr.Status != 0 || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	rec.wait(t, "send failed", func(f Frame) bool { return f.Meta.Event == EvSendFailed && f.Meta.Stream == "post:1" })
}

// A request's Send returns once the body is written, long before the answer;
// a notification's Send returns only after its answer.
func TestHTTPSendReturnsAtWrite(t *testing.T) {
	gate := make(chan struct{})
	got := make(chan string, 4)
	url := httpPlain(t, func(w http.ResponseWriter, r *http.Request) {
		var m struct{ Method string }
		json.NewDecoder(r.Body).Decode(&m)
		got <- m.Method
		if m.Method == "slow" {
			<-gate
		}
		if strings.HasPrefix(m.Method, "notifications/") {
			w.WriteHeader(202)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: url})
	h.Start(rec.sink)
	defer h.Close()
	answered := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		h.Send(httpRequest(1, "slow", `{}`), func(err error) { answered <- err })
		close(returned)
	}()
	select {
	case <-returned:
	case <-sseDeadline(t):
		t.Fatal("Send of a request waited for the answer")
	}
	if <-got != "slow" {
		t.Fatal("server did not see the request")
	}
	select {
	case <-answered:
		t.Fatal("done called before the server answered")
	default:
	}
	var notified bool
	h.Send(httpNotification("notifications/initialized"), func(err error) { notified = err == nil })
	if !notified || <-got != "notifications/initialized" {
		t.Fatal("notification Send returned before its 202")
	}
	close(gate)
	if err := recvWithin(t, answered, "answered"); err != nil {
		t.Fatal(err)
	}
}

// Closing one POST stream leaves the others alone.
func TestHTTPCloseStreamOnlyOne(t *testing.T) {
	url := httpPlain(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": open\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	rec := newFrameRec()
	h := NewHTTP(HTTPOptions{URL: url})
	h.Start(rec.sink)
	httpMustSend(t, h, httpRequest(1, "a", `{}`))
	httpMustSend(t, h, httpRequest(2, "b", `{}`))
	rec.wait(t, "opened 1", httpIsEvent(EvStreamOpened, "post:1"))
	rec.wait(t, "opened 2", httpIsEvent(EvStreamOpened, "post:2"))
	resumed := make(chan error, 1)
	h.Resume("post:1", "e1", func(err error) { resumed <- err })
	if err := recvWithin(t, resumed, "resumed"); err != nil {
		t.Fatal(err)
	}
	_, rs := rec.wait(t, "resume of 1", func(f Frame) bool { return f.Meta.Event == EvStreamResumed })
	h.CloseStream("1") // the request's POST and the GET continuing it
	if _, f := rec.wait(t, "closed 1", httpIsEvent(EvStreamClosed, "post:1")); f.Meta.Detail != "closed by client" {
		t.Fatalf("detail %q", f.Meta.Detail)
	}
	rec.wait(t, "resume of 1 closed", httpIsEvent(EvStreamClosed, rs.Meta.Stream))
	if rec.find(httpIsEvent(EvStreamClosed, "post:2")) >= 0 {
		t.Fatal("stream 2 closed too")
	}
	h.Close()
	rec.wait(t, "closed 2 at Close", httpIsEvent(EvStreamClosed, "post:2"))
	if rec.find(httpIsEvent(EvStreamDropped, "post:2")) >= 0 {
		t.Fatal("our own close reported as a drop")
	}
}

func TestHTTPDescribeRedactsURL(t *testing.T) {
	h := NewHTTP(HTTPOptions{URL: "https://user:pw@example.com:8443/mcp?api_key=k&x=1"})
	if d := h.Describe(); d != "http: https://[redacted]@example.com:8443/mcp?api_key=[redacted]&x=1" {
		t.Fatalf("describe %q", d)
	}
	if d := NewHTTP(HTTPOptions{URL: "http://127.0.0.1:8080/mcp"}).Describe(); d != "http: http://127.0.0.1:8080/mcp" {
		t.Fatalf("describe %q", d)
	}
}

func TestHTTPExcerpt(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes, 2-byte runes
	ex := httpExcerpt([]byte("  " + long))
	if len(ex) > 512 || !strings.HasPrefix(long, ex) || len(ex) < 510 {
		t.Fatalf("excerpt %d bytes", len(ex))
	}
	e := &HTTPError{Method: "POST", URL: "http://x/mcp", Status: 502, Body: strings.Repeat("a", 512)}
	if msg := e.Error(); !strings.Contains(msg, "502 Bad Gateway — \"aaa") || !strings.Contains(msg, "…\" (server error") {
		t.Fatalf("message %s", msg)
	}
}

// recvWithin waits for a done callback's error, failing the test (never
// hanging it) if none comes.
func recvWithin(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(testWait):
		t.Fatalf("%s: no answer within %v", what, testWait)
		return nil
	}
}
