package filterline

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// fakeTarget records what the line applies and moves.
type fakeTarget struct {
	exprs   bool
	applied []string
	moved   int
	count   string
}

func (f *fakeTarget) Label() string     { return " filter requests › " }
func (f *fakeTarget) Expressions() bool { return f.exprs }
func (f *fakeTarget) Apply(text string) { f.applied = append(f.applied, text) }
func (f *fakeTarget) Move(d int)        { f.moved += d }
func (f *fakeTarget) Count() string     { return f.count }

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

func typeIn(l *Line, s string) {
	for _, r := range s {
		k := tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == ' ' {
			k.Code = tea.KeySpace
		}
		l.Key(ctx(), k)
	}
}

func last(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return s[len(s)-1]
}

// A filter applies as typed while it parses; a syntax error keeps the
// filter before it and draws a caret under its column; esc restores
// what the line opened with, enter keeps.
func TestTypedExpressions(t *testing.T) {
	f := &fakeTarget{exprs: true, count: " · 3 of 11 calls match"}
	l := New(ctx(), f, "~e")
	typeIn(l, " & ~m")
	for _, a := range f.applied {
		if strings.HasSuffix(a, "&") || strings.HasSuffix(a, "& ") || strings.HasSuffix(a, "~m") {
			t.Errorf("an incomplete expression applied: %q", a)
		}
	}
	_, under := l.Lines(ctx(), 80)
	under = ansi.Strip(under)
	if !strings.Contains(under, "^ column ") {
		t.Errorf("no caret under a syntax error: %q", under)
	}
	typeIn(l, " tools/*")
	if got := last(f.applied); got != "~e & ~m tools/*" {
		t.Errorf("applied %q", got)
	}
	input, under := l.Lines(ctx(), 80)
	if !strings.Contains(ansi.Strip(input), " filter requests › ~e & ~m tools/*") || !strings.Contains(ansi.Strip(under), "3 of 11 calls match") {
		t.Errorf("lines %q / %q", input, under)
	}
	if a := l.Key(ctx(), keys.Parse("esc")); !a.Close || last(f.applied) != "~e" {
		t.Errorf("esc: %+v, applied %q", a, last(f.applied))
	}
	l = New(ctx(), f, "")
	l.EscRestores("~t")
	l.Key(ctx(), keys.Parse("up"))
	l.Key(ctx(), keys.Parse("down"))
	l.Key(ctx(), keys.Parse("down"))
	if f.moved != 1 {
		t.Errorf("moved %d", f.moved)
	}
	if a := l.Key(ctx(), keys.Parse("esc")); !a.Close || last(f.applied) != "~t" {
		t.Errorf("esc after EscRestores: applied %q", last(f.applied))
	}
	if a := l.Key(ctx(), keys.Parse("enter")); !a.Close {
		t.Errorf("enter: %+v", a)
	}
}

// Words (the catalog's find) apply as typed, unparsed; a paste is made
// inert and one line.
func TestWordsAndPaste(t *testing.T) {
	f := &fakeTarget{}
	l := New(ctx(), f, "")
	typeIn(l, "~(")
	if got := last(f.applied); got != "~(" {
		t.Errorf("words applied %q", got)
	}
	l.Paste(tea.PasteMsg{Content: "a\x1b]52;c;cHduZWQ=\x07\nb"})
	if v := l.Value(); strings.ContainsAny(v, "\x1b\x07\n") {
		t.Errorf("a paste kept control bytes: %q", v)
	}
	if got := last(f.applied); strings.ContainsAny(got, "\x1b\x07\n") {
		t.Errorf("applied control bytes: %q", got)
	}
}

// The lines fit the width, narrow ones too, the error message either
// side of the caret.
func TestLinesFit(t *testing.T) {
	for _, text := range []string{"~m (", strings.Repeat("x", 60) + " & (", ""} {
		f := &fakeTarget{exprs: true, count: " · 1 of 2 calls match"}
		l := New(ctx(), f, "")
		typeIn(l, text)
		for _, w := range []int{1, 10, 30, 80} {
			a, b := l.Lines(ctx(), w)
			for _, s := range []string{a, b} {
				if sw := ansi.StringWidth(s); sw > w {
					t.Errorf("%q at %d: a line %d wide: %q", text, w, sw, s)
				}
			}
		}
	}
}
