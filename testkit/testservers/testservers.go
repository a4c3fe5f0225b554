// Package testservers provides real MCP servers (Go SDK) for tests: the demo
// server plus test-only tools, in-process over Streamable HTTP, and as a
// stdio binary (cmd/goserver) built on demand.
package testservers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/demo"
)

// Name is the server name the test servers report in initialize.
const Name = "mcpscope-everything"

// Option configures Everything.
type Option func(*config)

type config struct {
	die           bool
	clockInterval time.Duration
	requestLog    io.Writer
}

// WithDie adds the die tool, which exits the whole process mid-call. Only
// for a server that is a process of its own (cmd/goserver).
func WithDie() Option { return func(c *config) { c.die = true } }

// WithClockInterval sets how often demo://clock changes while subscribed.
func WithClockInterval(d time.Duration) Option { return func(c *config) { c.clockInterval = d } }

// WithRequestLog writes one line per request or notification the server
// receives to w, the way a chatty real server fills its stderr.
func WithRequestLog(w io.Writer) Option { return func(c *config) { c.requestLog = w } }

// Everything returns the demo server (every tool, resource and prompt of
// `mcpscope demo`) plus test tools:
//
//   - delay {ms}: answers after ms milliseconds with no progress in between
//     (idle-timeout tests);
//   - drop-stream {steps, intervalMs, retryMs}: over Streamable HTTP, closes
//     its own SSE stream after the first progress step (SEP-1699, with
//     `retry:`) and goes on, so the client must resume with Last-Event-ID;
//   - die {code} (WithDie only): exits the process with code, mid-call.
func Everything(opts ...Option) *mcp.Server { return newEverything(opts...).Server }

func newEverything(opts ...Option) *demo.Demo {
	var c config
	for _, o := range opts {
		o(&c)
	}
	d := demo.New(demo.Options{Name: Name, ClockInterval: c.clockInterval})
	addTestTools(d.Server, c)
	if c.requestLog != nil {
		var mu sync.Mutex // Fprintf from concurrent handlers
		d.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				line := method
				if p, ok := req.GetParams().(*mcp.CancelledParams); ok {
					line += fmt.Sprintf(" %v", p.RequestID) // which call the client gave up
				}
				mu.Lock()
				fmt.Fprintf(c.requestLog, "goserver: <- %s\n", line)
				mu.Unlock()
				return next(ctx, method, req)
			}
		})
	}
	return d
}

func schema(props map[string]*jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props}
}

func intProp(desc string, def, minimum int) *jsonschema.Schema {
	m := float64(minimum)
	return &jsonschema.Schema{Type: "integer", Description: desc, Default: []byte(fmt.Sprint(def)), Minimum: &m}
}

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func addTestTools(s *mcp.Server, c config) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "delay",
		Description: "Test tool: answers after `ms` milliseconds, sending nothing in between.",
		InputSchema: schema(map[string]*jsonschema.Schema{"ms": intProp("delay in milliseconds", 1000, 0)}),
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
		MS int `json:"ms"`
	}) (*mcp.CallToolResult, any, error) {
		t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("delay: %w", context.Cause(ctx))
		case <-t.C:
			return text("delay: answered after %dms", in.MS), nil, nil
		}
	})

	mcp.AddTool(s, &mcp.Tool{
		Name: "drop-stream",
		Description: "Test tool (Streamable HTTP): sends progress step 1, closes its own SSE stream with retry: `retryMs`, " +
			"then sends the remaining `steps` every `intervalMs` and answers; the client must reconnect with Last-Event-ID to see them.",
		InputSchema: schema(map[string]*jsonschema.Schema{
			"steps":      intProp("progress steps in all", 4, 2),
			"intervalMs": intProp("pause between steps in milliseconds", 50, 0),
			"retryMs":    intProp("the retry: value sent when closing the stream", 100, 0),
		}),
	}, dropStream)

	if c.die {
		mcp.AddTool(s, &mcp.Tool{
			Name:        "die",
			Description: "Test tool: exits the server process with status `code` while the call is in flight.",
			InputSchema: schema(map[string]*jsonschema.Schema{"code": intProp("exit status", 3, 0)}),
		}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Code int `json:"code"`
		}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "goserver: die tool called, exiting with status %d\n", in.Code)
			os.Exit(in.Code)
			return nil, nil, nil
		})
	}
}

type dropArgs struct {
	Steps      int `json:"steps"`
	IntervalMS int `json:"intervalMs"`
	RetryMS    int `json:"retryMs"`
}

func dropStream(ctx context.Context, req *mcp.CallToolRequest, in dropArgs) (*mcp.CallToolResult, any, error) {
	if req.Extra == nil || req.Extra.CloseSSEStream == nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: "drop-stream: needs a stateful Streamable HTTP session with SSE responses",
		}}}, nil, nil
	}
	token := req.Params.GetProgressToken()
	for i := 1; i <= in.Steps; i++ {
		if i > 1 {
			t := time.NewTimer(time.Duration(in.IntervalMS) * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, nil, fmt.Errorf("drop-stream: %w", context.Cause(ctx))
			case <-t.C:
			}
		}
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(in.Steps),
				Message: fmt.Sprintf("step %d/%d", i, in.Steps),
			})
			if err != nil {
				return nil, nil, err
			}
		}
		if i == 1 {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: time.Duration(in.RetryMS) * time.Millisecond})
		}
	}
	return text("drop-stream: finished %d steps after dropping the stream once", in.Steps), nil, nil
}

// ServeStdio serves Everything over os.Stdin/os.Stdout until the client
// closes stdin or ctx is done (both a normal stop: nil). In-flight calls are
// cancelled on ctx, so a SIGTERM does not wait for a long slow call.
func ServeStdio(ctx context.Context, opts ...Option) error {
	d := newEverything(opts...)
	defer context.AfterFunc(ctx, d.Close)()
	defer d.Close()
	err := d.Server.Run(ctx, &mcp.StdioTransport{})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
