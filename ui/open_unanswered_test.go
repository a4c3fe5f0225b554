package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// TestOpenUnansweredCallIsLost: a journal opened as `open` opens it, whose
// tools/call got no answer before its transport closed 17m36s later, shows
// the call lost with that duration, however late the screen is drawn (the
// word journal prints; not pending with a clock still running).
func TestOpenUnansweredCallIsLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unanswered.jsonl")
	hdr, _ := json.Marshal(journal.Header{Format: journal.Format, Started: t0, Target: "stdio: slow-server"})
	buf := append(hdr, '\n')
	for i, f := range []transport.Frame{
		msg(0.1, transport.Out, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`),
		msg(0.2, transport.In, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`),
		msg(1, transport.Out, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`),
		{Time: at(1 + 17*60 + 36), Dir: transport.Local, Kind: transport.Event, Meta: transport.Meta{Event: transport.EvClosed, Detail: "closed"}},
	} {
		buf = journal.AppendRecord(buf, uint64(i+1), f)
	}
	if err := os.WriteFile(path, buf, 0o600); err != nil {
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
	m.opts.Now = func() time.Time { return at(3 * 3600) } // hours after the recording
	var row string
	for _, l := range strings.Split(screen(m), "\n") {
		if strings.Contains(l, "slow") {
			row = l
			break
		}
	}
	if !strings.Contains(row, "lost") || !strings.Contains(row, "17m36s") || strings.Contains(row, "pending") {
		t.Fatalf("the unanswered call's row %q: want lost, 17m36s\n%s", row, screen(m))
	}
}
