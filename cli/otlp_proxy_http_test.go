package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// TestOTLPHTTPProxyJoinsHostTrace: proxy --listen URL --otlp sends a real
// collector the spans export --format otlp writes for the proxy's journal,
// and the host's tools/call that carries a W3C traceparent in _meta is a
// child of the host's span, in the host's trace.
func TestOTLPHTTPProxyJoinsHostTrace(t *testing.T) {
	col := peers.StartCollector(t)
	upstream := testservers.StartHTTP(t, testservers.HTTPOpts{})
	noProxies(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "proxy.jsonl")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	errR, errW := io.Pipe()
	var stderr syncBuffer
	listen := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if rest, ok := strings.CutPrefix(sc.Text(), "mcpscope proxy: point the host at "); ok {
				listen <- strings.Fields(rest)[0]
			}
		}
	}()
	exited := make(chan int, 1)
	go func() {
		code := Run(ctx, []string{"proxy", "--listen", "127.0.0.1:0", "--otlp", col.Endpoint, "--journal", journal, upstream}, io.Discard, errW)
		errW.Close()
		exited <- code
	}()
	var proxyURL string
	select {
	case proxyURL = <-listen:
	case code := <-exited:
		t.Fatalf("proxy exited %d before listening: %s", code, stderr.String())
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatalf("the proxy did not say where it listens: %s", stderr.String())
	}

	const (
		hostTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
		hostParent = "00f067aa0ba902b7"
	)
	var sessionID string
	post := func(body string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", body, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode >= 300 {
			t.Fatalf("POST %s: HTTP %d %v: %s", body, resp.StatusCode, err, b)
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			sessionID = id
		}
		return string(b)
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if a := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"joined"},"_meta":{"traceparent":"00-` +
		hostTrace + `-` + hostParent + `-01","tracestate":"vendor=x"}}}`); !strings.Contains(a, "joined") {
		t.Fatalf("tools/call answered %s", a)
	}
	stop() // the proxy stops; its exporter sends the last spans
	select {
	case code := <-exited:
		if code != exitOK {
			t.Fatalf("proxy: exit %d: %s", code, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the proxy did not stop")
	}
	if strings.Contains(stderr.String(), "OpenTelemetry") {
		t.Fatalf("the collector was up, yet stderr reports on OpenTelemetry: %s", stderr.String())
	}
	got := otlptest.Read(t, col.Received(t))
	code, exported, errs := runIn(t, dir, "export", "--format", "otlp", journal)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	if d := otlptest.Diff(got, otlptest.Read(t, []byte(exported))); d != "" {
		t.Fatalf("the collector received other spans than the export writes:\n%s", d)
	}
	joined := false
	for _, s := range got.Spans {
		if s.Name != "tools/call echo" {
			continue
		}
		if hex.EncodeToString(s.TraceId) != hostTrace || hex.EncodeToString(s.ParentSpanId) != hostParent || s.TraceState != "vendor=x" {
			t.Fatalf("tools/call echo: trace %x parent %x state %q, want the host's %s %s", s.TraceId, s.ParentSpanId, s.TraceState, hostTrace, hostParent)
		}
		joined = true
	}
	if !joined || len(got.Spans) < 2 {
		t.Fatalf("want the initialize span and a tools/call echo span joined to the host's trace; got %d spans", len(got.Spans))
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) WriteString(v string) {
	s.mu.Lock()
	s.b.WriteString(v)
	s.mu.Unlock()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
