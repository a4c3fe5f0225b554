package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
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
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	noProxies(t)
	// A call left running, for rejoin HANDLE.
	if err := session.DefaultStateStore().Put(session.Detached{Handle: "20261126T010000-42-7", Target: "http://127.0.0.1:1/mcp",
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

	var script bytes.Buffer
	if code := Run(context.Background(), []string{"completion", "bash"}, &script, io.Discard); code != exitOK {
		t.Fatalf("completion bash: exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "mcpscope.bash")
	if err := os.WriteFile(file, script.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	env := mcpscopeOnPath(t)
	complete := func(line string) []string {
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
			got = append(got, strings.TrimSpace(l))
		}
		return got
	}
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
