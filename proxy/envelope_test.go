package proxy

import (
	"bytes"
	"encoding/json"
	"testing"
)

// scanEnvelope finds the same top-level members encoding/json does, escapes
// and nesting included.
func TestScanEnvelopeAgreesWithEncodingJSON(t *testing.T) {
	lines := []string{
		floodNote,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a \"quoted\" } ] { [ \\ word"}]}}`,
		`{"jsonrpc":"2.0","id":"a\"b\\","error":{"code":-1,"message":"x"}}`,
		` { "id" : 1.5e3 , "method" : "tools/call" , "params" : { "_meta" : { "progressToken" : "t\u0031" } } } `,
		`{"params":{"method":"nested","id":9},"method":"notifications/progress","jsonrpc":"2.0"}`,
		`{"a\"id":1,"id":null,"result":[]}`,
		`{"jsonrpc":"2.0","method":"m","params":["\\",{"\"":"}"}]}`,
	}
	for _, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		e, ok := scanEnvelope([]byte(l))
		if !ok {
			t.Fatalf("scanEnvelope(%s) not ok", l)
		}
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if !bytes.Equal(e.id, m["id"]) || !bytes.Equal(e.method, m["method"]) || !bytes.Equal(e.params, m["params"]) ||
			e.hasResult != hasResult || e.hasError != hasError {
			t.Fatalf("scanEnvelope(%s) = id %s method %s params %s result %v error %v", l, e.id, e.method, e.params, e.hasResult, e.hasError)
		}
	}
	for _, l := range []string{``, `[]`, `{"id":1`, `{"id":"1}`, `{"id" 1}`, `{"id":1,}`, `"x"`} {
		if _, ok := scanEnvelope([]byte(l)); ok {
			t.Fatalf("scanEnvelope(%q) ok", l)
		}
	}
}
