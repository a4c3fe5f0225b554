package e2e

import (
	"strings"
	"testing"
)

// The info view shows the server, its instructions, the era and the
// connection; at 80×24 the status bar keeps the era and the connection.
func TestE2EInfoView(t *testing.T) {
	tm := startTUI(t, 80, 24)
	bar := strings.SplitN(tm.waitRe(`\((modern|legacy)\)`), "\n", 2)[0]
	if !strings.Contains(bar, "connected") {
		t.Fatalf("status bar at 80 columns: %q", bar)
	}
	tm.keys("i")
	tm.waitFor("Session info", "server        mcpscope-demo", "connection    connected", "transport     stdio",
		"server pid    ", "journal       none", "instructions", "A demo server for trying out mcpscope")
	tm.waitRe(`protocol      \d{4}-\d\d-\d\d · (modern|legacy) era`)
	tm.keys("Escape")
	tm.waitFor("Notifications")
}
