package ui

import (
	"fmt"
	"strings"
	"testing"

	"mcpscope/transport"
)

// Goldens of a prompts/get response in the detail view: rendered like a
// tool result (description, each message under its role, Markdown
// rendered, an embedded resource), not as JSON; server text inert.
func TestGoldenPromptRendered(t *testing.T) {
	out, in := transport.Out, transport.In
	frames := []transport.Frame{
		msg(1, out, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"review","arguments":{"lang":"go"}}}`),
		msg(1.2, in, `{"jsonrpc":"2.0","id":1,"result":{"description":"Review a change \u001b]0;pwned\u0007","messages":[
			{"role":"user","content":{"type":"text","text":"Please review this change."}},
			{"role":"assistant","content":{"type":"text","text":"# Findings\n\n- **one** nit"}},
			{"role":"user","content":{"type":"resource","resource":{"uri":"file:///src/x.go","mimeType":"text/x-go","text":"package x"}}}]}}`),
	}
	for _, sz := range []struct{ w, h int }{{80, 24}, {120, 40}} {
		name := fmt.Sprintf("prompt-rendered-%dx%d", sz.w, sz.h)
		t.Run(name, func(t *testing.T) {
			m := newTestModel(t, loadFrames(t, frames), sz.w, sz.h)
			press(m, "top", "open", "tab-next")
			got := screen(m)
			checkSize(t, got, sz.w, sz.h)
			golden(t, name, got)
			for _, want := range []string{"rendered result", "Review a change ␛]0;pwned␇", "▸ user", "Please review this change.", "▸ assistant",
				"• one nit", "resource file:///src/x.go (text/x-go)"} {
				if !strings.Contains(got, want) {
					t.Errorf("no %q in:\n%s", want, got)
				}
			}
			if strings.Contains(got, `"role"`) || strings.Contains(got, "\x1b]") {
				t.Errorf("JSON or an escape in the rendered prompt:\n%s", got)
			}
		})
	}
}
