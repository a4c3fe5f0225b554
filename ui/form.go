package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/jsonschema-go/jsonschema"

	"mcpscope/internal/schemacheck"
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
	fMulti // an array of enum values: a checklist
	fJSON  // objects, arrays, anything else: typed as JSON
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
	checked           []bool             // fMulti: which choices are in
	item              int                // fMulti: the choice the cursor is on
	prop              *jsonschema.Schema // what the value is checked against (nil: anything)
	// prefilled: the text is a default nobody has typed into yet; the
	// first key typed replaces it rather than adding to it.
	prefilled bool
	err       string
}

// choiceKind: the value is picked from choices rather than typed.
func (f *field) choiceKind() bool { return f.kind == fEnum || f.kind == fBool || f.kind == fMulti }

// choiceLabel is how a choice reads: its title, else a string value
// without quotes, else its JSON.
func choiceLabel(v json.RawMessage, title string) string {
	if title != "" {
		return termsafe.Line(title)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return termsafe.Line(shorten(s, 60))
	}
	return oneLine(v, 60)
}

// fieldsFromSchema builds form fields for an object schema, in the order
// the properties were written (schemacheck reads it with the JSON Schema
// library; the values are checked against it before they are sent).
func fieldsFromSchema(object json.RawMessage) ([]*field, error) {
	o, err := schemacheck.ReadObject(object)
	if err != nil {
		return nil, err
	}
	var out []*field
	for _, n := range o.Names {
		p := o.Props[n]
		f := &field{name: n, title: p.Title, desc: p.Description, required: o.Required[n], choice: -1, in: newLine("", themes.Plain()), prop: p}
		typ := schemacheck.Type(p)
		var items []*jsonschema.Schema
		if p.Items != nil {
			items = append(p.Items.AnyOf, p.Items.OneOf...)
		}
		switch {
		case typ == "array" && p.Items != nil && len(p.Items.Enum)+len(items) > 0:
			f.kind = fMulti
			for _, e := range schemacheck.Values(p.Items.Enum) {
				f.choices, f.labels = append(f.choices, e), append(f.labels, choiceLabel(e, ""))
			}
			for _, o := range items {
				if o.Const != nil {
					c := schemacheck.Values([]any{*o.Const})[0]
					f.choices, f.labels = append(f.choices, c), append(f.labels, choiceLabel(c, o.Title))
				}
			}
			f.checked = make([]bool, len(f.choices))
		case len(p.Enum) > 0:
			f.kind, f.choices = fEnum, schemacheck.Values(p.Enum)
			names := schemacheck.Strings(p, "enumNames")
			for i, e := range f.choices {
				title := ""
				if i < len(names) {
					title = names[i]
				}
				f.labels = append(f.labels, choiceLabel(e, title))
			}
		case len(p.OneOf) > 0 && p.OneOf[0].Const != nil:
			f.kind = fEnum
			for _, o := range p.OneOf {
				if o.Const != nil {
					c := schemacheck.Values([]any{*o.Const})[0]
					f.choices, f.labels = append(f.choices, c), append(f.labels, choiceLabel(c, o.Title))
				}
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
	return &field{name: name, title: title, kind: fString, required: required, choice: -1, in: newLine(value, themes.Plain()), prefilled: value != ""}
}

func (f *field) setDefault(d json.RawMessage) {
	switch f.kind {
	case fMulti:
		var vs []json.RawMessage
		_ = json.Unmarshal(d, &vs)
		for _, v := range vs {
			for i, c := range f.choices {
				if bytes.Equal(bytes.TrimSpace(c), bytes.TrimSpace(v)) {
					f.checked[i] = true
				}
			}
		}
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
	f.prefilled = f.in.Value() != ""
}

// text is what the field holds.
func (f *field) text() string { return f.in.Value() }

// value validates the field and returns its JSON (nil = leave it out).
func (f *field) value() (json.RawMessage, error) {
	v, err := f.raw()
	if err != nil || v == nil || f.prop == nil {
		return v, err
	}
	if why := schemacheck.Check(f.prop, v); why != "" {
		return nil, errors.New(termsafe.Line(why)) // it may quote the server's schema
	}
	return v, nil
}

// raw is the field's value as JSON before the schema checks it (nil =
// leave it out).
func (f *field) raw() (json.RawMessage, error) {
	switch f.kind {
	case fMulti:
		var picked []json.RawMessage
		for i, on := range f.checked {
			if on {
				picked = append(picked, f.choices[i])
			}
		}
		if len(picked) == 0 && !f.required {
			return nil, nil
		}
		b, _ := json.Marshal(append([]json.RawMessage{}, picked...))
		return b, nil
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
		b, _ := json.Marshal(text)
		return b, nil
	case fNumber, fInteger:
		if _, err := strconv.ParseFloat(t, 64); err != nil || !json.Valid([]byte(t)) {
			return nil, fmt.Errorf("not a number")
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
	text := cur != nil && !cur.choiceKind()
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
		// A checklist's choices are rows of the form: the focus walks
		// through them before it leaves the field.
		if cur != nil && cur.kind == fMulti && cur.item+d >= 0 && cur.item+d < len(cur.choices) {
			cur.item += d
			return false, nil
		}
		f.focusField(f.focus + d)
		if nf := f.fields[f.focus]; nf.kind == fMulti {
			nf.item = 0
			if d < 0 {
				nf.item = len(nf.choices) - 1
			}
		}
	case "form-clear":
		switch {
		case f.raw:
			f.rawText.SetValue("")
		case text:
			cur.in.SetValue("")
		case cur != nil && cur.kind == fMulti:
			clear(cur.checked)
		case cur != nil:
			cur.choice = -1
		}
	case "form-choice-next", "form-choice-prev":
		if cur != nil && cur.kind == fBool {
			cur.choice = map[bool]int{true: 1, false: 0}[name == "form-choice-next"] // → true, ← false
			return false, nil
		}
		if cur != nil && !text {
			d := 1
			if name == "form-choice-prev" {
				d = len(cur.choices) - 1
			}
			if cur.kind == fMulti {
				cur.item = (cur.item + d) % len(cur.choices)
				return false, nil
			}
			switch {
			case cur.choice < 0 && name == "form-choice-prev":
				cur.choice = len(cur.choices) - 1 // from none: the last
			default:
				cur.choice = (max(cur.choice, -1) + d + len(cur.choices)) % len(cur.choices)
			}
			return false, nil
		}
		return false, f.edit(msg) // a text field's cursor moves
	default:
		if cur != nil && cur.kind == fMulti && keys.Text(msg) == " " {
			cur.checked[cur.item] = !cur.checked[cur.item]
			return false, nil
		}
		if cur != nil && cur.kind == fBool {
			switch keys.Text(msg) {
			case " ": // unset or false becomes true, true false
				cur.choice = 1 - max(cur.choice, 0)
			case "l":
				cur.choice = 1
			case "h":
				cur.choice = 0
			}
			return false, nil
		}
		if cur != nil && !text {
			switch keys.Text(msg) {
			case " ", "l":
				return f.key(m, "form-choice-next", msg)
			case "h":
				return f.key(m, "form-choice-prev", msg)
			}
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
	if cur.choiceKind() {
		return nil
	}
	if cur.prefilled {
		// The first key typed into a prefilled value replaces it (it shows
		// selected); a key that moves or deletes keeps it to edit.
		cur.prefilled = false
		if k, ok := msg.(tea.KeyPressMsg); (ok && keys.Text(k) != "") || isPaste(msg) {
			cur.in.SetValue("")
		}
	}
	cur.in, cmd = cur.in.Update(msg)
	return cmd
}

func isPaste(msg tea.Msg) bool {
	_, ok := msg.(tea.PasteMsg)
	return ok
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
		case fl.choiceKind():
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
				fl.in.SetStyles(lineStyles(m.th))
			}
			head := mark + pad(fl.label(), labelW) + " "
			vals := fl.display(valW, i == f.focus)
			if fl.err != "" && len(vals) > 0 {
				// The mark sits next to the value, not at the far edge the
				// editor's width pads to.
				vals[0] = strings.TrimRight(ansi.Truncate(vals[0], max(ansi.StringWidth(fl.text())+1, ansi.StringWidth(strings.TrimRight(ansi.Strip(vals[0]), " "))), ""), " ")
			}
			prefill := fl.prefilled && i == f.focus && !fl.choiceKind()
			if prefill {
				vals[0] = m.th.Selected.Render(fit(fl.text(), valW-22)) + m.th.Faint.Render(" typing replaces it")
			}
			for k, v := range vals {
				line := head + v
				if k > 0 {
					line = strings.Repeat(" ", ansi.StringWidth(head)) + v
				}
				if i == f.focus && (fl.kind != fMulti || k == fl.item) && !prefill {
					line = m.th.Accent.Render(line)
				}
				if k == 0 && fl.err != "" {
					line += " " + m.th.Error.Render("← "+fl.err)
				}
				l = append(l, line)
			}
			// The focused field's label in full when its column cut it.
			about := termsafe.Line(fl.desc)
			if lb := fl.label(); ansi.StringWidth(lb) > labelW {
				about = strings.TrimSuffix(lb+": "+about, ": ")
			}
			if i == f.focus && about != "" {
				l = append(l, m.th.Faint.Render("    "+about))
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

// label is the field's name in the form, * when required.
func (fl *field) label() string {
	l := termsafe.Line(firstNonEmpty(fl.title, fl.name))
	if fl.required {
		l += "*"
	}
	return l
}

// display is the field's value in w columns: one line, or one line per
// choice of a checklist.
func (fl *field) display(w int, focused bool) []string {
	switch fl.kind {
	case fMulti:
		out := make([]string, len(fl.labels))
		for i, lb := range fl.labels {
			box := " [ ] "
			if fl.checked[i] {
				box = " [x] "
			}
			if focused && i == fl.item {
				box = "›" + box[1:] // the choice space ticks
			}
			out[i] = fit(box+lb, w)
		}
		if hint := fl.itemsHint(); hint != "" && len(out) > 0 {
			out[0] = fit(out[0]+"  "+hint, w)
		}
		if len(out) == 0 {
			out = []string{"(no choices)"}
		}
		return out
	case fEnum, fBool:
		return []string{choiceStrip(fl.labels, fl.choice, w)}
	}
	return []string{fl.in.View()}
}

// itemsHint says how many a checklist takes.
func (fl *field) itemsHint() string {
	if fl.prop == nil {
		return ""
	}
	switch minItems, maxItems := fl.prop.MinItems, fl.prop.MaxItems; {
	case minItems != nil && maxItems != nil:
		return "(choose " + itoa(*minItems) + "–" + itoa(*maxItems) + ")"
	case minItems != nil:
		return "(at least " + itoa(*minItems) + ")"
	case maxItems != nil:
		return "(at most " + itoa(*maxItems) + ")"
	}
	return ""
}

// choiceStrip is "◂ a [b] c ▸" in w columns; when the choices do not fit,
// a window of them around the chosen one, "…" marking what is left out.
func choiceStrip(labels []string, choice, w int) string {
	parts := make([]string, len(labels))
	for i, lb := range labels {
		if i == choice {
			parts[i] = "[" + lb + "]"
		} else {
			parts[i] = " " + lb + " "
		}
	}
	if full := "◂" + strings.Join(parts, "") + "▸"; ansi.StringWidth(full) <= w || len(parts) == 0 {
		return full
	}
	c := clamp(choice, 0, len(parts)-1)
	lo, hi, used := c, c+1, ansi.StringWidth(parts[c])
	for grown := true; grown; {
		grown = false
		if hi < len(parts) && used+ansi.StringWidth(parts[hi])+4 <= w {
			used += ansi.StringWidth(parts[hi])
			hi++
			grown = true
		}
		if lo > 0 && used+ansi.StringWidth(parts[lo-1])+4 <= w {
			lo--
			used += ansi.StringWidth(parts[lo])
			grown = true
		}
	}
	left, right := "◂", "▸"
	if lo > 0 {
		left = "◂…"
	}
	if hi < len(parts) {
		right = "…▸"
	}
	mid := fit(strings.Join(parts[lo:hi], ""), max(1, w-ansi.StringWidth(left+right)))
	return left + mid + right
}
