// Package schema reads the little of JSON Schema that mcpscope needs to turn
// typed text into arguments: the type of a property.
package schema

import "encoding/json"

// Type reads a JSON Schema "type": one name ("number"), or a list of names
// (["number","string"], ["integer","null"]). It returns the first name that
// is not "null" ("" when none is given) and whether null is allowed.
func Type(raw json.RawMessage) (name string, nullable bool) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one, one == "null"
	}
	var many []string
	if json.Unmarshal(raw, &many) != nil {
		return "", false
	}
	for _, t := range many {
		if t == "null" {
			nullable = true
		} else if name == "" {
			name = t
		}
	}
	return name, nullable
}

// PropertyTypes maps each property of an object schema to its Type name.
func PropertyTypes(objectSchema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(objectSchema, &s)
	types := make(map[string]string, len(s.Properties))
	for k, p := range s.Properties {
		types[k], _ = Type(p.Type)
	}
	return types
}
