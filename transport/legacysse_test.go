package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/loopback"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/peers"
)

// ---- helpers ----------------------------------------------------------------

func lsseIsEvent(name string) func(Frame) bool {
	return func(f Frame) bool { return f.Kind == Event && f.Meta.Event == name }
}

// lsseIsResponse matches the In message answering request id.
func lsseIsResponse(id int) func(Frame) bool {
	return func(f Frame) bool {
		if f.Dir != In || f.Kind != Message {
			return false
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		return json.Unmarshal(f.Data, &m) == nil && m.Method == "" && string(m.ID) == fmt.Sprint(id)
	}
}

func lsseSend(t *testing.T, l *LegacySSE, data string) error {
	t.Helper()
	ch := make(chan error, 1)
	l.Send(Outgoing{Data: []byte(data)}, func(err error) { ch <- err })
	select {
	case err := <-ch:
		return err
	case <-time.After(testWait):
		t.Fatalf("done not called for %s", data)
		return nil
	}
}

func lsseMustSend(t *testing.T, l *LegacySSE, data string) {
	t.Helper()
	if err := lsseSend(t, l, data); err != nil {
		t.Fatalf("send %s: %v", data, err)
	}
}

func lsseClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func lsseWaitDone(t *testing.T, l *LegacySSE) {
	t.Helper()
	select {
	case <-l.Done():
	case <-time.After(testWait):
		t.Fatal("Done not closed")
	}
}

// lsseFake is a scriptable HTTP+SSE server: whatever is pushed on events is
// written to the open GET stream; "DIE" aborts the connection mid-stream and
// "END" ends the response cleanly.
type lsseFake struct {
	endpoint   string // data of the endpoint event
	preface    string // raw SSE text written before the endpoint event
	events     chan string
	posts      chan *http.Request // with Body already read into postBody
	postBodies chan string
	postStatus int
	postBody   string
	getHeaders chan http.Header
}

func newLSSEFake(t *testing.T) (*lsseFake, *httptest.Server) {
	f := &lsseFake{endpoint: "/message?sessionId=s1", events: make(chan string, 16),
		posts: make(chan *http.Request, 16), postBodies: make(chan string, 16),
		postStatus: http.StatusAccepted, postBody: "Accepted", getHeaders: make(chan http.Header, 4)}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	return f, ts
}

func (f *lsseFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		f.getHeaders <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, f.preface+"event: endpoint\ndata: "+f.endpoint+"\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-f.events:
				switch ev {
				case "DIE":
					panic(http.ErrAbortHandler) // drop the connection, no final chunk
				case "END":
					return
				}
				io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/message":
		b, _ := io.ReadAll(r.Body)
		f.posts <- r
		f.postBodies <- string(b)
		w.WriteHeader(f.postStatus)
		io.WriteString(w, f.postBody)
	default:
		http.NotFound(w, r)
	}
}

func lsseStart(t *testing.T, o LegacySSEOptions) (*LegacySSE, *frameRec) {
	t.Helper()
	l := NewLegacySSE(o)
	rec := newFrameRec()
	if err := l.Start(rec.sink); err != nil {
		t.Fatalf("Start: %v; frames:\n%s", err, rec.dump())
	}
	t.Cleanup(func() { l.Close() })
	return l, rec
}

// ---- against the real server-everything --------------------------------------

func TestLegacySSEEverything(t *testing.T) {
	peers.Require(t)
	sseURL := peers.StartEverythingHTTP(t, "sse")
	l, rec := lsseStart(t, LegacySSEOptions{URL: sseURL, Headers: map[string]string{"X-Probe": "1"}})

	_, conn := rec.wait(t, "connected", lsseIsEvent(EvConnected))
	if !strings.Contains(conn.Meta.Detail, "/message?sessionId=") {
		t.Fatalf("connected detail = %q, want the /message?sessionId= endpoint", conn.Meta.Detail)
	}
	_, opened := rec.wait(t, "stream opened", lsseIsEvent(EvStreamOpened))
	if opened.Meta.Stream != LegacySSEStream || opened.Meta.Status != 200 {
		t.Fatalf("stream-opened meta = %+v", opened.Meta)
	}
	endpoint := l.Endpoint()
	if !strings.HasPrefix(endpoint, strings.TrimSuffix(sseURL, "/sse")+"/message?sessionId=") {
		t.Fatalf("endpoint %q not resolved against %q", endpoint, sseURL)
	}

	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"mcpscope-test","version":"0"}}}`)
	_, initRes := rec.wait(t, "initialize result", lsseIsResponse(1))
	lsseMustSend(t, l, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	_, list := rec.wait(t, "tools/list result", lsseIsResponse(2))
	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"over legacy sse"}}}`)
	_, call := rec.wait(t, "tools/call result", lsseIsResponse(3))

	for _, f := range []Frame{initRes, list, call} {
		m := f.Meta
		if m.Stream != LegacySSEStream || m.HTTPMethod != http.MethodGet || m.URL != sseURL || m.EventType != "message" {
			t.Errorf("response meta = %+v, want it on the GET stream as event: message", m)
		}
	}
	if !strings.Contains(string(initRes.Data), `"serverInfo"`) {
		t.Errorf("initialize result: %s", initRes.Data)
	}
	if !strings.Contains(string(list.Data), `"name":"echo"`) {
		t.Errorf("tools/list has no echo: %.300s", list.Data)
	}
	if !strings.Contains(string(call.Data), "over legacy sse") {
		t.Errorf("echo result: %s", call.Data)
	}

	// Every message went out as a POST to the endpoint, recorded before it left.
	outs := 0
	for _, f := range rec.all() {
		if f.Dir != Out {
			continue
		}
		outs++
		if f.Meta.HTTPMethod != http.MethodPost || f.Meta.URL != endpoint || f.Meta.Headers["Content-Type"] != "application/json" || f.Meta.Headers["X-Probe"] != "1" {
			t.Errorf("out frame meta = %+v", f.Meta)
		}
	}
	if outs != 4 {
		t.Errorf("%d out frames, want 4", outs)
	}
	// The POSTs' "Accepted" bodies are not messages: every In frame is an SSE event.
	for _, f := range rec.all() {
		if f.Dir == In && f.Meta.Stream != LegacySSEStream {
			t.Errorf("in frame off the GET stream: %+v %s", f.Meta, f.Data)
		}
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !lsseClosed(l.Done()) {
		t.Fatal("Done open after Close")
	}
	_, end := rec.wait(t, "stream end", lsseIsEvent(EvStreamClosed))
	if end.Meta.Detail != "closed by client" {
		t.Errorf("stream end detail %q", end.Meta.Detail)
	}
	rec.wait(t, "closed", lsseIsEvent(EvClosed))
	if err := lsseSend(t, l, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); !errors.Is(err, errLSSEClosed) {
		t.Errorf("send after close: %v", err)
	}
}

// A real server's stream cut mid-session (through the fault proxy): Done
// closes at once, so pending calls can fail instead of waiting forever.
func TestLegacySSEEverythingCut(t *testing.T) {
	peers.Require(t)
	proxied, p := faultproxy.Start(t, peers.StartEverythingHTTP(t, "sse"), faultproxy.Faults{})
	l, rec := lsseStart(t, LegacySSEOptions{URL: proxied})
	if !strings.HasPrefix(l.Endpoint(), strings.TrimSuffix(proxied, "/sse")+"/message?") {
		t.Fatalf("endpoint %q is not behind the proxy %q", l.Endpoint(), proxied)
	}
	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"mcpscope-test","version":"0"}}}`)
	rec.wait(t, "initialize result", lsseIsResponse(1))
	lsseMustSend(t, l, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A long call is in flight when the network drops.
	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":3}}}`)
	if n := p.Cut(func(r *http.Request) bool { return r.Method == http.MethodGet }); n != 1 {
		t.Fatalf("cut %d GET streams, want 1", n)
	}
	lsseWaitDone(t, l)
	_, end := rec.wait(t, "stream dropped", lsseIsEvent(EvStreamDropped))
	if end.Meta.Stream != LegacySSEStream {
		t.Errorf("drop meta = %+v", end.Meta)
	}
	if err := lsseSend(t, l, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); !errors.Is(err, errLSSEEnded) {
		t.Errorf("send after the drop: %v", err)
	}
	if s := p.Stats(); s.Cuts != 1 {
		t.Errorf("proxy stats %+v", s)
	}
}

// ---- a Streamable HTTP endpoint is not mistaken for HTTP+SSE -------------------

func TestLegacySSEStreamableHTTPEndpoint(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "streamable", Version: "1.0.0"}, nil)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	l := NewLegacySSE(LegacySSEOptions{URL: ts.URL + "/mcp"})
	rec := newFrameRec()
	err := l.Start(rec.sink)
	if err == nil {
		l.Close()
		t.Fatal("Start succeeded against a Streamable HTTP endpoint")
	}
	msg := err.Error()
	if strings.Contains(msg, "without /sse") {
		t.Errorf("error %q hints at /sse for a URL without it", msg)
	}
	for _, want := range []string{"GET " + ts.URL + "/mcp", "400", "Mcp-Session-Id"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	var herr *HTTPError
	if !errors.As(err, &herr) || herr.Status != 400 {
		t.Errorf("error does not unwrap to an HTTPError 400: %#v", err)
	}
	rec.wait(t, "http-error event", lsseIsEvent(EvHTTPError))
	if rec.count(lsseIsEvent(EvConnected)) != 0 {
		t.Error("connected reported for a failed start")
	}
	l.Close()
}

// ---- the server dies mid-stream ---------------------------------------------

func TestLegacySSEServerDies(t *testing.T) {
	for _, tc := range []struct {
		name, how, event string
	}{
		{"abort", "DIE", EvStreamDropped},
		{"clean end", "END", EvStreamClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ts := newLSSEFake(t)
			l, rec := lsseStart(t, LegacySSEOptions{URL: ts.URL + "/sse"})

			// A request the server accepts; its answer would come on the GET.
			lsseMustSend(t, l, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
			f.events <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
			rec.wait(t, "progress", func(fr Frame) bool { return fr.Dir == In && strings.Contains(string(fr.Data), "progress") })
			if lsseClosed(l.Done()) {
				t.Fatal("Done closed while the stream is open")
			}
			if tc.how == "DIE" {
				f.events <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res" // cut inside an event
			}
			f.events <- tc.how

			lsseWaitDone(t, l)
			_, end := rec.wait(t, "stream end", lsseIsEvent(tc.event))
			if end.Meta.Stream != LegacySSEStream || end.Meta.Detail == "" || end.Meta.Detail == "closed by client" {
				t.Errorf("stream end meta = %+v", end.Meta)
			}
			if rec.count(lsseIsResponse(1)) != 0 {
				t.Error("a half-sent response was delivered")
			}
			if err := lsseSend(t, l, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); !errors.Is(err, errLSSEEnded) {
				t.Errorf("send after the stream ended: %v", err)
			}
			rec.wait(t, "send-failed", lsseIsEvent(EvSendFailed))
			if rec.count(lsseIsEvent(EvClosed)) != 0 {
				t.Error("closed reported before Close")
			}
			l.Close()
			l.Close() // idempotent
			if n := rec.count(lsseIsEvent(EvClosed)); n != 1 {
				t.Errorf("%d closed events", n)
			}
		})
	}
}

// ---- Start failures say what failed -------------------------------------------

func TestLegacySSEStartFailures(t *testing.T) {
	refused := func() string {
		addr, err := loopback.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		return "http://" + addr + "/sse"
	}()
	block := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n")
	})
	mux.HandleFunc("/silent", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-block:
		}
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: http://evil.example/message?sessionId=1\n\n")
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(block) })

	for _, tc := range []struct {
		name, url string
		want      []string
		delivered int // In frames seen before the failure
	}{
		{"refused", refused, []string{"GET " + refused, "connection refused"}, 0},
		{"404", ts.URL + "/nope", []string{"404 Not Found"}, 0},
		{"not sse", ts.URL + "/json", []string{`"application/json", not text/event-stream`}, 0},
		{"no endpoint", ts.URL + "/empty", []string{"ended before an endpoint event (after 1 event)"}, 1},
		{"silent", ts.URL + "/silent", []string{"no endpoint event within 300ms"}, 0},
		{"other origin", ts.URL + "/elsewhere", []string{"http://evil.example/message", "another origin"}, 0},
		{"bad url", "not a url", []string{"bad URL"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLegacySSE(LegacySSEOptions{URL: tc.url})
			if tc.name == "silent" {
				// Only the silent server waits out the limit; the others answer
				// (or fail) at once and keep the default, so a loaded machine
				// cannot make them look silent.
				l.startWait = 300 * time.Millisecond
			}
			rec := newFrameRec()
			err := l.Start(rec.sink)
			defer l.Close()
			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			// Out of time is a timeout, not an interruption (it exited 130).
			if tc.name == "silent" && (!errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
				t.Errorf("a start that ran out of time: %v is not context.DeadlineExceeded alone", err)
			}
			if n := rec.count(func(f Frame) bool { return f.Dir == In }); n != tc.delivered {
				t.Errorf("%d in frames, want %d", n, tc.delivered)
			}
			if err := lsseSend(t, l, `{"jsonrpc":"2.0","method":"x"}`); !errors.Is(err, errLSSENotStarted) {
				t.Errorf("send after failed start: %v", err)
			}
		})
	}
}

// ---- POSTs, headers, event kinds, redaction ------------------------------------

func TestLegacySSEPostsAndEvents(t *testing.T) {
	f, ts := newLSSEFake(t)
	f.preface = ": hello\n\n"
	f.endpoint = "message?sessionId=s1&access_token=s3cret" // relative to /sse
	l, rec := lsseStart(t, LegacySSEOptions{URL: ts.URL + "/sse", Bearer: "tok123", Headers: map[string]string{"X-Custom": "v"}})

	if d := l.Describe(); d != "http+sse: "+ts.URL+"/sse" {
		t.Errorf("Describe = %q", d)
	}
	gh := <-f.getHeaders
	if gh.Get("Accept") != "text/event-stream" || gh.Get("Authorization") != "Bearer tok123" || gh.Get("X-Custom") != "v" {
		t.Errorf("GET headers = %v", gh)
	}
	_, conn := rec.wait(t, "connected", lsseIsEvent(EvConnected))
	if strings.Contains(conn.Meta.Detail, "s3cret") || !strings.Contains(conn.Meta.Detail, "sessionId=s1") ||
		!strings.HasPrefix(conn.Meta.Detail, ts.URL+"/message?") {
		t.Errorf("connected detail %q: want the resolved endpoint, secret redacted", conn.Meta.Detail)
	}

	// 202: accepted, no frame beyond the Out one; the real URL is used.
	lsseMustSend(t, l, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r := <-f.posts
	if body := <-f.postBodies; body != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("POST body %q", body)
	}
	if r.URL.Query().Get("access_token") != "s3cret" || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Authorization") != "Bearer tok123" || r.Header.Get("X-Custom") != "v" {
		t.Errorf("POST %s headers %v", r.URL, r.Header)
	}
	_, out := rec.wait(t, "out frame", func(fr Frame) bool { return fr.Dir == Out })
	if out.Meta.URL != conn.Meta.Detail || out.Meta.Headers["Authorization"] != "Bearer [redacted]" {
		t.Errorf("out meta = %+v", out.Meta)
	}

	// Server events of every kind.
	f.events <- "event: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	f.events <- "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n" // default type
	f.events <- "event: custom\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n\n"
	f.events <- "event: ping\ndata: not json\n\n"
	f.events <- "event: message\ndata: not json either\n\n"
	f.events <- "event: endpoint\ndata: /other\n\n"
	_, r1 := rec.wait(t, "response 1", lsseIsResponse(1))
	if r1.Meta.EventID != "7" || r1.Meta.EventType != "message" {
		t.Errorf("response 1 meta = %+v", r1.Meta)
	}
	rec.wait(t, "response 2", lsseIsResponse(2))
	_, custom := rec.wait(t, "custom", func(fr Frame) bool { return fr.Dir == In && fr.Meta.EventType == "custom" })
	if custom.Kind != Message {
		t.Errorf("custom JSON event kind %v", custom.Kind)
	}
	rec.wait(t, "ping note", func(fr Frame) bool {
		return fr.Meta.Event == EvNote && fr.Meta.EventType == "ping" && strings.Contains(fr.Meta.Detail, "not json")
	})
	rec.wait(t, "garbage", func(fr Frame) bool { return fr.Dir == In && fr.Kind == Garbage })
	rec.wait(t, "second endpoint", func(fr Frame) bool {
		return fr.Meta.Event == EvNote && strings.Contains(fr.Meta.Detail, "keeping the first")
	})

	// A non-2xx answer is an *HTTPError, and a JSON body is kept as a message.
	f.postStatus, f.postBody = http.StatusBadRequest, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"bad thing"}}`
	err := lsseSend(t, l, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	var herr *HTTPError
	if !errors.As(err, &herr) || herr.Status != 400 || herr.Method != http.MethodPost || herr.SessionID != "s1" ||
		!strings.Contains(err.Error(), "bad thing") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("400 answer: %v", err)
	}
	rec.wait(t, "http-error", func(fr Frame) bool { return fr.Meta.Event == EvHTTPError && fr.Meta.Status == 400 })
	rec.wait(t, "error body", func(fr Frame) bool { return fr.Dir == In && strings.Contains(string(fr.Data), "bad thing") })

	// A server that answers in the POST body anyway is not lost.
	f.postStatus, f.postBody = http.StatusOK, `{"jsonrpc":"2.0","id":4,"result":{}}`
	lsseMustSend(t, l, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if _, r4 := rec.wait(t, "response 4", lsseIsResponse(4)); r4.Meta.HTTPMethod != http.MethodPost {
		t.Errorf("response 4 meta = %+v", r4.Meta)
	}
	// "Accepted" and other 2xx text is not a frame.
	if n := rec.count(func(fr Frame) bool { return strings.Contains(string(fr.Data), "Accepted") }); n != 0 {
		t.Errorf("%d frames of POST answer text", n)
	}
}

// POSTs the server never answers end with an error (server-everything does
// exactly that for an unknown sessionId), and Close ends them at once.
func TestLegacySSEPostNeverAnswered(t *testing.T) {
	hang := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: endpoint\ndata: /message?sessionId=gone\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/message", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body) // net/http notices a client gone only after the body
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(hang) }) // before ts.Close, which waits for handlers

	l := NewLegacySSE(LegacySSEOptions{URL: ts.URL + "/sse"})
	l.answerWait, l.orderWait = 300*time.Millisecond, 100*time.Millisecond
	rec := newFrameRec()
	if err := l.Start(rec.sink); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	err := lsseSend(t, l, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if err == nil || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Errorf("unanswered POST: %v", err)
	}
	rec.wait(t, "order note", func(fr Frame) bool { return fr.Meta.Event == EvNote && strings.Contains(fr.Meta.Detail, "overtake") })

	// With the bound long again, Close is what ends the POST.
	l.answerWait = time.Minute
	got := make(chan error, 1)
	l.Send(Outgoing{Data: []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)}, func(err error) { got <- err })
	start := time.Now()
	l.Close()
	if d := time.Since(start); d > lsseCloseWait {
		t.Errorf("Close took %v", d)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Error("a POST cut by Close reported success")
		}
	case <-time.After(testWait):
		t.Fatal("done not called after Close")
	}
	lsseWaitDone(t, l)
}

func TestLegacySSECloseBeforeStart(t *testing.T) {
	l := NewLegacySSE(LegacySSEOptions{URL: "http://127.0.0.1:1/sse"})
	l.Close()
	if !lsseClosed(l.Done()) {
		t.Fatal("Done open after Close")
	}
	if err := l.Start(nil); !errors.Is(err, errLSSEClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}
