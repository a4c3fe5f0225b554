package testservers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MCPGo is a server written with github.com/mark3labs/mcp-go, an MCP
// implementation independent of the SDK authors' (its quirks are in
// peers.md): tools echo {message}, add {a, b}, slow {steps, intervalMs}
// (a progress notification per step) and fail {message} (isError).
func MCPGo() *server.MCPServer {
	s := server.NewMCPServer("mcp-go-peer", "1.2.1", server.WithToolCapabilities(true), server.WithLogging())
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("echoes message"), mcp.WithString("message", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(r.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("adds a and b"), mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(r.GetFloat("a", 0) + r.GetFloat("b", 0))), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("a tool that fails"), mcp.WithString("message")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("failed: " + r.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("reports progress each step"),
		mcp.WithNumber("steps", mcp.DefaultNumber(3)), mcp.WithNumber("intervalMs", mcp.DefaultNumber(50))),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps, every := int(r.GetFloat("steps", 3)), time.Duration(r.GetFloat("intervalMs", 50))*time.Millisecond
			var token mcp.ProgressToken
			if r.Params.Meta != nil {
				token = r.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps; i++ {
				select {
				case <-time.After(every):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if token != nil {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": token, "progress": i, "total": steps})
				}
			}
			return mcp.NewToolResultText(fmt.Sprintf("done %d steps", steps)), nil
		})
	return s
}

// StartMCPGoHTTP serves MCPGo over Streamable HTTP at /mcp on 127.0.0.1:
// stateful (sessions) or stateless.
func StartMCPGoHTTP(t testing.TB, stateless bool) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(MCPGo(), server.WithStateLess(stateless), server.WithEndpointPath("/mcp"))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp"
}

// StartMCPGoHTTPResumable serves MCPGo over Streamable HTTP at /mcp with
// mcp-go's in-memory event store: SSE events carry ids, and a GET with
// Last-Event-ID resumes a stream (and the session outlives its client).
// mcp-go runs a tool with its POST's context, which ends with the
// connection: a server meant to outlive its client (to be resumed) has to
// cut that tie, as this one does.
func StartMCPGoHTTPResumable(t testing.TB) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(MCPGo(), server.WithEndpointPath("/mcp"), server.WithEventStore(server.NewInMemoryEventStore()),
		server.WithHTTPContextFunc(func(ctx context.Context, _ *http.Request) context.Context { return context.WithoutCancel(ctx) }))
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/mcp"
}

// StartMCPGoSSE serves MCPGo over the 2024-11-05 HTTP+SSE transport at
// /sse (messages at /message) on 127.0.0.1.
func StartMCPGoSSE(t testing.TB) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	ts.Start()
	h := server.NewSSEServer(MCPGo(), server.WithBaseURL(ts.URL))
	ts.Config.Handler = h
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL + "/sse"
}
