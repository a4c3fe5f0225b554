package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"mcpscope/protocol"
)

// Report is what differs between two snapshots, A (before) and B (after).
type Report struct {
	A       Side     `json:"a"`
	B       Side     `json:"b"`
	Changes []Change `json:"changes"`
	// Notes say what could not be compared, and why.
	Notes []string `json:"notes,omitempty"`
}

// Side names one side of a report.
type Side struct {
	Source          string                  `json:"source"`
	Server          protocol.Implementation `json:"server"`
	ProtocolVersion string                  `json:"protocolVersion"`
	Counts          string                  `json:"counts"`
}

// Change is one thing that differs: the server's info, its protocol
// version, capabilities or instructions, or one item of a list.
type Change struct {
	// Kind is server, protocolVersion, capabilities, instructions, tool,
	// resource, template or prompt.
	Kind string `json:"kind"`
	// Name is the item's name (a tool's or prompt's name, a resource's
	// URI, a template's URI template).
	Name string `json:"name,omitempty"`
	// Op is added, removed or changed.
	Op string `json:"op"`
	// Title is what an added or removed item says it is (its title, or
	// the first line of its description).
	Title string `json:"title,omitempty"`
	// Fields are what changed inside it.
	Fields []Field `json:"fields,omitempty"`
	// Breaking: a client written against A may fail against B (a tool,
	// resource or prompt gone; a new required argument; a property gone or
	// of another type).
	Breaking bool `json:"breaking,omitempty"`
	// Riskier: a tool's hints say it is less safe than they said: no
	// longer read-only, or now destructive. Hosts approve calls by these
	// hints, so an approval given by the old ones no longer fits the tool.
	Riskier bool `json:"riskier,omitempty"`
}

// Field is one difference inside a value, at a JSON Pointer into it (""
// for the value itself). Members of arrays of named objects (a prompt's
// arguments) are addressed by name, "/arguments/name=city"; arrays of
// plain values (required, enum, type) are compared as sets, so only what
// was added or removed shows.
type Field struct {
	Path     string          `json:"path"`
	Op       string          `json:"op"` // added, removed, changed
	Before   json.RawMessage `json:"before,omitempty"`
	After    json.RawMessage `json:"after,omitempty"`
	Breaking bool            `json:"breaking,omitempty"`
	Riskier  bool            `json:"riskier,omitempty"` // a hint that made the tool riskier (Change.Riskier)
}

// Drift reports whether anything differs.
func (r *Report) Drift() bool { return len(r.Changes) > 0 }

// Breaking counts the changes that may break a client.
func (r *Report) Breaking() int {
	n := 0
	for _, c := range r.Changes {
		if c.Breaking {
			n++
		}
	}
	return n
}

// Riskier counts the tools whose hints now say they are less safe.
func (r *Report) Riskier() int {
	n := 0
	for _, c := range r.Changes {
		if c.Riskier {
			n++
		}
	}
	return n
}

func sideOf(s *Snapshot) Side {
	return Side{Source: s.Source, Server: s.Server, ProtocolVersion: s.ProtocolVersion, Counts: s.Counts()}
}

// Compare says what changed from a to b.
func Compare(a, b *Snapshot) *Report {
	a.normalize()
	b.normalize()
	r := &Report{A: sideOf(a), B: sideOf(b), Changes: []Change{}}
	ai, _ := json.Marshal(a.Server)
	bi, _ := json.Marshal(b.Server)
	if fs := diffJSON(ai, bi); len(fs) > 0 {
		r.Changes = append(r.Changes, Change{Kind: "server", Op: "changed", Fields: fs})
	}
	if a.ProtocolVersion != b.ProtocolVersion {
		r.Changes = append(r.Changes, Change{Kind: "protocolVersion", Op: "changed",
			Fields: []Field{{Op: "changed", Before: quote(a.ProtocolVersion), After: quote(b.ProtocolVersion)}}})
	}
	if fs := diffJSON(orEmpty(a.Capabilities), orEmpty(b.Capabilities)); len(fs) > 0 {
		for i := range fs {
			// A capability gone (tools, resources.subscribe…) is one a
			// client may rely on.
			fs[i].Breaking = fs[i].Op == "removed"
		}
		r.Changes = append(r.Changes, Change{Kind: "capabilities", Op: "changed", Fields: fs, Breaking: anyBreaking(fs)})
	}
	if a.Instructions != b.Instructions {
		r.Changes = append(r.Changes, Change{Kind: "instructions", Op: "changed",
			Fields: []Field{{Op: "changed", Before: quote(a.Instructions), After: quote(b.Instructions)}}})
	}
	for _, l := range lists {
		pa, pb := *a.items(l), *b.items(l)
		switch {
		case pa == nil && pb == nil:
			continue
		case pa == nil:
			r.Notes = append(r.Notes, fmt.Sprintf("%s not compared: %s never listed them", l.Field, a.Source))
			continue
		case pb == nil:
			r.Notes = append(r.Notes, fmt.Sprintf("%s not compared: %s never listed them", l.Field, b.Source))
			continue
		}
		r.Changes = append(r.Changes, compareList(l, pa, pb)...)
	}
	r.Notes = append(r.Notes, a.Notes...)
	r.Notes = append(r.Notes, b.Notes...)
	return r
}

func compareList(l list, a, b []json.RawMessage) []Change {
	am, bm := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	var keys []string
	for _, it := range a {
		k := keyOf(l, it)
		if _, dup := am[k]; !dup {
			keys = append(keys, k)
		}
		am[k] = it
	}
	for _, it := range b {
		k := keyOf(l, it)
		if _, seen := am[k]; !seen {
			if _, dup := bm[k]; !dup {
				keys = append(keys, k)
			}
		}
		bm[k] = it
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		x, inA := am[k]
		y, inB := bm[k]
		switch {
		case !inB:
			out = append(out, Change{Kind: l.Kind, Name: k, Op: "removed", Title: titleOf(x), Breaking: true})
		case !inA:
			out = append(out, Change{Kind: l.Kind, Name: k, Op: "added", Title: titleOf(y)})
		default:
			fs := diffJSON(x, y)
			if len(fs) == 0 {
				continue
			}
			for i := range fs {
				fs[i].Breaking = breaking(l.Kind, fs[i])
			}
			c := Change{Kind: l.Kind, Name: k, Op: "changed", Fields: fs, Breaking: anyBreaking(fs)}
			if l.Kind == "tool" {
				writes, destroys := riskier(x, y)
				c.Riskier = writes || destroys
				for i, f := range fs {
					switch f.Path {
					case "/annotations":
						fs[i].Riskier = c.Riskier
					case "/annotations/readOnlyHint":
						fs[i].Riskier = writes
					case "/annotations/destructiveHint":
						fs[i].Riskier = destroys
					}
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// breaking judges one field change of an item, from a client's side.
func breaking(kind string, f Field) bool {
	p := f.Path
	switch kind {
	case "tool":
		switch {
		case strings.HasPrefix(p, "/inputSchema"):
			return f.Op == "removed" && strings.Contains(p, "/properties/") && !strings.Contains(p[strings.LastIndex(p, "/properties/")+12:], "/") ||
				tightens(p, f)
		case strings.HasPrefix(p, "/outputSchema"):
			last := p[strings.LastIndexByte(p, '/')+1:]
			return f.Op == "removed" && (last == "required" || strings.Contains(p, "/properties/")) || last == "type" ||
				p == "/outputSchema" && f.Op == "removed"
		}
	case "prompt":
		return strings.HasPrefix(p, "/arguments/") && strings.HasSuffix(p, "/required") && string(f.After) == "true" ||
			strings.HasPrefix(p, "/arguments") && f.Op == "added" && bytes.Contains(f.After, []byte(`"required":true`))
	case "template":
		return p == "/uriTemplate"
	}
	return false
}

// riskier says how tool b's hints are less safe than tool a's were:
// writes when readOnlyHint went true → false, destroys when
// destructiveHint went false → true. The hints are read with the spec's
// defaults (readOnlyHint false; destructiveHint true, and meaningful only
// for a tool that is not read-only), so dropping destructiveHint: false
// counts too.
func riskier(a, b json.RawMessage) (writes, destroys bool) {
	ra, da := hints(a)
	rb, db := hints(b)
	return ra && !rb, !da && db
}

func hints(tool json.RawMessage) (readOnly, destructive bool) {
	var t struct {
		Annotations struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
		} `json:"annotations"`
	}
	_ = json.Unmarshal(tool, &t)
	readOnly = t.Annotations.ReadOnly != nil && *t.Annotations.ReadOnly
	destructive = !readOnly && (t.Annotations.Destructive == nil || *t.Annotations.Destructive)
	return readOnly, destructive
}

// tightens reports whether a change to an input schema keyword rejects an
// argument the schema accepted before: a client that worked may now fail.
// Loosening (a bound dropped or widened, an enum value added) is not.
func tightens(p string, f Field) bool {
	i := strings.LastIndexByte(p, '/')
	if i < 0 || strings.HasSuffix(p[:i], "/properties") {
		return false // a property's name, not a keyword
	}
	switch p[i+1:] {
	case "required": // a newly required property (the set gained a name, or gained the keyword)
		return f.Op == "added"
	case "enum": // a value no longer accepted, or an enum where any value was
		return f.Op == "removed" && scalar(f.Before) || f.Op == "added" && !scalar(f.After)
	case "type":
		return true
	case "additionalProperties":
		return string(f.After) == "false"
	case "pattern", "const", "multipleOf", "format":
		// format: validators that assert formats refuse values that
		// passed before.
		return f.Op != "removed"
	case "minItems", "minLength", "minimum", "exclusiveMinimum", "minProperties":
		return f.Op == "added" || f.Op == "changed" && number(f.After) > number(f.Before)
	case "maxItems", "maxLength", "maximum", "exclusiveMaximum", "maxProperties":
		return f.Op == "added" || f.Op == "changed" && number(f.After) < number(f.Before)
	case "uniqueItems":
		return string(f.After) == "true"
	}
	return false
}

// scalar: a JSON value that is neither an array nor an object.
func scalar(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] != '[' && v[0] != '{'
}

// number is a JSON number's value; NaN when it is not one, so that no
// comparison with it holds and an odd bound is not called a tightening.
func number(v json.RawMessage) float64 {
	var x float64
	if json.Unmarshal(v, &x) != nil {
		return math.NaN()
	}
	return x
}

func anyBreaking(fs []Field) bool {
	for _, f := range fs {
		if f.Breaking {
			return true
		}
	}
	return false
}

// titleOf is what an item says it is, on one line.
func titleOf(item json.RawMessage) string {
	var m struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(item, &m)
	if m.Title != "" {
		return m.Title
	}
	line, _, _ := strings.Cut(m.Description, "\n")
	if len(line) > 80 {
		line = line[:77] + "..."
	}
	return line
}

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// diffJSON is the structural difference between two JSON values.
func diffJSON(a, b json.RawMessage) []Field {
	av, err1 := decode(a)
	bv, err2 := decode(b)
	if err1 != nil || err2 != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []Field{{Op: "changed", Before: a, After: b}}
	}
	var out []Field
	diffValues("", av, bv, &out)
	return out
}

func raw(v any) json.RawMessage {
	b, _ := marshal(v)
	return b
}

func diffValues(path string, a, b any, out *[]Field) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, Field{Path: path, Op: "changed", Before: raw(a), After: raw(b)})
			return
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "/" + pointerEscape(k)
			x, inA := av[k]
			y, inB := bv[k]
			switch {
			case !inB:
				*out = append(*out, Field{Path: p, Op: "removed", Before: raw(x)})
			case !inA:
				*out = append(*out, Field{Path: p, Op: "added", After: raw(y)})
			default:
				diffValues(p, x, y, out)
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			*out = append(*out, Field{Path: path, Op: "changed", Before: raw(a), After: raw(b)})
			return
		}
		switch {
		case allScalar(av) && allScalar(bv):
			diffSets(path, av, bv, out)
		case named(av) && named(bv):
			am, bm := map[string]any{}, map[string]any{}
			var names []string
			for _, x := range av {
				n := x.(map[string]any)["name"].(string)
				am[n] = x
				names = append(names, n)
			}
			for _, y := range bv {
				n := y.(map[string]any)["name"].(string)
				if _, ok := am[n]; !ok {
					names = append(names, n)
				}
				bm[n] = y
			}
			for _, n := range names {
				p := path + "/name=" + pointerEscape(n)
				x, inA := am[n]
				y, inB := bm[n]
				switch {
				case !inB:
					*out = append(*out, Field{Path: p, Op: "removed", Before: raw(x)})
				case !inA:
					*out = append(*out, Field{Path: p, Op: "added", After: raw(y)})
				default:
					diffValues(p, x, y, out)
				}
			}
		default:
			for i := 0; i < max(len(av), len(bv)); i++ {
				p := fmt.Sprintf("%s/%d", path, i)
				switch {
				case i >= len(bv):
					*out = append(*out, Field{Path: p, Op: "removed", Before: raw(av[i])})
				case i >= len(av):
					*out = append(*out, Field{Path: p, Op: "added", After: raw(bv[i])})
				default:
					diffValues(p, av[i], bv[i], out)
				}
			}
		}
	default:
		if !scalarEqual(a, b) {
			*out = append(*out, Field{Path: path, Op: "changed", Before: raw(a), After: raw(b)})
		}
	}
}

// diffSets compares arrays of plain values as sets.
func diffSets(path string, a, b []any, out *[]Field) {
	in := func(v any, xs []any) bool {
		for _, x := range xs {
			if scalarEqual(v, x) {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		if !in(x, b) {
			*out = append(*out, Field{Path: path, Op: "removed", Before: raw(x)})
		}
	}
	for _, y := range b {
		if !in(y, a) {
			*out = append(*out, Field{Path: path, Op: "added", After: raw(y)})
		}
	}
}

func allScalar(xs []any) bool {
	for _, x := range xs {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// named: every element is an object with a string name, unique.
func named(xs []any) bool {
	seen := map[string]bool{}
	for _, x := range xs {
		m, ok := x.(map[string]any)
		if !ok {
			return false
		}
		n, ok := m["name"].(string)
		if !ok || seen[n] {
			return false
		}
		seen[n] = true
	}
	return len(xs) > 0
}

func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	case map[string]any, []any:
		return false
	}
	return a == b
}

// pointerEscape escapes a JSON Pointer token (RFC 6901).
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// JSON is the structural difference between two JSON values (the same
// rules as items of a catalog): what replay uses to compare results.
func JSON(a, b json.RawMessage) []Field { return diffJSON(a, b) }
