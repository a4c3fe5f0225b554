package editor

import (
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/textbox"
)

const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

// A JSON editor refuses to send what does not parse, saying where; what
// parses is submitted and the editor closes; a submit error keeps it
// open, said inert.
func TestSendJSON(t *testing.T) {
	var sent []string
	reply := ""
	v := NewJSON(ctx(), "Send raw", `{"a":`, func(text string) (string, view.Action) {
		sent = append(sent, text)
		return reply, view.Flash("sent")
	})
	c := ctx()
	if a := v.Key(c, "editor-submit", keys.Parse("ctrl+s")); a.Close || len(sent) != 0 {
		t.Errorf("invalid JSON sent: %+v", a)
	}
	if out := ansi.Strip(v.Render(c, 60, 20)); !strings.Contains(out, "not valid JSON") {
		t.Errorf("no error drawn:\n%s", out)
	}
	v.Update(c, textbox.Edited{Text: `{"a":1}`})
	reply = "the server is gone" + hostile
	if a := v.Key(c, "editor-submit", keys.Parse("ctrl+s")); a.Close || len(sent) != 1 || sent[0] != `{"a":1}` {
		t.Errorf("a refused submit: %+v, sent %q", a, sent)
	}
	out := v.Render(c, 60, 20)
	if raw(out) || !strings.Contains(ansi.Strip(out), "the server is gone␛]52") {
		t.Errorf("the submit error, inert:\n%q", out)
	}
	reply = ""
	if a := v.Key(c, "editor-submit", keys.Parse("ctrl+s")); !a.Close || a.Flash != "sent" {
		t.Errorf("a submit: %+v", a)
	}
	v.Update(c, textbox.Edited{Err: errors.New("vi exited 1")})
	if out := ansi.Strip(v.Render(c, 60, 20)); !strings.Contains(out, "editor: vi exited 1") {
		t.Errorf("an $EDITOR failure not said:\n%s", out)
	}
}

// Decline is disabled without a server's request to decline; with one,
// esc and ctrl+d both decline and the footer offers decline, not cancel.
func TestDecline(t *testing.T) {
	c := ctx()
	plain := New(c, "Roots", "", nil, func(string) (string, view.Action) { return "", view.Action{} }, nil)
	if why := plain.Disabled(c, "editor-decline"); !strings.HasPrefix(why, "nothing to decline") {
		t.Errorf("decline without a request: %q", why)
	}
	if a := plain.Key(c, "editor-decline", keys.Parse("ctrl+d")); a.Close || !strings.Contains(a.Flash, "nothing to decline") {
		t.Errorf("decline pressed disabled: %+v", a)
	}
	if a := plain.Key(c, "editor-cancel", keys.Parse("esc")); !a.Close {
		t.Errorf("esc: %+v", a)
	}
	if f := strings.Join(plain.Footer(c), " "); f != "editor-submit editor-cancel" {
		t.Errorf("footer %q", f)
	}
	declined := 0
	req := New(c, "Sampling", "", []string{" asked by the server"}, func(string) (string, view.Action) { return "", view.Action{} },
		func() view.Action { declined++; return view.Flash("declined") })
	for _, n := range []string{"editor-decline", "editor-cancel"} {
		if a := req.Key(c, n, keys.Parse("esc")); !a.Close || a.Flash != "declined" {
			t.Errorf("%s: %+v", n, a)
		}
	}
	if declined != 2 {
		t.Errorf("declined %d times", declined)
	}
	if f := strings.Join(req.Footer(c), " "); f != "editor-submit editor-decline" {
		t.Errorf("footer %q", f)
	}
}

// Typed text goes to the text; ctrl+u clears it; ctrl+e asks for
// $EDITOR; no size panics.
func TestTypingAndSizes(t *testing.T) {
	c := ctx()
	var got string
	v := New(c, "Edit", "", nil, func(text string) (string, view.Action) { got = text; return "", view.Action{} }, nil)
	for _, r := range "hi" {
		v.Key(c, "", tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	v.Update(c, tea.PasteMsg{Content: " there"})
	v.Key(c, "editor-submit", keys.Parse("ctrl+s"))
	if got != "hi there" {
		t.Errorf("sent %q", got)
	}
	v.Key(c, "editor-clear", keys.Parse("ctrl+u"))
	v.Key(c, "editor-submit", keys.Parse("ctrl+s"))
	if got != "" {
		t.Errorf("sent %q after a clear", got)
	}
	if a := v.Key(c, "editor-external", keys.Parse("ctrl+e")); a.Cmd == nil {
		t.Error("ctrl+e runs no command")
	}
	for _, w := range []int{0, 1, 5, 80} {
		for _, h := range []int{0, 1, 3, 24} {
			v.Render(c, w, h)
		}
	}
}

// Text the editor opens with (a server's params to replay, a request to
// answer) is drawn without its escapes working.
func TestRenderTextInert(t *testing.T) {
	v := New(ctx(), "Replay", `{"q":"`+hostile+`"}`, nil, func(string) (string, view.Action) { return "", view.Action{} }, nil)
	if out := v.Render(ctx(), 60, 10); raw(out) {
		t.Errorf("a raw escape drawn: %q", out)
	}
}
