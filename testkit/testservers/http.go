package testservers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/demo"
)

// HTTPOpts configure StartHTTP. The zero value is a stateful server with SSE
// responses and no event store (streams cannot be resumed).
type HTTPOpts struct {
	EventStore     bool          // keep SSE events in memory so streams resume with Last-Event-ID
	JSONResponse   bool          // answer POSTs with application/json instead of an SSE stream
	Stateless      bool          // no sessions; the only mode that serves 2026-07-28 clients
	SessionTimeout time.Duration // the SDK closes sessions idle this long; later requests get 404
	ClockInterval  time.Duration // demo://clock interval (default 3s)
	// RequestLog gets a line per request or notification that reached the
	// endpoint, in WithRequestLog's form. It is written as each POST arrives,
	// not when the SDK handles it: a DELETE right after a cancel closes the
	// session before the SDK reads the cancel, yet the server was told.
	RequestLog io.Writer

	// Server, if set, is served instead of Everything(). Cleanup then cannot
	// cancel its in-flight handlers.
	Server *mcp.Server
}

// HTTPServer is a running Streamable HTTP test server.
type HTTPServer struct {
	URL    string // the MCP endpoint, http://127.0.0.1:port/mcp
	Server *mcp.Server

	ts   *httptest.Server
	mcp  http.Handler
	demo *demo.Demo // nil with HTTPOpts.Server

	mu        sync.Mutex
	reqLog    io.Writer
	expired   map[string]bool
	closings  sync.WaitGroup
	closeOnce sync.Once
}

// StartHTTP starts a test server and returns its endpoint URL; see
// StartHTTPServer.
func StartHTTP(t testing.TB, opts HTTPOpts) (url string) { return StartHTTPServer(t, opts).URL }

// StartHTTPServer starts Everything() (or opts.Server) behind the Go SDK's
// Streamable HTTP handler on 127.0.0.1, at /mcp, and stops it with
// t.Cleanup: in-flight calls are cancelled, sessions closed, connections cut.
func StartHTTPServer(t testing.TB, opts HTTPOpts) *HTTPServer {
	t.Helper()
	return StartHTTPServerAt(t, "", opts)
}

// StartHTTPServerAt is StartHTTPServer listening on addr (host:port; ""
// any free port of 127.0.0.1): a server started again where one was
// stopped is a restarted server, which knows none of the old sessions.
func StartHTTPServerAt(t testing.TB, addr string, opts HTTPOpts) *HTTPServer {
	t.Helper()
	h := newHTTPServer(opts)
	so := &mcp.StreamableHTTPOptions{
		JSONResponse:   opts.JSONResponse,
		Stateless:      opts.Stateless,
		SessionTimeout: opts.SessionTimeout,
	}
	if opts.EventStore {
		so.EventStore = mcp.NewMemoryEventStore(nil)
	}
	h.mcp = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.Server }, so)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(h.serve))
	h.ts = httptest.NewUnstartedServer(mux)
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		h.ts.Listener.Close()
		h.ts.Listener = l
	}
	h.ts.Start()
	h.URL = h.ts.URL + "/mcp"
	t.Cleanup(h.close)
	return h
}

// Stop ends the server as a process that died would: sessions and
// connections gone, nothing listening at its address any more.
func (h *HTTPServer) Stop() { h.close() }

// Addr is the host:port the server listens on.
func (h *HTTPServer) Addr() string { return h.ts.Listener.Addr().String() }

// newHTTPServer holds opts.Server, or Everything() with opts' clock and
// request log.
func newHTTPServer(opts HTTPOpts) *HTTPServer {
	h := &HTTPServer{Server: opts.Server, expired: map[string]bool{}, reqLog: opts.RequestLog}
	if h.Server == nil {
		h.demo = newEverything(WithClockInterval(opts.ClockInterval))
		h.Server = h.demo.Server
	}
	return h
}

// StartSSE serves Everything() (or opts.Server) over the 2024-11-05 HTTP+SSE
// transport (the Go SDK's SSE handler) at /sse on 127.0.0.1; opts other than
// Server, ClockInterval and RequestLog do not apply.
func StartSSE(t testing.TB, opts HTTPOpts) *HTTPServer {
	t.Helper()
	h := newHTTPServer(opts)
	h.mcp = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return h.Server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/sse", http.HandlerFunc(h.serve))
	h.ts = httptest.NewServer(mux)
	h.URL = h.ts.URL + "/sse"
	t.Cleanup(h.close)
	return h
}

// serve answers requests for expired sessions the way the SDK answers an
// unknown session (404, text/plain), before they reach the SDK handler.
func (h *HTTPServer) serve(w http.ResponseWriter, r *http.Request) {
	if h.reqLog != nil && r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.logRequests(body)
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		h.mu.Lock()
		gone := h.expired[id]
		h.mu.Unlock()
		if gone {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}
	h.mcp.ServeHTTP(w, r)
}

// logRequests writes a line per request or notification in a POST body (a
// message or a batch).
func (h *HTTPServer) logRequests(body []byte) {
	type msg struct {
		Method string `json:"method"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	var batch []msg
	if err := json.Unmarshal(body, &batch); err != nil {
		var one msg
		if json.Unmarshal(body, &one) != nil {
			return
		}
		batch = []msg{one}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range batch {
		if m.Method == "" {
			continue // a response
		}
		line := m.Method
		if m.Method == "notifications/cancelled" {
			line += fmt.Sprintf(" %v", m.Params.RequestID)
		}
		fmt.Fprintf(h.reqLog, "goserver: <- %s\n", line)
	}
}

// ExpireSessions forgets every current session at once, as a server that
// restarted or timed them out would: from now on a request carrying one of
// their ids gets 404. The SDK sessions are closed in the background (that
// waits for their in-flight calls, which go on until they finish). It
// returns the expired session ids.
func (h *HTTPServer) ExpireSessions() []string {
	var ids []string
	h.mu.Lock()
	for ss := range h.Server.Sessions() {
		id := ss.ID()
		if id == "" {
			continue // a stateless request's throwaway session
		}
		h.expired[id] = true
		ids = append(ids, id)
		h.closings.Go(func() { ss.Close() })
	}
	h.mu.Unlock()
	return ids
}

// DropConnections cuts every open TCP connection (in-flight POST streams and
// the standalone GET stream included) without touching the sessions, so a
// client has to reconnect and, with an event store, resume.
func (h *HTTPServer) DropConnections() { h.ts.CloseClientConnections() }

func (h *HTTPServer) close() { h.closeOnce.Do(h.shutdown) }

func (h *HTTPServer) shutdown() {
	// Order matters: cancel handlers so session Close does not wait for them,
	// close sessions (ending their SSE streams), then stop the HTTP server,
	// which waits for every open request.
	if h.demo != nil {
		h.demo.Close()
	}
	var wg sync.WaitGroup
	for ss := range h.Server.Sessions() {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
	h.closings.Wait()
	h.ts.CloseClientConnections()
	h.ts.Close()
}
