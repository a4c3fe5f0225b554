package chooser

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"mcpscope/themes"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

func ctx() view.Context { return view.Context{Theme: themes.Plain(), Keys: keys.New(Keys.Bindings)} }

func levels(chosen *int) *View {
	return New("Server log level", []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}, 1,
		func(i int) view.Action { *chosen = i; return view.Flash("chose") })
}

// Enter closes and runs the choice on the selection; the selection
// stays within the options; esc closes without choosing.
func TestKeys(t *testing.T) {
	chosen := -1
	v := levels(&chosen)
	c := ctx()
	v.Key(c, "choose-up", keys.Parse("up"))
	v.Key(c, "choose-up", keys.Parse("up"))
	if v.Sel != 0 {
		t.Errorf("sel %d past the top", v.Sel)
	}
	for range 20 {
		v.Key(c, "choose-down", keys.Parse("down"))
	}
	if v.Sel != 7 {
		t.Errorf("sel %d past the bottom", v.Sel)
	}
	if a := v.Key(c, "choose", keys.Parse("enter")); !a.Close || a.Flash != "chose" || chosen != 7 {
		t.Errorf("choose: %+v, chosen %d", a, chosen)
	}
	chosen = -1
	if a := v.Key(c, "choose-cancel", keys.Parse("esc")); !a.Close || a.Flash != "" || chosen != -1 {
		t.Errorf("cancel: %+v, chosen %d", a, chosen)
	}
	if a := v.Key(c, "quit", keys.Parse("ctrl+c")); !a.Quit {
		t.Errorf("quit: %+v", a)
	}
}

// The selection is always drawn, however short the view; a long title
// wraps whole within the width.
func TestRender(t *testing.T) {
	chosen := -1
	v := levels(&chosen)
	for _, sel := range []int{0, 3, 7} {
		v.Sel = sel
		for _, h := range []int{1, 3, 4, 6, 20} {
			out := ansi.Strip(v.Render(ctx(), 40, h))
			if !strings.Contains(out, "▸ "+v.Options[sel]) {
				t.Errorf("sel %d at height %d: not drawn:\n%s", sel, h, out)
			}
		}
	}
	v.Sel = 1
	if out := ansi.Strip(v.Render(ctx(), 40, 20)); !strings.Contains(out, "  debug\n▸ info \n  notice") {
		t.Errorf("the options:\n%s", out)
	}
	long := New("Run "+strings.Repeat("word ", 30)+"/usr/local/bin/the-end?", []string{"no", "yes"}, 0, func(int) view.Action { return view.Action{} })
	out := ansi.Strip(long.Render(ctx(), 30, 20))
	for _, l := range strings.Split(out, "\n") {
		if w := ansi.StringWidth(l); w > 30 {
			t.Errorf("a line %d wide: %q", w, l)
		}
	}
	if !strings.Contains(out, "the-end?") || !strings.Contains(out, "▸ no") {
		t.Errorf("the title is not whole or the options gone:\n%s", out)
	}
	for _, w := range []int{0, 1, 5} {
		long.Render(ctx(), w, 0) // no panic
	}
}
