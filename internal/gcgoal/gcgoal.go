// Package gcgoal is the garbage collector's goal for a process whose main
// thing is a journal read back (mcpscope open, and bench's stand-in for
// it). The goal is the whole process's, so the process's owner sets it,
// not package session, which also runs inside live sessions and proxies.
package gcgoal

import (
	"runtime/debug"
	"sync"
)

// BigJournal is the journal size from which a read-back's end is worth
// acting on: the reading leaves hundreds of MB of garbage behind.
const BigJournal = 64 << 20

// ReadBackPercent is the goal (GOGC) once such a journal is read:
// garbage up to a tenth of the live heap before a collection.
const ReadBackPercent = 10

// ReadBack is the process's GC setting while a journal read back is what
// it holds.
type ReadBack struct {
	settled chan struct{}
	stop    chan struct{}
	once    sync.Once

	mu       sync.Mutex
	released bool
	set      bool
	prev     int
}

// Journal is what AfterReadBack asks of a session reading its journal
// back (a *session.Session has both): when the reading ended, and how
// many bytes it was. An interface so that this helper does not import the
// engine.
type Journal interface {
	Loaded() <-chan struct{}
	LoadedBytes() int64
}

// AfterReadBack waits in the background for s's read-back to end. If the
// journal was at least min bytes it then gives the memory the reading
// freed back to the system, once, and tightens the goal to
// ReadBackPercent: what the session holds now is what it keeps, and a
// viewer drawing frames only makes garbage, which the default goal lets
// grow as large as the session before the GC runs. Release undoes it.
func AfterReadBack(s Journal, min int64) *ReadBack {
	r := &ReadBack{settled: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		defer close(r.settled)
		select {
		case <-s.Loaded():
		case <-r.stop:
			return
		}
		if s.LoadedBytes() < min {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.released {
			return
		}
		debug.FreeOSMemory()
		r.prev, r.set = debug.SetGCPercent(ReadBackPercent), true
	}()
	return r
}

// Settled is closed once AfterReadBack has decided (or was released
// first).
func (r *ReadBack) Settled() <-chan struct{} { return r.settled }

// Release puts the goal back as it was: the process is about to hold
// more than the read-back (a live session for a replay), or is done.
// Safe to call more than once.
func (r *ReadBack) Release() {
	r.once.Do(func() { close(r.stop) })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = true
	if r.set {
		debug.SetGCPercent(r.prev)
		r.set = false
	}
}
