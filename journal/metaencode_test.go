package journal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"mcpscope/internal/termsafe"
	"mcpscope/transport"
)

// TestAppendMeta: the hand-written meta encoder reads back as the same
// Meta as encoding/json's output, made terminal-safe as before, and is
// itself inert on a terminal.
func TestAppendMeta(t *testing.T) {
	zero, two := 0, 2
	hostile := "a\"b\\c\nd\te\x1b[31mf\u202eg\u2028h\x7fi\xffj\xc3"
	for _, m := range []transport.Meta{
		{},
		{PID: 42},
		{Event: "spawned", Detail: "./server --flag", PID: 7},
		{Event: "exited", ExitCode: &zero, Signal: "SIGTERM"},
		{ExitCode: &two, PID: -3},
		{HTTPMethod: "POST", URL: "http://127.0.0.1:1/mcp?q=1&r=<2>", Status: 200, Stream: "post:1", Via: "host",
			Headers: map[string]string{"Content-Type": "application/json", "Accept": "a, b", "Mcp-Session-Id": "x", "Authorization": "Bearer [redacted]"}},
		{Event: "prime", EventID: "ev-1", EventType: "message", Retry: 3000, Resumes: "get:1", Stream: "get:2"},
		{Detail: hostile, URL: hostile, Headers: map[string]string{hostile: hostile, "B": ""}, Via: hostile},
	} {
		got := appendMeta([]byte("x"), &m)
		if got[0] != 'x' {
			t.Fatalf("appendMeta did not append: %q", got)
		}
		got = got[1:]
		old, err := marshalNoEscape(m)
		if err != nil {
			t.Fatal(err)
		}
		old = termsafe.JSON(old)
		var a, b transport.Meta
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%q does not read back: %v", got, err)
		}
		if err := json.Unmarshal(old, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("appendMeta %s reads back as %+v; encoding/json's %s as %+v", got, a, old, b)
		}
		if safe := termsafe.JSON(got); string(safe) != string(got) {
			t.Errorf("appendMeta is not terminal-safe: %q, made safe %q", got, safe)
		}
		if len(old) < 100 && m.Detail != hostile && string(got) != string(old) {
			t.Errorf("appendMeta %s, encoding/json %s: plain metas should be byte for byte the same", got, old)
		}
	}
}

// marshalNoEscape is encoding/json's encoding of v without HTML escaping
// and without the trailing newline: what the journal wrote before
// appendMeta (TestAppendMeta reads both back).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
