package testservers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/testkit/waitfor"
)

const wait = 2 * time.Minute

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func newClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "testservers-test", Version: "0"}, opts)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func resText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, token any) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if token != nil {
		p.SetProgressToken(token)
	}
	res, err := cs.CallTool(testCtx(t), p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func inMemory(t *testing.T, srv *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(testCtx(t), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := newClient(copts).Connect(testCtx(t), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// progress counts progress notifications and signals each one.
type progress struct {
	each chan *mcp.ProgressNotificationParams
}

func newProgress() *progress {
	return &progress{each: make(chan *mcp.ProgressNotificationParams, 1000)}
}

func (p *progress) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.each <- req.Params
}

func TestEverything(t *testing.T) {
	cs := inMemory(t, Everything(), nil)
	names := toolNames(t, cs)
	for _, want := range []string{"slow", "echo", "ask", "big", "delay", "drop-stream"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s tool in %v", want, names)
		}
	}
	if slices.Contains(names, "die") {
		t.Error("die is there without WithDie")
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != Name {
		t.Errorf("server name %q", got)
	}
	if !slices.Contains(toolNames(t, inMemory(t, Everything(WithDie()), nil)), "die") {
		t.Error("WithDie did not add die")
	}

	if res := callTool(t, cs, "delay", map[string]any{"ms": 1}, nil); resText(res) != "delay: answered after 1ms" {
		t.Errorf("delay: %q", resText(res))
	}
	// drop-stream has no stream to drop outside Streamable HTTP.
	if res := callTool(t, cs, "drop-stream", nil, nil); !res.IsError {
		t.Errorf("drop-stream in memory: %q", resText(res))
	}
}

func TestDelayCancel(t *testing.T) {
	started, returned := make(chan struct{}, 1), make(chan string, 1)
	srv := Everything()
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				started <- struct{}{}
			}
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok {
				returned <- resText(r)
			}
			return res, err
		}
	})
	cs := inMemory(t, srv, nil)
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "delay", Arguments: map[string]any{"ms": 600000}})
		done <- err
	}()
	waitFor(t, started, "the call to reach the server")
	cancel()
	if err := waitFor(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	if got := waitFor(t, returned, "the delay handler to return"); !strings.Contains(got, "context canceled") {
		t.Errorf("handler: %q", got)
	}
}

// lockedBuffer collects a child's stderr, written by exec's copying
// goroutine and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestStdioBinary(t *testing.T) {
	bin := BuildStdio(t)
	if again := BuildStdio(t); again != bin {
		t.Fatalf("built twice: %s, %s", bin, again)
	}
	var stderr lockedBuffer
	cmd := exec.Command(bin, "--stderr-noise")
	cmd.Stderr = &stderr
	rec := newProgress()
	cs, err := newClient(&mcp.ClientOptions{ProgressNotificationHandler: rec.handler}).
		Connect(testCtx(t), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	if !slices.Contains(toolNames(t, cs), "die") {
		t.Error("the binary has no die tool")
	}
	if res := callTool(t, cs, "slow", map[string]any{"seconds": 0.03, "steps": 3}, "s"); res.IsError {
		t.Fatalf("slow: %q", resText(res))
	}
	for i := range 3 {
		if p := waitFor(t, rec.each, "progress"); p.Progress != float64(i+1) || p.Total != 3 {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
	if res := callTool(t, cs, "big", map[string]any{"megabytes": 2}, nil); len(resText(res)) != 2<<20 {
		t.Errorf("big over stdio: %d bytes", len(resText(res)))
	}

	_, err = cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "die", Arguments: map[string]any{"code": 7}})
	if err == nil {
		t.Fatal("die returned a result")
	}
	// The SDK's CommandTransport reaps the child itself; Close waits for that.
	cs.Close()
	if st := cmd.ProcessState; st == nil || st.ExitCode() != 7 {
		t.Errorf("exit: %v", st)
	}
	for _, want := range []string{"\x1b[33mwarning", "goserver: <- tools/call", "exiting with status 7"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestStdioBanner(t *testing.T) {
	cmd := exec.Command(BuildStdio(t), "--banner", "Welcome to my server! v1.2")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || line != "Welcome to my server! v1.2\n" {
		t.Errorf("first stdout line %q, %v", line, err)
	}
	// After the banner it is a normal server: ping, answer, and exit on EOF.
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	line, err = r.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Errorf("ping answer %q, %v", line, err)
	}
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := waitFor(t, exited, "exit on stdin EOF"); err != nil {
		t.Errorf("exit: %v", err)
	}
}

// connectHTTP connects an SDK client; its cleanup runs before the server's
// (cleanups run last-in first-out), which matters: the SDK client spends
// ~18s in Close retrying a server that is already gone.
func connectHTTP(t *testing.T, url string, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url}
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := newClient(copts).Connect(testCtx(t), tr, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHTTPModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      HTTPOpts
		version   string
		sessioned bool
	}{
		{"event-store", HTTPOpts{EventStore: true}, "2025-11-25", true},
		{"plain", HTTPOpts{}, "2025-11-25", true},
		{"json", HTTPOpts{JSONResponse: true}, "2025-11-25", true},
		{"stateless-2026", HTTPOpts{Stateless: true}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := StartHTTP(t, tc.opts)
			if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
				t.Fatalf("url %q", url)
			}
			rec := newProgress()
			cs := connectHTTP(t, url, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, tc.version)
			if (cs.ID() != "") != tc.sessioned {
				t.Errorf("session id %q", cs.ID())
			}
			if res := callTool(t, cs, "echo", map[string]any{"message": "over http"}, nil); resText(res) != "over http" {
				t.Errorf("echo: %q", resText(res))
			}
			if res := callTool(t, cs, "slow", map[string]any{"seconds": 0.02, "steps": 2}, "p"); res.IsError {
				t.Errorf("slow: %q", resText(res))
			}
			if !tc.opts.JSONResponse { // JSON responses carry no notifications
				waitFor(t, rec.each, "progress")
				waitFor(t, rec.each, "progress")
			}
		})
	}
}

// post sends one raw JSON-RPC request with a session id and returns the
// status code.
func post(t *testing.T, url, session, body string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t), "POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

const ping = `{"jsonrpc":"2.0","id":99,"method":"ping"}`

func TestExpireSessions(t *testing.T) {
	h := StartHTTPServer(t, HTTPOpts{EventStore: true})
	cs := connectHTTP(t, h.URL, nil, "2025-11-25")
	if code := post(t, h.URL, cs.ID(), ping); code != http.StatusOK {
		t.Fatalf("ping before expiry: %d", code)
	}
	// A call in flight must not hold the expiry up.
	rec := newProgress()
	other := connectHTTP(t, h.URL, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, "2025-11-25")
	p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600, "steps": 6000}}
	p.SetProgressToken("x")
	go other.CallTool(testCtx(t), p)
	waitFor(t, rec.each, "progress")

	ids := h.ExpireSessions()
	if !slices.Contains(ids, cs.ID()) || !slices.Contains(ids, other.ID()) {
		t.Fatalf("expired %v, want %s and %s", ids, cs.ID(), other.ID())
	}
	if code := post(t, h.URL, cs.ID(), ping); code != http.StatusNotFound {
		t.Errorf("ping after expiry: %d, want 404", code)
	}
	if _, err := cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err == nil {
		t.Error("a call on an expired session succeeded")
	}
	// A new session works.
	fresh := connectHTTP(t, h.URL, nil, "2025-11-25")
	if res := callTool(t, fresh, "echo", map[string]any{"message": "again"}, nil); resText(res) != "again" {
		t.Errorf("echo on a new session: %q", resText(res))
	}
}

func TestSessionTimeout(t *testing.T) {
	h := StartHTTPServer(t, HTTPOpts{SessionTimeout: 50 * time.Millisecond})
	cs := connectHTTP(t, h.URL, nil, "2025-11-25")
	var ss *mcp.ServerSession
	for s := range h.Server.Sessions() {
		if s.ID() == cs.ID() {
			ss = s
		}
	}
	if ss == nil {
		t.Fatal("no server session for the client")
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	waitFor(t, ended, "the idle session to be closed")
	// The SDK's handler forgets a session in the transport's onClose, which
	// may run just after Wait returns: ask until it answers 404, bounded.
	code := post(t, h.URL, cs.ID(), ping)
	waitfor.Within(wait, func() bool {
		if code != http.StatusNotFound {
			code = post(t, h.URL, cs.ID(), ping)
		}
		return code == http.StatusNotFound
	})
	if code != http.StatusNotFound {
		t.Errorf("ping after timeout: %d, want 404", code)
	}
}

// drop-stream closes its SSE stream after step 1; the SDK client resumes
// from the event store and still gets every step and the result.
func TestDropStreamResumes(t *testing.T) {
	url := StartHTTP(t, HTTPOpts{EventStore: true})
	rec := newProgress()
	cs := connectHTTP(t, url, &mcp.ClientOptions{ProgressNotificationHandler: rec.handler}, "2025-11-25")
	res := callTool(t, cs, "drop-stream", map[string]any{"steps": 4, "intervalMs": 20, "retryMs": 10}, "d")
	if res.IsError || !strings.Contains(resText(res), "finished 4 steps") {
		t.Fatalf("drop-stream: %q", resText(res))
	}
	for i := range 4 {
		if p := waitFor(t, rec.each, "progress"); p.Progress != float64(i+1) {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
}

// The server's cleanup must not hang on a call in flight and an open GET
// stream. (The SDK client's own Close would: it waits for its pending call.)
func TestCleanupWithCallInFlight(t *testing.T) {
	h := StartHTTPServer(t, HTTPOpts{EventStore: true})
	rec := newProgress()
	cs, err := newClient(&mcp.ClientOptions{ProgressNotificationHandler: rec.handler}).Connect(testCtx(t),
		&mcp.StreamableClientTransport{Endpoint: h.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"seconds": 600, "steps": 6000}}
	p.SetProgressToken("c")
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), p)
		callErr <- err
	}()
	waitFor(t, rec.each, "progress")

	closed := make(chan struct{})
	go func() {
		h.close()
		close(closed)
	}()
	waitFor(t, closed, "the server cleanup")
	waitFor(t, callErr, "the pending call to fail")
	cs.Close()
}
