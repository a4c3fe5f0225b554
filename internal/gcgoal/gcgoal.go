// Package gcgoal is the garbage collector's goal and memory limit for a
// process whose main thing is a journal read back (mcpscope open, and
// bench's stand-in for it). Both are the whole process's, so the
// process's owner sets them, not package session, which also runs inside
// live sessions and proxies.
package gcgoal

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// BigJournal is the journal size from which a read-back's end is worth
// acting on: the reading leaves hundreds of MB of garbage behind.
const BigJournal = 64 << 20

// ReadBackPercent is the goal (GOGC) once such a journal is read:
// garbage up to a tenth of the live heap before a collection.
const ReadBackPercent = 10

// ReadingLimit is the soft memory limit while a journal is read. The
// reading makes garbage as fast as it reads; under the default goal the
// heap grows to twice what the session keeps before each collection, so
// the peak was twice the steady state (a million-frame HTTP journal:
// 183 MiB at the peak for 78 MiB kept). Under the limit the collections
// come sooner instead, which costs next to nothing while the live heap
// is well under it. (An opened journal's ended calls go out of memory as
// it is read, so a ten-million-frame one keeps under 40 MiB live: 125 MiB
// let its peak reach 135 MiB, 100 holds it to 121.)
const ReadingLimit = 100 << 20

// ReadingRoom is how far the limit stays above the live heap once the
// live heap nears ReadingLimit: a collection each time a quarter of the
// live heap is allocated (GOGC=25's pace; what a reading keeps live is
// mostly arrays without pointers, cheap to collect over). A fixed limit
// would make the collector run without pause as the live heap reached
// it; the default pace would let the peak reach twice the live heap.
const ReadingRoom = 1.25

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
	limited  bool  // the reading's memory limit is set (the user set none)
	limit    int64 // its value now
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
//
// While the reading lasts, the process is held under ReadingLimit, raised
// as the live heap grows (LimitFor), unless the user set GOMEMLIMIT.
func AfterReadBack(s Journal, min int64) *ReadBack {
	r := &ReadBack{settled: make(chan struct{}), stop: make(chan struct{})}
	r.startLimit()
	go func() {
		defer close(r.settled)
		select {
		case <-s.Loaded():
		case <-r.stop:
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.endLimitLocked()
		if r.released || s.LoadedBytes() < min {
			return
		}
		debug.FreeOSMemory()
		r.prev, r.set = debug.SetGCPercent(ReadBackPercent), true
	}()
	return r
}

// LimitFor is the reading's memory limit once live bytes survived a
// collection: ReadingLimit, or ReadingRoom times the live heap past it.
func LimitFor(live uint64) int64 {
	return max(ReadingLimit, int64(float64(live)*ReadingRoom))
}

// startLimit sets the reading's limit, and follows the live heap after
// every collection until the reading ends.
func (r *ReadBack) startLimit() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return // the user's GOMEMLIMIT stands
	}
	r.limited, r.limit = true, ReadingLimit
	debug.SetMemoryLimit(r.limit)
	afterEachGC(r.follow)
}

// follow raises the limit to LimitFor the live heap the last collection
// left; it reports whether to go on following.
func (r *ReadBack) follow() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.limited {
		return false
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	if live[0].Value.Kind() != metrics.KindUint64 {
		return true
	}
	if l := LimitFor(live[0].Value.Uint64()); l > r.limit {
		r.limit = l
		debug.SetMemoryLimit(l)
	}
	return true
}

// endLimitLocked takes the reading's limit away: once the journal is
// read, the tight goal takes over.
func (r *ReadBack) endLimitLocked() {
	if r.limited {
		debug.SetMemoryLimit(math.MaxInt64)
		r.limited = false
	}
}

// afterEachGC calls f after each collection, in the finalizer goroutine,
// until f returns false: the finalizer of an object nothing holds runs
// after the collection that finds it, and arms the next one.
func afterEachGC(f func() bool) {
	type sentinel struct{ _ [16]byte } // past the tiny allocator, whose blocks are shared and freed late
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if f() {
			afterEachGC(f)
		}
	})
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
	r.endLimitLocked()
	if r.set {
		debug.SetGCPercent(r.prev)
		r.set = false
	}
}
