package cli

import (
	"context"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/clienttest"
	"mcpscope/internal/testservers"
)

// mcpscope listen against a stateless Go SDK server: the acknowledged filter
// is shown, a tools/list_changed caused by adding a tool arrives, Ctrl-C ends it.
func TestListenCommand(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr clienttest.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"listen", "--tools", "--no-journal", h.URL}, &stdout, &stderr)
	}()
	clienttest.WaitText(t, &stderr, "acknowledged")
	h.Server.AddTool(&mcp.Tool{Name: "late-arrival", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	clienttest.WaitText(t, &stdout, "notifications/tools/list_changed")
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("listen after Ctrl-C: exit %d\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("listen did not stop after Ctrl-C")
	}
}
