// Package form is the form dialog: an object asked for field by field
// (tool or prompt arguments, a template's URI, an elicitation's answer, a
// file name), with a raw JSON mode for what fields cannot say. The catalog
// and the root open it; what submitting does is the opener's callback,
// which returns an Action like any view's.
package form

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mcpscope/internal/termsafe"
	"mcpscope/protocol"
	"mcpscope/ui/keys"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/textbox"
)

// Scope is where the form's keys are looked up: a text scope.
const Scope = keys.Form

// Call is how a tool call is to run, as the form's options set it.
type Call struct {
	AsTask  bool
	Timeout time.Duration // 0: the session's default; <0: none
}

// Form asks for an object.
type Form struct {
	title, message string
	fields         []*Field
	focus          int
	raw            bool
	rawText        textarea.Model // raw mode's editor
	err            string
	submit         func(args json.RawMessage, call Call) view.Action
	decline        func() view.Action // nil: nothing to decline
	cancel         func() view.Action
	// Tool calls: run as a task (offered when the tool's taskSupport is
	// "optional"; "required" forces it) and the idle timeout preset.
	callOpts    bool
	taskSupport string
	asTask      bool
	timeout     int             // index into Timeouts
	key         tea.KeyPressMsg // the key being handled, for the bindings that edit text
}

// New is a form of fields under title, with message above them; submit
// is what a valid object asks of the root (the form closes).
func New(title, message string, fields []*Field, submit func(args json.RawMessage, call Call) view.Action) *Form {
	return &Form{title: title, message: message, fields: fields, submit: submit}
}

// Declinable makes ctrl+d decline (a server's request), doing decline.
func (f *Form) Declinable(decline func() view.Action) *Form { f.decline = decline; return f }

// OnCancel is what esc asks of the root besides closing the form.
func (f *Form) OnCancel(cancel func() view.Action) *Form { f.cancel = cancel; return f }

// ForTool offers a tool call's options: as a task (per the tool's
// execution.taskSupport) and an idle timeout.
func (f *Form) ForTool(taskSupport string) *Form {
	f.callOpts, f.taskSupport, f.asTask = true, taskSupport, taskSupport == "required"
	return f
}

// RawOnly starts the form in raw JSON, saying why (a schema that does not
// read as fields).
func (f *Form) RawOnly(c view.Context, why string) *Form {
	f.raw, f.rawText, f.err = true, textbox.NewArea("{}", c.Theme), why
	return f
}

// Title is the form's title (tests and the root name what is open).
func (f *Form) Title() string { return f.title }

// Timeouts are the idle-timeout presets of a tool call (form-timeout
// cycles).
var Timeouts = []struct {
	Label string
	D     time.Duration
}{{"session default", 0}, {"10s", 10 * time.Second}, {"1m", time.Minute}, {"5m", 5 * time.Minute}, {"30m", 30 * time.Minute}, {"none", -1}}

// Keys is the form's part of the keymap.
var Keys = view.Group{Scope: Scope, Bindings: bindings.Keys(), Footer: []string{"form-next", "form-submit", "form-decline", "form-raw", "form-cancel"}}

var bindings = view.Bindings[*Form]{
	{Binding: keys.Binding{Name: "form-next", Scope: Scope, Keys: []string{"tab", "down"}, Help: "next field", Short: "field"},
		Run: func(f *Form, _ view.Context) view.Action { return f.step(1) }},
	{Binding: keys.Binding{Name: "form-prev", Scope: Scope, Keys: []string{"shift+tab", "up"}, Help: "previous field"},
		Run: func(f *Form, _ view.Context) view.Action { return f.step(-1) }},
	{Binding: keys.Binding{Name: "form-submit", Scope: Scope, Keys: []string{"enter"}, Help: "submit (accept); a new line in raw JSON"},
		Run: func(f *Form, _ view.Context) view.Action {
			if f.raw {
				return f.edit(f.key) // enter is a new line in raw JSON; ctrl+s sends
			}
			return f.send()
		}},
	{Binding: keys.Binding{Name: "form-send", Scope: Scope, Keys: []string{"ctrl+s"}, Help: "submit, from raw JSON too"},
		Run: func(f *Form, _ view.Context) view.Action { return f.send() }},
	{Binding: keys.Binding{Name: "form-decline", Scope: Scope, Keys: []string{"ctrl+d"}, Help: "decline", Short: "decline"},
		Run: func(f *Form, _ view.Context) view.Action { return view.Close().Then(f.decline()) },
		Disabled: func(f *Form, _ view.Context) string {
			if f.decline == nil {
				return "nothing to decline: this is not a server's request (esc cancels)"
			}
			return ""
		}},
	{Binding: keys.Binding{Name: "form-cancel", Scope: Scope, Keys: []string{"esc"}, Help: "cancel"},
		Run: func(f *Form, _ view.Context) view.Action {
			if f.cancel != nil {
				return view.Close().Then(f.cancel())
			}
			return view.Close()
		}},
	{Binding: keys.Binding{Name: "form-raw", Scope: Scope, Keys: []string{"ctrl+r"}, Help: "edit as raw JSON, or back to the fields", Short: "raw JSON"},
		Run: func(f *Form, c view.Context) view.Action {
			if f.raw {
				f.raw = false
			} else {
				f.toRaw(c)
			}
			return view.Action{}
		}},
	{Binding: keys.Binding{Name: "form-editor", Scope: Scope, Keys: []string{"ctrl+e"}, Help: "edit the JSON in $EDITOR"},
		Run: func(f *Form, c view.Context) view.Action {
			if !f.raw {
				f.toRaw(c)
			}
			return view.Action{Cmd: textbox.ExternalEdit(f.rawText.Value(), ".json")}
		}},
	{Binding: keys.Binding{Name: "form-choice-next", Scope: Scope, Keys: []string{"right"}, Help: "next choice (a text field's cursor moves; alt+→ a word)"},
		Run: func(f *Form, _ view.Context) view.Action { return f.choose(1) }},
	{Binding: keys.Binding{Name: "form-choice-prev", Scope: Scope, Keys: []string{"left"}, Help: "previous choice (a text field's cursor moves; alt+← a word)"},
		Run: func(f *Form, _ view.Context) view.Action { return f.choose(-1) }},
	{Binding: keys.Binding{Name: "form-clear", Scope: Scope, Keys: []string{"ctrl+u"}, Help: "clear the field (ctrl+w, alt+backspace delete a word; home, end)"},
		Run: (*Form).clear},
	{Binding: keys.Binding{Name: "form-task", Scope: Scope, Keys: []string{"ctrl+t"}, Help: "run the tool as a task (when it supports tasks)"},
		Run: func(f *Form, _ view.Context) view.Action {
			switch f.taskSupport {
			case "optional":
				f.asTask = !f.asTask
			case "required":
				f.asTask, f.err = true, "this tool only runs as a task"
			default:
				f.err = "this tool does not run as a task (execution.taskSupport is " + widget.FirstNonEmpty(termsafe.Line(f.taskSupport), "absent") + ")"
			}
			return view.Action{}
		},
		Disabled: notTool},
	{Binding: keys.Binding{Name: "form-timeout", Scope: Scope, Keys: []string{"ctrl+o"}, Help: "next idle timeout for the call (default, 10s … none)"},
		Run: func(f *Form, _ view.Context) view.Action {
			f.timeout = (f.timeout + 1) % len(Timeouts)
			return view.Action{}
		},
		Disabled: notTool},
}

func notTool(f *Form, _ view.Context) string {
	if !f.callOpts {
		return "only a tool call has call options"
	}
	return ""
}

func (f *Form) Scope() keys.Scope { return Scope }

// Disabled is why a binding cannot run now.
func (f *Form) Disabled(c view.Context, name string) string { return bindings.Why(f, c, name) }

// Footer offers decline only where there is something to decline.
func (f *Form) Footer(view.Context) []string {
	if f.decline == nil {
		return []string{"form-next", "form-submit", "form-raw", "form-cancel"}
	}
	return Keys.Footer
}

// cur is the focused field (nil in raw JSON or with no fields).
func (f *Form) cur() *Field {
	if f.raw || len(f.fields) == 0 {
		return nil
	}
	return f.fields[widget.Clamp(f.focus, 0, len(f.fields)-1)]
}

func (f *Form) Key(c view.Context, name string, msg tea.KeyPressMsg) view.Action {
	f.key = msg
	if a, ok := bindings.Do(f, c, name); ok {
		return a
	}
	return f.typed(msg)
}

// typed is a key no binding takes: space and h/l on a choice, else text.
func (f *Form) typed(msg tea.KeyPressMsg) view.Action {
	cur := f.cur()
	switch {
	case cur != nil && cur.kind == kMulti && keys.Text(msg) == " ":
		cur.checked[cur.item] = !cur.checked[cur.item]
		return view.Action{}
	case cur != nil && cur.kind == kBool:
		switch keys.Text(msg) {
		case " ": // unset or false becomes true, true false
			cur.choice = 1 - max(cur.choice, 0)
		case "l":
			cur.choice = 1
		case "h":
			cur.choice = 0
		}
		return view.Action{}
	case cur != nil && cur.choiceKind():
		switch keys.Text(msg) {
		case " ", "l":
			return f.choose(1)
		case "h":
			return f.choose(-1)
		}
	}
	return f.edit(msg)
}

// send validates the fields and submits.
func (f *Form) send() view.Action {
	v, ok := f.values()
	if !ok {
		return view.Action{}
	}
	return view.Close().Then(f.submit(v, Call{AsTask: f.asTask, Timeout: Timeouts[f.timeout].D}))
}

// step moves the focus to the next field (d 1) or the previous (-1);
// a checklist's choices are rows of the form, walked through first.
func (f *Form) step(d int) view.Action {
	if f.raw {
		return f.edit(f.key) // up and down move between lines
	}
	if cur := f.cur(); cur != nil && cur.kind == kMulti && cur.item+d >= 0 && cur.item+d < len(cur.choices) {
		cur.item += d
		return view.Action{}
	}
	f.focusField(f.focus + d)
	if len(f.fields) == 0 {
		return view.Action{}
	}
	if nf := f.fields[f.focus]; nf.kind == kMulti {
		nf.item = 0
		if d < 0 {
			nf.item = len(nf.choices) - 1
		}
	}
	return view.Action{}
}

// choose moves a choice field's pick by d (→ true, ← false for a yes/no);
// in a text field the cursor moves.
func (f *Form) choose(d int) view.Action {
	cur := f.cur()
	if cur == nil || !cur.choiceKind() {
		return f.edit(f.key)
	}
	switch {
	case cur.kind == kBool:
		cur.choice = map[bool]int{true: 1, false: 0}[d > 0]
	case cur.kind == kMulti:
		cur.item = (cur.item + d + len(cur.choices)) % len(cur.choices)
	case cur.choice < 0 && d < 0:
		cur.choice = len(cur.choices) - 1 // from none: the last
	default:
		cur.choice = (max(cur.choice, -1) + d + len(cur.choices)) % len(cur.choices)
	}
	return view.Action{}
}

func (f *Form) clear(view.Context) view.Action {
	switch cur := f.cur(); {
	case f.raw:
		f.rawText.SetValue("")
	case cur == nil:
	case !cur.choiceKind():
		cur.in.SetValue("")
	case cur.kind == kMulti:
		clear(cur.checked)
	default:
		cur.choice = -1
	}
	return view.Action{}
}

// values validates every field and builds the object.
func (f *Form) values() (json.RawMessage, bool) {
	if f.raw {
		text := f.rawText.Value()
		if p := textbox.JSONProblem(text); p != "" {
			f.err = "raw JSON: " + p
			return nil, false
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			f.err = "raw JSON must be an object, not " + strings.TrimSpace(widget.Shorten(text, 20))
			return nil, false
		}
		for _, fl := range f.fields {
			if _, ok := obj[fl.name]; fl.required && !ok {
				f.err = "missing required " + fl.name
				return nil, false
			}
		}
		f.err = ""
		return json.RawMessage(text), true
	}
	var b bytes.Buffer
	b.WriteByte('{')
	ok := true
	n := 0
	for _, fl := range f.fields {
		v, err := fl.value()
		fl.err = ""
		if err != nil {
			fl.err, ok = err.Error(), false
			continue
		}
		if v == nil {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(fl.name)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		n++
	}
	b.WriteByte('}')
	if !ok {
		f.err = "fix the marked fields (or " + "ctrl+r for raw JSON)"
		return nil, false
	}
	f.err = ""
	return b.Bytes(), true
}

// edit gives a key or a paste to the text being edited.
func (f *Form) edit(msg tea.Msg) view.Action {
	var cmd tea.Cmd
	if f.raw {
		f.rawText, cmd = f.rawText.Update(msg)
		return view.Action{Cmd: cmd}
	}
	cur := f.cur()
	if cur == nil || cur.choiceKind() {
		return view.Action{}
	}
	if cur.prefilled {
		// The first key typed into a prefilled value replaces it (it shows
		// selected); a key that moves or deletes keeps it to edit.
		cur.prefilled = false
		_, paste := msg.(tea.PasteMsg)
		if k, ok := msg.(tea.KeyPressMsg); (ok && keys.Text(k) != "") || paste {
			cur.in.SetValue("")
		}
	}
	cur.in, cmd = cur.in.Update(msg)
	return view.Action{Cmd: cmd}
}

// Update takes pasted text and what $EDITOR wrote (as raw JSON).
func (f *Form) Update(_ view.Context, msg tea.Msg) view.Action {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		return f.edit(msg)
	case textbox.Edited:
		if msg.Err != nil {
			f.err = "editor: " + msg.Err.Error()
			break
		}
		f.rawText.SetValue(msg.Text)
		f.err = textbox.JSONProblem(msg.Text)
	}
	return view.Action{}
}

// toRaw switches to raw JSON, starting from what the fields hold.
func (f *Form) toRaw(c view.Context) {
	v, ok := f.values()
	if !ok {
		v = json.RawMessage("{}")
	}
	f.rawText = textbox.NewArea(string(pretty(v)), c.Theme)
	f.raw, f.err = true, ""
}

// pretty indents a JSON object for the raw editor.
func pretty(raw json.RawMessage) []byte {
	raw = protocol.StripMeta(raw)
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return b
}

// focusField moves the focus (with wrap-around), the cursor going with it.
func (f *Form) focusField(i int) {
	n := max(1, len(f.fields))
	f.focus = ((i % n) + n) % n
	for j, fl := range f.fields {
		switch {
		case fl.choiceKind():
		case j == f.focus:
			fl.in.Focus()
		default:
			fl.in.Blur()
		}
	}
}

func (f *Form) Render(c view.Context, w, h int) string {
	th := c.Theme
	var l []string
	l = append(l, th.Title.Render(" "+f.title))
	// The message (a tool's description, a server's question) wraps at
	// whole words, a few lines at most: a quarter of the height.
	left := max(3, h/4)
	for _, ml := range strings.Split(termsafe.Text(f.message), "\n") {
		if left == 0 || f.message == "" {
			break
		}
		wl := widget.WrapLines(ml, w-1, left)
		if len(wl) == 0 {
			wl = []string{widget.Fit(ml, w-1)}
		}
		for _, x := range wl {
			l = append(l, " "+x)
		}
		left -= len(wl)
	}
	l = append(l, "")
	if f.raw {
		l = append(l, th.Faint.Render(" raw JSON ("+c.KeyOf("form-raw")+" back to fields, "+c.KeyOf("form-editor")+" opens $EDITOR, "+
			c.KeyOf("form-send")+" sends):"))
		textbox.SizeArea(&f.rawText, w-2, max(3, h-len(l)-4))
		l = append(l, f.rawText.View())
	} else {
		if len(f.fields) == 0 {
			l = append(l, th.Faint.Render(" (no fields)"))
		}
		// The label column is as wide as the longest label, up to a third.
		labelW := 8
		for _, fl := range f.fields {
			labelW = max(labelW, ansi.StringWidth(fl.label()))
		}
		labelW = min(labelW, max(8, w/3))
		valW := max(8, w-labelW-4)
		for i, fl := range f.fields {
			mark := "  "
			if i == f.focus {
				mark = "▸ "
			}
			if !fl.choiceKind() {
				room := valW - 1
				if fl.err != "" {
					room -= ansi.StringWidth(fl.err) + 3
				}
				fl.in.SetWidth(max(8, room))
				fl.in.SetStyles(textbox.LineStyles(th))
			}
			head := mark + widget.Pad(fl.label(), labelW) + " "
			vals := fl.display(valW, i == f.focus)
			if fl.err != "" && len(vals) > 0 {
				// The mark sits next to the value, not at the far edge the
				// editor's width pads to.
				vals[0] = strings.TrimRight(ansi.Truncate(vals[0], max(ansi.StringWidth(fl.text())+1, ansi.StringWidth(strings.TrimRight(ansi.Strip(vals[0]), " "))), ""), " ")
			}
			prefill := fl.prefilled && i == f.focus && !fl.choiceKind()
			if prefill {
				vals[0] = th.Selected.Render(widget.Fit(fl.text(), valW-22)) + th.Faint.Render(" typing replaces it")
			}
			for k, v := range vals {
				line := head + v
				if k > 0 {
					line = strings.Repeat(" ", ansi.StringWidth(head)) + v
				}
				if i == f.focus && (fl.kind != kMulti || k == fl.item) && !prefill {
					line = th.Accent.Render(line)
				}
				if k == 0 && fl.err != "" {
					line += " " + th.Error.Render("← "+fl.err)
				}
				l = append(l, line)
			}
			// The focused field's label in full when its column cut it.
			about := termsafe.Line(fl.desc)
			if lb := fl.label(); ansi.StringWidth(lb) > labelW {
				about = strings.TrimSuffix(lb+": "+about, ": ")
			}
			if i == f.focus && about != "" {
				for _, al := range widget.WrapLines(about, w-4, 3) {
					l = append(l, th.Faint.Render("    "+al))
				}
			}
		}
	}
	if f.callOpts {
		l = append(l, "", th.Faint.Render(" "+f.optionsLine(c)))
	}
	if f.err != "" {
		l = append(l, "", th.Error.Render(" "+termsafe.Line(f.err)))
	}
	return strings.Join(l, "\n")
}

// optionsLine describes the call options of a tool form.
func (f *Form) optionsLine(c view.Context) string {
	tk, to := c.KeyOf("form-task"), c.KeyOf("form-timeout")
	var task string
	switch {
	case f.taskSupport == "required":
		task = "run as task: yes (the tool requires it)"
	case f.taskSupport == "optional" && f.asTask:
		task = "run as task: [yes] no  (" + tk + ")"
	case f.taskSupport == "optional":
		task = "run as task:  yes [no] (" + tk + ")"
	}
	timeout := "timeout: " + Timeouts[f.timeout].Label + " (" + to + ")"
	if f.asTask {
		return task
	}
	if task != "" {
		return task + " · " + timeout
	}
	return timeout
}
