package cli

import (
	"context"
	"strings"
	"testing"

	"mcpscope/internal/demo"
)

// TestDemoHTTPBothEras: the demo over HTTP speaks both eras, as it does
// over stdio: a 2026-07-28 client (stateless, server/discover) and an
// initialize-era client both list its tools.
func TestDemoHTTPBothEras(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- demo.ServeHTTP(ctx, "127.0.0.1:0", demo.Options{}, func(u string) { urls <- u }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	var url string
	select {
	case url = <-urls:
	case err := <-served:
		t.Fatalf("ServeHTTP: %v", err)
	}
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
