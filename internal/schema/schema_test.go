package schema

import (
	"encoding/json"
	"testing"
)

func TestType(t *testing.T) {
	cases := []struct {
		raw      string
		name     string
		nullable bool
	}{
		{`"number"`, "number", false},
		{`["number","string"]`, "number", false},
		{`["null","integer"]`, "integer", true},
		{`["number","null"]`, "number", true},
		{`"null"`, "null", true},
		{``, "", false},
		{`{"not":"a type"}`, "", false},
	}
	for _, c := range cases {
		name, nullable := Type(json.RawMessage(c.raw))
		if name != c.name || nullable != c.nullable {
			t.Errorf("Type(%s) = %q, %v; want %q, %v", c.raw, name, nullable, c.name, c.nullable)
		}
	}
}

func TestPropertyTypes(t *testing.T) {
	got := PropertyTypes(json.RawMessage(`{"type":"object","properties":{"a":{"type":["integer","null"]},"b":{"type":"string"},"c":{}}}`))
	if got["a"] != "integer" || got["b"] != "string" || got["c"] != "" || len(got) != 3 {
		t.Fatalf("PropertyTypes = %v", got)
	}
}
