// Package waitfor polls a condition in tests until it holds. The bound is a
// hang guard, never an expected time: tests wait on conditions, not on
// sleeps, and poll only where nothing signals the change (another process,
// a file, a screen, a goroutine the test cannot reach).
package waitfor

import (
	"testing"
	"time"
)

// Poll backoff: the first checks come quickly, later ones no more often
// than every maxPause, so a long wait does not busy the machine.
const (
	firstPause = time.Millisecond
	maxPause   = 50 * time.Millisecond
)

// Within polls cond, with a short backoff between checks, until it holds or
// bound has passed; it says whether cond held. cond is always checked at
// least once, and once more after the bound, so a condition met during the
// last pause is not missed. cond runs on the caller's goroutine and may call
// t.Fatal or t.Skip.
func Within(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	pause := firstPause
	for !cond() {
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(pause)
		if pause *= 2; pause > maxPause {
			pause = maxPause
		}
	}
	return true
}

// Until polls cond as Within does and fails t at once when it has not held
// within bound, naming what it waited for.
func Until(t testing.TB, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	if !Within(bound, cond) {
		t.Fatalf("timed out after %v waiting for %s", bound, what)
	}
}
