// Package chooser is a view that picks one of a few options: a log level,
// a copy format, a confirmation.
package chooser

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// Scope is where the view's keys are looked up.
const Scope keys.Scope = "chooser"

// View is a title over options, one selected.
type View struct {
	Title   string
	Options []string
	Sel     int
	// onChoose is what choosing option i asks of the root.
	onChoose func(i int) view.Action
}

// New is a chooser starting on option sel.
func New(title string, options []string, sel int, onChoose func(i int) view.Action) *View {
	return &View{Title: title, Options: options, Sel: sel, onChoose: onChoose}
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"choose", "choose-cancel"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "choose", Scope: Scope, Keys: []string{"enter"}, Help: "choose"},
		Run: func(v *View, _ view.Context) view.Action { return view.Close().Then(v.onChoose(v.Sel)) }},
	{Binding: keys.Binding{Name: "choose-cancel", Scope: Scope, Keys: []string{"esc", "q"}, Help: "cancel", Short: "cancel"},
		Run: func(*View, view.Context) view.Action { return view.Close() }},
	{Binding: keys.Binding{Name: "choose-up", Scope: Scope, Keys: []string{"up", "k"}, Help: "up"},
		Run: func(v *View, _ view.Context) view.Action { v.move(-1); return view.Action{} }},
	{Binding: keys.Binding{Name: "choose-down", Scope: Scope, Keys: []string{"down", "j"}, Help: "down"},
		Run: func(v *View, _ view.Context) view.Action { v.move(1); return view.Action{} }},
	{Binding: keys.Binding{Name: "quit"}, Run: func(*View, view.Context) view.Action { return view.Action{Quit: true} }},
}

func (v *View) move(d int) { v.Sel = widget.Clamp(v.Sel+d, 0, len(v.Options)-1) }

func (v *View) Scope() keys.Scope { return Scope }

func (v *View) Key(c view.Context, name string, _ tea.KeyPressMsg) view.Action {
	a, _ := bindings.Do(v, c, name)
	return a
}

func (v *View) Render(c view.Context, w, h int) string {
	// A long title (a confirmation naming a command to run) wraps: all of
	// it is what the person decides on.
	var l []string
	for _, line := range strings.Split(ansi.Wrap(v.Title, max(10, w-2), " /"), "\n") {
		l = append(l, c.Theme.Title.Render(" "+line))
	}
	l = append(l, "")
	h -= len(l) - 2
	// A window of the options that holds the selection.
	room := max(1, h-2)
	top := widget.Clamp(v.Sel-room+1, 0, max(0, len(v.Options)-room))
	for i := top; i < len(v.Options) && i < top+room; i++ {
		o := v.Options[i]
		if i == v.Sel {
			l = append(l, c.Theme.Selected.Render("▸ "+o+" "))
		} else {
			l = append(l, "  "+o)
		}
	}
	return strings.Join(l, "\n")
}
