// Package textbox is the text the user edits: one line (a form field, the
// filter) or several (JSON, replies), and $EDITOR one key away.
package textbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"mcpscope/internal/termsafe"
	"mcpscope/themes"
	"mcpscope/ui/widget"
)

// The bubbles components give cursor motion, word motions and deletes
// (alt+←/→, ctrl+w, alt+backspace), home/end, paste; the textarea has undo
// of nothing but gives line motions. Text that came from a server is made
// inert before it is put in (a default value, params to edit).

// NewLine is a single-line text input holding value.
func NewLine(value string, th themes.Theme) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.SetVirtualCursor(true)
	in.SetStyles(LineStyles(th))
	in.SetValue(termsafe.Line(value))
	in.CursorEnd()
	in.Focus()
	return in
}

func LineStyles(th themes.Theme) textinput.Styles {
	s := textinput.DefaultStyles(true)
	s.Focused.Text, s.Blurred.Text = th.Text, th.Text
	s.Focused.Placeholder, s.Blurred.Placeholder = th.Faint, th.Faint
	s.Cursor.Blink = false // a steady cursor: no ticks, and screens that do not change by themselves
	return s
}

// NewArea is a multi-line editor holding value.
func NewArea(value string, th themes.Theme) textarea.Model {
	a := textarea.New()
	a.Prompt = " "
	a.ShowLineNumbers = true
	a.SetVirtualCursor(true)
	a.CharLimit = 0
	a.MaxHeight = 0
	st := textarea.DefaultStyles(true)
	st.Focused.Text, st.Blurred.Text = th.Text, th.Text
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.LineNumber, st.Focused.CursorLineNumber = th.Faint, th.Accent
	st.Cursor.Blink = false
	a.SetStyles(st)
	a.SetValue(inertText(value))
	a.Focus()
	return a
}

// inertText keeps JSON meaning (hidden characters become \u escapes inside
// strings) and sanitises anything else.
func inertText(s string) string {
	if json.Valid([]byte(s)) {
		return string(termsafe.JSON([]byte(s)))
	}
	return termsafe.Text(s)
}

// SizeArea fits an editor into w×h.
func SizeArea(a *textarea.Model, w, h int) {
	a.SetWidth(max(20, w-2))
	a.SetHeight(max(3, h))
}

// JSONProblem says where JSON text is wrong and what was expected: "line
// 3, column 7: invalid character '}' looking for beginning of object key
// string". "" when it is valid.
func JSONProblem(text string) string {
	var v any
	err := json.Unmarshal([]byte(text), &v)
	if err == nil {
		return ""
	}
	var se *json.SyntaxError
	off := int64(len(text))
	msg := err.Error()
	if !errors.As(err, &se) {
		se = nil
	} else {
		off = se.Offset
	}
	if strings.TrimSpace(text) == "" {
		return "empty: write a JSON value"
	}
	line, col := 1, 1
	for i, r := range text {
		if int64(i) >= off-1 {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if se != nil && se.Offset >= int64(len(text)) {
		msg = "the JSON ends too early (a missing } or ] or \"?)"
	}
	return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
}

// Edited brings back text edited in $EDITOR.
type Edited struct {
	Text string
	Err  error
}

// ExternalEdit opens text in the user's editor ($VISUAL, $EDITOR, else vi)
// with the terminal handed over, and sends an Edited when it exits.
func ExternalEdit(text, ext string) tea.Cmd {
	f, err := os.CreateTemp("", "mcpscope-*"+ext)
	if err != nil {
		return func() tea.Msg { return Edited{Err: err} }
	}
	path := f.Name()
	_, err = f.WriteString(text)
	f.Close()
	if err != nil {
		os.Remove(path)
		return func() tea.Msg { return Edited{Err: err} }
	}
	editor := widget.FirstNonEmpty(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	words := strings.Fields(editor)
	c := exec.Command(words[0], append(words[1:], path)...)
	return tea.ExecProcess(c, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return Edited{Err: fmt.Errorf("%s: %w", editor, err)}
		}
		b, rerr := os.ReadFile(path)
		return Edited{Text: strings.TrimRight(string(b), "\n"), Err: rerr}
	})
}
