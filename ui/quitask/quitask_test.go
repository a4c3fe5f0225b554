package quitask

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

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

// q quits (closing the panel first); esc stays.
func TestKeys(t *testing.T) {
	quits := 0
	v := New([]Call{{Key: "1", Method: "tools/call", Name: "slow"}}, nil, func() view.Action { quits++; return view.Action{Quit: true} })
	if a := v.Key(ctx(), "quit-stay", keys.Parse("esc")); !a.Close || a.Quit || quits != 0 {
		t.Errorf("stay: %+v, %d quits", a, quits)
	}
	if a := v.Key(ctx(), "quit-anyway", keys.Parse("q")); !a.Close || !a.Quit || quits != 1 {
		t.Errorf("quit anyway: %+v, %d quits", a, quits)
	}
	if a := v.Key(ctx(), "open", keys.Parse("enter")); a.Close || a.Quit {
		t.Errorf("enter by habit: %+v", a)
	}
}

// The calls lost and detached are named, their server-given names and
// why they cannot be detached drawn inert, wrapped within the width; too
// many for the height end in " …".
func TestRender(t *testing.T) {
	v := New([]Call{{Key: "1", Method: "tools/call", Name: "slow" + hostile, Why: "the server gave no session id" + hostile}, {Key: "2", Method: "resources/read"}},
		[]Call{{Key: "3", Method: "tools/call", Name: "long"}}, func() view.Action { return view.Action{} })
	out := v.Render(ctx(), 60, 40)
	if raw(out) {
		t.Fatalf("a raw escape: %q", out)
	}
	text := ansi.Strip(out)
	for _, want := range []string{"Quit? 2 running calls would be lost: they would end", "✗ #1 tools/call slow␛]52;c;cHduZWQ=␇␛[2J",
		"the server gave no session id␛]52", "✗ #2 resources/read\n", "1 call will be detached", "⇥ #3 tools/call long", "q or y: quit anyway · esc or n: stay"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	for _, w := range []int{0, 5, 20, 60} {
		for _, h := range []int{0, 1, 3, 40} {
			ls := strings.Split(v.Render(ctx(), w, h), "\n")
			if h > 0 && len(ls) > h {
				t.Errorf("at %dx%d: %d lines", w, h, len(ls))
			}
			if w >= 20 {
				for _, l := range ls {
					if lw := ansi.StringWidth(l); lw > w {
						t.Errorf("at %dx%d: a line %d wide: %q", w, h, lw, l)
					}
				}
			}
		}
	}
	if ls := strings.Split(ansi.Strip(v.Render(ctx(), 60, 3)), "\n"); ls[len(ls)-1] != " …" {
		t.Errorf("cut without a mark: %q", ls)
	}
	one := ansi.Strip(New([]Call{{Key: "1", Method: "ping"}}, nil, nil).Render(ctx(), 80, 20))
	if !strings.Contains(one, "1 running call would be lost: it would end") {
		t.Errorf("one call:\n%s", one)
	}
}
