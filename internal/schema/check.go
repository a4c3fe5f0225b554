package schema

// This file reads the properties of an object schema (a tool's
// inputSchema, an elicitation's requestedSchema) with the JSON Schema
// library the binary links (github.com/google/jsonschema-go), and checks a
// value against one property before it is sent: the library's validation
// (type, enum, const, bounds, lengths, pattern, items) plus the string
// formats a form asks for (email, uri, date, date-time), which the library
// treats as annotations. Problems come back as short phrases a form shows
// beside the field ("at least 3 characters", "not an email address").

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Object is an object schema read for a form: its properties in the order
// the schema wrote them (the library's maps lose it) and which are
// required.
type Object struct {
	Names    []string
	Props    map[string]*jsonschema.Schema
	Required map[string]bool
}

// ReadObject reads an object schema; empty input is an object with no
// properties.
func ReadObject(raw json.RawMessage) (*Object, error) {
	o := &Object{Props: map[string]*jsonschema.Schema{}, Required: map[string]bool{}}
	if len(bytes.TrimSpace(raw)) == 0 {
		return o, nil
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("unreadable schema: %w", err)
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, err
	}
	if len(s.Properties) > 0 {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("unreadable properties: %w", err)
		}
		for _, n := range names {
			var p jsonschema.Schema
			if err := json.Unmarshal(props[n], &p); err != nil {
				return nil, fmt.Errorf("property %q: %w", n, err)
			}
			o.Props[n] = &p
		}
	}
	o.Names = names
	for _, r := range s.Required {
		o.Required[r] = true
	}
	return o, nil
}

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

// TypeOf is the property's type: the first one named that is not "null".
func TypeOf(p *jsonschema.Schema) string {
	if p.Type != "" {
		return p.Type
	}
	for _, t := range p.Types {
		if t != "null" {
			return t
		}
	}
	return ""
}

// Values are the JSON of a list of values (enum, const, defaults as the
// library decoded them).
func Values(vs []any) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(vs))
	for _, v := range vs {
		b, err := json.Marshal(v)
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// Strings reads a keyword the library keeps in Extra as a list of strings
// (enumNames).
func Strings(p *jsonschema.Schema, keyword string) []string {
	l, _ := p.Extra[keyword].([]any)
	out := make([]string, len(l))
	for i, v := range l {
		out[i], _ = v.(string)
	}
	return out
}

// Check validates the JSON value v against property p and says what is
// wrong in a few words ("" when nothing is).
func Check(p *jsonschema.Schema, v json.RawMessage) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "not JSON"
	}
	if s, ok := x.(string); ok {
		if why := format(p.Format, s); why != "" {
			return why
		}
	}
	rs, err := p.Resolve(nil)
	if err != nil {
		return "" // a schema the library cannot resolve alone ($ref): the server checks
	}
	if err := rs.Validate(x); err != nil {
		return phrase(p, err.Error())
	}
	return ""
}

// format checks the string formats a form asks for; others pass.
func format(f, s string) string {
	switch f {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
			return "not an email address (name@example.com)"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return "not an absolute URI (scheme:…, e.g. https://example.com)"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "not a date (YYYY-MM-DD)"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "not a date-time (RFC 3339: 2026-07-28T09:30:00Z)"
		}
	}
	return ""
}

// phrase turns the library's message, which names the keyword that
// failed, into words about the property's own bound.
func phrase(p *jsonschema.Schema, msg string) string {
	kw := msg
	if i := strings.LastIndex(msg, "validating "); i >= 0 {
		if j := strings.Index(msg[i:], ": "); j >= 0 {
			kw = msg[i+j+2:]
		}
	}
	kw, _, _ = strings.Cut(kw, ":")
	n := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case kw == "minLength" && p.MinLength != nil:
		return "at least " + plural(*p.MinLength, "character")
	case kw == "maxLength" && p.MaxLength != nil:
		return "at most " + plural(*p.MaxLength, "character")
	case kw == "minimum" && p.Minimum != nil:
		return "at least " + n(p.Minimum)
	case kw == "maximum" && p.Maximum != nil:
		return "at most " + n(p.Maximum)
	case kw == "exclusiveMinimum" && p.ExclusiveMinimum != nil:
		return "more than " + n(p.ExclusiveMinimum)
	case kw == "exclusiveMaximum" && p.ExclusiveMaximum != nil:
		return "less than " + n(p.ExclusiveMaximum)
	case kw == "multipleOf" && p.MultipleOf != nil:
		return "a multiple of " + n(p.MultipleOf)
	case kw == "pattern":
		return "must match " + p.Pattern
	case kw == "minItems" && p.MinItems != nil:
		return "choose at least " + strconv.Itoa(*p.MinItems)
	case kw == "maxItems" && p.MaxItems != nil:
		return "choose at most " + strconv.Itoa(*p.MaxItems)
	case kw == "enum":
		return "not one of the allowed values"
	case kw == "const":
		return "must be " + string(Values([]any{*p.Const})[0])
	case kw == "type":
		if t := TypeOf(p); t != "" {
			return "must be " + article(t)
		}
	}
	return strings.TrimSpace(msg[strings.LastIndex(msg, ": ")+1:])
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}
