package cli

import (
	"bytes"
	"context"
	"fmt"
	"mcpscope/connect"
	"mcpscope/testkit/testservers"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run runs mcpscope in-process with a fresh state directory.
func run(t *testing.T, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runIn(t, t.TempDir(), argv...)
}

// Mistyped command lines end in a usage error with a hint, and start
// nothing: no server process, no connection, no demo, no journal.
func TestMistakesStartNothing(t *testing.T) {
	// A "node" on PATH that leaves a mark if anything runs it.
	bin := t.TempDir()
	mark := filepath.Join(bin, "started")
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\ntouch "+mark+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	// A listener that counts connections, for the URL without a scheme.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	hostPort := ln.Addr().String()

	cases := []struct {
		argv []string
		want []string
	}{
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`}},
		{[]string{"toosl"}, []string{`unknown command "toosl"`, `did you mean "tools"?`}},
		{[]string{"node", "x.js"}, []string{`unknown command "node"`, "mcpscope -- node x.js"}},
		{[]string{hostPort + "/mcp"}, []string{"has no scheme", "http://" + hostPort + "/mcp"}},
		{[]string{"tools", hostPort + "/mcp"}, []string{"has no scheme"}},
		{[]string{"ftp://example.com/mcp"}, []string{`unknown command "ftp://example.com/mcp"`}},
		{[]string{"tools", "--bogus"}, []string{"unknown flag: --bogus", "mcpscope tools --help"}},
		{[]string{"tools", "--url", "ftp://example.com/mcp"}, []string{`not "ftp"`}},
		{[]string{"tools", "--url", "http://"}, []string{"has no host"}},
		{[]string{"call"}, []string{"call needs a tool name"}},
		{[]string{"call", "echo", `{"message":"x"}`, "--", "node", "x.js"}, []string{"arguments as JSON go in --args"}},
		{[]string{"tools", "--era", "newest"}, []string{"--era takes auto, legacy or modern"}},
		{[]string{"tools", "--timeout", "soon"}, []string{"30s or 5m"}},
		{[]string{"tools", "--root", "https://example.com/x", "--", "node", "x.js"}, []string{"--root takes a directory, a file:// URI, ask or none"}},
		{[]string{"tools", "--root", "ask", "--", "node", "x.js"}, []string{"--root ask needs a person to ask"}},
		{[]string{"tools", "--root", "none", "--root", ".", "--", "node", "x.js"}, []string{"--root none stands alone"}},
		{[]string{"--"}, []string{"nothing after --"}},
		{[]string{"task", "frobnicate", "1"}, []string{"task actions are get, result, cancel and update"}},
		{[]string{"journal"}, []string{"journal needs one file path"}},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.argv, " "), func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			var out, errb bytes.Buffer
			code := Run(context.Background(), c.argv, &out, &errb)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, out.String(), errb.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
			if entries, _ := os.ReadDir(state); len(entries) > 0 {
				t.Errorf("a usage error left state behind: %v", entries)
			}
		})
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("a mistyped command line started a server process")
	}
	select {
	case <-accepted:
		t.Error("a URL without a scheme was connected to")
	default:
	}
}

// Each command's help shows its own flags, not every flag of every command.
func TestHelpPerCommand(t *testing.T) {
	code, out, errb := run(t, "call", "--help")
	if code != exitOK {
		t.Fatalf("call --help: exit %d\n%s", code, errb)
	}
	for _, want := range []string{"--args", "--task", "--ttl", "--timeout", "--bearer", "mcpscope call echo message=hello"} {
		if !strings.Contains(out, want) {
			t.Errorf("call --help lacks %s", want)
		}
	}
	for _, not := range []string{"--forget", "--count", "--tools", "--browser-login"} {
		if strings.Contains(out, not) {
			t.Errorf("call --help shows another command's flag %s", not)
		}
	}
	_, out, _ = run(t, "journal", "--help")
	if strings.Contains(out, "--bearer") || strings.Contains(out, "--timeout") {
		t.Errorf("journal reads a file: its help should show no connection flags:\n%s", out)
	}
	if code, _, _ := run(t, "journal", "--bearer", "x", "j.jsonl"); code != exitUsage {
		t.Errorf("journal --bearer: exit %d, want a usage error", code)
	}
}

func TestCompletionManVersion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "bash completion", "zsh": "#compdef mcpscope", "fish": "complete -c mcpscope"} {
		code, out, errb := run(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, %q not in the script\n%s", shell, code, want, errb)
		}
	}
	code, out, _ := run(t, "man")
	if code != exitOK || !strings.HasPrefix(out, ".TH MCPSCOPE 1") || !strings.Contains(out, "rejoin") || !strings.Contains(out, "--max-timeout") {
		t.Errorf("man: exit %d, not a man page of mcpscope's commands:\n%.300s", code, out)
	}
	for _, argv := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := run(t, argv...)
		if code != exitOK || !strings.Contains(out, "0.1.0") {
			t.Errorf("%v: exit %d, %q", argv, code, out)
		}
	}
}

// Flags may come before or after positional arguments; -- still ends them.
func TestFlagPlacement(t *testing.T) {
	code, _, errb := run(t, "--no-journal", "frobnicate")
	if code != exitUsage || !strings.Contains(errb, "frobnicate") {
		t.Fatalf("a flag before an unknown command: exit %d\n%s", code, errb)
	}
	for _, argv := range [][]string{
		{"call", "echo", "message=x", "--no-journal", "--timeout", "5s"},
		{"--no-journal", "call", "--timeout", "5s", "echo", "message=x"},
	} {
		code, out, errb := runT(t, argv...)
		if code != exitOK || !strings.Contains(out, "x") {
			t.Errorf("%v: exit %d\n%s\n%s", argv, code, out, errb)
		}
	}
}

// The command line the inspector's Y copies keeps what the target needs
// (-H, -e, --bearer, --cwd) with every secret as a $VARIABLE reference.
func TestTargetLineKeepsFlagsNotSecrets(t *testing.T) {
	sp := connect.Spec{URL: "http://127.0.0.1:3001/mcp", Bearer: "CANARY-b", Headers: map[string]string{
		"X-Api-Key": "CANARY-k", "X-Trace": "on"}}
	got := targetLine(sp)
	want := `-H "X-Api-Key: $X_API_KEY" -H 'X-Trace: on' --bearer "$MCPSCOPE_BEARER" http://127.0.0.1:3001/mcp`
	if got != want {
		t.Fatalf("targetLine:\n got %s\nwant %s", got, want)
	}
	sp = connect.Spec{Command: []string{"node", "server.js"}, Env: []string{"GITHUB_TOKEN=CANARY-g", "DEBUG=1"}, Dir: "/srv/x y"}
	got = targetLine(sp)
	want = `-e "GITHUB_TOKEN=$GITHUB_TOKEN" -e DEBUG=1 --cwd '/srv/x y' -- node server.js`
	if got != want || strings.Contains(got, "CANARY") {
		t.Fatalf("targetLine:\n got %s\nwant %s", got, want)
	}
}

// A configured server is reached by name: --server NAME on any command,
// with the host's env, args and headers (secrets stay in the file).
func TestServerByName(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	bin := testservers.BuildStdio(t)
	cfg := fmt.Sprintf(`{"mcpServers":{"demo":{"command":%q,"args":["-no-die"],"env":{"API_TOKEN":"CANARY-srv"}}}}`, bin)
	if err := os.MkdirAll(filepath.Join(home, ".config", "mcpscope"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "mcpscope", "servers.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb := run(t, "tools", "--server", "demo", "--no-journal")
	if code != exitOK || !strings.Contains(out, "echo") || strings.Contains(out+errb, "CANARY") {
		t.Fatalf("tools --server demo: exit %d\n%s\n%s", code, out, errb)
	}
	if code, _, errb := run(t, "tools", "--server", "nosuch", "--no-journal"); code != exitUsage || !strings.Contains(errb, "nosuch") {
		t.Fatalf("an unknown server name: exit %d\n%s", code, errb)
	}
	if code, _, errb := run(t, "tools", "--server", "demo", "http://127.0.0.1:1/mcp"); code != exitUsage || !strings.Contains(errb, "not both") {
		t.Fatalf("--server with a target: exit %d\n%s", code, errb)
	}
	if !isConfiguredServer("demo") || isConfiguredServer("frobnicate") {
		t.Fatal("mcpscope NAME should know demo and not frobnicate")
	}
}
