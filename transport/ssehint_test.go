package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The "try the URL without /sse" hint is given only for a URL that ends in
// /sse, and an HTTP+SSE start failure nests no parentheses.
func TestLegacySSEHintOnlyForSSEURLs(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	for path, hinted := range map[string]bool{"/mcp": false, "/": false, "/sse": true, "/v1/sse/": true, "/events": false} {
		l := NewLegacySSE(LegacySSEOptions{URL: srv.URL + path})
		err := l.Start(func(Frame) {})
		if err == nil {
			l.Close()
			t.Fatalf("%s: a 404 started", path)
		}
		msg := err.Error()
		if got := strings.Contains(msg, "without /sse"); got != hinted {
			t.Errorf("%s: hint given %v, want %v: %s", path, got, hinted, msg)
		}
		depth, deepest := 0, 0
		for _, r := range msg {
			switch r {
			case '(':
				depth++
				deepest = max(deepest, depth)
			case ')':
				depth--
			}
		}
		if deepest > 1 {
			t.Errorf("%s: nested parentheses: %s", path, msg)
		}
	}
}
