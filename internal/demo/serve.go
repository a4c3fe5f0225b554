package demo

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/httpserve"
)

// DefaultAddr is where ServeHTTP listens when given no address: loopback
// only, on a free port.
const DefaultAddr = "127.0.0.1:0"

// ServeStdio serves one session over os.Stdin/os.Stdout until the client
// closes stdin (nil) or ctx is done (nil as well: both are a normal stop).
func ServeStdio(ctx context.Context, opts Options) error {
	return serve(ctx, &mcp.StdioTransport{}, opts)
}

// serve runs one session over t; ServeStdio with the transport swappable for
// tests.
func serve(ctx context.Context, t mcp.Transport, opts Options) error {
	d := New(opts)
	// Cancel in-flight calls first, or Run's session Close would wait for
	// them.
	stop := context.AfterFunc(ctx, d.Close)
	defer stop()
	defer d.Close()
	err := d.Server.Run(ctx, t)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// modernVersion is the first protocol version of the stateless era
// (server/discover, no sessions); versions are dates, so they compare as
// strings.
const modernVersion = "2026-07-28"

// newHTTPHandler serves d over Streamable HTTP in both eras, as stdio does.
// The initialize era gets stateful sessions, with an in-memory event store
// so dropped SSE streams can be resumed with Last-Event-ID; sessions last
// until the client deletes them. A 2026-07-28 request (its
// MCP-Protocol-Version header says so) goes to a stateless handler: the SDK
// speaks that era over HTTP only there. That era has no stream resumption;
// the tasks extension (tasks.go), served in front of it, is what lets a
// long call be left and picked up again. ts, the tasks, are waited for at
// shutdown.
func newHTTPHandler(d *Demo) (h http.Handler, ts *tasks) {
	server := func(*http.Request) *mcp.Server { return d.Server }
	stateful := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{
		EventStore: mcp.NewMemoryEventStore(nil),
		Logger:     d.opts.Logger,
	})
	stateless := mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, Logger: d.opts.Logger})
	// A task's call is a request of the demo's own, which a tasks/cancel
	// ends by cancelling its context.
	ts = newTasks(mcp.NewStreamableHTTPHandler(server, &mcp.StreamableHTTPOptions{Stateless: true, Logger: d.opts.Logger,
		PropagateRequestCancellation: true}), d.shutdown)
	d.servesTasks.Store(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("MCP-Protocol-Version") >= modernVersion {
			ts.serve(w, r, stateless)
			return
		}
		stateful.ServeHTTP(w, r)
	}), ts
}

// ServeHTTP listens on addr (DefaultAddr if empty), serves the demo at /mcp,
// calls ready with the endpoint's full URL once it accepts connections, and
// shuts down when ctx is done, ending in-flight calls and open sessions.
func ServeHTTP(ctx context.Context, addr string, opts Options, ready func(url string)) error {
	if addr == "" {
		addr = DefaultAddr
	}
	d := New(opts)
	defer d.Close()
	mux := http.NewServeMux()
	h, ts := newHTTPHandler(d)
	mux.Handle("/mcp", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "This is an MCP server; its Streamable HTTP endpoint is /mcp.", http.StatusNotFound)
	})
	// Order matters: cancel handlers, then close sessions (which ends their
	// long-lived SSE streams); the HTTP server, shut down after, waits for
	// every open request.
	return httpserve.Serve(ctx, addr, "/mcp", mux, ready, func() {
		d.Close()
		ts.wait(httpserve.Grace) // their calls were cancelled by Close
		closeSessions(d.Server)
	})
}

// closeSessions closes every session of srv concurrently.
func closeSessions(srv *mcp.Server) {
	var wg sync.WaitGroup
	for ss := range srv.Sessions() {
		wg.Go(func() { ss.Close() })
	}
	wg.Wait()
}
