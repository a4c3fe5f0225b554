package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"peers-test","version":"0"}}}`

const discover = `{"jsonrpc":"2.0","id":"discover-1","method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientInfo":{"name":"peers-test","version":"0"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

var client = &http.Client{Timeout: 20 * time.Second}

// post sends one JSON-RPC request and returns the response with the given id,
// read from a JSON body or from an SSE stream.
func post(t *testing.T, url, body string, hdr map[string]string) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("POST %s: reading body: %v", url, err)
		}
		var msg map[string]any
		if err := json.Unmarshal(data, &msg); err != nil {
			t.Fatalf("POST %s: %s %q: not JSON: %v", url, resp.Status, data, err)
		}
		return resp, msg
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
			continue
		}
		if line != "" || len(data) == 0 {
			continue
		}
		payload := strings.Join(data, "\n")
		data = nil
		if strings.TrimSpace(payload) == "" {
			continue // priming event
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(payload), &msg); err != nil {
			t.Fatalf("POST %s: SSE data %q: %v", url, payload, err)
		}
		if _, ok := msg["id"]; ok {
			return resp, msg
		}
	}
	t.Fatalf("POST %s: SSE stream ended without a response (%v)", url, sc.Err())
	return nil, nil
}

func result(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	r, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result in %v", msg)
	}
	return r
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	name, args := EverythingStdio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
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
	defer func() {
		// server-everything does not exit on stdin EOF while it holds timers.
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	if _, err := io.WriteString(stdin, initialize+"\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var msg map[string]any
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		if _, ok := msg["id"]; !ok {
			continue // it may notify before the initialize result
		}
		if v := result(t, msg)["protocolVersion"]; v != "2025-11-25" {
			t.Fatalf("protocolVersion %v", v)
		}
		return
	}
	t.Fatalf("stdout ended without an initialize result: %v", sc.Err())
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := StartEverythingHTTP(t, "streamableHttp")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("url %q", url)
	}
	resp, msg := post(t, url, initialize, nil)
	if resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("no Mcp-Session-Id header")
	}
	info, _ := result(t, msg)["serverInfo"].(map[string]any)
	if info["name"] != "mcp-servers/everything" {
		t.Fatalf("serverInfo %v", info)
	}
}

func TestEverythingSSE(t *testing.T) {
	t.Parallel()
	url := StartEverythingHTTP(t, "sse")
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	endpoint := false
	for sc.Scan() {
		line := sc.Text()
		if line == "event: endpoint" {
			endpoint = true
			continue
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && endpoint {
			if !strings.Contains(d, "/message?sessionId=") {
				t.Fatalf("endpoint %q", d)
			}
			return
		}
	}
	t.Fatalf("no endpoint event: %v", sc.Err())
}

func TestTSv1Resumable(t *testing.T) {
	t.Parallel()
	url := StartTSv1Resumable(t)
	resp, msg := post(t, url, initialize, nil)
	if resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("no Mcp-Session-Id header")
	}
	info, _ := result(t, msg)["serverInfo"].(map[string]any)
	if info["name"] != "ts-v1-resumable" {
		t.Fatalf("serverInfo %v", info)
	}
	resp, msg = post(t, url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		map[string]string{"Mcp-Session-Id": "no-such-session", "Mcp-Protocol-Version": "2025-11-25"})
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: status %d, want 404", resp.StatusCode)
	}
	if e, _ := msg["error"].(map[string]any); e["code"] != float64(-32001) {
		t.Errorf("unknown session: %v, want error -32001", msg)
	}
}

func TestTSv2Discover(t *testing.T) {
	t.Parallel()
	url := StartTSv2(t)
	_, msg := post(t, url, discover, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"})
	r := result(t, msg)
	versions, _ := r["supportedVersions"].([]any)
	if !slices.Contains(versions, any("2026-07-28")) {
		t.Fatalf("supportedVersions %v", r["supportedVersions"])
	}
	meta, _ := r["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "ts-v2-server" {
		t.Fatalf("serverInfo %v", meta)
	}
}

func TestTSv2Stdio(t *testing.T) {
	t.Parallel()
	name, args := TSv2Stdio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(discover + "\n") // it answers, then exits on stdin EOF
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts-v2-server stdio: %v", err)
	}
	var msg map[string]any
	if err := json.Unmarshal(out, &msg); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	if v, _ := result(t, msg)["supportedVersions"].([]any); !slices.Contains(v, any("2026-07-28")) {
		t.Fatalf("discover over stdio: %v", msg)
	}
}

// TestNode22Tools checks the Node 22 binary and that the CLIs needing it
// start: both conformance suites and the Inspector.
func TestNode22Tools(t *testing.T) {
	t.Parallel()
	node := Node22(t)
	if major := nodeMajor(node); major < 22 {
		t.Fatalf("%s is Node %d, want >= 22", node, major)
	}
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, node, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", node, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	for _, c := range []struct {
		next bool
		want string
	}{{false, "0.1.16"}, {true, "0.2.0-alpha.12"}} {
		_, script := Conformance(t, c.next)
		if got := run(script, "--version"); got != c.want {
			t.Errorf("conformance (next=%v) --version = %q, want %q", c.next, got, c.want)
		}
	}
	_, inspector := Inspector(t)
	if got := run(inspector, "--cli", "--help"); !strings.Contains(got, "--method") {
		t.Errorf("inspector --cli --help: %q", got)
	}
}

// fakeTB records how a helper gave up; Skip and Fatal end the goroutine as
// the real ones do.
type fakeTB struct {
	testing.TB
	mu      sync.Mutex
	skipped string
	failed  string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.mu.Lock()
	f.skipped = fmt.Sprint(args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func runFake(t *testing.T, fn func(testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestRequireMissingPeers(t *testing.T) {
	t.Setenv(EnvPeers, t.TempDir())
	if _, ok := Dir(); ok {
		t.Fatal("Dir() reports an empty folder as installed")
	}

	t.Setenv(EnvRequire, "")
	f := runFake(t, func(tb testing.TB) { Require(tb) })
	if f.failed != "" || !strings.Contains(f.skipped, "scripts/test.sh") {
		t.Errorf("without %s: skipped=%q failed=%q, want a skip naming scripts/test.sh", EnvRequire, f.skipped, f.failed)
	}

	t.Setenv(EnvRequire, "1")
	f = runFake(t, func(tb testing.TB) { StartTSv2(tb) })
	if f.skipped != "" || !strings.Contains(f.failed, "scripts/test.sh") {
		t.Errorf("with %s=1: skipped=%q failed=%q, want a failure naming scripts/test.sh", EnvRequire, f.skipped, f.failed)
	}
}

// A program missing from PATH skips the test that needs it, and fails it
// under MCPSCOPE_REQUIRE_PEERS=1 (a failed install must not leave CI green).
func TestToolMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for name, pkg := range map[string]string{"tmux": "tmux", "redis-server": "redis-server", "xmllint": "libxml2-utils", "script": "bsdutils", "bash": "bash"} {
		t.Setenv(EnvRequire, "")
		f := runFake(t, func(tb testing.TB) { Tool(tb, name) })
		if f.failed != "" || !strings.Contains(f.skipped, name+" is not installed") || !strings.HasSuffix(f.skipped, "apt-get install "+pkg) {
			t.Errorf("%s without %s: skipped=%q failed=%q, want a skip saying how to install it", name, EnvRequire, f.skipped, f.failed)
		}
		t.Setenv(EnvRequire, "1")
		f = runFake(t, func(tb testing.TB) { Tool(tb, name) })
		if f.skipped != "" || !strings.Contains(f.failed, name+" is not installed") {
			t.Errorf("%s with %s=1: skipped=%q failed=%q, want a failure", name, EnvRequire, f.skipped, f.failed)
		}
	}
}

func TestToolFound(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "redis-server")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv(EnvRequire, "1")
	if got := Tool(t, "redis-server"); got != prog {
		t.Fatalf("Tool(redis-server) = %q, want %q", got, prog)
	}
}
