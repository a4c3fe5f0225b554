package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/testkit/testservers"
)

// A command line that cannot work is exit 2, said before anything connects:
// a URL that is no URL, a header that would split in two, a folder or a file
// that is not a journal, a -- with no command after it.
func TestUsageExitCodes(t *testing.T) {
	dir := t.TempDir()
	notJournal := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notJournal, []byte("hello, not a journal\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string // in stderr
	}{
		{"port", []string{"tools", "--no-journal", "http://127.0.0.1:99999/mcp"}, "port 99999"},
		{"space", []string{"tools", "--no-journal", "http://127.0.0.1:1/m cp"}, "space"},
		{"header-crlf", []string{"tools", "--no-journal", "-H", "X-A: b\r\nX-Evil: 1", "http://127.0.0.1:1/mcp"}, "-H"},
		{"header-lf-name", []string{"tools", "--no-journal", "-H", "X\nA: b", "http://127.0.0.1:1/mcp"}, "-H"},
		{"journal-folder", []string{"journal", dir}, "is a folder"},
		{"export-not-journal", []string{"export", notJournal}, `("hello, not a journal")`},
		{"diff-not-journal", []string{"diff", notJournal, notJournal}, "not an mcpscope journal"},
		{"serve-not-journal", []string{"serve", notJournal}, "not an mcpscope journal"},
		{"replay-not-journal", []string{"replay", notJournal, "http://127.0.0.1:1/mcp"}, "not an mcpscope journal"},
		{"journal-not-journal", []string{"journal", notJournal}, "not an mcpscope journal"},
		{"nothing-after-dash", []string{"tools", "--no-journal", "--"}, "nothing after --"},
		{"call-nothing-after-dash", []string{"call", "echo", "--no-journal", "--"}, "nothing after --"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errb := runIn(t, t.TempDir(), tc.argv...)
			if code != exitUsage || !strings.Contains(errb, tc.want) {
				t.Fatalf("exit %d, want %d (usage) with %q in stderr\nstdout: %s\nstderr: %s", code, exitUsage, tc.want, out, errb)
			}
			if strings.Contains(errb, "\r") || strings.Contains(out, "X-Evil") {
				t.Fatalf("the hostile header leaked raw: %q / %q", out, errb)
			}
		})
	}
}

// A server that keeps asking for input past MaxRounds is the server's
// fault: exit 1, not a transport failure.
func TestRoundLimitIsTheServersFault(t *testing.T) {
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	h.Server.AddTool(&mcp.Tool{Name: "nag", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n, _ := strconv.Atoi(strings.TrimPrefix(req.Params.RequestState, "round-"))
			return &mcp.CallToolResult{RequestState: fmt.Sprintf("round-%d", n+1), InputRequests: mcp.InputRequestMap{
				"more": &mcp.ElicitParams{Mode: "form", Message: "More?", RequestedSchema: map[string]any{
					"type": "object", "properties": map[string]any{"more": map[string]any{"type": "string"}}}},
			}}, nil
		})
	code, out, errb := runIn(t, t.TempDir(), "call", "nag", "--era", "modern", "--no-journal",
		"--answer", `more={"action":"accept","content":{"more":"yes"}}`, h.URL)
	if code != exitServerErr || !strings.Contains(errb, "input_required rounds") {
		t.Fatalf("exit %d, want %d (the server's fault)\nstdout: %s\nstderr: %s", code, exitServerErr, out, errb)
	}
}

// --timeout bounds the whole command against a server that never answers:
// the handshake gives up at the limit and closing waits on the server no
// more (no flush of the probe's cancel, no 10s wait for an HTTP+SSE
// endpoint event). The margin is generous for a loaded machine; before,
// these took the limit + 2s (flush) and a fixed 10s exiting 130.
func TestTimeoutIsTheBound(t *testing.T) {
	release := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // an SSE stream that never names its endpoint
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select { // and no answer to anything
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(release) })
	const limit, margin = 2 * time.Second, 1500 * time.Millisecond
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"streamable-http", []string{silent.URL + "/mcp"}},
		{"http+sse", []string{"--transport", "sse", silent.URL + "/sse"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			code, out, errb := runIn(t, t.TempDir(), append([]string{"tools", "--timeout", limit.String()}, tc.argv...)...)
			took := time.Since(began)
			if code != exitTimeout || !strings.Contains(errb, "timed out") {
				t.Fatalf("exit %d, want %d (timeout)\nstdout: %s\nstderr: %s", code, exitTimeout, out, errb)
			}
			if took > limit+margin {
				t.Fatalf("--timeout %s took %s: closing waited on a server that never answers", limit, took.Round(time.Millisecond))
			}
		})
	}
}

// The inspector (mcpscope TARGET), open and attach need a terminal; without
// one they say so before anything connects or spawns, instead of
// connecting first and failing with bubbletea's error.
func TestInspectorNeedsATerminal(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	spawned := filepath.Join(t.TempDir(), "spawned")
	journal := writeFile(t, header)
	for _, argv := range [][]string{
		{"--no-journal", srv.URL + "/mcp"},
		{"--no-journal", "--", "sh", "-c", "touch " + spawned},
		{"open", journal},
	} {
		code, out, errb := runIn(t, t.TempDir(), argv...)
		if code != exitUsage || !strings.Contains(errb, "needs a terminal") {
			t.Errorf("%q: exit %d, want %d (usage) saying it needs a terminal\nstdout: %q\nstderr: %q", argv, code, exitUsage, out, errb)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the inspector reached the server (%d requests) before finding no terminal", n)
	}
	if _, err := os.Stat(spawned); err == nil {
		t.Error("the inspector spawned the server before finding no terminal")
	}
	dir := noProxies(t)
	fakeProxy(t, dir, "alpha", "stdio: server-a")
	if code, _, errb := runIn(t, os.Getenv("XDG_STATE_HOME"), "attach"); code != exitUsage || !strings.Contains(errb, "needs a terminal") {
		t.Errorf("attach: exit %d, stderr %q; want a usage error saying it needs a terminal", code, errb)
	}
}

// The exit code of an HTTP+SSE server that fails says which failure it was:
// a server that names its endpoint and answers 404 to every POST (a 404
// whose body stays open) is a transport failure at once (exit 3), not a
// wait for --timeout (before: exit 4 at the limit); a stream that never names its endpoint is a
// timeout (exit 4) in auto mode too, where it comes after Streamable
// HTTP's 404 (before: exit 3, the 404's).
func TestLegacySSEExitCodes(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/named"):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "event: endpoint\ndata: /messages?sessionId=1\n\n")
			w.(http.Flusher).Flush()
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/silent"):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		default: // every POST, and any GET of another path: a 404 whose body never ends
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "no such session")
			w.(http.Flusher).Flush()
		}
		select { // the stream stays open, saying nothing more
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	const limit = 20 * time.Second
	for _, tc := range []struct {
		name   string
		argv   []string
		code   int
		want   string
		within time.Duration
	}{
		{"post-404 sse", []string{"--transport", "sse", srv.URL + "/named/sse"}, exitTransport, "no such session", limit / 2},
		{"post-404 auto", []string{srv.URL + "/named/sse"}, exitTransport, "404", limit / 2},
		{"no-endpoint auto", []string{"--timeout", "2s", srv.URL + "/silent/sse"}, exitTimeout, "no endpoint event", limit},
		{"no-endpoint sse", []string{"--timeout", "2s", "--transport", "sse", srv.URL + "/silent/sse"}, exitTimeout, "no endpoint event", limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			argv := append([]string{"tools", "--no-journal", "--timeout", limit.String()}, tc.argv...)
			code, out, errb := runIn(t, t.TempDir(), argv...)
			took := time.Since(began)
			if code != tc.code || !strings.Contains(errb, tc.want) {
				t.Fatalf("exit %d, want %d with %q in stderr (after %s)\nstdout: %s\nstderr: %s", code, tc.code, tc.want, took.Round(time.Millisecond), out, errb)
			}
			if took > tc.within {
				t.Fatalf("took %s: the failure was known at once", took.Round(time.Millisecond))
			}
		})
	}
}
