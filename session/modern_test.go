package session

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpscope/protocol"
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
		if got := protocol.HeaderValue(in); got != want {
			t.Errorf("HeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToolHeaders(t *testing.T) {
	ok := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"}}},
		"n":{"type":"integer","x-mcp-header":"N"}}}`
	hp, err := protocol.ToolHeaders(json.RawMessage(ok))
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
		if _, err := protocol.ToolHeaders(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: invalid annotation accepted", name)
		}
	}
}

func TestModernHeadersFromArguments(t *testing.T) {
	s := New(nil, Options{})
	s.mu.Lock()
	s.noteToolsLocked(json.RawMessage(`{"tools":[{"name":"q","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},"absent":{"type":"string","x-mcp-header":"Absent"}}}}]}`))
	h := s.modernHeadersLocked("tools/call", json.RawMessage(`{"name":"q","arguments":{"region":"Zürich","n":42,"flag":false}}`))
	s.mu.Unlock()
	want := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "q", "Mcp-Param-Region": protocol.HeaderValue("Zürich"),
		"Mcp-Param-N": "42", "Mcp-Param-Flag": "false"}
	if len(h) != len(want) {
		t.Fatalf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("%s = %q, want %q", k, h[k], v)
		}
	}
	if !strings.HasPrefix(h["Mcp-Param-Region"], "=?base64?") {
		t.Error("non-ASCII value must be base64-wrapped")
	}
}

func TestStripMetaKeepsForeignKeys(t *testing.T) {
	in := `{"name":"x","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","trace":"t"}}`
	if got := string(protocol.StripMeta(json.RawMessage(in))); got != `{"_meta":{"trace":"t"},"name":"x"}` {
		t.Fatalf("stripMeta: %s", got)
	}
}
