package ui

import (
	"encoding/json"
	"strings"
	"testing"
)

// A replay from an attached TUI goes out through the proxy under an id of
// the proxy's; once the proxy says which, the flash names that id (the one
// the wire and the journal carry), not the session's own key.
func TestAttachedReplayFlashNamesTheWireID(t *testing.T) {
	m, ff := attachedModel(t, true, 120, 40)
	press(m, "top", "down", "down", "replay")
	c := m.flashCall
	if c == nil || !strings.Contains(m.flash, "replayed call 3 as "+c.Key) {
		t.Fatalf("flash %q names no call", m.flash)
	}
	ff.wire(c.Key, json.RawMessage(`"mcpscope-0a1b2c-1"`))
	refresh(m)
	got := screen(m)
	if !strings.Contains(got, `replayed call 3 as "mcpscope-0a1b2c-1"`) || strings.Contains(got, c.Key) {
		t.Fatalf("the flash does not name the wire id:\n%s", got)
	}
}
