package session

import (
	"testing"
	"time"
)

// Options.Now stamps a call's start and an end without the server's word,
// so a UI test can pin the times it draws.
func TestClockStampsCalls(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	s := New(nil, Options{Now: func() time.Time { return now }, Timeout: -1, MaxTimeout: -1})
	c := s.Call("tools/call", map[string]any{"name": "slow"})
	now = now.Add(1500 * time.Millisecond)
	if err := s.Cancel(c, "test"); err != nil {
		t.Fatal(err)
	}
	sn := c.Snapshot()
	if !sn.Started.Equal(t0) || !sn.Ended.Equal(t0.Add(1500*time.Millisecond)) || sn.State != StateCancelled {
		t.Fatalf("started %v ended %v state %s; want the fixed clock's times", sn.Started, sn.Ended, sn.State)
	}
}
