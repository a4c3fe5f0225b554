package session

import (
	"encoding/json"
	"strings"
	"testing"

	"mcpscope/protocol"
)

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
