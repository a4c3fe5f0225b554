// Package filterline is the input line under a pane (its filter) or the
// catalog (its find). It takes the body's last line and the footer while
// it is open; what is typed applies at once when it parses, and a syntax
// error is shown with a caret under its column while the filter before it
// stays.
package filterline

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/filter"
	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/textbox"
)

// Scope is where the line's keys are looked up: a text scope.
const Scope = keys.Filter

// Target is what the line filters: a pane, or the catalog.
type Target interface {
	// Label is the line's prompt (" filter requests › ").
	Label() string
	// Expressions says whether the text is a filter expression (checked
	// before it applies) or plain words (the catalog's find).
	Expressions() bool
	// Apply sets the filter to text, which parses; "" clears it.
	Apply(text string)
	// Move moves the target's selection by d rows.
	Move(d int)
	// Count is how much matches (" · 3 of 11 calls match"), "" when
	// nothing is filtered.
	Count() string
}

// Line is the input line's state.
type Line struct {
	t      Target
	in     textinput.Model
	before string // what esc goes back to
	err    *filter.SyntaxError
}

// New opens the line over t holding text.
func New(c view.Context, t Target, text string) *Line {
	in := textbox.NewLine(text, c.Theme)
	in.Placeholder = "~e · ~t echo · ~m tools/* & ~dur >1s · text"
	if !t.Expressions() {
		in.Placeholder = "a name, a title or words of a description"
	}
	return &Line{t: t, in: in, before: text}
}

// EscRestores makes esc go back to s instead of the text the line opened
// with: a new find opens empty, but esc keeps the last one.
func (l *Line) EscRestores(s string) { l.before = s }

// Keys is the line's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys()}

var bindings = view.Bindings[*Line]{
	{Binding: keys.Binding{Name: "filter-apply", Scope: Scope, Keys: []string{"enter"}, Help: "keep the filter and go back to the list (it applies as you type, once valid)", Short: "keep"},
		Run: func(*Line, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "filter-cancel", Scope: Scope, Keys: []string{"esc"}, Help: "cancel: the filter as it was before", Short: "cancel"},
		Run: func(l *Line, _ view.Context) view.Action { l.t.Apply(l.before); return view.Close() }},
	{Binding: keys.Binding{Name: "filter-up", Scope: Scope, Keys: []string{"up"}, Help: "select the row above"},
		Run: func(l *Line, _ view.Context) view.Action { l.t.Move(-1); return view.Action{} }},
	{Binding: keys.Binding{Name: "filter-down", Scope: Scope, Keys: []string{"down"}, Help: "select the row below"},
		Run: func(l *Line, _ view.Context) view.Action { l.t.Move(1); return view.Action{} }},
}

// Value is the text typed so far.
func (l *Line) Value() string { return l.in.Value() }

// Key handles a key while the line is open; Close means it is done.
func (l *Line) Key(c view.Context, msg tea.KeyPressMsg) view.Action {
	if a, ok := bindings.Do(l, c, c.Keys.Lookup(Scope, msg.String(), false)); ok {
		return a
	}
	return l.edit(msg)
}

// Paste puts pasted text in the line, made inert and on one line.
func (l *Line) Paste(msg tea.PasteMsg) view.Action {
	return l.edit(tea.PasteMsg{Content: strings.ReplaceAll(termsafe.Line(msg.Content), "⏎", " ")})
}

func (l *Line) edit(msg tea.Msg) view.Action {
	old := l.in.Value()
	var cmd tea.Cmd
	l.in, cmd = l.in.Update(msg)
	if v := l.in.Value(); v != old {
		l.typed(v)
	}
	return view.Action{Cmd: cmd}
}

// typed applies the text when it parses.
func (l *Line) typed(text string) {
	l.err = nil
	if l.t.Expressions() {
		if _, err := filter.Parse(text); err != nil {
			l.err, _ = err.(*filter.SyntaxError)
			if l.err == nil {
				l.err = &filter.SyntaxError{Col: 1, Msg: err.Error(), Input: text}
			}
			return
		}
	}
	l.t.Apply(text)
}

// Lines are the input line and, under it, the caret under a syntax
// error's column or the keys and the count.
func (l *Line) Lines(c view.Context, w int) (string, string) {
	th, fit := c.Theme, widget.Fit
	label := l.t.Label()
	l.in.SetWidth(max(10, w-ansi.StringWidth(label)-1))
	input := th.Accent.Render(label) + l.in.View()
	if l.err != nil {
		r := []rune(l.err.Input)
		col := ansi.StringWidth(label) + ansi.StringWidth(string(r[:widget.Clamp(l.err.Col-1, 0, len(r))]))
		msg := "column " + strconv.Itoa(l.err.Col) + ": " + termsafe.Line(l.err.Msg)
		// The message goes right of the caret, or left of it when it fits
		// only there or there is more room there.
		var line string
		if right := w - col - 2; ansi.StringWidth(msg) <= right || right >= col-1 {
			line = strings.Repeat(" ", col) + "^ " + msg
		} else {
			msg = fit(msg, max(1, col-1))
			line = msg + strings.Repeat(" ", max(1, col-ansi.StringWidth(msg))) + "^"
		}
		return fit(input, w), th.Error.Render(fit(line, w))
	}
	var b strings.Builder
	for _, k := range [][2]string{{c.KeyOf("filter-apply"), "keep"}, {c.KeyOf("filter-cancel"), "cancel"},
		{c.KeyOf("filter-up") + "/" + c.KeyOf("filter-down"), "select"}} {
		b.WriteString(" " + th.HelpKey.Render(k[0]) + " " + th.Faint.Render(k[1]))
	}
	if n := l.t.Count(); n != "" {
		b.WriteString(th.Faint.Render(n))
	}
	return fit(input, w), fit(b.String(), w)
}
