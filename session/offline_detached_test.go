package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// TestOfflineDetachedCallReadsDetached: a journal whose call was detached
// (its note "detached call 3 as HANDLE", then the transport closed) reads
// back with the call detached under its handle, as the live session left
// it, not lost when the transport closed. The journal is a real one:
// mcpscope call slow seconds=600 --detach --era legacy against the demo.
func TestOfflineDetachedCallReadsDetached(t *testing.T) {
	const handle = "20261206T041540-f9f85a-23180-3"
	check := func(t *testing.T, s *Session) {
		t.Helper()
		c := s.Lookup("3")
		if c == nil {
			t.Fatal("no call 3")
		}
		sn := c.Snapshot()
		if sn.State != StateDetached || StateWord(&sn) != "detached" || sn.Handle != handle {
			t.Fatalf("call 3: %s (%s), handle %q; want detached as %s", sn.State, StateWord(&sn), sn.Handle, handle)
		}
		if sn.Failure == nil || !strings.Contains(sn.Failure.Reason, "detached as "+handle) || !strings.Contains(sn.Failure.Reason, "mcpscope rejoin "+handle) {
			t.Fatalf("call 3 ended because %v", sn.Failure)
		}
		// It ends at its note (…40.638366251), not when the transport closed.
		if !sn.Ended.Before(time.Date(2026, 12, 6, 4, 15, 40, 638500000, time.UTC)) {
			t.Fatalf("call 3 ended at %s, after its note", sn.Ended)
		}
	}
	// A copy: reading a journal back writes its index beside it.
	b, err := os.ReadFile("testdata/detached.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "detached.jsonl")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("Open", func(t *testing.T) {
		s, _, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if l := waitLoaded(t, s); l.Err != nil {
			t.Fatalf("loading: %+v", l)
		}
		check(t, s)
	})
	t.Run("Load", func(t *testing.T) {
		s, _, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, s)
	})
}

// TestDetachedNoteIsStrict: only a detach's own note, on the call's own
// stream, with one word for a handle, ends a call detached.
func TestDetachedNoteIsStrict(t *testing.T) {
	for _, c := range []struct {
		stream, detail string
		ok             bool
	}{
		{"post:3", "detached call 3 as H-1", true},
		{"post:\"a b\"", "detached call \"a b\" as H-2", true},
		{"post:4", "detached call 3 as H-1", false}, // another call's stream
		{"", "detached call 3 as H-1", false},
		{"post:3", "detached call 3 as ", false},
		{"post:3", "detached call 3 as H 1", false},
		{"post:3", "rejoining call 3 (tools/call slow) of session S", false},
	} {
		m := transport.Meta{Event: transport.EvNote, Stream: c.stream, Detail: c.detail}
		_, h, ok := journal.DetachedNote(&m)
		if ok != c.ok {
			t.Errorf("%q on %q: ok %v (handle %q), want %v", c.detail, c.stream, ok, h, c.ok)
		}
	}
}
