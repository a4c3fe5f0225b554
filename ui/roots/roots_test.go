package roots

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/session"
	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

func ctx() view.Context {
	return view.Context{Theme: themes.Plain(), Keys: keys.New(append(AskKeys.Bindings, EditKeys.Bindings...))}
}

// Parse reads a URI or an absolute path and a name, naming a root after
// its last element; a line that is no root is named, inert.
func TestParse(t *testing.T) {
	rs, err := Parse("\n/home/ada/src  my code\nfile:///tmp/x\nfile://localhost/srv\n")
	if err != "" {
		t.Fatal(err)
	}
	want := []session.Root{{URI: "file:///home/ada/src", Name: "my code"}, {URI: "file:///tmp/x", Name: "x"}, {URI: "file://localhost/srv", Name: "srv"}}
	if len(rs) != len(want) {
		t.Fatalf("%v", rs)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("root %d: %+v, want %+v", i, rs[i], want[i])
		}
	}
	if rs, err := Parse(""); err != "" || rs == nil || len(rs) != 0 {
		t.Errorf("no roots: %v, %q (want an empty list, not null)", rs, err)
	}
	for text, want := range map[string]string{
		"/ok\nrelative/path":        "line 2: relative/path: a root is a file:// URI or an absolute path",
		"file://host.example/x":     "line 1: file://host.example/x is not a file:///absolute/path URI",
		"x\x1b]52;c;cHduZWQ=\x07 n": "line 1: x␛]52;c;cHduZWQ=␇: a root",
	} {
		if _, err := Parse(text); !strings.HasPrefix(err, want) {
			t.Errorf("Parse(%q): %q, want %q…", text, err, want)
		}
	}
	if got := Text(want); got != "file:///home/ada/src my code\nfile:///tmp/x x\nfile://localhost/srv srv\n" {
		t.Errorf("Text: %q", got)
	}
}

// Asked by the server: ctrl+s answers with the roots typed, esc
// declines; a bad line keeps the panel open saying which.
func TestAsk(t *testing.T) {
	c := ctx()
	var sent [][]session.Root
	declined := 0
	v := Ask(c, " (during call 4)", []session.Root{{URI: "file:///a", Name: "a"}},
		func(rs []session.Root) view.Action { sent = append(sent, rs); return view.Flash("answered") },
		func() view.Action { declined++; return view.Flash("declined") })
	if v.Scope() != AskScope {
		t.Errorf("scope %q", v.Scope())
	}
	if out := ansi.Strip(v.Render(c, 100, 12)); !strings.Contains(out, "roots/list) (during call 4) — ctrl+s sends, esc declines") {
		t.Errorf("title:\n%s", out)
	}
	v.Update(c, tea.PasteMsg{Content: "nope"})
	if a := v.Key(c, "roots-answer", keys.Parse("ctrl+s")); a.Close || len(sent) != 0 {
		t.Errorf("a bad line sent: %+v", a)
	}
	if out := ansi.Strip(v.Render(c, 100, 12)); !strings.Contains(out, "line 2: nope: a root is") {
		t.Errorf("the bad line is not named:\n%s", out)
	}
	v.Key(c, "", keys.Parse("backspace"))
	v.Key(c, "", keys.Parse("backspace"))
	v.Key(c, "", keys.Parse("backspace"))
	v.Key(c, "", keys.Parse("backspace"))
	if out := ansi.Strip(v.Render(c, 100, 12)); strings.Contains(out, "line 2") {
		t.Errorf("the error stays after an edit:\n%s", out)
	}
	if a := v.Key(c, "roots-answer", keys.Parse("ctrl+s")); !a.Close || a.Flash != "answered" || len(sent) != 1 || sent[0][0].URI != "file:///a" {
		t.Errorf("answer: %+v, sent %v", a, sent)
	}
	if a := v.Key(c, "roots-decline", keys.Parse("esc")); !a.Close || a.Flash != "declined" || declined != 1 {
		t.Errorf("decline: %+v", a)
	}
}

// Opened with R: esc cancels without applying; the panel's height
// follows its text, 3 to 8 rows of it, and every line fits the width.
func TestEditRows(t *testing.T) {
	c := ctx()
	applied := 0
	v := Edit(c, nil, func([]session.Root) view.Action { applied++; return view.Action{} })
	if v.Scope() != EditScope {
		t.Errorf("scope %q", v.Scope())
	}
	if a := v.Key(c, "roots-cancel", keys.Parse("esc")); !a.Close || applied != 0 {
		t.Errorf("cancel: %+v, applied %d", a, applied)
	}
	if n := v.Rows(c, 80, 40); n != 4+3 {
		t.Errorf("rows %d with no roots", n)
	}
	var many []session.Root
	for range 20 {
		many = append(many, session.Root{URI: "file:///" + strings.Repeat("d", 100)})
	}
	big := Edit(c, many, func([]session.Root) view.Action { return view.Action{} })
	if n := big.Rows(c, 80, 40); n != 4+8 {
		t.Errorf("rows %d with 20 roots", n)
	}
	if n := big.Rows(c, 80, 5); n != 5 {
		t.Errorf("rows %d in 5", n)
	}
	for _, w := range []int{0, 1, 10, 40} {
		for _, l := range strings.Split(big.Render(c, w, 12), "\n") {
			if lw := ansi.StringWidth(l); lw > w && w >= 40 { // narrower, the text area keeps a minimum width the root cuts
				t.Errorf("at %d: a line %d wide: %q", w, lw, l)
			}
		}
	}
	if a := big.Key(c, "roots-apply", keys.Parse("ctrl+s")); !a.Close {
		t.Errorf("apply: %+v", a)
	}
}
