// Package schema reads JSON Schema where mcpscope meets it: the type of a
// property, to turn typed text into arguments (this file), and an object
// schema's properties, to build a form and check a value before it is sent
// (check.go).
package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type reads a JSON Schema "type": one name ("number"), or a list of names
// (["number","string"], ["integer","null"]). It returns the first name that
// is not "null" ("" when none is given) and whether null is allowed.
func Type(raw json.RawMessage) (name string, nullable bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, one == "null"
	}
	for _, t := range Types(raw) {
		if t == "null" {
			nullable = true
		} else if name == "" {
			name = t
		}
	}
	return name, nullable
}

// Types reads a JSON Schema "type" as the list of names it allows (nil when
// none is given or it is unreadable).
func Types(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	return many
}

// PropertyTypes maps each property of an object schema to the types it
// allows (Types; nil when it names none).
func PropertyTypes(objectSchema json.RawMessage) map[string][]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(objectSchema, &s)
	types := make(map[string][]string, len(s.Properties))
	for k, p := range s.Properties {
		types[k] = Types(p.Type)
	}
	return types
}

// known are the type names of JSON Schema.
var known = []string{"null", "boolean", "integer", "number", "string", "object", "array"}

// Coerce turns text typed on a command line (key=value) into a value of one
// of the JSON types a property allows, trying them from the most specific
// to the least, whatever order the schema lists them in:
//
//   - the text null is JSON null only when the types include "null";
//   - an integer, a number or a boolean (true/false) when the text reads as
//     one and the type is allowed (an integer before a number);
//   - JSON for an object or an array;
//   - the text itself when "string" is allowed: the fallback, so for a
//     string-only property null is the string "null" (the user typed it and
//     nothing else is allowed), while for ["string","null"] it is JSON null
//     (send the string with --args '{"k":"null"}').
//
// With no type it knows, text that is JSON is that value, other text a string.
func Coerce(types []string, v string) (any, error) {
	if !slices.ContainsFunc(types, func(t string) bool { return slices.Contains(known, t) }) {
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return x, nil
		}
		return v, nil
	}
	allows := func(t string) bool { return slices.Contains(types, t) }
	if v == "null" && allows("null") {
		return nil, nil
	}
	if allows("integer") {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n, nil
		}
	}
	if allows("number") && isJSONNumber(v) {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f, nil
		}
	}
	if allows("boolean") && (v == "true" || v == "false") {
		return v == "true", nil
	}
	for _, t := range []string{"object", "array"} {
		if !allows(t) {
			continue
		}
		var x any
		if json.Unmarshal([]byte(v), &x) != nil {
			continue
		}
		if _, isObj := x.(map[string]any); isObj == (t == "object") {
			if _, isArr := x.([]any); isArr == (t == "array") {
				return x, nil
			}
		}
	}
	if allows("string") {
		return v, nil
	}
	// Nothing fitted: a lenient reading for a property of one type, else
	// say what it should have been.
	only := slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" })
	if len(only) == 1 {
		switch only[0] {
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return b, nil
			}
			return nil, fmt.Errorf("%q is not true or false", v)
		case "integer":
			return nil, fmt.Errorf("%q is not an integer", v)
		case "number":
			return nil, fmt.Errorf("%q is not a number", v)
		case "object", "array":
			return nil, fmt.Errorf("%q is not a JSON %s", v, only[0])
		}
	}
	return nil, fmt.Errorf("%q is not any of the types the schema allows (%s)", v, strings.Join(types, ", "))
}

// Fits reports whether v, a value as encoding/json decodes JSON (or as
// Coerce makes one), is of one of types: true when they name none of JSON
// Schema's types (nothing to check).
func Fits(types []string, v any) bool {
	if !slices.ContainsFunc(types, func(t string) bool { return slices.Contains(known, t) }) {
		return true
	}
	return slices.ContainsFunc(types, func(t string) bool {
		switch x := v.(type) {
		case nil:
			return t == "null"
		case bool:
			return t == "boolean"
		case string:
			return t == "string"
		case int64, int:
			return t == "integer" || t == "number"
		case float64:
			return t == "number" || t == "integer" && x == math.Trunc(x) && !math.IsInf(x, 0)
		case map[string]any:
			return t == "object"
		case []any:
			return t == "array"
		}
		return false
	})
}

// Kind names the JSON type of v, a value as encoding/json decodes JSON, with
// its article: "a string", "an object", "null".
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int64, int, float64:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v)
}

// isJSONNumber reports whether s is a number as JSON writes it (no NaN,
// Inf, hex or leading +, which strconv would take).
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	var f float64
	return json.Unmarshal([]byte(s), &f) == nil
}
