package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// TestPullWhileAJournalLoads: the UI pulls while `open` reads a journal
// in the background (the session journals under its lock, taking the
// store's; the history's pull scans the store) and neither waits on the
// other for good: the reading ends and the history holds every call.
func TestPullWhileAJournalLoads(t *testing.T) {
	const calls = 4000
	path := filepath.Join(t.TempDir(), "long.jsonl")
	hdr, _ := json.Marshal(journal.Header{Format: journal.Format, Started: t0, Target: "stdio: server"})
	buf := append(hdr, '\n')
	seq := uint64(0)
	put := func(f transport.Frame) { seq++; buf = journal.AppendRecord(buf, seq, f) }
	for id := 1; id <= calls; id++ {
		s := float64(id)
		put(msg(s, transport.Out, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p%d"}}}`, id, id)))
		put(msg(s, transport.In, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p%d","progress":1}}`, id)))
		put(msg(s, transport.In, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, id)))
	}
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := newTestModel(t, s, 120, 30)
	pulled := make(chan struct{})
	go func() {
		defer close(pulled)
		for loaded := false; !loaded; {
			select {
			case <-s.Loaded():
				loaded = true
			default:
			}
			m.Pull()
		}
	}()
	select {
	case <-pulled:
	case <-time.After(2 * time.Minute): // a hang guard
		t.Fatal("pulling while the journal loads never ended (a lock-order deadlock)")
	}
	if m.h.ncalls != calls || len(m.h.live) != 0 {
		t.Fatalf("history holds %d calls (%d live), want %d (0 live)", m.h.ncalls, len(m.h.live), calls)
	}
}
