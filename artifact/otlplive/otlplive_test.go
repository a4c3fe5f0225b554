package otlplive

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mcpscope/artifact/export"
	"mcpscope/proxy"
	"mcpscope/testkit/otlptest"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// TestOTLPProxyJoinsHostTrace: the stdio proxy with a live exporter sends
// a real collector the spans export --format otlp writes for the proxy's
// journal, and the call whose request carries a W3C traceparent in _meta
// is a child of the host's span, in the host's trace.
func TestOTLPProxyJoinsHostTrace(t *testing.T) {
	col := peers.StartCollector(t)
	bin := testservers.BuildStdio(t)
	journal := filepath.Join(t.TempDir(), "proxy.jsonl")
	ep, ok, err := Resolve(col.Endpoint, func(string) string { return "" })
	if err != nil || !ok {
		t.Fatalf("resolve %s: %v", col.Endpoint, err)
	}
	e, err := Start(ep, Options{Version: "test", Journal: journal, Target: "stdio: " + bin})
	if err != nil {
		t.Fatal(err)
	}
	hostIn, toProxy := io.Pipe()
	fromProxy, hostOut := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := proxy.RunStdio(context.Background(), proxy.StdioConfig{Name: "otlp", Command: bin, Journal: journal,
			SocketDir: "-", In: hostIn, Out: hostOut, Records: e.Record})
		hostOut.Close()
		done <- err
	}()
	answers := bufio.NewScanner(fromProxy)
	answers.Buffer(nil, 1<<20)
	exchange := func(line string, wantAnswer bool) string {
		t.Helper()
		if _, err := io.WriteString(toProxy, line+"\n"); err != nil {
			t.Fatalf("write to the proxy: %v", err)
		}
		if !wantAnswer {
			return ""
		}
		if !answers.Scan() {
			t.Fatalf("no answer to %s: %v", line, answers.Err())
		}
		return answers.Text()
	}
	const (
		hostTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
		hostParent = "00f067aa0ba902b7"
	)
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`, true)
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	if a := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"joined"},"_meta":{"traceparent":"00-`+hostTrace+`-`+hostParent+`-01","tracestate":"vendor=x"}}}`, true); !strings.Contains(a, "joined") {
		t.Fatalf("tools/call answered %s", a)
	}
	toProxy.Close() // the host goes: the proxy closes the server's stdin and ends
	if err := <-done; err != nil {
		t.Fatalf("proxy: %v", err)
	}
	st := e.Close(time.Minute)
	if st.Dropped != 0 || st.FramesDropped != 0 || st.Sent < 2 {
		t.Fatalf("stats %+v: want every span sent", st)
	}
	got := otlptest.Read(t, col.Received(t))
	var exported bytes.Buffer
	if err := export.OTLP(&exported, journal, export.Options{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	want := otlptest.Read(t, exported.Bytes())
	if d := otlptest.Diff(got, want); d != "" {
		t.Fatalf("the collector received other spans than the export writes:\n%s", d)
	}
	var joined bool
	for _, s := range got.Spans {
		if s.Name != "tools/call echo" {
			continue
		}
		joined = hex.EncodeToString(s.TraceId) == hostTrace && hex.EncodeToString(s.ParentSpanId) == hostParent && s.TraceState == "vendor=x"
		if !joined {
			t.Fatalf("tools/call echo: trace %x parent %x state %q, want the host's %s %s", s.TraceId, s.ParentSpanId, s.TraceState, hostTrace, hostParent)
		}
	}
	if !joined {
		t.Fatalf("no tools/call echo span among %d", len(got.Spans))
	}
}

// blackHole takes connections and never answers: a collector that hangs.
func blackHole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestOTLPSlowCollectorBounded: while the collector hangs, frames go in
// without waiting, spans queue up to MaxQueuedSpans, and at Close every
// span that did not reach it is counted as dropped: none is lost silently.
func TestOTLPSlowCollectorBounded(t *testing.T) {
	ep, _, err := Resolve(blackHole(t), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ep.Timeout = time.Hour // the collector's: Close must not follow it
	e, err := Start(ep, Options{Version: "test", Target: "stdio: test"})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 3000 // more spans than MaxQueuedSpans, fewer frames than MaxQueuedFrames
	at := time.Now()
	for i := 1; i <= calls; i++ {
		at = at.Add(time.Millisecond)
		e.Frame(uint64(2*i-1), transport.Frame{Time: at, Dir: transport.Out, Kind: transport.Message,
			Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}`, i)})
		e.Frame(uint64(2*i), transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message,
			Data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i)})
	}
	e.mu.Lock()
	queued := len(e.spans)
	e.mu.Unlock()
	if queued > MaxQueuedSpans {
		t.Fatalf("%d spans queued, past the bound %d", queued, MaxQueuedSpans)
	}
	start := time.Now()
	st := e.Close(100 * time.Millisecond)
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("Close took %s with a collector that never answers", took)
	}
	if st.Sent != 0 || st.Dropped != calls || st.FramesDropped != 0 {
		t.Fatalf("stats %+v: want all %d spans counted as dropped", st, calls)
	}
	if !strings.Contains(st.String(), fmt.Sprintf("%d dropped", calls)) {
		t.Fatalf("status line %q does not say what was dropped", st.String())
	}
}

// TestOTLPHeadersOnlyToTheEndpoint: the environment's headers reach its
// endpoint; a redirect from there is not followed, so they reach nothing
// else; the error and the status line never hold their value.
func TestOTLPHeadersOnlyToTheEndpoint(t *testing.T) {
	const secret = "s3cr3t-value"
	var mu sync.Mutex
	var elsewhere int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere++
		mu.Unlock()
	}))
	defer other.Close()
	got := make(chan string, 16)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Path + " " + r.Header.Get("X-Api-Key")
		http.Redirect(w, r, other.URL+"/v1/traces", http.StatusTemporaryRedirect)
	}))
	defer endpoint.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint.URL, "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=" + secret}
	ep, ok, err := Resolve("", func(k string) string { return env[k] })
	if err != nil || !ok {
		t.Fatalf("resolve: %v", err)
	}
	if strings.Contains(ep.String(), secret) || !strings.Contains(ep.String(), "x-api-key: [redacted]") {
		t.Fatalf("endpoint shown as %q", ep.String())
	}
	e, err := Start(ep, Options{Version: "test", Target: "stdio: test"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	e.Frame(1, transport.Frame{Time: now, Dir: transport.Out, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	e.Frame(2, transport.Frame{Time: now, Dir: transport.In, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	st := e.Close(time.Minute)
	select {
	case req := <-got:
		if req != "/v1/traces "+secret {
			t.Fatalf("the endpoint got %q", req)
		}
	default:
		t.Fatalf("the endpoint got nothing; stats %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if elsewhere != 0 {
		t.Fatalf("the redirect was followed: the other server got %d request(s)", elsewhere)
	}
	if st.Dropped != 1 || strings.Contains(st.String(), secret) || !strings.Contains(st.LastError, "307") {
		t.Fatalf("stats %+v (%s): want the span dropped for the 307, no secret", st, st)
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		flag    string
		env     map[string]string
		url     string
		headers bool
		note    string
		err     string
	}{
		{flag: "http://127.0.0.1:4318", url: "http://127.0.0.1:4318/v1/traces"},
		{flag: "http://127.0.0.1:4318/", url: "http://127.0.0.1:4318/v1/traces"},
		{flag: "https://otel.example/base/v1/traces", url: "https://otel.example/base/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/x"}, url: "http://c:4318/x/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/custom"}, url: "http://t:1/custom"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=b%20c"}, url: "http://c:4318/v1/traces", headers: true},
		{flag: "http://C:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, url: "http://C:4318/v1/traces", headers: true},
		{flag: "http://other:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, url: "http://other:4318/v1/traces", note: "not sent to http://other:4318"},
		{flag: "http://c:4318", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=b"}, url: "http://c:4318/v1/traces", note: "not sent"},
		{flag: "127.0.0.1:4318", err: "not an http(s) URL"},
		{flag: "http://user:hunter2@c:4318", url: "http://user:hunter2@c:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://user:hunter2@c"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_HEADERS": "hunter2"}, err: "no name"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, err: "milliseconds"},
		{flag: "http://c:1", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, url: "http://c:1/v1/traces"},
		{flag: "http://c:1", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "brotli"}, err: "want gzip or none"},
	} {
		ep, ok, err := Resolve(c.flag, func(k string) string { return c.env[k] })
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%q %v: error %v, want one saying %q without the secret", c.flag, c.env, err, c.err)
			}
			continue
		case err != nil || !ok:
			t.Errorf("%q %v: %v", c.flag, c.env, err)
			continue
		}
		if ep.URL != c.url || (ep.Headers != nil) != c.headers || !strings.Contains(ep.Note, c.note) || (c.note == "") != (ep.Note == "") {
			t.Errorf("%q %v: %+v, want %s headers=%v note %q", c.flag, c.env, ep, c.url, c.headers, c.note)
		}
		if strings.Contains(ep.String(), "hunter2") {
			t.Errorf("%q: shown as %q", c.flag, ep.String())
		}
	}
	if _, ok, err := Resolve("", func(string) string { return "" }); ok || err != nil {
		t.Errorf("nothing set: ok %v, err %v", ok, err)
	}
	for _, c := range []struct {
		env  map[string]string
		gzip bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "none", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "GZIP"}, true},
	} {
		if ep, _, err := Resolve("http://c:1", func(k string) string { return c.env[k] }); err != nil || ep.Gzip != c.gzip {
			t.Errorf("%v: gzip %v, err %v; want gzip %v", c.env, ep.Gzip, err, c.gzip)
		}
	}
	for _, off := range []map[string]string{{"OTEL_SDK_DISABLED": "true"}, {"OTEL_TRACES_EXPORTER": "none"}} {
		off["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://c:4318"
		if _, ok, err := Resolve("", func(k string) string { return off[k] }); ok || err != nil {
			t.Errorf("%v: ok %v, err %v; want off", off, ok, err)
		}
	}
}

// TestOTLPSpansGoAsCallsEnd: a span reaches the collector soon after its
// call ends, while the session goes on (not only when it closes).
func TestOTLPSpansGoAsCallsEnd(t *testing.T) {
	got := make(chan int, 16)
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- countSpans(readRequest(t, r))
	}))
	defer endpoint.Close()
	ep, _, err := Resolve(endpoint.URL, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(ep, Options{Version: "test", Target: "stdio: test"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	e.Frame(1, transport.Frame{Time: now, Dir: transport.Out, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	e.Frame(2, transport.Frame{Time: now, Dir: transport.In, Kind: transport.Message, Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	select {
	case n := <-got:
		if n != 1 {
			t.Fatalf("the collector got %d spans, want the ping's", n)
		}
	case <-time.After(2 * time.Minute): // a hang guard: the late window is a second
		t.Fatalf("no span reached the collector while the session ran; stats %+v", e.Stats())
	}
	if st := e.Close(time.Minute); st.Sent != 1 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}
