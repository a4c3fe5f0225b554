package gcgoal

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
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

func memLimit() int64 { return debug.SetMemoryLimit(-1) }

// heldJournal is a read-back that ends when the test says so.
type heldJournal struct{ loaded chan struct{} }

func (j heldJournal) Loaded() <-chan struct{} { return j.loaded }
func (j heldJournal) LoadedBytes() int64      { return 1 << 30 }

// While the journal is read the process is held under ReadingLimit; the
// limit goes once the reading ends, and Release takes it away too.
func TestTheReadingIsHeldUnderALimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(math.MaxInt64)
	j := heldJournal{make(chan struct{})}
	r := AfterReadBack(j, 0)
	defer r.Release()
	if got := memLimit(); got != ReadingLimit {
		t.Fatalf("memory limit while reading: %d, want %d", got, ReadingLimit)
	}
	close(j.loaded)
	settled(t, r)
	if got := memLimit(); got != math.MaxInt64 {
		t.Fatalf("memory limit once read: %d, want none", got)
	}
	if r.follow() {
		t.Fatal("the limit is still followed after the reading ended")
	}

	early := AfterReadBack(heldJournal{make(chan struct{})}, 0)
	early.Release()
	if got := memLimit(); got != math.MaxInt64 {
		t.Fatalf("memory limit after an early Release: %d, want none", got)
	}
}

// A GOMEMLIMIT the user set stands: the reading's limit is not set over
// it nor taken away after.
func TestTheUsersMemoryLimitStands(t *testing.T) {
	defer debug.SetMemoryLimit(math.MaxInt64)
	const users = 3 << 30
	debug.SetMemoryLimit(users)
	j := heldJournal{make(chan struct{})}
	r := AfterReadBack(j, 1<<40)
	defer r.Release()
	if got := memLimit(); got != users {
		t.Fatalf("memory limit while reading: %d, want the user's %d", got, users)
	}
	close(j.loaded)
	settled(t, r)
	r.Release()
	if got := memLimit(); got != users {
		t.Fatalf("memory limit after: %d, want the user's %d", got, users)
	}
}

// Past ReadingLimit the limit keeps ReadingRoom over the live heap, so a
// journal larger than the limit is read at GOGC=25's pace instead of with
// the collector running without pause.
func TestTheLimitFollowsTheLiveHeap(t *testing.T) {
	if got := LimitFor(0); got != ReadingLimit {
		t.Errorf("LimitFor(0) = %d, want %d", got, ReadingLimit)
	}
	if got := LimitFor(1 << 30); got != 5<<28 {
		t.Errorf("LimitFor(1 GiB) = %d, want 1.25 GiB", got)
	}
	defer debug.SetMemoryLimit(math.MaxInt64)
	j := heldJournal{make(chan struct{})}
	r := AfterReadBack(j, 1<<40)
	defer r.Release()
	live := make([]byte, 2*ReadingLimit) // outgrows the limit, held live (untouched: the heap counts it all the same)
	runtime.GC()
	if !r.follow() {
		t.Fatal("the limit stopped being followed while reading")
	}
	if got := memLimit(); got < int64(float64(len(live))*ReadingRoom) {
		t.Fatalf("memory limit with %d bytes live: %d, want at least %.0f", len(live), got, float64(len(live))*ReadingRoom)
	}
	runtime.KeepAlive(live)
}
