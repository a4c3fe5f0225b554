package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"mcpscope/testkit/hoststest"
)

const self = "/opt/mcpscope/bin/mcpscope"

// plain is a file's JSON(C) as generic values.
func plain(t *testing.T, b []byte) map[string]any {
	t.Helper()
	p, err := parseJSONC(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	var v map[string]any
	if err := json.Unmarshal(p.json, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// entryOf is the entry at path in v.
func entryOf(v map[string]any, path []string) map[string]any {
	var cur any = v
	for _, k := range path {
		cur = cur.(map[string]any)[k]
	}
	return cur.(map[string]any)
}

// comments are the comments of a JSONC text (the fixtures keep "//" out
// of strings that end a line), tomlComments those of a TOML text.
var (
	comments     = regexp.MustCompile(`(?m)//[^"\n]*$|/\*[^*]*\*/`)
	tomlComments = regexp.MustCompile(`(?m)#[^"\n]*$`)
)

func commentsOf(file string) *regexp.Regexp {
	if isTOML(file) {
		return tomlComments
	}
	return comments
}

// plainOf is file's text b as generic values, JSON(C) or TOML.
func plainOf(t *testing.T, file string, b []byte) map[string]any {
	t.Helper()
	if !isTOML(file) {
		return plain(t, b)
	}
	var v map[string]any
	if err := toml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

func find(t *testing.T, e *hoststest.Env, sel string) Server {
	t.Helper()
	s, err := Load(Options{Dir: e.Project, GOOS: "linux"}).Find(sel)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Wrap and unwrap, on one entry of each file format: the entry runs
// mcpscope proxy with the server's command line after --, nothing else of
// the file changes (comments included), the file keeps its mode, a backup
// holds the file as it was, and unwrap gives back the same bytes.
func TestWrapUnwrapRoundTrip(t *testing.T) {
	// requote: a command written as a TOML literal string ('uvx'), which
	// unwrap without a backup writes back as a basic one ("uvx").
	for _, c := range []struct{ file, sel, requote string }{
		{"claude-desktop", "filesystem", ""},
		{"claude-desktop", "claude-desktop/github", ""},
		{"claude-code", "claude-code/github", ""},
		{"claude-code", "db", ""},
		{"vscode", "memory", ""},
		{"vscode-settings", "time", ""},
		{"vscode-workspace", "local-tools", ""},
		{"cursor-project", "cursor/github", ""},
		{"windsurf", "brave-search", ""},
		{"gemini", "pythonTools", ""},
		{"amazon-q-project", "sqlite", ""},
		{"kiro", "fetch", ""},
		{"amazon-q", "source-control", ""},
		{"zed", "postgres", ""},
		{"zed-project", "tools", ""},
		{"codex", "context7", ""},
		{"codex", "repo", "'uvx'"},
		{"codex-project", "local tools", ""},
	} {
		t.Run(c.sel, func(t *testing.T) {
			e := hoststest.Setup(t)
			file := e.Files[c.file]
			if err := os.Chmod(file, 0o640); err != nil {
				t.Fatal(err)
			}
			orig := read(t, file)
			s := find(t, e, c.sel)
			argv := append([]string{s.Command}, s.Args...)

			ch, err := Wrap(s, self)
			if err != nil {
				t.Fatal(err)
			}
			after := read(t, file)
			want := append([]string{self, "proxy", "--name", s.Name, "--"}, argv...)
			if ch.File != file || !slices.Equal(ch.Runs, want) || ch.Warning != "" {
				t.Errorf("change %+v", ch)
			}
			got := entryOf(plainOf(t, file, after), s.path)
			if got["command"] != self || !reflect.DeepEqual(got["args"], anys(want[1:])) {
				t.Fatalf("wrapped entry %v, want %q", got, want)
			}
			// Put command and args back by hand: the rest is the same.
			restored := plainOf(t, file, after)
			ent := entryOf(restored, s.path)
			ent["command"], ent["args"] = s.Command, anys(s.Args)
			if s.Args == nil {
				delete(ent, "args") // wrap added it
			}
			if !reflect.DeepEqual(restored, plainOf(t, file, orig)) {
				t.Errorf("wrap changed more than command and args:\n%s", after)
			}
			for _, cm := range commentsOf(file).FindAllString(string(orig), -1) {
				if !strings.Contains(string(after), cm) {
					t.Errorf("comment %q lost:\n%s", cm, after)
				}
			}
			assertMode(t, file, 0o640)
			if !strings.HasPrefix(ch.Backup, file+BackupPrefix) || !bytes.Equal(read(t, ch.Backup), orig) {
				t.Errorf("backup %s does not hold the file as it was", ch.Backup)
			}
			assertMode(t, ch.Backup, 0o600)
			if rec := read(t, RecordsFile()); bytes.Contains(rec, []byte(hoststest.Canary)) {
				t.Errorf("the wrap record holds a secret:\n%s", rec)
			}

			w := find(t, e, c.sel)
			if w.Wrapped == nil || !slices.Equal(w.Wrapped.Inner, argv) || w.Wrapped.Backup != ch.Backup {
				t.Fatalf("after wrap: %+v", w.Wrapped)
			}
			if _, err := Wrap(w, self); !isRefused(err, "already runs through mcpscope proxy") {
				t.Errorf("wrapping twice: %v", err)
			}

			un, err := Unwrap(w)
			if err != nil {
				t.Fatal(err)
			}
			if !un.Exact || !slices.Equal(un.Runs, argv) {
				t.Errorf("unwrap %+v", un)
			}
			if back := read(t, file); !bytes.Equal(back, orig) {
				t.Errorf("unwrap did not give back the file:\n%s\nwant\n%s", back, orig)
			}
			assertMode(t, file, 0o640)
			if find(t, e, c.sel).Wrapped != nil {
				t.Error("still wrapped after unwrap")
			}
			if rec := read(t, RecordsFile()); strings.TrimSpace(string(rec)) != "[]" {
				t.Errorf("records left after unwrap: %s", rec)
			}

			// Without backups or records, unwrap undoes the edit in place;
			// for wrap's own layout that is the same bytes.
			if _, err := Wrap(find(t, e, c.sel), self); err != nil {
				t.Fatal(err)
			}
			removeBackups(t, file)
			os.Remove(RecordsFile())
			un, err = Unwrap(find(t, e, c.sel))
			if err != nil {
				t.Fatal(err)
			}
			if un.Exact {
				t.Error("exact without a backup")
			}
			same := orig
			if c.requote != "" {
				same = bytes.Replace(orig, []byte(c.requote), []byte(`"`+strings.Trim(c.requote, "'")+`"`), 1)
			}
			back := read(t, file)
			if s.Args == nil {
				// The args wrap added stay, empty: nothing says they were not
				// there before.
				if u := find(t, e, c.sel); u.Command != s.Command || len(u.Args) != 0 {
					t.Errorf("unwrap without a backup runs %q %q:\n%s", u.Command, u.Args, back)
				}
			} else if !bytes.Equal(back, same) {
				t.Errorf("unwrap without a backup:\n%s\nwant\n%s", back, same)
			}
		})
	}
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != want {
		t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), want)
	}
}

func removeBackups(t *testing.T, file string) {
	t.Helper()
	ms, _ := filepath.Glob(file + BackupPrefix + "*")
	for _, m := range ms {
		os.Remove(m)
	}
}

func isRefused(err error, with string) bool {
	var r *RefusedError
	return errors.As(err, &r) && strings.Contains(err.Error(), with) && strings.HasSuffix(err.Error(), "nothing changed")
}

// An entry without args gets them, in the entry's layout; unwrap takes
// them away again (from the backup; without it, "args": [] stays).
func TestWrapEntryWithoutArgs(t *testing.T) {
	for _, text := range []string{
		`{"mcpServers": {"tool": {"command": "/usr/local/bin/tool", "env": {"A": "1"}}}}`,
		"{\r\n  \"mcpServers\": {\r\n    \"tool\": {\r\n      \"command\": \"/usr/local/bin/tool\",\r\n      \"args\": []\r\n    }\r\n  }\r\n}\r\n",
		"{\n  \"mcpServers\": {\n    \"tool\": {\n      \"command\": \"/usr/local/bin/tool\"\n    }\n  }\n}\n",
	} {
		e := hoststest.Setup(t)
		file := e.Write(t, "claude-code-project", text)
		ch, err := Wrap(find(t, e, "tool"), self)
		if err != nil {
			t.Fatal(err)
		}
		after := read(t, file)
		if got := entryOf(plain(t, after), []string{"mcpServers", "tool"}); !reflect.DeepEqual(got["args"], anys([]string{"proxy", "--name", "tool", "--", "/usr/local/bin/tool"})) {
			t.Fatalf("wrapped:\n%s", after)
		}
		if strings.Contains(text, "\n") && !strings.Contains(string(after), "\n      \"args\": [") {
			t.Errorf("args not in the entry's layout:\n%s", after)
		}
		if _, err := Unwrap(find(t, e, "tool")); err != nil || !bytes.Equal(read(t, file), []byte(text)) {
			t.Errorf("unwrap: %v\n%s", err, read(t, file))
		}
		if _, err := Wrap(find(t, e, "tool"), self); err != nil {
			t.Fatal(err)
		}
		removeBackups(t, file)
		if _, err := Unwrap(find(t, e, "tool")); err != nil {
			t.Fatal(err)
		}
		got := entryOf(plain(t, read(t, file)), []string{"mcpServers", "tool"})
		if got["command"] != "/usr/local/bin/tool" || !reflect.DeepEqual(got["args"], []any{}) {
			t.Errorf("unwrap without backup: %v", got)
		}
		_ = ch
	}
}

// Without a backup, unwrap of an entry that had no args keeps a comment
// someone put in the args array since.
func TestUnwrapKeepsCommentInArgs(t *testing.T) {
	e := hoststest.Setup(t)
	file := e.Write(t, "vscode-workspace", `{"servers": {"tool": {"command": "`+self+`", "args": ["proxy", "--name", "tool", "--", "/usr/local/bin/tool" /* keep */]}}}`)
	if _, err := Unwrap(find(t, e, "tool")); err != nil {
		t.Fatal(err)
	}
	if got, want := string(read(t, file)), `{"servers": {"tool": {"command": "/usr/local/bin/tool", "args": [ /* keep */]}}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// What wrap will not do changes nothing and leaves no backup.
func TestWrapRefuses(t *testing.T) {
	e := hoststest.Setup(t)
	cases := []struct{ sel, file, want string }{
		{"sentry", "claude-code", "wrapping HTTP servers is not supported yet"},
		{"remote", "windsurf", "wrapping HTTP servers is not supported yet"},
		{"everything", "mcpscope", "no host starts it"},
	}
	for _, c := range cases {
		before := read(t, e.Files[c.file])
		if _, err := Wrap(find(t, e, c.sel), self); !isRefused(err, c.want) {
			t.Errorf("%s: %v, want a refusal with %q", c.sel, err, c.want)
		}
		if !bytes.Equal(read(t, e.Files[c.file]), before) {
			t.Errorf("%s: the file changed", c.sel)
		}
	}
	// A file that became unparseable after it was read.
	s := find(t, e, "cursor/github")
	broken := e.Write(t, "cursor-project", `{"mcpServers": {"github": {"command": "npx" "args": []}}}`)
	if _, err := Wrap(s, self); !isRefused(err, "cannot parse "+broken+" (line 1 column 45") {
		t.Errorf("unparseable: %v", err)
	}
	if string(read(t, broken)) != `{"mcpServers": {"github": {"command": "npx" "args": []}}}` {
		t.Error("the unparseable file changed")
	}
	if _, err := Unwrap(find(t, e, "filesystem")); !isRefused(err, "does not run through mcpscope proxy") {
		t.Errorf("unwrap of an entry not wrapped: %v", err)
	}
	for _, f := range e.Files {
		if ms, _ := filepath.Glob(f + BackupPrefix + "*"); len(ms) > 0 {
			t.Errorf("backups left: %v", ms)
		}
	}
	if _, err := os.Stat(RecordsFile()); err == nil {
		t.Error("a record was written")
	}
}

// An entry edited after wrap (here its env) comes back with its command
// and args, and keeps the edit.
func TestUnwrapAfterEdit(t *testing.T) {
	e := hoststest.Setup(t)
	file := e.Files["cursor-project"]
	if _, err := Wrap(find(t, e, "cursor/github"), self); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(read(t, file)), "${env:GITHUB_TOKEN}", "${env:GH_TOKEN}", 1)
	os.WriteFile(file, []byte(edited), 0o644)
	un, err := Unwrap(find(t, e, "cursor/github"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(hoststest.Examples["cursor-project"].Text, "${env:GITHUB_TOKEN}", "${env:GH_TOKEN}", 1)
	if un.Exact || string(read(t, file)) != want {
		t.Errorf("exact %v:\n%s\nwant\n%s", un.Exact, read(t, file), want)
	}
}

// A config file that is a symlink (dotfile managers) stays one: its target
// is rewritten, and the backup sits next to the link.
func TestWrapSymlink(t *testing.T) {
	e := hoststest.Setup(t)
	link := e.Files["windsurf"]
	real := filepath.Join(e.Home, "dotfiles", "mcp_config.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	if err := os.Rename(link, real); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ch, err := Wrap(find(t, e, "brave-search"), self)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v", err)
	}
	if !bytes.Contains(read(t, real), []byte(self)) || filepath.Dir(ch.Backup) != filepath.Dir(link) {
		t.Errorf("target not rewritten, or backup %s not next to the link", ch.Backup)
	}
	if ms, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "*mcpscope*")); len(ms) > 0 {
		t.Errorf("left in the link's target directory: %v", ms)
	}
}

// An entry whose command is not an mcpscope binary counts as wrapped only
// when mcpscope recorded the wrap.
func TestWrappedNeedsRecordOrName(t *testing.T) {
	e := hoststest.Setup(t)
	e.Write(t, "cursor-project", `{"mcpServers": {"p": {"command": "other-proxy", "args": ["proxy", "--name", "p", "--", "x"]}}}`)
	if s := find(t, e, "cursor/p"); s.Wrapped != nil {
		t.Errorf("someone else's proxy counted as wrapped: %+v", s.Wrapped)
	}
	e.Write(t, "cursor-project", `{"mcpServers": {"p": {"command": "x"}}}`)
	if _, err := Wrap(find(t, e, "cursor/p"), "/tmp/build/cli.test"); err != nil {
		t.Fatal(err)
	}
	if s := find(t, e, "cursor/p"); s.Wrapped == nil || !slices.Equal(s.Wrapped.Inner, []string{"x"}) {
		t.Errorf("recorded wrap not seen: %+v", s.Wrapped)
	}
	// The host puts the entry back itself: the record is stale.
	e.Write(t, "cursor-project", `{"mcpServers": {"p": {"command": "x"}}}`)
	c := Load(Options{Dir: e.Project})
	if len(c.StaleWraps) != 1 || c.StaleWraps[0].Name != "p" {
		t.Errorf("stale wraps %+v", c.StaleWraps)
	}
}

// Zed's older entry form ("command": {"path", …}) is read but not wrapped,
// and Codex CLI's credentials from the environment reach the target.
func TestZedAndCodexSpecifics(t *testing.T) {
	e := hoststest.Setup(t)
	before := read(t, e.Files["zed"])
	if _, err := Wrap(find(t, e, "old-style"), self); !isRefused(err, `not a plain stdio entry`) {
		t.Errorf("wrapping Zed's older form: %v", err)
	}
	if !bytes.Equal(read(t, e.Files["zed"]), before) {
		t.Error("a refused wrap changed the file")
	}
	for _, s := range Load(Options{Dir: e.Project, GOOS: "linux"}).Servers {
		if s.Name == "mcp-server-github" {
			t.Errorf("an extension's entry is listed: %+v", s)
		}
	}

	t.Setenv("FIGMA_OAUTH_TOKEN", "tok-123")
	tg, err := find(t, e, "figma").Target()
	if err != nil || tg.URL != "https://mcp.figma.com/mcp" || tg.Headers["Authorization"] != "Bearer tok-123" ||
		tg.Headers["X-Figma-Region"] != "us-east-1" {
		t.Errorf("figma's target %+v, %v", tg, err)
	}
	if _, err := Wrap(find(t, e, "figma"), self); !isRefused(err, "wrapping HTTP servers is not supported") {
		t.Errorf("wrapping Codex's HTTP entry: %v", err)
	}

	// A file Codex cannot read either is a problem naming the line.
	e.Write(t, "codex", "[mcp_servers.x]\ncommand = \"a\"\ncommand = \"b\"\n")
	c := Load(Options{Dir: e.Project, GOOS: "linux"})
	var found bool
	for _, p := range c.Problems {
		found = found || (p.Host == Codex && strings.Contains(p.Error(), "cannot parse it: line 3"))
	}
	if !found {
		t.Errorf("problems %v: want codex's duplicate key at line 3", c.Problems)
	}
}
