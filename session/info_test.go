package session_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// Info counts a stream as reconnecting from the moment its resume is
// scheduled until the resume is answered, and not once its call is
// given up: what the status bar's connected / reconnecting says.
func TestInfoReconnecting(t *testing.T) {
	var mu sync.Mutex
	var callID json.RawMessage
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, id json.RawMessage, _ string) {
		if r.Method == http.MethodGet {
			mu.Lock()
			id := callID
			mu.Unlock()
			testservers.SSE(w, "id: p2\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+string(id)+",\"result\":{\"content\":[]}}\n\n")
			return
		}
		mu.Lock()
		callID = id
		mu.Unlock()
		// Prime with a retry of 30 s (capped), then close: a resume waits.
		testservers.SSE(w, "id: p1\nretry: 1000000\ndata: \n\n")
	})
	s := httpSession(t, srv.URL)
	if n := s.Info().Reconnecting; n != 0 {
		t.Fatalf("Reconnecting = %d before any drop", n)
	}
	c := s.Call("tools/call", map[string]any{"name": "x"})
	waitUntil(t, s, "a scheduled resume", func() bool { return len(events(s, transport.EvResumeAttempt)) > 0 })
	if n := s.Info().Reconnecting; n != 1 {
		t.Fatalf("Reconnecting = %d while a resume is scheduled, want 1", n)
	}
	s.ReconnectNow()
	if _, err := waitCall(t, c); err != nil {
		t.Fatalf("the resumed call: %v", err)
	}
	waitUntil(t, s, "the resume to be answered", func() bool { return s.Info().Reconnecting == 0 })

	// A resume armed for a call that was then cancelled reconnects nothing.
	c = s.Call("tools/call", map[string]any{"name": "x"})
	waitUntil(t, s, "a second scheduled resume", func() bool { return len(events(s, transport.EvResumeAttempt)) > 1 })
	if n := s.Info().Reconnecting; n != 1 {
		t.Fatalf("Reconnecting = %d for the second call's stream, want 1", n)
	}
	if err := s.Cancel(c, "test"); err != nil {
		t.Fatal(err)
	}
	if n := s.Info().Reconnecting; n != 0 {
		t.Fatalf("Reconnecting = %d after the call was cancelled, want 0", n)
	}
}
