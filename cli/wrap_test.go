package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wrap, wrap --list and unwrap from the command line: the entry runs this
// mcpscope as a proxy, then comes back byte for byte.
func TestWrapCommand(t *testing.T) {
	e := hostsSetup(t)
	file := e.Files["claude-desktop"]
	orig, _ := os.ReadFile(file)
	self, _ := os.Executable()

	code, out, errb := hostsRun(t, "wrap", "filesystem")
	if code != exitOK || !strings.Contains(out, "wrapped filesystem in ~/.config/Claude/claude_desktop_config.json: Claude Desktop now starts") ||
		!strings.Contains(out, "proxy --name filesystem -- npx -y @modelcontextprotocol/server-filesystem /home/me/Documents") ||
		!strings.Contains(out, "backup of the file as it was: ~/.config/Claude/claude_desktop_config.json.mcpscope-backup-") {
		t.Fatalf("wrap: exit %d\n%s%s", code, out, errb)
	}
	var cfg struct {
		McpServers map[string]struct {
			Command string
			Args    []string
		}
	}
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &cfg); err != nil || cfg.McpServers["filesystem"].Command != self ||
		strings.Join(cfg.McpServers["filesystem"].Args, " ") != "proxy --name filesystem -- npx -y @modelcontextprotocol/server-filesystem /home/me/Documents" {
		t.Fatalf("wrapped file (%v):\n%s", err, b)
	}

	code, out, _ = hostsRun(t, "wrap", "--list")
	if code != exitOK || !strings.Contains(out, "filesystem  in ~/.config/Claude/claude_desktop_config.json\n  runs npx -y @modelcontextprotocol/server-filesystem /home/me/Documents") {
		t.Errorf("wrap --list: exit %d\n%s", code, out)
	}
	code, out, _ = hostsRun(t, "wrap", "--list", "--json")
	var list struct{ Wrapped []struct{ Selector string } }
	if err := json.Unmarshal([]byte(out), &list); code != exitOK || err != nil || len(list.Wrapped) != 1 || list.Wrapped[0].Selector != "filesystem" {
		t.Errorf("wrap --list --json: exit %d, %v\n%s", code, err, out)
	}
	if _, out, _ = hostsRun(t, "servers"); !strings.Contains(out, "wrapped: Claude Desktop runs it through mcpscope proxy") {
		t.Errorf("servers does not say it is wrapped:\n%s", out)
	}

	code, out, errb = hostsRun(t, "unwrap", "filesystem")
	if code != exitOK || !strings.Contains(out, "unwrapped filesystem in ~/.config/Claude/claude_desktop_config.json: Claude Desktop starts it directly again") {
		t.Fatalf("unwrap: exit %d\n%s%s", code, out, errb)
	}
	if b, _ := os.ReadFile(file); !bytes.Equal(b, orig) {
		t.Errorf("unwrap did not give the file back:\n%s", b)
	}
	if _, out, _ = hostsRun(t, "wrap", "--list"); !strings.HasPrefix(out, "no server runs through mcpscope proxy") {
		t.Errorf("wrap --list after unwrap:\n%s", out)
	}

	// --host picks among hosts that share a name.
	if code, out, errb = hostsRun(t, "wrap", "--host", "cursor", "github"); code != exitOK || !strings.Contains(out, "wrapped cursor/github in ~/work/proj/.cursor/mcp.json") {
		t.Errorf("wrap --host cursor github: exit %d\n%s%s", code, out, errb)
	}
	if code, _, errb = hostsRun(t, "unwrap", "cursor/github"); code != exitOK {
		t.Errorf("unwrap cursor/github: exit %d\n%s", code, errb)
	}
}

// What wrap cannot do is a usage error that changes nothing.
func TestWrapCommandRefuses(t *testing.T) {
	e := hostsSetup(t)
	before := map[string]string{}
	for n, f := range e.Files {
		b, _ := os.ReadFile(f)
		before[n] = string(b)
	}
	for _, c := range []struct {
		argv []string
		want []string
	}{
		{[]string{"wrap", "sentry"}, []string{"is an http server: wrapping HTTP servers is not supported yet", "nothing changed"}},
		{[]string{"wrap", "github"}, []string{`"github" names 4 configured servers; pick one with HOST/NAME (or --host)`, "claude-desktop/github", "cursor/github"}},
		{[]string{"wrap", "nope"}, []string{`no MCP server named "nope"`, "mcpscope servers"}},
		{[]string{"wrap", "--host", "windsurf", "filesystem"}, []string{`no MCP server named "windsurf/filesystem" in Windsurf's configuration`}},
		{[]string{"wrap", "everything"}, []string{"no host starts it"}},
		{[]string{"unwrap", "memory"}, []string{"does not run through mcpscope proxy"}},
		{[]string{"wrap"}, []string{"wrap needs one server name"}},
		{[]string{"wrap", "--list", "memory"}, []string{"wrap --list takes no server name"}},
		{[]string{"unwrap"}, []string{"unwrap needs one server name"}},
	} {
		code, _, errb := hostsRun(t, c.argv...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", c.argv, code, exitUsage, errb)
		}
		for _, w := range c.want {
			if !strings.Contains(errb, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.argv, w, errb)
			}
		}
	}
	for n, f := range e.Files {
		if b, _ := os.ReadFile(f); string(b) != before[n] {
			t.Errorf("%s changed", f)
		}
		if ms, _ := filepath.Glob(f + ".mcpscope-backup-*"); len(ms) > 0 {
			t.Errorf("backups left: %v", ms)
		}
	}
}

// wrap cannot find a server of a file it cannot parse, says which file it
// could not read, and leaves it alone.
func TestWrapCommandBrokenFile(t *testing.T) {
	e := hostsSetup(t)
	const text = `{"mcpServers": {"brave-search": {"command": "npx",}`
	broken := e.Write(t, "windsurf", text)
	code, _, errb := hostsRun(t, "wrap", "brave-search")
	if code != exitUsage || !strings.Contains(errb, `no MCP server named "brave-search"`) || !strings.Contains(errb, broken+": cannot parse it") {
		t.Errorf("wrap in a broken file: exit %d\n%s", code, errb)
	}
	if b, _ := os.ReadFile(broken); string(b) != text {
		t.Error("the broken file changed")
	}
	if ms, _ := filepath.Glob(broken + ".mcpscope-backup-*"); len(ms) > 0 {
		t.Errorf("backups left: %v", ms)
	}
}
