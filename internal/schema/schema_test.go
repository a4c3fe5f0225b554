package schema

import (
	"encoding/json"
	"slices"
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
	if !slices.Equal(got["a"], []string{"integer", "null"}) || !slices.Equal(got["b"], []string{"string"}) || got["c"] != nil || len(got) != 3 {
		t.Fatalf("PropertyTypes = %v", got)
	}
}

// Every type of a type list is tried, most specific first: numbers and
// booleans when the text reads as one, null only where null is allowed,
// the text itself where a string is.
func TestCoerce(t *testing.T) {
	cases := []struct {
		types string // the schema's "type"
		text  string
		want  string // the value as JSON; "" = refused
	}{
		{`["number","string"]`, "abc", `"abc"`},
		{`["number","string"]`, "2.5", `2.5`},
		{`["string","number"]`, "7", `7`},
		{`["number","null"]`, "null", `null`},
		{`["number","null"]`, "3", `3`},
		{`["number","null"]`, "abc", ``},
		{`"string"`, "null", `"null"`},
		{`["string","null"]`, "null", `null`},
		{`["string","null"]`, "nil", `"nil"`},
		{`"string"`, "42", `"42"`},
		{`"integer"`, "42", `42`},
		{`"integer"`, "4.2", ``},
		{`["integer","string"]`, "4.2", `"4.2"`},
		{`"number"`, "NaN", ``},
		{`"number"`, "0x10", ``},
		{`["number","string"]`, "Inf", `"Inf"`},
		{`"number"`, "1e3", `1000`},
		{`"boolean"`, "true", `true`},
		{`"boolean"`, "1", `true`}, // one type only: lenient
		{`["boolean","string"]`, "1", `"1"`},
		{`["boolean","null"]`, "false", `false`},
		{`"boolean"`, "maybe", ``},
		{`"object"`, `{"a":1}`, `{"a":1}`},
		{`"object"`, `[1]`, ``},
		{`["array","string"]`, `[1]`, `[1]`},
		{`["array","string"]`, `{"a":1}`, `"{\"a\":1}"`},
		{`"null"`, "null", `null`},
		{`"null"`, "x", ``},
		{``, "5", `5`},
		{``, "null", `null`},
		{``, "hello", `"hello"`},
		{`"whatever"`, "hello", `"hello"`},
	}
	for _, c := range cases {
		got, err := Coerce(Types(json.RawMessage(c.types)), c.text)
		if c.want == "" {
			if err == nil {
				t.Errorf("Coerce(%s, %q) = %#v; want refused", c.types, c.text, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("Coerce(%s, %q): %v; want %s", c.types, c.text, err, c.want)
			continue
		}
		if b, _ := json.Marshal(got); string(b) != c.want {
			t.Errorf("Coerce(%s, %q) = %s; want %s", c.types, c.text, b, c.want)
		}
	}
}

func TestFits(t *testing.T) {
	decode := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		types []string
		json  string
		fits  bool
	}{
		{[]string{"string"}, `"x"`, true},
		{[]string{"string"}, `1`, false},
		{[]string{"integer"}, `3`, true},
		{[]string{"integer"}, `3.5`, false},
		{[]string{"number"}, `3.5`, true},
		{[]string{"boolean"}, `"true"`, false},
		{[]string{"string", "null"}, `null`, true},
		{[]string{"string"}, `null`, false},
		{[]string{"object"}, `{}`, true},
		{[]string{"object"}, `[]`, false},
		{[]string{"array"}, `[1]`, true},
		{nil, `{"any":"thing"}`, true},               // no type: nothing to check
		{[]string{"x-custom"}, `1`, true},            // none it knows
		{[]string{"integer", "string"}, `"a"`, true}, // one of several
	} {
		if got := Fits(c.types, decode(c.json)); got != c.fits {
			t.Errorf("Fits(%q, %s) = %v, want %v", c.types, c.json, got, c.fits)
		}
	}
	if !Fits([]string{"integer"}, int64(4)) {
		t.Error("an int64 (as Coerce makes one) is an integer")
	}
	if k := Kind(decode(`{"a":1}`)); k != "an object" {
		t.Errorf("Kind of an object = %q", k)
	}
}
