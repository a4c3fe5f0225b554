package ui

import (
	"encoding/json"

	tea "charm.land/bubbletea/v2"

	formview "mcpscope/ui/form"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// form is a form (ui/form) the root asks for — an elicitation's answer,
// a listen stream's filter, a file to save to — whose callbacks act on the
// root: fill in the fields, push it, and push gives it its view.
type form struct {
	title, message string
	fields         []*field
	onSubmit       func(m *Model, args json.RawMessage) tea.Cmd
	onDecline      func(m *Model) tea.Cmd // nil: nothing to decline
	onCancel       func(m *Model) tea.Cmd
	rawWhy         string // start in raw JSON, saying why
	v              *formview.Form
}

type field = formview.Field

var newTextField = formview.Text

func withDesc(f *field, desc string) *field { return f.WithDesc(desc) }

// build makes the form's view, its callbacks bound to m.
func (f *form) build(m *Model) {
	if f.v != nil {
		return
	}
	act := func(cmd func(*Model) tea.Cmd) func() view.Action {
		return func() view.Action { return view.Action{Cmd: cmd(m)} }
	}
	f.v = formview.New(f.title, f.message, f.fields, func(args json.RawMessage, _ formview.Call) view.Action {
		return view.Action{Cmd: f.onSubmit(m, args)}
	})
	if f.onDecline != nil {
		f.v.Declinable(act(f.onDecline))
	}
	if f.onCancel != nil {
		f.v.OnCancel(act(f.onCancel))
	}
	if f.rawWhy != "" {
		f.v.RawOnly(m.viewCtx(), f.rawWhy)
	}
}

func (f *form) held() view.View   { return f.v }
func (f *form) scope() keys.Scope { return formview.Scope }
func (f *form) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	return false, m.apply(f.v.Key(m.viewCtx(), name, msg), f)
}
func (f *form) render(m *Model, w, h int) string { return f.v.Render(m.viewCtx(), w, h) }
