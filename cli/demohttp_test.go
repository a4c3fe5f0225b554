package cli

import (
	"strings"
	"testing"

	"mcpscope/testkit/testservers"
)

// TestDemoHTTPBothEras: the demo over HTTP speaks both eras, as it does
// over stdio: a 2026-07-28 client (stateless, server/discover) and an
// initialize-era client both list its tools.
func TestDemoHTTPBothEras(t *testing.T) {
	url := testservers.StartDemoHTTP(t)
	for _, era := range []string{"modern", "legacy", "auto"} {
		code, out, errs := run(t, "tools", "--era", era, url)
		if code != exitOK || !strings.Contains(out, "echo") {
			t.Fatalf("--era %s: exit %d\n%s\n%s", era, code, out, errs)
		}
	}
	// The modern era over HTTP is really the 2026-07-28 one.
	if code, out, errs := run(t, "call", "echo", "message=hi", "--era", "modern", url); code != exitOK || !strings.Contains(out, "hi") {
		t.Fatalf("call over the modern era: exit %d\n%s\n%s", code, out, errs)
	}
}
