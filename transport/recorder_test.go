package transport

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// frameRec records a transport's frames and wakes waiters on each one.
type frameRec struct {
	mu     sync.Mutex
	frames []Frame
	signal chan struct{}
}

func newFrameRec() *frameRec { return &frameRec{signal: make(chan struct{}, 1)} }

func (r *frameRec) sink(f Frame) {
	r.mu.Lock()
	r.frames = append(r.frames, f)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *frameRec) all() []Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Frame(nil), r.frames...)
}

// find returns the index of the first frame matching pred, or -1.
func (r *frameRec) find(pred func(Frame) bool) int {
	for i, f := range r.all() {
		if pred(f) {
			return i
		}
	}
	return -1
}

// testWait bounds every wait in this package's tests. It is a hang guard
// only (the tests wait on frames and callbacks, never on time), as long as a
// loaded 2-core machine under -race may need: a 20 MiB answer alone can take
// tens of seconds there.
const testWait = 2 * time.Minute

// wait blocks until a frame matching pred exists and returns its index.
func (r *frameRec) wait(t *testing.T, what string, pred func(Frame) bool) (int, Frame) {
	t.Helper()
	limit := time.After(testWait)
	for {
		if i := r.find(pred); i >= 0 {
			return i, r.all()[i]
		}
		select {
		case <-r.signal:
		case <-limit:
			t.Fatalf("timed out waiting for %s; frames:\n%s", what, r.dump())
		}
	}
}

func (r *frameRec) dump() string {
	var b strings.Builder
	for i, f := range r.all() {
		d := string(f.Data)
		if len(d) > 120 {
			d = d[:120] + "…"
		}
		m, _ := json.Marshal(f.Meta)
		fmt.Fprintf(&b, "%3d %s %s %s %s\n", i, f.Dir, f.Kind, m, d)
	}
	return b.String()
}

// count is how many frames match pred.
func (r *frameRec) count(pred func(Frame) bool) int {
	n := 0
	for _, f := range r.all() {
		if pred(f) {
			n++
		}
	}
	return n
}
