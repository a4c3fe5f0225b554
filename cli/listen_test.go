package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/testkit/clienttest"
	"mcpscope/testkit/faultproxy"
	"mcpscope/testkit/testservers"
)

// mcpscope listen against a stateless Go SDK server: the acknowledged filter
// is shown, a tools/list_changed caused by adding a tool arrives, Ctrl-C ends it.
func TestListenCommand(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	l := startListen(t, h.URL)
	l.waitAcknowledged(t, 1)
	l.seeToolAdded(t, h, "late-arrival")
	l.stop(t)
}

// When a 2026 listen stream drops, listen says what happens (no resumption
// in 2026-07-28: it listens again, bounded and counted) and waits for the
// new stream, whose notifications it prints.
func TestListenRelistensAfterDrop(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	u, fp := faultproxy.Start(t, h.URL, faultproxy.Faults{})
	l := startListen(t, u)
	l.waitAcknowledged(t, 1)
	if n := fp.CutAll(); n == 0 {
		t.Fatal("no stream in flight to cut")
	}
	clienttest.WaitText(t, &l.stderr, "listening again (call")
	for _, want := range []string{"streams cannot be resumed in 2026-07-28: listening again (re-listen 1/5)", "re-listen 1 of at most 5"} {
		if !strings.Contains(l.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, l.stderr.String())
		}
	}
	if strings.Contains(l.stderr.String(), "no SSE event id") {
		t.Errorf("stderr speaks of SSE event ids, which 2026-07-28 listen streams do not resume by:\n%s", l.stderr.String())
	}
	// The new stream is acknowledged before the tool is added, so the
	// notification goes to it.
	l.waitAcknowledged(t, 2)
	l.seeToolAdded(t, h, "after-the-drop")
	l.stop(t)
}

// A re-listen the server refuses (a 503 while it restarts) is one more
// drop, not the end: listen tries again within its bound of re-listens and
// goes on when the server takes one. (Before: exit 3 at the first refusal,
// right after saying "re-listen 1 of at most 5".)
func TestListenRelistenRefused(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	h := testservers.StartHTTPServer(t, testservers.HTTPOpts{Stateless: true})
	u, fp := faultproxy.Start(t, h.URL, faultproxy.Faults{})
	target, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Int32 // subscriptions/listen POSTs still to refuse
	path := target.Path
	target.Path = ""
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0) // the cut streams
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if bytes.Contains(b, []byte(`"subscriptions/listen"`)) && refuse.Add(-1) >= 0 {
				http.Error(w, "restarting", http.StatusServiceUnavailable)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	l := startListen(t, front.URL+path)
	l.waitAcknowledged(t, 1)
	refuse.Store(2)
	if n := fp.CutAll(); n == 0 {
		t.Fatal("no stream in flight to cut")
	}
	l.waitAcknowledged(t, 2)
	for _, want := range []string{"re-listen 1 of at most 5", "503", "re-listen 3 of at most 5"} {
		if !strings.Contains(l.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, l.stderr.String())
		}
	}
	l.seeToolAdded(t, h, "after-the-refusals")
	l.stop(t)
}

// listenRun is `mcpscope listen --tools --no-journal URL` running in the
// background, as a person runs it until Ctrl-C.
type listenRun struct {
	stdout, stderr clienttest.SyncBuffer
	done           chan int // its exit code
	cancel         context.CancelFunc
}

func startListen(t *testing.T, url string) *listenRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	l := &listenRun{done: make(chan int, 1), cancel: cancel}
	go func() {
		l.done <- Run(ctx, []string{"listen", "--tools", "--no-journal", url}, &l.stdout, &l.stderr)
	}()
	return l
}

// waitAcknowledged waits until n listen streams were acknowledged, failing
// at once if listen ends first.
func (l *listenRun) waitAcknowledged(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); strings.Count(l.stderr.String(), "acknowledged: ") < n; {
		if time.Now().After(deadline) { // a hang guard
			t.Fatalf("listen stream %d was not acknowledged within 30s:\n%s", n, l.stderr.String())
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case code := <-l.done:
			t.Fatalf("listen ended (exit %d) before stream %d was acknowledged:\n%s", code, n, l.stderr.String())
		}
	}
}

// seeToolAdded adds a tool to h's server and waits for listen to print the
// tools/list_changed it causes. The Go SDK's server sends that notification
// to every subscribed listen stream under one shared 10 s bound, so a stream
// it has not yet seen die (the cut one, in TestListenRelistensAfterDrop) can
// use the bound up and the live stream gets nothing: while none is printed,
// each few seconds it adds another tool, a new notification, up to a minute.
func (l *listenRun) seeToolAdded(t *testing.T, h *testservers.HTTPServer, name string) {
	t.Helper()
	const want = "notifications/tools/list_changed"
	for i, deadline := 1, time.Now().Add(time.Minute); ; i++ {
		h.Server.AddTool(&mcp.Tool{Name: fmt.Sprintf("%s-%d", name, i), InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		for again := time.Now().Add(5 * time.Second); !strings.Contains(l.stdout.String(), want); {
			if time.Now().After(deadline) { // a hang guard
				t.Fatalf("no %q within a minute of adding %d tools; stdout:\n%s\nstderr:\n%s", want, i, l.stdout.String(), l.stderr.String())
			}
			if time.Now().After(again) {
				break
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case code := <-l.done:
				t.Fatalf("listen ended (exit %d) before printing %q:\n%s", code, want, l.stderr.String())
			}
		}
		if strings.Contains(l.stdout.String(), want) {
			return
		}
	}
}

// stop is Ctrl-C: listen must end, exit 0.
func (l *listenRun) stop(t *testing.T) {
	t.Helper()
	l.cancel()
	select {
	case code := <-l.done:
		if code != exitOK {
			t.Fatalf("listen after Ctrl-C: exit %d\n%s", code, l.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("listen did not stop after Ctrl-C")
	}
}
