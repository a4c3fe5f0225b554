package proxy

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"mcpscope/journal"
	"mcpscope/transport"
)

// The recorder numbers every frame, journals it and publishes it to the
// viewers, in that order, on one goroutine of its own: the forwarding
// goroutines only append to its queue. The writer drains whatever is queued
// into one write, so a crash loses at most the frames of one write.
//
// The stdio forwarders hand their lines over as runs: all the lines they
// wrote in one go (one read's worth), after writing them, in one call. Every
// per-line cost of the journal (is it JSON, its record's encoding, its copy
// for the viewers) is the writer's.

const (
	// recQueueBytes bounds the frames waiting for the journal. Only a disk
	// slower than the traffic fills it; then the forwarders wait for the
	// journal rather than lose frames from it ("nothing lost").
	recQueueBytes  = 8 << 20
	recQueueFrames = 8192
	// Runs come back to the forwarders for reuse: at most freeRunBytes of
	// them, none over freeRunMax.
	freeRunBytes = 8 << 20
	freeRunMax   = 1 << 20
	// writeChunk is about how much the writer encodes before it writes it
	// and publishes it.
	writeChunk = 128 << 10
	// journalMax bounds one frame's bytes in the journal: the stdio
	// transport's own line limit. The proxy still forwards longer lines
	// whole; the journal then keeps their first journalHead bytes.
	journalMax  = 64 << 20
	journalHead = 64 << 10
)

// item is one frame on its way to the journal, or a run of lines.
type item struct {
	f        transport.Frame
	classify bool             // Kind is Message when Data is JSON, else Garbage
	after    func(seq uint64) // run once the frame is journaled and published
	run      *lineRun         // when set, the item is these lines (f, classify and after unused)
}

// lineRun is lines of one stream that were forwarded together, one frame
// each, with the same time and pid. The forwarder queues it with recordRun,
// writes data to the peer, and gives it back with nextRun; the writer reads
// it meanwhile, and the last of the two to be done with it frees it.
type lineRun struct {
	refs   atomic.Int32 // the forwarder and the writer, while each has it
	t      time.Time
	dir    transport.Dir
	kind   transport.Kind // 0: Message when the line is JSON, else Garbage
	pid    int
	data   []byte    // the lines' bytes as they crossed
	lines  []runLine // the lines to journal (blank ones are not)
	frames int       // how many: a runLine may hold several
}

// runLine is one line of a run, or several.
type runLine struct {
	start, end int
	// n is 0 for one line, data[start:end] without its terminator; else
	// data[start:end] is n whole lines, terminators included, none blank,
	// all the host's and none with an after: the writer cuts them apart.
	n     int
	via   string           // Meta.Via
	after func(seq uint64) // run once the line is journaled and published
}

// addLines adds b, n whole lines with their terminators, none blank, as
// one runLine of via.
func (run *lineRun) addLines(b []byte, n int, via string) {
	start := len(run.data)
	run.data = append(run.data, b...)
	run.lines = append(run.lines, runLine{start: start, end: len(run.data), n: n, via: via})
	run.frames += n
}

// addLine adds one line, its terminator included; a blank one is not
// journaled.
func (run *lineRun) addLine(b []byte, via string, after func(uint64)) {
	start := len(run.data)
	run.data = append(run.data, b...)
	if data := trimEOL(run.data[start:]); len(data) > 0 {
		run.lines = append(run.lines, runLine{start: start, end: start + len(data), via: via, after: after})
		run.frames++
	}
}

// size is what a run holds on to, roughly.
func (run *lineRun) size() int { return cap(run.data) + cap(run.lines)*40 }

type recorder struct {
	mu      sync.Mutex
	wake    chan struct{} // capacity 1: the writer has work
	room    *sync.Cond    // on mu: the queue has room again
	queue   []item
	qbytes  int // the memory the queued frames hold (a run's buffers, whole)
	qframes int
	seq     uint64 // last seq given out
	closed  bool
	// abandoned: the journal took nothing for too long after the host's
	// signal; close waits for the writer only briefly.
	abandoned bool
	done      chan struct{} // the writer has written everything and stopped
	free      []*lineRun    // runs written, for the forwarders to reuse
	freeB     int

	file *os.File // nil without a journal
	path string
	jerr error
	note func(string) // one line for the person (stderr), sparingly
	hub  *hub
	// records hears of each record written (nil: nobody); set before the
	// first frame is queued.
	records func([]byte)
	// lazy (set before the first frame): record does not wake the writer
	// for each frame; a timer does, lazyWait after the first frame queued
	// while it was not armed. The HTTP proxy's requests come one at a
	// time, two frames each: waking the writer for every frame was a
	// hand-off between goroutines, a write(2) and a publish per frame on
	// the request's way, where one per lazyWait does.
	lazy   *time.Timer
	lazyOn bool // on mu: lazy is armed
}

// lazyWait bounds how long a frame of a lazy recorder waits for the
// writer: what a viewer (and the journal) may lag the wire by.
const lazyWait = 2 * time.Millisecond

// JournalLag is the most the HTTP proxy's journal lags the wire: the
// bench says so beside a relay whose journal lags it more.
const JournalLag = lazyWait

// batchWakes makes r wake its writer at most once per lazyWait.
func (r *recorder) batchWakes() {
	r.lazy = time.AfterFunc(time.Hour, func() {
		r.mu.Lock()
		r.lazyOn = false
		r.mu.Unlock()
		r.signal()
	})
	r.lazy.Stop()
}

// newRecorder opens the journal (path "" = none) with
// journal.OpenAppend, which writes the header line, and starts the
// writer. The one open file takes every frame: a FIFO's reader sees one
// writer from the header to the end.
func newRecorder(path, target string, note func(string), records func([]byte)) (*recorder, error) {
	var f *os.File
	if path != "" {
		var err error
		if f, err = journal.OpenAppend(path, target); err != nil {
			return nil, err
		}
	}
	r := startRecorder(f, path, note)
	r.records = records
	return r, nil
}

// startRecorder starts the writer, journaling to f (nil: no journal) at path.
func startRecorder(f *os.File, path string, note func(string)) *recorder {
	r := &recorder{wake: make(chan struct{}, 1), done: make(chan struct{}), note: note, path: path, file: f}
	r.room = sync.NewCond(&r.mu)
	r.hub = newHub(r)
	go r.writer()
	return r
}

// lockRoom locks r once the queue has room, or reports false (r unlocked)
// when the recorder is closed.
//
// A full queue wakes the writer before it waits: only the writer makes
// room, and a forwarder queues its run before writing it and wakes the
// writer only after (signal). When that write stalls (a host that stopped
// reading) and its error path, or the other direction, waited here for
// room without waking the writer, the queue stayed full for ever and the
// proxy deadlocked with its host gone.
func (r *recorder) lockRoom() bool {
	r.mu.Lock()
	for !r.closed && (r.qbytes > recQueueBytes || r.qframes >= recQueueFrames) {
		r.signal()
		r.room.Wait()
	}
	if r.closed {
		r.mu.Unlock()
		return false
	}
	return true
}

// record queues f and returns its seq. It waits only while the journal is
// more than recQueueBytes behind.
func (r *recorder) record(f transport.Frame, classify bool, after func(uint64)) uint64 {
	if f.Time.IsZero() {
		f.Time = time.Now()
	}
	if !r.lockRoom() {
		return 0
	}
	r.seq++
	seq := r.seq
	r.queue = append(r.queue, item{f: f, classify: classify, after: after})
	r.qbytes += len(f.Data)
	r.qframes++
	if r.lazy != nil {
		if !r.lazyOn {
			r.lazyOn = true
			r.lazy.Reset(lazyWait)
		}
		r.mu.Unlock()
		return seq
	}
	r.mu.Unlock()
	r.signal()
	return seq
}

// recordRun queues the lines of run, numbered in order, and returns the seq
// of its first line (0 when nothing was queued); the caller then calls
// signal. The caller may go on
// reading run.data (to write it) until it gives run back with nextRun. Like
// record it waits only while the journal is more than recQueueBytes behind.
func (r *recorder) recordRun(run *lineRun) uint64 {
	run.refs.Store(1)
	if run.frames == 0 {
		return 0
	}
	if run.t.IsZero() {
		run.t = time.Now()
	}
	if !r.lockRoom() {
		return 0
	}
	run.refs.Store(2)
	first := r.seq + 1
	r.seq += uint64(run.frames)
	r.queue = append(r.queue, item{run: run})
	r.qbytes += run.size() // what it holds: a run reused for a few lines keeps a big buffer
	r.qframes += run.frames
	r.mu.Unlock()
	return first
}

// signal wakes the writer for what recordRun queued. The forwarders call
// it once they have written the lines: waking a goroutine is no business
// of the bytes on their way.
func (r *recorder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// nextRun takes back run, whose caller is done with it, and returns an
// empty run for the next lines.
func (r *recorder) nextRun(run *lineRun) *lineRun {
	if run.refs.Add(-1) == 0 {
		run.reset() // the writer is done with it too (or never had it)
		return run
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		next := r.free[n-1]
		r.free[n-1] = nil
		r.free = r.free[:n-1]
		r.freeB -= next.size()
		return next
	}
	return &lineRun{}
}

// runDone is the writer's end of a run: the last one out keeps it for reuse,
// within freeRunBytes.
func (r *recorder) runDone(run *lineRun) {
	if run.refs.Add(-1) != 0 {
		return // the forwarder still writes it
	}
	run.reset()
	r.mu.Lock()
	if n := run.size(); n <= freeRunMax && r.freeB+n <= freeRunBytes {
		r.free = append(r.free, run)
		r.freeB += n
	}
	r.mu.Unlock()
}

func (run *lineRun) reset() {
	clear(run.lines) // the afters' closures
	run.t, run.dir, run.kind, run.pid = time.Time{}, 0, 0, 0
	run.data, run.lines, run.frames = run.data[:0], run.lines[:0], 0
}

// event records one of the proxy's own events.
func (r *recorder) event(name string, m transport.Meta) uint64 {
	m.Event = name
	return r.record(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
}

// eventNow is event without waiting for room in the queue: for the main
// loop's events, which must go on to pass the host's signal on and run
// the shutdown ladder even while the journal takes nothing.
func (r *recorder) eventNow(name string, m transport.Meta) {
	m.Event = name
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.seq++
	r.queue = append(r.queue, item{f: transport.Frame{Time: time.Now(), Dir: transport.Local, Kind: transport.Event, Meta: m}})
	r.qframes++
	r.mu.Unlock()
	r.signal()
}

// abandon stops waiting for a journal that takes nothing (a FIFO nobody
// reads, a stuck disk): from here on frames are forwarded but not
// journaled, nothing waits for room, and close waits for the writer only
// briefly.
func (r *recorder) abandon() {
	r.mu.Lock()
	r.closed, r.abandoned = true, true
	r.room.Broadcast()
	r.mu.Unlock()
	r.signal()
}

// abandonWait is how long close waits for the writer of an abandoned
// journal, before and after closing its file (which ends a write to a
// pipe or FIFO).
const abandonWait = 2 * time.Second

// lastSeq is the seq of the last frame queued.
func (r *recorder) lastSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

func (r *recorder) writer() {
	defer close(r.done)
	var (
		batch []item
		buf   []byte
		ends  []int
		enc   runEncoder
	)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.mu.Unlock()
			<-r.wake
			r.mu.Lock()
		}
		if len(r.queue) == 0 && r.closed {
			r.mu.Unlock()
			return
		}
		batch, r.queue = r.queue, batch[:0]
		first := r.seq - uint64(r.qframes) + 1
		r.qbytes, r.qframes = 0, 0
		r.room.Broadcast()
		r.mu.Unlock()

		// In chunks of about writeChunk bytes, so that what is encoded is
		// still in the cache when it is written and copied to the ring.
		seq := first
		for i := 0; i < len(batch); {
			if buf == nil {
				buf = make([]byte, 0, writeChunk+writeChunk/2)
			}
			buf, ends = buf[:0], ends[:0]
			chunk := seq
			k := i
			for ; k < len(batch) && (k == i || len(buf) < writeChunk); k++ {
				it := &batch[k]
				if run := it.run; run != nil {
					for j := range run.lines {
						l := &run.lines[j]
						if l.n == 0 {
							buf = enc.appendLine(buf, seq, run, run.data[l.start:l.end], l.via)
							ends = append(ends, len(buf))
							seq++
							continue
						}
						for b := run.data[l.start:l.end]; len(b) > 0; seq++ {
							k := bytes.IndexByte(b, '\n') + 1
							if k == 0 {
								k = len(b)
							}
							buf = enc.appendLine(buf, seq, run, trimEOL(b[:k]), l.via)
							ends = append(ends, len(buf))
							b = b[k:]
						}
					}
					continue
				}
				if it.classify {
					it.f.Kind = transport.Garbage
					if validJSON(it.f.Data) {
						it.f.Kind = transport.Message
					}
				}
				buf = journal.AppendRecord(buf, seq, it.f)
				ends = append(ends, len(buf))
				seq++
			}
			if r.file != nil && r.jerr == nil {
				if _, err := r.file.Write(buf); err != nil {
					r.jerr = err
					r.note(fmt.Sprintf("journal %s: %v; going on without it", r.path, err))
				}
			}
			r.hub.publish(chunk, buf, ends)
			if r.records != nil {
				start := 0
				for _, end := range ends {
					r.records(buf[start:end])
					start = end
				}
			}
			if cap(buf) > 4*writeChunk {
				buf = nil // a long line grew it
			}
			r.after(chunk, batch[i:k])
			i = k
		}
		clear(batch)
	}
}

// after runs the afters of items, numbered from first, and hands their
// runs back.
func (r *recorder) after(first uint64, items []item) {
	seq := first
	for i := range items {
		it := &items[i]
		if run := it.run; run != nil {
			for j := range run.lines {
				if l := &run.lines[j]; l.n > 0 {
					seq += uint64(l.n)
					continue
				} else if l.after != nil {
					l.after(seq)
				}
				seq++
			}
			r.runDone(run)
			continue
		}
		if it.after != nil {
			it.after(seq)
		}
		seq++
	}
}

// close writes what is queued and stops the writer (bounded by the disk).
func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.room.Broadcast()
	if r.lazy != nil {
		r.lazy.Stop()
	}
	abandoned := r.abandoned
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	if abandoned && !waitDone(r.done, abandonWait) {
		if r.file != nil {
			r.file.Close()
		}
		waitDone(r.done, abandonWait)
		return
	}
	<-r.done
	if r.file != nil {
		r.file.Close()
	}
}

// waitDone waits for done, at most d.
func waitDone(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// journalPath is the journal's path, "" when there is none (or it failed).
func (r *recorder) journalPath() string {
	if r.file == nil {
		return ""
	}
	return r.path
}
