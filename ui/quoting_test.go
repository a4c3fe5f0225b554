package ui

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unicode/utf8"

	"mcpscope/internal/shell"
	"mcpscope/internal/termsafe"
	"mcpscope/session"
	"mcpscope/testkit/shelltest"
	"mcpscope/transport"
)

// pastedLine reads a copied or shown command line back with bash, after
// checking that it is inert on a terminal.
func pastedLine(t *testing.T, line string) []string {
	t.Helper()
	if termsafe.Line(line) != line {
		t.Fatalf("not terminal-safe: %q", line)
	}
	return shelltest.Words(t, "bash", t.TempDir(), line)
}

// Y copies a command line made of the server's names (tool, resource,
// prompt and its arguments); pasted, it is exactly those words, and a name
// that would read as a flag gets no mcpscope line at all.
func TestCopiedCommandQuotesTheServersNames(t *testing.T) {
	target := []string{"http://127.0.0.1:3001/mcp"}
	for _, w := range shelltest.Hostile {
		t.Run(fmt.Sprintf("%q", w), func(t *testing.T) {
			params := func(v map[string]any) json.RawMessage { b, _ := json.Marshal(v); return b }
			cases := []struct {
				method string
				params json.RawMessage
				want   []string
			}{
				{"tools/call", params(map[string]any{"name": w, "arguments": map[string]any{w: w}}),
					[]string{"mcpscope", "call", w, "--args", string(params(map[string]any{w: w}))}},
				{"resources/read", params(map[string]any{"uri": w}), []string{"mcpscope", "read", w}},
				{"prompts/get", params(map[string]any{"name": "p", "arguments": map[string]string{"k": w}}), []string{"mcpscope", "prompt", "p", "k=" + w}},
			}
			for _, c := range cases {
				line, ok := commandLine(session.CallSnapshot{Method: c.method, Params: c.params}, target, "")
				if !utf8.ValidString(w) {
					continue // JSON made the word another one; nothing to compare
				}
				if shell.IsFlag(w) && c.method != "prompts/get" {
					if ok {
						t.Errorf("%s: a command line for a name that reads as a flag: %s", c.method, line)
					}
					continue
				}
				if !ok {
					t.Errorf("%s: no command line", c.method)
					continue
				}
				if got, want := pastedLine(t, line), append(c.want, target...); !slices.Equal(got, want) {
					t.Errorf("%s: %s reads as\n%q\nwant\n%q", c.method, line, got, want)
				}
			}
		})
	}
}

// The curl line names a header from a config file by quoting it; a
// secret's value stays a reference the person's shell expands.
func TestCurlLineQuotesHeaderNames(t *testing.T) {
	evil := "X-`touch pwned`-$(touch pwned)"
	f := &transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"';touch pwned;'"}}`),
		Meta: transport.Meta{Headers: map[string]string{evil + "-Token": "[redacted]", evil: "a\x1b[2J;touch pwned"}}}
	line := curlLine("http://127.0.0.1:3001/mcp?x=$(touch pwned)", f)
	want := []string{"curl", "-sS", "-N", "-X", "POST", "http://127.0.0.1:3001/mcp?x=$(touch pwned)",
		"-H", evil + ": a\x1b[2J;touch pwned", "-H", evil + "-Token: ", "--data-binary", string(f.Data)}
	if got := pastedLine(t, line); !slices.Equal(got, want) {
		t.Fatalf("%s reads as\n%q\nwant\n%q", line, got, want)
	}
}

// The D view's rejoin command holds a state-store record's handle.
func TestRejoinCommandQuotesTheHandle(t *testing.T) {
	for _, h := range shelltest.Hostile {
		if got, want := pastedLine(t, session.RejoinCommand(h)), []string{"mcpscope", "rejoin", h}; !slices.Equal(got, want) {
			t.Errorf("session.RejoinCommand(%q) reads as %q", h, got)
		}
	}
}
