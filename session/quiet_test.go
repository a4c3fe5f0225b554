package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// A resumed stream that replays what was missed and then goes quiet (as
// server-everything's does) is resumed again from its newest event id,
// which brings the rest: the call ends with its result, each step once.
func TestQuietResumedStreamAskedAgain(t *testing.T) {
	var (
		mu     sync.Mutex
		asked  []string // Last-Event-IDs of the resume GETs
		callID json.RawMessage
	)
	srv := testservers.StartScripted(t, func(w http.ResponseWriter, r *http.Request, id json.RawMessage, _ string) {
		progress := func(evID string, n int) string {
			return fmt.Sprintf("id: %s\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"mcpscope-%s\",\"progress\":%d,\"total\":3}}\n\n",
				evID, strings.Trim(string(callID), `"`), n)
		}
		switch {
		case r.Method == http.MethodPost: // the call: a prime, step 1, then the stream ends
			mu.Lock()
			callID = id
			mu.Unlock()
			testservers.SSE(w, "id: e0\ndata:\n\n"+progress("e1", 1))
		case r.Method == http.MethodGet:
			last := r.Header.Get("Last-Event-ID")
			mu.Lock()
			asked = append(asked, last)
			mu.Unlock()
			switch last {
			case "e1": // the replay, then nothing more on this stream
				testservers.SSE(w, progress("e2", 2))
				<-r.Context().Done()
			case "e2":
				testservers.SSE(w, progress("e3", 3)+fmt.Sprintf("id: e4\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[]}}\n\n", callID))
			default:
				w.WriteHeader(http.StatusBadRequest)
			}
		}
	})
	s := httpSession(t, srv.URL)
	c := s.Call("tools/call", map[string]any{"name": "x", "arguments": map[string]any{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Wait(ctx); err != nil {
		t.Fatalf("the call: %v", err)
	}
	mu.Lock()
	got := strings.Join(asked, ",")
	mu.Unlock()
	if got != "e1,e2" {
		t.Fatalf("resume GETs asked from %q; want e1, then e2 (the newest id after the quiet replay)", got)
	}
	if p := c.Snapshot().Progress; p.Updates != 3 || p.Value != 3 {
		t.Fatalf("progress %+v; want the 3 steps once each", p)
	}
	quiet := false
	for _, it := range s.Store().Since(0, 0) {
		quiet = quiet || it.Frame.Meta.Event == transport.EvResumeAttempt && strings.Contains(it.Frame.Meta.Detail, "quiet")
	}
	if !quiet {
		t.Fatal("no resume-attempt event says the resumed stream was quiet")
	}
}
