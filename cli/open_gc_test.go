package cli

import (
	"context"
	"errors"
	"runtime/debug"
	"testing"
	"time"

	"mcpscope/internal/gcgoal"
	"mcpscope/session"
	"mcpscope/ui"
)

// open's tighter GC goal lasts only while the recording is all the
// process holds: a replay's live session starting puts it back.
func TestOpenReleasesTheGCGoalWhenAReplayConnects(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	s, _, err := session.Open(writeFile(t, header+record(1, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gc := gcgoal.AfterReadBack(s, 0)
	defer gc.Release()
	select {
	case <-gc.Settled():
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the read-back never settled")
	}
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	if got := percent(); got != gcgoal.ReadBackPercent {
		t.Fatalf("GOGC once the journal is read: %d, want %d", got, gcgoal.ReadBackPercent)
	}
	refused := errors.New("no server here")
	live := &ui.Live{Connect: func(context.Context) (*session.Session, *ui.Responder, error) { return nil, nil, refused }}
	releaseOnConnect(live, gc)
	if _, _, err := live.Connect(t.Context()); !errors.Is(err, refused) {
		t.Fatalf("the wrapped Connect returned %v, want the replay's own error", err)
	}
	if got := percent(); got != 100 {
		t.Fatalf("GOGC once a replay connects: %d, want 100 back", got)
	}
	releaseOnConnect(&ui.Live{Missing: "no target"}, gc) // nothing to wrap
}
