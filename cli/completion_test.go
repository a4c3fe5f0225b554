package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/testkit/peers"
	"mcpscope/testkit/testservers"
)

// asMain makes the test binary run as mcpscope itself (TestMain), for a
// shell's completion script to call.
const asMain = "MCPSCOPE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// mcpscopeOnPath puts the test binary on PATH as mcpscope, running as it.
func mcpscopeOnPath(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "mcpscope")); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), asMain+"=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The bash script completes flag values and arguments from their real
// values, in a bash without the bash-completion package: the script is
// sourced in a real bash and its completion function called as TAB would.
func TestCompletionBash(t *testing.T) {
	bash := peers.Tool(t, "bash") // a skip, or under MCPSCOPE_REQUIRE_PEERS=1 a failure
	noProxies(t)
	// A call left running, for rejoin HANDLE.
	if err := statestore.Default().Put(statestore.Detached{Handle: "20261126T010000-42-7", Target: "http://127.0.0.1:1/mcp",
		Transport: "http", RequestID: []byte("7"), Method: "tools/call", Name: "slow", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// A running proxy, for attach NAME: up once it says where to point a
	// host (its socket is published before).
	ctx, stop := context.WithCancel(context.Background())
	ready, proxyDone := &readyWriter{said: "point the host at", ready: make(chan struct{})}, make(chan int, 1)
	go func() {
		proxyDone <- Run(ctx, []string{"proxy", "--no-journal", "--name", "compl-proxy", "--listen", "127.0.0.1:0", "http://127.0.0.1:1/mcp"}, io.Discard, ready)
	}()
	defer func() { stop(); <-proxyDone }()
	select {
	case <-ready.ready:
	case code := <-proxyDone:
		t.Fatalf("the proxy ended (exit %d) before it was up", code)
	case <-time.After(time.Minute): // a hang guard
		t.Fatal("the proxy was not up within a minute")
	}

	complete := bashCompleter(t, bash)
	has := func(got []string, want string) bool {
		for _, g := range got {
			if g == want || strings.HasPrefix(g, want+" ") {
				return true
			}
		}
		return false
	}
	for line, want := range map[string][]string{
		"mcpscope export j.jsonl --format ": {"jsonl", "har", "otlp"},
		"mcpscope call echo --era ":         {"auto", "legacy", "modern"},
		"mcpscope tools --transport ":       {"http", "sse"},
		"mcpscope rejoin --state ":          {"file", "redis://", "rediss://"},
		"mcpscope completion ":              {"bash", "zsh", "fish"},
		"mcpscope wrap --host ":             {"claude-code", "cursor"},
		"mcpscope rejoin ":                  {"20261126T010000-42-7"},
		"mcpscope attach ":                  {"compl-proxy"},
	} {
		got := complete(line)
		for _, w := range want {
			if !has(got, w) {
				t.Errorf("%q completes %q, want %q among them", line, got, w)
			}
		}
	}
	if got := complete("mcpscope call echo --era l"); len(got) != 1 || got[0] != "legacy" {
		t.Errorf("--era l completes %q, want legacy", got)
	}
	// No file names where a value is wanted.
	if got := complete("mcpscope tools --transport "); has(got, "go.mod") || has(got, "completion.go") {
		t.Errorf("--transport completes file names: %q", got)
	}
}

// bashCompleter sources the bash script in a real bash without the
// bash-completion package and returns what TAB at the end of a line
// offers, mcpscope on PATH being the test binary run as it.
func bashCompleter(t *testing.T, bash string) func(line string) []string {
	t.Helper()
	var script bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "bash"}, &script, io.Discard); code != exitOK {
		t.Fatalf("completion bash: exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "mcpscope.bash")
	if err := os.WriteFile(file, script.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := mcpscopeOnPath(t)
	return func(line string) []string {
		t.Helper()
		// COMP_WORDS as bash splits them (= and : break words too); the
		// script must not need them right, it reads COMP_LINE.
		prog := `declare -F _init_completion _get_comp_words_by_ref && exit 8 # no bash-completion here
source "$1" || exit 9
COMP_LINE="$2"; COMP_POINT=${#COMP_LINE}
read -r -a COMP_WORDS <<<"$COMP_LINE"; [[ $COMP_LINE == *' ' ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_mcpscope
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog, "bash", file, line)
		cmd.Env = env
		var errb bytes.Buffer
		cmd.Stderr = &errb // compopt says it is not run by TAB: true, and harmless
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s%s", line, err, out, errb.String())
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				got = append(got, l)
			}
		}
		return got
	}
}

// readyWriter closes ready once what is written to it has said said.
type readyWriter struct {
	said  string
	ready chan struct{}
	buf   []byte
}

func (w *readyWriter) Write(p []byte) (int, error) {
	before := bytes.Contains(w.buf, []byte(w.said))
	w.buf = append(w.buf, p...)
	if !before && bytes.Contains(w.buf, []byte(w.said)) {
		close(w.ready)
	}
	return len(p), nil
}

// call's TOOL completes from the tools of the target the line names
// (--url, --server NAME, over HTTP and stdio), asked once per target
// within a few seconds and cached briefly: a dead server, or a mute one,
// leaves the shell waiting at most that long, and only once.
func TestCompletionToolNames(t *testing.T) {
	bash := peers.Tool(t, "bash") // a skip, or under MCPSCOPE_REQUIRE_PEERS=1 a failure
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	// A configured server, over stdio: the demo.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	configure(t, home, map[string]any{"local-demo": map[string]any{"command": self, "args": []string{"demo"}}})
	demoURL := testservers.StartDemoHTTP(t)
	tiny := newTinyMCP(t)
	// A server that takes connections and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	complete := bashCompleter(t, bash)

	for line, want := range map[string][]string{
		"mcpscope call --url " + demoURL + " ":    {"echo", "slow", "ask"},
		"mcpscope call --url " + demoURL + " ec":  {"echo"},
		"mcpscope call --server local-demo sl":    {"slow"},
		"mcpscope call --url=" + tiny.URL + " ti": {"tiny-tool"},
	} {
		got := complete(line)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes %q, want %q among them", line, got, w)
			}
		}
		if strings.HasSuffix(line, "ec") && slices.Contains(got, "slow") {
			t.Errorf("%q completes %q: names that do not start with ec too", line, got)
		}
	}
	// Cached: the next TAB asks nothing.
	lists := func() (n int) {
		for _, r := range tiny.requests() {
			if strings.HasPrefix(r, "POST ") {
				n++
			}
		}
		return n
	}
	before := lists()
	if got := complete("mcpscope call --url " + tiny.URL + " "); !slices.Equal(got, []string{"tiny-tool"}) {
		t.Errorf("from the cache: %q, want [tiny-tool]", got)
	}
	if after := lists(); after != before {
		t.Errorf("a second TAB within the cache's life sent %d requests, want none", after-before)
	}
	// Nothing, and no file names, without a target or from a dead one.
	for _, line := range []string{"mcpscope call ", "mcpscope call --url http://127.0.0.1:1/mcp "} {
		if got := complete(line); len(got) != 0 {
			t.Errorf("%q completes %q, want nothing", line, got)
		}
	}
	// A mute server: bounded, then cached.
	muteURL := "http://" + mute.Addr().String() + "/mcp"
	start := time.Now()
	if got := complete("mcpscope call --url " + muteURL + " "); len(got) != 0 {
		t.Errorf("a mute server completes %q, want nothing", got)
	}
	if took := time.Since(start); took > toolLookupLimit+5*time.Second {
		t.Errorf("a mute server held the completion %v, want about %v at most", took, toolLookupLimit)
	}
	n := accepted.Load()
	if n == 0 {
		t.Fatal("the mute server was never asked")
	}
	complete("mcpscope call --url " + muteURL + " ")
	if accepted.Load() != n {
		t.Error("a second TAB asked the mute server again: its failure was not cached")
	}
}

// configure writes servers as mcpscope's own servers.json under home's
// config directory (XDG_CONFIG_HOME must point there).
func configure(t *testing.T, home string, servers map[string]any) {
	t.Helper()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.MkdirAll(filepath.Join(home, "config", "mcpscope"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "mcpscope", "servers.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}

// server-everything over stdio, configured as hosts configure it.
func TestCompletionToolNamesEverything(t *testing.T) {
	bash := peers.Tool(t, "bash") // a skip, or under MCPSCOPE_REQUIRE_PEERS=1 a failure
	node, args := peers.EverythingStdio(t)
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	configure(t, home, map[string]any{"everything": map[string]any{"command": node, "args": args}})
	got := bashCompleter(t, bash)("mcpscope call --server everything ")
	for _, w := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
		if !slices.Contains(got, w) {
			t.Errorf("server-everything completes %q, want %q among them", got, w)
		}
	}
}
