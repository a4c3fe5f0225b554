package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/yosida95/uritemplate/v3"
)

// Finding is one thing a host will refuse or read unevenly.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`    // tool, resource, template, prompt; list for a list's behaviour
	Name     string   `json:"name"`    // the item's name (URI, URI template), or the list method
	Pointer  string   `json:"pointer"` // JSON pointer into the item ("" the item itself)
	Hosts    []string `json:"hosts"`   // the profiles it affects
	Reason   string   `json:"reason"`  // the rule's one line
	Detail   string   `json:"detail,omitempty"`
}

// Catalog is what lint reads: the lists as a server answered them, and
// what was seen of its behaviour.
type Catalog struct {
	ProtocolVersion string
	// The lists; nil when not listed.
	Tools, Resources, Templates, Prompts []json.RawMessage
	// ToolsAgain is a second tools/list of a live server (nil: not made).
	ToolsAgain []json.RawMessage
	// Paging holds what went wrong while following nextCursor.
	Paging []PagingProblem
	// Results are tool results a journal recorded.
	Results []Result
}

// PagingProblem is a list whose paging repeated itself or did not end.
type PagingProblem struct {
	Method, Detail string
}

// Result is one recorded tools/call result.
type Result struct {
	Tool       string
	Structured json.RawMessage // nil: the result had none
	IsError    bool
}

// Report is what Check found.
type Report struct {
	Profiles []string  `json:"profiles"`
	Checked  Counts    `json:"checked"`
	Findings []Finding `json:"findings"`
}

// Counts are how many items were read.
type Counts struct {
	Tools     int `json:"tools"`
	Resources int `json:"resources"`
	Templates int `json:"templates"`
	Prompts   int `json:"prompts"`
}

// Errors and Warnings count the findings by severity.
func (r *Report) Errors() int   { return r.count(Error) }
func (r *Report) Warnings() int { return r.count(Warning) }

func (r *Report) count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// For are the findings about one item.
func (r *Report) For(kind, name string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Kind == kind && f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// checker gathers findings for the selected profiles.
type checker struct {
	profiles []Profile
	modern   bool
	out      []Finding
}

// Check runs every rule over c for the profiles given (none: all).
func Check(c *Catalog, profiles []Profile) *Report {
	if len(profiles) == 0 {
		profiles = Profiles
	}
	k := &checker{profiles: profiles, modern: c.ProtocolVersion >= "2026-07-28"}
	r := &Report{Checked: Counts{len(c.Tools), len(c.Resources), len(c.Templates), len(c.Prompts)}}
	for _, p := range profiles {
		r.Profiles = append(r.Profiles, p.Name)
	}
	k.duplicates("tool", "name", c.Tools)
	k.duplicates("resource", "uri", c.Resources)
	k.duplicates("template", "uriTemplate", c.Templates)
	k.duplicates("prompt", "name", c.Prompts)
	outputs := map[string]json.RawMessage{}
	for _, raw := range c.Tools {
		t := k.tool(raw)
		if t.OutputSchema != nil {
			outputs[t.Name] = t.OutputSchema
		}
	}
	for _, raw := range c.Templates {
		var t struct {
			URITemplate string `json:"uriTemplate"`
		}
		_ = json.Unmarshal(raw, &t)
		if _, err := uritemplate.New(t.URITemplate); err != nil || t.URITemplate == "" {
			why := "empty"
			if err != nil {
				why = err.Error()
			}
			k.spec(URITemplate, "", "template", t.URITemplate, "/uriTemplate", why)
		}
	}
	if c.ToolsAgain != nil {
		k.order(c.Tools, c.ToolsAgain)
	}
	for _, p := range c.Paging {
		k.spec(Pagination, "", "list", p.Method, "", p.Detail)
	}
	k.structured(c.Results, outputs)
	sort.SliceStable(k.out, func(i, j int) bool {
		a, b := k.out[i], k.out[j]
		if a.Kind != b.Kind {
			return kindRank(a.Kind) < kindRank(b.Kind)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Pointer < b.Pointer
	})
	r.Findings = k.out
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return r
}

func kindRank(k string) int {
	return slices.Index([]string{"tool", "resource", "template", "prompt", "list"}, k)
}

// spec records a finding of a rule every host shares (sev "" is the
// rule's own severity).
func (k *checker) spec(rule string, sev Severity, kind, name, ptr, detail string) {
	r, _ := RuleByID(rule)
	if sev == "" {
		sev = r.Severity
	}
	var hosts []string
	for _, p := range k.profiles {
		hosts = append(hosts, p.Name)
	}
	k.out = append(k.out, Finding{Rule: rule, Severity: sev, Kind: kind, Name: name, Pointer: ptr, Hosts: hosts, Reason: r.Reason, Detail: detail})
}

// portable records a portability finding for the profiles whose table
// names the rule and for which applies holds (nil: all of them); capped
// keeps it a warning whatever the tables say. Nothing when none does.
func (k *checker) portable(rule, kind, name, ptr, detail string, capped bool, applies func(Profile) bool) {
	r, _ := RuleByID(rule)
	var hosts []string
	var sev Severity
	for _, p := range k.profiles {
		s, ok := p.Rules[rule]
		if !ok || (applies != nil && !applies(p)) {
			continue
		}
		if capped && s == Error {
			s = Warning
		}
		hosts = append(hosts, p.Name)
		if s.rank() > sev.rank() {
			sev = s
		}
	}
	if len(hosts) == 0 {
		return
	}
	k.out = append(k.out, Finding{Rule: rule, Severity: sev, Kind: kind, Name: name, Pointer: ptr, Hosts: hosts, Reason: r.Reason, Detail: detail})
}

type tool struct {
	Name         string          `json:"name"`
	Description  *string         `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  *struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
	} `json:"annotations"`
}

// toolName says whether n meets the spec's SHOULD for tool names,
// ^[A-Za-z0-9_.-]{1,128}$, checked by hand: as a package-level regexp its
// {1,128} unrolled into ~1,700 allocations at every start of every
// command. The set is ASCII, so bytes and runes count alike.
func toolName(n string) bool {
	if len(n) < 1 || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if !toolNameByte(n[i]) {
			return false
		}
	}
	return true
}

func toolNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// tool checks one tool and returns it read.
func (k *checker) tool(raw json.RawMessage) tool {
	var t tool
	if err := json.Unmarshal(raw, &t); err != nil {
		k.spec(SchemaInvalid, "", "tool", "", "", "the tool is not a JSON object: "+err.Error())
		return t
	}
	switch {
	case t.Name == "":
		k.spec(ToolName, Error, "tool", t.Name, "/name", "the name is empty")
	case !toolName(t.Name):
		k.spec(ToolName, "", "tool", t.Name, "/name", nameProblem(t.Name))
	}
	if t.Description == nil || strings.TrimSpace(*t.Description) == "" {
		k.spec(Description, "", "tool", t.Name, "/description", "")
	}
	if a := t.Annotations; a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint {
		k.spec(AnnotationsConflict, "", "tool", t.Name, "/annotations", "")
	}
	k.schema(t.Name, "/inputSchema", t.InputSchema, true)
	if t.OutputSchema != nil && string(bytes.TrimSpace(t.OutputSchema)) != "null" {
		k.schema(t.Name, "/outputSchema", t.OutputSchema, false)
	} else {
		t.OutputSchema = nil
	}
	return t
}

// nameProblem says what in a tool name is outside the spec's rule.
func nameProblem(n string) string {
	if len(n) > 128 {
		return fmt.Sprintf("%d characters", len(n))
	}
	for _, r := range n {
		if !(r < 128 && toolNameByte(byte(r))) {
			return fmt.Sprintf("contains %q", r)
		}
	}
	return ""
}

// schema checks an input or output schema at ptr.
func (k *checker) schema(name, ptr string, raw json.RawMessage, input bool) {
	v, err := decode(raw)
	if err != nil || v == nil {
		if input {
			k.spec(RootType, "", "tool", name, ptr, "inputSchema is missing or null")
		}
		return
	}
	m, ok := v.(map[string]any)
	if !ok {
		k.spec(SchemaInvalid, "", "tool", name, ptr, "not a JSON object")
		return
	}
	if empty(m) {
		k.spec(EmptySchema, "", "tool", name, ptr, emptyDetail(m))
		return
	}
	if typ, _ := m["type"].(string); typ != "object" {
		what := "no type"
		if t, ok := m["type"]; ok {
			b, _ := json.Marshal(t)
			what = "type " + string(b)
		}
		if input {
			k.spec(RootType, "", "tool", name, ptr, what)
		} else {
			sev := Error
			if k.modern {
				sev = Warning
			}
			k.spec(OutputNotObject, sev, "tool", name, ptr, what)
		}
	}
	if why, known := validSchema(raw, m); !known {
		k.spec(SchemaDialect, "", "tool", name, ptr+"/$schema", why)
	} else if why != "" {
		k.spec(SchemaInvalid, "", "tool", name, ptr, why)
	}
	k.walk(name, ptr, m, input, true)
}

// empty: nothing but $schema (and $id, title or description), the
// shape an SDK publishes when its converter lost the schema.
func empty(m map[string]any) bool {
	for key := range m {
		switch key {
		case "$schema", "$id", "title", "description":
		default:
			return false
		}
	}
	return true
}

func emptyDetail(m map[string]any) string {
	if s, ok := m["$schema"].(string); ok {
		return `only "$schema": "` + s + `"`
	}
	return "no keywords"
}

// The keywords whose value is one subschema, a list of them, or a map of them.
var (
	oneSchema   = []string{"additionalProperties", "unevaluatedProperties", "items", "additionalItems", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"}
	listSchemas = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	mapSchemas  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// walk applies the portability rules to the schema m at ptr and to every
// subschema under it (portability applies to inputSchema, what model APIs
// read; bare boolean properties to both, as the hosts' SDKs parse both).
func (k *checker) walk(name, ptr string, m map[string]any, input, root bool) {
	if props, ok := m["properties"].(map[string]any); ok {
		for _, key := range sortedKeys(props) {
			if _, isBool := props[key].(bool); isBool {
				// At the root, the TypeScript SDK's tool schema (what Claude
				// Code reads the list with) wants an object: the whole list
				// fails. Deeper, hosts guess.
				k.portable(BoolSchema, "tool", name, ptr+"/properties/"+escape(key), fmt.Sprintf("%v", props[key]), !root, nil)
			}
		}
	}
	if input {
		k.portableNode(name, ptr, m)
	}
	for _, kw := range oneSchema {
		if sub, ok := m[kw].(map[string]any); ok {
			k.walk(name, ptr+"/"+kw, sub, input, false)
		}
	}
	for _, kw := range listSchemas {
		if l, ok := m[kw].([]any); ok {
			for i, it := range l {
				if sub, ok := it.(map[string]any); ok {
					k.walk(name, fmt.Sprintf("%s/%s/%d", ptr, kw, i), sub, input, false)
				}
			}
		}
	}
	for _, kw := range mapSchemas {
		if mm, ok := m[kw].(map[string]any); ok {
			for _, key := range sortedKeys(mm) {
				if sub, ok := mm[key].(map[string]any); ok {
					k.walk(name, ptr+"/"+kw+"/"+escape(key), sub, input, false)
				}
			}
		}
	}
}

// portableNode applies the per-keyword portability rules to one schema.
func (k *checker) portableNode(name, ptr string, m map[string]any) {
	if t, ok := m["type"].([]any); ok {
		b, _ := json.Marshal(t)
		k.portable(TypeArray, "tool", name, ptr+"/type", "type "+string(b), false, nil)
	}
	if _, ok := m["nullable"]; ok {
		k.portable(TypeArray, "tool", name, ptr+"/nullable", "nullable (OpenAPI)", false, nil)
	}
	if f, ok := m["format"].(string); ok {
		k.portable(Format, "tool", name, ptr+"/format", fmt.Sprintf("format %q", f), false,
			func(p Profile) bool { return p.Formats != nil && !slices.Contains(p.Formats, f) })
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		l, _ := m[kw].([]any)
		for i, it := range l {
			b, _ := it.(map[string]any)
			if b != nil && (b["type"] != nil || b["$ref"] != nil) {
				continue // typed, or a reference (the ref rule's)
			}
			k.portable(UntypedUnion, "tool", name, fmt.Sprintf("%s/%s/%d", ptr, kw, i), kw+" branch without type", false, nil)
		}
	}
	for _, kw := range []string{"$ref", "$dynamicRef", "$defs", "definitions"} {
		if _, ok := m[kw]; ok {
			k.portable(Ref, "tool", name, ptr+"/"+escape(kw), kw, false, nil)
		}
	}
	if _, ok := m["discriminator"]; ok {
		k.portable(Discriminator, "tool", name, ptr+"/discriminator", "", false, nil)
	}
	// An object that declares properties; a bare {"type": "object"} (a
	// tool without arguments, as the spec allows) is left alone.
	if props, _ := m["properties"].(map[string]any); len(props) > 0 {
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			k.portable(AdditionalProperties, "tool", name, ptr, "", false, nil)
		}
	}
}

// duplicates reports items of one list that share their key.
func (k *checker) duplicates(kind, key string, items []json.RawMessage) {
	seen := map[string]int{}
	for _, raw := range items {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		var n string
		_ = json.Unmarshal(m[key], &n)
		seen[n]++
		if seen[n] == 2 {
			k.spec(DuplicateName, "", kind, n, "/"+key, "")
		}
	}
	for _, n := range sortedKeys(seen) {
		if seen[n] > 2 {
			for i := range k.out {
				if f := &k.out[i]; f.Rule == DuplicateName && f.Kind == kind && f.Name == n {
					f.Detail = fmt.Sprintf("%d %ss named so", seen[n], kind)
				}
			}
		}
	}
}

// order compares two tools/list answers: the same tools in another order.
func (k *checker) order(a, b []json.RawMessage) {
	names := func(l []json.RawMessage) []string {
		var out []string
		for _, raw := range l {
			var t struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &t)
			out = append(out, t.Name)
		}
		return out
	}
	x, y := names(a), names(b)
	if slices.Equal(x, y) {
		return
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	slices.Sort(xs)
	slices.Sort(ys)
	if !slices.Equal(xs, ys) {
		return // the set changed between the two: not an order
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	k.spec(ListOrder, "", "list", "tools/list", "", fmt.Sprintf("position %d: %q the first time, %q the second", i+1, x[i], y[i]))
}

// structured checks recorded structuredContent against the tool's
// outputSchema (the first result of each tool that does not keep to it).
func (k *checker) structured(results []Result, outputs map[string]json.RawMessage) {
	done := map[string]bool{}
	for _, r := range results {
		schema, ok := outputs[r.Tool]
		if !ok || done[r.Tool] || r.IsError {
			continue
		}
		var why string
		if len(r.Structured) == 0 || string(r.Structured) == "null" {
			why = "a result without structuredContent"
		} else {
			why = conforms(schema, r.Structured)
		}
		if why != "" {
			done[r.Tool] = true
			k.spec(StructuredContent, "", "tool", r.Tool, "/outputSchema", why)
		}
	}
}

func decode(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for key := range m {
		out = append(out, key)
	}
	sort.Strings(out)
	return out
}

// escape makes a JSON pointer segment (RFC 6901).
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
