package ui

import (
	"strings"
	"testing"
)

// TestInfoShowsOpenTelemetry: with a live exporter the info view has its
// row: where the spans go and how many were dropped, inert.
func TestInfoShowsOpenTelemetry(t *testing.T) {
	m := newTestModel(t, loadFixture(t), 120, 40)
	m.opts.OTLPStatus = func() string { return "→ http://127.0.0.1:4318/v1/traces · 5 spans sent · 3 dropped\x1b[2J" }
	press(m, "info")
	got := screen(m)
	var row string
	for _, l := range strings.Split(got, "\n") {
		if strings.Contains(l, "opentelemetry") {
			row = l
		}
	}
	if !strings.Contains(row, "3 dropped") || !strings.Contains(row, "127.0.0.1:4318") {
		t.Fatalf("no opentelemetry row with the drops:\n%s", got)
	}
	assertInert(t, m.Render())
}
