package ui

import (
	"bytes"

	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"

	tea "charm.land/bubbletea/v2"

	"mcpscope/internal/schema"
	"mcpscope/internal/termsafe"
	"mcpscope/themes"
	"mcpscope/ui/keys"
)

type fieldKind uint8

const (
	fString fieldKind = iota
	fNumber
	fInteger
	fBool
	fEnum
	fJSON // objects, arrays, anything else: typed as JSON
)

// field is one input generated from a JSON Schema property.
type field struct {
	name, title, desc string
	kind              fieldKind
	required          bool
	in                textinput.Model // the text kinds' editor
	choice            int             // enum/bool: index into choices, -1 = unset
	choices           []json.RawMessage
	labels            []string
	min, max          *float64
	minLen            *int
	err               string
}

// schemaProp is the part of a JSON Schema property a form understands.
type schemaProp struct {
	Type        json.RawMessage   `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []struct {
		Const json.RawMessage `json:"const"`
		Title string          `json:"title"`
	} `json:"oneOf"`
	Default   json.RawMessage `json:"default"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
	MinLength *int            `json:"minLength"`
}

// fieldsFromSchema builds form fields for an object schema, in the order
// the properties were written (maps would lose it).
func fieldsFromSchema(object json.RawMessage) ([]*field, error) {
	if len(bytes.TrimSpace(object)) == 0 {
		return nil, nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(object, &s); err != nil {
		return nil, fmt.Errorf("unreadable schema: %w", err)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]schemaProp
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("unreadable properties: %w", err)
		}
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	var out []*field
	for _, n := range names {
		p := props[n]
		f := &field{name: n, title: p.Title, desc: p.Description, required: req[n], choice: -1, in: newLine("", themes.Plain()),
			min: p.Minimum, max: p.Maximum, minLen: p.MinLength}
		typ, _ := schema.Type(p.Type)
		switch {
		case len(p.Enum) > 0:
			f.kind, f.choices = fEnum, p.Enum
			for i, e := range p.Enum {
				l := oneLine(e, 60)
				if i < len(p.EnumNames) {
					l = termsafe.Line(p.EnumNames[i])
				}
				f.labels = append(f.labels, l)
			}
		case len(p.OneOf) > 0:
			f.kind = fEnum
			for _, o := range p.OneOf {
				f.choices = append(f.choices, o.Const)
				f.labels = append(f.labels, termsafe.Line(firstNonEmpty(o.Title, oneLine(o.Const, 60))))
			}
		case typ == "string":
			f.kind = fString
		case typ == "number":
			f.kind = fNumber
		case typ == "integer":
			f.kind = fInteger
		case typ == "boolean":
			f.kind = fBool
			f.choices = []json.RawMessage{json.RawMessage("false"), json.RawMessage("true")}
			f.labels = []string{"false", "true"}
		default:
			f.kind = fJSON
		}
		if len(p.Default) > 0 {
			f.setDefault(p.Default)
		}
		if len(out) > 0 {
			f.in.Blur() // the first field has the focus
		}
		out = append(out, f)
	}
	return out, nil
}

// withDesc gives a field its description.
func withDesc(f *field, desc string) *field {
	f.desc = desc
	return f
}

// newTextField is a string field holding value.
func newTextField(name, title, value string, required bool) *field {
	return &field{name: name, title: title, kind: fString, required: required, choice: -1, in: newLine(value, themes.Plain())}
}

func (f *field) setDefault(d json.RawMessage) {
	switch f.kind {
	case fEnum, fBool:
		for i, c := range f.choices {
			if bytes.Equal(bytes.TrimSpace(c), bytes.TrimSpace(d)) {
				f.choice = i
			}
		}
	case fString:
		var s string
		if json.Unmarshal(d, &s) == nil {
			f.in.SetValue(termsafe.Line(s))
		}
	default:
		f.in.SetValue(string(termsafe.JSON(d)))
	}
	f.in.CursorEnd()
}

// text is what the field holds.
func (f *field) text() string { return f.in.Value() }

// objectKeys lists an object's keys in order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("properties is not an object")
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// value validates the field and returns its JSON (nil = leave it out).
func (f *field) value() (json.RawMessage, error) {
	switch f.kind {
	case fEnum, fBool:
		if f.choice < 0 {
			if f.required {
				return nil, fmt.Errorf("choose a value")
			}
			return nil, nil
		}
		return f.choices[f.choice], nil
	}
	t := strings.TrimSpace(f.text())
	if t == "" && f.kind != fString {
		if f.required {
			return nil, fmt.Errorf("required")
		}
		return nil, nil
	}
	switch f.kind {
	case fString:
		text := f.text()
		if text == "" && f.required {
			return nil, fmt.Errorf("required")
		}
		if text == "" {
			return nil, nil
		}
		if f.minLen != nil && utf8.RuneCountInString(text) < *f.minLen {
			return nil, fmt.Errorf("at least %d characters", *f.minLen)
		}
		b, _ := json.Marshal(text)
		return b, nil
	case fNumber, fInteger:
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number")
		}
		if f.kind == fInteger && v != float64(int64(v)) {
			return nil, fmt.Errorf("must be a whole number")
		}
		if f.min != nil && v < *f.min {
			return nil, fmt.Errorf("at least %s", fmtNum(*f.min))
		}
		if f.max != nil && v > *f.max {
			return nil, fmt.Errorf("at most %s", fmtNum(*f.max))
		}
		return json.RawMessage(t), nil
	}
	if p := jsonProblem(t); p != "" {
		return nil, fmt.Errorf("not JSON: %s", p)
	}
	return json.RawMessage(t), nil
}

// form asks for an object: tool arguments, prompt arguments, or an
// elicitation answer. It has a raw JSON mode for what fields cannot say.
type form struct {
	title, message string
	fields         []*field
	focus          int
	raw            bool
	rawText        textarea.Model // raw mode's editor
	err            string
	decline        bool // ctrl+d declines (elicitation)
	onSubmit       func(m *Model, args json.RawMessage) tea.Cmd
	onDecline      func(m *Model) tea.Cmd
	// Tool calls: run as a task (offered when the tool's taskSupport is
	// "optional"; "required" forces it) and the idle timeout preset.
	callOpts    bool
	taskSupport string
	asTask      bool
	timeout     int // index into timeouts
	onCancel    func(m *Model) tea.Cmd
}

func (f *form) scope() keys.Scope { return keys.Form }

// values validates every field and builds the object.
func (f *form) values() (json.RawMessage, bool) {
	if f.raw {
		text := f.rawText.Value()
		if p := jsonProblem(text); p != "" {
			f.err = "raw JSON: " + p
			return nil, false
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
			f.err = "raw JSON must be an object, not " + strings.TrimSpace(shorten(text, 20))
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

func (f *form) key(m *Model, name string, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	var cur *field
	if !f.raw && len(f.fields) > 0 {
		cur = f.fields[clamp(f.focus, 0, len(f.fields)-1)]
	}
	text := cur != nil && cur.kind != fEnum && cur.kind != fBool
	switch name {
	case "form-cancel":
		if f.onCancel != nil {
			return true, f.onCancel(m)
		}
		return true, nil
	case "form-decline":
		if f.onDecline != nil {
			return true, f.onDecline(m)
		}
		return false, nil
	case "form-submit", "form-send":
		if f.raw && name == "form-submit" {
			return false, f.edit(msg) // enter is a new line in raw JSON; ctrl+s sends
		}
		v, ok := f.values()
		if !ok {
			return false, nil
		}
		return true, f.onSubmit(m, v)
	case "form-raw":
		if !f.raw {
			f.toRaw(m)
		} else {
			f.raw = false
		}
	case "form-editor":
		if !f.raw {
			f.toRaw(m)
		}
		return false, externalEdit(f.rawText.Value(), ".json")
	case "form-task":
		switch {
		case !f.callOpts:
		case f.taskSupport == "optional":
			f.asTask = !f.asTask
		case f.taskSupport == "required":
			f.asTask, f.err = true, "this tool only runs as a task"
		default:
			f.err = "this tool does not run as a task (execution.taskSupport is " + firstNonEmpty(termsafe.Line(f.taskSupport), "absent") + ")"
		}
	case "form-timeout":
		if f.callOpts {
			f.timeout = (f.timeout + 1) % len(timeouts)
		}
	case "form-next", "form-prev":
		if f.raw {
			return false, f.edit(msg) // up and down move between lines
		}
		d := 1
		if name == "form-prev" {
			d = -1
		}
		f.focusField(f.focus + d)
	case "form-clear":
		switch {
		case f.raw:
			f.rawText.SetValue("")
		case text:
			cur.in.SetValue("")
		case cur != nil:
			cur.choice = -1
		}
	case "form-choice-next", "form-choice-prev":
		if cur != nil && !text {
			d := 1
			if name == "form-choice-prev" {
				d = len(cur.choices) - 1
			}
			cur.choice = (cur.choice + d + len(cur.choices)) % len(cur.choices)
			return false, nil
		}
		return false, f.edit(msg) // a text field's cursor moves
	default:
		if cur != nil && !text && keys.Text(msg) == " " {
			cur.choice = (cur.choice + 1) % len(cur.choices)
			return false, nil
		}
		return false, f.edit(msg)
	}
	return false, nil
}

// edit gives a key or a paste to the text being edited.
func (f *form) edit(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	if f.raw {
		f.rawText, cmd = f.rawText.Update(msg)
		return cmd
	}
	if len(f.fields) == 0 {
		return nil
	}
	cur := f.fields[clamp(f.focus, 0, len(f.fields)-1)]
	if cur.kind == fEnum || cur.kind == fBool {
		return nil
	}
	cur.in, cmd = cur.in.Update(msg)
	return cmd
}

// toRaw switches to raw JSON, starting from what the fields hold.
func (f *form) toRaw(m *Model) {
	v, ok := f.values()
	if !ok {
		v = json.RawMessage("{}")
	}
	f.rawText = newArea(string(prettyParams(v)), m.th)
	f.raw, f.err = true, ""
}

// focusField moves the focus (with wrap-around), the cursor going with it.
func (f *form) focusField(i int) {
	n := max(1, len(f.fields))
	f.focus = ((i % n) + n) % n
	for j, fl := range f.fields {
		switch {
		case fl.kind == fEnum || fl.kind == fBool:
		case j == f.focus:
			fl.in.Focus()
		default:
			fl.in.Blur()
		}
	}
}

// edited takes back what $EDITOR wrote, as raw JSON.
func (f *form) edited(msg editedMsg) {
	if msg.err != nil {
		f.err = "editor: " + msg.err.Error()
		return
	}
	f.rawText.SetValue(msg.text)
	f.err = jsonProblem(msg.text)
}

func (f *form) render(m *Model, w, h int) string {
	var l []string
	l = append(l, m.th.Title.Render(" "+f.title))
	if f.message != "" {
		for _, ml := range strings.Split(termsafe.Text(f.message), "\n") {
			l = append(l, " "+ml)
		}
	}
	l = append(l, "")
	if f.raw {
		l = append(l, m.th.Faint.Render(" raw JSON ("+m.keyOf("form-raw")+" back to fields, "+m.keyOf("form-editor")+" opens $EDITOR, "+
			m.keyOf("form-send")+" sends):"))
		sizeArea(&f.rawText, w-2, max(3, h-len(l)-4))
		l = append(l, f.rawText.View())
	} else {
		if len(f.fields) == 0 {
			l = append(l, m.th.Faint.Render(" (no fields)"))
		}
		for i, fl := range f.fields {
			label := termsafe.Line(firstNonEmpty(fl.title, fl.name))
			if fl.required {
				label += "*"
			}
			mark := "  "
			if i == f.focus {
				mark = "▸ "
			}
			if fl.kind != fEnum && fl.kind != fBool {
				room := w - 24 // mark, label and a margin
				if fl.err != "" {
					room -= len(fl.err) + 3
				}
				fl.in.SetWidth(max(8, room))
				fl.in.SetStyles(lineStyles(m.th))
			}
			val := fl.display()
			line := fmt.Sprintf("%s%-18s %s", mark, shorten(label, 18), val)
			if i == f.focus {
				line = m.th.Accent.Render(line)
			}
			if fl.err != "" {
				line += " " + m.th.Error.Render("← "+fl.err)
			}
			l = append(l, line)
			if i == f.focus && fl.desc != "" {
				l = append(l, m.th.Faint.Render("    "+termsafe.Line(fl.desc)))
			}
		}
	}
	if f.callOpts {
		l = append(l, "", m.th.Faint.Render(" "+f.optionsLine(m)))
	}
	if f.err != "" {
		l = append(l, "", m.th.Error.Render(" "+termsafe.Line(f.err)))
	}
	return strings.Join(l, "\n")
}

// timeouts are the idle-timeout presets of a tool call (ctrl+o cycles).
var timeouts = []struct {
	label string
	d     time.Duration
}{{"session default", 0}, {"10s", 10 * time.Second}, {"1m", time.Minute}, {"5m", 5 * time.Minute}, {"30m", 30 * time.Minute}, {"none", -1}}

// optionsLine describes the call options of a tool form.
func (f *form) optionsLine(m *Model) string {
	tk, to := m.keyOf("form-task"), m.keyOf("form-timeout")
	var task string
	switch {
	case f.taskSupport == "required":
		task = "run as task: yes (the tool requires it)"
	case f.taskSupport == "optional" && f.asTask:
		task = "run as task: [yes] no  (" + tk + ")"
	case f.taskSupport == "optional":
		task = "run as task:  yes [no] (" + tk + ")"
	}
	timeout := "timeout: " + timeouts[f.timeout].label + " (" + to + ")"
	if f.asTask {
		return task
	}
	if task != "" {
		return task + " · " + timeout
	}
	return timeout
}

func (fl *field) display() string {
	switch fl.kind {
	case fEnum, fBool:
		var parts []string
		for i, lb := range fl.labels {
			if i == fl.choice {
				parts = append(parts, "["+lb+"]")
			} else {
				parts = append(parts, " "+lb+" ")
			}
		}
		return "◂" + strings.Join(parts, "") + "▸"
	}
	return fl.in.View()
}
