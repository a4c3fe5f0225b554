package protocol

import (
	"encoding/json"
	"testing"
)

// The encoding examples of the 2026-07-28 Streamable HTTP page.
func TestHeaderValueSpecExamples(t *testing.T) {
	cases := map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
	}
	for in, want := range cases {
		if got := HeaderValue(in); got != want {
			t.Errorf("HeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolHeaders(t *testing.T) {
	ok := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}},
		"n":{"type":"integer","x-mcp-header":"N"}}}`
	hp, err := ToolHeaders(json.RawMessage(ok))
	if err != nil || len(hp) != 3 {
		t.Fatalf("valid schema: %v %+v", err, hp)
	}
	bad := map[string]string{
		"number type": `{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}`,
		"under items": `{"properties":{"xs":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}}`,
		"under anyOf": `{"properties":{"x":{"anyOf":[{"type":"string","x-mcp-header":"X"}]}}}`,
		"duplicate":   `{"properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`,
		"not a token": `{"properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`,
		"empty":       `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"on the root": `{"type":"string","x-mcp-header":"Root"}`,
	}
	for name, schema := range bad {
		if _, err := ToolHeaders(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: invalid annotation accepted", name)
		}
	}
}

func TestStripMetaKeepsForeignKeys(t *testing.T) {
	in := `{"name":"x","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","trace":"t"}}`
	if got := string(StripMeta(json.RawMessage(in))); got != `{"_meta":{"trace":"t"},"name":"x"}` {
		t.Fatalf("stripMeta: %s", got)
	}
}

func TestProgressTokenInjection(t *testing.T) {
	cases := []struct {
		params any
		want   string
	}{
		{nil, `{"_meta":{"progressToken":"p"}}`},
		{map[string]any{"name": "x"}, `{"_meta":{"progressToken":"p"},"name":"x"}`},
		{json.RawMessage(`{"_meta":{"a":1}}`), `{"_meta":{"a":1,"progressToken":"p"}}`},
		{json.RawMessage(`{"_meta":{"progressToken":9}}`), `{"_meta":{"progressToken":9}}`}, // the caller's own wins
		{json.RawMessage(`[1,2]`), `[1,2]`},                                                 // no place for a token
	}
	for _, c := range cases {
		got, err := WithMeta(c.params, "p", nil)
		if err != nil || string(got) != c.want {
			t.Errorf("WithMeta(%v) = %s, %v; want %s", c.params, got, err, c.want)
		}
	}
	if got := StripMeta(json.RawMessage(`{"_meta":{"progressToken":"p"},"name":"x"}`)); string(got) != `{"name":"x"}` {
		t.Errorf("strip: %s", got)
	}
	if _, err := WithMeta(json.RawMessage(`{bad`), "p", nil); err == nil {
		t.Error("invalid raw params accepted")
	}
}
