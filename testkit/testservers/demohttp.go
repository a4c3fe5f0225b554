package testservers

import (
	"context"
	"testing"
	"time"

	"mcpscope/internal/demo"
)

// StartDemoHTTP serves the embedded demo over HTTP in this process, as
// `mcpscope demo --http` does (both eras, the 2026 tasks extension), and
// returns its /mcp URL. It stops at the test's end; an error serving fails
// the test.
func StartDemoHTTP(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- demo.ServeHTTP(ctx, "127.0.0.1:0", demo.Options{}, func(u string) { urls <- u }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("demo ServeHTTP: %v", err)
		}
	})
	select {
	case url := <-urls:
		return url
	case err := <-served:
		t.Fatalf("demo ServeHTTP: %v", err)
	case <-time.After(2 * time.Minute): // a hang guard, not an expected time
		t.Fatal("the demo did not listen within 2m")
	}
	return ""
}
