package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/proxy"
)

func TestDefaultProxyName(t *testing.T) {
	for _, c := range []struct {
		url  string
		cmd  []string
		want string
	}{
		{"", []string{"npx", "-y", "@modelcontextprotocol/server-github@1.2"}, "server-github"},
		{"", []string{"/usr/bin/node", "/srv/mcp/weather.js"}, "weather"},
		{"", []string{"uvx", "mcp-server-git", "--repository", "."}, "mcp-server-git"},
		{"", []string{"/opt/bin/my-server", "--flag"}, "my-server"},
		{"https://user:pw@example.com:8443/mcp?x=1", nil, "example.com:8443"},
	} {
		if got := defaultProxyName(c.url, c.cmd); got != c.want {
			t.Errorf("%q %q: %q, want %q", c.url, c.cmd, got, c.want)
		}
	}
}

func TestProxyUsage(t *testing.T) {
	for _, args := range [][]string{
		{"proxy"},
		{"proxy", "http://127.0.0.1:1/mcp"},
		{"proxy", "--listen", "127.0.0.1:0", "--", "cat"},
		{"proxy", "--listen", "nonsense", "http://127.0.0.1:1/mcp"},
		{"proxy", "--journal", "x", "--no-journal", "--", "cat"},
		{"proxy", "-e", "NOEQUALS", "--", "cat"},
	} {
		var out, errb bytes.Buffer
		if code := Run(context.Background(), args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, stderr %s", args, code, errb.String())
		}
		if out.Len() != 0 {
			t.Errorf("%q wrote to stdout: %q", args, out.String())
		}
	}
}

// The server's exit code is the proxy's, with nothing added on stderr,
// however long the runtime dir and $TMPDIR are (with a long one the proxy
// once said "no socket for viewers").
func TestProxyExitCodeIsTheServers(t *testing.T) {
	for _, long := range []bool{false, true} {
		noProxies(t)
		if long {
			d := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
			t.Setenv("XDG_RUNTIME_DIR", d)
			t.Setenv("TMPDIR", d)
			t.Cleanup(func() { os.RemoveAll(proxy.SocketDir()) })
		}
		var out, errb bytes.Buffer
		code := Run(context.Background(), []string{"proxy", "--no-journal", "--", "sh", "-c", "echo '{\"a\":1}'; echo oops >&2; exit 4"}, &out, &errb)
		if code != 4 || out.String() != "{\"a\":1}\n" || strings.TrimSpace(errb.String()) != "oops" {
			t.Fatalf("long runtime dir %v: exit %d, stdout %q, stderr %q", long, code, out.String(), errb.String())
		}
	}
}

func TestProxiesNoneRunning(t *testing.T) {
	noProxies(t)
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"proxies"}, &out, &errb); code != 0 || out.Len() != 0 || !strings.Contains(errb.String(), "no mcpscope proxy") {
		t.Fatalf("exit %d, %q %q", code, out.String(), errb.String())
	}
}
