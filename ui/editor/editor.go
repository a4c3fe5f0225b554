// Package editor is a view for multi-line text: a raw JSON-RPC message,
// params to edit before a replay, a sampling reply, roots, a raw result.
// A textarea, with $EDITOR one key away.
package editor

import (
	"strings"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget/textbox"
)

// Scope is where the view's keys are looked up: a text scope (typed
// text goes to the text, global keys do not apply).
const Scope = keys.Editor

// View is the text being edited and what sending it does.
type View struct {
	title  string
	header []string // sanitized context shown above the text
	area   textarea.Model
	json   bool // the text is JSON: say where it is wrong as it is typed
	err    string
	// submit is what sending text asks of the root; errMsg, when set,
	// keeps the editor open saying what is wrong.
	submit func(text string) (errMsg string, a view.Action)
	// decline, when set, is what ctrl+d and esc do: a server's request
	// must always be answered. Without it there is nothing to decline.
	decline func() view.Action
}

// New is an editor holding text under title, with header lines above it.
func New(c view.Context, title, text string, header []string,
	submit func(text string) (string, view.Action), decline func() view.Action) *View {
	return &View{title: title, header: header, area: textbox.NewArea(text, c.Theme), submit: submit, decline: decline}
}

// NewJSON is an editor whose text must be JSON, with nothing to decline.
func NewJSON(c view.Context, title, text string, submit func(text string) (string, view.Action)) *View {
	v := New(c, title, text, nil, submit, nil)
	v.json = true
	return v
}

// Keys is the view's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"editor-submit", "editor-decline", "editor-cancel"}}

var bindings = view.Bindings[*View]{
	{Binding: keys.Binding{Name: "editor-submit", Scope: Scope, Keys: []string{"ctrl+s"}, Help: "send"},
		Run: (*View).send},
	{Binding: keys.Binding{Name: "editor-decline", Scope: Scope, Keys: []string{"ctrl+d"}, Help: "decline (a server's request)", Short: "decline"},
		Run: func(v *View, _ view.Context) view.Action { return view.Close().Then(v.decline()) },
		Disabled: func(v *View, _ view.Context) string {
			if v.decline == nil {
				return "nothing to decline: this is not a server's request (esc cancels)"
			}
			return ""
		}},
	{Binding: keys.Binding{Name: "editor-cancel", Scope: Scope, Keys: []string{"esc"}, Help: "cancel (declines a server's request)", Short: "cancel"},
		Run: func(v *View, _ view.Context) view.Action {
			if v.decline != nil {
				return view.Close().Then(v.decline())
			}
			return view.Close()
		}},
	{Binding: keys.Binding{Name: "editor-external", Scope: Scope, Keys: []string{"ctrl+e"}, Help: "edit in $EDITOR ($VISUAL, else vi)"},
		Run: func(v *View, _ view.Context) view.Action {
			ext := ".txt"
			if v.json {
				ext = ".json"
			}
			return view.Action{Cmd: textbox.ExternalEdit(v.area.Value(), ext)}
		}},
	{Binding: keys.Binding{Name: "editor-clear", Scope: Scope, Keys: []string{"ctrl+u"}, Help: "clear (arrows, alt+←/→, ctrl+w, home/end edit in place)"},
		Run: func(v *View, _ view.Context) view.Action { v.area.SetValue(""); return view.Action{} }},
}

func (v *View) send(view.Context) view.Action {
	text := v.area.Value()
	if v.json {
		if p := textbox.JSONProblem(text); p != "" {
			v.err = "not valid JSON: " + p
			return view.Action{}
		}
	}
	errMsg, a := v.submit(text)
	if errMsg != "" {
		v.err = errMsg
		return view.Action{Cmd: a.Cmd}
	}
	return view.Close().Then(a)
}

func (v *View) Scope() keys.Scope { return Scope }

// Disabled is why a binding cannot run now (decline, with nothing to
// decline).
func (v *View) Disabled(c view.Context, name string) string { return bindings.Why(v, c, name) }

// Footer offers decline only where there is something to decline, and
// then not cancel: esc declines too (the title says so), and a footer
// saying "esc cancel" beside it would contradict that.
func (v *View) Footer(view.Context) []string {
	if v.decline == nil {
		return []string{"editor-submit", "editor-cancel"}
	}
	return []string{"editor-submit", "editor-decline"}
}

func (v *View) Key(c view.Context, name string, msg tea.KeyPressMsg) view.Action {
	if a, ok := bindings.Do(v, c, name); ok {
		return a
	}
	var cmd tea.Cmd
	v.area, cmd = v.area.Update(msg)
	return view.Action{Cmd: cmd}
}

// Update takes pasted text and what $EDITOR wrote.
func (v *View) Update(_ view.Context, msg tea.Msg) view.Action {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		var cmd tea.Cmd
		v.area, cmd = v.area.Update(msg)
		return view.Action{Cmd: cmd}
	case textbox.Edited:
		if msg.Err != nil {
			v.err = "editor: " + msg.Err.Error()
			break
		}
		v.area.SetValue(msg.Text)
		v.err = ""
		if v.json {
			v.err = textbox.JSONProblem(msg.Text)
		}
	}
	return view.Action{}
}

func (v *View) Render(c view.Context, w, h int) string {
	th := c.Theme
	l := []string{th.Title.Render(" " + v.title)}
	l = append(l, v.header...)
	l = append(l, th.Faint.Render(" ─ "+c.KeyOf("editor-submit")+" sends, "+c.KeyOf("editor-external")+" opens $EDITOR ─"))
	textbox.SizeArea(&v.area, w-2, max(3, h-len(l)-3))
	l = append(l, v.area.View())
	if v.err != "" {
		l = append(l, th.Error.Render(" "+termsafe.Line(v.err)))
	} else if v.json {
		if p := textbox.JSONProblem(v.area.Value()); p != "" {
			l = append(l, th.Faint.Render(" "+termsafe.Line(p)))
		}
	}
	return strings.Join(l, "\n")
}
