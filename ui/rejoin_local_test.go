package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mcpscope/statestore"
	"mcpscope/themes"
)

// fallbackStore lists its records as a Redis store lists the ones its
// local fallback kept (Detached.Fallback set, here to a fixed folder: the
// screen is compared with a golden file).
type fallbackStore struct{ *statestore.FileStore }

const fallbackFolder = "/home/me/.local/state/mcpscope/fallback/0123456789ab"

func (f fallbackStore) List() ([]statestore.Detached, error) {
	l, err := f.FileStore.List()
	for i := range l {
		l[i].Fallback = fallbackFolder
	}
	return l, err
}

// A record the store read from its local fallback is labelled a local
// copy, in the row and beside the rejoin command.
func TestRejoinableLocalCopyIsLabelled(t *testing.T) {
	store := fallbackStore{&statestore.FileStore{Dir: t.TempDir()}}
	s, _ := liveSession(t, nil)
	m := New(Options{Session: s, Theme: themes.ByName("dark"), StateStore: store, Now: func() time.Time { return at(5) },
		Location: time.UTC, Target: []string{"http://localhost:1/mcp"}, Clipboard: func(string) error { return nil }})
	m.Update(windowSize(100, 30))
	d := statestore.Detached{Handle: "20260301T120000-99999-8", Target: "http://other.example/mcp", Transport: "http",
		SessionID: "abc", ProtocolVersion: "2025-11-25", Era: "legacy", RequestID: json.RawMessage("8"),
		Method: "tools/call", Name: "slow", Started: at(1)}
	if err := store.Put(d); err != nil {
		t.Fatal(err)
	}
	press(m, "rejoinable")
	got := screen(m)
	if !strings.Contains(got, "local copy") || !strings.Contains(got, statestore.FallbackLabel) {
		t.Fatalf("a record from the fallback is not labelled local:\n%s", got)
	}
	golden(t, "rejoinable-local-100x30", got)
}
