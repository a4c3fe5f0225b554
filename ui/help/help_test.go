package help

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

const hostile = "\x1b]52;c;cHduZWQ=\x07\x1b[2J"

func raw(s string) bool {
	return strings.Contains(s, "\x1b]") || strings.Contains(s, "\x1b[2J") || strings.Contains(s, "\x07")
}

// A small keymap: two scopes, one binding with a long help line.
func ctx() view.Context {
	return view.Context{Theme: themes.Plain(), Keys: keys.New([]keys.Binding{
		{Name: "quit", Scope: keys.Global, Keys: []string{"ctrl+c"}, Help: "quit"},
		{Name: "help", Scope: keys.Global, Keys: []string{"?"}, Help: "this help"},
		{Name: "send", Scope: "catalog", Keys: []string{"enter"}, Help: "send the request, " + strings.Repeat("and then some more words ", 6)},
	})}
}

// The session's protocol and era, as the server gave them, and why a
// binding cannot run, are drawn inert; every binding is listed by scope.
func TestLines(t *testing.T) {
	v := New(ctx(), Session{Protocol: "2025-06-18" + hostile, Era: "legacy", EraReason: "the server said so" + hostile},
		func(name string) string {
			if name == "send" {
				return "the server is gone" + hostile
			}
			return ""
		})
	text := strings.Join(v.Lines(), "\n")
	if raw(text) {
		t.Fatalf("a raw escape in:\n%q", text)
	}
	text = ansi.Strip(text)
	for _, want := range []string{
		"   protocol 2025-06-18␛]52;c;cHduZWQ=␇␛[2J, legacy era",
		"   why      the server said so␛]52",
		" global\n   ctrl+c           quit\n",
		" catalog\n   enter            send the request,",
		" — not now: the server is gone␛]52;c;cHduZWQ=␇␛[2J",
		" mouse\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	if text := strings.Join(New(ctx(), Session{}, func(string) string { return "" }).Lines(), "\n"); strings.Contains(text, "protocol") {
		t.Errorf("a session section with nothing to say:\n%s", text)
	}
}

// A long line wraps under its help text, every row within the width; no
// size panics.
func TestRenderWraps(t *testing.T) {
	v := New(ctx(), Session{}, func(string) string { return "" })
	out := v.Render(ctx(), 50, 40)
	rows := strings.Split(out, "\n")
	for _, r := range rows {
		if w := ansi.StringWidth(r); w > 50 {
			t.Errorf("a row %d wide: %q", w, r)
		}
	}
	if !strings.Contains(out, "\n"+strings.Repeat(" ", helpIndent)+"and then") {
		t.Errorf("the long line does not wrap under its text:\n%s", out)
	}
	for _, w := range []int{0, 1, 10, 39, 40, 200} {
		for _, h := range []int{0, 1, 2, 5} {
			if got := len(strings.Split(v.Render(ctx(), w, h), "\n")); h > 0 && got > h {
				t.Errorf("at %dx%d: %d rows", w, h, got)
			}
		}
	}
}

// Down and up scroll, stopping with the last row at the bottom; help,
// quit and an unbound key close.
func TestKeys(t *testing.T) {
	v := New(ctx(), Session{}, func(string) string { return "" })
	c := ctx()
	v.Render(c, 80, 5)
	first := v.Render(c, 80, 5)
	for range 100 {
		v.Key(c, "down", keys.Parse("down"))
	}
	last := v.Render(c, 80, 5)
	if first == last || !strings.Contains(last, "shift+drag") {
		t.Errorf("scrolled to the end:\n%s", last)
	}
	v.Key(c, "page-up", keys.Parse("pgup"))
	v.Key(c, "page-up", keys.Parse("pgup"))
	if got := v.Render(c, 80, 5); got != first {
		t.Errorf("back at the top:\n%s\nwant\n%s", got, first)
	}
	for _, n := range []string{"help", "quit", ""} {
		if a := v.Key(c, n, keys.Parse("x")); !a.Close {
			t.Errorf("%q: %+v", n, a)
		}
	}
}
