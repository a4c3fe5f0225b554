package cli

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/proxy"
)

// noProxies points every place proxies' sockets are looked for at empty
// temporary directories (a proxy running on this machine is not seen, and a
// proxy the test starts is seen by no other test). The runtime dir is short
// enough for any proxy name's socket, so that is where a test's proxy goes.
func noProxies(t *testing.T) string {
	t.Helper()
	run, err := os.MkdirTemp("", "np")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	t.Setenv("XDG_RUNTIME_DIR", run)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("TMPDIR", t.TempDir())
	return filepath.Join(run, "mcpscope", "proxies")
}

// fakeProxy listens where a proxy named name would and says hello to each
// viewer, as a running proxy does.
func fakeProxy(t *testing.T, dir, name, target string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", proxy.SocketPath(dir, name, os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	hello, _ := json.Marshal(proxy.Hello{Type: "hello", Name: name, PID: os.Getpid(), Transport: "stdio", Target: target})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			w := bufio.NewWriter(c)
			w.Write(append(hello, '\n'))
			w.Flush()
			c.Close()
		}
	}()
}

func TestAttachWithoutARunningProxy(t *testing.T) {
	noProxies(t)
	for _, args := range [][]string{{"attach"}, {"attach", "github"}} {
		code, out, errb := runIn(t, os.Getenv("XDG_STATE_HOME"), args...)
		if code != exitTransport || out != "" || !strings.Contains(errb, "no mcpscope proxy is running") ||
			!strings.Contains(errb, "mcpscope proxy --name NAME") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errb)
		}
	}
	code, _, errb := runIn(t, os.Getenv("XDG_STATE_HOME"), "attach", "a", "b")
	if code != exitUsage || !strings.Contains(errb, `"b" is one too many`) {
		t.Errorf("two names: exit %d, %q", code, errb)
	}
}

// With several proxies running, attach needs a name (a usage error that
// lists them); a name none has is an error that lists those running.
func TestAttachPicksAProxyByName(t *testing.T) {
	dir := noProxies(t)
	fakeProxy(t, dir, "alpha", "stdio: server-a")
	fakeProxy(t, dir, "beta", "stdio: server-b \x1b[2J")
	code, out, errb := runIn(t, os.Getenv("XDG_STATE_HOME"), "attach")
	if code != exitUsage || out != "" || !strings.Contains(errb, "2 proxies are running: name one (mcpscope attach NAME)") ||
		!strings.Contains(errb, "alpha (pid") || !strings.Contains(errb, "beta (pid") {
		t.Errorf("no name: exit %d, stderr %q", code, errb)
	}
	if strings.Contains(errb, "\x1b") {
		t.Errorf("a proxy's target reached the terminal unsanitised: %q", errb)
	}
	code, _, errb = runIn(t, os.Getenv("XDG_STATE_HOME"), "attach", "gamma")
	if code != exitTransport || !strings.Contains(errb, `no running proxy is called "gamma"; running:`) || !strings.Contains(errb, "alpha") {
		t.Errorf("unknown name: exit %d, stderr %q", code, errb)
	}
}

func TestOpenMistakes(t *testing.T) {
	notJournal := filepath.Join(t.TempDir(), "package.json")
	os.WriteFile(notJournal, []byte(`{"name":"pkg","version":"1.0.0"}`+"\n"), 0o600)
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	journal := writeFile(t, header)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"open"}, "open needs a journal file"},
		{[]string{"open", notJournal}, "is not an mcpscope journal"},
		{[]string{"open", empty}, "it is empty"},
		{[]string{"open", filepath.Join(t.TempDir(), "gone.jsonl")}, "does not exist"},
		{[]string{"open", journal, "other.jsonl"}, `"other.jsonl" is one too many`},
		{[]string{"open", journal, "http://127.0.0.1:1/mcp"}, "give the replay target as --target http://127.0.0.1:1/mcp"},
		{[]string{"open", journal, "--target", "127.0.0.1:3001/mcp"}, "has no scheme"},
		{[]string{"open", journal, "--target", "node"}, "a stdio server's command goes after --"},
	}
	for _, c := range cases {
		code, out, errb := run(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errb, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, out, errb, exitUsage, c.want)
		}
	}
}

// Not on a terminal, journal prints the summary (it opens the inspector
// only when stdout and stdin are terminals); --summary is accepted.
func TestJournalSummaryOffATerminal(t *testing.T) {
	path := writeFile(t, header+record(1, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`))
	for _, args := range [][]string{{"journal", path}, {"journal", "--summary", path}} {
		code, out, errb := run(t, args...)
		if code != exitOK || !strings.Contains(out, "frames   1 read") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errb)
		}
	}
}
