package schema

import (
	"encoding/json"
	"testing"
)

func TestCheck(t *testing.T) {
	o, err := ReadObject(json.RawMessage(`{"type":"object","properties":{
		"email":{"type":"string","format":"email"},
		"site":{"type":"string","format":"uri"},
		"day":{"type":"string","format":"date"},
		"when":{"type":"string","format":"date-time"},
		"name":{"type":"string","minLength":3,"maxLength":5,"pattern":"^[a-z]+$"},
		"n":{"type":"integer","minimum":1,"maximum":10},
		"color":{"type":"string","enum":["red","green"]},
		"tags":{"type":"array","items":{"enum":["a","b","c"]},"minItems":1,"maxItems":2}
	},"required":["email"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"email", "site", "day", "when", "name", "n", "color", "tags"}; len(o.Names) != len(want) || o.Names[0] != "email" || o.Names[7] != "tags" || !o.Required["email"] {
		t.Fatalf("names %v required %v", o.Names, o.Required)
	}
	cases := []struct{ prop, v, want string }{
		{"email", `"notanemail"`, "not an email address (name@example.com)"},
		{"email", `"ada@example.com"`, ""},
		{"site", `"example.com"`, "not an absolute URI (scheme:…, e.g. https://example.com)"},
		{"site", `"https://example.com/x"`, ""},
		{"day", `"2026-13-01"`, "not a date (YYYY-MM-DD)"},
		{"day", `"2026-07-28"`, ""},
		{"when", `"2026-07-28 09:00"`, "not a date-time (RFC 3339: 2026-07-28T09:30:00Z)"},
		{"when", `"2026-07-28T09:00:00Z"`, ""},
		{"name", `"ab"`, "at least 3 characters"},
		{"name", `"abcdefg"`, "at most 5 characters"},
		{"name", `"ABC"`, "must match ^[a-z]+$"},
		{"name", `"abc"`, ""},
		{"n", `0`, "at least 1"},
		{"n", `11`, "at most 10"},
		{"n", `2.5`, "must be an integer"},
		{"n", `7`, ""},
		{"color", `"blue"`, "not one of the allowed values"},
		{"tags", `[]`, "choose at least 1"},
		{"tags", `["a","b","c"]`, "choose at most 2"},
		{"tags", `["a"]`, ""},
	}
	for _, c := range cases {
		if got := Check(o.Props[c.prop], json.RawMessage(c.v)); got != c.want {
			t.Errorf("%s = %s: got %q, want %q", c.prop, c.v, got, c.want)
		}
	}
}
