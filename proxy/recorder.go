package proxy

import (
	"fmt"
	"os"
	"sync"
	"time"

	"mcpscope/session"
	"mcpscope/transport"
)

// The recorder numbers every frame, journals it and publishes it to the
// viewers, in that order, on one goroutine of its own: the forwarding
// goroutines only append to its queue. The writer drains whatever is queued
// into one write, so a crash loses at most the frames of one write.

const (
	// recQueueBytes bounds the frames waiting for the journal. Only a disk
	// slower than the traffic fills it; then the forwarders wait for the
	// journal rather than lose frames from it ("nothing lost").
	recQueueBytes  = 8 << 20
	recQueueFrames = 8192
	// journalMax bounds one frame's bytes in the journal: the stdio
	// transport's own line limit. The proxy still forwards longer lines
	// whole; the journal then keeps their first journalHead bytes.
	journalMax  = 64 << 20
	journalHead = 64 << 10
)

// item is one frame on its way to the journal.
type item struct {
	f        transport.Frame
	classify bool             // Kind is Message when Data is JSON, else Garbage
	after    func(seq uint64) // run once the frame is journaled and published
}

type recorder struct {
	mu     sync.Mutex
	wake   chan struct{} // capacity 1: the writer has work
	room   *sync.Cond    // on mu: the queue has room again
	queue  []item
	qbytes int
	seq    uint64 // last seq given out
	closed bool
	done   chan struct{} // the writer has written everything and stopped

	file *os.File // nil without a journal
	path string
	jerr error
	note func(string) // one line for the person (stderr), sparingly
	hub  *hub
}

// newRecorder opens the journal (path "" = none) with session.CreateJournal,
// which writes the header line, and starts the writer.
func newRecorder(path, target string, note func(string)) (*recorder, error) {
	r := &recorder{wake: make(chan struct{}, 1), done: make(chan struct{}), note: note, path: path}
	r.room = sync.NewCond(&r.mu)
	if path != "" {
		j, err := session.CreateJournal(path, target)
		if err != nil {
			return nil, err
		}
		j.Close() // the header is written; frames are appended in batches below
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, &session.JournalError{Path: path, Err: err}
		}
		r.file = f
	}
	r.hub = newHub(r)
	go r.writer()
	return r, nil
}

// record queues f and returns its seq. It waits only while the journal is
// more than recQueueBytes behind.
func (r *recorder) record(f transport.Frame, classify bool, after func(uint64)) uint64 {
	if f.Time.IsZero() {
		f.Time = time.Now()
	}
	r.mu.Lock()
	for !r.closed && (r.qbytes > recQueueBytes || len(r.queue) >= recQueueFrames) {
		r.room.Wait()
	}
	if r.closed {
		r.mu.Unlock()
		return 0
	}
	r.seq++
	seq := r.seq
	r.queue = append(r.queue, item{f: f, classify: classify, after: after})
	r.qbytes += len(f.Data)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return seq
}

// event records one of the proxy's own events.
func (r *recorder) event(name string, m transport.Meta) uint64 {
	m.Event = name
	return r.record(transport.Frame{Dir: transport.Local, Kind: transport.Event, Meta: m}, false, nil)
}

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
		first := r.seq - uint64(len(batch)) + 1
		r.qbytes = 0
		r.room.Broadcast()
		r.mu.Unlock()

		// A fresh buffer per batch: viewers' queues keep slices of it.
		buf = make([]byte, 0, max(4096, cap(buf)/2))
		ends = ends[:0]
		for i := range batch {
			it := &batch[i]
			if it.classify {
				it.f.Kind = transport.Garbage
				if validJSON(it.f.Data) {
					it.f.Kind = transport.Message
				}
			}
			buf = session.AppendRecord(buf, first+uint64(i), it.f)
			ends = append(ends, len(buf))
		}
		if r.file != nil && r.jerr == nil {
			if _, err := r.file.Write(buf); err != nil {
				r.jerr = err
				r.note(fmt.Sprintf("journal %s: %v; going on without it", r.path, err))
			}
		}
		r.hub.publish(first, buf, ends)
		for i := range batch {
			if batch[i].after != nil {
				batch[i].after(first + uint64(i))
			}
			batch[i] = item{}
		}
	}
}

// close writes what is queued and stops the writer (bounded by the disk).
func (r *recorder) close() {
	r.mu.Lock()
	r.closed = true
	r.room.Broadcast()
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	<-r.done
	if r.file != nil {
		r.file.Close()
	}
}

// journalPath is the journal's path, "" when there is none (or it failed).
func (r *recorder) journalPath() string {
	if r.file == nil {
		return ""
	}
	return r.path
}
