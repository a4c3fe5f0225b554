package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/session"
)

// TestOpenDetachedCallIsDetached: a journal whose call was detached (a real
// one: mcpscope call slow seconds=600 --detach against the demo) opens with
// the call detached, in the requests pane, its detail and the waterfall
// (the legend's ⇥ glyph, the handle on the selected row), not lost or
// "✗ error … transport closed".
func TestOpenDetachedCallIsDetached(t *testing.T) {
	const handle = "20261206T041540-f9f85a-23180-3"
	// A copy: reading a journal back writes its index beside it.
	b, err := os.ReadFile("../session/testdata/detached.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "detached.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case <-s.Loaded():
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("the journal was not read")
	}
	m := newTestModel(t, s, 120, 30)
	m.opts.Now = func() time.Time { return time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC) } // hours after the recording
	row := lineWith(screen(m), "slow")
	if !strings.Contains(row, "detached") || strings.Contains(row, "lost") || !strings.Contains(row, "39ms") || !strings.Contains(row, "detached as "+handle) {
		t.Fatalf("the detached call's row %q\n%s", row, screen(m))
	}
	press(m, "open")
	if sc := screen(m); !strings.Contains(lineWith(sc, "call 3"), "detached as "+handle+" · 39ms") {
		t.Fatalf("the detached call's detail does not name its handle:\n%s", sc)
	}
	press(m, "tab-next")
	if sc := screen(m); !strings.Contains(sc, "left running on the server, to rejoin (mcpscope rejoin ") {
		t.Fatalf("the detached call's response tab does not say how to rejoin it:\n%s", sc)
	}
	press(m, "detail-close")
	press(m, "waterfall")
	sc := screen(m)
	if l := lineWith(sc, "#3 tools/call"); !strings.Contains(l, "⇥ detached") || strings.Contains(l, "✗") || !strings.Contains(lineWith(sc, "#3:"), "detached as "+handle) {
		t.Fatalf("waterfall:\n%s", sc)
	}
	golden(t, "open-detached-waterfall-120x30", sc)
}
