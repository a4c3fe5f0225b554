package hosts

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mcpscope/testkit/hoststest"
)

func load(t *testing.T, e *hoststest.Env) *Catalog {
	t.Helper()
	c := Load(Options{Dir: e.Project, GOOS: "linux"})
	for _, p := range c.Problems {
		t.Errorf("problem: %v", p)
	}
	return c
}

// Every host's file reads into the entries it holds, field by field, in
// the hosts' order and each file's order.
func TestLoadEveryHost(t *testing.T) {
	e := hoststest.Setup(t)
	c := load(t, e)
	f, proj := e.Files, e.Project
	want := []Server{
		{Name: "github", Host: ClaudeDesktop, File: f["claude-desktop"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYdesktop000000000000000000000"},
			path: []string{"mcpServers", "github"}},
		{Name: "filesystem", Host: ClaudeDesktop, File: f["claude-desktop"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/Documents"},
			path: []string{"mcpServers", "filesystem"}},
		{Name: "sentry", Host: ClaudeCode, File: f["claude-code"], Scope: "user", Kind: "http", URL: "https://mcp.sentry.dev/mcp",
			Headers: map[string]string{"Authorization": "Bearer CANARY_sentry_token"},
			path:    []string{"mcpServers", "sentry"}},
		{Name: "github", Host: ClaudeCode, File: f["claude-code"], Scope: "user", Kind: "stdio", Command: "docker",
			Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYcode00000000000000000000000000"},
			path: []string{"mcpServers", "github"}},
		{Name: "db", Host: ClaudeCode, File: f["claude-code"], Scope: "project", Project: proj, Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-postgres", "--dsn", "postgresql://app:CANARYpw@localhost/app"}, Env: map[string]string{},
			path: []string{"projects", proj, "mcpServers", "db"}},
		{Name: "db", Host: ClaudeCode, File: f["claude-code"], Scope: "project", Project: "/elsewhere/other", Kind: "stdio",
			Command: "node", Args: []string{"other.js"},
			path: []string{"projects", "/elsewhere/other", "mcpServers", "db"}},
		{Name: "api", Host: ClaudeCode, File: f["claude-code-project"], Scope: "project", Project: proj, Kind: "sse",
			URL: "${API_BASE:-https://api.example.com}/sse", Headers: map[string]string{"X-API-Key": "${API_KEY}"},
			path: []string{"mcpServers", "api"}},
		{Name: "github", Host: VSCode, File: f["vscode"], Scope: "user", Kind: "http", URL: "https://api.githubcopilot.com/mcp/",
			Headers: map[string]string{"Authorization": "Bearer ${input:github_token}"},
			path:    []string{"servers", "github"}},
		{Name: "memory", Host: VSCode, File: f["vscode"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-memory"},
			Env:  map[string]string{"MEMORY_FILE_PATH": "${userHome}/memory.json", "OPENAI_KEY": "${env:OPENAI_KEY}"},
			path: []string{"servers", "memory"}},
		{Name: "time", Host: VSCode, File: f["vscode-settings"], Scope: "user", Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-time", "--local-timezone=Europe/Paris"},
			path: []string{"mcp", "servers", "time"}},
		{Name: "local-tools", Host: VSCode, File: f["vscode-workspace"], Scope: "project", Project: proj, Kind: "stdio",
			Command: "node", Args: []string{"${workspaceFolder}/server.js"}, Dir: "${workspaceFolder}",
			EnvFile: "${workspaceFolder}/.env", path: []string{"servers", "local-tools"}},
		{Name: "github", Host: Cursor, File: f["cursor"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CANARYcursor0000000000000000000000"},
			path: []string{"mcpServers", "github"}},
		{Name: "linear", Host: Cursor, File: f["cursor"], Scope: "user", Kind: "http", URL: "https://mcp.linear.app/sse",
			Headers: map[string]string{"Authorization": "Bearer CANARY_linear"}, Disabled: true,
			path: []string{"mcpServers", "linear"}},
		{Name: "github", Host: Cursor, File: f["cursor-project"], Scope: "project", Project: proj, Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"},
			path: []string{"mcpServers", "github"}},
		{Name: "brave-search", Host: Windsurf, File: f["windsurf"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-brave-search", "--api-key", "CANARY_brave_arg"},
			Env:  map[string]string{"BRAVE_API_KEY": "CANARY_brave"},
			path: []string{"mcpServers", "brave-search"}},
		{Name: "remote", Host: Windsurf, File: f["windsurf"], Scope: "user", Kind: "http",
			URL:     "https://example.com/mcp?api_key=CANARY_query&team=core",
			Headers: map[string]string{"Authorization": "Bearer CANARY_windsurf"},
			path:    []string{"mcpServers", "remote"}},
		{Name: "pythonTools", Host: GeminiCLI, File: f["gemini"], Scope: "user", Kind: "stdio", Command: "python",
			Args: []string{"-m", "my_mcp_server", "--port", "8080"}, Dir: "./mcp-servers/python",
			Env:  map[string]string{"DATABASE_URL": "$DB_CONNECTION_STRING", "API_KEY": "CANARY_gemini"},
			path: []string{"mcpServers", "pythonTools"}},
		{Name: "httpServer", Host: GeminiCLI, File: f["gemini"], Scope: "user", Kind: "http", URL: "http://localhost:3000/mcp",
			Headers: map[string]string{"Authorization": "Bearer CANARY_gemini_http"},
			path:    []string{"mcpServers", "httpServer"}},
		{Name: "sseServer", Host: GeminiCLI, File: f["gemini"], Scope: "user", Kind: "sse", URL: "http://localhost:8080/sse",
			path: []string{"mcpServers", "sseServer"}},
		{Name: "docs", Host: GeminiCLI, File: f["gemini-project"], Scope: "project", Project: proj, Kind: "stdio", Command: "node",
			Args: []string{"docs-server.js"}, path: []string{"mcpServers", "docs"}},
		{Name: "fetch", Host: Kiro, File: f["kiro"], Scope: "user", Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-fetch"}, Env: map[string]string{"FASTMCP_LOG_LEVEL": "ERROR"},
			path: []string{"mcpServers", "fetch"}},
		{Name: "aws-docs", Host: Kiro, File: f["kiro"], Scope: "user", Kind: "stdio", Command: "uvx",
			Args: []string{"awslabs.aws-documentation-mcp-server@latest"}, Disabled: true,
			path: []string{"mcpServers", "aws-docs"}},
		{Name: "web", Host: Kiro, File: f["kiro-project"], Scope: "project", Project: proj, Kind: "http", URL: "https://mcp.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer CANARY_kiro"}, path: []string{"mcpServers", "web"}},
		{Name: "source-control", Host: AmazonQ, File: f["amazon-q"], Scope: "user", Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-git", "--repository", "/home/me/src"}, Env: map[string]string{},
			path: []string{"mcpServers", "source-control"}},
		{Name: "sqlite", Host: AmazonQ, File: f["amazon-q-project"], Scope: "project", Project: proj, Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-sqlite", "--db-path", "./app.db"}, path: []string{"mcpServers", "sqlite"}},
		{Name: "postgres", Host: Zed, File: f["zed"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://zed:CANARYzed@localhost/app"},
			Env:  map[string]string{}, path: []string{"context_servers", "postgres"}},
		{Name: "notion", Host: Zed, File: f["zed"], Scope: "user", Kind: "http", URL: "https://mcp.notion.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer CANARY_zed"}, Disabled: true,
			path: []string{"context_servers", "notion"}},
		{Name: "old-style", Host: Zed, File: f["zed"], Scope: "user", Kind: "stdio", Command: "/usr/local/bin/old-mcp",
			Args: []string{"--stdio"}, Env: map[string]string{"TOKEN": "CANARY_zed_old"},
			path: []string{"context_servers", "old-style"}},
		{Name: "tools", Host: Zed, File: f["zed-project"], Scope: "project", Project: proj, Kind: "stdio", Command: "node",
			Args: []string{"tools.js"}, path: []string{"context_servers", "tools"}},
		{Name: "context7", Host: Codex, File: f["codex"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@upstash/context7-mcp"}, Env: map[string]string{"CONTEXT7_API_KEY": "CANARY_codex"},
			path: []string{"mcp_servers", "context7"}},
		{Name: "figma", Host: Codex, File: f["codex"], Scope: "user", Kind: "http", URL: "https://mcp.figma.com/mcp",
			Headers:  map[string]string{"X-Figma-Region": "us-east-1", "Authorization": "Bearer ${env:FIGMA_OAUTH_TOKEN}"},
			Disabled: true, path: []string{"mcp_servers", "figma"}},
		{Name: "repo", Host: Codex, File: f["codex"], Scope: "user", Kind: "stdio", Command: "uvx",
			Args: []string{"mcp-server-git", "--repository", "/home/me/src"}, Dir: "/home/me/src",
			path: []string{"mcp_servers", "repo"}},
		{Name: "local tools", Host: Codex, File: f["codex-project"], Scope: "project", Project: proj, Kind: "stdio",
			Command: "./bin/tools", Env: map[string]string{"TOOLS_TOKEN": "CANARY_codex_project"},
			path: []string{"mcp_servers", "local tools"}},
		{Name: "everything", Host: Mcpscope, File: f["mcpscope"], Scope: "user", Kind: "stdio", Command: "npx",
			Args: []string{"-y", "@modelcontextprotocol/server-everything"},
			path: []string{"mcpServers", "everything"}},
		{Name: "local", Host: Mcpscope, File: f["mcpscope"], Scope: "user", Kind: "http", URL: "http://127.0.0.1:3001/mcp",
			path: []string{"mcpServers", "local"}},
	}
	if len(c.Servers) != len(want) {
		for _, s := range c.Servers {
			t.Logf("got %s/%s in %s", s.Host, s.Name, s.File)
		}
		t.Fatalf("%d servers, want %d", len(c.Servers), len(want))
	}
	for i, w := range want {
		if !reflect.DeepEqual(c.Servers[i], w) {
			t.Errorf("server %d:\n got %+v\nwant %+v", i, c.Servers[i], w)
		}
	}
	found := 0
	for _, p := range c.Places {
		if p.Found {
			found++
		}
	}
	if len(c.Places) != 20 || found != 20 {
		t.Errorf("places %+v: want the 20 files, all found", c.Places)
	}
}

// The macOS paths, and mcpscope's servers.json as a bare object of servers.
func TestLoadMacOSPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	write := func(rel, text string) {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("Library/Application Support/Claude/claude_desktop_config.json", `{"mcpServers": {"a": {"command": "x"}}}`)
	write("Library/Application Support/Code/User/mcp.json", `{"servers": {"b": {"type": "sse", "url": "http://h/sse"}}}`)
	write(".config/mcpscope/servers.json", `{"c": {"type": "streamable-http", "url": "http://h/mcp"}}`)
	c := Load(Options{Dir: t.TempDir(), GOOS: "darwin"})
	var got []string
	for _, s := range c.Servers {
		got = append(got, s.Host+"/"+s.Name+" "+s.Kind)
	}
	want := []string{"claude-desktop/a stdio", "vscode/b sse", "mcpscope/c http"}
	if !reflect.DeepEqual(got, want) || len(c.Problems) > 0 {
		t.Fatalf("got %v (problems %v), want %v", got, c.Problems, want)
	}
}

// A file that cannot be read or parsed, and an entry that makes no sense,
// are problems that name the file; everything else is still listed.
func TestLoadProblems(t *testing.T) {
	e := hoststest.Setup(t)
	e.Write(t, "windsurf", `{"mcpServers": {"x": {"command": "a",}`)
	e.Write(t, "cursor", `{"mcpServers": {"bad": {"args": ["x"]}, "odd": {"type": "websocket", "url": "ws://h"}, "num": {"command": "a", "env": {"N": 1}}, "ok": {"command": "b"}}}`)
	unreadable := e.Write(t, "mcpscope", `{}`) // a directory in its place: unreadable even for root
	if err := os.Remove(unreadable); err != nil || os.Mkdir(unreadable, 0o755) != nil {
		t.Fatal(err)
	}
	e.Write(t, "vscode-settings", "")
	c := Load(Options{Dir: e.Project, GOOS: "linux"})
	var msgs []string
	for _, p := range c.Problems {
		msgs = append(msgs, p.Error())
	}
	all := strings.Join(msgs, "\n")
	for _, w := range []string{
		e.Files["windsurf"] + ": cannot parse it: line 1 column 38: unexpected end of JSON input",
		e.Files["cursor"] + `: server "bad": it has neither "command" nor "url"`,
		e.Files["cursor"] + `: server "odd": unknown type "websocket"`,
		e.Files["cursor"] + `: server "num": cannot read the entry: "env" holds a number where a string belongs`,
	} {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
	if !strings.Contains(all, e.Files["mcpscope"]+": cannot read it") {
		t.Errorf("the unreadable file is no problem:\n%s", all)
	}
	if _, err := c.Find("cursor/ok"); err != nil {
		t.Errorf("the good entry next to bad ones: %v", err)
	}
	if len(c.Problems) != 5 {
		t.Errorf("%d problems, want 5 (an empty file is none):\n%s", len(c.Problems), all)
	}
}

func TestFind(t *testing.T) {
	e := hoststest.Setup(t)
	c := load(t, e)
	get := func(sel string) Server {
		t.Helper()
		s, err := c.Find(sel)
		if err != nil {
			t.Fatalf("Find(%q): %v", sel, err)
		}
		return s
	}
	if s := get("filesystem"); s.Host != ClaudeDesktop {
		t.Errorf("filesystem: %s", s.Host)
	}
	if s := get("vscode/github"); s.Host != VSCode || s.Kind != "http" {
		t.Errorf("vscode/github: %+v", s)
	}
	// Cursor has github for the user and for the project: the project's wins.
	if s := get("cursor/github"); s.File != e.Files["cursor-project"] {
		t.Errorf("cursor/github from %s, want the project's file", s.File)
	}
	// db is this project's in ~/.claude.json, and another project's.
	if s := get("db"); s.Project != e.Project {
		t.Errorf("db of project %q, want %q", s.Project, e.Project)
	}
	if got := c.Selector(get("filesystem")); got != "filesystem" {
		t.Errorf("selector %q", got)
	}
	if got := c.Selector(get("cursor/github")); got != "cursor/github" {
		t.Errorf("selector %q", got)
	}

	_, err := c.Find("github")
	var amb *AmbiguousError
	if !errors.As(err, &amb) {
		t.Fatalf("github: %v, want ambiguous", err)
	}
	want := []string{"claude-desktop/github", "claude-code/github", "vscode/github", "cursor/github"}
	if !reflect.DeepEqual(amb.Selectors, want) {
		t.Errorf("candidates %v, want %v", amb.Selectors, want)
	}
	for _, w := range append(want, "pick one with HOST/NAME", e.Files["cursor-project"]) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("ambiguity error lacks %q:\n%v", w, err)
		}
	}

	var nf *NotFoundError
	_, err = c.Find("nope")
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), `no MCP server named "nope" in any host's configuration`) ||
		!strings.Contains(err.Error(), "mcpscope servers") {
		t.Errorf("nope: %v", err)
	}
	_, err = c.Find("git")
	if !strings.Contains(err.Error(), "did you mean claude-code/github or claude-desktop/github or cursor/github") {
		t.Errorf("git: %v", err)
	}
	_, err = c.Find("cursor/brave-search")
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "in Cursor's configuration") {
		t.Errorf("cursor/brave-search: %v", err)
	}
}

func TestTarget(t *testing.T) {
	e := hoststest.Setup(t)
	c := load(t, e)
	t.Setenv("OPENAI_KEY", "sk-from-env")
	t.Setenv("GITHUB_TOKEN", "ghp-from-env")
	t.Setenv("API_BASE", "")
	os.Unsetenv("API_BASE")
	t.Setenv("API_KEY", "")
	os.Unsetenv("API_KEY")
	target := func(sel string) (Target, error) {
		t.Helper()
		s, err := c.Find(sel)
		if err != nil {
			t.Fatal(err)
		}
		return s.Target()
	}
	cases := []struct {
		sel  string
		want Target
	}{
		{"claude-desktop/github", Target{Command: []string{"npx", "-y", "@modelcontextprotocol/server-github"},
			Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN=ghp_CANARYdesktop000000000000000000000"}}},
		{"sentry", Target{URL: "https://mcp.sentry.dev/mcp", Headers: map[string]string{"Authorization": "Bearer CANARY_sentry_token"}}},
		{"memory", Target{Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"},
			Env: []string{"MEMORY_FILE_PATH=" + e.Home + "/memory.json", "OPENAI_KEY=sk-from-env"}}},
		{"local-tools", Target{Command: []string{"node", e.Project + "/server.js"}, Dir: e.Project,
			Env: []string{"TOOLS_TOKEN=CANARY_envfile", "MODE=dev"}}},
		{"cursor/github", Target{Command: []string{"npx", "-y", "@modelcontextprotocol/server-github"},
			Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN=ghp-from-env"}}},
		{"remote", Target{URL: "https://example.com/mcp?api_key=CANARY_query&team=core",
			Headers: map[string]string{"Authorization": "Bearer CANARY_windsurf"}}},
	}
	for _, k := range cases {
		got, err := target(k.sel)
		if err != nil || !reflect.DeepEqual(got, k.want) {
			t.Errorf("%s: %+v, %v\nwant %+v", k.sel, got, err, k.want)
		}
	}

	// Gemini CLI: httpUrl is Streamable HTTP, url SSE; $VAR and ${VAR}
	// from the environment when set, else as written.
	t.Setenv("DB_CONNECTION_STRING", "postgres://db")
	if got, err := target("pythonTools"); err != nil || !slices.Contains(got.Env, "DATABASE_URL=postgres://db") {
		t.Errorf("pythonTools: %+v, %v", got, err)
	}
	os.Unsetenv("DB_CONNECTION_STRING")
	if got, err := target("pythonTools"); err != nil || !slices.Contains(got.Env, "DATABASE_URL=$DB_CONNECTION_STRING") {
		t.Errorf("pythonTools without the variable: %+v, %v", got, err)
	}
	if got, err := target("httpServer"); err != nil || got.URL != "http://localhost:3000/mcp" || got.Transport != "" {
		t.Errorf("httpServer: %+v, %v", got, err)
	}
	if got, err := target("sseServer"); err != nil || got.URL != "http://localhost:8080/sse" || got.Transport != "sse" {
		t.Errorf("sseServer: %+v, %v", got, err)
	}

	// VS Code prompts for ${input:…}; mcpscope says so.
	_, err := target("vscode/github")
	var ve *VariableError
	if !errors.As(err, &ve) || ve.Ref != "${input:github_token}" || !strings.Contains(err.Error(), "VS Code prompts for it") ||
		!strings.Contains(err.Error(), e.Files["vscode"]) {
		t.Errorf("vscode/github: %v", err)
	}
	// Claude Code: ${VAR:-default}, and ${VAR} that must be set.
	_, err = target("api")
	if !errors.As(err, &ve) || ve.Ref != "${API_KEY}" || !strings.Contains(err.Error(), "API_KEY is not set") {
		t.Errorf("api without API_KEY: %v", err)
	}
	t.Setenv("API_KEY", "k1")
	got, err := target("api")
	want := Target{URL: "https://api.example.com/sse", Transport: "sse", Headers: map[string]string{"X-API-Key": "k1"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("api: %+v, %v", got, err)
	}
}

// What a listing shows holds no secret, and variables stay readable.
func TestRedacted(t *testing.T) {
	e := hoststest.Setup(t)
	c := load(t, e)
	want := map[string]string{
		"claude-desktop/github": "GITHUB_PERSONAL_ACCESS_TOKEN=[redacted] npx -y @modelcontextprotocol/server-github",
		"sentry":                "https://mcp.sentry.dev/mcp -H 'Authorization: Bearer [redacted]'",
		"db":                    "uvx mcp-server-postgres --dsn [redacted]",
		"api":                   "'${API_BASE:-https://api.example.com}/sse' -H 'X-API-Key: ${API_KEY}'",
		"vscode/github":         "https://api.githubcopilot.com/mcp/ -H 'Authorization: Bearer ${input:github_token}'",
		"memory":                "'MEMORY_FILE_PATH=${userHome}/memory.json' 'OPENAI_KEY=${env:OPENAI_KEY}' npx -y @modelcontextprotocol/server-memory",
		"brave-search":          "BRAVE_API_KEY=[redacted] npx -y @modelcontextprotocol/server-brave-search --api-key [redacted]",
		"remote":                "'https://example.com/mcp?api_key=[redacted]&team=core' -H 'Authorization: Bearer [redacted]'",
		"linear":                "https://mcp.linear.app/sse -H 'Authorization: Bearer [redacted]'",
	}
	for sel, w := range want {
		s, err := c.Find(sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.CommandLine(); got != w {
			t.Errorf("%s:\n got %s\nwant %s", sel, got, w)
		}
	}
	for _, s := range c.Servers {
		if line := s.CommandLine(); strings.Contains(line, hoststest.Canary) {
			t.Errorf("%s/%s shows a secret: %s", s.Host, s.Name, line)
		}
		if r := s.Redacted(); strings.Contains(strings.Join(append(r.Args, r.URL), " "), hoststest.Canary) {
			t.Errorf("%s/%s redacted keeps a secret: %+v", s.Host, s.Name, r)
		}
	}
	for word, w := range map[string]string{
		"--token=abc":                         "--token=[redacted]",
		"Authorization:Bearer abc":            "Authorization: Bearer [redacted]",
		"https://user:pw@h.example/x?sig=abc": "https://[redacted]@h.example/x?sig=[redacted]",
		"DB_PASS=${env:DB_PASS}":              "DB_PASS=${env:DB_PASS}",
		"--header":                            "--header",
	} {
		if got := redactWord(word); got != w {
			t.Errorf("redactWord(%q) = %q, want %q", word, got, w)
		}
	}
}

func TestNotes(t *testing.T) {
	e := hoststest.Setup(t)
	c := load(t, e)
	s, _ := c.Find("vscode/github")
	if n := strings.Join(s.Notes(), "\n"); !strings.Contains(n, "variables kept as written: ${input:github_token} (VS Code prompts for it; mcpscope cannot)") {
		t.Errorf("notes: %s", n)
	}
	s, _ = c.Find("memory")
	if n := strings.Join(s.Notes(), "\n"); !strings.Contains(n, "${userHome} (resolved as VS Code does); ${env:OPENAI_KEY} (from the environment when mcpscope connects)") {
		t.Errorf("notes: %s", n)
	}
	s, _ = c.Find("api")
	if n := strings.Join(s.Notes(), "\n"); !strings.HasSuffix(n, "${API_BASE:-https://api.example.com}, ${API_KEY} (from the environment when mcpscope connects)") {
		t.Errorf("notes: %s", n)
	}
	s, _ = c.Find("linear")
	if n := strings.Join(s.Notes(), "\n"); !strings.Contains(n, "disabled") {
		t.Errorf("notes: %s", n)
	}
}
