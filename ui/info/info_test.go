package info

import "testing"

// The endpoint is shown redacted, whatever the session's target holds.
func TestTransportOfRedacts(t *testing.T) {
	for _, c := range []struct{ target, kind, endpoint string }{
		{"http: https://ada:pw@example.com/mcp?access_token=s3cret&x=1", "Streamable HTTP", "https://[redacted]@example.com/mcp?access_token=[redacted]&x=1"},
		{"http+sse: http://127.0.0.1:9/sse", "HTTP+SSE (2024-11-05)", "http://127.0.0.1:9/sse"},
		{"stdio: node server.js", "stdio (the server is a child process)", "node server.js"},
	} {
		kind, endpoint := TransportOf(c.target)
		if kind != c.kind || endpoint != c.endpoint {
			t.Errorf("TransportOf(%q) = %q, %q; want %q, %q", c.target, kind, endpoint, c.kind, c.endpoint)
		}
	}
}
