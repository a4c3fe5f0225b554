package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/protocol"
	"mcpscope/session"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

func events(s *session.Session, name string) []transport.Meta {
	var out []transport.Meta
	for _, it := range s.Store().Since(0, 0) {
		if it.Frame.Meta.Event == name {
			out = append(out, it.Frame.Meta)
		}
	}
	return out
}

// A server's retry of 277 hours is capped, and the resume says so.
func TestRetryIsCapped(t *testing.T) {
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage, _ string) {
		testservers.SSE(w, "id: p1\nretry: 1000000000\ndata: \n\n") // prime, then close the stream
	})
	s := httpSession(t, srv.URL)
	c := s.Call("tools/call", map[string]any{"name": "x"})
	waitUntil(t, s, "a scheduled resume", func() bool { return len(events(s, transport.EvResumeAttempt)) > 0 })
	d := events(s, transport.EvResumeAttempt)[0].Detail
	if !strings.Contains(d, "in "+session.MaxRetryWait.String()) || !strings.Contains(d, "capped") {
		t.Fatalf("the resume is not capped at %s: %s", session.MaxRetryWait, d)
	}
	_ = s.Cancel(c, "test over")
}

// Fresh event ids that only prime (no message) do not reset the attempt
// count: a server that closes every stream at once ends the call after
// MaxResumeAttempts reconnects instead of keeping the client busy.
func TestPrimingEventsDoNotResetAttempts(t *testing.T) {
	var gets atomic.Int32
	var n atomic.Int32
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage, _ string) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			gets.Add(1)
		}
		testservers.SSE(w, fmt.Sprintf("id: p%d\nretry: 10\ndata: \n\n", n.Add(1)))
	})
	s := httpSession(t, srv.URL)
	_, err := waitCall(t, s.Call("tools/call", map[string]any{"name": "x"}))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("gave up after %d resume attempts", session.MaxResumeAttempts)) {
		t.Fatalf("want the call to give up after %d attempts, got %v", session.MaxResumeAttempts, err)
	}
	if g := int(gets.Load()); g != session.MaxResumeAttempts {
		t.Fatalf("%d resume GETs, want %d", g, session.MaxResumeAttempts)
	}
}

// A server that dies under a call (its port now refuses connections) ends
// the call at the first refused resume, not after a ladder of backoffs.
func TestRefusedResumeFailsFast(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	var streaming = make(chan struct{}, 1)
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, _ json.RawMessage, _ string) {
		testservers.SSE(w, "id: p1\nretry: 50\ndata: \n\n")
		streaming <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	s := httpSession(t, srv.URL)
	c := s.Call("tools/call", map[string]any{"name": "x"})
	<-streaming
	srv.Listener.Close() // the port refuses from now on
	srv.CloseClientConnections()
	_, err := waitCall(t, c)
	if err == nil || !strings.Contains(err.Error(), "refuses connections") {
		t.Fatalf("want the call to end on the refused resume, got %v", err)
	}
	if n := len(events(s, transport.EvResumeAttempt)); n != 1 {
		t.Fatalf("%d resume attempts against a refusing port, want 1", n)
	}
}

// A response whose id has the right value in the wrong JSON type answers
// nothing; it is reported at once (Warn) and named when the call times out.
func TestTypedTwinResponseIsReported(t *testing.T) {
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, id json.RawMessage, _ string) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":"%s","result":{"content":[]}}`, strings.Trim(string(id), `"`))
	})
	var warned []string
	var mu sync.Mutex
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: srv.URL}), session.Options{Timeout: 500 * time.Millisecond,
		Warn: func(m string) { mu.Lock(); warned = append(warned, m); mu.Unlock() }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	c := s.Call("tools/call", map[string]any{"name": "x"})
	_, err := waitCall(t, c)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`the id "%s"`, c.Key)) {
		t.Fatalf("the timeout should name the unmatched response, got %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.Contains(warned[0], "ids are typed") {
		t.Fatalf("warnings: %q", warned)
	}
}

// 2026-07-28 has no resumption: a broken response stream loses the request,
// and the client re-issues it with a new id, as a linked call; waiting on
// the first gives the second's answer. A call the user cancelled is never
// re-issued.
func TestModernReissueAfterBrokenStream(t *testing.T) {
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	var cut atomic.Bool
	cut.Store(true)
	url, proxy := faultproxy.Start(t, h.URL, faultproxy.Faults{
		Match: func(r *http.Request) bool {
			return r.Header.Get("Mcp-Method") == "tools/call" && cut.CompareAndSwap(true, false)
		},
		CutAfterBytes: func(*http.Request, int) int { return 1 },
	})
	s := session.New(transport.NewHTTP(transport.HTTPOptions{URL: url}), session.Options{})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := s.Probe(ctx, 10*time.Second)
	if err != nil || v.Era != protocol.EraModern {
		t.Fatalf("probe: %+v %v", v, err)
	}
	s.Adopt(v)
	c := s.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "again"}})
	res, err := c.Await(ctx)
	if err != nil || !strings.Contains(string(res), "again") {
		t.Fatalf("the re-issued call: %s %v", res, err)
	}
	if st := proxy.Stats(); st.Cuts != 1 {
		t.Fatalf("proxy %+v: want one cut stream", st)
	}
	next := c.Next()
	if next == nil || next.Snapshot().ReissueOf != c.Key || c.Snapshot().Next != next.Key {
		t.Fatalf("the re-issue is not linked: next %v", next)
	}
	// Cancelled: closed by the client, not re-issued.
	slow := s.Call("tools/call", map[string]any{"name": "delay", "arguments": map[string]any{"ms": 5000}})
	waitUntil(t, s, "the slow call's request on the wire", func() bool {
		for _, it := range s.Store().Since(0, 0) {
			if it.Frame.Dir == transport.Out && it.CallKey == slow.Key {
				return true
			}
		}
		return false
	})
	if err := s.Cancel(slow, "test"); err != nil {
		t.Fatal(err)
	}
	if slow.Next() != nil {
		t.Fatal("a cancelled call was re-issued")
	}
}
