package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textarea"
	"github.com/charmbracelet/x/ansi"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/ui/keys"
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

// chooser picks one of a few options.
type chooser struct {
	title    string
	options  []string
	sel      int
	onChoose func(m *Model, i int) tea.Cmd
}

func (c *chooser) scope() keys.Scope { return keys.Chooser }

func (c *chooser) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	switch name {
	case "choose":
		return true, c.onChoose(m, c.sel)
	case "choose-cancel":
		return true, nil
	case "choose-up":
		c.sel = clamp(c.sel-1, 0, len(c.options)-1)
	case "choose-down":
		c.sel = clamp(c.sel+1, 0, len(c.options)-1)
	case "quit":
		m.quit = true
	}
	return false, nil
}

func (c *chooser) render(m *Model, w, h int) string {
	// A long title (a confirmation naming a command to run) wraps: all of
	// it is what the person decides on.
	var l []string
	for _, line := range strings.Split(ansi.Wrap(c.title, max(10, w-2), " /"), "\n") {
		l = append(l, m.th.Title.Render(" "+line))
	}
	l = append(l, "")
	h -= len(l) - 2
	// A window of the options that holds the selection.
	room := max(1, h-2)
	top := clamp(c.sel-room+1, 0, max(0, len(c.options)-room))
	for i := top; i < len(c.options) && i < top+room; i++ {
		o := c.options[i]
		if i == c.sel {
			l = append(l, m.th.Selected.Render("▸ "+o+" "))
		} else {
			l = append(l, "  "+o)
		}
	}
	return strings.Join(l, "\n")
}

// help lists every binding, generated from the keymap.
type help struct {
	lines []string
	top   int
}

func newHelp(m *Model) *help {
	var l []string
	if in := m.info; in.EraReason != "" || in.ProtocolVersion != "" {
		l = append(l, m.th.Title.Render(" session"),
			"   protocol "+termsafe.Line(firstNonEmpty(in.ProtocolVersion, "(not negotiated)"))+", "+termsafe.Line(in.Era)+" era",
			"   why      "+termsafe.Line(firstNonEmpty(in.EraReason, "(no era decision recorded)")), "")
	}
	var last keys.Scope
	for _, b := range m.km.Bindings() {
		if b.Scope != last {
			if last != "" {
				l = append(l, "")
			}
			l = append(l, m.th.Title.Render(" "+string(b.Scope)))
			last = b.Scope
		}
		line := fmt.Sprintf("   %s %s", m.th.HelpKey.Render(fmt.Sprintf("%-16s", strings.Join(b.Keys, " "))), b.Help)
		if why := m.disabled(b.Name); why != "" {
			line += m.th.Faint.Render(" — not now: " + termsafe.Line(why))
		}
		l = append(l, line)
	}
	l = append(l, "", m.th.Title.Render(" mouse"),
		fmt.Sprintf("   %s %s", m.th.HelpKey.Render(fmt.Sprintf("%-16s", "wheel")), "scroll the pane or view under the pointer"),
		fmt.Sprintf("   %s %s", m.th.HelpKey.Render(fmt.Sprintf("%-16s", "click")), "focus the pane under the pointer and select the row"),
		fmt.Sprintf("   %s %s", m.th.HelpKey.Render(fmt.Sprintf("%-16s", "shift+drag")), "select text for the terminal's own copy (most terminals)"))
	return &help{lines: l}
}

func (hp *help) scope() keys.Scope { return keys.Global }

func (hp *help) key(m *Model, name string, _ tea.KeyPressMsg) (bool, tea.Cmd) {
	switch name {
	case "down":
		hp.top++
	case "up":
		hp.top--
	case "page-down":
		hp.top += 10
	case "page-up":
		hp.top -= 10
	case "help", "quit", "":
		return true, nil
	}
	hp.top = clamp(hp.top, 0, len(hp.lines)-1)
	return false, nil
}

func (hp *help) render(m *Model, w, h int) string {
	head := m.th.Title.Render(" Keys — ↑/↓ scroll, any other key closes")
	end := min(len(hp.lines), hp.top+h-1)
	return head + "\n" + strings.Join(hp.lines[hp.top:end], "\n")
}
