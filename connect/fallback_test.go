package connect_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/testkit/clienttest"
	"mcpscope/transport"
)

// With --journal PATH, a connection that falls back to HTTP+SSE journals
// the failed Streamable HTTP attempt and the HTTP+SSE session in PATH, in
// that order, numbered on, with the reason between them: PATH holds the
// session, and a journal reader sees the session's server and calls.
func TestFallbackJournal(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sse-only", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hi", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello over SSE"}}}, nil, nil
		})
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	dir := t.TempDir()
	path := filepath.Join(dir, "named.jsonl")
	s := clienttest.Connect(t, connect.Spec{URL: ts.URL + "/mcp", Journal: path})
	if _, err := s.Call("tools/call", map[string]any{"name": "hi"}).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	all = slices.DeleteFunc(all, func(p string) bool { return p == journal.IndexPath(path) }) // the journal's index
	if len(all) != 1 {
		t.Fatalf("want the one journal the user named, got %v", all)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		seqs        []uint64
		order       []string // what came, in order: the failed POST, the note, the SSE stream
		sawFallback bool
	)
	h, err := journal.Read(f, func(seq uint64, fr transport.Frame) error {
		seqs = append(seqs, seq)
		switch {
		case fr.Dir == transport.Out && bytes.Contains(fr.Data, []byte(`"initialize"`)):
			order = append(order, "initialize "+fr.Meta.HTTPMethod)
		case fr.Meta.Event == transport.EvNote && strings.Contains(fr.Meta.Detail, "trying the HTTP+SSE transport"):
			order = append(order, "note")
			sawFallback = true
		case fr.Meta.Event == transport.EvStreamOpened && fr.Meta.Stream == transport.LegacySSEStream:
			order = append(order, "sse stream")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.Target, "http: ") {
		t.Errorf("header target %q: want the first attempt's", h.Target)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seq %d after %d: the fallback must number after the attempt", seqs[i], seqs[i-1])
		}
	}
	want := "initialize POST,note,sse stream,initialize POST"
	if got := strings.Join(order, ","); !sawFallback || got != want {
		t.Fatalf("journal order %q, want %q", got, want)
	}

	// A reader of the journal sees the session that worked.
	ls, _, err := session.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if in := ls.Info(); in.ServerInfo.Name != "sse-only" {
		t.Fatalf("loaded: server %q", in.ServerInfo.Name)
	}
	var ok bool
	for _, c := range ls.Calls() {
		if sn := c.Snapshot(); sn.Method == "tools/call" && sn.State == session.StateOK {
			ok = true
		}
	}
	if !ok {
		t.Fatal("loaded: the tools/call over HTTP+SSE is not there, answered")
	}

	// The streaming reader (journal, export, diff) ends the failed
	// attempt's calls with its HTTP errors and reads the fallback's own.
	var ended []string
	if _, err := scan.File(path, scan.Options{CallEnded: func(_ int, c *session.CallSnapshot) {
		ended = append(ended, c.Method+" "+string(c.State))
	}}, func(*scan.Frame) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ended, ", "), "server/discover error, initialize error, initialize ok, tools/call ok"; got != want {
		t.Fatalf("calls as journal reads them: %s; want %s", got, want)
	}
}
