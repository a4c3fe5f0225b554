package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"mcpscope/artifact/scan"
	"mcpscope/connect"
	"mcpscope/session"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/recordtest"
	"mcpscope/testkit/testservers"
	"mcpscope/transport"
)

// peerRecording is a session recorded against a real server, with what a
// client must get back from mcpscope serve.
type peerRecording struct {
	name    string
	journal string
	echoArg string   // the name of the echo tool's argument
	tools   []string // the recorded tools/list, by name
	echo    string   // the recorded text echo answered
	live    func(t *testing.T) []string
}

// recordPeers records server-everything 2026.8.31 over stdio (initialize
// era), the TypeScript SDK v2 server over HTTP (2026-07-28) and the Go SDK
// test server over stdio (2026-07-28 as the Go SDK serves it): every list,
// echo, and a deterministic call of its own. live gives the argv (after
// "replay FILE") that reaches a fresh instance of the same server.
func recordPeers(t *testing.T) []*peerRecording {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	evCmd, evArgs := peers.EverythingStdio(t)
	everything := append([]string{evCmd}, evArgs...)
	goserver := testservers.BuildStdio(t)
	recs := []*peerRecording{
		{name: "server-everything", echoArg: "message", live: func(*testing.T) []string { return append([]string{"--"}, everything...) }},
		{name: "ts-sdk-v2", echoArg: "text", live: func(t *testing.T) []string { return []string{peers.StartTSv2(t)} }},
		{name: "go-sdk", echoArg: "message", live: func(*testing.T) []string { return []string{"--", goserver} }},
	}
	specs := map[string]connect.Spec{
		"server-everything": {Command: everything},
		"ts-sdk-v2":         {URL: peers.StartTSv2(t)},
		"go-sdk":            {Command: []string{goserver}},
	}
	for _, r := range recs {
		r.journal = recordtest.Record(t, r.name, specs[r.name], func(ctx context.Context, t testing.TB, s *session.Session) {
			recordtest.Lists(ctx, t, s)
			if _, err := recordtest.Tool(ctx, t, s, "echo", map[string]any{r.echoArg: "hello"}); err != nil {
				t.Fatalf("%s echo: %v", r.name, err)
			}
			switch r.name {
			case "server-everything":
				recordtest.Tool(ctx, t, s, "get-sum", map[string]any{"a": 2, "b": 3})
			case "ts-sdk-v2":
				recordtest.Tool(ctx, t, s, "slow", map[string]any{"steps": 2, "intervalMs": 50})
			}
		})
		scan.File(r.journal, scan.Options{}, func(fr *scan.Frame) error {
			if fr.Dir != transport.In || fr.Call == nil || fr.Env == nil || fr.Env.Result == nil {
				return nil
			}
			switch {
			case fr.Call.Method == "tools/list" && r.tools == nil:
				var res struct{ Tools []struct{ Name string } }
				json.Unmarshal(fr.Env.Result, &res)
				for _, tl := range res.Tools {
					r.tools = append(r.tools, tl.Name)
				}
			case fr.Call.Method == "tools/call" && fr.Call.Name == "echo":
				var res struct{ Content []struct{ Text string } }
				json.Unmarshal(fr.Env.Result, &res)
				r.echo = res.Content[0].Text
			}
			return nil
		})
		if len(r.tools) == 0 || !strings.Contains(r.echo, "hello") {
			t.Fatalf("%s: the recording holds tools %v and echo %q", r.name, r.tools, r.echo)
		}
	}
	return recs
}

// serveHTTP starts mcpscope serve FILE --http on a free port and returns
// its endpoint; the process ends with the test.
func serveHTTP(t *testing.T, journal string) string {
	t.Helper()
	cmd := mcpscope(t, t.TempDir(), "serve", journal, "--http", "127.0.0.1:0", "--quiet")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case l := <-line:
		f := strings.Fields(l)
		if len(f) == 0 || !strings.HasPrefix(f[len(f)-1], "http://") {
			t.Fatalf("serve --http said %q", l)
		}
		return f[len(f)-1]
	case <-time.After(hangGuard):
		t.Fatal("serve --http did not say where it listens")
	}
	return ""
}

// TestServeToRealClients: a recording of each real server, served by
// mcpscope serve over stdio and over HTTP, gives the official Inspector
// CLI and the Go SDK's client the recorded answers.
func TestServeToRealClients(t *testing.T) {
	node, inspector := peers.Inspector(t)
	bin := binary(t)
	for _, r := range recordPeers(t) {
		t.Run(r.name, func(t *testing.T) {
			url := serveHTTP(t, r.journal)
			for _, via := range []struct {
				name   string
				target []string
			}{
				{"stdio", []string{bin, "serve", r.journal, "--quiet"}},
				{"http", []string{url, "--transport", "http"}},
			} {
				inspect := func(args ...string) []byte {
					t.Helper()
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					argv := append(append([]string{inspector, "--cli"}, via.target...), args...)
					out, err := exec.CommandContext(ctx, node, argv...).CombinedOutput()
					if err != nil {
						t.Fatalf("inspector --cli over %s %v: %v\n%s", via.name, args, err, out)
					}
					return out
				}
				var list struct{ Tools []struct{ Name string } }
				if out := inspect("--method", "tools/list"); json.Unmarshal(out, &list) != nil {
					t.Fatalf("inspector over %s: tools/list printed\n%s", via.name, out)
				}
				var names []string
				for _, tl := range list.Tools {
					names = append(names, tl.Name)
				}
				if !slices.Equal(names, r.tools) {
					t.Errorf("inspector over %s: tools %v, recorded %v", via.name, names, r.tools)
				}
				out := inspect("--method", "tools/call", "--tool-name", "echo", "--tool-arg", r.echoArg+"=hello")
				if !strings.Contains(string(out), r.echo) {
					t.Errorf("inspector over %s: echo printed\n%s\nrecorded %q", via.name, out, r.echo)
				}
			}
			for _, via := range []string{"stdio", "http"} {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
				if via == "stdio" {
					tr = &mcp.CommandTransport{Command: exec.Command(bin, "serve", r.journal, "--quiet")}
				}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, tr, nil)
				if err != nil {
					t.Fatalf("Go SDK client over %s: %v", via, err)
				}
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{r.echoArg: "hello"}})
				if err != nil || res.Content[0].(*mcp.TextContent).Text != r.echo {
					t.Errorf("Go SDK client over %s: %v %v, recorded %q", via, res, err, r.echo)
				}
				tools, err := cs.ListTools(ctx, nil)
				if err != nil || len(tools.Tools) != len(r.tools) {
					t.Errorf("Go SDK client over %s: tools/list %v", via, err)
				}
				cs.Close()
			}
		})
	}
}

// TestReplayAgainstRealServers: each recording replayed against a fresh
// instance of its server shows no difference; replayed against another
// server, the differences are reported and the exit status is 1.
func TestReplayAgainstRealServers(t *testing.T) {
	bin := binary(t)
	recs := recordPeers(t)
	for _, r := range recs {
		t.Run(r.name, func(t *testing.T) {
			argv := append([]string{"replay", r.journal, "--no-timing"}, r.live(t)...)
			out, err := mcpscope(t, t.TempDir(), argv...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), " 0 differ") {
				t.Fatalf("replay against %s: %v\n%s", r.name, err, out)
			}
		})
	}
	// server-everything's session against the embedded demo: echo answers
	// otherwise, get-sum does not exist.
	out, err := mcpscope(t, t.TempDir(), "replay", recs[0].journal, "--no-timing", "--", bin, "demo").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("replay against a changed server: %v, want exit 1\n%s", err, out)
	}
	for _, want := range []string{"tools/call echo", "tools/call get-sum", "differs", `"Echo: hello" → "hello"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
