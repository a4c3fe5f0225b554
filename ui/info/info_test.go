package info

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/transport"
	"mcpscope/ui/view"
)

// The endpoint is shown redacted, whatever the session's target holds.
func TestTransportOfRedacts(t *testing.T) {
	for _, c := range []struct{ target, kind, endpoint string }{
		{"http: https://ada:pw@example.com/mcp?access_token=s3cret&x=1", "Streamable HTTP", "https://[redacted]@example.com/mcp?access_token=[redacted]&x=1"},
		{"http+sse: http://127.0.0.1:9/sse", "HTTP+SSE (2024-11-05)", "http://127.0.0.1:9/sse"},
		{"stdio: node server.js", "stdio (the server is a child process)", "node server.js"},
	} {
		kind, endpoint := TransportOf(c.target)
		if kind != c.kind || endpoint != c.endpoint {
			t.Errorf("TransportOf(%q) = %q, %q; want %q, %q", c.target, kind, endpoint, c.kind, c.endpoint)
		}
	}
}

type fakeSession struct{ in session.Info }

func (f fakeSession) Info() session.Info             { return f.in }
func (f fakeSession) Connection() (string, string)   { return "connected", "" }
func (f fakeSession) Transport() transport.Transport { return nil }
func (f fakeSession) Journaled() bool                { return false }
func (f fakeSession) OTLP() string                   { return "" }
func (f fakeSession) Roots() string                  { return "" }

// The server's instructions are Markdown, rendered as a result's are:
// marks gone, a table aligned, colour only without NO_COLOR, hostile
// escapes inert, every line within the width.
func TestInstructionsRendered(t *testing.T) {
	instr := "# Using this server\n\nCall **search** first, then ~~fetch~~ `read`.\n\n" +
		"| tool | cost |\n|---|--:|\n| search | 1 |\n| read | 10 |\n\n- [x] auth \x1b]0;pwned\x07\x1b[2J\n\n" +
		"```\n\tcode " + strings.Repeat("x", 100) + "\n```"
	v := New(fakeSession{session.Info{Instructions: instr}})
	for _, th := range []themes.Theme{themes.Plain(), themes.ByName("dark")} {
		lines := v.lines(view.Context{Theme: th}, 60)
		text := ansi.Strip(strings.Join(lines, "\n"))
		for _, want := range []string{
			"\n   Using this server\n",
			"\n   Call search first, then ~~fetch~~ read.\n",
			"\n   tool   │ cost\n   ───────┼─────\n   search │    1\n   read   │   10\n",
			"\n   ☑ auth ␛]0;pwned␇␛[2J\n",
			"\n           code xxx", // 3 of the panel, 4 of a code block, the tab as 4
		} {
			if th.Name == "dark" {
				want = strings.Replace(want, "~~fetch~~", "fetch", 1)
			}
			if !strings.Contains(text, want) {
				t.Errorf("theme %s: no %q in:\n%s", th.Name, want, text)
			}
		}
		if strings.Contains(text, "**") || strings.Contains(text, "| ") || strings.Contains(text, "\t") {
			t.Errorf("theme %s: Markdown marks, pipes or a tab left:\n%s", th.Name, text)
		}
		joined := strings.Join(lines, "\n")
		sgr := strings.Contains(joined, "\x1b[1;36mUsing\x1b[0m")
		if th.NoColor == sgr {
			t.Errorf("theme %s: heading coloured %v, want %v", th.Name, sgr, !th.NoColor)
		}
		if strings.Contains(ansi.Strip(joined), "\x1b") {
			t.Errorf("theme %s: an escape that is not SGR", th.Name)
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > 60 {
				t.Errorf("theme %s: a line %d wide: %q", th.Name, w, l)
			}
		}
	}
}

// Instructions that do not look like Markdown keep their lines, wrapped
// at spaces to the width, as a result's plain text does.
func TestInstructionsPlainKeepLines(t *testing.T) {
	v := New(fakeSession{session.Info{Instructions: "Use search first.\nThen read, slowly; it is rate limited to one call a second per session."}})
	text := strings.Join(v.lines(view.Context{Theme: themes.Plain()}, 40), "\n")
	want := "\n   Use search first.\n   Then read, slowly; it is rate\n   limited to one call a second per\n   session.\n"
	if !strings.Contains(text, want) {
		t.Errorf("no %q in:\n%s", want, text)
	}
}
