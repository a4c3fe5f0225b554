package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/clienttest"
	"mcpscope/internal/faultproxy"
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

// When a 2026 listen stream drops, listen says what happens (no resumption
// in 2026-07-28: it listens again, bounded and counted) and waits for the
// new stream, whose notifications it prints.
func TestListenRelistensAfterDrop(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	u, fp := faultproxy.Start(t, h.URL, faultproxy.Faults{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr clienttest.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"listen", "--tools", "--no-journal", u}, &stdout, &stderr)
	}()
	clienttest.WaitText(t, &stderr, "acknowledged")
	if n := fp.CutAll(); n == 0 {
		t.Fatal("no stream in flight to cut")
	}
	clienttest.WaitText(t, &stderr, "listening again (call")
	for _, want := range []string{"streams cannot be resumed in 2026-07-28: listening again (re-listen 1/5)", "re-listen 1 of at most 5"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "no SSE event id") {
		t.Errorf("stderr speaks of SSE event ids, which 2026-07-28 listen streams do not resume by:\n%s", stderr.String())
	}
	// The new stream is acknowledged before the tool is added, so the
	// notification goes to it.
	for deadline := time.Now().Add(30 * time.Second); strings.Count(stderr.String(), "acknowledged: ") < 2; {
		if time.Now().After(deadline) { // a hang guard
			t.Fatalf("the new listen stream was not acknowledged within 30s:\n%s", stderr.String())
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case code := <-done:
			t.Fatalf("listen ended (exit %d) after the drop:\n%s", code, stderr.String())
		}
	}
	h.Server.AddTool(&mcp.Tool{Name: "after-the-drop", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
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
