package form

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/jsonschema-go/jsonschema"

	"mcpscope/internal/schema"
	"mcpscope/internal/termsafe"
	"mcpscope/themes"
	"mcpscope/ui/widget"
	"mcpscope/ui/widget/textbox"
)

type kind uint8

const (
	kString kind = iota
	kNumber
	kInteger
	kBool
	kEnum
	kMulti // an array of enum values: a checklist
	kJSON  // objects, arrays, anything else: typed as JSON
)

// Field is one input of a form, generated from a JSON Schema property
// (FromSchema) or made by hand (Text, YesNo).
type Field struct {
	name, title, desc string
	kind              kind
	required          bool
	in                textinput.Model // the text kinds' editor
	choice            int             // enum/bool: index into choices, -1 = unset
	choices           []json.RawMessage
	labels            []string
	checked           []bool             // kMulti: which choices are in
	item              int                // kMulti: the choice the cursor is on
	prop              *jsonschema.Schema // what the value is checked against (nil: anything)
	// prefilled: the text is a default nobody has typed into yet; the
	// first key typed replaces it rather than adding to it.
	prefilled bool
	err       string
}

// choiceKind: the value is picked from choices rather than typed.
func (f *Field) choiceKind() bool { return f.kind == kEnum || f.kind == kBool || f.kind == kMulti }

// Label is how a choice reads: its title, else a string value without
// quotes, else its JSON on one line.
func Label(v json.RawMessage, title string) string {
	if title != "" {
		return termsafe.Line(title)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return termsafe.Line(widget.Shorten(s, 60))
	}
	return widget.OneLine(v, 60)
}

// FromSchema builds the fields of an object schema, in the order the
// properties were written (internal/schema reads it with the JSON Schema
// library; the values are checked against it before they are sent).
func FromSchema(object json.RawMessage) ([]*Field, error) {
	o, err := schema.ReadObject(object)
	if err != nil {
		return nil, err
	}
	var out []*Field
	for _, n := range o.Names {
		p := o.Props[n]
		f := &Field{name: n, title: p.Title, desc: p.Description, required: o.Required[n], choice: -1, in: textbox.NewLine("", themes.Plain()), prop: p}
		typ := schema.TypeOf(p)
		var items []*jsonschema.Schema
		if p.Items != nil {
			items = append(p.Items.AnyOf, p.Items.OneOf...)
		}
		switch {
		case typ == "array" && p.Items != nil && len(p.Items.Enum)+len(items) > 0:
			f.kind = kMulti
			for _, e := range schema.Values(p.Items.Enum) {
				f.choices, f.labels = append(f.choices, e), append(f.labels, Label(e, ""))
			}
			for _, o := range items {
				if o.Const != nil {
					c := schema.Values([]any{*o.Const})[0]
					f.choices, f.labels = append(f.choices, c), append(f.labels, Label(c, o.Title))
				}
			}
			f.checked = make([]bool, len(f.choices))
		case len(p.Enum) > 0:
			f.kind, f.choices = kEnum, schema.Values(p.Enum)
			names := schema.Strings(p, "enumNames")
			for i, e := range f.choices {
				title := ""
				if i < len(names) {
					title = names[i]
				}
				f.labels = append(f.labels, Label(e, title))
			}
		case len(p.OneOf) > 0 && p.OneOf[0].Const != nil:
			f.kind = kEnum
			for _, o := range p.OneOf {
				if o.Const != nil {
					c := schema.Values([]any{*o.Const})[0]
					f.choices, f.labels = append(f.choices, c), append(f.labels, Label(c, o.Title))
				}
			}
		case typ == "string":
			f.kind = kString
		case typ == "number":
			f.kind = kNumber
		case typ == "integer":
			f.kind = kInteger
		case typ == "boolean":
			f.kind = kBool
			f.choices = []json.RawMessage{json.RawMessage("false"), json.RawMessage("true")}
			f.labels = []string{"false", "true"}
		default:
			f.kind = kJSON
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

// Text is a string field holding value.
func Text(name, title, value string, required bool) *Field {
	return &Field{name: name, title: title, kind: kString, required: required, choice: -1, in: textbox.NewLine(value, themes.Plain()), prefilled: value != ""}
}

// YesNo is a boolean field reading "no" / "yes", set to on.
func YesNo(name, title string, on bool) *Field {
	return &Field{name: name, title: title, kind: kBool, choice: map[bool]int{false: 0, true: 1}[on],
		choices: []json.RawMessage{json.RawMessage("false"), json.RawMessage("true")}, labels: []string{"no", "yes"}}
}

// WithDesc gives the field its description (shown under it when focused).
func (f *Field) WithDesc(desc string) *Field {
	f.desc = desc
	return f
}

func (f *Field) setDefault(d json.RawMessage) {
	switch f.kind {
	case kMulti:
		var vs []json.RawMessage
		_ = json.Unmarshal(d, &vs)
		for _, v := range vs {
			for i, c := range f.choices {
				if bytes.Equal(bytes.TrimSpace(c), bytes.TrimSpace(v)) {
					f.checked[i] = true
				}
			}
		}
	case kEnum, kBool:
		for i, c := range f.choices {
			if bytes.Equal(bytes.TrimSpace(c), bytes.TrimSpace(d)) {
				f.choice = i
			}
		}
	case kString:
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
func (f *Field) text() string { return f.in.Value() }

// Value is the text the field holds (a choice field: "").
func (f *Field) Value() string { return f.in.Value() }

// value validates the field and returns its JSON (nil = leave it out).
func (f *Field) value() (json.RawMessage, error) {
	v, err := f.raw()
	if err != nil || v == nil || f.prop == nil {
		return v, err
	}
	if why := schema.Check(f.prop, v); why != "" {
		return nil, errors.New(termsafe.Line(why)) // it may quote the server's schema
	}
	return v, nil
}

// raw is the field's value as JSON before the schema checks it (nil =
// leave it out).
func (f *Field) raw() (json.RawMessage, error) {
	switch f.kind {
	case kMulti:
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
	case kEnum, kBool:
		if f.choice < 0 {
			if f.required {
				return nil, fmt.Errorf("choose a value")
			}
			return nil, nil
		}
		return f.choices[f.choice], nil
	}
	t := strings.TrimSpace(f.text())
	if t == "" && f.kind != kString {
		if f.required {
			return nil, fmt.Errorf("required")
		}
		return nil, nil
	}
	switch f.kind {
	case kString:
		text := f.text()
		if text == "" && f.required {
			return nil, fmt.Errorf("required")
		}
		if text == "" {
			return nil, nil
		}
		b, _ := json.Marshal(text)
		return b, nil
	case kNumber, kInteger:
		if _, err := strconv.ParseFloat(t, 64); err != nil || !json.Valid([]byte(t)) {
			return nil, fmt.Errorf("not a number")
		}
		return json.RawMessage(t), nil
	}
	if p := textbox.JSONProblem(t); p != "" {
		return nil, fmt.Errorf("not JSON: %s", p)
	}
	return json.RawMessage(t), nil
}

// label is the field's name in the form, * when required.
func (f *Field) label() string {
	l := termsafe.Line(widget.FirstNonEmpty(f.title, f.name))
	if f.required {
		l += "*"
	}
	return l
}

// display is the field's value in w columns: one line, or one line per
// choice of a checklist.
func (f *Field) display(w int, focused bool) []string {
	switch f.kind {
	case kMulti:
		out := make([]string, len(f.labels))
		for i, lb := range f.labels {
			box := " [ ] "
			if f.checked[i] {
				box = " [x] "
			}
			if focused && i == f.item {
				box = "›" + box[1:] // the choice space ticks
			}
			out[i] = widget.Fit(box+lb, w)
		}
		if hint := f.itemsHint(); hint != "" && len(out) > 0 {
			out[0] = widget.Fit(out[0]+"  "+hint, w)
		}
		if len(out) == 0 {
			out = []string{"(no choices)"}
		}
		return out
	case kEnum, kBool:
		return []string{choiceStrip(f.labels, f.choice, w)}
	}
	return []string{f.in.View()}
}

// itemsHint says how many a checklist takes.
func (f *Field) itemsHint() string {
	if f.prop == nil {
		return ""
	}
	switch minItems, maxItems := f.prop.MinItems, f.prop.MaxItems; {
	case minItems != nil && maxItems != nil:
		return "(choose " + strconv.Itoa(*minItems) + "–" + strconv.Itoa(*maxItems) + ")"
	case minItems != nil:
		return "(at least " + strconv.Itoa(*minItems) + ")"
	case maxItems != nil:
		return "(at most " + strconv.Itoa(*maxItems) + ")"
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
	c := widget.Clamp(choice, 0, len(parts)-1)
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
	mid := widget.Fit(strings.Join(parts[lo:hi], ""), max(1, w-ansi.StringWidth(left+right)))
	return left + mid + right
}
