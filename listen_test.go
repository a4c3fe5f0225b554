package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/internal/testservers"
)

// syncBuffer is a bytes.Buffer safe to write from the command and read from the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitText(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 30s; got:\n%s", want, b.String())
		}
		<-tick.C
	}
}

// mcpscope listen against a stateless Go SDK server: the acknowledged filter
// is shown, a tools/list_changed caused by adding a tool arrives, Ctrl-C ends it.
func TestListenCommand(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runListen(ctx, &options{url: h.URL, noJournal: true, listenTools: true}, &stdout, &stderr)
	}()
	waitText(t, &stderr, "acknowledged")
	h.Server.AddTool(&mcp.Tool{Name: "late-arrival", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	waitText(t, &stdout, "notifications/tools/list_changed")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("listen after Ctrl-C: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("listen did not stop after Ctrl-C")
	}
}
