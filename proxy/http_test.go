package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// startHTTPProxy runs an HTTP proxy in front of upstream until the test ends.
func startHTTPProxy(t *testing.T, upstream string) (Hello, string) {
	t.Helper()
	dir := shortTemp(t)
	journal := filepath.Join(dir, "journal.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Hello, 1)
	done := make(chan error, 1)
	go func() {
		done <- RunHTTP(ctx, HTTPConfig{Name: "http-test", Listen: "127.0.0.1:0", Upstream: upstream, Journal: journal,
			SocketDir: dir, Ready: func(h Hello) { ready <- h }})
	}()
	var h Hello
	select {
	case h = <-ready:
	case err := <-done:
		t.Fatalf("RunHTTP: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("RunHTTP: %v", err)
			}
		case <-time.After(waitLong):
			t.Error("RunHTTP did not stop")
		}
	})
	return h, journal
}

// goClientScript runs a fixed script with the Go SDK client and returns
// every result as JSON, in order.
func goClientScript(t *testing.T, tr mcp.Transport, calls func(ctx context.Context, cs *mcp.ClientSession) []any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	var out []string
	for _, r := range calls(ctx, cs) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	// Durations the server reports of itself differ from run to run.
	return elapsed.ReplaceAllString(strings.Join(out, "\n"), "in T")
}

var elapsed = regexp.MustCompile(`in [0-9.]+(ns|µs|ms|s)\b`)

// goSDKCalls is the script against the Go SDK everything server.
func goSDKCalls(t *testing.T) func(ctx context.Context, cs *mcp.ClientSession) []any {
	return func(ctx context.Context, cs *mcp.ClientSession) []any {
		var out []any
		add := func(r any, err error) {
			if err != nil {
				t.Fatalf("call %d: %v", len(out), err)
			}
			out = append(out, r)
		}
		add(cs.ListTools(ctx, nil))
		add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "héllo \u2028 through the proxy"}}))
		add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "burst", Arguments: map[string]any{"count": 50, "kind": "progress"}, Meta: mcp.Meta{"progressToken": "p1"}}))
		add(cs.ListResources(ctx, nil))
		add(cs.ListPrompts(ctx, nil))
		add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"megabytes": 2}}))
		add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail"}))
		return out
	}
}

func TestHTTPGoSDKClientTransparent(t *testing.T) {
	for _, o := range []testservers.HTTPOpts{{}, {JSONResponse: true}, {Stateless: true}} {
		up := testservers.StartHTTP(t, o)
		direct := goClientScript(t, &mcp.StreamableClientTransport{Endpoint: up}, goSDKCalls(t))
		h, journal := startHTTPProxy(t, up)
		proxied := goClientScript(t, &mcp.StreamableClientTransport{Endpoint: h.Listen}, goSDKCalls(t))
		if direct != proxied {
			i := firstDiff([]byte(direct), []byte(proxied))
			t.Fatalf("%+v: results differ at byte %d:\ndirect:  %.300s\nproxied: %.300s", o, i, direct[max(0, i-100):], proxied[max(0, i-100):])
		}
		_ = journal
	}
}

func TestStdioGoSDKClientTransparent(t *testing.T) {
	bin := testservers.BuildStdio(t)
	direct := goClientScript(t, &mcp.CommandTransport{Command: exec.Command(bin)}, goSDKCalls(t))
	self := selfProxyCmd(t, bin)
	proxied := goClientScript(t, &mcp.CommandTransport{Command: self}, goSDKCalls(t))
	if direct != proxied {
		i := firstDiff([]byte(direct), []byte(proxied))
		t.Fatalf("results differ at %d:\ndirect:  %.300s\nproxied: %.300s", i, direct[max(0, i-100):], proxied[max(0, i-100):])
	}
}

// selfProxyCmd runs this test binary as "mcpscope proxy -- argv…" (see
// TestMain's PROXY_RUN).
func selfProxyCmd(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	exe, _ := fakeCmd(t)
	cmd := exec.Command(exe, "-test.run=^$")
	dir := shortTemp(t)
	b, _ := json.Marshal(argv)
	cmd.Env = append(cmd.Environ(), "PROXY_RUN="+string(b), "PROXY_RUN_DIR="+dir, "GORACE=atexit_sleep_ms=0")
	return cmd
}

// Cancel over HTTP: the host's SSE answer ends with the error as its last
// event, the server is told in the host's session.
func TestHTTPCancelHostCall(t *testing.T) {
	up := testservers.StartHTTP(t, testservers.HTTPOpts{})
	h, journal := startHTTPProxy(t, up)
	v, err := Dial(context.Background(), filepath.Join(filepath.Dir(journal), SafeName(h.Name)+"."+itoa(h.PID)+".sock"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Send(Message{Type: "subscribe"})
	nextMsg(t, v, "subscribed")

	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: h.Listen}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 20, "steps": 20}, Meta: mcp.Meta{"progressToken": "t"}})
		res <- err
	}()
	var seq uint64
	for seq == 0 {
		l := nextMsg(t, v, "frame")
		if l.Record.Dir == "out" && strings.Contains(*l.Record.Raw, `"slow"`) {
			seq = l.Record.Seq
		}
	}
	// Wait for progress so the answer is an open SSE stream.
	for {
		l := nextMsg(t, v, "frame")
		if l.Record.Dir == "in" && strings.Contains(*l.Record.Raw, "notifications/progress") {
			break
		}
	}
	v.Send(Message{Type: "cancel", Seq: seq})
	nextMsg(t, v, "cancelled")
	select {
	case err := <-res:
		if err == nil || !strings.Contains(err.Error(), cancelMessage) {
			t.Fatalf("host call ended with %v", err)
		}
	case <-time.After(waitLong):
		t.Fatal("the host's call did not end")
	}
	// The server was told in the host's session.
	deadline := time.Now().Add(waitLong)
	for {
		l, err := v.Next(deadline)
		if err != nil {
			t.Fatal(err)
		}
		if l.Record != nil && l.Record.Meta != nil && l.Record.Meta.Via == transport.ViaMcpscope && l.Record.Meta.Event == EvResponse {
			if l.Record.Meta.Status/100 != 2 {
				t.Fatalf("notifications/cancelled answered %d", l.Record.Meta.Status)
			}
			break
		}
	}
	// The host's session goes on.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "after"}}); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

var _ = http.MethodGet

// A request body over journalMax is forwarded whole and byte for byte (the
// journal keeps its head), and its answer comes back: whether its length
// is known or it comes chunked, and whether the upstream answers after
// reading it or (as a server may) before. The answer's headers going out
// to the host must not end or eat the part still to be forwarded.
func TestHTTPBodyOverJournalMaxForwardedWhole(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), (journalMax+100_000)/16)
	const event = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" // the upstream's answer
	for _, tc := range []struct {
		name           string
		chunked, early bool
	}{
		{"length known, answered after", false, false},
		{"length known, answered before", false, true},
		{"chunked, answered before", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan []byte, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				if tc.early {
					if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
						t.Error(err)
					}
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
				}
				b, _ := io.ReadAll(r.Body)
				got <- b
				io.WriteString(w, event)
			}))
			defer up.Close()
			h, _ := startHTTPProxy(t, up.URL+"/mcp")
			var src io.Reader = bytes.NewReader(body)
			if tc.chunked {
				src = io.MultiReader(src) // no length: sent chunked
			}
			resp, err := http.Post(h.Listen, "application/json", src)
			if err != nil {
				t.Fatal(err)
			}
			answer, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || string(answer) != event {
				t.Fatalf("HTTP %d %q %v", resp.StatusCode, answer, err)
			}
			if b := <-got; !bytes.Equal(b, body) {
				t.Fatalf("upstream got %d bytes, want the %d sent", len(b), len(body))
			}
		})
	}
}
