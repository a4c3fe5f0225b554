package testservers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Scripted is a hand-written Streamable HTTP server (2025-11-25) for tests
// that need a server to misbehave in one precise way: it answers
// initialize (with session s1), tools/list (one tool, "x") and
// notifications itself, and offers no standalone GET stream (405);
// everything else — a call's POST, a resume GET (it carries Last-Event-ID),
// a DELETE — goes to Other with the request's JSON-RPC id and method
// (nil Other: -32601 for requests, 200 for DELETE).
type Scripted struct {
	*httptest.Server
	URL   string // the endpoint, .../mcp
	Other func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string)
	// Listen, when set before the first request, answers the standalone
	// GET instead of the 405.
	Listen http.HandlerFunc
}

// StartScripted starts a Scripted server on 127.0.0.1, stopped with t.
func StartScripted(t testing.TB, other func(w http.ResponseWriter, r *http.Request, id json.RawMessage, method string)) *Scripted {
	t.Helper()
	s := &Scripted{Other: other}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.Server.URL + "/mcp"
	t.Cleanup(func() { s.CloseClientConnections(); s.Close() })
	return s
}

func (s *Scripted) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if r.Method == http.MethodPost {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b)) // Other may read it again
		_ = json.Unmarshal(b, &req)
	}
	switch {
	case req.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}}`, req.ID)
	case req.Method == "tools/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}}`, req.ID)
	case r.Method == http.MethodPost && req.ID == nil:
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "" && s.Listen != nil:
		s.Listen(w, r)
	case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "":
		w.WriteHeader(http.StatusMethodNotAllowed)
	case s.Other != nil:
		s.Other(w, r, req.ID, req.Method)
	case r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
	}
}

// SSE writes one SSE event (or several, as given) and flushes it.
func SSE(w http.ResponseWriter, events string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
	}
	fmt.Fprint(w, events)
	w.(http.Flusher).Flush()
}
