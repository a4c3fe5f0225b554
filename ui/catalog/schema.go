package catalog

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/jsonschema-go/jsonschema"

	"mcpscope/internal/schema"
	"mcpscope/internal/termsafe"
	"mcpscope/lint"
	"mcpscope/ui/form"
	"mcpscope/ui/view"
	"mcpscope/ui/widget"
)

// schemaLines describe a tool for the catalog's schema pane, w columns
// wide: its input properties (name, type, bounds, description), its
// output properties when it declares an outputSchema, its annotations and
// what hosts make of it. Under the list (short first) the few lines of
// annotations and hosts come before the properties, which the pane may
// have to cut.
func schemaLines(c view.Context, e entry, w int, short bool) []string {
	var l []string
	head := func(s string) { l = append(l, c.Theme.Title.Render(widget.Fit(s, w))) }
	props := func() {
		head("input")
		l = append(l, propLines(c, e.schema, w)...)
		if len(e.outSchema) > 0 {
			l = append(l, "")
			head("output")
			l = append(l, propLines(c, e.outSchema, w)...)
		}
	}
	if short {
		l = append(l, aboutLines(c, e, w)...)
		l = append(l, "")
		props()
		return l
	}
	props()
	l = append(l, "")
	return append(l, aboutLines(c, e, w)...)
}

// aboutLines are a tool's annotations, task support and lint findings.
func aboutLines(c view.Context, e entry, w int) []string {
	var l []string
	head := func(s string) { l = append(l, c.Theme.Title.Render(widget.Fit(s, w))) }
	faint := func(s string) { l = append(l, c.Theme.Faint.Render(widget.Fit(s, w))) }
	head("annotations")
	if a := annotationText(e.annotations); a != "" {
		l = append(l, wrapLines(a, w, 3)...)
	} else {
		faint("(none declared)")
	}
	if e.taskSupport != "" {
		faint("tasks: " + termsafe.Line(e.taskSupport))
	}
	if len(e.findings) > 0 {
		l = append(l, "")
		head("hosts (mcpscope lint)")
		for _, f := range e.findings {
			line := findingMark(entry{findings: []lint.Finding{f}}, " ") + " " + string(f.Severity) + " " + f.Rule + " " + termsafe.Line(f.Pointer)
			if f.Severity == lint.Error {
				l = append(l, c.Theme.Error.Render(widget.Fit(line, w)))
			} else {
				l = append(l, widget.Fit(line, w))
			}
			why := f.Reason
			if f.Detail != "" {
				why += ": " + f.Detail
			}
			for _, dl := range indentWrap(termsafe.Line(why+" ("+strings.Join(f.Hosts, ", ")+")"), 2, w, 3) {
				l = append(l, c.Theme.Faint.Render(dl))
			}
		}
	}
	return l
}

// findingMark is a tool's mark in the list: ✗ when a host refuses it, !
// when hosts read it unevenly, else mark.
func findingMark(e entry, mark string) string {
	for _, f := range e.findings {
		if f.Severity == lint.Error {
			return "✗"
		}
	}
	if len(e.findings) > 0 {
		return "!"
	}
	return mark
}

// propLines lists an object schema's properties, each a summary wrapped
// to a few lines (its description under it), * marking the required.
func propLines(c view.Context, raw json.RawMessage, w int) []string {
	o, err := schema.ReadObject(raw)
	switch {
	case err != nil:
		return []string{c.Theme.Error.Render(widget.Fit("unreadable: "+termsafe.Line(err.Error()), w))}
	case len(o.Names) == 0:
		return []string{c.Theme.Faint.Render(widget.Fit("(no properties)", w))}
	}
	nameW := 4
	for _, n := range o.Names {
		nameW = max(nameW, ansi.StringWidth(termsafe.Line(n))+1)
	}
	nameW = min(nameW, max(6, w/3))
	var l []string
	for _, n := range o.Names {
		p := o.Props[n]
		name := termsafe.Line(n)
		if o.Required[n] {
			name += "*"
		}
		// The summary wraps under itself (a long enum would be cut).
		sum := indentWrap(termsafe.Line(propSummary(p)), nameW+2, w, 4)
		if len(sum) == 0 {
			sum = []string{termsafe.Line(propSummary(p))}
		}
		sum[0] = " " + widget.Pad(name, nameW) + " " + strings.TrimLeft(sum[0], " ")
		for _, sl := range sum {
			l = append(l, widget.Fit(sl, w))
		}
		if p.Description != "" {
			for _, dl := range indentWrap(termsafe.Line(p.Description), nameW+2, w, 2) {
				l = append(l, c.Theme.Faint.Render(dl))
			}
		}
	}
	return l
}

// propSummary is a property's type and what bounds it: "string (email) ·
// 3–20 chars", "integer · 1…10 · default 5", "one of a, b".
func propSummary(p *jsonschema.Schema) string {
	typ := schema.TypeOf(p)
	if typ == "" {
		typ = "any"
	}
	if typ == "array" && p.Items != nil {
		if it := schema.TypeOf(p.Items); it != "" {
			typ = it + "[]"
		}
	}
	parts := []string{typ}
	if p.Format != "" {
		parts[0] += " (" + p.Format + ")"
	}
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		parts = append(parts, num(p.Minimum)+"…"+num(p.Maximum))
	case p.Minimum != nil:
		parts = append(parts, "≥ "+num(p.Minimum))
	case p.Maximum != nil:
		parts = append(parts, "≤ "+num(p.Maximum))
	}
	switch {
	case p.MinLength != nil && p.MaxLength != nil:
		parts = append(parts, strconv.Itoa(*p.MinLength)+"–"+strconv.Itoa(*p.MaxLength)+" chars")
	case p.MinLength != nil:
		parts = append(parts, "≥ "+strconv.Itoa(*p.MinLength)+" chars")
	case p.MaxLength != nil:
		parts = append(parts, "≤ "+strconv.Itoa(*p.MaxLength)+" chars")
	}
	if p.Pattern != "" {
		parts = append(parts, "/"+p.Pattern+"/")
	}
	if len(p.Enum) > 0 {
		var vs []string
		for _, v := range schema.Values(p.Enum) {
			vs = append(vs, form.Label(v, ""))
		}
		parts = append(parts, "one of "+strings.Join(vs, ", "))
	}
	if len(p.Default) > 0 {
		parts = append(parts, "default "+widget.OneLine(p.Default, 30))
	}
	return strings.Join(parts, " · ")
}

// annotationText reads a tool's annotations as words.
func annotationText(raw json.RawMessage) string {
	var a struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
		IdempotentHint  *bool  `json:"idempotentHint"`
		OpenWorldHint   *bool  `json:"openWorldHint"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &a) != nil {
		return ""
	}
	var l []string
	word := func(b *bool, yes, no string) {
		if b != nil {
			l = append(l, map[bool]string{true: yes, false: no}[*b])
		}
	}
	word(a.ReadOnlyHint, "read-only", "writes")
	word(a.DestructiveHint, "destructive", "not destructive")
	word(a.IdempotentHint, "idempotent", "not idempotent")
	word(a.OpenWorldHint, "open world", "closed world")
	if a.Title != "" {
		l = append(l, "title “"+termsafe.Line(a.Title)+"”")
	}
	return strings.Join(l, " · ")
}

// besides lays two columns side by side: left padded to lw, a rule, then
// right; as many rows as the taller.
func besides(left, right []string, lw int, rule string) []string {
	n := max(len(left), len(right))
	out := make([]string, n)
	for i := range n {
		var a, b string
		if i < len(left) {
			a = left[i]
		}
		if i < len(right) {
			b = right[i]
		}
		out[i] = widget.Pad(a, lw) + rule + b
	}
	return out
}
