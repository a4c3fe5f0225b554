package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/session"
	"mcpscope/testkit/testservers"
)

// The Go SDK pages tools/list (PageSize 2): ListAll follows NextCursor
// through every page, each an ordinary call, and keeps the order.
func TestListAllPages(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	for i := range 5 {
		srv.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: &jsonschema.Schema{Type: "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	s := startHTTP(t, testservers.HTTPOpts{Server: srv})
	before := len(s.Calls())
	items, err := s.ListAll(context.Background(), "tools/list", "tools")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range items {
		var tool struct{ Name string }
		_ = json.Unmarshal(it, &tool)
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "t0,t1,t2,t3,t4" {
		t.Fatalf("tools across pages: %v", names)
	}
	if pages := len(s.Calls()) - before; pages != 3 {
		t.Fatalf("want 3 tools/list calls (2+2+1), got %d", pages)
	}
}

// A server that always sends a NextCursor is asked MaxListPages times and
// no more; the error says so and the items gathered are kept.
func TestListAllStopsAtTheLimit(t *testing.T) {
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		switch req.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"loop","version":"1"}}}`, req.ID)
		case "tools/list":
			asked.Add(1)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"again"}],"nextCursor":"more"}}`, req.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	s := httpSession(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	items, err := s.List("tools/list", "tools").Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "kept sending nextCursor") {
		t.Fatalf("want the page limit's error, got %v", err)
	}
	if int(asked.Load()) != session.MaxListPages {
		t.Fatalf("the server was asked %d times, want %d", asked.Load(), session.MaxListPages)
	}
	if len(items) != session.MaxListPages {
		t.Fatalf("kept %d items, want %d", len(items), session.MaxListPages)
	}
}
