package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"mcpscope/testkit/hoststest"
)

// hostsRun runs mcpscope in-process under the environment hostsSetup made.
// Unlike run it keeps the state directory between calls: wrap's records
// must outlive one command.
func hostsRun(t *testing.T, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), argv, &out, &errb)
	return code, out.String(), errb.String()
}

func hostsSetup(t *testing.T) *hoststest.Env {
	e := hoststest.Setup(t)
	t.Chdir(e.Project)
	return e
}

func tilded(e *hoststest.Env, p string) string {
	return "~" + strings.TrimPrefix(p, e.Home)
}

// servers lists every configured server with what to type to pick it, its
// kind, its command line or URL and its file, and never a secret.
func TestServersCommand(t *testing.T) {
	e := hostsSetup(t)
	code, out, errb := hostsRun(t, "servers")
	if code != exitOK || errb != "" {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	for _, w := range []string{
		"~/.config/Claude/claude_desktop_config.json (Claude Desktop, user)",
		"~/.claude.json (Claude Code, project ~/work/proj)",
		"~/work/proj/.vscode/mcp.json (VS Code, project ~/work/proj)",
		"claude-desktop/github  stdio  GITHUB_PERSONAL_ACCESS_TOKEN=[redacted] npx -y @modelcontextprotocol/server-github",
		"filesystem             stdio  npx -y @modelcontextprotocol/server-filesystem /home/me/Documents",
		"sentry                 http   https://mcp.sentry.dev/mcp -H 'Authorization: Bearer [redacted]'",
		"api                    sse    ",
		"vscode/github          http   https://api.githubcopilot.com/mcp/ -H 'Authorization: Bearer ${input:github_token}'",
		"${input:github_token} (VS Code prompts for it; mcpscope cannot)",
		"memory ", "time ", "local-tools ", "linear ", "disabled in this file", "brave-search ", "remote ",
		"everything ", "local ", "db ", "claude-code/db ",
		"not picked by its name: cursor/github picks the entry in ~/work/proj/.cursor/mcp.json",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("servers lacks %q", w)
		}
	}
	for _, f := range e.Files {
		if filepath.Base(f) != ".env" && !strings.Contains(out, tilded(e, f)) {
			t.Errorf("servers lacks the file %s", f)
		}
	}
	if strings.Contains(out, hoststest.Canary) {
		t.Errorf("servers shows a secret:\n%s", out)
	}

	code, out, _ = hostsRun(t, "servers", "--json")
	var v struct {
		Servers []struct {
			Selector, Name, Host, File, Kind, CommandLine string
			Env                                           map[string]string
		}
		Problems []any
		Places   []struct{ Found bool }
	}
	if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil {
		t.Fatalf("servers --json: exit %d, %v\n%s", code, err, out)
	}
	if len(v.Servers) != 35 || len(v.Problems) != 0 || len(v.Places) != 20 {
		t.Errorf("%d servers, %d problems, %d places", len(v.Servers), len(v.Problems), len(v.Places))
	}
	if s := v.Servers[0]; s.Selector != "claude-desktop/github" || s.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "[redacted]" || s.Kind != "stdio" {
		t.Errorf("first server %+v", s)
	}
	if strings.Contains(out, hoststest.Canary) {
		t.Errorf("servers --json shows a secret:\n%s", out)
	}

	code, out, _ = hostsRun(t, "servers", "--host", "cursor")
	if code != exitOK || strings.Contains(out, "sentry") || strings.Count(out, "cursor/github") != 3 || !strings.Contains(out, "linear") {
		t.Errorf("--host cursor: exit %d\n%s", code, out)
	}
	if code, _, errb := hostsRun(t, "servers", "--host", "zedd"); code != exitUsage || !strings.Contains(errb, "--host takes one of claude-desktop") {
		t.Errorf("--host zedd: exit %d\n%s", code, errb)
	}
}

// A file that cannot be parsed is a warning that names it; the rest is listed.
func TestServersWarnings(t *testing.T) {
	e := hostsSetup(t)
	broken := e.Write(t, "windsurf", `{"mcpServers": {"brave-search": {"command": "npx",}`)
	code, out, errb := hostsRun(t, "servers")
	if code != exitOK || !strings.Contains(errb, "mcpscope: warning: "+broken+": cannot parse it: line 1") || !strings.Contains(out, "filesystem") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
}

func TestServersNone(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	code, out, _ := hostsRun(t, "servers")
	if code != exitOK || !strings.HasPrefix(out, "no MCP servers configured; mcpscope looked in:") || !strings.Contains(out, "~/.cursor/mcp.json") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
