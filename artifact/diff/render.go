package diff

import (
	"encoding/json"
	"fmt"
	"io"

	"mcpscope/internal/termsafe"
)

// Styles colour the human report; the zero value is plain text.
type Styles struct {
	Added, Removed, Changed, Faint func(string) string
}

// ANSI are the styles for a colour terminal.
func ANSI() Styles {
	wrap := func(code string) func(string) string {
		return func(s string) string { return "\x1b[" + code + "m" + s + "\x1b[0m" }
	}
	return Styles{Added: wrap("32"), Removed: wrap("31"), Changed: wrap("33"), Faint: wrap("2")}
}

func (s Styles) style(f func(string) string, text string) string {
	if f == nil {
		return text
	}
	return f(text)
}

// maxValue bounds how much of a value one line shows.
const maxValue = 120

// Human writes the report for people: one line per change, the fields of
// a changed item under it, breaking and riskier changes marked. Everything that came
// from a server is sanitised.
func (r *Report) Human(w io.Writer, st Styles) {
	fmt.Fprintf(w, "A  %s\n   %s\n", side(r.A), termsafe.Line(r.A.Counts))
	fmt.Fprintf(w, "B  %s\n   %s\n", side(r.B), termsafe.Line(r.B.Counts))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "%s\n", st.style(st.Faint, "note: "+termsafe.Line(n)))
	}
	if !r.Drift() {
		fmt.Fprintln(w, "no drift: the catalogs are the same")
		return
	}
	fmt.Fprintln(w)
	for _, c := range r.Changes {
		mark, f := "~", st.Changed
		switch c.Op {
		case "added":
			mark, f = "+", st.Added
		case "removed":
			mark, f = "-", st.Removed
		}
		head := c.Kind
		if c.Name != "" {
			head += " " + termsafe.Line(c.Name)
		}
		line := st.style(f, mark+" "+head)
		if c.Title != "" {
			line += "  " + st.style(st.Faint, termsafe.Line(c.Title))
		}
		if c.Breaking {
			line += "  " + st.style(st.Removed, "(breaking)")
		}
		if c.Riskier {
			line += "  " + st.style(st.Removed, "(riskier)")
		}
		fmt.Fprintln(w, line)
		for _, fl := range c.Fields {
			fmt.Fprintln(w, "    "+fieldLine(fl, st))
		}
	}
	fmt.Fprintf(w, "\ndrift: %d change(s), %d breaking", len(r.Changes), r.Breaking())
	if n := r.Riskier(); n > 0 {
		fmt.Fprintf(w, ", %d riskier (a tool's hints now say it writes or destroys: approvals given by the old hints no longer fit)", n)
	}
	fmt.Fprintln(w)
}

func side(s Side) string {
	out := termsafe.Line(s.Source)
	if s.Server.Name != "" {
		out += ": " + termsafe.Line(s.Server.Name+" "+s.Server.Version)
	}
	if s.ProtocolVersion != "" {
		out += " (protocol " + termsafe.Line(s.ProtocolVersion) + ")"
	}
	return out
}

func fieldLine(f Field, st Styles) string {
	path := f.Path
	if path == "" {
		path = "(value)"
	}
	path = termsafe.Line(path)
	var s string
	switch f.Op {
	case "added":
		s = st.style(st.Added, "+ "+path) + " " + value(f.After)
	case "removed":
		s = st.style(st.Removed, "- "+path) + " " + value(f.Before)
	default:
		s = st.style(st.Changed, "~ "+path) + " " + value(f.Before) + " → " + value(f.After)
	}
	if f.Breaking {
		s += "  " + st.style(st.Removed, "(breaking)")
	}
	if f.Riskier {
		s += "  " + st.style(st.Removed, "(riskier)")
	}
	return s
}

// value is a JSON value on one line, cut short.
func value(raw []byte) string {
	s := termsafe.Line(string(raw))
	if r := []rune(s); len(r) > maxValue {
		s = string(r[:maxValue-1]) + "…"
	}
	return s
}

// Item names one item of a catalog's lists: its kind (tool, resource,
// template, prompt) and its key (name, URI, URI template).
type Item struct{ Kind, Name string }

// Items are the items of the lists both snapshots listed, each once, in
// list order: what a CI report has one test case for.
func Items(a, b *Snapshot) []Item {
	var out []Item
	for _, l := range lists {
		pa, pb := *a.items(l), *b.items(l)
		if pa == nil || pb == nil {
			continue // not compared (a note says so)
		}
		seen := map[string]bool{}
		for _, it := range append(append([]json.RawMessage{}, pa...), pb...) {
			if k := keyOf(l, it); !seen[k] {
				seen[k] = true
				out = append(out, Item{l.Kind, k})
			}
		}
	}
	return out
}

// Lines are a change's own lines, as Human writes them without styles:
// the head (op, kind, name, breaking, riskier) and one line per field, sanitised.
func (c Change) Lines() []string {
	head := c.Op + " " + c.Kind
	if c.Name != "" {
		head += " " + termsafe.Line(c.Name)
	}
	if c.Breaking {
		head += " (breaking)"
	}
	if c.Riskier {
		head += " (riskier)"
	}
	out := []string{head}
	for _, fl := range c.Fields {
		out = append(out, fieldLine(fl, Styles{}))
	}
	return out
}
