package ui

import (
	"strings"

	"charm.land/bubbles/v2/textarea"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/chooser"
	"mcpscope/ui/help"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
)

// editor is a multi-line text box (raw JSON-RPC, edited params, sampling
// replies, roots): a textarea, with $EDITOR one key away.
type editor struct {
	title    string
	header   []string // sanitized context shown above the text
	area     textarea.Model
	json     bool // the text is JSON: say where it is wrong as it is typed
	err      string
	onSubmit func(m *Model, text string) (errMsg string, cmd tea.Cmd)
	// onDecline, when set, is what ctrl+d and esc do (a server request
	// must always be answered).
	onDecline func(m *Model) tea.Cmd
}

func newEditor(m *Model, title, text string, submit func(*Model, string) (string, tea.Cmd), decline func(*Model) tea.Cmd) *editor {
	return &editor{title: title, area: newArea(text, m.th), onSubmit: submit, onDecline: decline}
}

// newJSONEditor is an editor whose text must be JSON.
func newJSONEditor(m *Model, title, text string, submit func(*Model, string) (string, tea.Cmd)) *editor {
	e := newEditor(m, title, text, submit, nil)
	e.json = true
	return e
}

func (e *editor) scope() keys.Scope { return keys.Editor }

func (e *editor) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch name {
	case "editor-submit":
		text := e.area.Value()
		if e.json {
			if p := jsonProblem(text); p != "" {
				e.err = "not valid JSON: " + p
				return false, nil
			}
		}
		errMsg, cmd := e.onSubmit(m, text)
		if errMsg != "" {
			e.err = errMsg
			return false, cmd
		}
		return true, cmd
	case "editor-decline", "editor-cancel":
		if e.onDecline != nil {
			return true, e.onDecline(m)
		}
		return name == "editor-cancel", nil
	case "editor-clear":
		e.area.SetValue("")
	case "editor-external":
		ext := ".txt"
		if e.json {
			ext = ".json"
		}
		return false, externalEdit(e.area.Value(), ext)
	default:
		var cmd tea.Cmd
		e.area, cmd = e.area.Update(msg)
		return false, cmd
	}
	return false, nil
}

// edited takes back what $EDITOR wrote.
func (e *editor) edited(msg editedMsg) {
	if msg.err != nil {
		e.err = "editor: " + msg.err.Error()
		return
	}
	e.area.SetValue(msg.text)
	e.err = ""
	if e.json {
		e.err = jsonProblem(msg.text)
	}
}

func (e *editor) render(m *Model, w, h int) string {
	l := []string{m.th.Title.Render(" " + e.title)}
	l = append(l, e.header...)
	l = append(l, m.th.Faint.Render(" ─ "+m.keyOf("editor-submit")+" sends, "+m.keyOf("editor-external")+" opens $EDITOR ─"))
	sizeArea(&e.area, w-2, max(3, h-len(l)-3))
	l = append(l, e.area.View())
	if e.err != "" {
		l = append(l, m.th.Error.Render(" "+termsafe.Line(e.err)))
	} else if e.json {
		if p := jsonProblem(e.area.Value()); p != "" {
			l = append(l, m.th.Faint.Render(" "+termsafe.Line(p)))
		}
	}
	return strings.Join(l, "\n")
}

// choose asks the user to pick one of options (starting on sel); f runs
// on the pick.
func (m *Model) choose(title string, options []string, sel int, f func(m *Model, i int) tea.Cmd) {
	m.open(chooser.New(title, options, sel, func(i int) view.Action { return view.Action{Cmd: f(m, i)} }))
}

// newHelp is the key help over what the keys go to now.
func newHelp(m *Model) modal {
	return &component{help.New(m.viewCtx(), help.Session{Protocol: m.info.ProtocolVersion, Era: m.info.Era, EraReason: m.info.EraReason}, m.disabled)}
}
