package gcgoal

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"mcpscope/journal"
	"mcpscope/session"
	"mcpscope/transport"
)

// gcPercent is the process's GOGC now.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func openJournal(t *testing.T) (*session.Session, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "j.jsonl")
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	buf := fmt.Appendf(nil, `{"format":%q,"started":%q,"target":"stdio: node server.js","pid":1}`+"\n", journal.Format, at.Format(time.RFC3339Nano))
	for i := 1; i <= 200; i++ {
		data := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"line %d"}}`, i)
		buf = journal.AppendRecord(buf, uint64(i), transport.Frame{Time: at, Dir: transport.In, Kind: transport.Message, Data: []byte(data)})
	}
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, st.Size()
}

func settled(t *testing.T, r *ReadBack) {
	t.Helper()
	select {
	case <-r.Settled():
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("AfterReadBack never settled")
	}
}

func TestAfterReadBackTightensTheGoalUntilReleased(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s, size := openJournal(t)
	r := AfterReadBack(s, size)
	settled(t, r)
	if got := gcPercent(); got != ReadBackPercent {
		t.Fatalf("GOGC after a read-back of %d bytes (min %d) is %d, want %d", size, size, got, ReadBackPercent)
	}
	r.Release()
	r.Release() // twice is fine
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC after Release is %d, want 100 back", got)
	}
}

func TestAfterReadBackLeavesAShortJournalsGoal(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s, size := openJournal(t)
	r := AfterReadBack(s, size+1)
	defer r.Release()
	settled(t, r)
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC after a read-back shorter than min is %d, want 100 untouched", got)
	}
}

func TestReleaseBeforeTheReadBackEndsLeavesTheGoal(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s, _ := openJournal(t)
	r := AfterReadBack(s, 0)
	r.Release() // a replay started while the journal was still being read
	settled(t, r)
	<-s.Loaded()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC after an early Release is %d, want 100", got)
	}
}
