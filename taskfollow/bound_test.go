package taskfollow

import (
	"errors"
	"strings"
	"testing"
	"time"

	"mcpscope/protocol"
	"mcpscope/session"
)

// The bounds of following a task, on a fixed clock: the idle limit counts
// from the last change of status (not of its message), the hard limit from its
// start, the ttl from createdAt; a poll never sleeps past the next bound.
func TestTaskBound(t *testing.T) {
	t0 := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	b := &bound{id: "t1", idle: 2 * time.Second, hard: 10 * time.Second, hardAt: t0.Add(10 * time.Second), lastChange: t0}
	b.saw(protocol.Task{Status: "working"}, t0)
	if got := b.wait(60*time.Second, t0); got != 2*time.Second {
		t.Fatalf("a 60 s poll interval with 2 s of idle limit left waits %s", got)
	}
	if err := b.check("working", t0.Add(1900*time.Millisecond)); err != nil {
		t.Fatalf("before any limit: %v", err)
	}
	b.saw(protocol.Task{Status: "working", StatusMessage: "step 2"}, t0.Add(1900*time.Millisecond)) // a new message only: no change
	if err := b.check("working", t0.Add(2*time.Second)); !errors.Is(err, session.ErrIdleTimeout) {
		t.Fatalf("a new status message alone must not restart the idle limit: %v", err)
	}
	b.lastChange = t0
	b.saw(protocol.Task{Status: "input_required"}, t0.Add(1900*time.Millisecond)) // a change of status: the idle limit starts again
	if err := b.check("input_required", t0.Add(3*time.Second)); err != nil {
		t.Fatalf("a new status restarts the idle limit: %v", err)
	}
	err := b.check("working", t0.Add(4*time.Second))
	if !errors.Is(err, session.ErrIdleTimeout) || !strings.Contains(err.Error(), "t1") || !strings.Contains(err.Error(), "still working") {
		t.Fatalf("idle: %v", err)
	}
	b.idle = 0
	if got := b.wait(60*time.Second, t0.Add(7*time.Second)); got != 3*time.Second {
		t.Fatalf("3 s before the hard limit the poll waits %s", got)
	}
	if err := b.check("working", t0.Add(10*time.Second)); !errors.Is(err, session.ErrMaxTimeout) {
		t.Fatalf("hard: %v", err)
	}
	ttl := int64(1500)
	b = &bound{id: "t2", lastChange: t0}
	b.saw(protocol.Task{Status: "working", TTL: &ttl, CreatedAt: t0.Add(-time.Second).Format(time.RFC3339Nano)}, t0)
	if got := b.wait(time.Second, t0); got != 500*time.Millisecond {
		t.Fatalf("half a second of ttl left: the poll waits %s", got)
	}
	if err := b.check("working", t0.Add(500*time.Millisecond)); !errors.Is(err, ErrExpired) || !errors.Is(err, session.ErrTimeout) {
		t.Fatalf("ttl: %v", err)
	}
	b = &bound{id: "t3", lastChange: t0}
	b.saw(protocol.Task{Status: "working", TTL: &ttl, CreatedAt: t0.Add(time.Hour).Format(time.RFC3339)}, t0) // a server clock ahead
	if err := b.check("working", t0.Add(time.Second)); err != nil {
		t.Fatalf("a createdAt in the future counts from now: %v", err)
	}
	if got := b.wait(time.Second, t0); got != time.Second {
		t.Fatalf("no bound near: the server's interval, got %s", got)
	}
}
