// Package hosts reads the MCP servers people already configured in their AI
// hosts (Claude Desktop, Claude Code, VS Code, Cursor, Windsurf, Gemini CLI,
// Kiro, Amazon Q Developer CLI, Zed, Codex CLI) and in
// mcpscope's own servers.json, picks one by name, says how to reach it, and
// rewrites one host entry to run through mcpscope's proxy and back (Wrap,
// Unwrap).
//
// Secrets stay where they are: values are read only to connect, listings
// show them redacted (Redacted), and nothing mcpscope writes outside the
// host's own file and its backup holds them.
package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"mcpscope/internal/xdg"
)

// The hosts, as Server.Host names them.
const (
	ClaudeDesktop = "claude-desktop"
	ClaudeCode    = "claude-code"
	VSCode        = "vscode"
	Cursor        = "cursor"
	Windsurf      = "windsurf"
	GeminiCLI     = "gemini-cli"
	Kiro          = "kiro"
	AmazonQ       = "amazon-q"
	Zed           = "zed"
	Codex         = "codex"
	Mcpscope      = "mcpscope"
)

// Names are the hosts in the order listings show them.
var Names = []string{ClaudeDesktop, ClaudeCode, VSCode, Cursor, Windsurf, GeminiCLI, Kiro, AmazonQ, Zed, Codex, Mcpscope}

// Title is a host's name for people ("Claude Desktop").
func Title(host string) string {
	switch host {
	case ClaudeDesktop:
		return "Claude Desktop"
	case ClaudeCode:
		return "Claude Code"
	case VSCode:
		return "VS Code"
	case Cursor:
		return "Cursor"
	case Windsurf:
		return "Windsurf"
	case GeminiCLI:
		return "Gemini CLI"
	case Kiro:
		return "Kiro"
	case AmazonQ:
		return "Amazon Q Developer CLI"
	case Zed:
		return "Zed"
	case Codex:
		return "Codex CLI"
	}
	return host
}

// IsHost reports whether h is one of Names.
func IsHost(h string) bool {
	for _, n := range Names {
		if n == h {
			return true
		}
	}
	return false
}

// Server is one configured MCP server. Values are as the file has them:
// variables such as ${env:VAR} and ${input:id} are kept verbatim (Target
// resolves what can be resolved), and secrets are not redacted (Redacted
// does that for showing).
type Server struct {
	Name    string `json:"name"`
	Host    string `json:"host"`
	File    string `json:"file"`
	Scope   string `json:"scope"`             // "user" or "project"
	Project string `json:"project,omitempty"` // the project directory of a project entry

	Kind     string            `json:"kind"` // "stdio", "http" or "sse"
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	EnvFile  string            `json:"envFile,omitempty"`
	Dir      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`

	// Wrapped is set when the entry runs mcpscope proxy in place of the
	// server (see Wrap).
	Wrapped *Wrapping `json:"wrapped,omitempty"`

	path []string // the keys from the file's root to the entry
}

// Problem is a file, or one entry of it, that could not be read. A missing
// file is no problem: that host is simply not configured.
type Problem struct {
	Host   string `json:"host"`
	File   string `json:"file"`
	Server string `json:"server,omitempty"` // "" = the whole file
	Err    error  `json:"-"`
}

func (p Problem) Error() string {
	if p.Server != "" {
		return fmt.Sprintf("%s: server %q: %v", p.File, p.Server, p.Err)
	}
	return fmt.Sprintf("%s: %v", p.File, p.Err)
}

// MarshalJSON adds the error's text.
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	return json.Marshal(struct {
		plain
		Error string `json:"error"`
	}{plain(p), p.Err.Error()})
}

// Place is a file a host may keep servers in, and whether it was there.
type Place struct {
	Host  string `json:"host"`
	Scope string `json:"scope"`
	File  string `json:"file"`
	Found bool   `json:"found"`
}

// Catalog is every configured server mcpscope found.
type Catalog struct {
	Servers  []Server
	Problems []Problem
	Places   []Place
	// StaleWraps are wrap records whose entry no longer runs mcpscope
	// proxy (the host rewrote it, or someone edited it back by hand).
	StaleWraps []WrapRecord

	dir  string // the project directory
	home string
}

// Options say where to look. The zero value looks where the hosts do, from
// the current directory.
type Options struct {
	Dir  string // the project directory for project files; "" = the current directory
	GOOS string // "" = runtime.GOOS ("darwin" uses the macOS paths)
}

// Load reads every host's files. It never fails: what cannot be read is a
// Problem, and the rest is still listed.
func Load(o Options) *Catalog {
	c := &Catalog{dir: o.Dir}
	if c.dir == "" {
		c.dir, _ = os.Getwd()
	}
	home, err := os.UserHomeDir()
	if err != nil {
		c.Problems = append(c.Problems, Problem{File: "$HOME", Err: fmt.Errorf("cannot find the home directory (%v): only project files are read", err)})
	}
	c.home = home
	goos := o.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	seen := map[string]bool{}
	for _, src := range sources(home, xdg.ConfigHome(), c.dir, goos) {
		if src.file == "" || seen[src.file] {
			continue // no home, or a project file that is the user file (run from ~)
		}
		seen[src.file] = true
		c.read(src)
	}
	c.markWrapped()
	return c
}

// source is one file a host keeps servers in.
type source struct {
	host, scope, file string
	project           string // the project directory of a project file
	groups            func(root *node) []group
}

// group is one object of servers in a file.
type group struct {
	path    []string
	scope   string
	project string
}

// sources are the files to read, for home, the XDG config directory
// (configHome: $XDG_CONFIG_HOME or ~/.config) and project directory dir.
func sources(home, configHome, dir, goos string) []source {
	user := func(p ...string) string {
		if home == "" {
			return ""
		}
		return filepath.Join(append([]string{home}, p...)...)
	}
	// Electron apps keep settings in the platform's application data
	// directory: $XDG_CONFIG_HOME or ~/.config on Linux.
	appData := configHome
	if goos == "darwin" {
		appData = user("Library", "Application Support")
	}
	if appData == "" {
		appData = user(".config")
	}
	join := func(base string, p ...string) string {
		if base == "" {
			return ""
		}
		return filepath.Join(append([]string{base}, p...)...)
	}
	mcpServers := fixed("mcpServers")
	// Zed keeps its settings in ~/.config/zed on macOS too, and in
	// %APPDATA%\Zed on Windows; Codex CLI in $CODEX_HOME (~/.codex).
	zed := join(configHome, "zed")
	switch goos {
	case "darwin":
		zed = user(".config", "zed")
	case "windows":
		zed = join(os.Getenv("APPDATA"), "Zed")
	}
	codex := user(".codex")
	if d := os.Getenv("CODEX_HOME"); filepath.IsAbs(d) {
		codex = d
	}
	return []source{
		{host: ClaudeDesktop, scope: "user", file: join(appData, "Claude", "claude_desktop_config.json"), groups: mcpServers},
		{host: ClaudeCode, scope: "user", file: user(".claude.json"), groups: claudeJSON},
		{host: ClaudeCode, scope: "project", project: dir, file: join(dir, ".mcp.json"), groups: mcpServers},
		{host: VSCode, scope: "user", file: join(appData, "Code", "User", "mcp.json"), groups: fixed("servers")},
		{host: VSCode, scope: "user", file: join(appData, "Code", "User", "settings.json"), groups: vscodeSettings},
		{host: VSCode, scope: "project", project: dir, file: join(dir, ".vscode", "mcp.json"), groups: fixed("servers")},
		{host: Cursor, scope: "user", file: user(".cursor", "mcp.json"), groups: mcpServers},
		{host: Cursor, scope: "project", project: dir, file: join(dir, ".cursor", "mcp.json"), groups: mcpServers},
		{host: Windsurf, scope: "user", file: user(".codeium", "windsurf", "mcp_config.json"), groups: mcpServers},
		{host: GeminiCLI, scope: "user", file: user(".gemini", "settings.json"), groups: mcpServers},
		{host: GeminiCLI, scope: "project", project: dir, file: join(dir, ".gemini", "settings.json"), groups: mcpServers},
		{host: Kiro, scope: "user", file: user(".kiro", "settings", "mcp.json"), groups: mcpServers},
		{host: Kiro, scope: "project", project: dir, file: join(dir, ".kiro", "settings", "mcp.json"), groups: mcpServers},
		{host: AmazonQ, scope: "user", file: user(".aws", "amazonq", "mcp.json"), groups: mcpServers},
		{host: AmazonQ, scope: "project", project: dir, file: join(dir, ".amazonq", "mcp.json"), groups: mcpServers},
		{host: Zed, scope: "user", file: join(zed, "settings.json"), groups: fixed("context_servers")},
		{host: Zed, scope: "project", project: dir, file: join(dir, ".zed", "settings.json"), groups: fixed("context_servers")},
		{host: Codex, scope: "user", file: join(codex, "config.toml")},
		{host: Codex, scope: "project", project: dir, file: join(dir, ".codex", "config.toml")},
		{host: Mcpscope, scope: "user", file: SavedServersFile(), groups: savedServers},
	}
}

// SavedServersFile is mcpscope's own list of servers:
// $XDG_CONFIG_HOME/mcpscope/servers.json (~/.config/mcpscope/servers.json).
func SavedServersFile() string {
	d := xdg.ConfigDir()
	if d == "" {
		return ""
	}
	return filepath.Join(d, "servers.json")
}

func fixed(path ...string) func(*node) []group {
	return func(*node) []group { return []group{{path: path}} }
}

// claudeJSON: Claude Code's user servers, and each project's own
// ("local" servers in Claude Code's words) under projects[<dir>].
func claudeJSON(root *node) []group {
	gs := []group{{path: []string{"mcpServers"}}}
	if ps := root.get("projects"); ps != nil && ps.kind == '{' {
		for _, m := range ps.members {
			if m.val.get("mcpServers") != nil {
				gs = append(gs, group{path: []string{"projects", m.key, "mcpServers"}, scope: "project", project: m.key})
			}
		}
	}
	return gs
}

// vscodeSettings: settings.json holds servers under "mcp": {"servers": …}
// or the flat key "mcp.servers".
func vscodeSettings(*node) []group {
	return []group{{path: []string{"mcp", "servers"}}, {path: []string{"mcp.servers"}}}
}

// savedServers: mcpscope's servers.json is {"mcpServers": {…}} like Claude
// Desktop's file (so one can be copied), or just the {…} of servers.
func savedServers(root *node) []group {
	if root.get("mcpServers") != nil {
		return []group{{path: []string{"mcpServers"}}}
	}
	return []group{{path: nil}}
}

// read adds src's servers (or its problem) to c.
func (c *Catalog) read(src source) {
	b, err := os.ReadFile(src.file)
	found := err == nil || !errors.Is(err, fs.ErrNotExist)
	c.Places = append(c.Places, Place{Host: src.host, Scope: src.scope, File: src.file, Found: found})
	if !found {
		return
	}
	if err != nil {
		c.problem(src, "", fmt.Errorf("cannot read it: %w", err))
		return
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return // an empty file holds no servers
	}
	if isTOML(src.file) {
		c.readTOML(src, b)
		return
	}
	p, err := parseJSONC(b)
	if err != nil {
		c.problem(src, "", fmt.Errorf("cannot parse it: %w", err))
		return
	}
	if p.root.kind != '{' {
		c.problem(src, "", errors.New("it is not a JSON object"))
		return
	}
	for _, g := range src.groups(p.root) {
		obj := p.root.at(g.path)
		if obj == nil {
			continue
		}
		if obj.kind != '{' {
			c.problem(src, "", fmt.Errorf("%s is not an object of servers", strings.Join(g.path, ".")))
			continue
		}
		for _, m := range obj.members {
			s, err := entry(p, m.val, src.host)
			if errors.Is(err, errExtension) {
				continue
			}
			if err != nil {
				c.problem(src, m.key, err)
				continue
			}
			s.Name, s.Host, s.File = m.key, src.host, src.file
			s.Scope, s.Project = src.scope, src.project
			if g.scope != "" {
				s.Scope, s.Project = g.scope, g.project
			}
			s.path = append(append([]string(nil), g.path...), m.key)
			c.Servers = append(c.Servers, s)
		}
	}
}

func (c *Catalog) problem(src source, server string, err error) {
	c.Problems = append(c.Problems, Problem{Host: src.host, File: src.file, Server: server, Err: err})
}

// rawEntry is one server entry in any host's spelling.
type rawEntry struct {
	Type      string            `json:"type"`
	Command   string            `json:"command"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	EnvFile   string            `json:"envFile"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf
	HTTPURL   string            `json:"httpUrl"`   // Gemini CLI: Streamable HTTP (its "url" is SSE)
	Headers   map[string]string `json:"headers"`
	Disabled  bool              `json:"disabled"`
	Enabled   *bool             `json:"enabled"` // Zed
	Source    string            `json:"source"`  // Zed: "custom" or "extension"
}

func decodeEntry(p *parsed, n *node) (rawEntry, error) {
	var e rawEntry
	if n.kind != '{' {
		return e, errors.New("the entry is not a JSON object")
	}
	err := json.Unmarshal(p.json[n.start:n.end], &e)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return e, fmt.Errorf("cannot read the entry: %q holds a %s where a %s belongs", te.Field, te.Value, te.Type)
	}
	if err != nil {
		return e, fmt.Errorf("cannot read the entry: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return e, nil
}

// entry reads one server entry of host; Kind says how it is reached.
func entry(p *parsed, n *node, host string) (Server, error) {
	if host == Zed {
		if c := n.get("command"); c != nil && c.kind == '{' {
			return zedLegacy(p, c)
		}
	}
	e, err := decodeEntry(p, n)
	if err != nil {
		return Server{}, err
	}
	if host == Zed && e.Source == "extension" {
		return Server{}, errExtension
	}
	e.Disabled = e.Disabled || (e.Enabled != nil && !*e.Enabled)
	url := e.URL
	if url == "" {
		url = e.ServerURL
	}
	if e.Type == "" && host == GeminiCLI {
		// Gemini CLI says the transport by the key: httpUrl is Streamable
		// HTTP, url is SSE.
		switch {
		case e.HTTPURL != "":
			e.Type, url = "http", e.HTTPURL
		case e.URL != "":
			e.Type = "sse"
		}
	}
	s := Server{Command: e.Command, Args: e.Args, Env: e.Env, EnvFile: e.EnvFile, Dir: e.Cwd,
		URL: url, Headers: e.Headers, Disabled: e.Disabled}
	switch strings.ToLower(e.Type) {
	case "stdio":
		s.Kind = "stdio"
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		s.Kind = "http"
	case "sse":
		s.Kind = "sse"
	case "":
		switch {
		case e.Command != "" && url != "":
			return s, errors.New(`it has both "command" and "url": add "type" ("stdio" or "http") to say which`)
		case e.Command != "":
			s.Kind = "stdio"
		case url != "":
			s.Kind = "http"
		}
	default:
		return s, fmt.Errorf("unknown type %q (mcpscope knows stdio, http, streamable-http and sse)", e.Type)
	}
	switch {
	case s.Kind == "":
		return s, errors.New(`it has neither "command" nor "url"`)
	case s.Kind == "stdio" && s.Command == "":
		return s, errors.New(`a stdio server needs "command"`)
	case s.Kind != "stdio" && s.URL == "":
		return s, fmt.Errorf(`an %s server needs "url"`, s.Kind)
	}
	return s, nil
}

// errExtension is a Zed entry an extension provides ("source":
// "extension"): the extension knows its command, the file does not, so
// there is nothing mcpscope could start or wrap, and nothing wrong either.
var errExtension = errors.New("a Zed extension provides it")

// zedLegacy reads Zed's older entry form, "command": {"path", "args",
// "env"}. Wrap refuses it (its "command" is not a string): Zed's settings
// editor rewrites it to the current form.
func zedLegacy(p *parsed, c *node) (Server, error) {
	var e struct {
		Path string            `json:"path"`
		Args []string          `json:"args"`
		Env  map[string]string `json:"env"`
	}
	if err := json.Unmarshal(p.json[c.start:c.end], &e); err != nil {
		return Server{}, fmt.Errorf("cannot read the entry's command: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if e.Path == "" {
		return Server{}, errors.New(`its "command" has no "path"`)
	}
	return Server{Kind: "stdio", Command: e.Path, Args: e.Args, Env: e.Env}, nil
}
