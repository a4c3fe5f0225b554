package hosts

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Target is what connecting to a configured server takes, in
// connect.Spec's terms: a URL (with Transport and Headers), or a Command
// (with Env and Dir).
type Target struct {
	URL       string
	Transport string // "" (Streamable HTTP, then HTTP+SSE) or "sse"
	Headers   map[string]string

	Command []string
	Env     []string // KEY=VALUE on top of mcpscope's own environment, as the hosts do
	Dir     string
}

// VariableError is a variable mcpscope cannot resolve outside its host.
type VariableError struct {
	Server, File, Ref, Why string
}

func (e *VariableError) Error() string {
	return fmt.Sprintf("server %q in %s uses %s: %s", e.Server, e.File, e.Ref, e.Why)
}

// Target resolves s to what connect.Spec needs. Variables are resolved as
// s's host would resolve them: ${env:VAR} (and Claude Code's ${VAR} and
// ${VAR:-default}) from the environment, ${userHome} and ${workspaceFolder};
// ${input:…} is an error, since only VS Code can prompt for it. A wrapped
// entry is reached directly, without the proxy in front of it.
func (s Server) Target() (Target, error) {
	x := expander{s: s}
	if s.Kind != "stdio" {
		t := Target{URL: x.do(s.URL)}
		if s.Kind == "sse" {
			t.Transport = "sse"
		}
		if len(s.Headers) > 0 {
			t.Headers = map[string]string{}
			for k, v := range s.Headers {
				t.Headers[k] = x.do(v)
			}
		}
		return t, x.err
	}
	argv := append([]string{s.Command}, s.Args...)
	if s.Wrapped != nil {
		argv = s.Wrapped.Inner
	}
	t := Target{Dir: x.path(x.do(s.Dir))}
	for _, a := range argv {
		t.Command = append(t.Command, x.do(a))
	}
	if s.EnvFile != "" && x.err == nil {
		env, err := readEnvFile(x.path(x.do(s.EnvFile)))
		if err != nil {
			return t, fmt.Errorf("server %q in %s: %w", s.Name, s.File, err)
		}
		t.Env = env
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		t.Env = append(t.Env, k+"="+x.do(s.Env[k]))
	}
	return t, x.err
}

// expander resolves variables in s's host's syntax, keeping the first error.
type expander struct {
	s   Server
	err error
}

// claudeVar is Claude Code's ${VAR} or ${VAR:-default}.
var claudeVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(:-(.*))?$`) })

// geminiVar is Gemini CLI's $VAR or ${VAR}.
var geminiVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\})`) })

func (x *expander) do(v string) string {
	if x.s.Host == GeminiCLI {
		// As Gemini CLI does: a set variable is put in, an unset one left
		// as written.
		return geminiVar().ReplaceAllStringFunc(v, func(ref string) string {
			if val, ok := os.LookupEnv(strings.Trim(ref[1:], "{}")); ok {
				return val
			}
			return ref
		})
	}
	if !strings.Contains(v, "${") {
		return v
	}
	return refs().ReplaceAllStringFunc(v, func(ref string) string {
		out, why := x.resolve(ref[2 : len(ref)-1])
		if why != "" && x.err == nil {
			x.err = &VariableError{Server: x.s.Name, File: x.s.File, Ref: ref, Why: why}
		}
		return out
	})
}

// resolve is the value of the variable inside ${…}, or why there is none.
// Hosts that resolve nothing keep it as written.
func (x *expander) resolve(in string) (string, string) {
	switch x.s.Host {
	case ClaudeCode:
		m := claudeVar().FindStringSubmatch(in)
		if m == nil {
			return "${" + in + "}", ""
		}
		if v, ok := os.LookupEnv(m[1]); ok {
			return v, ""
		}
		if m[2] != "" {
			return m[3], ""
		}
		return "", fmt.Sprintf("%s is not set in the environment (Claude Code would refuse it too): set it, or give it a default as ${%s:-value}", m[1], m[1])
	case ClaudeDesktop:
		return "${" + in + "}", ""
	}
	if name, ok := strings.CutPrefix(in, "env:"); ok {
		return os.Getenv(name), ""
	}
	if x.s.Host != VSCode && x.s.Host != Cursor {
		return "${" + in + "}", ""
	}
	switch {
	case strings.HasPrefix(in, "input:"):
		return "", Title(x.s.Host) + " prompts for it when it starts the server, and mcpscope cannot: put the value in an ${env:VAR} variable of the entry, or give the target to mcpscope directly"
	case in == "userHome":
		home, _ := os.UserHomeDir()
		return home, ""
	case in == "workspaceFolder" && x.s.Project != "":
		return x.s.Project, ""
	case in == "pathSeparator" || in == "/":
		return string(filepath.Separator), ""
	}
	return "", Title(x.s.Host) + " resolves it, and mcpscope cannot outside " + Title(x.s.Host)
}

// path makes a relative path of a project entry relative to its project,
// as the hosts start servers there.
func (x *expander) path(p string) string {
	if p == "" || filepath.IsAbs(p) || x.s.Project == "" {
		return p
	}
	return filepath.Join(x.s.Project, p)
}

// readEnvFile reads KEY=VALUE lines (a .env file): # comments, "export ",
// and quotes around the value are allowed.
func readEnvFile(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read its envFile: %w", err)
	}
	var env []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("envFile %s line %d is not KEY=VALUE", path, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env = append(env, strings.TrimSpace(k)+"="+v)
	}
	return env, sc.Err()
}

// Variables are the variable references s holds, as written (${env:TOKEN},
// ${input:token}), for hosts that resolve them; listings say they are kept.
func (s Server) Variables() []string {
	if s.Host == ClaudeDesktop {
		return nil
	}
	words := append([]string{s.Command, s.URL, s.Dir, s.EnvFile}, s.Args...)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		words = append(words, s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		words = append(words, s.Headers[k])
	}
	var out []string
	for _, w := range words {
		for _, r := range refs().FindAllString(w, -1) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// Notes are what a listing should say about s besides its command line.
func (s Server) Notes() []string {
	var notes []string
	if s.Disabled {
		notes = append(notes, "disabled in this file")
	}
	if s.Wrapped != nil {
		notes = append(notes, "wrapped: "+Title(s.Host)+" runs it through mcpscope proxy (mcpscope unwrap puts it back)")
	}
	if s.Dir != "" {
		notes = append(notes, "working directory "+s.Dir)
	}
	if s.EnvFile != "" {
		notes = append(notes, "environment also from "+s.EnvFile)
	}
	if vs := s.Variables(); len(vs) > 0 {
		notes = append(notes, "variables kept as written: "+s.explain(vs))
	}
	return notes
}

// explain groups variables by what becomes of them when mcpscope connects.
func (s Server) explain(vars []string) string {
	var order []string
	by := map[string][]string{}
	for _, v := range vars {
		in, why := v[2:len(v)-1], ""
		switch {
		case strings.HasPrefix(in, "input:"):
			why = Title(s.Host) + " prompts for it; mcpscope cannot"
		case strings.HasPrefix(in, "env:"), s.Host == ClaudeCode, s.Host == GeminiCLI:
			why = "from the environment when mcpscope connects"
		case s.Host != VSCode && s.Host != Cursor:
		case in == "userHome", in == "workspaceFolder", in == "pathSeparator", in == "/":
			why = "resolved as " + Title(s.Host) + " does"
		default:
			why = Title(s.Host) + " resolves it; mcpscope cannot"
		}
		if _, ok := by[why]; !ok {
			order = append(order, why)
		}
		by[why] = append(by[why], v)
	}
	parts := make([]string, len(order))
	for i, why := range order {
		parts[i] = strings.Join(by[why], ", ")
		if why != "" {
			parts[i] += " (" + why + ")"
		}
	}
	return strings.Join(parts, "; ")
}
