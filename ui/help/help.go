// Package help is the key help (?): every binding of the keymap by scope,
// with why one cannot run now, and the mouse; generated from the keymap,
// as the footer and the README's key section are.
package help

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Session is what the help says of the session: its protocol and era.
type Session struct{ Protocol, Era, EraReason string }

// View is the help's lines and the scroll position: top is the first row
// drawn of the lines as wrapped at the last size drawn (w×h).
type View struct {
	lines []string
	top   int
	w, h  int
}

// Keys is the view's part of the keymap: it takes the global keys.
var Keys = view.Group{Scope: keys.Global, Bindings: bindings.Keys(), Footer: []string{"help"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "down"}, Run: scroll(1)},
	{Binding: keys.Binding{Name: "up"}, Run: scroll(-1)},
	{Binding: keys.Binding{Name: "page-down"}, Run: scroll(10)},
	{Binding: keys.Binding{Name: "page-up"}, Run: scroll(-10)},
	{Binding: keys.Binding{Name: "help"}, Run: closeHelp},
	{Binding: keys.Binding{Name: "quit"}, Run: closeHelp},
}

func closeHelp(*View, view.Context) view.Action { return view.Close() }

// scroll moves by d rows, stopping where the last row is at the bottom.
func scroll(d int) func(*View, view.Context) view.Action {
	return func(v *View, _ view.Context) view.Action {
		v.top = widget.Clamp(v.top+d, 0, v.lastTop())
		return view.Action{}
	}
}

// lastTop is the top row that shows the last one at the bottom.
func (v *View) lastTop() int {
	if v.h == 0 {
		return len(v.lines) - 1
	}
	return max(0, len(v.rows(v.w))-(v.h-1))
}

// New lays the help out; disabled says why a binding cannot run where the
// keys went before help opened.
func New(c view.Context, s Session, disabled func(name string) string) *View {
	th := c.Theme
	var l []string
	if s.EraReason != "" || s.Protocol != "" {
		l = append(l, th.Title.Render(" session"),
			"   protocol "+termsafe.Line(widget.FirstNonEmpty(s.Protocol, "(not negotiated)"))+", "+termsafe.Line(s.Era)+" era",
			"   why      "+termsafe.Line(widget.FirstNonEmpty(s.EraReason, "(no era decision recorded)")), "")
	}
	key := func(k string) string { return th.HelpKey.Render(fmt.Sprintf("%-16s", k)) }
	var last keys.Scope
	for _, b := range c.Keys.Bindings() {
		if b.Scope != last {
			if last != "" {
				l = append(l, "")
			}
			l = append(l, th.Title.Render(" "+string(b.Scope)))
			last = b.Scope
		}
		line := fmt.Sprintf("   %s %s", key(strings.Join(b.Keys, " ")), b.Help)
		if why := disabled(b.Name); why != "" {
			line += th.Faint.Render(" — not now: " + termsafe.Line(why))
		}
		l = append(l, line)
	}
	l = append(l, "", th.Title.Render(" mouse"),
		fmt.Sprintf("   %s %s", key("wheel"), "scroll the pane or view under the pointer"),
		fmt.Sprintf("   %s %s", key("click"), "focus the pane under the pointer and select the row"),
		fmt.Sprintf("   %s %s", key("shift+drag"), "select text for the terminal's own copy (most terminals)"))
	return &View{lines: l}
}

// Lines is the help's text.
func (v *View) Lines() []string { return v.lines }

func (v *View) Scope() keys.Scope { return keys.Global }

// Key scrolls; help, quit and any unbound key close.
func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	if name == "" {
		return view.Close()
	}
	a, _ := bindings.Do(v, c, name)
	return a
}

// Render wraps a line wider than the screen under its help text, so that
// why a key cannot run now is read whole at any width.
func (v *View) Render(c view.Context, w, h int) string {
	v.w, v.h = w, h
	v.top = widget.Clamp(v.top, 0, v.lastTop())
	out := []string{c.Theme.Title.Render(" Keys — ↑/↓ scroll, any other key closes")}
	rows := v.rows(w)
	from := min(v.top, len(rows))
	out = append(out, rows[from:max(from, min(len(rows), v.top+h-1))]...) // h 0: no rows, not a slice ending before it starts
	if len(out) > h {
		out = out[:h]
	}
	return strings.Join(out, "\n")
}

// rows are the help's lines as drawn w columns wide, a long one wrapped.
func (v *View) rows(w int) []string {
	var out []string
	for _, l := range v.lines {
		if ansi.StringWidth(l) <= w || w < 2*helpIndent {
			out = append(out, l)
			continue
		}
		// The key column stays; the text after it wraps beneath itself.
		key := ansi.Truncate(l, helpIndent, "")
		for i, r := range widget.WrapLines(ansi.TruncateLeft(l, helpIndent, ""), w-helpIndent, 20) {
			if i > 0 {
				key = strings.Repeat(" ", helpIndent)
			}
			out = append(out, key+r)
		}
	}
	return out
}

// helpIndent is where a key's help text starts: "   " and the key column.
const helpIndent = 3 + 16 + 1
