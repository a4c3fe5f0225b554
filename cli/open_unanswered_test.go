package cli

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
)

// TestOpenAndJournalAgreeOnUnanswered: a recording whose last call got no
// answer (the recording stops 2.5s after it, with no close) ends that call
// with the recording, in both readers: journal lists it lost after 2.5s,
// and the session open shows holds it lost with the same fixed duration.
func TestOpenAndJournalAgreeOnUnanswered(t *testing.T) {
	_, path := unansweredJournal(t)
	code, out, errs := run(t, "journal", "--summary", path)
	if code != exitOK {
		t.Fatalf("journal: exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`tools/call slow\s+lost\s+2\.5s`).MatchString(out) {
		t.Fatalf("journal does not list the unanswered call lost after 2.5s:\n%s", out)
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
	sn := s.Lookup("2").Snapshot()
	if w := session.StateWord(&sn); w != "lost" || sn.Duration(time.Now()) != 2500*time.Millisecond {
		t.Fatalf("open: call 2 is %s after %s, want lost after 2.5s as journal says", w, sn.Duration(time.Now()))
	}
}

// unansweredJournal writes a recording whose last call (id 2, tools/call
// slow, sent at t0+1s) got no answer; the recording ends at t0+3.5s with
// a notification and no close.
func unansweredJournal(t *testing.T) (t0 time.Time, path string) {
	t.Helper()
	t0 = time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	line := func(seq int, at time.Duration, dir, raw string) string {
		b, _ := json.Marshal(journal.Record{Seq: uint64(seq), Time: t0.Add(at), Dir: dir, Kind: "message", Raw: &raw})
		return string(b) + "\n"
	}
	path = writeFile(t, header+
		line(1, 0, "out", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)+
		line(2, 100*time.Millisecond, "in", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)+
		line(3, time.Second, "out", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)+
		line(4, 3500*time.Millisecond, "in", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}`))
	return t0, path
}
