// Package demo is the MCP server behind `mcpscope demo`: a small server that
// exercises every feature an inspector has to show (progress, cancellation,
// logging, elicitation, sampling, subscriptions, list_changed, floods and
// large results). It is built on the Go SDK and is never in the client's wire
// path: mcpscope talks to it like to any other server.
package demo

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for Options.
const (
	DefaultName          = "mcpscope-demo"
	DefaultVersion       = "1.0.0"
	DefaultClockInterval = 3 * time.Second
)

const instructions = `A demo server for trying out mcpscope. Things to try:
slow (progress, then cancel it), ask (elicitation), sample (sampling), log (set a log level first),
burst (a flood of notifications), big (a large result), fail (a tool error), toggle-extra (list_changed),
and subscribe to demo://clock (resource updates). Read demo://readme for the full tour.`

// Options configure the demo server. The zero value is ready to use.
type Options struct {
	Name    string // server name in initialize; default "mcpscope-demo"
	Version string // default "1.0.0"

	// ClockInterval is how often demo://clock changes while someone is
	// subscribed to it (default 3s). Tests make it short.
	ClockInterval time.Duration

	// Logger receives the SDK's own diagnostics (not MCP log messages).
	// Nil discards them: on stdio, stderr is the inspector's to show.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.ClockInterval <= 0 {
		o.ClockInterval = DefaultClockInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Demo is a demo server together with the background work it owns.
type Demo struct {
	Server *mcp.Server

	opts     Options
	shutdown context.Context // done once Close is called
	stop     context.CancelFunc
	clock    *clock

	extraMu sync.Mutex
	extraOn bool

	// servesTasks: the 2026-07-28 tasks extension is served (over HTTP,
	// tasks.go), so server/discover advertises it.
	servesTasks atomic.Bool
}

// New builds the demo server.
func New(opts Options) *Demo {
	opts = opts.withDefaults()
	d := &Demo{opts: opts}
	d.shutdown, d.stop = context.WithCancel(context.Background())
	d.Server = mcp.NewServer(&mcp.Implementation{
		Name:    opts.Name,
		Title:   "mcpscope demo server",
		Version: opts.Version,
	}, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             opts.Logger,
		CompletionHandler:  complete,
		SubscribeHandler:   d.subscribe,
		UnsubscribeHandler: d.unsubscribe,
		// Logging is the SDK default, but setting Capabilities replaces the
		// default, so say it explicitly; tools/resources/prompts (with
		// listChanged) are inferred from what is added below.
		//lint:ignore SA1019 the demo serves logging on purpose (deprecated by SEP-2577, still functional): an inspector must show it
		Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	d.clock = newClock(d.Server, opts.ClockInterval, d.shutdown.Done())
	d.Server.AddReceivingMiddleware(d.guard, d.advertiseTasks)
	d.Server.AddSendingMiddleware(countSent)
	d.addTools()
	d.addResources()
	d.addPrompts()
	return d
}

// Close cancels every in-flight request handler and stops the clock ticker.
// Sessions themselves stay open (closing them is the transport owner's job),
// but a session's Close no longer waits on a 10-minute slow call.
func (d *Demo) Close() {
	d.stop()
	d.clock.close()
}

// guard wraps every incoming request:
//   - its context is cancelled by Close too, because ServerSession.Close
//     waits for in-flight handlers and would otherwise hang on a long slow
//     call during shutdown;
//   - "arguments": null is treated as absent: go-sdk v1.8.0 panics applying
//     schema defaults to a null arguments object, killing the process;
//   - a panicking handler becomes an internal error instead of a crash.
func (d *Demo) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && string(p.Arguments) == "null" {
			p.Arguments = nil
		}
		defer func() {
			if r := recover(); r != nil {
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("demo server: %s panicked: %v", method, r)}
			}
		}()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(d.shutdown, cancel)()
		return next(ctx, method, req)
	}
}

// sentCounter counts the notifications that really left the server for one
// tool call. The SDK drops log messages below the client's level silently,
// so counting at the sending side is the only way to tell the user.
type sentCounter struct{ n atomic.Int64 }

type sentCounterKey struct{}

func withSentCounter(ctx context.Context) (context.Context, *sentCounter) {
	c := new(sentCounter)
	return context.WithValue(ctx, sentCounterKey{}, c), c
}

func countSent(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err == nil && strings.HasPrefix(method, "notifications/") {
			if c, ok := ctx.Value(sentCounterKey{}).(*sentCounter); ok {
				c.n.Add(1)
			}
		}
		return res, err
	}
}
