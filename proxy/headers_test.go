package proxy

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// The headers a request and an answer are forwarded with: hop-by-hop ones
// and those Connection names dropped, the rest whole, and the copy shares
// no room for an append to change the original.
func TestCopyHeaderDropsHopHeaders(t *testing.T) {
	src := http.Header{"Connection": {"X-Hop, keep-alive"}, "X-Hop": {"1"}, "Keep-Alive": {"timeout=5"},
		"Transfer-Encoding": {"chunked"}, "Authorization": {"Bearer s3cret"}, "Accept": {"application/json", "text/event-stream"}}
	dst := http.Header{}
	copyHeader(dst, src)
	want := http.Header{"Authorization": {"Bearer s3cret"}, "Accept": {"application/json", "text/event-stream"}}
	if !reflect.DeepEqual(dst, want) {
		t.Fatalf("copied %v, want %v", dst, want)
	}
	dst.Add("Accept", "*/*")
	if got := src["Accept"]; len(got) != 2 || cap(got) < 2 {
		t.Fatalf("appending to the copy changed the original: %v", got)
	}
	if got := dst["Accept"]; len(got) != 3 || got[2] != "*/*" {
		t.Fatalf("append to the copy: %v", got)
	}
}

// The answer's headers the journal keeps: named as before (MCP-Protocol-Version
// as the spec spells it), credentials redacted, none at all as nil.
func TestResponseHeadersJournalNames(t *testing.T) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Mcp-Protocol-Version", "2025-11-25")
	h.Set("Set-Cookie", "session=abcdef0123456789")
	h.Set("X-Other", "x")
	got := responseHeaders(h)
	if len(got) != 3 || got["Content-Type"] != "application/json" || got["MCP-Protocol-Version"] != "2025-11-25" {
		t.Fatalf("kept %v", got)
	}
	if strings.Contains(got["Set-Cookie"], "abcdef0123456789") {
		t.Fatalf("Set-Cookie journaled unredacted: %q", got["Set-Cookie"])
	}
	if got := responseHeaders(http.Header{"X-Other": {"x"}}); got != nil {
		t.Fatalf("no header kept should be nil, got %v", got)
	}
}
