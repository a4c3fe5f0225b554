package waitfor

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWithinHolds(t *testing.T) {
	var n atomic.Int32
	go func() {
		for n.Load() < 5 {
			n.Add(1)
		}
	}()
	if !Within(time.Minute, func() bool { return n.Load() >= 5 }) {
		t.Fatal("the condition held but Within said no")
	}
}

func TestWithinBound(t *testing.T) {
	checks := 0
	start := time.Now()
	if Within(20*time.Millisecond, func() bool { checks++; return false }) {
		t.Fatal("Within said yes to a condition that never held")
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("gave up after %v, before its bound", d)
	}
	if checks < 2 {
		t.Errorf("checked %d times, want a check after the bound too", checks)
	}
}

func TestWithinLastCheck(t *testing.T) {
	// A condition that holds only once the bound has passed still counts.
	start := time.Now()
	if !Within(5*time.Millisecond, func() bool { return time.Since(start) > 5*time.Millisecond }) {
		t.Fatal("the check after the bound was skipped")
	}
}

type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = format
}

func TestUntilFails(t *testing.T) {
	f := &fatalRecorder{TB: t}
	Until(f, "nothing", time.Millisecond, func() bool { return false })
	if f.msg == "" {
		t.Fatal("Until did not fail t")
	}
}
